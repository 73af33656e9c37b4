"""All randomness of the library comes from here.

One module produces every noise draw, so that the choice of distribution is decided in one
place (docs/design.md §6); the generators and their seeding (:func:`check_rng`,
:func:`secure_rng`, :func:`detached_rng`) live in :mod:`core.rng` and are re-exported here,
so a caller imports both from ``core.noise``.  It is longer than the project's 500-line aim
on purpose: the exact samplers (Bernoulli(exp(−γ)), discrete Laplace, discrete Gaussian)
share their rational-arithmetic helpers and overflow bounds.

Exact discrete distributions
----------------------------
The integer-valued samplers follow Canonne, Kamath and Steinke (2020): every
accept/reject decision is made with integer arithmetic on a rational parameter,
from exactly uniform random integers (``Generator.integers``, Lemire's rejection
method).  No floating-point number enters a decision, so the output has *exactly*
the stated pmf, over the whole of ``int64`` (Mironov 2012 showed how a float
sampler leaks the secret through the rounding pattern; a float inversion also
truncates the support).

``bernoulli_exp(gamma, size, rng)``
    ``Bernoulli(exp(-gamma))`` for a rational ``gamma >= 0`` (CKS Algorithm 1).

``discrete_laplace(scale, size, rng)``
    ``P[Z = z] = (1 - p)/(1 + p) · p^|z|``, ``p = exp(-1/t)``, on the integers (CKS
    Algorithm 2), where ``t = rational_scale(scale)``.  It is used for every
    *integer-valued* noisy quantity: noisy distances to instability and noisy
    thresholds (BTT sparse vector, ``A_stab``, the composition baseline).  An integer
    draw added to an integer has no floating-point representation leak, and the
    Laplace privacy proofs carry over because they only shift the noise by whole
    numbers.

``discrete_gaussian(sigma, size, rng)``
    ``P[Z = z] ∝ exp(-z²/(2σ²))`` on the integers (CKS Algorithm 3), with
    ``σ² = rational_variance(sigma)``.

Floats to rationals
-------------------
A float scale is turned into the rational that is actually sampled by rounding
**up**: :func:`rational_scale` returns the smallest fraction ``t >= scale`` whose
denominator is at most ``2**20`` (the exact float value is compared, so ``t`` is
never below the requested float; 0.5, 1, 7.3, 40 give 1/2, 1, 73/10, 40, while a
float slightly above its decimal, like 2.47, gives a fraction within ``2**-20 /
denominator`` above it).  :func:`rational_variance` does the same for σ².  A
``fractions.Fraction`` (or int) is used exactly when it is within the bounds.  The
privacy loss ``ε = Δ/t`` of a Laplace release (and ``α Δ²/(2σ²)`` of a Gaussian one)
only decreases when ``t`` (σ²) grows, so an ε computed from the float stays valid.
A term that *grows* with the scale, such as the probability that noise pushes a
distance of 0 above a threshold (the δ of ``A_stab``/BTT), should be computed from
the rational returned by these functions (relative difference below ``2**-20``).
:func:`discrete_laplace_tail` already uses it.

Continuous noise (floats)
-------------------------
``laplace(scale, size, rng)``
    The continuous Laplace distribution, drawn by numpy in floating point.  It
    remains in two places, both documented: PATE's LNMax (noise on vote counts, as
    analysed by PATE's moments accountant, which is stated for continuous Laplace
    noise; only the argmax is released, never the noisy counts) and the Remark-1
    estimate of the teachers' error rate.

``gaussian(scale, size, rng)``
    Continuous Gaussian noise: GNMax's and Confident-GNMax's vote noise (compared, never
    released) and the Gaussian mechanism of the DP-trained models (a noisy objective or
    noisy sufficient statistics, released only through the model's labels).

``gamma_norm_vector(dimension, scale, size, rng)``
    A vector ``b`` of ``R^d`` with density ``∝ exp(−‖b‖₂/scale)``: a uniform direction
    times a ``Gamma(d, scale)`` norm.  The noise of objective perturbation (Chaudhuri,
    Monteleoni, Sarwate 2011, Algorithm 2) in :mod:`core.mechanisms.dp_training`.

Generators
----------
Every function takes ``rng``: a :class:`numpy.random.Generator`, an int seed, or None.

* None (the default everywhere) gives :func:`secure_rng`: a Generator over
  randomgen's ``ChaCha`` with 20 rounds (the ChaCha20 stream cipher of RFC 8439),
  keyed with 256 bits from the operating system's CSPRNG via :mod:`secrets`.  ChaCha20
  is a cryptographically strong keystream, so released noise cannot be predicted from
  other outputs (PCG64 is a statistical generator whose state can be recovered from
  its output); it is constant-time and portable, unlike ``AESCounter`` whose speed and
  side-channel resistance depend on AES-NI, and it draws integers about as fast as
  PCG64.
* An int seed gives numpy's fast PCG64 (``default_rng(seed)``): a demonstration and
  simulation option ("reproducible, not for production"); the library never writes a
  seed to an export.
* A Generator is used as is (its stream is consumed).

References
----------
.. [CKS20] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
   Differential Privacy", NeurIPS 2020 (arXiv:2004.00010).
.. [Mir12] I. Mironov, "On Significance of the Least Significant Bits for
   Differential Privacy", ACM CCS 2012.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational
from typing import Union

import numpy as np

from core.errors import ParameterError
from core.rng import RNGLike, check_rng, detached_rng, secure_rng  # the generators, re-exported: draw through here

__all__ = [
    "RNGLike",
    "check_rng",
    "detached_rng",
    "secure_rng",
    "gaussian",
    "gamma_norm_vector",
    "laplace",
    "discrete_laplace",
    "discrete_laplace_tail",
    "difference_tail",
    "discrete_gaussian",
    "bernoulli_exp",
    "rational_scale",
    "rational_variance",
    "MAX_DENOMINATOR",
]

Scale = Union[float, int, Fraction]

MAX_DENOMINATOR = 2**20
"""Largest denominator of a rational scale or variance made from a float."""

_MAX_LAPLACE_NUM = 2**52  # t = num/den: uniform draws below num·K stay < 2**62 for K <= 2**10
_MAX_GAUSS_DEN = 2**60  # 2 a b t² of the Gaussian acceptance test
_LIMIT = 2**62  # largest range drawn in one integers() call
_CHUNK = 1 << 20  # slots processed at once (bounds memory)
_SMALL = 16  # at most this many slots: on Python lists (_dlap_few)


# ----------------------------------------------------------------------------- rationals


def _check_scale(scale: Scale, name: str = "scale") -> Fraction:
    """The exact value of a positive finite scale, as a Fraction."""
    if isinstance(scale, Rational) and not isinstance(scale, bool):
        x = Fraction(scale)
    else:
        f = float(scale)  # TypeError/ValueError for non-numbers
        if not math.isfinite(f):
            raise ParameterError(f"Noise {name} must be a positive finite number, got {f}.")
        x = Fraction(f)
    if x <= 0:
        raise ParameterError(f"Noise {name} must be a positive finite number, got {float(x)}.")
    return x


def _round_up(x: Fraction, max_den: int) -> Fraction:
    """The smallest fraction ``>= x`` with denominator ``<= max_den``.

    The last convergent and semiconvergent of the continued fraction of ``x`` with
    denominators ``<= max_den`` lie on either side of ``x`` and are its best one-sided
    approximations (the algorithm of ``Fraction.limit_denominator``); the upper one is
    returned.
    """
    if x.denominator <= max_den:
        return x
    p0, q0, p1, q1 = 0, 1, 1, 0
    n, d = x.numerator, x.denominator
    while True:
        a = n // d
        q2 = q0 + a * q1
        if q2 > max_den:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        n, d = d, n - a * d
    k = (max_den - q0) // q1
    b1 = Fraction(p0 + k * p1, q0 + k * q1)
    b2 = Fraction(p1, q1)
    return b1 if b1 >= x else b2


def rational_scale(scale: Scale) -> Fraction:
    """The rational scale ``t`` that :func:`discrete_laplace` samples for ``scale``.

    ``t`` is the smallest fraction ``>= scale`` with denominator at most
    :data:`MAX_DENOMINATOR` (a Fraction or int within the bounds is kept exactly).
    Since ``t >= scale``, an ε computed from ``scale`` holds for ``t``
    (docs/design.md §6); ``t - scale < 2**-20`` whenever ``scale >= 2**-20`` (below
    that, ``t = 2**-20``: either way ``P[Z != 0] < 1e-450000``).

    Parameters
    ----------
    scale : float, int or Fraction
        Positive, at most ``2**32``.

    Returns
    -------
    fractions.Fraction
    """
    x = _check_scale(scale)
    if x > 2**32:
        raise ParameterError(f"Noise scale must be at most 2**32 for the exact sampler, got {float(x):g}.")
    t = _round_up(x, MAX_DENOMINATOR)
    if t.numerator > _MAX_LAPLACE_NUM:  # only for an exact Fraction with a large numerator
        t = _round_up(x, _MAX_LAPLACE_NUM // math.ceil(x))
    return t


def _gauss_params(sigma2: Fraction) -> tuple[int, int, int, int]:
    """``(a, b, t, D)`` for ``σ² = a/b``, ``t = floor(σ) + 1``, ``D = 2 a b t²``."""
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1
    return a, b, t, 2 * a * b * t * t


def rational_variance(sigma: Scale) -> Fraction:
    """The rational variance ``σ²`` that :func:`discrete_gaussian` samples for ``sigma``.

    The smallest fraction ``>= sigma**2`` (computed exactly from the float) whose
    denominator ``b`` keeps the integers of the acceptance test in ``int64``:
    ``b <= 2**20`` and ``b t² <= 2**26`` with ``t = floor(σ) + 1`` (``b = 1``, σ²
    rounded up to an integer, once ``σ > 8191``).

    Parameters
    ----------
    sigma : float, int or Fraction
        The standard-deviation parameter; positive, at most 30,000.

    Returns
    -------
    fractions.Fraction
    """
    s = _check_scale(sigma, "sigma")
    if s > 30_000:
        raise ParameterError(f"Noise sigma must be at most 30,000 for the exact int64 sampler, got {float(s):g}.")
    x = s * s
    t = math.isqrt(math.floor(x)) + 1
    v = _round_up(x, max(1, min(MAX_DENOMINATOR, 2**26 // (t * t))))
    if _gauss_params(v)[3] >= _MAX_GAUSS_DEN:  # exact Fraction input with a large denominator
        v = _round_up(x, 1)
    return v


# ----------------------------------------------------------------------------- Bernoulli(exp(-γ))


def _bern_exp_le1(num: np.ndarray, den: int, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for int64 ``0 <= num <= den`` (CKS Algorithm 1, γ <= 1).

    ``K = 1, 2, ...`` while Bernoulli(γ/K) succeeds; the result is ``K`` odd.
    Bernoulli(num/(den K)) is ``U < num`` for ``U`` uniform on ``{0, ..., den K - 1}``;
    when ``den K`` exceeds ``2**62`` it is Bernoulli(num/den) and Bernoulli(1/K), two
    draws, so no product overflows.
    """
    out = np.empty(num.shape[0], dtype=bool)
    idx = np.arange(num.shape[0])
    k = 1
    while idx.size:
        if den * k <= _LIMIT:
            a = gen.integers(0, den * k, idx.size) < num
        else:
            a = (gen.integers(0, den, idx.size) < num) & (gen.integers(0, k, idx.size) == 0)
        out[idx] = k % 2 == 1  # the value if the loop stops here; overwritten otherwise
        go = np.flatnonzero(a)
        idx, num = idx.take(go), num.take(go)
        k += 1
    return out


_F12 = math.factorial(12)  # < 2**32: drawn from half a 64-bit word


def _bern_exp_one(n: int, gen: np.random.Generator) -> np.ndarray:
    """``n`` draws of Bernoulli(exp(-1)): CKS Algorithm 1 at γ = 1, one draw per trial.

    At γ = 1 the trial ``K`` is Bernoulli(1/K) (``K = 1`` always succeeds).  The trials
    ``K = 2, ..., 12`` are read from one uniform ``W`` on ``{0, ..., 12! - 1}``: its
    mixed-radix digits ``d_K = (W // (K-1)!) mod K`` are independent and uniform on
    ``{0, ..., K-1}``, trial ``K`` succeeds iff ``d_K = 0``, and trials ``2..K`` all
    succeed iff ``K!`` divides ``W``.  The loop stops at the first failing ``K`` and
    returns ``K`` odd.  Only ``W = 0`` (probability ``1/12! ≈ 2e-9``) goes on to
    ``K = 13`` with fresh Bernoulli(1/K) draws.
    """
    w = gen.integers(0, _F12, n)
    out = np.zeros(n, dtype=bool)  # K = 2 (W odd): even, failure
    idx = np.flatnonzero((w & 1) == 0)
    w = w.take(idx) >> 1  # W // (K-1)! for K = 3
    k = 3
    while idx.size and k <= 12:
        go = np.flatnonzero(w % k == 0)  # d_K = 0: trial K succeeds
        if k % 2 == 1:
            out[idx] = True
            out[idx.take(go)] = False
        idx, w = idx.take(go), w.take(go) // k
        k += 1
    for i in idx:  # W = 0: trials 2..12 all succeeded
        kk = 13
        while gen.integers(0, kk) == 0:
            kk += 1
        out[i] = kk % 2 == 1
    return out


def _bern_exp(q: np.ndarray, r: np.ndarray, den: int, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(exp(-(q + r/den))) for int64 ``q >= 0``, ``0 <= r < den`` (CKS Algorithm 1).

    ``q`` Bernoulli(exp(-1)) trials, then one Bernoulli(exp(-r/den)); all must succeed.
    """
    alive = np.ones(q.shape[0], dtype=bool)
    idx = np.flatnonzero(q > 0)
    left = q.take(idx)
    while idx.size:
        b = _bern_exp_one(idx.size, gen)
        alive[idx] = b
        go = np.flatnonzero(b & (left > 1))
        idx, left = idx.take(go), left.take(go) - 1
    sel = np.flatnonzero(alive)
    alive[sel] = _bern_exp_le1(r.take(sel), den, gen)
    return alive


def _bern_exp_scalar(gamma: Fraction, gen: np.random.Generator) -> bool:
    """One Bernoulli(exp(-γ)) for an arbitrary rational γ >= 0 (Python ints)."""
    q, r = divmod(gamma.numerator, gamma.denominator)
    den = gamma.denominator
    for _ in range(q):  # stops at the first failure: e^-1 survival per trial
        if not _bern_exp_one(1, gen)[0]:
            return False
    k = 1
    while True:
        if den * k <= _LIMIT:
            a = gen.integers(0, den * k) < r
        else:  # Bernoulli(r/den) · Bernoulli(1/k) with Python-int bounds
            a = _uniform_below(den, gen) < r and gen.integers(0, k) == 0
        if not a:
            return k % 2 == 1
        k += 1


def _uniform_below(n: int, gen: np.random.Generator) -> int:
    """A uniform integer on ``{0, ..., n - 1}`` for any Python int ``n >= 1``."""
    if n <= _LIMIT:
        return int(gen.integers(0, n))
    bits = n.bit_length()
    while True:  # rejection from whole 62-bit words
        u = 0
        for _ in range(-(-bits // 62)):
            u = (u << 62) | int(gen.integers(0, 2**62))
        u >>= 62 * (-(-bits // 62)) - bits
        if u < n:
            return u


def bernoulli_exp(gamma, size=None, rng: RNGLike = None) -> np.ndarray:
    """Exact Bernoulli(exp(-γ)) draws for a rational ``γ >= 0``.

    Parameters
    ----------
    gamma : Fraction, int or float
        The rate; a float is used at its exact binary value.
    size, rng
        As in :func:`discrete_laplace`.

    Returns
    -------
    numpy.ndarray of bool

    References
    ----------
    .. [1] Canonne, Kamath, Steinke (2020), Algorithm 1.
    """
    if isinstance(gamma, Rational) and not isinstance(gamma, bool):
        g = Fraction(gamma)
    else:
        f = float(gamma)
        if not math.isfinite(f):
            raise ParameterError(f"gamma must be a finite non-negative number, got {f}.")
        g = Fraction(f)
    if g < 0:
        raise ParameterError(f"gamma must be a finite non-negative number, got {float(g)}.")
    gen = check_rng(rng)
    n = int(np.prod(size)) if size is not None else 1
    q, r = divmod(g.numerator, g.denominator)
    if g.denominator <= _LIMIT and q < 2**62:
        out = _bern_exp(np.full(n, q, np.int64), np.full(n, r, np.int64), g.denominator, gen)
    else:
        out = np.array([_bern_exp_scalar(g, gen) for _ in range(n)], dtype=bool)
    return out[0] if size is None else out.reshape(size)


# ----------------------------------------------------------------------------- discrete Laplace


def _dlap(num: int, den: int, n: int, gen: np.random.Generator) -> np.ndarray:
    """``n`` draws of Lap_Z(num/den) (CKS Algorithm 2 with t = num, s = den).

    Each round draws as many proposals as outputs are still missing; the accepted
    ones are appended in order (they are i.i.d. from the target), so only the
    rejected slots are refilled.  ``U`` uniform below ``num`` kept with probability exp(-U/num), plus
    ``num·V`` with ``V`` geometric (Bernoulli(exp(-1)) successes) is geometric with
    parameter ``1 - exp(-1/num)``; ``Y = X // den`` is geometric with parameter
    ``1 - exp(-den/num)``; a random sign, rejecting ``-0``.  ``U`` and the sign come
    from one uniform draw below ``2 num`` (``U = W >> 1``, sign ``W & 1``), which is
    drawn first although CKS draw the sign last: they are independent of the rest.
    """
    if n <= _SMALL:
        return np.array(_dlap_few(num, den, n, gen), dtype=np.int64)
    parts = []
    need = n
    tq, tr = divmod(num, den)
    while need:
        us = gen.integers(0, 2 * num, need)  # U and the sign B in one draw
        if num > 1:
            us = us.take(np.flatnonzero(_bern_exp_le1(us >> 1, num, gen)))
        u, sign = us >> 1, us & 1
        v = _geometric_e1(us.size, gen)
        # X = u + num·v;  Y = X // den = v·(num // den) + (u + v·(num % den)) // den.
        # u < 2**52, num % den < 2**20: no intermediate overflows while v < 2**42, and v
        # is at most the number of rounds of the loop in _geometric_e1.
        y = v * tq + (u + v * tr) // den if den > 1 else u + v * tq
        z = (y ^ -sign) + sign  # -y where sign = 1 (two's complement)
        bad = (y == 0) & (sign == 1)  # -0: reject
        if bad.any():
            z = z.take(np.flatnonzero(~bad))
        parts.append(z)
        need -= z.size
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _bern_exp_le1_few(num: list, den: int, gen: np.random.Generator) -> list:
    """:func:`_bern_exp_le1` on a list (the same integers() calls)."""
    out, idx, k = [False] * len(num), list(range(len(num))), 1
    while idx:
        if den * k <= _LIMIT:
            ok = [a < b for a, b in zip(gen.integers(0, den * k, len(idx)).tolist(), num)]
        else:
            a, c = gen.integers(0, den, len(idx)).tolist(), gen.integers(0, k, len(idx)).tolist()
            ok = [x < b and y == 0 for x, y, b in zip(a, c, num)]
        for i in idx:
            out[i] = k % 2 == 1
        idx, num, k = [i for i, o in zip(idx, ok) if o], [b for b, o in zip(num, ok) if o], k + 1
    return out


def _bern_exp_one_few(n: int, gen: np.random.Generator) -> list:
    """:func:`_bern_exp_one` on a list: each draw's first failing trial ``K``, read from its ``W``."""
    out = []
    for w in gen.integers(0, _F12, n).tolist():
        k = 2
        while k <= 12 and w % k == 0:  # d_K = (W // (K-1)!) mod K is 0: trial K succeeds
            w, k = w // k, k + 1
        while k >= 13 and gen.integers(0, k) == 0:  # W = 0: fresh trials (in order, as the array code)
            k += 1
        out.append(k % 2 == 1)
    return out


def _dlap_few(num: int, den: int, n: int, gen: np.random.Generator) -> list:
    """:func:`_dlap` on a list for a few slots, where numpy's per-call overhead would dominate: each
    integers() call is the array code's (bound, count, order), so every draw is the same for a seed."""
    out: list = []
    while len(out) < n:
        us = gen.integers(0, 2 * num, n - len(out)).tolist()
        if num > 1:
            us = [w for w, ok in zip(us, _bern_exp_le1_few([w >> 1 for w in us], num, gen)) if ok]
        v, idx = [0] * len(us), list(range(len(us)))
        while idx:  # _geometric_e1 (its first call, for no slot, draws nothing)
            idx = [j for j, b in zip(idx, _bern_exp_one_few(len(idx), gen)) if b]
            for j in idx:
                v[j] += 1
        out += [-y if w & 1 else y for w, vj in zip(us, v) if (y := ((w >> 1) + num * vj) // den) or not w & 1]
    return out


def _geometric_e1(n: int, gen: np.random.Generator) -> np.ndarray:
    """``n`` counts of Bernoulli(exp(-1)) successes before the first failure."""
    b = _bern_exp_one(n, gen)
    v = b.astype(np.int64)
    idx = np.flatnonzero(b)
    while idx.size:
        idx = idx.take(np.flatnonzero(_bern_exp_one(idx.size, gen)))
        v[idx] += 1
    return v


def _integer_draws(size, rng: RNGLike, sampler) -> np.ndarray:
    """``sampler(count, gen)`` (``count`` int64 draws) run on chunks of at most :data:`_CHUNK`
    slots (bounding memory), shaped to ``size`` (an int64 scalar when ``size`` is None)."""
    gen = check_rng(rng)
    n = int(np.prod(size)) if size is not None else 1
    out = np.empty(n, dtype=np.int64)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        out[start:stop] = sampler(stop - start, gen)
    return out[0] if size is None else out.reshape(size)


def discrete_laplace(scale: Scale, size=None, rng: RNGLike = None) -> np.ndarray:
    """Exact discrete Laplace (two-sided geometric) noise on the integers.

    ``P[Z = z] = (1 - p)/(1 + p) · p^|z|`` with ``p = exp(-1/t)`` and
    ``t = rational_scale(scale) >= scale``, sampled exactly with integer arithmetic.
    For integer shifts ``s`` it satisfies ``P[Z = z] <= exp(|s|/t) P[Z = z + s]``,
    which is all the Laplace mechanism's privacy proof uses.

    Parameters
    ----------
    scale : float, int or Fraction
        The scale; positive, at most ``2**32``.  A float is rounded up to a rational
        (see :func:`rational_scale`).
    size : int or tuple, optional
        Output shape.
    rng : Generator, int or None
        See :func:`check_rng`.

    Returns
    -------
    numpy.ndarray of int64 (an int64 scalar when ``size`` is None)

    References
    ----------
    .. [1] Canonne, Kamath, Steinke (2020), Algorithm 2.
    .. [2] Mironov (2012), the floating-point attack that exact sampling avoids.
    """
    t = rational_scale(scale)
    return _integer_draws(size, rng, lambda count, gen: _dlap(t.numerator, t.denominator, count, gen))


def discrete_laplace_tail(scale: Scale, a) -> np.ndarray:
    """``P[Z > a]`` for ``Z ~ DLap(t)``, ``t = rational_scale(scale)``, and real ``a``.

    For ``a >= 0``: ``p^(floor(a)+1) / (1 + p)``; for ``a < 0``: ``1 - P[Z > -a']``
    by symmetry, with ``p = exp(-1/t)``.  Computed in floating point (it is an
    analysis quantity, not a draw), for the rational scale that is actually sampled.

    Parameters
    ----------
    scale : float or fractions.Fraction
        The DLap scale ``t`` (rounded by :func:`rational_scale`).
    a : float or array-like
        Thresholds.

    Returns
    -------
    numpy.ndarray of float
        ``P[Z > a]``, same shape as ``a``.

    References
    ----------
    C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020 (discrete Laplace).
    docs/design.md §3.2.
    """
    t = rational_scale(scale)
    a = np.floor(np.asarray(a, dtype=float))
    log_p = -t.denominator / t.numerator
    log1p_p = math.log1p(math.exp(log_p))
    pos = np.exp((a + 1.0) * log_p - log1p_p)  # valid where a >= 0
    # P[Z > a] for a < 0 equals 1 - P[Z >= -a] = 1 - P[Z > -a - 1]
    neg = 1.0 - np.exp((-a) * log_p - log1p_p)
    return np.where(a >= 0, pos, neg)


# ----------------------------------------------------------------------------- discrete Gaussian


def difference_tail(b1: float, b2: float, a, *, discrete: bool = True) -> np.ndarray:
    """``P[Z1 - Z2 > a]`` for independent ``Z1 ~ DLap(b1)``, ``Z2 ~ DLap(b2)`` (continuous
    Laplace with ``discrete=False``), ``b1 != b2``: the pass probability of a sparse-vector
    test with fresh threshold noise (BTT's, with 2λ and λ).

    Discrete: ``Y = Z1 - Z2`` is integer valued and symmetric.  With ``p_i = exp(-1/b_i)`` and
    ``c_i = (1 - p_i)/(1 + p_i)``, for ``y >= 0``:
    ``P[Y = y] = c1 c2 (A p1^y + B p2^y)``, ``A = 1/(1 - p1 p2) + p2/(p1 - p2)``,
    ``B = 1/(1 - p1 p2) - p1/(p1 - p2)``, so for integer ``a >= -1``
    ``P[Y > a] = c1 c2 (A p1^{a+1}/(1 - p1) + B p2^{a+1}/(1 - p2))``; for ``a <= -1``,
    ``P[Y > a] = 1 - P[Y > -a - 1]``.  Real ``a`` is floored (Y is an integer).
    Continuous: ``t = (b1² e^{-|a|/b1} − b2² e^{-|a|/b2}) / (2(b1² − b2²))`` for ``a >= 0``,
    ``1 − t`` below (docs/design.md §3.2).

    Parameters
    ----------
    b1, b2 : float
        The two scales (different).
    a : float or array-like
        Thresholds.
    discrete : bool, keyword-only

    Returns
    -------
    numpy.ndarray of float
        ``P[Z1 - Z2 > a]``, same shape as ``a``.
    """
    if b1 == b2:
        raise ParameterError("The two noise scales must differ (BTT uses 2λ and λ).")
    if not discrete:
        a = np.asarray(a, dtype=float)
        w = np.abs(a)
        t = (b1**2 * np.exp(-w / b1) - b2**2 * np.exp(-w / b2)) / (2.0 * (b1**2 - b2**2))
        return np.where(a >= 0, t, 1.0 - t)
    p1, p2 = math.exp(-1.0 / b1), math.exp(-1.0 / b2)
    q1, q2 = -math.expm1(-1.0 / b1), -math.expm1(-1.0 / b2)  # 1 - p
    c1c2 = (q1 / (1.0 + p1)) * (q2 / (1.0 + p2))
    one_m_pp = -math.expm1(-1.0 / b1 - 1.0 / b2)
    A = 1.0 / one_m_pp + p2 / (p1 - p2)
    B = 1.0 / one_m_pp - p1 / (p1 - p2)
    a = np.floor(np.asarray(a, dtype=float))

    def upper(j):  # P[Y > j] for integer j >= -1
        return c1c2 * (A * np.exp((j + 1.0) * math.log(p1)) / q1 + B * np.exp((j + 1.0) * math.log(p2)) / q2)

    pos = upper(np.maximum(a, -1.0))
    neg = 1.0 - upper(np.maximum(-a - 1.0, -1.0))
    return np.clip(np.where(a >= 0, pos, neg), 0.0, 1.0)


def _dgauss(sigma2: Fraction, n: int, gen: np.random.Generator) -> np.ndarray:
    """``n`` draws of N_Z(0, σ²) (CKS Algorithm 3)."""
    a, b, t, den = _gauss_params(sigma2)
    bt = b * t
    ymax = (3_000_000_000 - a) // bt  # |u| <= 3e9 so u² < 2**63
    parts = []
    need = n
    while need:
        y = _dlap(t, 1, need, gen)
        ay = np.abs(y)
        fast = ay <= ymax
        if fast.all():
            # γ = (|Y| − σ²/t)² / (2σ²) = (|Y| b t − a)² / (2 a b t²) = u² / den
            u = ay * bt - a
            u2 = u * u
            acc = _bern_exp(u2 // den, u2 % den, den, gen)
        else:  # some |Y| beyond ~45σ: those in Python ints, exactly (in order)
            acc = np.zeros(need, dtype=bool)
            for i in range(need):
                g = Fraction((int(ay[i]) * bt - a) ** 2, den)
                acc[i] = _bern_exp_scalar(g, gen)
        z = y.take(np.flatnonzero(acc))
        parts.append(z)
        need -= z.size
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def discrete_gaussian(sigma: Scale, size=None, rng: RNGLike = None) -> np.ndarray:
    """Exact discrete Gaussian noise ``P[Z = z] ∝ exp(-z²/(2σ²))`` on the integers.

    ``σ² = rational_variance(sigma) >= sigma**2``; proposals are discrete Laplace of
    scale ``t = floor(σ) + 1`` accepted with probability
    ``exp(-(|Y| - σ²/t)² / (2σ²))``, decided exactly with integers.

    Parameters
    ----------
    sigma : float, int or Fraction
        The standard-deviation parameter σ (the variance of the output is slightly
        below σ²); positive, at most 30,000.
    size, rng
        As in :func:`discrete_laplace`.

    Returns
    -------
    numpy.ndarray of int64 (an int64 scalar when ``size`` is None)
        Independent draws of the discrete Gaussian of parameter σ.

    References
    ----------
    .. [1] Canonne, Kamath, Steinke (2020), Algorithm 3.
    """
    v = rational_variance(sigma)
    return _integer_draws(size, rng, lambda count, gen: _dgauss(v, count, gen))


# ----------------------------------------------------------------------------- continuous


def laplace(scale: float, size=None, rng: RNGLike = None) -> np.ndarray:
    """Continuous Laplace noise with density ``exp(-|z|/scale) / (2 scale)`` (floats).

    Parameters
    ----------
    scale : float
        The scale ``b`` of ``Lap(b)``; positive.
    size, rng
        As in :func:`discrete_laplace`.

    Returns
    -------
    numpy.ndarray of float or float
        Noise of shape ``size`` (a float when ``size`` is None).
    """
    return check_rng(rng).laplace(0.0, float(_check_scale(scale)), size)


def gaussian(scale: float, size=None, rng: RNGLike = None) -> np.ndarray:
    """Continuous Gaussian noise ``N(0, scale²)`` (GNMax and Confident-GNMax).

    As PATE 2018 analyses the Gaussian noisy max with continuous noise, these draws are
    floats; like LNMax's Laplace noise they are only compared (a threshold test, an
    argmax) and never released.  The integer-valued alternative is
    :func:`discrete_gaussian`, which satisfies the same Rényi bound for integer shifts
    (Canonne, Kamath, Steinke 2020).

    Parameters
    ----------
    scale : float
        The standard deviation σ > 0.
    size, rng
        As in :func:`discrete_laplace`.

    Returns
    -------
    numpy.ndarray of float
    """
    return check_rng(rng).normal(0.0, float(_check_scale(scale)), size)


def gamma_norm_vector(dimension: int, scale: float, size=None, rng: RNGLike = None) -> np.ndarray:
    """Vectors of ``R^d`` with density ``∝ exp(−‖b‖₂ / scale)`` (objective perturbation's noise).

    In polar coordinates the density ``exp(−r/scale)`` times the sphere's surface
    element ``r^(d−1)`` makes the norm ``Gamma(shape=d, scale)`` and the direction
    uniform on the sphere, independent of each other (Chaudhuri, Monteleoni, Sarwate
    2011, §3): the direction is a standard normal vector divided by its norm.

    Parameters
    ----------
    dimension : int
        The dimension ``d >= 1``.
    scale : float
        The scale of the norm's Gamma distribution (``E‖b‖ = d · scale``); positive.
    size : int, optional
        Number of vectors; None gives one vector of shape ``(d,)``.
    rng : Generator, int or None
        See :func:`check_rng`.

    Returns
    -------
    numpy.ndarray of float
        Shape ``(d,)``, or ``(size, d)``.

    References
    ----------
    K. Chaudhuri, C. Monteleoni, A. D. Sarwate, "Differentially Private Empirical Risk
    Minimization", JMLR 12, 2011.
    """
    if isinstance(dimension, bool) or not isinstance(dimension, (int, np.integer)) or dimension < 1:
        raise ParameterError(f"dimension must be a whole number >= 1, got {dimension!r}.")
    d = int(dimension)
    s = float(_check_scale(scale))
    gen = check_rng(rng)
    n = 1 if size is None else int(size)
    direction = gen.standard_normal((n, d))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    while np.any(norms == 0.0):  # probability zero in exact arithmetic; redraw the rows
        bad = norms[:, 0] == 0.0
        direction[bad] = gen.standard_normal((int(bad.sum()), d))
        norms = np.linalg.norm(direction, axis=1, keepdims=True)
    out = direction / norms * gen.gamma(float(d), s, (n, 1))
    return out[0] if size is None else out
