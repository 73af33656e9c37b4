"""A public model of teacher quality and votes simulated from it (docs/design.md §10).

A plan predicts what a labeling run would release without reading the private votes:
it simulates votes from an *assumed* :class:`TeacherQuality` (a public input, like
``n``, ``m`` and ``k``) and runs the real registered mechanisms on them
(:mod:`core.plan.engine`).

The model: each public query is *easy* (probability ``1 - hard_share``) or *hard*.  On
an easy query each of the ``k`` teachers votes for the true class with probability
``accuracy``; on a hard query with probability ``hard_accuracy`` (or, with
``hard_spread``, a probability drawn uniformly from ``hard_accuracy ± hard_spread`` per
query); a wrong vote goes to
one of the other classes uniformly; teachers vote independently given the query's
difficulty.  The hard share models what one accuracy cannot: queries on which the
teachers split, which is where noisy aggregators abstain or err.  The true classes are
drawn from ``class_shares`` (default: balanced).  With ``rows`` set, the accuracies are
those of a teacher trained on ``rows`` private rows, and a teacher trained on ``r``
rows has its excess error over the floor scaled by ``sqrt(rows / r)`` (the usual
``1/sqrt(n)`` learning rate; :func:`TeacherQuality.at`), so the plan responds to ``n``
and ``k``; without ``rows`` the accuracies hold for every ``k``.

References
----------
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018 (teacher agreement and hard queries).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
import numpy as np

from core.errors import ParameterError

__all__ = ["TeacherQuality", "SimulatedVotes", "simulate_votes"]


@dataclass(frozen=True)
class TeacherQuality:
    """An assumed, PUBLIC description of how well the teachers vote (never read from private rows).

    Attributes
    ----------
    accuracy : float
        A teacher's chance of voting for the true class on an easy query.
    hard_share : float
        The share of queries that are hard (the teachers split).
    hard_accuracy : float
        A teacher's chance of voting for the true class on a hard query.
    class_shares : tuple of float or None
        The assumed share of each class among the public queries (None: balanced).  Its
        largest entry is the share a labeler that always answers the majority class gets
        right (:attr:`majority_share`).
    rows : int or None
        The private rows per teacher at which ``accuracy`` and ``hard_accuracy`` hold
        (None: they hold for any number of teachers).
    hard_spread : float
        On a hard query the teachers' accuracy is drawn uniformly from ``hard_accuracy ±
        hard_spread`` (clipped to [0, 1]): hard queries of every difficulty, down to an
        even split (0: every hard query alike).  Mechanisms that stop at the first few
        near-ties (BTT) depend on that spread.
    """

    accuracy: float = 0.85
    hard_share: float = 0.2
    hard_accuracy: float = 0.55
    class_shares: tuple[float, ...] | None = None
    rows: int | None = None
    hard_spread: float = 0.0

    def __post_init__(self) -> None:
        for name in ("accuracy", "hard_accuracy", "hard_share", "hard_spread"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ParameterError(f"{name} must be a share between 0 and 1, got {v!r}.")
        if self.class_shares is not None:
            s = np.asarray(self.class_shares, dtype=float)
            if s.ndim != 1 or s.size < 2 or np.any(~np.isfinite(s)) or np.any(s < 0) or abs(s.sum() - 1.0) > 1e-6:
                raise ParameterError("class_shares must be at least two non-negative shares that sum to 1.")
            object.__setattr__(self, "class_shares", tuple(float(x) for x in s))
        if self.rows is not None and (int(self.rows) != self.rows or self.rows < 1):
            raise ParameterError(f"rows must be a whole number of private rows per teacher, got {self.rows!r}.")

    def shares(self, n_classes: int) -> np.ndarray:
        """The class shares as an array of ``n_classes`` entries.

        Parameters
        ----------
        n_classes : int

        Returns
        -------
        numpy.ndarray of float
        """
        if self.class_shares is None:
            return np.full(int(n_classes), 1.0 / int(n_classes))
        if len(self.class_shares) != int(n_classes):
            raise ParameterError(f"class_shares gives {len(self.class_shares)} classes, the job has {n_classes}.")
        return np.asarray(self.class_shares, dtype=float)

    def majority_share(self, n_classes: int) -> float:
        """The share of queries in the most common class (always answering it gets this right).

        Parameters
        ----------
        n_classes : int
            The task's number of classes (public).

        Returns
        -------
        float
        """
        return float(self.shares(n_classes).max())

    def at(self, rows_per_teacher: float, n_classes: int = 2) -> "TeacherQuality":
        """The quality of a teacher trained on ``rows_per_teacher`` private rows.

        With :attr:`rows` set, each accuracy's excess over chance ``1/n_classes`` is kept
        and its error below 1 is scaled by ``sqrt(rows / rows_per_teacher)``, then clipped to
        ``[1/n_classes, 1]``; without it, ``self``.

        Parameters
        ----------
        rows_per_teacher : float
        n_classes : int

        Returns
        -------
        TeacherQuality
        """
        if self.rows is None:
            return self
        r = max(float(rows_per_teacher), 1.0)
        floor = 1.0 / int(n_classes)
        scale = math.sqrt(self.rows / r)

        def move(a: float) -> float:
            if a <= floor:
                return a
            return float(min(1.0, max(floor, 1.0 - (1.0 - a) * scale)))

        return replace(self, accuracy=move(self.accuracy), hard_accuracy=move(self.hard_accuracy), rows=None)

    def describe(self) -> str:
        """The assumption in words.

        Returns
        -------
        str
        """
        spread = f" ± {self.hard_spread:.0%}" if self.hard_spread > 0 else ""
        text = (f"teachers right with probability {self.accuracy:.0%} on easy queries and "
                f"{self.hard_accuracy:.0%}{spread} on the {self.hard_share:.0%} of queries that are hard")
        if self.class_shares is not None:
            text += f"; class shares {', '.join(f'{s:.0%}' for s in self.class_shares)}"
        if self.rows is not None:
            text += f" (at {self.rows} private rows per teacher)"
        return text


@dataclass(frozen=True)
class SimulatedVotes:
    """Votes simulated under a :class:`TeacherQuality` (public: no private row is read).

    Attributes
    ----------
    counts : numpy.ndarray of int64, shape (m, n_classes) or (draws, m, n_classes)
        Vote counts; every row sums to ``k``.
    truth : numpy.ndarray of int64, shape (m,) or (draws, m)
        The simulated true class of each query.
    hard : numpy.ndarray of bool
        Which queries were hard.
    """

    counts: np.ndarray
    truth: np.ndarray
    hard: np.ndarray

    def scores(self) -> np.ndarray:
        """Per-teacher 0/1 scores for the positive class (binary only; a mechanism reading scores).

        Returns
        -------
        numpy.ndarray of float, shape (..., m, k)
            Teacher ``j`` scores 1 when ``j < counts[..., 1]`` (the teachers are exchangeable).
        """
        if self.counts.shape[-1] != 2:
            raise ParameterError("teacher scores are for two classes.")
        k = int(self.counts[(0,) * (self.counts.ndim - 1)].sum())
        return (np.arange(k) < self.counts[..., 1:2]).astype(float)


def simulate_votes(*, m: int, k: int, n_classes: int, quality: TeacherQuality, rng=None,
                   draws: int | None = None, n: int | None = None) -> SimulatedVotes:
    """Simulate ``k`` teachers' votes on ``m`` queries under an assumed teacher quality.

    Parameters
    ----------
    m : int
        Number of public queries.
    k : int
        Number of teachers.
    n_classes : int
        Number of classes.
    quality : TeacherQuality
        The public assumption.
    rng : numpy.random.Generator, int or None
        Randomness of the simulation (not a release: no private data is involved).
    draws : int, optional
        Simulate ``draws`` independent vote sets at once (arrays gain a leading axis).
    n : int, optional
        Private rows: with ``quality.rows`` set, the accuracies are those at ``n // k``
        rows per teacher (:meth:`TeacherQuality.at`).

    Returns
    -------
    SimulatedVotes
    """
    m, k, c = int(m), int(k), int(n_classes)
    if m < 1 or k < 1 or c < 2:
        raise ParameterError(f"simulate_votes needs m >= 1, k >= 1 and at least two classes, got m={m}, k={k}, {c} classes.")
    if not isinstance(quality, TeacherQuality):
        raise ParameterError("quality must be a core.plan.TeacherQuality.")
    if n is not None:
        quality = quality.at(int(n) // k, c)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    shape = (m,) if draws is None else (int(draws), m)
    truth = gen.choice(c, size=shape, p=quality.shares(c)).astype(np.int64)
    hard = gen.random(shape) < quality.hard_share
    if quality.hard_spread > 0:
        u = gen.random(shape)
        p_hard = np.clip(quality.hard_accuracy + quality.hard_spread * (2.0 * u - 1.0), 0.0, 1.0)
    else:
        p_hard = quality.hard_accuracy
    p = np.where(hard, p_hard, quality.accuracy)
    right = gen.binomial(k, p).astype(np.int64)
    wrong_votes = gen.multinomial(k - right, np.full(c - 1, 1.0 / (c - 1))).astype(np.int64) if c > 2 else (k - right)[..., None]
    counts = np.empty(shape + (c,), dtype=np.int64)
    # The wrong votes fill the classes other than the truth, in order.
    others = (truth[..., None] + 1 + np.arange(c - 1)) % c
    np.put_along_axis(counts, others, wrong_votes, axis=-1)
    np.put_along_axis(counts, truth[..., None], right[..., None], axis=-1)
    return SimulatedVotes(counts=counts, truth=truth, hard=hard)

