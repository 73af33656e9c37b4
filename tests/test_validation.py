"""Parameter validation: every check of core.validation with bad values, and the
mechanisms and the teacher trainer raising the same clear errors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from core import validation as v
from core.errors import DataError, ParameterError, PrivacyWarning, PrivateLabelLabError

NAN, INF = float("nan"), float("inf")
NOT_NUMBERS = ["1", None, True, False, [1.0], object()]


# ----------------------------------------------------------------------------- errors


def test_error_hierarchy():
    assert issubclass(ParameterError, PrivateLabelLabError) and issubclass(ParameterError, ValueError)
    assert issubclass(DataError, PrivateLabelLabError) and issubclass(DataError, ValueError)
    assert issubclass(PrivacyWarning, UserWarning)


# ----------------------------------------------------------------------------- epsilon


@pytest.mark.parametrize("bad", [0, 0.0, -1, -1e-9, NAN, INF, -INF] + NOT_NUMBERS)
def test_epsilon_must_be_positive_and_finite(bad):
    with pytest.raises(ParameterError, match="epsilon"):
        v.check_epsilon(bad)


@pytest.mark.parametrize("good", [1e-6, 0.5, 1, 10, np.float64(2.5), np.int64(3)])
def test_epsilon_valid(good):
    out = v.check_epsilon(good)
    assert isinstance(out, float) and out == float(good)


def test_epsilon_message_is_actionable_and_uses_the_given_name():
    with pytest.raises(ParameterError) as info:
        v.check_epsilon(0, name="eps0")
    msg = str(info.value)
    assert "eps0" in msg and "greater than 0" in msg


# ----------------------------------------------------------------------------- delta


@pytest.mark.parametrize("bad", [0, 0.0, 1, 1.0, -0.1, 1.5, NAN, INF, -INF] + NOT_NUMBERS)
def test_delta_must_lie_strictly_between_0_and_1(bad):
    with pytest.raises(ParameterError, match="delta"):
        v.check_delta(bad)


@pytest.mark.parametrize("delta, n", [(0.01, 100), (0.5, 10), (1e-3, 1000), (0.2, 5)])
def test_delta_at_least_one_over_n_warns(delta, n):
    with pytest.warns(PrivacyWarning, match="1/n"):
        assert v.check_delta(delta, n) == delta


@pytest.mark.parametrize("delta, n", [(0.01, 99), (1e-6, 10_000), (1e-5, None)])
def test_delta_below_one_over_n_is_silent(delta, n):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert v.check_delta(delta, n) == delta


# ----------------------------------------------------------------------------- T, m


@pytest.mark.parametrize("check, name", [(v.check_T, "T"), (v.check_m, "m")])
@pytest.mark.parametrize("bad", [0, -1, -10, 0.0, 1.5, NAN, INF, "2", None, True])
def test_counts_of_rounds_and_queries_must_be_whole_numbers_at_least_1(check, name, bad):
    with pytest.raises(ParameterError, match=name):
        check(bad)


@pytest.mark.parametrize("check", [v.check_T, v.check_m])
def test_T_and_m_valid(check):
    assert check(1) == 1
    assert check(np.int64(7)) == 7
    assert check(3.0) == 3 and isinstance(check(3.0), int)


# ----------------------------------------------------------------------------- eta


@pytest.mark.parametrize("bad", [0.3, 0.15, 0.4, 0.7, 0.11, 0, 1, 1.0, 1.5, -0.25, NAN, INF] + NOT_NUMBERS)
def test_eta_needs_a_whole_number_of_bins(bad):
    with pytest.raises(ParameterError, match="eta"):
        v.check_eta(bad)


@pytest.mark.parametrize("eta, bins", [(0.5, 2), (0.25, 4), (0.2, 5), (0.1, 10), (0.05, 20), (1 / 3, 3), (0.01, 100)])
def test_eta_valid(eta, bins):
    e, b = v.check_eta(eta)
    assert b == bins and math.isclose(e, 1.0 / bins)


def test_eta_message_explains_the_rule():
    with pytest.raises(ParameterError, match="whole number"):
        v.check_eta(0.3)


# ----------------------------------------------------------------------------- k


@pytest.mark.parametrize("bad", [1, 0, -3, 2.5, NAN, "4", None, True])
def test_k_at_least_2(bad):
    with pytest.raises(ParameterError, match="k"):
        v.check_k(bad)


@pytest.mark.parametrize("k, n", [(11, 10), (100, 50), (3, 2)])
def test_k_larger_than_the_number_of_private_rows(k, n):
    with pytest.raises(ParameterError, match="more than"):
        v.check_k(k, n)


@pytest.mark.parametrize("k, n", [(6, 10), (10, 10), (4, 7), (51, 101)])
def test_k_so_large_that_a_chunk_has_fewer_than_two_rows(k, n):
    with pytest.raises(ParameterError, match="fewer than two rows"):
        v.check_k(k, n)


@pytest.mark.parametrize("k, n", [(2, 4), (5, 10), (3, 7), (50, 101), (2, None), (1000, None)])
def test_k_valid(k, n):
    assert v.check_k(k, n) == k


# ----------------------------------------------------------------------------- gamma, beta


@pytest.mark.parametrize("bad", [0, 0.0, -0.05, NAN, INF, -INF] + NOT_NUMBERS)
def test_gamma_must_be_positive_and_finite(bad):
    with pytest.raises(ParameterError, match="gamma"):
        v.check_gamma(bad)


def test_gamma_valid():
    assert v.check_gamma(0.05) == 0.05


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.1, NAN, INF] + NOT_NUMBERS)
def test_beta_must_lie_strictly_between_0_and_1(bad):
    with pytest.raises(ParameterError, match="beta"):
        v.check_beta(bad)


@pytest.mark.parametrize("bad", [0, 1, -0.5, 2, NAN])
def test_probability(bad):
    with pytest.raises(ParameterError, match="confidence"):
        v.check_probability(bad, "confidence")
    assert v.check_probability(0.3, "p") == 0.3


# ----------------------------------------------------------------------------- counts, scores


@pytest.mark.parametrize(
    "bad",
    [
        np.array([1, 2, 3]),  # 1-D
        np.zeros((0, 2), dtype=int),  # no query
        np.array([[[1, 2]]]),  # 3-D
        np.array([[3, -1], [1, 1]]),  # negative
        np.array([[1.5, 0.5], [1.0, 1.0]]),  # not whole
        np.array([[np.nan, 2.0], [1.0, 1.0]]),  # NaN
        np.array([[2, 0], [1, 2]]),  # unequal totals
        np.array([["a", "b"]]),  # text
    ],
)
def test_bad_vote_counts(bad):
    with pytest.raises(DataError):
        v.check_counts(bad)


def test_counts_valid_and_unequal_totals_allowed_on_request():
    out = v.check_counts(np.array([[2.0, 1.0], [3.0, 0.0]]))
    assert out.dtype == np.int64
    assert v.check_counts(np.array([[2, 0], [1, 2]]), equal_totals=False).shape == (2, 2)


@pytest.mark.parametrize(
    "bad",
    [np.array([0.1, 0.2]), np.array([[0.1, 1.2]]), np.array([[-0.1, 0.5]]), np.array([[np.nan, 0.5]]),
     np.array([[np.inf, 0.5]]), np.zeros((0, 3))],
)
def test_bad_scores(bad):
    with pytest.raises(DataError):
        v.check_scores(bad)


# ----------------------------------------------------------------------------- mechanisms

COUNTS = np.array([[8, 2], [5, 5], [9, 1]])
SCORES = np.array([[0.1, 0.2, 0.9, 0.15], [0.6, 0.7, 0.65, 0.9]])


def _mechanism_calls():
    from core import mechanisms as ag

    return {
        "btt": lambda **kw: ag.btt_label(kw.pop("counts", COUNTS), epsilon=kw.pop("epsilon", 1.0), delta=kw.pop("delta", 1e-3), T=kw.pop("T", 2), rng=0, **kw),
        "btt-soft": lambda **kw: ag.btt_soft_label(kw.pop("scores", SCORES), epsilon=kw.pop("epsilon", 1.0), delta=kw.pop("delta", 1e-3), T=kw.pop("T", 2), eta=kw.pop("eta", 0.25), rng=0, **kw),
        "a-stab": lambda **kw: ag.a_stab_label(kw.pop("counts", COUNTS), epsilon=kw.pop("epsilon", 1.0), delta=kw.pop("delta", 1e-3), rng=0, **kw),
        "baseline": lambda **kw: ag.composition_baseline_label(kw.pop("counts", COUNTS), epsilon=kw.pop("epsilon", 1.0), delta=kw.pop("delta", 1e-3), rng=0, **kw),
        "lnmax": lambda **kw: ag.lnmax_label(kw.pop("counts", COUNTS), gamma=kw.pop("gamma", 0.5), delta=kw.pop("delta", 1e-3), rng=0, **kw),
    }


@pytest.mark.parametrize("name", ["btt", "btt-soft", "a-stab", "baseline"])
@pytest.mark.parametrize("eps", [0, -1.0, NAN, INF])
def test_mechanisms_reject_bad_epsilon(name, eps):
    with pytest.raises(ParameterError, match="epsilon"):
        _mechanism_calls()[name](epsilon=eps)


@pytest.mark.parametrize("name", ["btt", "btt-soft", "a-stab", "baseline", "lnmax"])
@pytest.mark.parametrize("delta", [0, 1, -1e-5, 1.5, NAN])
def test_mechanisms_reject_bad_delta(name, delta):
    with pytest.raises(ParameterError, match="delta"):
        _mechanism_calls()[name](delta=delta)


@pytest.mark.parametrize("name", ["btt", "btt-soft"])
@pytest.mark.parametrize("T", [0, -1, 1.5])
def test_btt_rejects_bad_T(name, T):
    with pytest.raises(ParameterError, match="T"):
        _mechanism_calls()[name](T=T)


@pytest.mark.parametrize("eta", [0.3, 0, 1, -0.5])
def test_soft_labels_reject_bad_eta(eta):
    with pytest.raises(ParameterError, match="eta"):
        _mechanism_calls()["btt-soft"](eta=eta)


@pytest.mark.parametrize("name", ["btt", "btt-soft"])
def test_btt_rejects_bad_calibration_and_beta(name):
    with pytest.raises(ParameterError, match="calibration"):
        _mechanism_calls()[name](calibration="loose")
    with pytest.raises(ParameterError, match="beta"):
        _mechanism_calls()[name](beta=1.0)


@pytest.mark.parametrize("gamma", [0, -0.1, NAN, INF])
def test_lnmax_rejects_bad_gamma(gamma):
    with pytest.raises(ParameterError, match="gamma"):
        _mechanism_calls()["lnmax"](gamma=gamma)


@pytest.mark.parametrize("name", ["btt", "a-stab", "baseline", "lnmax"])
@pytest.mark.parametrize("counts", [np.array([[3, -1]]), np.array([[2, 1], [1, 1]]), np.array([1, 2]), np.array([[0.5, 1.5]])])
def test_mechanisms_reject_bad_counts(name, counts):
    with pytest.raises(DataError):
        _mechanism_calls()[name](counts=counts)


@pytest.mark.parametrize("scores", [np.array([[0.2, 1.5]]), np.array([[np.nan, 0.5]]), np.array([0.1, 0.2])])
def test_soft_labels_reject_bad_scores(scores):
    with pytest.raises(DataError):
        _mechanism_calls()["btt-soft"](scores=scores)


# ----------------------------------------------------------------------------- teachers


def _xy(n):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:2] = [0, 1]
    return X, y


@pytest.mark.parametrize("k, n, match", [(1, 20, "at least 2"), (21, 20, "more than"), (11, 20, "fewer than two rows")])
def test_train_teachers_rejects_bad_k(k, n, match):
    from core.ensemble.teachers import train_teachers

    X, y = _xy(n)
    with pytest.raises(ParameterError, match=match):
        train_teachers(X, y, "gaussian_nb", k, rng=0)


# ---------------------------------------------------------------------------
# General checks: whole numbers, reals in an interval, arrays of reals
# ---------------------------------------------------------------------------

def test_check_integer_accepts_whole_numbers_within_bounds():
    from core.validation import check_integer

    assert check_integer(5, "n", minimum=1) == 5
    assert check_integer(5.0, "n", minimum=1, maximum=5) == 5
    assert check_integer(np.int32(-3), "n") == -3


@pytest.mark.parametrize(
    "value, kwargs, words",
    [
        (0, {"minimum": 1}, "n must be at least 1"),
        (9, {"maximum": 8}, "n must be at most 8"),
        (2.5, {}, "whole number"),
        (True, {}, "whole number"),
        ("3", {}, "whole number"),
    ],
)
def test_check_integer_refuses(value, kwargs, words):
    from core.validation import check_integer

    with pytest.raises(ParameterError, match=words):
        check_integer(value, "n", **kwargs)


def test_check_real_interval_ends():
    from core.validation import check_real

    assert check_real(0.0, "x", 0.0, 1.0) == 0.0
    assert check_real(1, "x", 0.0, 1.0) == 1.0
    for value, kwargs in [(0.0, {"low_open": True}), (1.0, {"high_open": True}), (1.5, {}),
                          (float("nan"), {}), (float("inf"), {"high": math.inf}), ("a", {})]:
        with pytest.raises(ParameterError, match="x must be"):
            check_real(value, "x", 0.0, kwargs.pop("high", 1.0), **kwargs)


def test_check_real_array():
    from core.validation import check_real_array

    out = check_real_array([1, 2, 3], "m", 0.0, low_open=True, what="number of queries")
    assert out.dtype == float and out.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ParameterError, match=r"m \(number of queries\) must be finite and greater than 0"):
        check_real_array([1, 0], "m", 0.0, low_open=True, what="number of queries")
    with pytest.raises(ParameterError, match=r"alpha must be finite and in \[0, 1\]"):
        check_real_array(np.array([0.5, 1.5]), "alpha", 0.0, 1.0)
    with pytest.raises(ParameterError, match="non-empty"):
        check_real_array([], "alpha")
    with pytest.raises(ParameterError, match="number"):
        check_real_array(["a"], "alpha")
