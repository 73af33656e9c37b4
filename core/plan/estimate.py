"""A cheap private estimate of teacher quality, to replace the plan's assumption (docs/design.md §10.2).

The plan's teacher quality is an assumption.  On a real job the data owner may instead
spend a small, stated ε to estimate it from the real votes: :func:`estimate_quality`
releases the teachers' mean agreement -- the mean over the ``m`` public queries of the
share of teachers voting for the plurality class -- with exact discrete Laplace noise.

Sensitivity (replace-one adjacency, docs/design.md §1; per person, §1.2, where a person's
rows all lie in one chunk): one private row (person) lies in one teacher's chunk; replacing it can change that teacher's vote on every query, which
moves each query's top count by at most 1 (one class loses a vote, another gains it).
The integer sum of the top counts ``S = Σ_i max_c n_c(x_i)`` therefore moves by at most
``m``, and ``S + DLap(m/ε)`` is ε-DP (pure); the released mean agreement
``(S + noise)/(m k)`` is a post-processing (its error has standard deviation about
``√2/(k ε)``: 0.006 for k = 250 at ε = 1).  It is a run on the private data: priced
before (:func:`estimate_price`) and charged to the ledger like any other.

The estimate is then mapped to a :class:`~core.plan.TeacherQuality`: the hard share and
hard accuracy stay as assumed, and the easy accuracy is solved so that the model's
expected agreement equals the estimate (agreement is not accuracy: a plurality that is
wrong agrees too, so this is a planning estimate, said so wherever it is shown).

The majority share that a useful run must beat is an assumption too; with
:func:`estimate_class_shares` it can instead be counted privately: the private rows' class
histogram with discrete Laplace noise of scale ``2/ε`` per class (replacing one row moves
one class count down by 1 and another up by 1: L1 sensitivity 2), ε-DP, charged like any
run.  With a privacy unit it counts one row of each person, chosen at random without
reading it (:func:`core.data.units.bound_rows`): replacing a person then moves the
histogram by 2 as well.

References
----------
.. [CKS20] C. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy.
   NeurIPS 2020 (the discrete Laplace sampler of :mod:`core.noise`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from core.errors import ParameterError
from core.plan.quality import TeacherQuality

__all__ = ["QualityEstimate", "estimate_price", "estimate_quality", "estimate_class_shares"]


@dataclass(frozen=True)
class QualityEstimate:
    """A released estimate of the teachers' agreement and the quality it implies.

    Attributes
    ----------
    agreement : float
        The noisy mean share of teachers voting for the plurality class (clipped to [1/C, 1]).
    quality : TeacherQuality
        The plan's assumption with its easy accuracy set from ``agreement``.
    epsilon : float
        What the estimate cost (pure ε-DP; δ = 0).
    noise_sd : float
        The standard deviation of ``agreement``'s noise, about ``√2/(k ε)``.
    """

    agreement: float
    quality: TeacherQuality
    epsilon: float
    noise_sd: float


def estimate_price(*, epsilon: float, m: int, k: int):
    """The estimate's privacy map as a ledger entry: one pure ε-DP step.

    Parameters
    ----------
    epsilon : float
    m, k : int
        Queries and teachers (public; they set the noise, not the price).

    Returns
    -------
    core.ledger.entries.PureDPEntry
    """
    from core.ledger.entries import PureDPEntry
    from core.validation import check_epsilon

    epsilon = check_epsilon(epsilon)
    return PureDPEntry.uniform(eps_step=epsilon, n_steps=1, mechanism="quality-estimate",
                               description=f"noisy mean teacher agreement over {int(m)} queries ({int(k)} teachers), "
                                           "sum of top counts + discrete Laplace(m/ε)",
                               params={"epsilon": epsilon, "m": int(m), "k": int(k)})


def _easy_accuracy(agreement: float, assumed: TeacherQuality) -> float:
    h = assumed.hard_share
    hard_agree = max(assumed.hard_accuracy, 1.0 - assumed.hard_accuracy)
    if h >= 1.0:
        return assumed.accuracy
    return float(np.clip((agreement - h * hard_agree) / (1.0 - h), 0.5, 1.0))


def estimate_quality(counts, *, epsilon: float, assumed: TeacherQuality | None = None, ledger=None,
                     rng=None) -> QualityEstimate:
    """Estimate the teachers' agreement privately (ε-DP) and the plan's quality from it.

    Parameters
    ----------
    counts : array-like of int, shape (m, n_classes)
        The real vote counts (private).
    epsilon : float
        The estimate's cost.
    assumed : TeacherQuality, optional
        The assumption whose hard share, hard accuracy and class shares are kept.
    ledger : core.ledger.PrivacyLedger, optional
        Charged with :func:`estimate_price` BEFORE the estimate (refused past its budget).
    rng : Generator, int or None

    Returns
    -------
    QualityEstimate
    """
    from core import noise
    from core.validation import check_counts, check_epsilon

    epsilon = check_epsilon(epsilon)
    counts = check_counts(counts)
    m, c = counts.shape
    k = int(counts[0].sum())
    if k < 1:
        raise ParameterError("the votes hold no teacher.")
    if ledger is not None:
        ledger.charge(estimate_price(epsilon=epsilon, m=m, k=k))
    total = int(counts.max(axis=1).sum())
    noisy = total + int(noise.discrete_laplace(Fraction(m) / Fraction(epsilon), rng=rng))
    agreement = float(np.clip(noisy / (m * k), 1.0 / c, 1.0))
    assumed = TeacherQuality() if assumed is None else assumed
    quality = replace(assumed, accuracy=_easy_accuracy(agreement, assumed))
    return QualityEstimate(agreement=agreement, quality=quality, epsilon=epsilon, noise_sd=float(np.sqrt(2.0) / (k * epsilon)))


def estimate_class_shares(labels, *, n_classes: int, epsilon: float, ledger=None, units=None, rng=None,
                          rows=None) -> np.ndarray:
    """The private rows' class shares, counted privately (ε-DP): a priced private estimate.

    Releases every class count plus discrete Laplace noise of scale ``2/ε`` (the histogram's
    L1 sensitivity under replace-one adjacency is 2), clipped at 0, as shares.

    Parameters
    ----------
    labels : array-like of int
        The private rows' class ids (private).
    n_classes : int
    epsilon : float
    ledger : core.ledger.PrivacyLedger, optional
        Charged with one pure ε step BEFORE the count (refused past its budget).
    units : core.data.units.PrivacyUnit or array-like, optional
        The privacy unit of each row (persons): one row of each person is counted.
    rng : Generator, int or None
    rows : array-like of int, optional (keyword-only)
        Each row's number in the file, under ``missing="drop"`` (:attr:`core.data.Table.rows`):
        the row counted per person is then chosen by a keyed hash of it
        (:func:`core.data.units.bound_rows`), stable when the drop removes a row.

    Returns
    -------
    numpy.ndarray of float, shape (n_classes,)
        Shares summing to 1 (uniform if every noisy count is 0).
    """
    from core import noise
    from core.ledger.entries import PureDPEntry
    from core.validation import check_epsilon, check_integer

    epsilon = check_epsilon(epsilon)
    n_classes = check_integer(n_classes, "n_classes", minimum=2)
    y = np.asarray(labels, dtype=np.int64).ravel()
    if y.size == 0 or y.min() < 0 or y.max() >= n_classes:
        raise ParameterError(f"labels must be class ids in 0 .. {n_classes - 1}.")
    if ledger is not None:
        ledger.charge(PureDPEntry.uniform(eps_step=epsilon, n_steps=1, mechanism="class-shares-estimate",
                                          description="private class histogram + discrete Laplace(2/ε) per class",
                                          params={"epsilon": epsilon, "n_classes": n_classes}))
    gen = noise.check_rng(rng)
    if units is not None:
        from core.data.units import bound_rows

        y = y[bound_rows(units, 1, rng=gen, rows=rows)]
    counts = np.bincount(y, minlength=n_classes).astype(np.int64)
    noisy = np.maximum(counts + noise.discrete_laplace(Fraction(2) / Fraction(epsilon), size=n_classes, rng=gen), 0)
    total = float(noisy.sum())
    return np.full(n_classes, 1.0 / n_classes) if total == 0 else noisy / total
