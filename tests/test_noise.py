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
        aggregators.lnmax_label(counts, gamma=0.5, rng=0, delta=1e-5)


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
        (aggregators.lnmax_label, dict(gamma=0.5, delta=1e-5)),
    ]:
        a = fn(counts, **kw, rng=1).labels
        b = fn(counts, **kw, rng=2).labels
        assert np.array_equal(a, b), fn.__name__


def test_module_documents_the_remaining_continuous_draws():
    doc = noise.__doc__
    assert "LNMax" in doc and "continuous" in doc.lower()
    assert "operating system" in doc


# ----------------------------------------------------------------------------- exact samplers (CKS 2020)

from fractions import Fraction

from core.noise import bernoulli_exp, discrete_gaussian, rational_scale, rational_variance, secure_rng

CHI2_P = 1e-7  # critical value chi2.isf(1e-7, df): a correct sampler fails with probability 1e-7


def _chi2_check(x: np.ndarray, support: np.ndarray, pmf: np.ndarray, label) -> None:
    """Pearson chi-square of ``x`` against an exact pmf on ``support`` (covering all but
    a negligible mass); outer cells are pooled into the tails until each has an expected
    count >= 5, and the test rejects above ``chi2.isf(CHI2_P, df)``."""
    n = x.size
    pmf = pmf / pmf.sum()
    counts = np.bincount(x - support[0], minlength=support.size)
    assert counts.sum() == n  # no draw outside the support
    exp = n * pmf
    lo = int(np.argmax(np.cumsum(exp) >= 5))
    hi = support.size - 1 - int(np.argmax(np.cumsum(exp[::-1]) >= 5))
    obs = np.concatenate([[counts[: lo + 1].sum()], counts[lo + 1 : hi], [counts[hi:].sum()]])
    e = np.concatenate([[exp[: lo + 1].sum()], exp[lo + 1 : hi], [exp[hi:].sum()]])
    chi2 = float(((obs - e) ** 2 / e).sum())
    crit = stats.chi2.isf(CHI2_P, df=obs.size - 1)
    assert chi2 < crit, (label, chi2, crit, obs.size)


SCALES = [0.5, 1.0, 2.47, 7.3, 40.0]


@pytest.mark.slow
@pytest.mark.parametrize("scale", SCALES)
def test_discrete_laplace_exact_pmf_chi2_1e7(scale):
    # 10^7 draws against (1-p)/(1+p) p^|z|, p = exp(-1/t) for the rational t sampled.
    # False-alarm probability 1e-7 per scale (fixed seed: deterministic).
    t = float(rational_scale(scale))
    x = discrete_laplace(scale, 10_000_000, rng=2020)
    half = int(60 * t) + 60  # P[|Z| > half] < e^-60
    z = np.arange(-half, half + 1)
    p = math.exp(-1.0 / t)
    _chi2_check(x, z, (1 - p) / (1 + p) * p ** np.abs(z).astype(float), ("dlap", scale))


@pytest.mark.slow
@pytest.mark.parametrize("sigma", SCALES)
def test_discrete_gaussian_exact_pmf_chi2_1e7(sigma):
    # 10^7 draws against exp(-z²/(2σ²)) / normaliser, σ² the rational sampled.
    # False-alarm probability 1e-7 per σ (fixed seed: deterministic).
    v = float(rational_variance(sigma))
    x = discrete_gaussian(sigma, 10_000_000, rng=2004)
    half = int(12 * math.sqrt(v)) + 12  # mass beyond 12σ < 1e-32
    z = np.arange(-half, half + 1)
    _chi2_check(x, z, np.exp(-(z.astype(float) ** 2) / (2 * v)), ("dgauss", sigma))


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7), Fraction(1, 3 * 2**70)])
def test_bernoulli_exp_has_mean_exp_minus_gamma(gamma):
    # Binomial count among n draws; 6-sigma tolerance (false failure < 2e-9).  The last
    # γ has a denominator beyond 2**62 and goes through the Python-int path.
    n = 1_000_000 if gamma.denominator < 2**62 else 20_000
    x = bernoulli_exp(gamma, n, rng=17)
    assert x.dtype == bool and x.shape == (n,)
    p = math.exp(-float(gamma))
    assert abs(int(x.sum()) - n * p) <= 6 * math.sqrt(n * p * (1 - p)) + 1e-9


def test_rational_scale_rounds_up_with_bounded_denominator():
    assert rational_scale(0.5) == Fraction(1, 2)
    assert rational_scale(1.0) == 1 and rational_scale(40) == 40
    assert rational_scale(7.3) == Fraction(73, 10)  # 73/10 is above the float 7.3
    for s in [2.47, 0.1, 1 / 3, math.pi, 1e6 + 0.1, 123.456789, 3e-5]:
        t = rational_scale(s)
        assert t >= Fraction(s) and t.denominator <= noise.MAX_DENOMINATOR
        assert t - Fraction(s) <= Fraction(1, noise.MAX_DENOMINATOR), s
    assert rational_scale(Fraction(247, 100)) == Fraction(247, 100)  # exact Fractions kept
    for s in [0.5, 2.47, 7.3, 40.0, 1 / 7]:
        v = rational_variance(s)
        assert v >= Fraction(s) ** 2 and v - Fraction(s) ** 2 < Fraction(1, 2**14)


def test_round_up_is_the_best_upper_approximation():
    # Brute force: min over q <= N of ceil(x q)/q.
    r = np.random.default_rng(5)
    for _ in range(300):
        x = Fraction(int(r.integers(1, 10**9)), int(r.integers(1, 10**9)))
        n_max = int(r.integers(1, 60))
        best = min(Fraction(-((-x.numerator * q) // x.denominator), q) for q in range(1, n_max + 1))
        assert noise._round_up(x, n_max) == best, (x, n_max)


def test_exact_samplers_reject_out_of_range_parameters():
    with pytest.raises(ParameterError, match="scale"):
        discrete_laplace(2.0**33, 3, rng=0)
    with pytest.raises(ParameterError, match="sigma"):
        discrete_gaussian(40_000, 3, rng=0)
    for bad in [0, -1.0, float("nan"), float("inf")]:
        with pytest.raises(ParameterError):
            discrete_gaussian(bad, 3, rng=0)
    with pytest.raises(ParameterError, match="gamma"):
        bernoulli_exp(-1, 3, rng=0)


def test_discrete_gaussian_shapes_and_moments():
    assert discrete_gaussian(2.0, (3, 4), rng=0).shape == (3, 4)
    assert np.ndim(discrete_gaussian(2.0, None, rng=0)) == 0
    # Var of N_Z(0, σ²) for σ = 3 is within 1e-30 of 9 (Poisson summation); 6-sd bound.
    x = discrete_gaussian(3.0, 1_000_000, rng=8).astype(float)
    assert x.dtype == float and abs(x.mean()) < 6 * 3 / 1000
    assert abs(x.var() - 9.0) < 6 * math.sqrt(2 * 81 / 1e6)
    y = discrete_gaussian(5000.0, 20_000, rng=9).astype(float)  # b = 1 regime
    assert abs(y.std() / 5000 - 1) < 0.03


class _IntegersOnly(np.random.Generator):
    """A Generator whose float (and numpy-distribution) methods all raise."""


_FLOAT_METHODS = ["random", "uniform", "exponential", "geometric", "standard_normal", "standard_exponential",
                  "standard_gamma", "standard_cauchy", "standard_t", "normal", "laplace", "binomial",
                  "poisson", "gamma", "beta", "choice", "logseries", "negative_binomial"]
for _name in _FLOAT_METHODS:
    def _forbidden(self, *args, _name=_name, **kwargs):
        raise AssertionError(f"{_name} used in an exact sampler")
    setattr(_IntegersOnly, _name, _forbidden)


def test_no_float_draw_in_the_decision_path():
    g = _IntegersOnly(np.random.PCG64(3))
    with pytest.raises(AssertionError, match="random"):
        g.random()
    for s in [0.5, 2.47, 40.0, Fraction(7, 3)]:
        assert discrete_laplace(s, 10_000, rng=g).dtype == np.int64
        assert discrete_gaussian(s, 10_000, rng=g).dtype == np.int64
    assert bernoulli_exp(Fraction(13, 7), 1000, rng=g).dtype == bool


# -- scalar reference (pure Python ints and Fractions), CKS 2020 Algorithms 1-3 ---------------
#
# The vectorized samplers draw for all pending slots at once, so for size > 1 their stream
# order differs from a scalar loop's.  For size 1 each vectorized integers() call draws one
# value, and numpy's integers(0, h, 1) equals integers(0, h) on the same stream; so a
# sequence of size-1 calls must agree value for value with the scalar reference below.
# (For size > 1 the chi-square tests above give distributional agreement.)

_F12 = math.factorial(12)


def ref_bern_exp_one(g) -> bool:
    w = int(g.integers(0, _F12))  # trials K = 2..12 from the mixed-radix digits of W
    for k in range(2, 13):
        w, d = divmod(w, k)
        if d != 0:
            return k % 2 == 1
    k = 13
    while int(g.integers(0, k)) == 0:
        k += 1
    return k % 2 == 1


def ref_bern_exp_le1(gamma: Fraction, den: int, g) -> bool:
    # gamma = num/den <= 1, with den fixed (the vectorized code's common denominator)
    num = gamma * den
    assert num.denominator == 1
    k = 1
    while int(g.integers(0, den * k)) < num:  # Bernoulli(gamma / k)
        k += 1
    return k % 2 == 1


def ref_bern_exp(gamma: Fraction, den: int, g) -> bool:
    for _ in range(math.floor(gamma)):
        if not ref_bern_exp_one(g):
            return False
    return ref_bern_exp_le1(gamma - math.floor(gamma), den, g)


def ref_dlap(t: Fraction, g) -> int:
    num, den = t.numerator, t.denominator
    while True:
        w = int(g.integers(0, 2 * num))
        u, b = w >> 1, w & 1
        if num > 1 and not ref_bern_exp_le1(Fraction(u, num), num, g):
            continue
        v = 0
        while ref_bern_exp_one(g):
            v += 1
        y = (u + num * v) // den
        if b == 1 and y == 0:
            continue
        return -y if b else y


def ref_dgauss(v: Fraction, g) -> int:
    t = math.isqrt(math.floor(v)) + 1
    den = 2 * v.numerator * v.denominator * t * t
    while True:
        y = ref_dlap(Fraction(t), g)
        gamma = (abs(y) - v / t) ** 2 / (2 * v)
        if ref_bern_exp(gamma, den, g):
            return y


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.47, 7.3, Fraction(7, 3), 40.0])
def test_vectorized_samplers_agree_with_the_scalar_reference_on_one_stream(scale):
    g1, g2 = np.random.default_rng(77), np.random.default_rng(77)
    t, v = rational_scale(scale), rational_variance(scale)
    for _ in range(300):
        assert int(discrete_laplace(scale, 1, rng=g1)[0]) == ref_dlap(t, g2)
        assert int(discrete_gaussian(scale, 1, rng=g1)[0]) == ref_dgauss(v, g2)
        gamma = Fraction(int(g2.integers(0, 50)), 7)
        g1.integers(0, 50)
        assert bool(bernoulli_exp(gamma, 1, rng=g1)[0]) == ref_bern_exp(gamma, gamma.denominator, g2)
    assert g1.integers(0, 2**62) == g2.integers(0, 2**62)  # same number of draws consumed


class _ZerosOften:
    """A generator whose draws below 12! are often 0 (probability 1/12! for a real one), so the
    fresh trials of Bernoulli(exp(-1)) after W = 0 are exercised; other draws come from PCG64."""

    def __init__(self, seed):
        self.g = np.random.default_rng(seed)

    def integers(self, low, high, size=None):
        x = self.g.integers(low, high, size)
        return x * (self.g.integers(0, 3, size) != 0) if high == _F12 else x


def test_the_few_slot_path_draws_exactly_what_the_array_path_draws(monkeypatch):
    """Up to noise._SMALL slots are drawn on Python lists: the same values from the same integers()
    calls as the array code (forced with _SMALL = 0), so a seed gives the same noise either way."""
    def both(draw, seed, gens=lambda s: (np.random.default_rng(s), np.random.default_rng(s))):
        g1, g2 = gens(seed)
        few = draw(g1)
        monkeypatch.setattr(noise, "_SMALL", 0)
        arrays = draw(g2)
        monkeypatch.setattr(noise, "_SMALL", 16)
        assert np.array_equal(few, arrays) and few.dtype == arrays.dtype == np.int64, (seed, few, arrays)
        assert g1.integers(0, 2**62) == g2.integers(0, 2**62)  # the same number of draws consumed

    for i, scale in enumerate([0.5, 1, 1.998, 3.996, 2.47, Fraction(7, 3), 40.0, 2.0**-20, Fraction(2**32 - 1, 7)]):
        for n in (1, 2, 3, 5, 16):
            both(lambda g: discrete_laplace(scale, n, rng=g), 100 * i + n)
    for n in (1, 4, 16):
        both(lambda g: discrete_gaussian(3.3, n, rng=g), n)  # its proposals are discrete Laplace
    zeros = lambda s: (_ZerosOften(s), _ZerosOften(s))  # noqa: E731
    for seed in range(20):
        both(lambda g: noise._dlap(999, 250, 5, g), seed, zeros)
    g1, g2 = _ZerosOften(3), _ZerosOften(3)
    few, arrays = noise._bern_exp_one_few(200, g1), noise._bern_exp_one(200, g2)
    assert few == arrays.tolist() and g1.integers(0, 2**62) == g2.integers(0, 2**62)
    num = [0, 5, 2**51, 2**52 - 1]  # uniform draws below 2**52 K pass 2**62 after K = 1024: two draws each
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    assert noise._bern_exp_le1_few(num, 2**52, g1) == noise._bern_exp_le1(np.array(num), 2**52, g2).tolist()
    assert g1.integers(0, 2**62) == g2.integers(0, 2**62)



def test_the_few_slot_path_matches_the_array_path_under_chacha_and_large_rationals(monkeypatch):
    """The list path against the array path (_SMALL = 0) where the test above does not look: a
    ChaCha20 generator (the secure default's kind), scales whose numerator is near 2**52 and whose
    denominator is large (up to about 2**20), 16 slots (the last on lists) and 17 (the first on
    arrays, which must not change), and a scalar draw against a draw of size 1."""
    from randomgen import ChaCha

    def chacha(seed):
        return np.random.Generator(ChaCha(key=seed + 1, counter=0, rounds=20))

    for num, den in [(2**52 - 1, 3), (2**52 - 1, 2**20 - 1), (7, 2**20 - 1), (10**15, 997)]:
        for n in (1, 7, 16, 17):
            for seed in range(3):
                for make in (np.random.default_rng, chacha):
                    g1, g2 = make(seed), make(seed)
                    few = noise._dlap(num, den, n, g1)
                    monkeypatch.setattr(noise, "_SMALL", 0)
                    arrays = noise._dlap(num, den, n, g2)
                    monkeypatch.setattr(noise, "_SMALL", 16)
                    assert np.array_equal(few, arrays) and few.dtype == arrays.dtype == np.int64, (num, den, n, seed)
                    assert g1.integers(0, 2**62) == g2.integers(0, 2**62)
    for seed in range(5):
        assert discrete_laplace(Fraction(2**40 + 1, 2**19), rng=seed) == discrete_laplace(
            Fraction(2**40 + 1, 2**19), size=1, rng=seed)[0]


# ----------------------------------------------------------------------------- secure default


def test_the_default_generator_is_chacha20_keyed_from_secrets():
    from randomgen import ChaCha

    g = check_rng(None)
    assert isinstance(g.bit_generator, ChaCha)
    assert isinstance(secure_rng().bit_generator, ChaCha)
    assert g.integers(0, 2**62) != check_rng(None).integers(0, 2**62)  # fresh 256-bit keys
    assert discrete_laplace(5.0, 8).dtype == np.int64  # rng=None draws from it


def test_an_int_seed_gives_reproducible_pcg64():
    g = check_rng(12)
    assert isinstance(g.bit_generator, np.random.PCG64)
    assert np.array_equal(discrete_gaussian(3.0, 100, rng=12), discrete_gaussian(3.0, 100, rng=12))
    assert np.array_equal(discrete_laplace(2.47, 100, rng=12), discrete_laplace(2.47, 100, rng=12))


# ----------------------------------------------------------------------------- gamma-norm vectors


@pytest.mark.parametrize("d, scale", [(1, 0.7), (3, 2.0), (20, 0.5)])
def test_gamma_norm_vector_has_a_gamma_norm_and_a_uniform_direction(d, scale):
    # Density ∝ exp(-|b|/scale) on R^d: |b| ~ Gamma(d, scale), b/|b| uniform on the sphere.
    # Kolmogorov-Smirnov on the norm (fails falsely with probability <= 1e-6 by its
    # p-value); the mean direction of n uniform unit vectors has each coordinate with sd
    # 1/sqrt(n d); 6 sd has two-sided probability 2e-9 per coordinate.
    n = 100_000
    b = noise.gamma_norm_vector(d, scale, n, rng=11)
    assert b.shape == (n, d)
    r = np.linalg.norm(b, axis=1)
    assert stats.kstest(r, stats.gamma(d, scale=scale).cdf).pvalue > P_MIN
    u = b / r[:, None]
    assert np.all(np.abs(u.mean(axis=0)) < 6 / math.sqrt(n * d))
    if d == 1:  # the two signs equally likely: Laplace(scale) in one dimension
        assert stats.kstest(b[:, 0], stats.laplace(scale=scale).cdf).pvalue > P_MIN


def test_gamma_norm_vector_shapes_and_checks():
    assert noise.gamma_norm_vector(4, 1.0, rng=0).shape == (4,)
    assert np.array_equal(noise.gamma_norm_vector(4, 1.0, 3, rng=5), noise.gamma_norm_vector(4, 1.0, 3, rng=5))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ParameterError):
            noise.gamma_norm_vector(bad, 1.0)
    with pytest.raises(ParameterError):
        noise.gamma_norm_vector(3, 0.0)
