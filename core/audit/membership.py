"""A leak to start the story: a loss-threshold membership-inference attack (NON-PRIVATE teaching).

The attacker sees a fitted model and a row with its label, and guesses "this row was in
the training data" when the model's loss on it is small (Yeom et al. 2018).  Run on rows
known to be members (trained on) and rows known not to be (held out), every threshold on
the loss gives a true-positive rate (members caught) and a false-positive rate
(non-members accused): the ROC curve.  The attacker's *advantage* is the largest
``TPR − FPR`` over thresholds, the two-sample Kolmogorov–Smirnov statistic of the losses:
0 for a model that reveals nothing about membership, 1 for one that reveals it exactly.

How far from 0 an advantage must be before it says anything: if members' and
non-members' losses had the same distribution, each empirical distribution function would
lie within ``a_i = √(log(4/f)/(2 n_i))`` of the common one with probability ≥ 1 − f/2
(Dvoretzky–Kiefer–Wolfowitz with Massart's constant), so the measured advantage exceeds
``a_1 + a_2`` with probability at most f (:func:`null_tolerance`).

A differentially private release bounds every attack: an (ε, δ)-DP model has advantage at
most ``(e^ε − 1 + 2δ)/(e^ε + 1)`` (the hypothesis-testing region of (ε, δ)-DP,
:func:`dp_advantage_bound`).

Everything here reads private rows with their labels: a NON-PRIVATE teaching view for
teaching data only, never exported.

References
----------
.. [YGFJ18] S. Yeom, I. Giacomelli, M. Fredrikson, S. Jha. Privacy Risk in Machine Learning:
   Analyzing the Connection to Overfitting. IEEE CSF 2018.
.. [SSSS17] R. Shokri, M. Stronati, C. Song, V. Shmatikov. Membership Inference Attacks
   Against Machine Learning Models. IEEE S&P 2017.
.. [KOV15] P. Kairouz, S. Oh, P. Viswanath. The Composition Theorem for Differential Privacy.
   ICML 2015 (the hypothesis-testing region).
.. [Mas90] P. Massart. The Tight Constant in the Dvoretzky–Kiefer–Wolfowitz Inequality.
   Annals of Probability 1990.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core.errors import ParameterError

__all__ = ["LeakStory", "leak_story", "MembershipAttack", "loss_scores", "membership_attack", "null_tolerance", "dp_advantage_bound"]

_CLIP = 1e-6


def loss_scores(model, X, y) -> np.ndarray:
    """The model's loss on each row: cross-entropy −log p(y | x), or 0/1 loss without probabilities.

    Probabilities are clipped to ``[1e-6, 1]`` so that a confident mistake has a finite
    loss of ``log(1e6) ≈ 13.8``.

    Parameters
    ----------
    model : fitted estimator
        With ``predict_proba`` and ``classes_`` (else ``predict``).
    X : array-like or DataFrame
        Rows in the model's input format.
    y : array-like
        Their labels.

    Returns
    -------
    ndarray of float, shape (n,)
    """
    y = np.asarray(y)
    if hasattr(model, "predict_proba") and hasattr(model, "classes_"):
        try:
            proba = np.asarray(model.predict_proba(X), dtype=float)
        except (AttributeError, NotImplementedError):
            proba = None
        if proba is not None:
            classes = list(np.asarray(model.classes_))
            index = np.array([classes.index(v) if v in classes else -1 for v in y.tolist()])
            p = np.where(index >= 0, proba[np.arange(len(y)), np.maximum(index, 0)], 0.0)
            return -np.log(np.clip(p, _CLIP, 1.0))
    return (np.asarray(model.predict(X)) != y).astype(float)


def null_tolerance(n_members: int, n_nonmembers: int, fail: float = 1e-6) -> float:
    """The advantage a model that reveals nothing exceeds with probability at most ``fail``.

    ``√(log(4/f)/(2 n_1)) + √(log(4/f)/(2 n_2))`` (module docstring).

    Parameters
    ----------
    n_members, n_nonmembers : int
    fail : float

    Returns
    -------
    float
    """
    if n_members < 1 or n_nonmembers < 1 or not 0.0 < fail < 1.0:
        raise ParameterError("null_tolerance needs at least one row on each side and 0 < fail < 1.")
    c = math.log(4.0 / fail) / 2.0
    return math.sqrt(c / n_members) + math.sqrt(c / n_nonmembers)


def dp_advantage_bound(epsilon: float, delta: float = 0.0) -> float:
    """The largest advantage ``TPR − FPR`` of any attack on an (ε, δ)-DP release.

    ``(e^ε − 1 + 2δ)/(e^ε + 1)``, capped at 1.

    Parameters
    ----------
    epsilon : float
    delta : float

    Returns
    -------
    float
    """
    if epsilon < 0 or not 0.0 <= delta <= 1.0:
        raise ParameterError("dp_advantage_bound needs ε ≥ 0 and δ in [0, 1].")
    if epsilon > 700:
        return 1.0
    e = math.exp(epsilon)
    return min(1.0, (e - 1.0 + 2.0 * delta) / (e + 1.0))


@dataclass(frozen=True)
class MembershipAttack:
    """The loss-threshold attack on one model.

    Attributes
    ----------
    advantage : float
        ``max_t (TPR − FPR)``.
    auc : float
        Area under the ROC curve (0.5: guessing).
    fpr, tpr : ndarray
        The ROC curve (from (0, 0) to (1, 1)).
    threshold : float
        The loss threshold reaching the advantage (guess "member" at or below it).
    member_loss, nonmember_loss : float
        Mean losses.
    n_members, n_nonmembers : int
    tolerance : float
        :func:`null_tolerance` at ``fail``.
    fail : float
    """

    advantage: float
    auc: float
    fpr: np.ndarray
    tpr: np.ndarray
    threshold: float
    member_loss: float
    nonmember_loss: float
    n_members: int
    n_nonmembers: int
    tolerance: float
    fail: float

    @property
    def leaks(self) -> bool:
        """Whether the advantage is clearly above what a model revealing nothing shows."""
        return self.advantage > self.tolerance


def membership_attack(model, members, nonmembers, *, max_rows: int | None = 2000, fail: float = 1e-6,
                      rng=None) -> MembershipAttack:
    """Run the loss-threshold attack on rows known to be members and rows known not to be.

    Parameters
    ----------
    model : fitted estimator
    members, nonmembers : tuple (X, y)
        Rows trained on, rows held out (X in the model's input format).
    max_rows : int or None
        Use at most this many rows of each (a uniform sample; None: all).
    fail : float
        False-alarm probability of :attr:`MembershipAttack.tolerance`.
    rng : Generator, int or None
        Randomness of the sample (not a release).

    Returns
    -------
    MembershipAttack
    """
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)

    def sample(rows):
        X, y = rows
        n = len(y)
        if n == 0:
            raise ParameterError("The membership attack needs at least one row on each side.")
        if max_rows is None or n <= max_rows:
            return X, np.asarray(y)
        idx = np.sort(gen.choice(n, size=max_rows, replace=False))
        X = X.iloc[idx] if hasattr(X, "iloc") else np.asarray(X)[idx]
        return X, np.asarray(y)[idx]

    loss_in = loss_scores(model, *sample(members))
    loss_out = loss_scores(model, *sample(nonmembers))
    n1, n2 = len(loss_in), len(loss_out)
    # Guess "member" when loss <= t: TPR(t) = share of members at or below t.
    thresholds = np.unique(np.concatenate([loss_in, loss_out]))
    tpr = np.searchsorted(np.sort(loss_in), thresholds, side="right") / n1
    fpr = np.searchsorted(np.sort(loss_out), thresholds, side="right") / n2
    fpr = np.concatenate([[0.0], fpr])
    tpr = np.concatenate([[0.0], tpr])
    gap = tpr - fpr
    best = int(np.argmax(gap))
    auc = float(np.trapezoid(tpr, fpr))
    return MembershipAttack(
        advantage=float(max(0.0, gap[best])),
        auc=auc,
        fpr=fpr,
        tpr=tpr,
        threshold=float(thresholds[best - 1]) if best > 0 else float("-inf"),
        member_loss=float(loss_in.mean()),
        nonmember_loss=float(loss_out.mean()),
        n_members=n1,
        n_nonmembers=n2,
        tolerance=null_tolerance(n1, n2, fail),
        fail=float(fail),
    )


@dataclass(frozen=True)
class LeakStory:
    """The same attack on a non-private model, on one teacher and on the published student.

    Attributes
    ----------
    nonprivate : MembershipAttack
        A model fitted to all private rows (members: private rows; non-members: held-out
        and public rows).
    teacher : MembershipAttack
        One teacher fitted to its chunk of ``n // k`` private rows, as in the ensemble
        (members: its chunk; non-members: held-out and public rows).
    student : MembershipAttack or None
        The published student (members: private rows; non-members: held out); None
        without a student.
    chunk : int
        The teacher's rows.
    """

    nonprivate: MembershipAttack
    teacher: MembershipAttack
    student: MembershipAttack | None
    chunk: int


def leak_story(private, held_out, *, learner: str, params=None, k: int, student=None, public=None,
               max_rows: int = 1000, fail: float = 1e-6, rng=None) -> LeakStory:
    """Fit a non-private model and one teacher on the private rows and attack them and the student.

    NON-PRIVATE teaching view: it reads the private rows and their labels.

    Parameters
    ----------
    private, held_out : core.data.Table
        The private rows, and labeled rows that no model was trained on.
    learner : str
        The learner of the non-private model and of the teacher.
    params : mapping, optional
        Its hyperparameters.
    k : int
        The number of teachers (the teacher is fitted to ``n // k`` private rows).
    student : fitted estimator, optional
        The published student's model (trained on privately labeled public rows).
    public : tuple (X, y), optional
        The public rows with their true labels: never trained on by the non-private model
        or the teacher, so they join the held-out rows as non-members there (not for the
        student, which was trained on them).
    max_rows : int
        At most this many rows on each side of each attack.
    fail : float
        False-alarm probability of the tolerances.
    rng : Generator, int or None
        Randomness of the teacher's chunk and of the samples (not a release).

    Returns
    -------
    LeakStory
    """
    from core import pipeline

    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    n = private.n_rows
    if k < 1 or n // k < 1:
        raise ParameterError(f"k must be between 1 and the number of private rows ({n}), got {k}.")
    X, y = private.features, np.asarray(private.labels)
    outside = (held_out.features, np.asarray(held_out.labels))
    unseen = outside
    if public is not None:
        import pandas as pd

        unseen = (pd.concat([held_out.features, public[0]], ignore_index=True),
                  np.concatenate([outside[1], np.asarray(public[1])]))
    model = pipeline.teacher_model(private, learner, params).fit(X, y)
    nonprivate = membership_attack(model, (X, y), unseen, max_rows=max_rows, fail=fail, rng=gen)
    chunk = np.sort(gen.choice(n, size=n // k, replace=False))
    Xc, yc = X.iloc[chunk], y[chunk]
    if np.unique(yc).size < 2:
        from core.ensemble.teacher_ensemble import ConstantClassifier

        teacher_model = ConstantClassifier().fit(Xc, yc)
    else:
        teacher_model = pipeline.teacher_model(private, learner, params).fit(Xc, yc)
    teacher = membership_attack(teacher_model, (Xc, yc), unseen, max_rows=max_rows, fail=fail, rng=gen)
    attacked = None
    if student is not None:
        attacked = membership_attack(student, (X, y), outside, max_rows=max_rows, fail=fail, rng=gen)
    return LeakStory(nonprivate=nonprivate, teacher=teacher, student=attacked, chunk=int(n // k))
