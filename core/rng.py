"""The library's random generators: which bit generator, and how a seed or a caller's Generator is taken.

:func:`secure_rng` (ChaCha20 keyed from the operating system, the default everywhere),
:func:`check_rng` (None, an int seed for demonstrations and tests, or a Generator used as
is) and :func:`detached_rng` (a child keyed by one fixed draw, for work whose number of
draws must not show in the caller's Generator).  Every noise distribution draws from them
through :mod:`core.noise`, which re-exports them (docs/design.md §6).

References
----------
.. [1] D. J. Bernstein, "ChaCha, a variant of Salsa20", 2008; RFC 8439.
"""

from __future__ import annotations

import secrets
from typing import Union

import numpy as np

from core.errors import ParameterError

__all__ = ["RNGLike", "check_rng", "detached_rng", "secure_rng"]

RNGLike = Union[np.random.Generator, int, np.integer, None]
"""What every ``rng`` parameter takes: a Generator, an int seed or None."""


def secure_rng() -> np.random.Generator:
    """A Generator over ChaCha20 keyed with 256 bits from :mod:`secrets`.

    Returns
    -------
    numpy.random.Generator
        Over ``randomgen.ChaCha(key=..., rounds=20)``.

    """
    from randomgen import ChaCha

    return np.random.Generator(ChaCha(key=secrets.randbits(256), counter=0, rounds=20))


def check_rng(rng: RNGLike = None) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` for ``rng``.

    Parameters
    ----------
    rng : Generator, int or None
        None (default) gives :func:`secure_rng` (ChaCha20 keyed from the operating
        system); an int gives a reproducible PCG64 generator (demonstrations,
        simulations and tests only); a Generator is used as is (its stream is consumed).

    Returns
    -------
    numpy.random.Generator
    """
    if rng is None:
        return secure_rng()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise ParameterError(
        f"rng must be a numpy.random.Generator, an integer seed or None, got {type(rng).__name__}."
    )


def detached_rng(rng: RNGLike = None) -> np.random.Generator:
    """A Generator for work whose number of draws must not show in ``rng`` afterwards.

    A private selection's repetitions draw a number of times that grows with their hidden
    number ``K``; run on the caller's Generator they would leave its later draws depending on
    ``K``.  The returned Generator is keyed from ``rng`` by ONE fixed draw (256 bits), so the
    caller's Generator moves by the same amount whatever the work does with the child, and
    an int seed still reproduces everything.

    Parameters
    ----------
    rng : Generator, int or None
        None gives :func:`secure_rng` (nothing of the caller's to advance); an int or a
        Generator keys a child of the same kind: ChaCha20 under a :func:`secure_rng`, PCG64
        otherwise.

    Returns
    -------
    numpy.random.Generator
    """
    if rng is None:
        return secure_rng()
    gen = check_rng(rng)
    key = int.from_bytes(gen.bytes(32), "little")
    if type(gen.bit_generator).__name__ == "ChaCha":
        from randomgen import ChaCha

        return np.random.Generator(ChaCha(key=key, counter=0, rounds=20))
    return np.random.default_rng(key)
