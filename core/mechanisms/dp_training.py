"""Models trained with differential privacy on the private rows, labeling the public rows.

The honest alternative to an ensemble of teachers: train ONE model on all private rows
with a differentially private algorithm and label every public row with it.  The labels
are post-processing of the released model, so the guarantee does not grow with the
number of public rows (the ensemble's aggregators pay per query).  Two models:

:func:`dp_logistic_label`
    Logistic regression by objective perturbation: the minimiser of the regularized
    logistic loss plus a random linear term (Chaudhuri, Monteleoni, Sarwate 2011,
    Algorithm 2, pure ε; or Kifer, Smith, Thakurta 2012, Gaussian, (ε, δ)).  Several
    classes: one-vs-rest at ε/c each.  The privacy maps and their proof sketches are in
    :mod:`core.accounting.dp_training`.
:func:`dp_naive_bayes_label`
    Gaussian naive Bayes from class counts, per-class sums and sums of squares released
    by the Gaussian mechanism, its noise set by the exact Gaussian privacy profile.

**Norm bounds from public facts only.**  Both read :class:`PrivateRows`, made by
:func:`private_rows`: the numeric columns are min–max scaled with the ranges of the
PUBLIC rows (private values outside are clipped; a column whose public rows are heavily
skewed on a log scale, with the same public range), the categorical columns one-hot
encoded with the categories of the PUBLIC rows (an unseen or missing category encodes as
zeros), so every private row has norm at most ``R = √(numeric + categorical columns)``
by construction; no private value chooses a bound or a scale.  The regularization ``C`` is a public
setting; left out, it follows from public quantities (:func:`default_C`).

**What is fitted on what.**  Like the learners' ``standardize`` (docs/design.md §1.1),
these routes scale the numeric columns only and leave the one-hot columns 0/1; unlike
it, every statistic of the encoding (ranges, categories) is fitted on the PUBLIC rows.
A teacher's scaler may be fitted on its own chunk (it is part of that teacher, and one
private row changes one teacher), but a mean or variance fitted on the private rows here
would itself be a release no privacy map accounts for, and would let a private row move
the norm bound ``R`` the noise is calibrated to; so no learner's scaler, imputer or
encoder is ever used on these routes' input.

The optimisation is exact Newton on the strongly convex objective, to a gradient norm
of 1e-9 (the proofs are stated for the exact minimiser; the remaining error is far
below the noise); a fit that does not get there raises
:class:`core.errors.ConvergenceError` and releases nothing.

**Per person.**  When the private table declares a privacy unit (``PrivateRows.units``),
both routes keep at most ``rows_per_unit = r`` rows of each person, chosen at random by
:func:`core.data.units.bound_rows` (a fresh random key per row, never a value or a
label), and calibrate their noise for neighbours that differ in all of one person's at
most ``r`` rows (:mod:`core.accounting.dp_training`, docs/design.md §12.6).  The default
``r = 1`` keeps one row per person with the noise of one row.

References
----------
K. Chaudhuri, C. Monteleoni, A. D. Sarwate (JMLR 2011) and D. Kifer, A. Smith,
A. Thakurta (COLT 2012), cited in full in :mod:`core.accounting.dp_training`, whose
guarantees these routes use.

.. [VSB13] J. Vaidya, B. Shafiq, A. Basu, Y. Hong. Differentially Private Naive Bayes
   Classification. WI-IAT 2013.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from core import noise
from core.accounting import dp_training as maps
from core.errors import ConvergenceError, ParameterError
from core.mechanisms.result import LabelingResult, make_result
from core.validation import check_delta, check_epsilon

__all__ = [
    "PrivateRows",
    "PublicEncoding",
    "SKEWED",
    "public_encoding",
    "private_rows",
    "rows_from_arrays",
    "default_C",
    "fit_logistic",
    "dp_logistic_label",
    "fit_naive_bayes",
    "dp_naive_bayes_label",
]


@dataclass(frozen=True, eq=False)
class PrivateRows:
    """What a DP-training route reads: the private rows, encoded with public bounds, and the public rows.

    It has the ``shape`` ``(m, d)`` of the public rows, so the pipeline counts its queries
    like a vote matrix.  It holds private data: never exported, never shown.

    Attributes
    ----------
    X : numpy.ndarray, shape (n, d)
        The private rows (every row's norm at most ``data_norm``).
    y : numpy.ndarray of int, shape (n,)
        Their class ids.
    X_public : numpy.ndarray, shape (m, d)
        The public rows, encoded the same way.
    n_classes : int
    data_norm : float
        ``R``, the public bound on a row's norm (without the intercept's constant).
    bounds : str
        Where the encoding's ranges and categories came from (public), in words.
    units : PrivacyUnit or None
        The privacy unit of each private row (persons), or None: each row is a unit.
    n_units : int or None
        The public number of units (rows, or persons) that sets the defaults and the
        reported ``n_private``: the file's count before ``missing="drop"``
        (:attr:`core.data.Table.n_units`); None: the rows (persons) present.
    row_numbers : numpy.ndarray or None
        Under ``missing="drop"``: each row's number in the file, so the rows kept per person
        are chosen by a keyed hash of it (:func:`core.data.units.bound_rows`).
    """

    X: np.ndarray
    y: np.ndarray
    X_public: np.ndarray
    n_classes: int
    data_norm: float
    bounds: str = "the public rows"
    units: Any = None
    n_units: int | None = None
    row_numbers: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(m, d)``: the public rows' shape."""
        return tuple(self.X_public.shape)

    @property
    def ndim(self) -> int:
        """2, like a vote matrix."""
        return 2

    @property
    def n(self) -> int:
        """The number of private rows present (those left after ``missing="drop"``)."""
        return int(self.X.shape[0])

    @property
    def public_n(self) -> int:
        """The public number of units: :attr:`n_units` when declared, else the rows (per row)
        or the persons (with a unit) present.  Under ``missing="drop"`` it is the file's count,
        the same in every neighbouring file (docs/design.md §1.2)."""
        if self.n_units is not None:
            return int(self.n_units)
        return self.n if self.units is None else int(self.units.n_units)

    def to_pandas(self):
        """The private rows as a table (encoded columns ``x0 …`` and ``label``): private, for display
        of small declared tables such as the audit's neighbouring pairs."""
        import pandas as pd

        frame = pd.DataFrame(self.X, columns=[f"x{j}" for j in range(self.X.shape[1])])
        frame["label"] = self.y
        return frame


def _clip_norm(X: np.ndarray, R: float) -> np.ndarray:
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return X * np.minimum(1.0, R / np.maximum(norms, 1e-300))


def rows_from_arrays(X, y, X_public, *, n_classes: int, data_norm: float, bounds: str = "declared",
                     units: Any = None, n_units: int | None = None, row_numbers: Any = None) -> PrivateRows:
    """:class:`PrivateRows` from encoded arrays and a declared norm bound (rows clipped to it).

    Parameters
    ----------
    X, y : array-like
        Private rows (encoded) and class ids.
    X_public : array-like
        Public rows, encoded the same way.
    n_classes : int
    data_norm : float
        The declared (public) bound ``R``; rows of larger norm are scaled down to it.
    bounds : str
    units : array-like or PrivacyUnit, optional
        One privacy-unit ID per private row (persons); None: each row is a unit.
    n_units : int, optional
        The public count of units (see :class:`PrivateRows`).
    row_numbers : array-like of int, optional
        Each row's number in the file (under ``missing="drop"``).

    Returns
    -------
    PrivateRows
    """
    R = float(data_norm)
    if not (math.isfinite(R) and R > 0):
        raise ParameterError(f"data_norm must be a finite number > 0, got {data_norm!r}.")
    X = _clip_norm(np.asarray(X, dtype=float), R)
    y = np.asarray(y, dtype=np.int64)
    if X.ndim != 2 or y.shape != (X.shape[0],) or X.shape[0] < 1:
        raise ParameterError("X must be a 2-D array with one class id per row.")
    Xp = _clip_norm(np.asarray(X_public, dtype=float), R)
    if Xp.ndim != 2 or Xp.shape[1] != X.shape[1]:
        raise ParameterError("The public rows must have the private rows' columns.")
    if units is not None:
        from core.data.units import PrivacyUnit, privacy_unit

        units = units if isinstance(units, PrivacyUnit) else privacy_unit(units, "unit")
        if units.n_rows != X.shape[0]:
            raise ParameterError(f"units must give one ID per private row: {X.shape[0]} rows, {units.n_rows} IDs.")
        units = None if units.per_row else units
    if row_numbers is not None:
        row_numbers = np.asarray(row_numbers, dtype=np.int64)
        if row_numbers.shape != (X.shape[0],):
            raise ParameterError(f"row_numbers must give one number per private row ({X.shape[0]}).")
    return PrivateRows(X, y, Xp, int(n_classes), R, bounds, units,
                       None if n_units is None else int(n_units), row_numbers)


SKEWED = 2.0
"""A numeric column whose PUBLIC rows have a sample skewness above this is encoded on a log
scale (:func:`public_encoding`): fixed in advance, the usual mark of a heavily skewed column."""


@dataclass(frozen=True, eq=False)
class PublicEncoding:
    """Ranges, scales and categories read from the PUBLIC rows; encodes any rows of the same columns.

    Attributes
    ----------
    numeric : tuple of str
    low, span : numpy.ndarray
        Each numeric column's public minimum and range (``inf`` for a constant column); on a
        log column the range of ``log(1 + x − low)``.
    categories : dict
        Categorical column → the public rows' categories.
    log : numpy.ndarray of bool, optional
        Which numeric columns are encoded on a log scale (public skewness above
        :data:`SKEWED`); None: none.
    """

    numeric: tuple
    low: np.ndarray
    span: np.ndarray
    categories: dict
    log: np.ndarray | None = None

    @property
    def data_norm(self) -> float:
        """``√(numeric + categorical columns)``: the largest norm of an encoded row."""
        return math.sqrt(max(1, len(self.numeric) + len(self.categories)))

    def transform(self, frame) -> np.ndarray:
        """Encode rows: numeric min–max scaled (a skewed column: ``log(1 + x − low)`` scaled) and
        clipped to [0, 1] (missing: ½), categories one-hot."""
        parts = []
        if self.numeric:
            num = frame[list(self.numeric)].to_numpy(dtype=float) - self.low
            if self.log is not None and self.log.any():
                with np.errstate(invalid="ignore"):
                    num[:, self.log] = np.log1p(np.maximum(num[:, self.log], 0.0))
            num = np.clip(num / self.span, 0.0, 1.0)
            parts.append(np.where(np.isnan(num), 0.5, num))
        for col, values in self.categories.items():
            parts.append((frame[col].to_numpy(dtype=object)[:, None] == values[None, :]).astype(float))
        return np.hstack(parts) if parts else np.zeros((len(frame), 0))


def public_encoding(table, public_X, *, log_skewed: bool = True) -> PublicEncoding:
    """The encoding of :func:`private_rows`, read from the public rows only.

    Parameters
    ----------
    table : core.data.Table
        The private table (only its column names and kinds are read).
    public_X : pandas.DataFrame
        The public rows' features.
    log_skewed : bool, default True
        Encode a numeric column whose public skewness exceeds :data:`SKEWED` on a log
        scale; False: every numeric column min–max scaled (diffprivlib's setting).

    Returns
    -------
    PublicEncoding
    """
    import pandas as pd

    numeric = tuple(table.numeric_columns)
    low = span = np.zeros(0)
    log = np.zeros(0, dtype=bool)
    if numeric:
        num = public_X[list(numeric)].to_numpy(dtype=float)
        if len(num) and np.isfinite(num).any():
            with np.errstate(all="ignore"):
                low = np.nan_to_num(np.nanmin(num, axis=0), nan=0.0)
                high = np.nan_to_num(np.nanmax(num, axis=0), nan=1.0)
        else:
            low, high = np.zeros(len(numeric)), np.ones(len(numeric))
        log = np.array([log_skewed and _skewness(num[:, j]) > SKEWED for j in range(len(numeric))], dtype=bool)
        width = np.where(log, np.log1p(np.maximum(high - low, 0.0)), high - low)
        span = np.where(high > low, width, np.inf)
    cats = {col: np.array(sorted(pd.Series(public_X[col]).dropna().unique(), key=str), dtype=object)
            for col in table.categorical_columns}
    return PublicEncoding(numeric, low, span, cats, log)


def _skewness(values: np.ndarray) -> float:
    """The sample skewness ``m₃/m₂^{3/2}`` of a column's finite values (0 when fewer than 3 or constant)."""
    v = values[np.isfinite(values)]
    if v.size < 3:
        return 0.0
    c = v - v.mean()
    m2 = float(np.mean(c * c))
    return float(np.mean(c ** 3) / m2 ** 1.5) if m2 > 0 else 0.0


def private_rows(table, public_X, *, log_skewed: bool = True) -> PrivateRows:
    """Encode a private table and the public rows with ranges and categories of the PUBLIC rows.

    Numeric column ``j`` becomes ``(x − lo_j)/(hi_j − lo_j)`` clipped to ``[0, 1]``, with
    ``lo_j, hi_j`` the public rows' minimum and maximum (a missing value becomes ½, a
    constant public column 0); a column whose public skewness exceeds :data:`SKEWED`
    (a long right tail: Adult's capital gain and loss) becomes
    ``log(1 + x − lo_j)/log(1 + hi_j − lo_j)`` instead, clipped the same way, so its few large
    values do not squeeze every other row near 0; a categorical column becomes the one-hot indicator of
    the public rows' categories (unseen or missing: zeros).  So a row's norm is at most
    ``√(numeric + categorical columns)``, a public number (:class:`PublicEncoding`).

    Parameters
    ----------
    table : core.data.Table
        The private table.
    public_X : pandas.DataFrame
        The public rows' features.
    log_skewed : bool, default True
        As for :func:`public_encoding`.

    Returns
    -------
    PrivateRows
    """
    enc = public_encoding(table, public_X, log_skewed=log_skewed)
    return rows_from_arrays(enc.transform(table.features), table.labels, enc.transform(public_X),
                            n_classes=table.n_classes, data_norm=enc.data_norm, bounds="the public rows",
                            units=table.unit, n_units=table.n_units,
                            row_numbers=table.rows if table.missing == "drop" else None)


def bounded(rows: PrivateRows, rows_per_unit: int, gen) -> tuple[PrivateRows, int, int]:
    """The rows a DP-training route reads: at most ``r`` rows of each person (all rows per row unit).

    Parameters
    ----------
    rows : PrivateRows
    rows_per_unit : int
        ``r``, the bound (used only with a privacy unit).
    gen : numpy.random.Generator
        Draws the rows kept (:func:`core.data.units.bound_rows`).

    Returns
    -------
    (PrivateRows, int, int)
        The rows kept; ``r`` for the noise (1 per row); the public size that sets
        defaults (the number of rows, or of persons: both public under their adjacency).
    """
    from core.data.units import bound_rows, check_bound

    r = check_bound(rows_per_unit)
    if rows.units is None:
        return rows, 1, rows.public_n
    keep = bound_rows(rows.units, r, rng=gen, rows=rows.row_numbers)
    kept = PrivateRows(rows.X[keep], rows.y[keep], rows.X_public, rows.n_classes, rows.data_norm, rows.bounds,
                       rows.units.subset(keep), rows.public_n,
                       None if rows.row_numbers is None else rows.row_numbers[keep])
    return kept, r, rows.public_n


# ----------------------------------------------------------------------------- logistic regression


def default_C(*, n: int, dimension: int, epsilon: float) -> float:
    """The inverse regularization used when ``C`` is not given: a function of public quantities only.

    ``C = 0.01 · min(1, ε) · √(n / 32,561) · √(105 / (d + 1))``, capped to ``[1e-3, 1]``:
    on UCI Adult (n = 32,561 private rows, d + 1 = 106 coefficients) at ε ≥ 1 it is 0.01,
    where objective perturbation does best (docs/design.md §12); more rows or fewer
    dimensions call for less regularization (the noise's share of the gradient falls
    like d/(nε)), a smaller ε for more.

    Parameters
    ----------
    n : int
        The number of private rows.
    dimension : int
        The number of features ``d`` (the intercept not counted).
    epsilon : float

    Returns
    -------
    float
    """
    c = 0.01 * min(1.0, float(epsilon)) * math.sqrt(n / 32_561.0) * math.sqrt(105.0 / (dimension + 1))
    return float(min(1.0, max(1e-3, c)))


def _expit(z: np.ndarray) -> np.ndarray:
    from scipy.special import expit

    return expit(z)


def _log1pexp(z: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, z)


def fit_logistic(Xa: np.ndarray, s: np.ndarray, lam: float, b: np.ndarray, *, tol: float = 1e-9,
                 max_iter: int = 100) -> np.ndarray:
    """Minimise ``(1/n) Σ log(1 + exp(−s_i fᵀx_i)) + (λ/2)‖f‖² + bᵀf/n`` for each row of ``b``.

    Exact Newton with backtracking (the objective is λ-strongly convex), batched over the
    rows of ``b`` (the audit solves many noise draws at once).  The privacy proofs of
    objective perturbation are stated for the exact minimiser, so a fit that has not
    reached it is never returned: every row's gradient norm must fall below ``tol``.

    Parameters
    ----------
    Xa : numpy.ndarray, shape (n, p)
        Rows with the intercept's constant column.
    s : numpy.ndarray, shape (n,)
        Labels in {−1, +1}.
    lam : float
        The total regularization λ > 0.
    b : numpy.ndarray, shape (B, p)
        The noise vectors.
    tol : float
        Stop when every gradient's norm is below ``tol``.
    max_iter : int

    Returns
    -------
    numpy.ndarray, shape (B, p)
        The minimisers.

    Raises
    ------
    ConvergenceError
        When a row's gradient norm is still at least ``tol`` after ``max_iter`` Newton
        steps, or when its line search cannot decrease the objective (nothing is released).
    """
    # One BLAS thread: the Newton steps are many modest products and solves, where a second
    # OpenBLAS thread mostly busy-waits. Measured on the 2-core machine (one DP logistic regression,
    # 10 classes): digits 0.05 CPU s with one thread against 1.1 with two, MNIST 7 against 21, and on
    # a loaded machine the wall time falls with the CPU time (bench/bench_first_open.py).
    with threadpool_limits(limits=1, user_api="blas"):
        return _fit_logistic(Xa, s, lam, b, tol=tol, max_iter=max_iter)


def _fit_logistic(Xa: np.ndarray, s: np.ndarray, lam: float, b: np.ndarray, *, tol: float, max_iter: int) -> np.ndarray:
    n, p = Xa.shape
    B = b.shape[0]
    F = np.zeros((B, p))
    sX = Xa * s[:, None]
    eye = lam * np.eye(p)

    def objective(F, b):
        return _log1pexp(-(F @ sX.T)).mean(axis=1) + 0.5 * lam * (F * F).sum(axis=1) + (b * F).sum(axis=1) / n

    def gradient(Fa, ba):
        q = _expit(-(Fa @ sX.T))  # σ(−z), shape (a, n)
        return q, -(q @ sX) / n + lam * Fa + ba / n

    active = np.arange(B)
    val = objective(F, b)
    for _ in range(max_iter):
        Fa, ba = F[active], b[active]
        q, grad = gradient(Fa, ba)
        moving = np.linalg.norm(grad, axis=1) >= tol
        if not moving.any():
            return F
        active, Fa, ba, q, grad = active[moving], Fa[moving], ba[moving], q[moving], grad[moving]
        w = q * (1.0 - q) / n
        if active.size == 1:
            H = ((Xa * w[0][:, None]).T @ Xa)[None] + eye
        else:
            H = np.einsum("bn,np,nq->bpq", w, Xa, Xa) + eye
        step = np.linalg.solve(H, grad[..., None])[..., 0]
        slope = (grad * step).sum(axis=1)  # > 0: −step is a descent direction
        t = np.ones(active.size)
        old = val[active]
        slack = 1e-12 * (1.0 + np.abs(old))
        while True:
            cand = Fa - t[:, None] * step
            new = objective(cand, ba)
            ok = new <= old - 1e-4 * t * slope + slack
            if ok.all() or t.min() < 1e-8:
                break
            t = np.where(ok, t, t / 2)
        if not ok.all():
            worst = float(np.linalg.norm(grad[~ok], axis=1).max())
            raise ConvergenceError(
                f"The logistic fit did not converge: its line search cannot decrease the objective at a gradient "
                f"norm of {worst:.3g} (needed below {tol:g}). The privacy proof holds for the exact minimiser "
                "only, so nothing is released; a larger regularization (smaller C) makes the problem better "
                "conditioned.")
        F[active], val[active] = cand, new
    _, grad = gradient(F[active], b[active])
    worst = float(np.linalg.norm(grad, axis=1).max())
    if worst >= tol:
        raise ConvergenceError(
            f"The logistic fit did not converge in {max_iter} Newton steps (gradient norm {worst:.3g}, needed "
            f"below {tol:g}). The privacy proof holds for the exact minimiser only, so nothing is released; a "
            "larger regularization (smaller C) makes the problem better conditioned.")
    return F


def _augment(X: np.ndarray) -> np.ndarray:
    return np.hstack([X, np.ones((X.shape[0], 1))])


def _logistic_noise(rows: PrivateRows, epsilon: float, delta: float, C: float, perturbation: str, r: int = 1):
    # ``n`` here is the rows present: Λ = 1/(C n) and the extra regularization scale as 1/n, and
    # the fit minimises (1/n) Σ ℓ_i + (Λ_total/2)‖f‖² + bᵀf/n, i.e. n times it, Σ ℓ_i +
    # (n Λ_total/2)‖f‖² + bᵀf, where n Λ_total and the noise b depend on C, R, r, ε, δ only.
    # So with C fixed (by the public count, ``rows.public_n``), a row removed by
    # missing="drop" is one term of the sum replaced by the zero loss (convex, 0-Lipschitz,
    # 0-smooth): a special case of replacing it (docs/design.md §1.2).
    models = 1 if rows.n_classes <= 2 else rows.n_classes
    R = math.sqrt(rows.data_norm ** 2 + 1.0)
    return models, maps.objective_noise(epsilon / models, delta / models if perturbation == "gaussian" else 0.0,
                                        n=rows.n, data_norm=R, C=C, perturbation=perturbation, rows_per_unit=r)


def _draw(cfg: maps.ObjectiveNoise, p: int, size: int, rng) -> np.ndarray:
    if cfg.perturbation == "gamma":
        return noise.gamma_norm_vector(p, cfg.scale, size, rng=rng)
    return noise.gaussian(cfg.scale, (size, p), rng=rng)


def dp_logistic_coefficients(rows: PrivateRows, *, epsilon: float, delta: float, C: float | None = None,
                             perturbation: str = "gaussian", size: int | None = None, rows_per_unit: int = 1,
                             rng=None) -> np.ndarray:
    """The released coefficients of the DP logistic regression (intercept last).

    Parameters
    ----------
    rows : PrivateRows
    epsilon, delta, C, perturbation
        As for :func:`dp_logistic_label`.
    size : int, optional
        Independent releases solved at once (the audit); None for one.
    rows_per_unit : int, default 1
        With a privacy unit: at most this many rows of each person are used (one draw of
        rows for all ``size`` releases).
    rng : Generator, int or None

    Returns
    -------
    numpy.ndarray, shape (models, d + 1), or (size, models, d + 1)
        One row for a binary task, one per class (one-vs-rest) otherwise.
    """
    eps = check_epsilon(epsilon)
    dlt = check_delta(delta) if perturbation == "gaussian" else float(delta)
    gen = noise.check_rng(rng)
    rows, r, n_public = bounded(rows, rows_per_unit, gen)
    C = default_C(n=n_public, dimension=rows.X.shape[1], epsilon=eps) if C is None else float(C)
    models, cfg = _logistic_noise(rows, eps, dlt, C, perturbation, r)
    Xa = _augment(rows.X)
    out = []
    for j in range(models):
        positive = 1 if models == 1 else j
        s = np.where(rows.y == positive, 1.0, -1.0)
        b = _draw(cfg, Xa.shape[1], 1 if size is None else int(size), gen)
        out.append(fit_logistic(Xa, s, cfg.regularization + cfg.extra, b))
    coef = np.stack(out, axis=1)  # (size, models, p)
    return coef[0] if size is None else coef


def _predict_linear(coef: np.ndarray, X: np.ndarray) -> np.ndarray:
    scores = _augment(X) @ coef.T
    if coef.shape[0] == 1:
        return (scores[:, 0] > 0).astype(np.int64)
    return np.argmax(scores, axis=1).astype(np.int64)


def dp_logistic_label(rows: PrivateRows, *, epsilon: float, delta: float, C: float | None = None,
                      perturbation: str = "gaussian", rows_per_unit: int = 1, rng=None) -> LabelingResult:
    """Label the public rows with a logistic regression trained by objective perturbation.

    Parameters
    ----------
    rows : PrivateRows
        From :func:`private_rows` (or :func:`rows_from_arrays`).
    epsilon : float
        The budget of the whole run (every public row is labeled by one model).
    delta : float
        δ; spent only by ``perturbation="gaussian"``.
    C : float, optional
        Inverse regularization (``Λ = 1/(C n)``); default :func:`default_C`.
    perturbation : {"gaussian", "gamma"}
        Gaussian noise, (ε, δ) [KST12]; or a Gamma-norm vector, pure ε [CMS11].
    rows_per_unit : int, default 1
        With a privacy unit (``rows.units``): at most this many rows of each person are
        used, chosen at random, and the noise is calibrated for them (module docstring).
        Ignored per row.
    rng : Generator, int or None

    Returns
    -------
    LabelingResult
        Every public row answered; ``(ε, δ)`` of :func:`core.accounting.dp_training.logistic_guarantee`,
        per person when ``rows`` has a unit.
    """
    if not isinstance(rows, PrivateRows):
        raise ParameterError("The DP logistic regression reads the private rows (core.pipeline.mechanism_inputs), not votes.")
    eps = check_epsilon(epsilon)
    n_public = rows.public_n  # the file's count under missing="drop": never the rows left
    C = default_C(n=n_public, dimension=rows.X.shape[1], epsilon=eps) if C is None else float(C)
    coef = dp_logistic_coefficients(rows, epsilon=eps, delta=delta, C=C, perturbation=perturbation,
                                    rows_per_unit=rows_per_unit, rng=rng)
    labels = _predict_linear(coef, rows.X_public)
    r = None if rows.units is None else int(rows_per_unit)
    g = maps.logistic_guarantee(eps, delta, perturbation=perturbation, n_classes=rows.n_classes, rows_per_unit=r)
    params = {"epsilon_target": eps, "delta_target": float(delta), "C": C, "perturbation": perturbation,
              "data_norm": rows.data_norm, "encoded_columns": int(rows.X.shape[1]), "n_private": rows.public_n,
              **({} if r is None else {"rows_per_unit": r})}
    return make_result("dp-logistic", labels, None, None, g, params)


# ----------------------------------------------------------------------------- naive Bayes


def fit_naive_bayes(rows: PrivateRows, *, epsilon: float, delta: float, size: int = 1, rows_per_unit: int = 1,
                    rng=None):
    """The noisy sufficient statistics of the DP Gaussian naive Bayes, ``size`` independent draws.

    With a privacy unit, at most ``rows_per_unit`` rows of each person are used (one draw
    of rows for all ``size`` releases) and the noise is scaled for them.

    Returns
    -------
    counts : numpy.ndarray, shape (size, c)
    sums, squares : numpy.ndarray, shape (size, c, d)
        Of ``u = x/R_j − ½`` per class (features centred on their public range [0, 1]).
    """
    gen = noise.check_rng(rng)
    rows, r, _ = bounded(rows, rows_per_unit, gen)
    cfg = maps.naive_bayes_noise(epsilon, delta, dimension=max(1, rows.X.shape[1]), rows_per_unit=r)
    c, d = rows.n_classes, rows.X.shape[1]
    u = np.clip(rows.X, 0.0, 1.0) - 0.5
    onehot = (rows.y[:, None] == np.arange(c)[None, :]).astype(float)
    counts = onehot.sum(axis=0)
    sums = onehot.T @ u
    squares = onehot.T @ (u * u)
    return (counts + noise.gaussian(cfg.sigma_counts, (size, c), rng=gen),
            sums + noise.gaussian(cfg.sigma_sums, (size, c, d), rng=gen),
            squares + noise.gaussian(cfg.sigma_squares, (size, c, d), rng=gen))


def _nb_predict(counts, sums, squares, X: np.ndarray) -> np.ndarray:
    """Labels of the rows ``X`` by the naive Bayes of one draw of statistics (post-processing)."""
    nc = np.maximum(counts, 1.0)
    mean = sums / nc[:, None]
    var = np.clip(squares / nc[:, None] - mean ** 2, 1e-3, 0.25)
    u = np.clip(X, 0.0, 1.0) - 0.5
    log_prior = np.log(nc / nc.sum())
    ll = -0.5 * (np.log(var)[None] + (u[:, None, :] - mean[None]) ** 2 / var[None]).sum(axis=2)
    return np.argmax(ll + log_prior[None], axis=1).astype(np.int64)


def dp_naive_bayes_label(rows: PrivateRows, *, epsilon: float, delta: float, rows_per_unit: int = 1,
                         rng=None) -> LabelingResult:
    """Label the public rows with a Gaussian naive Bayes fitted by the Gaussian mechanism.

    Features must lie in [0, 1] (as :func:`private_rows` encodes them; others are
    clipped).  Class counts, per-class sums and sums of squares get Gaussian noise at
    the multiplier ``z`` solved for (ε, δ) (:func:`core.accounting.dp_training.naive_bayes_noise`);
    means, variances (floored at 1e-3) and priors follow, all post-processing.

    Parameters
    ----------
    rows : PrivateRows
    epsilon, delta : float
    rows_per_unit : int, default 1
        With a privacy unit: at most this many rows of each person are used, the noise
        scaled for them.  Ignored per row.
    rng : Generator, int or None

    Returns
    -------
    LabelingResult
    """
    if not isinstance(rows, PrivateRows):
        raise ParameterError("The DP naive Bayes reads the private rows (core.pipeline.mechanism_inputs), not votes.")
    eps, dlt = check_epsilon(epsilon), check_delta(delta)
    counts, sums, squares = fit_naive_bayes(rows, epsilon=eps, delta=dlt, rows_per_unit=rows_per_unit, rng=rng)
    labels = _nb_predict(counts[0], sums[0], squares[0], rows.X_public)
    r = None if rows.units is None else int(rows_per_unit)
    g = maps.naive_bayes_guarantee(eps, dlt, rows_per_unit=r)
    params = {"epsilon_target": eps, "delta_target": dlt, "encoded_columns": int(rows.X.shape[1]),
              "n_private": rows.public_n, **({} if r is None else {"rows_per_unit": r})}
    return make_result("dp-naive-bayes", labels, None, None, g, params)
