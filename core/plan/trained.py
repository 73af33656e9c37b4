"""Predictions of the DP-training routes from public quantities only (docs/design.md §10.7).

The DP-training routes (:mod:`core.mechanisms.dp_training`: ``dp-logistic``,
``dp-naive-bayes``) train one model on the private rows and label every public row with
it, so a plan of them needs no teachers' votes: it needs what the noise depends on --
the number of private rows ``n``, the encoded dimension, ε, δ, the number of classes --
and how far from the boundary the public rows lie.  :func:`predict_trained` reads:

* the PUBLIC rows, encoded as the route encodes them (:class:`PublicRows`; ranges and
  categories of the public rows, :func:`core.mechanisms.dp_training.public_encoding`),
  or a stand-in of ``d`` uniform columns when no public rows are at hand;
* an ASSUMED accuracy ``A`` of a logistic regression trained on all private rows
  WITHOUT privacy (a public assumption the user moves, as the teachers' quality), and
  the assumed class shares.

The model (no private row is read).  The private rows are taken to look like the public
rows: ``n_s = min(n, N_SIM)`` of the public rows, drawn with replacement, stand in for
them.  A *proxy task* on them has accuracy ``A``: class scores ``β (x − μ) W`` plus
intercepts, with ``W`` a random Gaussian matrix from a fixed public seed (a direction
that favours no encoded column: the true one is unknown, and the public rows' leading
principal direction, tried too, is too kind -- regularization shrinks it least), the
intercepts set so the classes have the assumed shares and ``β`` so that always answering
the likeliest class is right a share ``A`` of the time; labels are drawn from the
scores' softmax.  A non-private logistic regression (scikit-learn's default ``C = 1``,
what ``A`` stands for) and the route's real fit with the noise of the real route at the
real ``n`` then run on the stand-in rows
(:func:`core.accounting.dp_training.objective_noise` / ``naive_bayes_noise``; the
stand-in's empirical average replaces the ``n`` rows' average, the noise keeps the scale
of ``n`` rows).  The predicted label accuracy is ``A`` less the route's drop from
the non-private logistic regression on the proxy task (the noise, the route's extra
regularization and, for naive Bayes, its model) (each fit scored by its expected accuracy under the proxy's class
probabilities on the public rows), clipped to ``[1/c, 1]``.  Every public row is
answered: answered = m, correct = m × the predicted accuracy.

What it cannot know: how the true task's scores lie among the encoded columns (the
random direction stands in for it), and whether the private
rows differ from the public ones; ``experiments/plan_vs_measured.py`` measures the
prediction against real runs.  On real tables most of the miss is the route's gap to a
plain logistic regression WITHOUT noise (its regularization, or naive Bayes's model),
which depends on how the label lies; so a second ground is offered: ``route_accuracy``,
the assumed accuracy of the route's own model without its noise (at its regularization
for ε = 1, :data:`REFERENCE_EPSILON`).  Given it, the proxy is sharpened until the
route's noise-free fit on it is right that often (:func:`_route_bayes`), and the
prediction is that accuracy less the drop to the noisy fits: what privacy costs (the
noise and, below ε = 1, the stronger regularization), nothing else.

References
----------
The routes' papers (Chaudhuri, Monteleoni, Sarwate 2011; Kifer, Smith, Thakurta 2012) are
cited in :mod:`core.accounting.dp_training`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from core.errors import ParameterError

__all__ = ["PublicRows", "predict_trained", "trained_accuracy_default", "N_SIM", "N_SCORE", "TRAINED_DRAWS",
           "DIRECTIONS", "REFERENCE_EPSILON", "route_model_words"]

N_SIM = 3_000
"""At most this many stand-in private rows per simulated fit (the noise keeps the real n's scale)."""

N_SCORE = 4_000
"""At most this many public rows score the simulated fits."""

TRAINED_DRAWS = 4
"""Noise draws per prediction of a DP-training route."""

_SEED = 20_240_601
"""The public seed of the proxy task (a prediction is a public computation)."""

DIRECTIONS = ((0.0, 1.0), (0.0, -1.0), (2.0, 1.0), (2.0, -1.0), (-2.0, 1.0), (-2.0, -1.0))
"""How the label may lie among the encoded columns: ``(p, s)`` pairs of :func:`_proxy`.

The first is the central prediction (a random direction favouring no column); all six
give the prediction's range: a random direction, one tilted towards the public rows'
leading principal directions (where a label that moves many correlated columns at once
lies), one tilted towards the trailing ones (a label carried by rare or narrow columns),
each with either class on either side."""

RIDGE = 0.01
"""The covariance's ridge in :func:`_shaping`, as a share of its mean eigenvalue."""


@dataclass(frozen=True, eq=False)
class PublicRows:
    """The public rows encoded as a DP-training route encodes them (public: no private row).

    Attributes
    ----------
    X : numpy.ndarray, shape (m, d)
        Encoded public rows (numeric columns in [0, 1], categories one-hot).
    data_norm : float
        ``R``, the encoding's bound on a row's norm.
    source : str
        Where the rows came from, in words.
    """

    X: np.ndarray
    data_norm: float
    source: str = "the public rows"

    @property
    def m(self) -> int:
        """The number of public rows."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """The encoded dimension."""
        return int(self.X.shape[1])

    @classmethod
    def of(cls, table, public_X) -> "PublicRows":
        """Encode public rows with the encoding a DP-training route would use on ``table``.

        Parameters
        ----------
        table : core.data.Table
            The private table: only its column names and kinds are read.
        public_X : pandas.DataFrame
            The public rows' features.

        Returns
        -------
        PublicRows
        """
        from core.mechanisms.dp_training import public_encoding

        enc = public_encoding(table, public_X)
        return cls(np.asarray(enc.transform(public_X), dtype=float), float(enc.data_norm), "the public rows")

    @classmethod
    def from_frame(cls, public_X, *, source: str = "the public rows") -> "PublicRows":
        """Encode public rows whose column kinds are read from the rows themselves.

        A column pandas reads as numbers is numeric, any other categorical -- the kinds a
        private table of the same columns would have (:func:`core.data.load_table`).

        Parameters
        ----------
        public_X : pandas.DataFrame
            The public rows' features (no label column).
        source : str

        Returns
        -------
        PublicRows
        """
        import pandas as pd

        from core.mechanisms.dp_training import public_encoding

        frame = public_X.copy()
        numeric, categorical = [], []
        for col in frame.columns:
            as_num = pd.to_numeric(frame[col], errors="coerce")
            if as_num.notna().sum() >= max(1, int(0.99 * frame[col].notna().sum())):
                frame[col] = as_num
                numeric.append(col)
            else:
                frame[col] = frame[col].astype(object)
                categorical.append(col)
        if not numeric and not categorical:
            raise ParameterError("the public rows have no feature column.")

        class _Kinds:
            numeric_columns = numeric
            categorical_columns = categorical

        enc = public_encoding(_Kinds, frame)
        return cls(np.asarray(enc.transform(frame), dtype=float), float(enc.data_norm), source)

    @classmethod
    def standin(cls, m: int, d: int, *, rng=0) -> "PublicRows":
        """``m`` rows of ``d`` independent uniform [0, 1] columns: a stand-in when no public rows are given."""
        m, d = int(m), int(d)
        if m < 1 or d < 1:
            raise ParameterError(f"a stand-in needs m >= 1 rows and d >= 1 columns, got m={m}, d={d}.")
        gen = np.random.default_rng(rng)
        return cls(gen.random((min(m, N_SCORE), d)), math.sqrt(d), f"a stand-in of {d} uniform columns")


def trained_accuracy_default(quality, n_classes: int, *, k: int = 100, n: int | None = None) -> float:
    """The default assumed accuracy of a model trained on all private rows without privacy.

    The teachers' noise-free plurality under the assumed teacher quality: a model trained on
    all rows is taken to label as well as the teachers' plurality would without noise, so
    the ensemble's and the DP-training routes' predictions rest on one assumption.

    Parameters
    ----------
    quality : TeacherQuality
    n_classes : int
    k : int
    n : int, optional

    Returns
    -------
    float
    """
    from core.plan.quality import simulate_votes

    sim = simulate_votes(m=4000, k=max(1, int(k)), n_classes=int(n_classes), quality=quality, rng=_SEED, n=n)
    counts = sim.counts.astype(float)
    top = counts.max(axis=1, keepdims=True)
    ties = (counts == top).sum(axis=1)
    right = (counts[np.arange(counts.shape[0]), sim.truth] == top[:, 0]) / ties
    return float(np.clip(right.mean(), 1.0 / n_classes, 1.0))


def _softmax(scores: np.ndarray) -> np.ndarray:
    z = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def _shaping(X: np.ndarray, power: float) -> np.ndarray | None:
    """``S_p = V diag((λ + r)^{p/2}) Vᵀ`` of the public rows' covariance ``V diag(λ) Vᵀ``, scaled to unit RMS gain.

    ``r`` is :data:`RIDGE` times the mean eigenvalue (one-hot columns make the covariance
    singular).  ``p = 2`` tilts a direction towards the rows' leading principal directions,
    ``p = −2`` towards the trailing ones; ``p = 0`` returns None (no tilt).
    """
    if power == 0.0 or X.shape[1] < 2:
        return None
    lam, V = np.linalg.eigh(np.cov(X, rowvar=False))
    lam = np.maximum(lam, 0.0)
    lam = lam + RIDGE * max(float(lam.mean()), 1e-12)
    S = (V * lam ** (power / 2.0)) @ V.T
    return S / math.sqrt(float(np.sum(S * S)) / X.shape[1])


def _proxy(Xs: np.ndarray, n_classes: int, accuracy: float, shares: np.ndarray, direction: tuple[float, float] = (0.0, 1.0)):
    """The proxy task's class probabilities ``x ↦ softmax(β (x − μ) W + a)`` with Bayes accuracy ``accuracy``.

    ``W = s · S_p G``: ``G`` has independent standard normal entries from a fixed public seed
    (one column per class; for two classes the first is zero), ``S_p`` tilts it towards the
    public rows' leading (``p > 0``) or trailing (``p < 0``) principal directions
    (:func:`_shaping`; none at ``p = 0``: a direction that favours no feature) and the sign
    ``s`` says which class lies on which side -- ``direction = (p, s)``, one of
    :data:`DIRECTIONS`.
    """
    gen = np.random.default_rng(_SEED)
    X = Xs[: min(len(Xs), 2000)]
    mu = X.mean(axis=0)
    W = gen.standard_normal((X.shape[1], n_classes))
    power, sign = direction
    S = _shaping(X, float(power))
    if S is not None:
        W = S @ W
    W = float(sign) * W
    if n_classes == 2:
        W[:, 0] = 0.0
    raw = (X - mu) @ W
    unit = max(float(raw.std()), 1e-12)
    base = raw / unit
    log_shares = np.log(np.maximum(shares, 1e-12))
    a = log_shares.copy()

    def probs(beta: float, a: np.ndarray) -> np.ndarray:
        return _softmax(beta * base + a[None, :])

    def intercepts(beta: float, a: np.ndarray) -> np.ndarray:
        for _ in range(25):  # fixed point: the softmax's class shares equal the assumed shares
            got = probs(beta, a).mean(axis=0)
            step = log_shares - np.log(np.maximum(got, 1e-300))
            a = a + step
            if np.abs(step).max() < 1e-4:
                break
        return a

    def bayes(beta: float) -> tuple[float, np.ndarray]:
        b = intercepts(beta, a)
        return float(probs(beta, b).max(axis=1).mean()), b

    lo, hi, beta = 0.0, 1.0, 0.0
    if bayes(0.0)[0] < accuracy:
        while bayes(hi)[0] < accuracy and hi < 1e4:
            lo, hi = hi, hi * 2.0
        for _ in range(22):
            mid = 0.5 * (lo + hi)
            got, a = bayes(mid)
            lo, hi = (mid, hi) if got < accuracy else (lo, mid)
        beta = hi
    a = intercepts(beta, a)
    scale = beta / unit

    def score(Z: np.ndarray) -> np.ndarray:
        return _softmax(scale * ((Z - mu) @ W) + a[None, :])

    return score


def _expected_accuracy(labels: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Expected share right of labels (..., m) when row i's class is drawn from ``p[i]``."""
    return np.take_along_axis(np.broadcast_to(p, labels.shape + p.shape[-1:]), labels[..., None], axis=-1)[..., 0].mean(axis=-1)


def _objective(settings, epsilon: float, *, n: int, d: int, n_classes: int, data_norm: float):
    """The DP logistic regression's objective perturbation at ``epsilon`` (its noise and whole
    regularization, :func:`core.accounting.dp_training.objective_noise`, per one-vs-rest model) and
    the number of models: the route's own resolution of C, δ, the perturbation and the unit."""
    from core.accounting import dp_training as maps
    from core.mechanisms import dp_training as dpt

    perturbation = settings.get("perturbation") or "gaussian"
    delta = float(settings.get("delta") or 0.0)
    r = int(settings.get("rows_per_unit") or 1)
    C = settings.get("C")
    C = dpt.default_C(n=n, dimension=d, epsilon=epsilon) if C is None else float(C)
    models = 1 if n_classes <= 2 else int(n_classes)
    cfg = maps.objective_noise(epsilon / models, delta / models if perturbation == "gaussian" else 0.0, n=n,
                               data_norm=math.sqrt(data_norm ** 2 + 1.0), C=C, perturbation=perturbation,
                               rows_per_unit=r)
    return cfg, models


def _logistic_accuracies(Xs, y, X_score, p_score, *, n, n_classes, data_norm, settings, draws, gen):
    from core.mechanisms import dp_training as dpt

    cfg, models = _objective(settings, float(settings["epsilon"]), n=n, d=Xs.shape[1], n_classes=n_classes,
                             data_norm=data_norm)
    Xa = dpt._augment(Xs)
    ns = Xa.shape[0]
    scores_dp = np.zeros((draws, X_score.shape[0], models))
    Xsa = dpt._augment(X_score)
    for j in range(models):
        positive = 1 if models == 1 else j
        s = np.where(y == positive, 1.0, -1.0)
        # The stand-in's average replaces the n rows' average; the noise term b/n keeps the real n.
        b = dpt._draw(cfg, Xa.shape[1], draws, gen) * (ns / n)
        f_dp = np.vstack([dpt.fit_logistic(Xa, s, cfg.regularization + cfg.extra, b[t:t + 1]) for t in range(draws)])
        scores_dp[:, :, j] = f_dp @ Xsa.T
    lab_dp = (scores_dp[..., 0] > 0).astype(np.int64) if models == 1 else np.argmax(scores_dp, axis=2)
    return _expected_accuracy(lab_dp, p_score)


def _reference_accuracy(Xs, y, X_score, p_score, *, n, n_classes) -> float:
    """The proxy's non-private logistic regression (scikit-learn's default C = 1): the reference ``A`` stands for."""
    from core.mechanisms import dp_training as dpt

    models = 1 if n_classes <= 2 else n_classes
    Xa, Xsa = dpt._augment(Xs), dpt._augment(X_score)
    scores = np.zeros((X_score.shape[0], models))
    for j in range(models):
        s = np.where(y == (1 if models == 1 else j), 1.0, -1.0)
        scores[:, j] = Xsa @ dpt.fit_logistic(Xa, s, 1.0 / n, np.zeros((1, Xa.shape[1])))[0]
    labels = (scores[:, 0] > 0).astype(np.int64) if models == 1 else np.argmax(scores, axis=1)
    return float(_expected_accuracy(labels, p_score))


def _naive_bayes_accuracies(Xs, y, X_score, p_score, *, n, n_classes, settings, draws, gen):
    from core.accounting import dp_training as maps
    from core.mechanisms import dp_training as dpt

    eps, delta = float(settings["epsilon"]), float(settings["delta"])
    r = int(settings.get("rows_per_unit") or 1)
    d = Xs.shape[1]
    cfg = maps.naive_bayes_noise(eps, delta, dimension=max(1, d), rows_per_unit=r)
    scale = n / Xs.shape[0]  # the stand-in's statistics at the real n's scale
    u = np.clip(Xs, 0.0, 1.0) - 0.5
    onehot = (y[:, None] == np.arange(n_classes)[None, :]).astype(float)
    counts, sums, squares = onehot.sum(axis=0) * scale, (onehot.T @ u) * scale, (onehot.T @ (u * u)) * scale
    acc_dp = np.empty(draws)
    for t in range(draws):
        lab = dpt._nb_predict(counts + gen.normal(0.0, cfg.sigma_counts, counts.shape),
                              sums + gen.normal(0.0, cfg.sigma_sums, sums.shape),
                              squares + gen.normal(0.0, cfg.sigma_squares, squares.shape), X_score)
        acc_dp[t] = _expected_accuracy(lab, p_score)
    return acc_dp


REFERENCE_EPSILON = 1.0
"""The ε whose regularization a route's accuracy WITHOUT noise is assumed at (``route_accuracy``):
:func:`core.mechanisms.dp_training.default_C` regularizes more below ε = 1 and alike above it."""


def _n_sim(n: int, d: int, n_classes: int) -> int:
    """Stand-in private rows per simulated fit: at most n, :data:`N_SIM`, and a bound on the Hessians' cost."""
    p = d + 1
    budget = max(2_000, int(4e8 / (p * p * (1 if n_classes <= 2 else n_classes))))
    return max(1, min(int(n), N_SIM, budget))


def _clean_labels(Xs, y, X_score, *, mechanism, n, n_classes, data_norm, settings,
                  epsilon: float = REFERENCE_EPSILON) -> np.ndarray:
    """The route's model fitted on rows ``Xs`` WITHOUT its noise, at the regularization of ``epsilon``
    (default :data:`REFERENCE_EPSILON`; the logistic regression: its C and the extra regularization its
    proof needs there; naive Bayes: the exact class counts, sums and sums of squares at n's scale),
    and its labels of ``X_score``.  ``experiments/plan_vs_measured.py`` runs it on real rows as a
    NON-PRIVATE diagnostic."""
    from core.mechanisms import dp_training as dpt

    c = int(n_classes)
    if mechanism == "dp-naive-bayes":
        scale = n / Xs.shape[0]
        u = np.clip(Xs, 0.0, 1.0) - 0.5
        onehot = (y[:, None] == np.arange(c)[None, :]).astype(float)
        return dpt._nb_predict(onehot.sum(axis=0) * scale, (onehot.T @ u) * scale, (onehot.T @ (u * u)) * scale, X_score)
    cfg, models = _objective(settings, float(epsilon), n=n, d=Xs.shape[1], n_classes=c, data_norm=data_norm)
    Xa, Xsa = dpt._augment(Xs), dpt._augment(X_score)
    scores = np.zeros((X_score.shape[0], models))
    for j in range(models):
        sgn = np.where(y == (1 if models == 1 else j), 1.0, -1.0)
        scores[:, j] = Xsa @ dpt.fit_logistic(Xa, sgn, cfg.regularization + cfg.extra, np.zeros((1, Xa.shape[1])))[0]
    return (scores[:, 0] > 0).astype(np.int64) if models == 1 else np.argmax(scores, axis=1)


def _route_bayes(X, X_score, *, mechanism, n, n_classes, shares, direction, target, data_norm, settings) -> float:
    """The Bayes accuracy of the proxy task on which the route's model WITHOUT noise is right ``target``.

    A public, deterministic computation (cached: :data:`_CALIBRATIONS`): the stand-in rows and
    their label draws come from a fixed public seed and stay the same at every step of a
    bisection on the proxy's Bayes accuracy; a target the proxy cannot reach (above what the
    sharpest proxy gives, or below the least sharp) stops at that end.  It does not depend on
    ε (the fit is at :data:`REFERENCE_EPSILON`'s regularization), so a plan over an ε grid
    calibrates once per route and direction.
    """
    import hashlib

    c = int(n_classes)
    ref = {k: settings.get(k) for k in ("delta", "C", "perturbation", "rows_per_unit")}
    # X_score is drawn from X, and the stand-in rows Xs from all of X: the key hashes both (two public
    # tables alike in their scored rows only must not share a calibration)
    digest = hashlib.sha256(np.ascontiguousarray(X, dtype=float).tobytes())
    digest.update(np.ascontiguousarray(X_score, dtype=float).tobytes())
    key = (digest.hexdigest(), X.shape, X_score.shape, mechanism, int(n), c,
           tuple(np.round(np.asarray(shares, dtype=float), 12)), tuple(direction), float(target), float(data_norm),
           tuple(sorted((k, None if v is None else str(v)) for k, v in ref.items())))
    cached = _CALIBRATIONS.get(key)  # one read: another session may clear the cache in between
    if cached is not None:
        return cached
    gen = np.random.default_rng(_SEED + 1)
    ns = _n_sim(int(n), X.shape[1], c)  # as many stand-in rows as the prediction's fits
    Xs = X[gen.integers(0, X.shape[0], ns)]
    uniforms = gen.random(ns)

    def clean(bayes: float) -> float:
        score = _proxy(X_score, c, bayes, shares, direction)
        p_score = score(X_score)
        y = (uniforms[:, None] > np.cumsum(score(Xs), axis=1)).sum(axis=1).clip(0, c - 1).astype(np.int64)
        lab = _clean_labels(Xs, y, X_score, mechanism=mechanism, n=n, n_classes=c, data_norm=data_norm,
                            settings=settings)
        return float(_expected_accuracy(lab[None], p_score)[0])

    lo, hi = max(float(np.max(shares)), 1.0 / c) + 1e-6, 0.999
    if clean(hi) <= target:
        bayes = hi
    elif clean(lo) >= target:
        bayes = lo
    else:
        for _ in range(CALIBRATION_STEPS):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if clean(mid) < target else (lo, mid)
        bayes = 0.5 * (lo + hi)
    if len(_CALIBRATIONS) >= 512:
        _CALIBRATIONS.clear()
    _CALIBRATIONS[key] = bayes
    return bayes


_CALIBRATIONS: dict = {}
"""Cache of :func:`_route_bayes` (public computations on public rows and assumed numbers)."""

CALIBRATION_STEPS = 10
"""Bisection steps of :func:`_route_bayes` (the proxy's Bayes accuracy to about 5e-4)."""


def route_model_words(name: str, settings: Mapping[str, Any], *, n: int, n_classes: int, public: PublicRows) -> str:
    """What a DP-training route's model without noise is, in words a user can reproduce on public data.

    The model ``route_accuracy`` is about (:func:`predict_trained`), as :func:`_clean_labels`
    fits it: the logistic regression's C is the route's whole regularization at
    :data:`REFERENCE_EPSILON` (its C and the extra its proof needs, per one-vs-rest model for
    more than two classes, each at ε / classes), so a user can fit the same model on similar
    public data.

    Parameters
    ----------
    name : {"dp-logistic", "dp-naive-bayes"}
    settings : mapping
        The route's resolved settings (δ, C, perturbation, rows per unit; ε is not read).
    n : int
        Private rows (persons with a unit).
    n_classes : int
    public : PublicRows

    Returns
    -------
    str
    """
    encoding = ("on the columns scaled to [0, 1] by the public rows' ranges (a skewed column on a log scale, "
                "categories one-hot)")
    if name == "dp-naive-bayes":
        return f"a Gaussian naive Bayes {encoding}, variances kept between 0.001 and 0.25"
    n, c = int(n), int(n_classes)
    cfg, models = _objective(settings, REFERENCE_EPSILON, n=n, d=public.d, n_classes=c, data_norm=public.data_norm)
    C = 1.0 / (n * (cfg.regularization + cfg.extra))
    call = f"LogisticRegression(C={C:.3g}, fit_intercept=False)"
    if models == 1:
        return (f"a logistic regression {encoding}, the intercept a column of ones, all {public.d + 1} weights "
                f"regularized with C = {C:.3g} (scikit-learn's {call} on those columns and the ones)")
    return (f"{models} one-vs-rest logistic regressions (one per class; the label is the class with the highest "
            f"score) {encoding}, the intercept a column of ones, all {public.d + 1} weights of each regularized with "
            f"C = {C:.3g} (scikit-learn's OneVsRestClassifier({call}) on those columns and the ones)")


def predict_trained(mechanism: str, settings: Mapping[str, Any], *, n: int, n_classes: int, public: PublicRows,
                    m: int | None = None, accuracy: float, class_shares=None, draws: int = TRAINED_DRAWS,
                    spread: bool = True, route_accuracy: float | None = None, rng=0) -> dict[str, Any]:
    """The predicted outcome of a DP-training run (module docstring); no private row is read.

    Parameters
    ----------
    mechanism : {"dp-logistic", "dp-naive-bayes"}
    settings : mapping
        The resolved settings (:func:`core.pipeline.resolve`): ``epsilon``, ``delta`` and the route's own.
    n : int
        Private rows (persons with a privacy unit).
    n_classes : int
    public : PublicRows
        The public rows as the route encodes them (or a stand-in).
    m : int, optional
        The public rows to label (default ``public.m``).
    accuracy : float
        ``A``: the assumed accuracy of a logistic regression trained on all private rows
        without privacy (the one reference of both routes: the naive Bayes's prediction
        includes its distance from the logistic regression on the proxy task).
    class_shares : array-like, optional
        Assumed class shares (default balanced).
    draws : int
        Noise draws (half as many for each of the range's other directions).
    spread : bool, default True
        Also predict under the other :data:`DIRECTIONS` and return the range.
    route_accuracy : float, optional
        The assumed accuracy of THE ROUTE'S OWN MODEL trained on all private rows without
        its noise, at its regularization for ε = 1 (:data:`REFERENCE_EPSILON`).  Given, it
        replaces ``accuracy`` as the prediction's ground: the proxy task is sharpened until
        the route's noise-free fit on it is right ``route_accuracy`` of the time
        (:func:`_route_bayes`), and the prediction is ``route_accuracy`` less the
        drop from that fit to the real route's noisy fits (the noise and, below ε = 1, the
        stronger regularization): what privacy costs, and nothing of the route's gap to a
        plain logistic regression, which depends on how the label lies (docs/design.md §10.7).
    rng : int, Generator or None
        Randomness of the simulation (public).

    Returns
    -------
    dict
        ``accuracy`` (mean over draws, the central direction), ``accuracy_sd``, ``nonprivate``
        (the simulated fit without noise), ``drop`` (its accuracy less the noisy fits'),
        ``low`` and ``high`` (the least and the most of the predictions under every direction
        of :data:`DIRECTIONS`; both ``accuracy`` without ``spread``), ``draws``, ``n_sim``, ``m``.
    """
    c = int(n_classes)
    A = float(accuracy)
    if not (0.0 < A <= 1.0):
        raise ParameterError(f"the assumed accuracy of a model trained without privacy must lie in (0, 1], got {A!r}.")
    if not isinstance(public, PublicRows):
        raise ParameterError("public must be a core.plan.PublicRows (the public rows as the route encodes them).")
    shares = np.full(c, 1.0 / c) if class_shares is None else np.asarray(class_shares, dtype=float)
    if shares.shape != (c,):
        raise ParameterError(f"class_shares gives {shares.size} classes, the job has {c}.")
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    X = np.asarray(public.X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ParameterError("the public rows must be a 2-D array with at least one row and one column.")
    if mechanism not in ("dp-logistic", "dp-naive-bayes"):
        raise ParameterError(f"{mechanism} is not a DP-training route.")
    pick = np.random.default_rng(_SEED)
    X_score = X if X.shape[0] <= N_SCORE else X[pick.choice(X.shape[0], N_SCORE, replace=False)]
    n = int(n)
    ns = _n_sim(n, X.shape[1], c)
    Xs = X[gen.integers(0, X.shape[0], ns)]
    draws = max(1, int(draws))

    if route_accuracy is not None:
        route_accuracy = float(route_accuracy)
        if not (0.0 < route_accuracy <= 1.0):
            raise ParameterError(f"the assumed accuracy of the route's model without noise must lie in (0, 1], got "
                                 f"{route_accuracy!r}.")

    def predicted(direction: tuple[float, float], draws: int) -> tuple[np.ndarray, float, float]:
        if route_accuracy is not None:  # ground: the route's own model without noise (module docstring)
            bayes = _route_bayes(X, X_score, mechanism=mechanism, n=n, n_classes=c, shares=shares,
                                 direction=direction, target=route_accuracy, data_norm=public.data_norm,
                                 settings=settings)
            score = _proxy(X_score, c, bayes, shares, direction)
            p_score = score(X_score)
            y = (gen.random(ns)[:, None] > np.cumsum(score(Xs), axis=1)).sum(axis=1).clip(0, c - 1).astype(np.int64)
            clean = _clean_labels(Xs, y, X_score, mechanism=mechanism, n=n, n_classes=c, data_norm=public.data_norm,
                                  settings=settings)
            acc_np = float(_expected_accuracy(clean[None], p_score)[0])
            ground = route_accuracy
        else:
            score = _proxy(X_score, c, max(A, 1.0 / c), shares, direction)
            p_score = score(X_score)
            y = (gen.random(ns)[:, None] > np.cumsum(score(Xs), axis=1)).sum(axis=1).clip(0, c - 1).astype(np.int64)
            acc_np = _reference_accuracy(Xs, y, X_score, p_score, n=n, n_classes=c)
            ground = A
        if mechanism == "dp-logistic":
            acc_dp = _logistic_accuracies(Xs, y, X_score, p_score, n=n, n_classes=c, data_norm=public.data_norm,
                                          settings=settings, draws=draws, gen=gen)
        else:
            acc_dp = _naive_bayes_accuracies(Xs, y, X_score, p_score, n=n, n_classes=c, settings=settings,
                                             draws=draws, gen=gen)
        drop = float(acc_np) - np.asarray(acc_dp, dtype=float)
        return np.clip(ground - drop, 1.0 / c, 1.0), float(acc_np), float(drop.mean())

    pred, acc_np, drop = predicted(DIRECTIONS[0], draws)
    means = [float(pred.mean())]
    if spread:
        means += [float(predicted(d, max(1, draws // 2))[0].mean()) for d in DIRECTIONS[1:]]
    ddof = 1 if draws > 1 else 0
    return {"accuracy": float(pred.mean()), "accuracy_sd": float(pred.std(ddof=ddof)), "nonprivate": acc_np,
            "drop": drop, "low": min(means), "high": max(means), "draws": draws, "n_sim": ns,
            "m": int(X.shape[0] if m is None else m)}
