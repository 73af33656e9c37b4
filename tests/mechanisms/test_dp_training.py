"""The DP-training routes: their privacy maps against hand computations, the fit, the
encoding from public facts, the pipeline and ledger, and the empirical audit."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from core import pipeline
from core.accounting import dp_training as maps
from core.errors import BudgetExhausted, ParameterError
from core.mechanisms import dp_training as dt
from core.mechanisms import registry

# ----------------------------------------------------------------------------- privacy maps by hand


def test_gamma_objective_perturbation_matches_the_hand_computation_on_adult():
    # UCI Adult: n = 32,561, R² = 14 + 1 (the intercept's constant), c = 1/4.
    n, R = 32_561, math.sqrt(15.0)
    # C = 0.01: nΛ = 1/C = 100; ε' = 1 − 2 log(1 + 3.75/100) = 0.926372…, no extra term.
    cfg = maps.objective_noise(1.0, n=n, data_norm=R, C=0.01, perturbation="gamma")
    assert cfg.epsilon_prime == pytest.approx(1.0 - 2.0 * math.log(1.0375), rel=1e-12)
    assert cfg.epsilon_prime == pytest.approx(0.926372, abs=1e-6)
    assert cfg.extra == 0.0 and cfg.regularization == pytest.approx(100.0 / n)
    assert cfg.scale == pytest.approx(2 * R / 0.9263721, rel=1e-6)
    # C = 1: nΛ = 1, ε' = 1 − 2 log(4.75) < 0, so ε' = ε/2 and Δ = 3.75/(n(e^{1/4} − 1)) − 1/n.
    cfg = maps.objective_noise(1.0, n=n, data_norm=R, C=1.0, perturbation="gamma")
    assert cfg.epsilon_prime == 0.5
    assert cfg.extra == pytest.approx((3.75 / 0.2840254166877415 - 1.0) / n, rel=1e-12)
    assert cfg.scale == pytest.approx(4 * R)


def test_gaussian_objective_perturbation_matches_the_hand_computation():
    # ζ = 2R (replace-one moves one row's gradient, of norm ≤ R, to another's); total
    # regularization ≥ 2β/(εn), β = R²/4; the Jacobian is charged ε_J = log(1 + β/(n(Λ+Δ))),
    # the noise ε_N = ε − ε_J with t = 2 log(1/δ): σ = 2R (√(t + 2ε_N) + √t)/(2ε_N).
    n, R = 32_561, math.sqrt(15.0)
    t = 2 * math.log(1e5)  # 23.0258509…
    cfg = maps.objective_noise(1.0, 1e-5, n=n, data_norm=R, C=1.0, perturbation="gaussian")
    assert cfg.regularization + cfg.extra == pytest.approx(7.5 / n, rel=1e-12)
    e_n = 1.0 - math.log(1.5)  # ε_J = log(1 + 3.75/7.5)
    assert cfg.scale == pytest.approx(2 * R * (math.sqrt(t + 2 * e_n) + math.sqrt(t)) / (2 * e_n), rel=1e-12)
    assert cfg.scale == pytest.approx(63.315, abs=1e-3)
    cfg = maps.objective_noise(1.0, 1e-5, n=n, data_norm=R, C=0.01, perturbation="gaussian")
    assert cfg.extra == 0.0  # 100/n already exceeds 7.5/n
    e_n = 1.0 - math.log(1.0375)  # ε_J = log(1 + 3.75/100) = 0.0368…
    assert cfg.scale == pytest.approx(2 * R * (math.sqrt(t + 2 * e_n) + math.sqrt(t)) / (2 * e_n), rel=1e-12)
    assert cfg.scale == pytest.approx(39.381, abs=1e-3)
    # KST12's equal split (ε/2 each, tail δ/2) gives more noise: σ = 2R √(8 log(2/δ) + 4ε)/ε = 78.096
    assert cfg.scale < 2 * math.sqrt(15.0 * (8 * math.log(2e5) + 4.0)) / 1.9


def test_gaussian_objective_perturbation_covers_a_replace_one_move_of_the_gradient():
    """The proof sketch's two factors, checked by the exact Gaussian profile and the χ² tail.

    Replace-one swaps one row's gradient (norm ≤ R) for another's: the shift of b has norm
    up to 2R, in the plane of the two rows.  (i) The Jacobian's share ε_J = log(1 + β/(nΛ_tot))
    and the noise's ε_N add up to ε; (ii) the sketch's bound ζ‖Π b‖/σ² + ζ²/(2σ²) with ‖Π b‖
    at the χ²₂ quantile of δ equals ε_N; (iii) a fixed shift of 2R alone, by the exact profile
    of the Gaussian mechanism (an independent computation), costs at most (ε_N, δ).  KST12's
    constant with ζ = R fails (iii) at its own split: it covers adding or removing a row only.
    """
    from core.accounting.gaussian_dp import gaussian_delta

    R, n = math.sqrt(15.0), 10_000
    for eps, delta, C in [(0.1, 1e-6, 1.0), (0.5, 1e-5, 1.0), (1.0, 1e-5, 0.01), (1.0, 1e-5, 1.0), (4.0, 1e-5, 0.1),
                          (8.0, 1e-3, 1.0)]:
        cfg = maps.objective_noise(eps, delta, n=n, data_norm=R, C=C, perturbation="gaussian")
        sigma, zeta = cfg.scale, 2 * R
        e_j = math.log1p(R * R / 4 / (n * (cfg.regularization + cfg.extra)))
        assert 0 < e_j <= math.log1p(eps / 2) * (1 + 1e-12)
        e_n = eps - e_j
        u = math.sqrt(2 * math.log(1 / delta))  # P[χ²₂ > u²] = e^{−u²/2} = δ exactly
        assert zeta * u / sigma + (zeta / sigma) ** 2 / 2 == pytest.approx(e_n, rel=1e-12)
        assert gaussian_delta((zeta / sigma) ** 2, epsilon=e_n) <= delta
        old = R * math.sqrt(8 * math.log(2 / delta) + 4 * eps) / eps
        assert gaussian_delta((2 * R / old) ** 2, epsilon=eps / 2) > delta / 2
        assert sigma <= 2 * old  # never more noise than KST12's equal split


def test_naive_bayes_run_is_charged_its_exact_gaussian_epsilon():
    from core.ledger import PrivacyLedger

    entry = pipeline.ledger_entry("dp-naive-bayes", {"epsilon": 1.0, "delta": 1e-5}, 100)
    z = maps.naive_bayes_noise(1.0, 1e-5, dimension=5).z
    assert entry.gaussian_mu_sq == pytest.approx(1.0 / z ** 2, rel=1e-12)
    ledger = PrivacyLedger()
    ledger.charge(entry)
    assert f"{ledger.total().epsilon:.3g}" == "1" and ledger.total().delta == 1e-5
    # and two such runs compose as one Gaussian mechanism of 2μ² (exactly, not by RDP)
    from core.accounting.gaussian_dp import gaussian_epsilon

    ledger.charge(entry)
    total = ledger.total()
    assert total.epsilon == pytest.approx(gaussian_epsilon(2.0 / z ** 2, delta=total.delta), rel=1e-9)


def test_fit_logistic_raises_when_not_converged():
    from core.errors import ConvergenceError

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    s = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    Xa = np.hstack([X, np.ones((200, 1))])
    b = rng.standard_normal((2, 4)) * 50
    with pytest.raises(ConvergenceError, match="did not converge in 1 Newton steps"):
        dt.fit_logistic(Xa, s, 1e-4, b, max_iter=1)
    F = dt.fit_logistic(Xa, s, 1e-4, b)  # the default reaches the minimiser
    assert F.shape == (2, 4)


def test_naive_bayes_noise_meets_its_epsilon_by_an_independent_accountant():
    # The joint release is one Gaussian mechanism of sensitivity 1 at multiplier z; the
    # tight PLD accountant of dp-accounting gives an ε at most the RDP-converted target
    # (RDP is an upper bound) and not far below it.
    import dp_accounting

    for eps, delta in [(0.5, 1e-5), (1.0, 1e-5), (4.0, 1e-6)]:
        cfg = maps.naive_bayes_noise(eps, delta, dimension=10)
        acc = dp_accounting.pld.PLDAccountant()
        acc.compose(dp_accounting.GaussianDpEvent(cfg.z))
        tight = acc.get_epsilon(delta)
        assert tight <= eps * (1 + 1e-6) and tight >= 0.75 * eps, (eps, tight)
        # every block's share: Σ Δ_b²/σ_b² = 1/z²
        sens = (math.sqrt(2), math.sqrt(10), math.sqrt(20) / 4)
        total = sum(s * s / sig ** 2 for s, sig in zip(sens, (cfg.sigma_counts, cfg.sigma_sums, cfg.sigma_squares)))
        assert total == pytest.approx(1 / cfg.z ** 2, rel=1e-12)


def test_privacy_maps_do_not_grow_with_the_number_of_queries():
    for m in (1, 100, 100_000):
        g = pipeline.privacy_map("dp-logistic", {"epsilon": 1.0, "delta": 1e-5}, m)
        assert (g.epsilon, g.delta) == (1.0, 1e-5)
        g = pipeline.privacy_map("dp-logistic", {"epsilon": 1.0, "delta": 1e-5, "perturbation": "gamma"}, m)
        assert (g.epsilon, g.delta) == (1.0, 0.0)
        g = pipeline.privacy_map("dp-naive-bayes", {"epsilon": 2.0, "delta": 1e-6}, m)
        assert (g.epsilon, g.delta) == (2.0, 1e-6)


def test_objective_noise_refuses_bad_settings():
    with pytest.raises(ParameterError):
        maps.objective_noise(1.0, n=10, data_norm=1.0, C=0.0)
    with pytest.raises(ParameterError):
        maps.objective_noise(1.0, n=10, data_norm=1.0, C=1.0, perturbation="laplace")
    with pytest.raises(ParameterError):
        maps.objective_noise(1.0, 0.0, n=10, data_norm=1.0, C=1.0, perturbation="gaussian")


# ----------------------------------------------------------------------------- the fit


def test_newton_fit_is_the_minimiser_of_the_perturbed_objective():
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (200, 3))
    s = np.where(X @ [1.0, -2.0, 0.5] + 0.3 * rng.standard_normal(200) > 0, 1.0, -1.0)
    Xa = np.hstack([X, np.ones((200, 1))])
    lam = 0.01
    b = rng.standard_normal((3, 4)) * 5

    def objective(f, bb):
        return np.mean(np.logaddexp(0, -s * (Xa @ f))) + 0.5 * lam * f @ f + bb @ f / 200

    F = dt.fit_logistic(Xa, s, lam, b)
    for i in range(3):
        ref = optimize.minimize(objective, np.zeros(4), args=(b[i],), method="BFGS", options={"gtol": 1e-10}).x
        assert np.allclose(F[i], ref, atol=1e-5)
        assert objective(F[i], b[i]) <= objective(ref, b[i]) + 1e-12


def test_large_epsilon_recovers_a_clean_halfspace():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (4000, 2))
    y = (X[:, 0] > X[:, 1]).astype(np.int64)
    rows = dt.rows_from_arrays(X, y, X[:500], n_classes=2, data_norm=math.sqrt(2))
    for perturbation in ("gamma", "gaussian"):
        res = dt.dp_logistic_label(rows, epsilon=50.0, delta=1e-5, C=10.0, perturbation=perturbation, rng=2)
        assert res.n_answered == 500 and np.mean(res.labels == y[:500]) > 0.95
    res = dt.dp_naive_bayes_label(rows, epsilon=50.0, delta=1e-5, rng=3)
    assert res.n_answered == 500 and np.mean(res.labels == y[:500]) > 0.85


def test_several_classes_are_one_vs_rest():
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (3000, 2))
    y = np.digitize(X[:, 0], [1 / 3, 2 / 3]).astype(np.int64)
    rows = dt.rows_from_arrays(X, y, X[:300], n_classes=3, data_norm=math.sqrt(2))
    coef = dt.dp_logistic_coefficients(rows, epsilon=100.0, delta=1e-5, C=100.0, rng=5)
    assert coef.shape == (3, 3)
    res = dt.dp_logistic_label(rows, epsilon=100.0, delta=1e-5, C=100.0, rng=5)
    assert set(np.unique(res.labels)) == {0, 1, 2} and np.mean(res.labels == y[:300]) > 0.8


# ----------------------------------------------------------------------------- bounds from public facts


def _table():
    from core.data.table import Table

    rng = np.random.default_rng(6)
    n = 400
    frame = pd.DataFrame({"age": rng.uniform(20, 60, n), "job": rng.choice(["a", "b", "c"], n)})
    labels = (frame["age"] > 40).to_numpy().astype(np.int64)
    return Table(features=frame, labels=labels, class_names=("no", "yes"), label_column="y",
                 numeric_columns=("age",), categorical_columns=("job",), name="toy")


def test_encoding_reads_ranges_and_categories_from_the_public_rows_only():
    table = _table()
    public = pd.DataFrame({"age": [30.0, 50.0, 40.0], "job": ["a", "b", "a"]})
    rows = pipeline.mechanism_inputs("dp-logistic", None, table, public)
    assert isinstance(rows, dt.PrivateRows) and rows.shape == (3, 3) and rows.n == 400
    assert rows.data_norm == pytest.approx(math.sqrt(2))
    assert np.all(np.linalg.norm(rows.X, axis=1) <= rows.data_norm + 1e-12)
    assert np.allclose(rows.X_public, [[0, 1, 0], [1, 0, 1], [0.5, 1, 0]])  # ages 30..50 → [0, 1]; "c" unseen
    # the private rows' extreme values change nothing of the encoding
    wild = _table()
    wild.features.loc[0, "age"] = 1e9
    again = pipeline.mechanism_inputs("dp-logistic", None, wild, public)
    assert np.array_equal(again.X_public, rows.X_public) and again.X[0, 0] == 1.0


def test_a_skewed_public_column_is_encoded_on_a_log_scale_read_from_the_public_rows():
    # Public "gain": 0 on 9 rows of 10 and 9,999 on one (skewness 2.67 > 2): log(1 + x − 0)/log(10,000);
    # "age" (skewness 0) stays min–max.  The private rows choose nothing: a wild private value is clipped.
    table = _table()
    table.features["gain"] = np.where(np.arange(400) % 10 == 0, 99.0, 0.0)
    table = type(table)(features=table.features, labels=table.labels, class_names=table.class_names,
                        label_column="y", numeric_columns=("age", "gain"), categorical_columns=("job",), name="toy")
    public = pd.DataFrame({"age": np.linspace(20, 60, 10), "gain": [0.0] * 9 + [9999.0], "job": ["a"] * 10})
    enc = dt.public_encoding(table, public)
    assert enc.log.tolist() == [False, True]
    X = enc.transform(pd.DataFrame({"age": [40.0], "gain": [99.0], "job": ["a"]}))
    assert X[0, :2] == pytest.approx([0.5, math.log(100.0) / math.log(10_000.0)], rel=1e-12)  # 0.5 and 0.5
    assert dt.public_encoding(table, public, log_skewed=False).transform(
        pd.DataFrame({"age": [40.0], "gain": [99.0], "job": ["a"]}))[0, 1] == pytest.approx(99 / 9999)
    wild = table.features.copy()
    wild.loc[0, "gain"] = 1e12
    rows = dt.private_rows(type(table)(features=wild, labels=table.labels, class_names=table.class_names,
                                       label_column="y", numeric_columns=("age", "gain"),
                                       categorical_columns=("job",), name="toy"), public)
    assert rows.X[0, 1] == 1.0 and np.all(np.linalg.norm(rows.X, axis=1) <= rows.data_norm + 1e-12)
    assert np.array_equal(rows.X_public, dt.private_rows(table, public).X_public)


# ----------------------------------------------------------------------------- pipeline, ledger, registry


def test_registered_with_rows_inputs_and_charged_to_the_ledger():
    from core.ledger import PrivacyLedger

    for name in ("dp-logistic", "dp-naive-bayes"):
        assert registry.get(name).inputs == "rows" and registry.get(name).takes_epsilon
    rows = pipeline.mechanism_inputs("dp-naive-bayes", None, _table(), _table().features.iloc[:50])
    ledger = PrivacyLedger("test", budget_epsilon=2.5, budget_delta=1e-4)
    res = pipeline.label(rows, "dp-logistic", {"epsilon": 1.0, "delta": 1e-5}, rng=0, ledger=ledger)
    assert res.n_answered == 50 and (res.epsilon, res.delta) == (1.0, 1e-5)
    res = pipeline.label(rows, "dp-naive-bayes", {"epsilon": 1.0, "delta": 1e-5}, rng=0, ledger=ledger)
    assert res.n_answered == 50
    with pytest.raises(BudgetExhausted):
        pipeline.label(rows, "dp-logistic", {"epsilon": 1.0, "delta": 1e-5}, rng=0, ledger=ledger)
    with pytest.raises(ParameterError):
        pipeline.label(np.array([[3, 2]]), "dp-logistic", {"epsilon": 1.0, "delta": 1e-5})


def test_default_C_is_a_function_of_public_quantities():
    assert dt.default_C(n=32_561, dimension=104, epsilon=1.0) == pytest.approx(0.01 * math.sqrt(105 / 105))
    assert dt.default_C(n=32_561, dimension=104, epsilon=0.5) == pytest.approx(0.005)
    assert dt.default_C(n=10**9, dimension=1, epsilon=8.0) == 1.0


# ----------------------------------------------------------------------------- audit


@pytest.mark.parametrize("name, pair, settings", [
    ("dp-logistic", "label_flips", {}),
    ("dp-logistic", "row_moves", {}),
    ("dp-logistic", "label_flips", {"perturbation": "gaussian", "delta": 1e-2}),
    ("dp-naive-bayes", "row_moves", {}),
    ("dp-naive-bayes", "class_changes", {}),
])
def test_dp_training_passes_the_audit(name, pair, settings):
    # The audit's lower bound holds with 99 % confidence for a correct mechanism (the
    # fixed seed makes the run deterministic).
    from core.audit.scenarios import run_scenario, scenario

    mech = registry.get(name)
    scn = scenario(name, pair=pair, **{**mech.audit_defaults, **settings})
    result = run_scenario(scn, n_trials=50_000, rng=7)
    assert result.epsilon_lower_bound <= scn.claimed_epsilon, result.summary()


def test_the_audit_catches_a_release_with_too_little_noise():
    # The same scenario claiming ε = 0.2 for a release run at ε = 8: the audit must see it.
    from dataclasses import replace

    from core.audit.dp_training import DPNaiveBayesSampler
    from core.audit.scenarios import run_scenario

    from core.audit.dp_training import dp_training_scenario

    scn = dp_training_scenario("dp-naive-bayes", pair="row_moves", epsilon=0.2, delta=1e-5)
    broken = replace(scn, sampler=DPNaiveBayesSampler(8.0, 1e-5, "sum"))
    assert run_scenario(broken, n_trials=50_000, rng=8).epsilon_lower_bound > 0.2
    scn = dp_training_scenario("dp-logistic", pair="label_flips", epsilon=0.2, delta=1e-5, C=0.1, perturbation="gamma")
    from core.audit.dp_training import DPLogisticSampler

    broken = replace(scn, sampler=DPLogisticSampler(8.0, 1e-5, 0.1, "gamma"))
    assert run_scenario(broken, n_trials=50_000, rng=9).epsilon_lower_bound > 0.2
