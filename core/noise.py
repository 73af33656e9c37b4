"""All randomness of the library comes from here.

One module produces every noise draw, so that the choice of distribution, the
generator and its seeding are decided in one place.

Distributions
-------------
``discrete_laplace(scale, size, rng)``
    The two-sided geometric distribution ``P[Z = z] ∝ exp(-|z| / scale)`` on the
    integers, drawn as the difference of two i.i.d. geometric variables.  It is used
    for every *integer-valued* noisy quantity: noisy distances to instability and
    noisy thresholds (BTT sparse vector, ``A_stab``, the composition baseline).  An
    integer draw added to an integer has no floating-point representation leak
    (Mironov 2012), and the Laplace privacy proofs carry over unchanged because they
    only shift the noise by whole numbers.

``laplace(scale, size, rng)``
    The continuous Laplace distribution.  It remains in two places, both documented:
    PATE's LNMax (noise on vote counts, as analysed by PATE's moments accountant,
    which is stated for continuous Laplace noise) and the Remark-1 estimate of the
    teachers' error rate.  Its output is only ever compared (argmax), never released.

Generators
----------
Every function takes ``rng``: a :class:`numpy.random.Generator`, an int seed, or None.
None gives a fresh generator seeded from the operating system's entropy, which is
the default everywhere.  A fixed seed is a demonstration option ("reproducible, not
for production") and the library never writes a seed to an export.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from core.errors import ParameterError

__all__ = ["RNGLike", "check_rng", "laplace", "discrete_laplace", "discrete_laplace_tail"]

RNGLike = Union[np.random.Generator, int, np.integer, None]


def check_rng(rng: RNGLike = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    Parameters
    ----------
    rng : Generator, int or None
        None (default) gives a generator seeded from the operating system; an int
        gives a reproducible generator (demonstrations and tests only); a Generator
        is used as is (its stream is consumed).

    Returns
    -------
    numpy.random.Generator
    """
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise ParameterError(
        f"rng must be a numpy.random.Generator, an integer seed or None, got {type(rng).__name__}."
    )


def _check_scale(scale: float) -> float:
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ParameterError(f"Noise scale must be a positive finite number, got {scale}.")
    return scale


def laplace(scale: float, size=None, rng: RNGLike = None) -> np.ndarray:
    """Continuous Laplace noise with density ``exp(-|z|/scale) / (2 scale)``.

    Parameters
    ----------
    scale : float
        The scale ``b`` of ``Lap(b)``; positive.
    size : int or tuple, optional
        Output shape.
    rng : Generator, int or None
        See :func:`check_rng`.
    """
    return check_rng(rng).laplace(0.0, _check_scale(scale), size)


def discrete_laplace(scale: float, size=None, rng: RNGLike = None) -> np.ndarray:
    """Discrete Laplace (two-sided geometric) noise on the integers.

    ``P[Z = z] = (1 - p) / (1 + p) · p^|z|`` with ``p = exp(-1/scale)``, drawn as
    ``G1 - G2`` with ``G1, G2`` i.i.d. geometric on {0, 1, ...} with success
    probability ``1 - p``.  For integer shifts ``s`` it satisfies
    ``P[Z = z] <= exp(|s|/scale) P[Z = z + s]``, which is all the Laplace
    mechanism's privacy proof uses.

    Parameters
    ----------
    scale : float
        The scale ``t``; positive.
    size : int or tuple, optional
        Output shape.
    rng : Generator, int or None
        See :func:`check_rng`.

    Returns
    -------
    numpy.ndarray of int64
    """
    scale = _check_scale(scale)
    gen = check_rng(rng)
    q = -math.expm1(-1.0 / scale)  # success probability 1 - p, accurate for large scale
    # numpy's geometric counts trials (support 1, 2, ...); the difference is unchanged.
    g1 = gen.geometric(q, size)
    g2 = gen.geometric(q, size)
    return np.asarray(g1, dtype=np.int64) - np.asarray(g2, dtype=np.int64)


def discrete_laplace_tail(scale: float, a) -> np.ndarray:
    """``P[Z > a]`` for ``Z ~ DLap(scale)`` and integer (or real) ``a``.

    For ``a >= 0``: ``p^(floor(a)+1) / (1 + p)``; for ``a < 0``: ``1 - P[Z > -a']``
    by symmetry, with ``p = exp(-1/scale)``.
    """
    scale = _check_scale(scale)
    a = np.floor(np.asarray(a, dtype=float))
    log_p = -1.0 / scale
    log1p_p = math.log1p(math.exp(log_p))
    pos = np.exp((a + 1.0) * log_p - log1p_p)  # valid where a >= 0
    # P[Z > a] for a < 0 equals 1 - P[Z >= -a] = 1 - P[Z > -a - 1]
    neg = 1.0 - np.exp((-a) * log_p - log1p_p)
    return np.where(a >= 0, pos, neg)
