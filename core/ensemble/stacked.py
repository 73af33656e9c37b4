"""Linear teachers voting as one stacked matrix product (docs/design.md §1.1).

A teacher whose learner is linear in its input — a linear classifier (logistic
regression, linear SVM, any ``LinearClassifierMixin``) behind optional
``StandardScaler`` steps, or Gaussian naive Bayes (a quadratic without cross terms) — is an
affine function of the shared encoding of :mod:`core.ensemble.encoding`: its standardizing
(of the numeric columns, in its preprocessor, or of every column, in front of the learner)
is folded into its weights, its one-hot columns into the rows of the public vocabulary,
its imputation values into the weights of "missing" indicator columns.  Stacking the
``k`` teachers' weights side by side gives one matrix ``W``; the teachers' scores on a
block of rows are then one product ``X @ W`` and their votes the signs (binary teachers)
or per-teacher argmaxes (more classes).

Exactness.  The product runs in float32 (twice the speed of float64); every score whose
float32 value lies within a rigorous rounding bound of 0 (``γ_D · Σ_j |x_j| max_t|W_jt|``
with ``γ_D = (D + 4)·2⁻²³``) is recomputed in float64, so the sign of every score is the
sign of the float64 folded score.  That differs from the teacher's own float64
``decision_function`` only by rounding (about 1e-15 relative), so a vote can differ from
the per-teacher path only where the teacher's own score is within about 1e-12 of its
decision boundary; the votes are otherwise identical (tests/ensemble/test_encoding.py).
Teachers with more than two classes are scored in float64 throughout.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from core.ensemble.encoding import EncodedBlock, SharedEncoder, TeacherMap

__all__ = ["StackedLinear", "linear_form"]

_U32 = 2.0 ** -23


def linear_form(tail: Any, n_features: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray] | None:
    """A teacher learner's scores as ``z @ A + (z*z) @ Q + c`` on its own input ``z``.

    Returns ``(A, Q, c, classes)`` with one column per score (one for a binary teacher:
    the score of its second class minus its first, positive means the second class), or
    None when the learner is not linear or naive Bayes.
    """
    from sklearn.linear_model._base import LinearClassifierMixin
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    def flat(estimator: Any) -> list:
        if isinstance(estimator, Pipeline):
            return [s for _, step in estimator.steps for s in flat(step)]
        return [estimator]

    steps = flat(tail)
    *before, final = steps
    mean = np.zeros(n_features)
    scale = np.ones(n_features)
    for step in before:
        if step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        if not isinstance(step, StandardScaler):
            return None
        mu = step.mean_ if step.mean_ is not None else np.zeros(n_features)
        s = step.scale_ if step.scale_ is not None else np.ones(n_features)
        mean, scale = mean + scale * mu, scale * s  # z' = (z - mean) / scale, composed
    classes = np.asarray(getattr(final, "classes_", []))
    if classes.size < 2 or classes.dtype.kind not in "iu":
        return None
    if isinstance(final, LinearClassifierMixin) and hasattr(final, "coef_"):
        coef = np.asarray(final.coef_, dtype=np.float64)
        intercept = np.broadcast_to(np.asarray(final.intercept_, dtype=np.float64), (coef.shape[0],))
        if coef.shape[1] != n_features:
            return None
        A = (coef / scale).T
        c = intercept - A.T @ mean
        if classes.size == 2 and A.shape[1] != 1:
            return None
        return A, None, c, classes
    if isinstance(final, GaussianNB) and not before:
        theta = np.asarray(final.theta_, dtype=np.float64)
        var = np.asarray(final.var_, dtype=np.float64)
        if theta.shape[1] != n_features:
            return None
        A = (theta / var).T
        Q = (-0.5 / var).T
        c = (np.log(final.class_prior_) - 0.5 * np.sum(np.log(2.0 * np.pi * var), axis=1)
             - 0.5 * np.sum(theta * theta / var, axis=1))
        if classes.size == 2:
            A, Q, c = A[:, 1:] - A[:, :1], Q[:, 1:] - Q[:, :1], c[1:] - c[:1]
        return A, Q, c, classes
    return None


class StackedLinear:
    """The linear teachers of an ensemble as one weight matrix on the shared encoding.

    Parameters
    ----------
    encoder : SharedEncoder
    teachers : sequence of (index, TeacherMap, (A, Q, c, classes))
        The linear teachers: their position in the ensemble, their map and their form.

    Notes
    -----
    Columns of the shared design matrix ``X`` (built per block by :meth:`design`): the
    numeric columns (missing cells as 0), their squares (only when a teacher is
    quadratic), one "missing" indicator per numeric column (only when a teacher imputes),
    then, for each categorical column, one indicator per vocabulary entry and one for a
    missing cell.  A teacher's numeric input is ``x + fill·missing`` (x is 0 where
    missing), its square ``x² + fill²·missing``; its one-hot block is its table
    (:meth:`TeacherMap.table`) applied to the indicators.  Weights of a category the
    teacher never saw are 0, as its encoder gives it all zeros.
    """

    def __init__(self, encoder: SharedEncoder, teachers: Sequence[tuple[int, TeacherMap, tuple]]) -> None:
        self.encoder = encoder
        self.teachers = list(teachers)
        n_num = len(encoder.numeric)
        self.n_num = n_num
        self.quadratic = any(form[1] is not None for _, _, form in self.teachers)
        self.impute = any(
            seg[0] == "num" and np.any(np.isfinite(seg[2])) for _, tmap, _ in self.teachers for seg in tmap.segments
        )
        # score columns: binary teachers first (one column each), then multi-class ones
        self.binary = [t for t in self.teachers if t[2][3].size == 2]
        self.multi = [t for t in self.teachers if t[2][3].size > 2]
        self._sizes: tuple[int, ...] | None = None
        self._weights: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    # -- the design matrix ---------------------------------------------------------------

    def _numeric_width(self) -> int:
        return self.n_num * (1 + int(self.quadratic) + int(self.impute))

    def _fill_numeric(self, out: np.ndarray, num: np.ndarray) -> None:
        """The numeric part of the design (values with NaN as 0, their squares, missing flags)
        written into the first :meth:`_numeric_width` columns of ``out``."""
        n = self.n_num
        if not n:
            return
        missing = np.isnan(num)
        filled = np.where(missing, 0.0, num)
        out[:, :n] = filled
        col = n
        if self.quadratic:
            out[:, col: col + n] = filled * filled
            col += n
        if self.impute:
            out[:, col: col + n] = missing

    def design(self, block: EncodedBlock, dtype=np.float64) -> np.ndarray:
        """The shared design matrix of a block (see the class notes), ``(b, D)``."""
        num = block.numeric
        b = num.shape[0] if num.size else block.codes.shape[0]
        sizes = block.sizes
        D = self._numeric_width() + sum(s + 1 for s in sizes)
        X = np.zeros((b, D), dtype=dtype)
        self._fill_numeric(X, num)
        col = self._numeric_width()
        rows = np.arange(b)
        for j, size in enumerate(sizes):
            codes = block.codes[:, j]
            X[rows, col + np.where(codes < 0, size, codes)] = 1.0
            col += size + 1
        return X

    def design_sparse(self, block: EncodedBlock, dtype=np.float32, constant: bool = False):
        """The design matrix as CSR (the numeric columns, then one 1 per categorical column,
        and with ``constant`` a last column of ones) and its numeric part as a dense
        array: ``(X, numeric)``."""
        import scipy.sparse as sp

        num = block.numeric
        b = num.shape[0] if num.size else block.codes.shape[0]
        nw = self._numeric_width()
        dense = np.empty((b, nw), dtype=dtype)
        self._fill_numeric(dense, num)
        sizes = block.sizes
        per_row = nw + len(sizes) + int(constant)
        indices = np.empty((b, per_row), dtype=np.int32)
        data = np.ones((b, per_row), dtype=dtype)
        indices[:, :nw] = np.arange(nw)
        data[:, :nw] = dense
        offset = nw
        for j, size in enumerate(sizes):
            codes = block.codes[:, j]
            indices[:, nw + j] = offset + np.where(codes < 0, size, codes)
            offset += size + 1
        if constant:
            indices[:, -1] = offset
            offset += 1
        indptr = np.arange(0, b * per_row + 1, per_row, dtype=np.int64)
        X = sp.csr_matrix((data.ravel(), indices.ravel(), indptr), shape=(b, offset))
        return X, dense

    # -- the stacked weights -------------------------------------------------------------

    def _teacher_weights(self, tmap: TeacherMap, form: tuple, sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """One teacher's weights on the shared design matrix ``(D, q)`` and constants ``(q,)``."""
        A, Q, c, _ = form
        q = A.shape[1]
        n = self.n_num
        D = self._numeric_width() + sum(s + 1 for s in sizes)
        W = np.zeros((D, q))
        const = np.array(c, dtype=np.float64, copy=True)
        sq_col = n if self.quadratic else None
        miss_col = n * (1 + int(self.quadratic)) if self.impute else None
        offsets = np.cumsum([self._numeric_width()] + [s + 1 for s in sizes])
        col = 0
        for seg in tmap.segments:
            if seg[0] == "num":
                positions, fill, mean, scale = seg[1:5]
                for i, p in enumerate(positions):
                    # the teacher's input is z = (v - mu) / s with v = x + f·missing (x is 0 where
                    # missing): a·z = (a/s)·v − a·mu/s, and q·z² = (q/s²)(v² − 2·mu·v + mu²)
                    mu, s = mean[i], scale[i]
                    a = A[col + i] / s
                    q = Q[col + i] / (s * s) if Q is not None else None
                    const -= A[col + i] * mu / s
                    lin = a if q is None else a - 2.0 * mu * q  # weight of v
                    W[p] += lin
                    if q is not None:
                        W[sq_col + p] += q
                        const += q * mu * mu
                    f = fill[i]
                    if np.isfinite(f):
                        if miss_col is None:  # pragma: no cover - impute is set from the same segments
                            raise RuntimeError("imputation without indicator columns")
                        W[miss_col + p] += lin * f + (q * f * f if q is not None else 0.0)
                col += len(positions)
            else:
                position = seg[1]
                table = tmap.table(position, self.encoder.vocabulary(position))  # (size + 1, n_cats)
                width = table.shape[1]
                block_w = A[col: col + width] + (Q[col: col + width] if Q is not None else 0.0)  # z² = z on 0/1
                start = offsets[position]
                W[start: start + table.shape[0]] += table @ block_w
                col += width
        return W, const

    def _stack(self, which: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sizes = self.encoder.sizes
        if self._sizes != sizes:
            self._weights = {}
            self._sizes = sizes
        if which not in self._weights:
            group = self.binary if which == "binary" else self.multi
            parts = [self._teacher_weights(tmap, form, sizes) for _, tmap, form in group]
            D = self._numeric_width() + sum(s + 1 for s in sizes)
            W = np.concatenate([p[0] for p in parts], axis=1) if parts else np.zeros((D, 0))
            c = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
            self._weights[which] = (W, c, np.abs(W).max(axis=1) if W.shape[1] else np.zeros(D))
        return self._weights[which]

    # -- votes ---------------------------------------------------------------------------

    def predictions(self, block: EncodedBlock) -> list[tuple[int, np.ndarray]]:
        """Every linear teacher's predicted class ids on the block: ``(index, ids)`` pairs."""
        if not self.teachers:
            return []
        out: list[tuple[int, np.ndarray]] = []
        if self.binary:
            positive = self._binary_positive(block)
            for j, (index, _, form) in enumerate(self.binary):
                classes = form[3]
                out.append((index, np.where(positive[:, j], classes[1], classes[0]).astype(np.intp)))
        out.extend(self._multi_predictions(block))
        return out

    def counts(self, block: EncodedBlock, n_classes: int) -> np.ndarray:
        """The linear teachers' votes per class on the block, int32 ``(b, n_classes)``."""
        b = block.numeric.shape[0] if block.numeric.size else block.codes.shape[0]
        out = np.zeros((b, n_classes), dtype=np.int32)
        if self.binary:
            positive = self._binary_positive(block)
            pairs: dict[tuple[int, int], list[int]] = {}
            for j, (_, _, form) in enumerate(self.binary):
                pairs.setdefault((int(form[3][0]), int(form[3][1])), []).append(j)
            for (first, second), cols in pairs.items():
                chosen = positive if len(cols) == positive.shape[1] else positive[:, cols]
                ones = np.count_nonzero(chosen, axis=1).astype(np.int32)
                out[:, second] += ones
                out[:, first] += len(cols) - ones
        rows = np.arange(b)
        for _, ids in self._multi_predictions(block):
            out[rows, ids] += 1
        return out

    def _multi_predictions(self, block: EncodedBlock) -> list[tuple[int, np.ndarray]]:
        if not self.multi:
            return []
        W, c, _ = self._stack("multi")
        S = self.design(block) @ W + c
        out, col = [], 0
        for index, _, form in self.multi:
            q = form[0].shape[1]
            out.append((index, form[3][np.argmax(S[:, col: col + q], axis=1)].astype(np.intp)))
            col += q
        return out

    def _binary_bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per stack: the float32 weights with the constants as a last row, ``|W|`` of the
        numeric rows, their largest entry per row, and per teacher ``|c_t|`` plus the
        largest ``|W_vt|`` of each categorical column (cached with the stack)."""
        W, c, _ = self._stack("binary")
        cached = self._weights.get("binary_bounds")
        if cached is None:
            nw = self._numeric_width()
            Wabs = np.abs(W)
            fixed = np.abs(c)
            start = nw
            for size in self._sizes or ():
                fixed = fixed + Wabs[start: start + size + 1].max(axis=0)
                start += size + 1
            W32 = np.vstack([W, c[None, :]]).astype(np.float32)
            num = Wabs[:nw]
            cached = (W32, num, num.max(axis=1) if nw else np.zeros(0), fixed)
            self._weights["binary_bounds"] = cached  # type: ignore[assignment]
        return cached

    def _binary_positive(self, block: EncodedBlock) -> np.ndarray:
        """``score > 0`` for every binary teacher (float32 product, float64 where unsure).

        Every score within the rounding bound of 0 is scored again in float64 (see the
        module docstring).  The bound of entry ``(i, t)`` is ``γ_D`` times
        ``Σ_numeric |x_ij| |W_jt|`` plus, for each categorical column, the largest
        ``|W_vt|`` over its vocabulary, plus ``|c_t|``: at least ``Σ_j |x_ij W_jt| + |c_t|``.
        It is applied in two steps: first one bound per row (its largest over the teachers),
        then the entry's own bound for the scores below that.
        """
        W, c, _ = self._stack("binary")
        W32, num_abs, num_max, fixed = self._binary_bounds()
        X, dense = self.design_sparse(block, constant=True)  # a few nonzeros per row: a sparse product
        S = np.asarray(X @ W32)  # the constants come from the last column of ones
        D = X.shape[1]
        # γ_D = (D + 4)·u with u = 2⁻²⁴ for each float32 rounding, doubled, and 1 % for the bound's own rounding
        gamma = (D + 4) * _U32 * 2.0 * 1.01
        numeric = np.abs(dense) @ num_max if num_max.size else np.zeros(S.shape[0])  # no numeric column: none
        row_bound = (numeric + fixed.max(initial=0.0)) * gamma
        positive = S > 0
        flat = np.flatnonzero(np.abs(S) <= row_bound.astype(np.float32)[:, None])
        if not flat.size:
            return positive
        if flat.size > 0.01 * S.size:  # a loose row bound (e.g. squares): every entry's own bound at once
            bound = np.abs(dense) @ num_abs.astype(np.float32) if num_max.size else np.zeros_like(S)
            bound += fixed.astype(np.float32)
            bound *= np.float32(gamma)
            flat = np.flatnonzero(np.abs(S) <= bound)
            del bound
        rows, cols = np.divmod(flat, S.shape[1])
        tight = np.empty(rows.size)
        for a in range(0, rows.size, 65_536):
            b = min(rows.size, a + 65_536)
            part = np.einsum("ij,ji->i", np.abs(dense[rows[a:b]]).astype(np.float64), num_abs[:, cols[a:b]]) \
                if num_max.size else 0.0
            tight[a:b] = (part + fixed[cols[a:b]]) * gamma
        unsure = np.abs(S[rows, cols]) <= tight
        rows, cols = rows[unsure], cols[unsure]
        if rows.size:
            unique, where = np.unique(rows, return_inverse=True)
            X64 = self.design(EncodedBlock(block.numeric[unique], block.codes[unique], block.sizes))
            for a in range(0, rows.size, 65_536):
                b = min(rows.size, a + 65_536)
                exact = np.einsum("ij,ji->i", X64[where[a:b]], W[:, cols[a:b]]) + c[cols[a:b]]
                positive[rows[a:b], cols[a:b]] = exact > 0
        return positive
