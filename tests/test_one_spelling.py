"""One set of defaults and one spelling across the functional API, the pipeline, the estimator
and the command line: the tight calibration unless asked, a budget that is never a default,
privacy parameters by name (one name for one quantity), the data-dependent diagnostic told
which queries were answered, the classes a learner saw (no phantom class), one
PrivacyWarning."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

import core
from core import accounting, pipeline, theory
from core.ledger import PrivacyLedger, planned_entry
from core import mechanisms as mech
from core.audit import BTTSampler, BTTSoftSampler
from core.ensemble import train_teachers
from core.pipeline import PrivateEnsembleClassifier
from core.errors import ParameterError


def _votes(m=300, k=100, seed=0):
    rng = np.random.default_rng(seed)
    agree = rng.binomial(k, 0.97, size=m)
    return np.stack([agree, k - agree], axis=1)


# ----------------------------------------------------------------------------- tight unless asked


def test_btt_label_runs_what_the_pipeline_runs_the_tight_calibration():
    votes = _votes()
    settings = {"epsilon": 8.0, "delta": 1e-5, "T": 5}
    direct = mech.btt_label(votes, **settings, rng=0)
    through = pipeline.label(votes, "btt", settings, rng=0)
    assert direct.params["calibration"] == through.params["calibration"] == "tight"
    assert np.array_equal(direct.labels, through.labels) and direct.epsilon == through.epsilon
    assert direct.n_answered > 0  # the paper's constants answer nothing here
    assert mech.btt_label(votes, **settings, calibration="paper", rng=0).n_answered == 0


def test_every_btt_calibration_default_is_tight():
    defaults = {
        "btt_label": inspect.signature(mech.btt_label).parameters["calibration"].default,
        "btt_soft_label": inspect.signature(mech.btt_soft_label).parameters["calibration"].default,
        "calibrate_btt": inspect.signature(accounting.calibrate_btt).parameters["calibration"].default,
        "planned_entry": inspect.signature(planned_entry).parameters["calibration"].default,
        "BTTSampler": inspect.signature(BTTSampler).parameters["calibration"].default,
        "BTTSoftSampler": inspect.signature(BTTSoftSampler).parameters["calibration"].default,
        "btt_min_teachers": inspect.signature(theory.btt_min_teachers).parameters["calibration"].default,
        "expected_answers_btt": inspect.signature(theory.expected_answers_btt).parameters["calibration"].default,
        "solve_btt_parameters": inspect.signature(theory.solve_btt_parameters).parameters["calibration"].default,
        "estimator": PrivateEnsembleClassifier(LogisticRegression()).calibration,
        "registry": mech.PARAMETERS["calibration"].default,
    }
    assert {k: v for k, v in defaults.items() if v != "tight"} == {}
    cal = accounting.calibrate_btt(8.0, delta=1e-5, T=5, m=300)
    assert cal.noise_scale == accounting.calibrate_btt(8.0, delta=1e-5, T=5, m=300, calibration="tight").noise_scale


# ----------------------------------------------------------------------------- the budget is never a default


LABELING = ["a_stab_label", "btt_label", "btt_soft_label", "lnmax_label", "composition_baseline_label",
            "gnmax_label", "confident_gnmax_label", "dp_logistic_label", "dp_naive_bayes_label"]


@pytest.mark.parametrize("name", LABELING)
def test_no_labeling_function_defaults_delta(name):
    from core.mechanisms import dp_training

    fn = getattr(dp_training, name) if name.startswith("dp_") else getattr(mech, name)
    p = inspect.signature(fn).parameters
    assert p["delta"].default is inspect.Parameter.empty and p["delta"].kind is inspect.Parameter.KEYWORD_ONLY
    if "epsilon" in p:
        assert p["epsilon"].default is inspect.Parameter.empty


def test_lnmax_label_needs_delta_like_gnmax_label():
    with pytest.raises(TypeError, match="delta"):
        mech.lnmax_label(_votes(), gamma=0.1)
    with pytest.raises(TypeError, match="delta"):
        mech.gnmax_label(_votes(), sigma=10.0)


@pytest.mark.parametrize("mechanism, settings, missing", [
    ("btt", {"epsilon": 8.0, "T": 5}, "delta"),
    ("btt", {"delta": 1e-5, "T": 5}, "epsilon"),  # ran at the registry's ε = 4 before
    ("lnmax", {"epsilon": 2.0}, "delta"),
    ("gnmax", {"sigma": 10.0}, "delta"),
    ("baseline", {"delta": 1e-5}, "epsilon"),
])
def test_the_pipeline_never_runs_at_a_default_budget(mechanism, settings, missing):
    with pytest.raises(ParameterError, match=f"needs {missing}"):
        pipeline.label(_votes(), mechanism, settings, rng=0)
    with pytest.raises(ParameterError, match=f"needs {missing}"):
        pipeline.privacy_map(mechanism, settings, 300)


@pytest.mark.parametrize("given, missing", [({"epsilon": 1.0}, "delta"), ({"delta": 1e-5}, "epsilon"), ({}, "epsilon")])
def test_the_estimator_never_fits_at_a_default_budget(given, missing):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((200, 3)), rng.integers(2, size=200)
    led = PrivacyLedger()
    est = PrivateEnsembleClassifier(LogisticRegression(), k=10, mechanism="gnmax", max_queries=10, ledger=led, **given)
    assert est.get_params()["delta"] == given.get("delta")
    with pytest.raises(ParameterError, match=f"needs {missing}"):
        est.fit(X, y)
    assert len(led) == 0  # refused before anything was charged


# ----------------------------------------------------------------------------- privacy parameters by name


MAPS = {
    "pate_simple_epsilon": ("gamma", {"n_answers": 100, "delta": 1e-5}),
    "pate_gamma_for_epsilon": ("epsilon", {"n_answers": 100, "delta": 1e-5}),
    "lnmax_guarantee": ("gamma", {"n_answers": 100, "delta": 1e-5}),
    "lnmax_gamma_for_epsilon": ("epsilon", {"n_answers": 100, "delta": 1e-5}),
    "gnmax_guarantee": ("sigma", {"n_answers": 100, "delta": 1e-5}),
    "gnmax_sigma_for_epsilon": ("epsilon", {"n_answers": 100, "delta": 1e-5}),
    "gnmax_rdp": ("sigma", {"n_answers": 100}),
    "calibrate_btt": ("epsilon", {"delta": 1e-5, "T": 5, "m": 100}),
    "composition_baseline_parameters": ("epsilon", {"delta": 1e-5, "m": 100}),
    "a_stab_guarantee": ("epsilon", {"delta": 1e-5, "m": 100}),
    "a_stab_threshold": ("epsilon", {"delta": 1e-5}),
}


@pytest.mark.parametrize("name", sorted(MAPS))
def test_privacy_maps_take_their_privacy_parameters_by_name(name):
    fn = getattr(accounting, name)
    first, kwargs = MAPS[name]
    params = list(inspect.signature(fn).parameters.values())
    assert params[0].name == first and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params[1:]), [p.name for p in params[1:]]
    with pytest.raises(TypeError):
        fn(0.5, *kwargs.values())
    fn(0.5, **kwargs)


def test_the_number_of_answers_has_one_name():
    # PATE's bound counted answers as T, BTT's name for the number of abstentions
    assert accounting.pate_simple_epsilon(0.05, n_answers=100, delta=1e-5) == pytest.approx(5.7985, abs=1e-4)
    for fn in (accounting.pate_simple_epsilon, accounting.pate_gamma_for_epsilon, accounting.lnmax_guarantee,
               accounting.lnmax_gamma_for_epsilon, accounting.gnmax_guarantee, accounting.gnmax_sigma_for_epsilon):
        names = inspect.signature(fn).parameters
        assert "n_answers" in names and "T" not in names and "m" not in names
    g = accounting.lnmax_gamma_for_epsilon(2.0, n_answers=50, delta=1e-5)
    assert accounting.lnmax_guarantee(g, n_answers=50, delta=1e-5).epsilon <= 2.0


# ----------------------------------------------------------------------------- the diagnostic is told what was answered


def test_confident_gnmax_data_dependent_epsilon_needs_the_answered_queries():
    from core.accounting.data_dependent import confident_gnmax_epsilon_data_dependent, confident_gnmax_rdp_data_dependent

    votes = _votes(m=200, k=250, seed=1)
    res = pipeline.label(votes, "confident-gnmax", {"epsilon": 2.0, "delta": 1e-5, "threshold": 240.0}, rng=0)
    assert 0 < res.n_answered < votes.shape[0]
    p = res.params
    kw = {"threshold": p["threshold"], "sigma1": p["sigma1"], "sigma2": p["sigma2"], "delta": 1e-5}
    with pytest.raises(TypeError, match="answered"):
        confident_gnmax_epsilon_data_dependent(votes, **kw)
    with pytest.raises(TypeError, match="answered"):
        confident_gnmax_rdp_data_dependent(votes, threshold=p["threshold"], sigma1=p["sigma1"], sigma2=p["sigma2"])
    with pytest.raises(ParameterError, match="answered"):
        confident_gnmax_epsilon_data_dependent(votes, **kw, answered=None)
    run = confident_gnmax_epsilon_data_dependent(votes, **kw, answered=res.answered)
    every = confident_gnmax_epsilon_data_dependent(votes, **kw, answered=np.ones(votes.shape[0], bool))
    assert run < every  # only the answered queries pay the answer's term


# ----------------------------------------------------------------------------- no phantom class


def test_train_teachers_votes_on_the_labels_it_saw():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    y = np.where(X[:, 0] > 0, 2, 1)  # labels {1, 2}: no class 0
    ens = train_teachers(X, y, LogisticRegression(), 10, rng=0)
    assert ens.n_classes == 2 and list(ens.classes_) == [1, 2]
    votes = ens.vote_counts(X[:50])
    assert votes.shape == (50, 2) and np.all(votes.sum(axis=1) == 10)
    assert np.mean(ens.classes_[votes.argmax(axis=1)] == y[:50]) > 0.9
    text = train_teachers(X, np.where(y == 2, "yes", "no"), LogisticRegression(), 10, rng=0)
    assert list(text.classes_) == ["no", "yes"] and np.array_equal(text.vote_counts(X[:50]), votes)
    declared = train_teachers(X, y, LogisticRegression(), 10, n_classes=3, rng=0)  # a class list declared
    assert list(declared.classes_) == [0, 1, 2] and declared.vote_counts(X[:5]).shape == (5, 3)


# ----------------------------------------------------------------------------- one PrivacyWarning


def test_one_privacy_warning_catches_the_estimators():
    from core.pipeline import estimator

    assert core.PrivacyWarning is core.errors.PrivacyWarning is estimator.PrivacyWarning
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((2000, 3)), rng.integers(2, size=2000)
    est = PrivateEnsembleClassifier(LogisticRegression(), k=100, mechanism="btt", epsilon=1.0, delta=1e-5, T=3,
                                    max_queries=200, rng=0, ledger=PrivacyLedger()).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", core.errors.PrivacyWarning)
        with pytest.raises(core.errors.PrivacyWarning, match="answered none"):
            est.predict(X[:50])
