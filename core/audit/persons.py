"""The audit per person: neighbouring datasets that differ in all the rows of one person.

With a privacy unit declared, the library claims its guarantees for neighbours that
differ in one whole person (docs/design.md §1.2).  This module builds such neighbours on a
generated panel and audits the real releases on them:

:func:`person_vote_pair`
    A panel (persons with 1 to 5 rows) plus one *target* person whose five rows sit on the
    public query, and its neighbour in which the target's rows carry the other label.
    Teachers are trained by :func:`core.ensemble.teachers.train_teachers` on both, with the
    same key/permutation (the partition's randomness does not depend on the data, so the
    audit fixes it and audits the aggregator's noise), and the learner is a 1-nearest-
    neighbour classifier, so every teacher that holds a row of the target votes that row's
    label on the query: the worst case.  ``per_person=True`` trains on chunks of whole
    persons: one teacher changes.  ``per_person=False`` trains on the per-row chunks,
    where the target's rows fall under several teachers: the per-row guarantee then says
    nothing about the target, and the audit shows it.
:func:`person_gnmax_audit`
    GNMax on those votes at the guarantee of one query (the per-row and the per-person
    claim are the same number: what differs is whether it holds for the target).
:func:`person_logistic_audit`
    The DP logistic regression (Gamma-norm objective perturbation) on tiny tables where a
    person of five rows ``(x = 1, y = 1)`` becomes five rows ``(x = 1, y = 0)``: run per
    person with ``rows_per_unit = 5`` (noise for five rows), it passes; run per row (the
    noise of one row on all five), the audit flags it.

Every trial is a real release: the aggregator's noise for GNMax (the teachers are fixed),
the library's own solver for the logistic regression.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.errors import ParameterError

__all__ = ["PersonVotes", "person_vote_pair", "person_gnmax_audit", "person_logistic_tables", "person_logistic_audit",
           "TARGET_ROWS"]

TARGET_ROWS = 5
"""Rows of the target person (the panel's largest)."""


@dataclass(frozen=True)
class PersonVotes:
    """Vote counts on one query for two datasets that differ in one whole person.

    Attributes
    ----------
    counts_a, counts_b : numpy.ndarray of int, shape (1, 2)
        The votes with the target's rows labeled 1, and labeled 0.
    per_person : bool
        Whether the teachers were trained on chunks of whole persons.
    teachers_changed : int
        Teachers whose chunk holds a row of the target (those whose vote can change).
    k : int
    """

    counts_a: np.ndarray
    counts_b: np.ndarray
    per_person: bool
    teachers_changed: int
    k: int


def _panel_with_target(n_persons: int, label: int, rng_seed: int):
    """The panel's features, labels and person IDs, the target's rows (at the query) last."""
    from core.data.datasets import panel

    base = panel(n_persons, d=2, rng=rng_seed)
    X = base.features.to_numpy(dtype=float)
    ids = base.unit.ids[base.unit.codes]
    query = np.zeros((1, 2))
    X = np.vstack([X, np.repeat(query, TARGET_ROWS, axis=0)])
    y = np.concatenate([base.labels, np.full(TARGET_ROWS, int(label))])
    ids = np.concatenate([ids, np.array(["target"] * TARGET_ROWS, dtype=object)])
    return X, y, ids, query


def person_vote_pair(*, k: int = 25, per_person: bool = True, n_persons: int = 300, seed: int = 0) -> PersonVotes:
    """Votes on the query for a panel and its neighbour that differs in the target person only.

    Parameters
    ----------
    k : int
        Teachers.
    per_person : bool
        Train on chunks of whole persons (the unit declared) or on per-row chunks.
    n_persons : int
        Persons of the generated panel besides the target.
    seed : int
        The panel, and the partition's randomness (the same for both datasets).

    Returns
    -------
    PersonVotes
    """
    from sklearn.neighbors import KNeighborsClassifier

    from core.ensemble.teachers import train_teachers

    counts, holders = [], None
    for label in (1, 0):
        X, y, ids, query = _panel_with_target(n_persons, label, seed)
        teachers = train_teachers(X, y, KNeighborsClassifier(n_neighbors=1), int(k), n_classes=2, rng=seed + 1,
                                  units=ids if per_person else None)
        counts.append(np.asarray(teachers.vote_counts(query)))
        if holders is None:
            holders = _target_chunks(X.shape[0], int(k), ids, per_person, seed + 1)
    return PersonVotes(counts[0], counts[1], bool(per_person), holders, int(k))


def _target_chunks(n: int, k: int, ids: np.ndarray, per_person: bool, seed: int) -> int:
    """How many chunks hold a row of the target (the partition redrawn from the same seed)."""
    from core.data.units import privacy_unit, unit_chunks
    from core.noise import check_rng

    target = np.flatnonzero(ids == "target")
    gen = check_rng(seed)
    if per_person:
        chunks = unit_chunks(privacy_unit(ids, "unit"), k, rng=gen)
        return int(np.unique(chunks[target]).size)
    where = np.empty(n, dtype=np.int64)
    for j, part in enumerate(np.array_split(gen.permutation(n), k)):
        where[part] = j
    return int(np.unique(where[target]).size)


def person_gnmax_audit(*, epsilon: float = 1.0, delta: float = 1e-5, per_person: bool = True, k: int = 25,
                       n_trials: int = 200_000, seed: int = 0, rng=None):
    """Audit GNMax on one query between a panel and its neighbour differing in one whole person.

    The noise σ is GNMax's for ``(ε, δ)`` on one answer; the claim checked is that
    guarantee, for the target person.

    Parameters
    ----------
    epsilon, delta : float
    per_person : bool
        Teachers on chunks of whole persons (the claim holds) or per-row chunks (it does not).
    k, seed
        As for :func:`person_vote_pair`.
    n_trials : int
    rng : Generator, int or None
        The audit's noise.

    Returns
    -------
    (core.audit.AuditResult, PersonVotes)
    """
    from core.accounting.rdp import gnmax_guarantee, gnmax_sigma_for_epsilon
    from core.audit.gaussian import GNMaxSampler
    from core.audit.run import audit

    sigma = float(gnmax_sigma_for_epsilon(float(epsilon), n_answers=1, delta=float(delta)))
    claim = gnmax_guarantee(sigma, n_answers=1, delta=float(delta))
    votes = person_vote_pair(k=k, per_person=per_person, seed=seed)
    result = audit(GNMaxSampler(sigma, float(delta)), votes.counts_a, votes.counts_b,
                   claimed_epsilon=float(claim.epsilon), claimed_delta=float(claim.delta), n_trials=int(n_trials),
                   rng=rng, name=f"GNMax, one person's rows changed ({'per-person' if per_person else 'per-row'} chunks)")
    return result, votes


_OTHERS_X = np.array([[0.5], [0.0], [0.2], [0.8], [0.3], [0.0]])
_OTHERS_Y = np.array([0, 1, 0, 1, 0, 1])
_OTHERS_ID = np.array(["a", "a", "b", "c", "c", "c"], dtype=object)


def person_logistic_tables(*, per_person: bool = True):
    """Two tiny tables (norm bound ``R = 1``) differing in all the rows of one person.

    The target has five rows ``(x = 1, y = 1)``, in the neighbour ``(x = 1, y = 0)``; three
    other persons have one to three rows.

    Parameters
    ----------
    per_person : bool
        Declare the unit (the rows carry their persons' IDs) or not (each row a unit).

    Returns
    -------
    (PrivateRows, PrivateRows)
    """
    from core.mechanisms.dp_training import rows_from_arrays

    out = []
    for label in (1, 0):
        X = np.vstack([_OTHERS_X, np.ones((TARGET_ROWS, 1))])
        y = np.concatenate([_OTHERS_Y, np.full(TARGET_ROWS, label)])
        ids = np.concatenate([_OTHERS_ID, np.array(["target"] * TARGET_ROWS, dtype=object)])
        out.append(rows_from_arrays(X, y, np.array([[0.0], [1.0]]), n_classes=2, data_norm=1.0,
                                    bounds="declared (audit)", units=ids if per_person else None))
    return tuple(out)


class _LogisticSlopes:
    def __init__(self, epsilon: float, C: float, rows_per_unit: int):
        self.epsilon, self.C, self.rows_per_unit = float(epsilon), float(C), int(rows_per_unit)

    def __call__(self, rows, n_trials: int, rng) -> np.ndarray:
        from core.mechanisms.dp_training import dp_logistic_coefficients

        return dp_logistic_coefficients(rows, epsilon=self.epsilon, delta=0.0, C=self.C, perturbation="gamma",
                                        size=int(n_trials), rows_per_unit=self.rows_per_unit, rng=rng)[:, 0, 0]


def person_logistic_audit(*, epsilon: float = 2.0, C: float = 0.1, per_person: bool = True,
                          n_trials: int = 50_000, rng=None):
    """Audit the DP logistic regression (pure ε) on tables differing in one whole person.

    Per person the route runs with ``rows_per_unit = 5`` (the target's five rows all used,
    the noise for five); per row it runs with the noise of one row on all the rows.  The
    claim checked is ε, for the target person.

    Parameters
    ----------
    epsilon : float
    C : float
    per_person : bool
    n_trials : int
    rng : Generator, int or None

    Returns
    -------
    core.audit.AuditResult
    """
    from core.audit.run import audit

    if not epsilon > 0:
        raise ParameterError(f"epsilon must be > 0, got {epsilon!r}.")
    a, b = person_logistic_tables(per_person=per_person)
    sampler = _LogisticSlopes(epsilon, C, TARGET_ROWS if per_person else 1)
    return audit(sampler, a, b, claimed_epsilon=float(epsilon), claimed_delta=0.0, n_trials=int(n_trials), rng=rng,
                 name=f"DP logistic regression, one person's rows changed ({'per person' if per_person else 'per row'})")
