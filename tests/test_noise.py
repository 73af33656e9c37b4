"""The one noise module: distributions, generators, and who may draw what.

Statistical tests use fixed seeds, so they are deterministic; each states the
probability that it would fail for a correct implementation under a fresh seed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core import noise
from core.errors import ParameterError
from core.noise import check_rng, discrete_laplace, discrete_laplace_tail, laplace

P_MIN = 1e-6  # reject a goodness-of-fit test only below this p-value


def dlap_pmf(scale: float, z) -> np.ndarray:
    """Exact pmf of the discrete Laplace distribution: (1-p)/(1+p) p^|z|, p = e^(-1/scale)."""
    p = math.exp(-1.0 / scale)
    return (1.0 - p) / (1.0 + p) * p ** np.abs(np.asarray(z, dtype=float))


# ----------------------------------------------------------------------------- pmf


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 12.0])
def test_discrete_laplace_has_the_two_sided_geometric_pmf(scale):
    # Pearson chi-square goodness of fit; cells with expected count < 5 are pooled into
    # the two tails.  Under a correct sampler the p-value is (asymptotically) uniform, so
    # this fails falsely with probability <= 1e-6.
    n = 200_000
    x = discrete_laplace(scale, n, rng=1234)
    assert x.dtype == np.int64 and x.shape == (n,)
    a = 0
    while n * dlap_pmf(scale, a + 1) >= 5:
        a += 1
    support = np.arange(-a, a + 1)
    expected = n * dlap_pmf(scale, support)
    tail = n * discrete_laplace_tail(scale, a)  # P[Z > a] = P[Z < -a]
    observed = np.array([np.count_nonzero(x == z) for z in support])
    obs = np.concatenate([[np.count_nonzero(x < -a)], observed, [np.count_nonzero(x > a)]])
    exp = np.concatenate([[tail], expected, [tail]])
    assert abs(exp.sum() - n) < 1e-6 * n
    chi2 = float(((obs - exp) ** 2 / exp).sum())
    p_value = stats.chi2.sf(chi2, df=obs.size - 1)
    assert p_value > P_MIN, (scale, chi2, obs.size)


def test_discrete_laplace_is_symmetric_with_the_right_variance():
    # Var = 2p/(1-p)^2.  The sample mean of 10^6 draws has sd sqrt(Var/n); |z| > 5.5 sd
    # has probability < 4e-8.  The variance check uses the CLT on Z^2 with the exact
    # fourth moment bounded by the sample's; tolerance 6 sd (prob < 2e-9).
    scale, n = 3.0, 1_000_000
    x = discrete_laplace(scale, n, rng=7).astype(float)
    p = math.exp(-1 / scale)
    var = 2 * p / (1 - p) ** 2
    assert abs(x.mean()) < 5.5 * math.sqrt(var / n)
    sd_var = math.sqrt(np.var(x**2) / n)
    assert abs(np.mean(x**2) - var) < 6 * sd_var


def test_continuous_laplace_matches_scipy():
    # Kolmogorov-Smirnov against Laplace(0, b); false failure probability <= 1e-6.
    b = 2.0
    x = laplace(b, 100_000, rng=99)
    assert stats.kstest(x, stats.laplace(scale=b).cdf).pvalue > P_MIN


def test_shapes():
    assert discrete_laplace(1.0, (3, 4), rng=0).shape == (3, 4)
    assert laplace(1.0, (2, 5), rng=0).shape == (2, 5)
    assert np.ndim(discrete_laplace(1.0, None, rng=0)) == 0


def test_large_scale_draws_are_finite_integers():
    x = discrete_laplace(1e6, 1000, rng=3)
    assert x.dtype == np.int64 and np.all(np.abs(x) < 10**9)
    assert np.std(x) > 1e5  # the scale is actually used (sd = 1.41e6; P[std < 1e5] ~ 0)


# ----------------------------------------------------------------------------- tail


@pytest.mark.parametrize("scale", [0.5, 1.0, 4.0, 25.0])
def test_discrete_laplace_tail_matches_exact_sums(scale):
    z = np.arange(-4000, 4001)
    pmf = dlap_pmf(scale, z)
    for a in [-40, -7, -3, -1, -0.5, 0, 0.3, 1, 2, 2.9, 10, 55]:
        exact = pmf[z > a].sum()
        got = float(discrete_laplace_tail(scale, a))
        assert got == pytest.approx(exact, rel=1e-9, abs=1e-15), (scale, a)


def test_discrete_laplace_tail_is_vectorized_and_monotone():
    a = np.array([-5, -1, 0, 1, 5, 50])
    t = discrete_laplace_tail(2.0, a)
    assert t.shape == a.shape
    assert np.all(np.diff(t) < 0)
    assert np.all((t > 0) & (t < 1))


def test_discrete_laplace_tail_ratio_is_the_privacy_ratio():
    # For a >= 0, P[Z > a] / P[Z > a + 1] = e^(1/scale): the Laplace mechanism's ratio.
    scale = 1.7
    r = discrete_laplace_tail(scale, np.arange(0, 20)) / discrete_laplace_tail(scale, np.arange(1, 21))
    assert np.allclose(r, math.exp(1 / scale), rtol=1e-12)


def test_empirical_tail_agrees_with_formula():
    # Binomial count of Z > a among 10^6 draws; 6-sigma tolerance (false failure < 2e-9).
    scale, a, n = 2.0, 3, 1_000_000
    x = discrete_laplace(scale, n, rng=11)
    p = float(discrete_laplace_tail(scale, a))
    assert abs(np.count_nonzero(x > a) - n * p) < 6 * math.sqrt(n * p * (1 - p))


# ----------------------------------------------------------------------------- generators


def test_default_generator_is_seeded_from_the_os():
    # Two default generators: the chance that 32 discrete-Laplace draws of scale 5
    # coincide is below (max pmf)^32 = 0.1^32.
    assert not np.array_equal(discrete_laplace(5.0, 32), discrete_laplace(5.0, 32))
    assert not np.array_equal(laplace(1.0, 8), laplace(1.0, 8))
    g1, g2 = check_rng(None), check_rng(None)
    assert isinstance(g1, np.random.Generator) and g1 is not g2
    assert g1.integers(0, 2**62) != g2.integers(0, 2**62)


@pytest.mark.parametrize("seed", [0, 42, np.int64(7), np.uint32(3)])
def test_integer_seeds_reproduce(seed):
    assert np.array_equal(discrete_laplace(3.0, 50, rng=seed), discrete_laplace(3.0, 50, rng=seed))
    assert np.array_equal(laplace(3.0, 50, rng=seed), laplace(3.0, 50, rng=seed))


def test_different_seeds_differ():
    assert not np.array_equal(laplace(1.0, 10, rng=1), laplace(1.0, 10, rng=2))


def test_a_generator_is_used_as_is_and_consumed():
    g = np.random.default_rng(5)
    assert check_rng(g) is g
    first = laplace(1.0, 10, rng=g)
    second = laplace(1.0, 10, rng=g)
    assert not np.array_equal(first, second)
    again = laplace(1.0, 10, rng=np.random.default_rng(5))
    assert np.array_equal(first, again)


@pytest.mark.parametrize("bad", ["seed", 1.5, True, False, [1, 2], np.random.RandomState(0), object()])
def test_bad_rng_raises_parameter_error(bad):
    with pytest.raises(ParameterError, match="rng"):
        check_rng(bad)
    with pytest.raises(ParameterError):
        laplace(1.0, 3, rng=bad)
    with pytest.raises(ParameterError):
        discrete_laplace(1.0, 3, rng=bad)


@pytest.mark.parametrize("scale", [0, -1, -0.5, float("nan"), float("inf"), -float("inf")])
def test_bad_scale_raises_parameter_error(scale):
    for fn in (lambda: laplace(scale, 3, rng=0), lambda: discrete_laplace(scale, 3, rng=0),
               lambda: discrete_laplace_tail(scale, 1)):
        with pytest.raises(ParameterError, match="scale"):
            fn()


def test_non_numeric_scale_is_rejected():
    with pytest.raises((ParameterError, TypeError, ValueError)):
        discrete_laplace("big", 3, rng=0)


# ----------------------------------------------------------------------------- who draws what


def _counts():
    return np.array([[30, 2], [16, 16], [25, 7], [20, 12]])


def test_integer_mechanisms_never_draw_continuous_noise(monkeypatch):
    """BTT (hard and soft), A_stab and the baseline add only discrete Laplace noise to
    their integer distances and thresholds: with the continuous sampler disabled they
    still run.  Only LNMax (PATE's analysis is for continuous Laplace) uses it."""
    from core import mechanisms as aggregators

    def forbidden(*args, **kwargs):
        raise AssertionError("continuous Laplace noise drawn by an integer-valued mechanism")

    monkeypatch.setattr(noise, "laplace", forbidden)
    counts = _counts()
    scores = np.array([[0.1, 0.2, 0.15, 0.9], [0.6, 0.62, 0.7, 0.65]])
    aggregators.btt_label(counts, epsilon=1.0, delta=1e-3, T=2, calibration="tight", rng=0)
    aggregators.btt_label(counts, epsilon=1.0, delta=1e-3, T=2, calibration="paper", rng=0)
    aggregators.btt_soft_label(scores, epsilon=1.0, delta=1e-3, T=2, eta=0.25, rng=0)
    aggregators.a_stab_label(counts, epsilon=1.0, delta=1e-3, rng=0)
    aggregators.composition_baseline_label(counts, epsilon=1.0, delta=1e-3, rng=0)
    with pytest.raises(AssertionError, match="continuous"):
        aggregators.lnmax_label(counts, gamma=0.5, rng=0)


def test_mechanisms_take_all_randomness_from_the_noise_module(monkeypatch):
    """With the noise module returning zeros the mechanisms are deterministic, whatever
    the generator: no other source of randomness is used."""
    from core import mechanisms as aggregators

    monkeypatch.setattr(noise, "discrete_laplace", lambda scale, size=None, rng=None: np.zeros(size, dtype=np.int64))
    monkeypatch.setattr(noise, "laplace", lambda scale, size=None, rng=None: np.zeros(size))
    counts = _counts()
    for fn, kw in [
        (aggregators.btt_label, dict(epsilon=1.0, delta=1e-3, T=2, calibration="tight")),
        (aggregators.a_stab_label, dict(epsilon=1.0, delta=1e-3)),
        (aggregators.composition_baseline_label, dict(epsilon=1.0, delta=1e-3)),
        (aggregators.lnmax_label, dict(gamma=0.5)),
    ]:
        a = fn(counts, **kw, rng=1).labels
        b = fn(counts, **kw, rng=2).labels
        assert np.array_equal(a, b), fn.__name__


def test_module_documents_the_remaining_continuous_draws():
    doc = noise.__doc__
    assert "LNMax" in doc and "continuous" in doc.lower()
    assert "operating system" in doc
