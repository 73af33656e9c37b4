"""The teachers' outputs on public rows encoded once (docs/design.md §1.1).

:class:`EncodedVoter` is what :class:`core.ensemble.teacher_ensemble.TeacherEnsemble` uses
to vote when its teachers' preprocessing can be read off (every teacher built by
:func:`core.pipeline.train`): each block of public rows is encoded once
(:class:`core.ensemble.encoding.SharedEncoder`), the linear teachers vote through one
stacked matrix product (:class:`core.ensemble.stacked.StackedLinear`), and every other
teacher predicts on its own input rebuilt from the shared block by integer gathers
(:meth:`core.ensemble.encoding.TeacherMap.features`), the teachers split into groups run
through :class:`joblib.Parallel` (threads by default; processes or a Dask cluster under
:func:`core.ensemble.distributed.joblib_backend`).

The voter holds the fitted teachers (private): like the ensemble, it lives in memory only,
and its outputs are non-private inputs of the aggregators.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from core.ensemble.encoding import EncodedBlock, SharedEncoder, TeacherMap, check_block_columns, compile_teachers
from core.ensemble.stacked import StackedLinear, linear_form

__all__ = ["EncodedVoter"]


def _tree_input(learner: Any, n_features: int) -> tuple[Any, np.ndarray | None]:
    """float32 and the split features for a tree or forest (which converts its input to
    float32 and reads no other column); float64 and every column for any other learner."""
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.tree import BaseDecisionTree

    final = learner.steps[-1][1] if isinstance(learner, Pipeline) and len(learner.steps) == 1 else learner
    if isinstance(final, BaseDecisionTree):
        trees = [final]
    elif isinstance(final, (RandomForestClassifier, ExtraTreesClassifier)):
        trees = list(final.estimators_)
    else:
        return np.float64, None
    used = np.zeros(n_features, dtype=bool)
    for tree in trees:
        features = tree.tree_.feature
        used[features[features >= 0]] = True
    return np.float32, used


def _group_encoded(
    kind: str,
    members: Sequence[tuple[int, TeacherMap | None, Any, np.ndarray]],
    n_classes: int,
    name: str,
    encoder: SharedEncoder,
    block: EncodedBlock,
) -> list[tuple[int, np.ndarray]]:
    """One group of teachers on one encoded block (runs in a joblib worker).

    Returns ``(index, output)`` pairs: predicted class ids (``kind`` "ids") or the
    probability of class 1 (``kind`` "scores"); for ``kind`` "counts" one pair
    ``(-1, votes)`` with the group's votes per class.
    """
    from core.ensemble.teacher_calls import _predict_teacher, _score_teacher

    b = block.numeric.shape[0] if block.numeric.size else block.codes.shape[0]
    counts = np.zeros((b, n_classes), dtype=np.int32) if kind == "counts" else None
    rows = np.arange(b)
    out = []
    for index, tmap, learner, classes in members:
        # a constant teacher (no map) reads no column: one placeholder column per row
        if tmap is None:
            Z = np.zeros((b, 1))
        else:
            dtype, used = _tree_input(learner, tmap.n_features)
            Z = tmap.features(block, encoder, dtype, used)
        if kind == "scores":
            out.append((index, _score_teacher(learner, classes, index, Z, name)))
        elif counts is not None:  # added up here, so that only (b, C) comes back per group
            counts[rows, _predict_teacher(learner, index, Z, n_classes, name)] += 1
        else:
            out.append((index, _predict_teacher(learner, index, Z, n_classes, name)))
    return [(-1, counts)] if counts is not None else out


class EncodedVoter:
    """Votes, predictions and scores of an ensemble's teachers on shared-encoded blocks.

    Parameters
    ----------
    encoder : SharedEncoder
    members : list of (TeacherMap or None, learner)
        From :func:`core.ensemble.encoding.compile_teachers`, one per teacher.
    classes : list of numpy.ndarray
        Each teacher's class ids.
    n_classes : int
    name : str
        The learner's public name (error messages).
    """

    def __init__(self, encoder: SharedEncoder, members: list, classes: list, n_classes: int, name: str) -> None:
        self.encoder = encoder
        self.n_classes = int(n_classes)
        self.name = name
        self.k = len(members)
        linear, other = [], []
        for index, ((tmap, learner), cls) in enumerate(zip(members, classes)):
            form = None if tmap is None else linear_form(learner, tmap.n_features)
            if form is not None:
                linear.append((index, tmap, form))
            else:
                other.append((index, tmap, learner, cls))
        self.linear = StackedLinear(encoder, linear)
        self.other = other
        self.all = [(i, tmap, learner, cls) for i, ((tmap, learner), cls) in enumerate(zip(members, classes))]

    @classmethod
    def build(cls, teachers: Sequence[Any], classes: list, n_classes: int, name: str, X: Any) -> "EncodedVoter | None":
        """A voter for the teachers, for query rows like ``X`` (None: use the per-teacher path)."""
        n_input = None if hasattr(X, "iloc") else int(np.shape(X)[1])
        compiled = compile_teachers(teachers, n_input)
        if compiled is None:
            return None
        encoder, members = compiled
        return cls(encoder, members, classes, n_classes, name)

    @property
    def n_linear(self) -> int:
        """How many teachers vote through the stacked product."""
        return len(self.linear.teachers)

    def encode(self, X: Any, codes: dict | None = None) -> EncodedBlock:
        """Encode a block of query rows once for every teacher (``codes``: see
        :meth:`core.ensemble.encoding.SharedEncoder.encode`)."""
        check_block_columns(X, self.encoder)
        return self.encoder.encode(X, codes=codes)

    def _groups(self, members: list, workers: int) -> list[list]:
        if not members:
            return []
        n = max(1, min(workers, len(members)))
        bounds = np.linspace(0, len(members), n + 1).astype(int)
        return [members[a:b] for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    def _run(self, kind: str, members: list, block: EncodedBlock, n_jobs: int | None, workers: int) -> list:
        groups = self._groups(members, workers)
        if not groups:
            return []
        args = [(kind, g, self.n_classes, self.name, self.encoder, block) for g in groups]
        with threadpool_limits(limits=1):  # parallelism is across teachers, as in training
            if len(groups) == 1:
                results = [_group_encoded(*args[0])]
            else:
                parallel = Parallel(n_jobs=n_jobs, prefer="threads", max_nbytes=None)
                results = parallel(delayed(_group_encoded)(*a) for a in args)
        return [pair for result in results for pair in result]

    def handles(self, block: EncodedBlock) -> bool:
        """Whether the block can be voted on here with the per-teacher path's exact outcome.

        Not when a numeric cell is infinite, or missing where a teacher does not impute it:
        the teachers' learners then refuse the rows (or handle missing values their own
        way), and the caller asks every teacher on the rows themselves.
        """
        numeric = block.numeric
        if not numeric.size:
            return True
        finite = np.isfinite(numeric)
        if finite.all():
            return True
        if np.isinf(numeric).any():
            return False
        missing_cols = np.flatnonzero(~finite.all(axis=0))
        return bool(np.all(self._imputed[missing_cols]))

    @property
    def _imputed(self) -> np.ndarray:
        """Per numeric column: every teacher that reads it imputes a missing cell."""
        if not hasattr(self, "_imputed_cache"):
            ok = np.ones(len(self.encoder.numeric), dtype=bool)
            for _, tmap, _, _ in self.all:
                for seg in () if tmap is None else tmap.segments:
                    if seg[0] == "num":
                        ok[np.asarray(seg[1], dtype=int)] &= np.isfinite(seg[2])
            self._imputed_cache = ok
        return self._imputed_cache

    def output(self, kind: str, block: EncodedBlock, *, n_jobs: int | None = None, workers: int = 1) -> np.ndarray:
        """``kind`` ("counts", "predictions" or "scores") of every teacher on an encoded block."""
        if kind == "counts":
            return self.counts(block, n_jobs=n_jobs, workers=workers)
        if kind == "predictions":
            return self.predictions(block, n_jobs=n_jobs, workers=workers)
        return self.scores(block, n_jobs=n_jobs, workers=workers)

    def predictions(self, block: EncodedBlock, *, n_jobs: int | None = None, workers: int = 1) -> np.ndarray:
        """Every teacher's class id on every row of an encoded block: int32 ``(b, k)``."""
        pairs = self.linear.predictions(block) + self._run("ids", self.other, block, n_jobs, workers)
        b = block.numeric.shape[0] if block.numeric.size else block.codes.shape[0]
        out = np.empty((b, self.k), dtype=np.int32)
        for index, ids in pairs:
            out[:, index] = ids
        return out

    def counts(self, block: EncodedBlock, *, n_jobs: int | None = None, workers: int = 1) -> np.ndarray:
        """Votes per class on every row of an encoded block: int32 ``(b, n_classes)``."""
        out = self.linear.counts(block, self.n_classes)
        for _, part in self._run("counts", self.other, block, n_jobs, workers):
            out += part
        return out

    def scores(self, block: EncodedBlock, *, n_jobs: int | None = None, workers: int = 1) -> np.ndarray:
        """Every teacher's probability of class 1 on an encoded block: float ``(b, k)``."""
        pairs = self._run("scores", self.all, block, n_jobs, workers)
        b = block.numeric.shape[0] if block.numeric.size else block.codes.shape[0]
        out = np.empty((b, self.k), dtype=np.float64)
        for index, values in pairs:
            out[:, index] = values
        return np.clip(out, 0.0, 1.0)
