"""The review's loose ends: a-priori budgets, integer noise on integer counts, no δ above
target, and every registered counts mechanism answering a stream through the pipeline."""

from __future__ import annotations

import numpy as np
import pytest

from core import pipeline
from core.accounting import btt_guarantee, calibrate_btt
from core.errors import BudgetExhausted, ParameterError
from core.mechanisms import registry


def test_btt_session_spends_the_a_priori_guarantee_not_the_outcome():
    # 500 unanimous queries of 20,001 teachers: every distance (10,000) clears the threshold,
    # so no ⊥ happens.  The outcome-dependent count (rounds = ⊥ + 1 = 1) would report about
    # ε/T; the a-priori guarantee of 500 processed queries has min(T, 500) = T rounds.
    s = pipeline.session("btt", {"epsilon": 1.0, "delta": 1e-5, "T": 10}, 500, rng=0)
    labels = s.answer(np.tile([[20001, 0]], (500, 1)))
    assert (labels == 0).all() and s.n_bottom == 0
    cal = calibrate_btt(1.0, delta=1e-5, T=10, m=500, calibration="tight")
    expected = btt_guarantee(cal.noise_scale, cal.threshold, 10, 500, cal.guarantee.parts["delta_svt"])
    assert s.spent().epsilon == pytest.approx(min(expected.epsilon, 1.0), rel=1e-12)
    assert s.spent().epsilon > 0.99
    one_round = btt_guarantee(cal.noise_scale, cal.threshold, 1, 500, cal.guarantee.parts["delta_svt"])
    assert one_round.epsilon < 0.2  # what the old, outcome-dependent report would have said


def test_error_estimate_adds_integer_noise_to_the_integer_count(monkeypatch):
    from core import noise
    from core.theory import private_error_estimate

    def forbidden(*args, **kwargs):
        raise AssertionError("continuous Laplace noise on an integer count")

    monkeypatch.setattr(noise, "laplace", forbidden)
    est = np.asarray(private_error_estimate(np.arange(0, 200, 7), 1000, 0.5, rng=3))
    # (integer + integer) / n_holdout, clipped to [0, 1]: every value a multiple of 1/1000
    assert np.allclose(np.round(est * 1000), est * 1000, atol=1e-9)


def test_paper_calibration_never_reports_delta_above_the_target():
    with pytest.raises(ParameterError, match="tight"):
        calibrate_btt(1.0, delta=1e-5, T=50, m=5, calibration="paper")
    cal = calibrate_btt(1.0, delta=1e-5, T=50, m=5, calibration="tight")  # the tight calibration meets any target
    assert cal.guarantee.delta <= 1e-5 and cal.guarantee.epsilon <= 1.0 + 1e-9


@pytest.mark.parametrize("name", [n for n in registry.names() if registry.get(n).inputs == "counts"])
def test_every_counts_mechanism_answers_a_stream_under_one_budget(name):
    rng = np.random.default_rng(0)
    counts = np.stack([rng.multinomial(250, [0.96, 0.02, 0.02]) for _ in range(60)])
    settings = {"epsilon": 8.0, "delta": 1e-5, "T": 5}
    s = pipeline.session(name, settings, 40, rng=1)
    first = s.answer(counts[:30])
    assert first.shape == (30,) and s.n_processed <= 30
    s.answer(counts[30:])
    assert s.n_processed <= 40 and s.halted
    g = s.spent()
    planned = pipeline.privacy_map(name, settings, 40)
    assert g.epsilon <= planned.epsilon * (1 + 1e-9) and g.delta <= planned.delta * (1 + 1e-9)
    assert (s.answer(counts[:5]) == -2).all()  # spent: nothing more is processed


def test_the_estimator_refuses_after_a_one_shot_mechanism_has_run():
    from sklearn.naive_bayes import GaussianNB

    from core import PrivateEnsembleClassifier
    from core.data import halfspaces

    X, y = halfspaces(6000, 2, rng=4)
    est = PrivateEnsembleClassifier(GaussianNB(), k=40, mechanism="certified-gnmax", epsilon=8.0, delta=1e-5, max_queries=20, rng=0)
    est.fit(X[:5900], y[:5900])
    out = est.predict(X[5900:5920])
    assert out.shape == (20,)
    assert est.privacy_spent_[0] <= 8.0 + 1e-9
    with pytest.raises(BudgetExhausted):
        est.predict(X[5920:5925])
