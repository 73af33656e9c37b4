"""Private selection (core.mechanisms.selection, core.accounting.selection, pipeline.tune).

The guarantee is checked against dp-accounting's own RDP accountant composing a
``RepeatAndSelectDpEvent`` of Gaussian events at two grid sizes; the number of
repetitions' mean against its target (fixed seed, 6 standard errors).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event as E
from dp_accounting.rdp import rdp_privacy_accountant as R

from core import pipeline
from core.accounting.rdp import ORDERS
from core.errors import BudgetExhausted, ParameterError
from core.mechanisms.selection import draw_repetitions
from core.plan import TeacherQuality, simulate_votes


def _dp_accounting_epsilon(sigma_gnmax: float, m: int, mean: float, shape: float, delta: float,
                           score_sigma: float | None = None) -> float:
    """Independent: dp-accounting's RDP accountant on the event the selection claims to be.

    One GNMax answer at σ is the Gaussian mechanism on a count vector of L2 sensitivity √2,
    i.e. a GaussianDpEvent of noise multiplier σ/√2; m answers compose.
    """
    acc = R.RdpAccountant(orders=list(ORDERS))
    inner = E.SelfComposedDpEvent(E.GaussianDpEvent(sigma_gnmax / math.sqrt(2.0)), m)
    acc.compose(E.RepeatAndSelectDpEvent(inner, mean, shape))
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("epsilons, shape", [((1.0, 2.0), 1.0), ((0.5, 1.0, 1.5, 2.0, 3.0, 4.0), 2.0)])
def test_guarantee_matches_dp_accounting_at_two_grid_sizes(epsilons, shape):
    m, delta = 200, 1e-6
    grid = [("gnmax", {"epsilon": e, "delta": delta}) for e in epsilons]
    g = pipeline.tune_price(grid, m, shape=shape)
    mean = 3.0 * len(grid)
    sigma_min = pipeline.resolve("gnmax", {"epsilon": max(epsilons), "delta": delta}, m)["sigma"]
    expected = _dp_accounting_epsilon(sigma_min, m, mean, shape, delta)
    assert g.delta == delta and g.parts["repeat_mean"] == mean
    assert g.epsilon == pytest.approx(expected, rel=1e-9)
    assert g.epsilon > max(epsilons)  # selection costs more than its dearest candidate


def test_held_out_score_composes_in_parallel():
    m, delta = 100, 1e-6
    grid = [("gnmax", {"epsilon": 1.0, "delta": delta})]
    sigma = pipeline.resolve("gnmax", {"epsilon": 1.0, "delta": delta}, m)["sigma"]
    # A score noisier than the run costs nothing extra: max(run, score) is the run's curve.
    quiet = pipeline.tune_price(grid, m, mean=4, score_sigma=50.0 * sigma)
    free = pipeline.tune_price(grid, m, mean=4)
    assert quiet.epsilon == pytest.approx(free.epsilon, rel=1e-12)
    # A dearer score dominates: the same as a Gaussian of multiplier σ_s (sensitivity 1).
    loud = pipeline.tune_price(grid, m, mean=4, score_sigma=0.5)
    acc = R.RdpAccountant(orders=list(ORDERS))
    acc.compose(E.RepeatAndSelectDpEvent(E.GaussianDpEvent(0.5), 4.0, 1.0))
    assert loud.epsilon == pytest.approx(acc.get_epsilon(delta), rel=1e-9)


def test_btt_candidates_are_refused_with_the_reason():
    with pytest.raises(ParameterError, match="additive δ"):
        pipeline.tune_price([("btt", {"epsilon": 1.0, "delta": 1e-6, "T": 5})], 100)


def test_number_of_repetitions_has_the_stated_mean():
    gen = np.random.default_rng(5)
    for shape in (0.0, 1.0, 3.0):
        ks = draw_repetitions(8.0, shape, gen, size=20000)
        assert ks.min() >= 1
        assert abs(ks.mean() - 8.0) < 6 * ks.std() / math.sqrt(ks.size)
    assert draw_repetitions(1.0, 1.0, gen) == 1
    assert isinstance(draw_repetitions(5.0, 1.0, gen), int)


def test_selection_releases_the_best_run_with_the_whole_guarantee():
    sv = simulate_votes(m=300, k=50, n_classes=2, quality=TeacherQuality(), rng=0)
    grid = [("confident-gnmax", {"epsilon": 1.0, "delta": 1e-6, "threshold": 10_000.0}),  # answers nothing
            ("gnmax", {"epsilon": 1.0, "delta": 1e-6})]  # answers everything
    price = pipeline.tune_price(grid, 300, mean=20)
    runs = [pipeline.tune(sv.counts, grid, mean=20, rng=seed) for seed in range(6)]
    for out in runs:  # the best repetition wins: the answering candidate whenever it was tried
        assert (out.chosen, out.score) in ((1, 300.0), (0, 0.0))
    out = next(r for r in runs if r.chosen == 1)
    assert out.mechanism == "gnmax"
    assert out.epsilon == pytest.approx(price.epsilon) and out.result.epsilon == pytest.approx(price.epsilon)
    assert out.result.params["run_epsilon"] == pytest.approx(1.0, rel=1e-6)
    assert "whole selection" in out.result.accounting


def test_held_out_score_drives_the_choice():
    """The candidates tried come from operating-system entropy (not the seed), so the check is
    statistical: a selection never tries the good candidate with probability q = (p/2)/(1 − (1 − p)/2)
    = 0.0244 at a geometric K of mean 40 (p = 1/40); when it tries it, the held-out score (σ = 2 on a
    gap of about a hundred rows) picks it.  Fewer than 14 of 20 selections picking it has probability
    P[Bin(20, 1 − q) ≤ 13] = 3.0e-7."""
    sv = simulate_votes(m=200, k=40, n_classes=2, quality=TeacherQuality(), rng=0)
    grid = [("gnmax", {"epsilon": 0.05, "delta": 1e-6}), ("gnmax", {"epsilon": 4.0, "delta": 1e-6})]
    truth = sv.truth
    # A toy held-out count: agreement of the released labels with a fixed reference.
    score = lambda res: int(np.sum(res.labels == truth))  # noqa: E731
    picks = [pipeline.tune(sv.counts, grid, mean=40, score=score, score_sigma=2.0, rng=s).chosen for s in range(20)]
    assert picks.count(1) >= 14, picks
    with pytest.raises(ParameterError):
        pipeline.tune(sv.counts, grid, score=score)


def test_tune_charges_the_ledger_before_running():
    from core.ledger import PrivacyLedger

    sv = simulate_votes(m=100, k=20, n_classes=2, quality=TeacherQuality(), rng=0)
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("gnmax", {"epsilon": 2.0, "delta": 1e-6})]
    price = pipeline.tune_price(grid, 100)
    ledger = PrivacyLedger("test", budget_epsilon=price.epsilon + 0.01, budget_delta=1e-5)
    out = pipeline.tune(sv.counts, grid, ledger=ledger, rng=0)
    assert ledger.total(delta=price.delta).epsilon == pytest.approx(price.epsilon, rel=1e-6) and out.epsilon == pytest.approx(price.epsilon)
    with pytest.raises(BudgetExhausted):
        pipeline.tune(sv.counts, grid, ledger=ledger, rng=0)


def test_curve_matches_theorem_2_by_hand_for_the_geometric_case():
    """Papernot–Steinke Theorem 2 with η = 1 (geometric, γ = 1/μ), written out by hand:
    ρ'(λ) = ρ(λ) + 2 min_λ̂ [(1 − 1/λ̂) ρ(λ̂) + log(1/γ)/λ̂] + log μ/(λ − 1), then made monotone."""
    from core.accounting.rdp import gnmax_rdp
    from core.accounting.selection import selection_entry

    m, sigma, mean = 50, 40.0, 7.0
    orders = np.asarray(ORDERS, dtype=float)
    rho = np.asarray(gnmax_rdp(sigma, n_answers=m), dtype=float)
    entry = pipeline.ledger_entry("gnmax", {"sigma": sigma, "delta": 1e-6}, m)
    got = np.asarray(selection_entry([entry], mean=mean, shape=1.0, delta=1e-6).rho)
    gamma = 1.0 / mean
    const = 2.0 * min((1 - 1 / lh) * r + math.log(1 / gamma) / lh for lh, r in zip(orders, rho))
    raw = [r + const + math.log(mean) / (lam - 1) for lam, r in zip(orders, rho)]
    by_hand = [min(raw[j:]) for j in range(len(raw))]  # monotonicity in the order
    assert np.allclose(got, by_hand, rtol=1e-10, atol=1e-12)


K_MARK = 1009
"""A number of repetitions no output has any other reason to print."""


def test_nothing_released_says_how_many_repetitions_ran_or_what_was_tried(monkeypatch):
    """The result, its parameters, its accounting text and its privacy report carry the chosen
    candidate, its labels, its score and the guarantee: never K (forced here to 1009) nor the
    candidates tried (Papernot–Steinke's theorem holds with K hidden; docs/design.md §10.3)."""
    import dataclasses
    import json

    from core.mechanisms import selection as sel_module

    drawn = []

    def forced(mean, shape, rng=None, size=None):
        drawn.append(K_MARK)
        return K_MARK

    monkeypatch.setattr(sel_module, "draw_repetitions", forced)
    sv = simulate_votes(m=50, k=30, n_classes=3, quality=TeacherQuality(), rng=1)
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("confident-gnmax", {"epsilon": 2.0, "delta": 1e-6}),
            ("lnmax", {"epsilon": 1.0, "delta": 1e-6})]
    out = pipeline.tune(sv.counts, grid, mean=6, rng=0)
    assert drawn == [K_MARK]
    fields = {f.name for f in dataclasses.fields(out)}
    assert fields == {"chosen", "mechanism", "settings", "result", "epsilon", "delta", "score", "score_kind", "entry"}
    assert not hasattr(out, "runs") and not hasattr(out, "tried")
    report = pipeline.report(out.result, n_private=900, n_public=50, learner="gaussian_nb", k=30)
    texts = [out.result.accounting, json.dumps(out.result.params), report, repr(out), out.entry.description,
             json.dumps(out.entry.params)]
    for text in texts:
        assert str(K_MARK) not in text, text
        assert "tried" not in text.lower() and "selection_runs" not in text
        assert "repetitions drawn" not in text
    assert "how many ran is not released" in out.result.accounting


def test_dp_training_candidates_match_dp_accounting_and_run_on_the_private_rows():
    """A DP naive Bayes candidate is one Gaussian mechanism of multiplier z = 1/μ: its repeat-and-select
    guarantee is dp-accounting's on that event; a run picks among the rows' candidates and the votes'."""
    from core.accounting.dp_training import naive_bayes_mu_sq
    from core.mechanisms.dp_training import rows_from_arrays

    delta = 1e-5
    grid = [("dp-naive-bayes", {"epsilon": 1.0, "delta": delta})]
    ours = pipeline.tune_price(grid, 50, mean=3.0, shape=1.0, delta=delta).epsilon
    acc = R.RdpAccountant(orders=list(ORDERS))
    acc.compose(E.RepeatAndSelectDpEvent(E.GaussianDpEvent(1.0 / math.sqrt(naive_bayes_mu_sq(1.0, delta))), 3.0, 1.0))
    assert ours == pytest.approx(acc.get_epsilon(delta), rel=1e-3)
    # Gaussian objective perturbation is known only as (ε, δ): not a candidate
    with pytest.raises(ParameterError, match="cannot be a candidate of private selection"):
        pipeline.tune_price([("dp-logistic", {"epsilon": 1.0, "delta": delta})], 50, delta=delta)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    y = (X[:, 0] > 0.5).astype(int)
    rows = rows_from_arrays(X[:250], y[:250], X[250:], n_classes=2, data_norm=math.sqrt(2))
    votes = np.stack([np.where(y[250:] == 1, 0, 10), np.where(y[250:] == 1, 10, 0)], axis=1)
    both = [("dp-logistic", {"epsilon": 1.0, "delta": delta, "perturbation": "gamma"}),
            ("dp-naive-bayes", {"epsilon": 1.0, "delta": delta}), ("gnmax", {"epsilon": 1.0, "delta": delta})]
    sel = pipeline.tune({"counts": votes, "rows": rows}, both, delta=delta, rng=1)
    assert sel.result.m == 50 and sel.epsilon == pytest.approx(pipeline.tune_price(both, 50, delta=delta).epsilon)
    with pytest.raises(ParameterError, match="which the selection was not given"):
        pipeline.tune(votes, both, delta=delta, rng=1)


def test_tune_table_holds_out_its_scoring_rows_from_every_candidate(monkeypatch):
    """The one selection job (the command line's tune and the app's): charged first, the held-out rows
    in neither the teachers' rows nor the DP-training rows, and a mixed grid judged by the number
    answered refused before anything is charged (a DP-training route answers every row)."""
    import pandas as pd

    from core.data import table_from_arrays
    from core.ledger import PrivacyLedger
    from core.pipeline import teachers as teachers_module

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    table = table_from_arrays(X[:300], y[:300], feature_names=["a", "b"])
    public = pd.DataFrame(X[300:], columns=["a", "b"])
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("dp-logistic", {"epsilon": 1.0, "delta": 1e-6}),
            ("dp-naive-bayes", {"epsilon": 1.0, "delta": 1e-6})]
    ledger = PrivacyLedger("t", budget_epsilon=50.0, budget_delta=1e-5)
    with pytest.raises(ParameterError, match="always win"):
        pipeline.tune_table(table, public, grid, learner="gaussian_nb", k=10, score_sigma=None, ledger=ledger)
    assert len(ledger) == 0
    with pytest.raises(ParameterError, match="hold out at most 298. Nothing was charged"):  # the default 500 > n
        pipeline.tune_table(table, public, grid, learner="gaussian_nb", k=10, ledger=ledger)
    assert len(ledger) == 0
    seen = {}
    real_train, real_inputs = teachers_module.train, teachers_module.mechanism_inputs
    monkeypatch.setattr(teachers_module, "train", lambda t, *a, **kw: seen.setdefault("teachers", t) and
                        real_train(t, *a, **kw))
    monkeypatch.setattr(teachers_module, "mechanism_inputs", lambda name, ens, t, *a, **kw: seen.setdefault(name, t)
                        and real_inputs(name, ens, t, *a, **kw))
    sel = pipeline.tune_table(table, public, grid, learner="gaussian_nb", k=10, holdout=60, ledger=ledger, rng=1)
    price = pipeline.tune_price([pipeline.tune_candidate(n, s) for n, s in grid], 100,
                                score_sigma=pipeline.SCORE_SIGMA, delta=1e-6)
    assert len(ledger) == 1 and ledger.total(delta=1e-6).epsilon == pytest.approx(price.epsilon, rel=1e-6)
    assert sel.epsilon == pytest.approx(price.epsilon) and sel.score_kind == "held-out count"
    rows = {name: set(np.asarray(t.rows).tolist()) for name, t in seen.items()}
    assert rows["teachers"] == rows["gnmax"] == rows["dp-logistic"] and len(rows["teachers"]) == 240



def test_tune_table_refuses_a_class_too_small_for_k_before_the_charge():
    """A class list read from the rows with a class of 2 rows cannot take k = 10 teachers: refused
    with nothing charged (it was charged, then refused by the teachers' training); with the class
    list declared the same grid runs and is charged once (a declared class is kept, §1.3)."""
    import pandas as pd

    from core.data import table_from_arrays
    from core.errors import DataError
    from core.ledger import PrivacyLedger

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:2] = 2  # a class of two private rows
    public = pd.DataFrame(X[300:], columns=["a", "b"])
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("gnmax", {"epsilon": 2.0, "delta": 1e-6})]
    ledger = PrivacyLedger("t", budget_epsilon=50.0, budget_delta=1e-5)
    read = table_from_arrays(X[:300], y[:300], feature_names=["a", "b"])
    with pytest.raises(DataError, match="Too many teachers for the smallest class"):
        pipeline.tune_table(read, public, grid, learner="gaussian_nb", k=10, holdout=60, ledger=ledger, rng=1)
    assert len(ledger) == 0
    declared = table_from_arrays(X[:300], y[:300], feature_names=["a", "b"], class_names=["0", "1", "2"],
                                 classes_declared=True)
    pipeline.tune_table(declared, public, grid, learner="gaussian_nb", k=10, holdout=60, ledger=ledger, rng=1)
    assert len(ledger) == 1

def test_a_known_seed_does_not_replay_the_number_of_repetitions(monkeypatch):
    """K comes from operating-system entropy even when the caller seeds the selection: twenty
    selections at the same int seed draw twenty K's from a geometric of mean 8, which are all
    equal with probability at most (1/8)^19 < 1e-17 (a seeded K would make them equal always)."""
    from core.mechanisms import selection as sel_module

    real = sel_module.draw_repetitions
    drawn = []

    def spy(mean, shape, rng=None, size=None):
        K = real(mean, shape, rng, size)
        drawn.append(int(K))
        return K

    monkeypatch.setattr(sel_module, "draw_repetitions", spy)
    sv = simulate_votes(m=20, k=20, n_classes=2, quality=TeacherQuality(), rng=3)
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("gnmax", {"epsilon": 2.0, "delta": 1e-6})]
    for _ in range(20):
        pipeline.tune(sv.counts, grid, mean=8, rng=11)
    assert len(drawn) == 20 and len(set(drawn)) > 1, drawn


def test_a_known_seed_does_not_replay_the_candidates_tried(monkeypatch):
    """The candidates tried come from operating-system entropy like K: replayed from a known seed,
    the sequence j_1, j_2, … beside the released index would tell that K reached the first place
    holding it (a released candidate other than j_1 says K ≥ 2).  With K forced to 1 the released
    candidate is the one tried; twenty-five selections at the same seed over two candidates
    release the same one with probability 2 · 2^-25 < 1e-7 (a seeded choice: always)."""
    from core.mechanisms import selection as sel_module

    monkeypatch.setattr(sel_module, "draw_repetitions", lambda mean, shape, rng=None, size=None: 1)
    sv = simulate_votes(m=20, k=20, n_classes=2, quality=TeacherQuality(), rng=3)
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("gnmax", {"epsilon": 2.0, "delta": 1e-6})]
    picks = {pipeline.tune(sv.counts, grid, mean=8, rng=11).chosen for _ in range(25)}
    assert picks == {0, 1}


def test_a_repetitions_warnings_and_errors_do_not_count_them(monkeypatch):
    """Whatever a repetition warns (a scoring student that does not converge, say) stays inside
    the selection: one warning per repetition would count K (forced to 7 here) on the command
    line's stderr.  A repetition that fails leaves no repetition's state in the traceback."""
    import warnings

    from core.errors import DataError
    from core.mechanisms import selection as sel_module

    monkeypatch.setattr(sel_module, "draw_repetitions", lambda mean, shape, rng=None, size=None: 7)
    sv = simulate_votes(m=20, k=20, n_classes=2, quality=TeacherQuality(), rng=3)
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6})]

    def warns(res):
        warnings.warn("the scoring student did not converge", UserWarning)
        return int(res.n_answered)

    with warnings.catch_warnings(record=True) as log:
        warnings.simplefilter("always")
        pipeline.tune(sv.counts, grid, score=warns, score_sigma=2.0, rng=0)
    assert [str(w.message) for w in log] == []

    calls = []

    def fails(res):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("a repetition failed")
        return int(res.n_answered)

    with pytest.raises(DataError, match="A repetition of the private selection failed") as info:
        pipeline.tune(sv.counts, grid, score=fails, score_sigma=2.0, rng=0)
    exc, seen = info.value, []
    while exc is not None:
        seen.append(exc)
        tb = exc.__traceback__
        while tb is not None:
            assert not {"best", "res", "s"} & set(tb.tb_frame.f_locals), tb.tb_frame.f_code.co_name
            tb = tb.tb_next
        exc = exc.__cause__ or exc.__context__
    assert len(seen) == 1  # no chained exception of the repetition


def test_tune_table_checks_the_learner_and_the_public_rows_before_the_charge():
    """An unknown learner, a hyperparameter it does not take, or public rows without the table's
    columns are refused with nothing charged (they were charged, then refused by the teachers'
    training or the DP-training route's encoding: spent with nothing released)."""
    import pandas as pd

    from core.data import table_from_arrays
    from core.errors import PrivateLabelLabError
    from core.ledger import PrivacyLedger

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(int)
    table = table_from_arrays(X[:150], y[:150], feature_names=["a", "b"])
    public = pd.DataFrame(X[150:], columns=["a", "b"])
    gn = [("gnmax", {"epsilon": 1.0, "delta": 1e-6})]
    dp = [("dp-logistic", {"epsilon": 1.0, "delta": 1e-6})]
    ledger = PrivacyLedger("t", budget_epsilon=50.0, budget_delta=1e-5)
    bad = [dict(grid=gn, learner="no-such-learner"), dict(grid=gn, learner="gaussian_nb", params={"foo": 1}),
           dict(grid=gn, learner="gaussian_nb", params={"var_smoothing": -5}),
           dict(grid=gn, learner="gaussian_nb", public=public.rename(columns={"b": "c"})),
           dict(grid=dp, learner="gaussian_nb", public=public.rename(columns={"b": "c"}))]
    for case in bad:
        with pytest.raises(PrivateLabelLabError):
            pipeline.tune_table(table, case.get("public", public), case["grid"], learner=case["learner"],
                                params=case.get("params"), k=6, holdout=30, ledger=ledger, rng=1)
        assert len(ledger) == 0, case
    pipeline.tune_table(table, public, gn, learner="gaussian_nb", k=6, holdout=30, ledger=ledger, rng=1)
    assert len(ledger) == 1


def test_tune_refuses_a_score_without_its_noise_or_a_missing_input_before_the_charge():
    """pipeline.tune checks the score and each candidate's input before it charges the ledger
    (it charged, then select refused: spent with nothing released)."""
    from core.ledger import PrivacyLedger

    sv = simulate_votes(m=20, k=20, n_classes=2, quality=TeacherQuality(), rng=3)
    gn = [("gnmax", {"epsilon": 1.0, "delta": 1e-6})]
    ledger = PrivacyLedger("t", budget_epsilon=50.0, budget_delta=1e-5)
    for kw in (dict(score=lambda res: 1), dict(score_sigma=2.0)):
        with pytest.raises(ParameterError):
            pipeline.tune(sv.counts, gn, ledger=ledger, rng=0, **kw)
    with pytest.raises(ParameterError, match="reads the private rows"):
        pipeline.tune(sv.counts, [pipeline.tune_candidate("dp-naive-bayes", {"epsilon": 1.0, "delta": 1e-6})],
                      ledger=ledger, rng=0)
    assert len(ledger) == 0


def test_a_callers_generator_does_not_count_the_repetitions(monkeypatch):
    """A Generator passed as ``rng`` moves by the same amount whatever K is: its next draw after a
    selection with K = 1 and with K = 9 (forced) is the same (it was advanced by every repetition,
    so a later draw of it, e.g. a published student's, told K); so after tune_table's job."""
    import pandas as pd

    from core.data import table_from_arrays
    from core.mechanisms import selection as sel_module

    sv = simulate_votes(m=20, k=20, n_classes=2, quality=TeacherQuality(), rng=3)
    grid = [("gnmax", {"epsilon": 1.0, "delta": 1e-6}), ("lnmax", {"epsilon": 2.0, "delta": 1e-6})]
    rng = np.random.default_rng(5)
    X = rng.normal(size=(160, 2))
    y = (X[:, 0] > 0).astype(int)
    table = table_from_arrays(X[:120], y[:120], feature_names=["a", "b"])
    public = pd.DataFrame(X[120:], columns=["a", "b"])
    after = {}
    for K in (1, 9):
        monkeypatch.setattr(sel_module, "draw_repetitions", lambda mean, shape, rng=None, size=None, K=K: K)
        gen = np.random.default_rng(7)
        pipeline.tune(sv.counts, grid, score=lambda res: int(res.n_answered), score_sigma=2.0, rng=gen)
        table_gen = np.random.default_rng(7)
        pipeline.tune_table(table, public, grid, learner="gaussian_nb", k=4, holdout=20, rng=table_gen)
        after[K] = (gen.integers(2**62), table_gen.integers(2**62))
    assert after[1] == after[9]
