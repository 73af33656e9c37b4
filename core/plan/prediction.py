"""Predictions of a labeling run from public quantities only (docs/design.md §10).

:func:`predict` simulates votes under an assumed :class:`~core.plan.TeacherQuality`
(:func:`~core.plan.simulate_votes`) for a job of ``n`` private rows, ``k`` teachers,
``m`` public queries and ``n_classes`` classes, and runs the real registered mechanism
on them (:func:`~core.plan.outcomes`): the predicted answered, correct, wrong, ⊥ and
not-processed counts with their spread over the draws, the run's data-independent
guarantee, and whether the run would be *useful* -- its answered labels more often right
than a labeler that always answers the majority class (whose share is part of the
assumption).  When it would not be, :attr:`Prediction.advice` says what would be needed
instead (:mod:`core.plan.advice`).  Nothing private is read, so a prediction costs no
privacy; the same ``rng`` seed gives the same prediction, so a control moved back and
forth shows the same numbers.

:func:`predict_many` predicts several (mechanism, settings) requests for one job;
:func:`sweep` varies one setting (or ``k``, ``m``, ``n``) over values with the same
random numbers for each, for smooth curves.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE18] N. Papernot, S. Song, I. Mironov, A. Raghunathan, K. Talwar, Ú. Erlingsson.
   Scalable Private Learning with PATE. ICLR 2018.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from core.errors import ParameterError
from core.plan.engine import OUTCOME_FIELDS, outcomes
from core.plan.quality import TeacherQuality, simulate_votes

__all__ = ["Prediction", "predict", "predict_many", "sweep", "MIN_GAIN", "ROUTE_SLACK", "JOB_SIZES"]

ROUTE_SLACK = 0.02
"""How far the proxy's noise-free accuracy may end from an assumed ``route_accuracy`` before the plan says
it could not reach it."""

MIN_GAIN = 0.02
"""A run is useful when its answered labels are right at least this much more often than the majority class."""

JOB_SIZES = ("n", "m", "k", "n_classes")
"""The job's sizes, which :func:`sweep` can vary like a setting."""


@dataclass(frozen=True)
class Prediction:
    """The predicted outcome of one labeling run (no private data used).

    Attributes
    ----------
    mechanism : str
        The registered mechanism predicted.
    settings : dict
        The settings as requested (``epsilon`` where given).
    epsilon, delta : float
        The run's data-independent guarantee (NaN when the settings are refused).
    m : int
        Public queries.
    answered, correct, wrong, bottom, not_processed : float
        Mean counts over the draws.
    answered_sd, correct_sd, wrong_sd, bottom_sd, not_processed_sd : float
        Their standard deviations over the draws.
    draws : int
    feasible : bool
        False when the settings are refused or can answer (almost) nothing.
    reason : str or None
    useful : bool
        The answered labels beat always answering the majority class by :data:`MIN_GAIN`.
    advice : str or None
        When not useful: what would be needed instead, in words.
    n, k, n_classes : int
        The job's sizes.
    quality : TeacherQuality
        The assumption the prediction rests on.
    majority_share : float
        The assumed share of the most common class.
    resolved : dict
        The settings every draw ran with (noise derived from ε).
    model_accuracy : float or None
        For a DP-training route: the assumed accuracy of a logistic regression trained on
        all private rows without privacy (:mod:`core.plan.trained`); None for the ensemble.
    route_accuracy : float or None
        For a DP-training route predicted from the assumed accuracy of the route's own model
        without its noise (``route_accuracy`` of :func:`predict`): that accuracy; the
        prediction then rests on it, not on ``model_accuracy``.  None otherwise.
    route_reached : float or None
        With ``route_accuracy``: how often the route's noise-free fit is right on the proxy
        task the plan calibrated to it (the central direction).  More than
        :data:`ROUTE_SLACK` from ``route_accuracy`` means the proxy could not reach the
        assumption (:func:`core.plan.trained.predict_trained`), and the noise's cost was
        taken at the proxy's end; :attr:`route_unreached` says so.
    accuracy_range : tuple of float or None
        For a DP-training route: the least and the most predicted label accuracy over the
        ways the label may lie among the encoded columns (:data:`core.plan.trained.DIRECTIONS`;
        the central prediction, :attr:`label_accuracy`, is one of them) -- what the
        public rows cannot tell.  None for the ensemble or when not asked for.
    """

    mechanism: str
    settings: dict
    epsilon: float
    delta: float
    m: int
    answered: float
    correct: float
    wrong: float
    bottom: float
    not_processed: float
    answered_sd: float
    correct_sd: float
    wrong_sd: float
    bottom_sd: float
    not_processed_sd: float
    draws: int
    feasible: bool
    reason: str | None
    useful: bool
    advice: str | None
    n: int = 0
    k: int = 0
    n_classes: int = 2
    quality: TeacherQuality = field(default_factory=TeacherQuality)
    majority_share: float = 0.5
    resolved: dict = field(default_factory=dict)
    model_accuracy: float | None = None
    accuracy_range: tuple[float, float] | None = None
    route_accuracy: float | None = None
    route_reached: float | None = None

    @property
    def route_unreached(self) -> bool:
        """Whether the plan's proxy could not reach the assumed ``route_accuracy`` (by more than :data:`ROUTE_SLACK`).

        Returns
        -------
        bool
        """
        return (self.route_accuracy is not None and self.route_reached is not None
                and abs(self.route_reached - self.route_accuracy) > ROUTE_SLACK)

    @property
    def trained(self) -> bool:
        """Whether the route trains one model with DP on the private rows (no teachers).

        Returns
        -------
        bool
            True when the prediction carries the trained model's accuracy.
        """
        return self.model_accuracy is not None

    @property
    def label_accuracy(self) -> float:
        """Predicted share of the answered labels that are right (NaN when none is answered).

        Returns
        -------
        float
        """
        return self.correct / self.answered if self.answered > 0 else float("nan")

    @property
    def useful_below(self) -> float:
        """The largest share of the most common class at which these labels stay useful.

        A run is useful while its answered labels beat always answering the majority class
        by :data:`MIN_GAIN`, so the verdict holds for any majority share below
        ``label_accuracy − MIN_GAIN`` (NaN when it answers under 1 % of the queries).  The
        majority share itself is private: a plan assumes it (balanced by default) and states
        this bound, so that a user who knows the table is skewed sees where the verdict turns
        (docs/design.md §10.9).

        Returns
        -------
        float
        """
        if self.answered < max(1.0, 0.01 * self.m):
            return float("nan")
        return float(self.label_accuracy - MIN_GAIN)

    @property
    def majority_correct(self) -> float:
        """Labels a labeler that answers every query with the majority class gets right.

        Returns
        -------
        float
        """
        return self.majority_share * self.m

    def summary(self) -> str:
        """One sentence: the prediction, marked as such.

        Returns
        -------
        str
        """
        if not self.feasible and self.answered == 0:
            return f"predicted — no private data used: {self.mechanism} answers nothing ({self.reason})"
        acc = self.label_accuracy
        return (f"predicted — no private data used: {self.mechanism} answers {self.answered:.0f} ± "
                f"{self.answered_sd:.0f} of {self.m}, {self.correct:.0f} ± {self.correct_sd:.0f} right"
                + (f" ({acc:.0%} of answered; always the majority class: {self.majority_share:.0%})" if acc == acc else ""))


def _is_useful(answered: float, correct: float, majority: float, m: int) -> bool:
    if answered < max(1.0, 0.01 * m):
        return False
    return correct / answered >= majority + MIN_GAIN


def _sizes(n, m, k, n_classes) -> tuple[int, int, int, int]:
    from core.validation import check_integer

    n = check_integer(n, "n", minimum=1)
    m = check_integer(m, "m", minimum=1)
    k = check_integer(k, "k", minimum=1)
    n_classes = check_integer(n_classes, "n_classes", minimum=2)
    if k > n:
        raise ParameterError(f"k = {k} teachers need at least one private row each; n = {n}.")
    return n, m, k, n_classes


def predict(mechanism: str, settings: Mapping[str, Any], *, n: int, m: int, k: int, n_classes: int,
            quality: TeacherQuality | None = None, draws: int = 20, rng=0, advise: bool = True,
            max_seconds: float | None = None, public=None, model_accuracy: float | None = None,
            spread: bool = True, route_accuracy: Mapping[str, float] | None = None) -> Prediction:
    """Predict a labeling run from public quantities and an assumed teacher quality (zero privacy cost).

    Parameters
    ----------
    mechanism : str
        A registered mechanism's name.
    settings : mapping
        Its settings, as for :func:`core.pipeline.label` (``epsilon`` for a mechanism whose
        noise follows from ε).
    n : int
        Private rows (public as a size; with ``quality.rows`` it sets the rows per teacher).
    m : int
        Public queries to label.
    k : int
        Teachers.
    n_classes : int
        Classes.
    quality : TeacherQuality, optional
        The assumption (default :class:`TeacherQuality`'s defaults).
    draws : int
        Simulated runs (each on its own simulated votes).
    rng : int, Generator or None
        Randomness of the simulation; a fixed seed gives the same prediction every time.
    advise : bool
        When not useful, look for what would be needed instead (:mod:`core.plan.advice`).
    max_seconds : float, optional
        A time budget for mechanisms run once per draw (:func:`core.plan.outcomes`);
        ``Prediction.draws`` says how many draws ran.
    public : core.plan.PublicRows, optional
        For a DP-training route (``dp-logistic``, ``dp-naive-bayes``): the public rows as
        the route encodes them (:meth:`core.plan.PublicRows.of`) or a stand-in
        (:meth:`core.plan.PublicRows.standin`).  Without it such a route is refused with the reason.
    model_accuracy : float, optional
        For a DP-training route: the assumed accuracy of a logistic regression trained on
        all private rows without privacy (default: the teachers' noise-free plurality
        under ``quality``, :func:`core.plan.trained.trained_accuracy_default`, so both
        kinds of route rest on one assumption).  Ignored by the ensemble's mechanisms.
    spread : bool, default True
        For a DP-training route: also predict under every way the label may lie among the
        encoded columns (:data:`core.plan.trained.DIRECTIONS`) and carry the range
        (``Prediction.accuracy_range``); False for the central prediction alone (a third
        of the time).
    route_accuracy : mapping, optional
        ``{route: accuracy}`` for DP-training routes: the assumed accuracy of the route's
        own model trained on all private rows WITHOUT its noise (at its regularization for
        ε = 1, :data:`core.plan.trained.REFERENCE_EPSILON`).  For a route named here the
        prediction rests on it instead of ``model_accuracy`` and predicts what privacy
        costs only (:func:`core.plan.trained.predict_trained`; docs/design.md §10.7).

    Returns
    -------
    Prediction
        Settings the mechanism refuses give ``feasible=False`` with the reason, not an error.

    Raises
    ------
    ParameterError
        For an unknown mechanism or impossible job sizes.
    """
    from core.mechanisms import registry

    registry.get(mechanism)
    n, m, k, n_classes = _sizes(n, m, k, n_classes)
    quality = TeacherQuality() if quality is None else quality
    if not isinstance(quality, TeacherQuality):
        raise ParameterError("quality must be a core.plan.TeacherQuality.")
    draws = max(1, int(draws))
    majority = quality.majority_share(n_classes)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    common = dict(mechanism=mechanism, settings=dict(settings), m=m, draws=draws, n=n, k=k, n_classes=n_classes,
                  quality=quality, majority_share=majority)
    routes = check_route_accuracy(route_accuracy)
    if registry.get(mechanism).inputs == "rows":
        return _predict_trained(mechanism, settings, common, public=public, model_accuracy=model_accuracy,
                                advise=advise, rng=gen, spread=spread, route_accuracy=routes.get(mechanism))
    sim = simulate_votes(m=m, k=k, n_classes=n_classes, quality=quality, rng=gen, draws=draws, n=n)
    try:
        out = outcomes(sim.counts, sim.truth, mechanism, settings, rng=gen, max_seconds=max_seconds)
    except ParameterError as exc:
        zeros = {f: 0.0 for f in OUTCOME_FIELDS}
        pred = Prediction(epsilon=float("nan"), delta=float("nan"), **zeros, **{f"{f}_sd": 0.0 for f in OUTCOME_FIELDS},
                          feasible=False, reason=str(exc), useful=False, advice=None, **common)
        return pred
    mean, sd = out.mean(), out.sd()
    useful = _is_useful(mean["answered"], mean["correct"], majority, m)
    common["draws"] = out.draws
    pred = Prediction(epsilon=out.epsilon, delta=out.delta, **mean, **{f"{f}_sd": v for f, v in sd.items()},
                      feasible=out.feasible, reason=out.reason, useful=useful, advice=None, resolved=out.settings,
                      **common)
    if not useful and advise:
        from dataclasses import replace

        from core.plan.advice import advise as _advise

        pred = replace(pred, advice=_advise(pred, predict))
    return pred


def _refused(common: dict, reason: str, **extra) -> Prediction:
    zeros = {f: 0.0 for f in OUTCOME_FIELDS}
    return Prediction(epsilon=float("nan"), delta=float("nan"), **zeros, **{f"{f}_sd": 0.0 for f in OUTCOME_FIELDS},
                      feasible=False, reason=reason, useful=False, advice=None, **common, **extra)


def check_route_accuracy(route_accuracy) -> dict[str, float]:
    """Check ``{route: accuracy}`` of the DP-training routes' own models without noise.

    Parameters
    ----------
    route_accuracy : mapping or None

    Returns
    -------
    dict
        Route name to accuracy in (0, 1]; empty for None.

    Raises
    ------
    ParameterError
        For a name that is not a DP-training route, or an accuracy outside (0, 1].
    """
    from core.mechanisms import registry

    if route_accuracy is None:
        return {}
    if not isinstance(route_accuracy, Mapping):
        raise ParameterError("route_accuracy must map a DP-training route's name to an accuracy, e.g. "
                             "{'dp-logistic': 0.7}.")
    routes = [name for name in registry.names() if registry.get(name).inputs == "rows"]
    out = {}
    for name, value in route_accuracy.items():
        if name not in routes:
            raise ParameterError(f"route_accuracy names {name!r}, which is not a DP-training route "
                                 f"({', '.join(routes)}).")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ParameterError(f"the accuracy of {name} without noise must be a number, got {value!r}.") from None
        if not (0.0 < v <= 1.0):
            raise ParameterError(f"the accuracy of {name} without noise must lie in (0, 1], got {value!r}.")
        out[name] = v
    return out


def _predict_trained(mechanism: str, settings: Mapping[str, Any], common: dict, *, public, model_accuracy,
                     advise: bool, rng, spread: bool = True, route_accuracy: float | None = None) -> Prediction:
    """A DP-training route's prediction (:mod:`core.plan.trained`): every public row answered."""
    from dataclasses import replace
    from functools import partial

    from core import pipeline
    from core.mechanisms import registry
    from core.plan.trained import predict_trained, trained_accuracy_default

    n, m, k, c, quality = common["n"], common["m"], common["k"], common["n_classes"], common["quality"]
    A = (trained_accuracy_default(quality, c, k=k, n=n) if model_accuracy is None else float(model_accuracy))
    if public is None:
        return _refused(common, f"{registry.get(mechanism).title} is predicted from the public rows' encoding; "
                        "give the public rows (on the command line --public FILE, or --d D for a stand-in of D "
                        "columns)", model_accuracy=A)
    try:
        params = pipeline.resolve(mechanism, settings, m)
        guarantee = registry.get(mechanism).privacy_map(m, **params)
        out = predict_trained(mechanism, params, n=n, n_classes=c, public=public, m=m, accuracy=A,
                              class_shares=quality.shares(c), spread=spread, route_accuracy=route_accuracy, rng=rng)
    except ParameterError as exc:
        return _refused(common, str(exc), model_accuracy=A, route_accuracy=route_accuracy)
    acc, sd = out["accuracy"], out["accuracy_sd"]
    counts = {"answered": float(m), "correct": acc * m, "wrong": (1.0 - acc) * m, "bottom": 0.0, "not_processed": 0.0}
    sds = {"answered_sd": 0.0, "correct_sd": sd * m, "wrong_sd": sd * m, "bottom_sd": 0.0, "not_processed_sd": 0.0}
    useful = _is_useful(float(m), acc * m, common["majority_share"], m)
    pred = Prediction(epsilon=float(guarantee.epsilon), delta=float(guarantee.delta), **counts, **sds, feasible=True,
                      reason=None, useful=useful, advice=None, resolved=dict(params), model_accuracy=A,
                      accuracy_range=(out["low"], out["high"]) if spread else None, route_accuracy=route_accuracy,
                      route_reached=None if route_accuracy is None else float(out["nonprivate"]),
                      **{**common, "draws": out["draws"]})
    if not useful and advise:
        from core.plan.advice import advise as _advise

        pred = replace(pred, advice=_advise(pred, partial(
            predict, public=public, model_accuracy=A,
            route_accuracy=None if route_accuracy is None else {mechanism: route_accuracy})))
    return pred


def predict_many(requests: Sequence[tuple[str, Mapping[str, Any]]], *, n: int, m: int, k: int, n_classes: int,
                 quality: TeacherQuality | None = None, draws: int = 20, rng=0, advise: bool = True, public=None,
                 model_accuracy: float | None = None, spread: bool = True,
                 route_accuracy: Mapping[str, float] | None = None) -> list[Prediction]:
    """Predict several (mechanism, settings) requests for one job (each with the same seed).

    Parameters
    ----------
    requests : sequence of (str, mapping)
    n, m, k, n_classes : int
    quality : TeacherQuality, optional
    draws : int
    rng : int or None
        The seed every request's simulation starts from (common random numbers).
    advise : bool
    public, model_accuracy, spread, route_accuracy
        For the DP-training routes, as for :func:`predict`.

    Returns
    -------
    list of Prediction
    """
    seed = _seed_of(rng)
    return [predict(name, s, n=n, m=m, k=k, n_classes=n_classes, quality=quality, draws=draws, rng=seed, advise=advise,
                    public=public, model_accuracy=model_accuracy, spread=spread, route_accuracy=route_accuracy)
            for name, s in requests]


def _seed_of(rng) -> int | None:
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63 - 1))
    return None if rng is None else int(rng)


def sweep(mechanism: str, settings: Mapping[str, Any], *, vary: str, values: Sequence[Any], n: int, m: int, k: int,
          n_classes: int, quality: TeacherQuality | None = None, draws: int = 20, rng=0,
          advise: bool = False, public=None, model_accuracy: float | None = None,
          spread: bool = False, route_accuracy: Mapping[str, float] | None = None) -> list[Prediction]:
    """Predictions with one setting (or a job size ``n``, ``m``, ``k``, ``n_classes``) varied.

    Every value is simulated from the same seed (common random numbers), so the curve's
    steps come from the setting, not from the simulation.

    Parameters
    ----------
    mechanism : str
    settings : mapping
    vary : str
        A setting's name (e.g. ``"epsilon"``, ``"T"``) or one of :data:`JOB_SIZES`.
    values : sequence
    n, m, k, n_classes : int
    quality : TeacherQuality, optional
    draws : int
    rng : int or None
    advise : bool
    public, model_accuracy, spread, route_accuracy
        For the DP-training routes, as for :func:`predict` (the range off by default: a curve
        draws the central prediction).

    Returns
    -------
    list of Prediction, one per value
    """
    seed = _seed_of(rng)
    sizes = dict(n=n, m=m, k=k, n_classes=n_classes)
    out = []
    for value in values:
        s, z = dict(settings), dict(sizes)
        if vary in JOB_SIZES:
            z[vary] = value
        else:
            s[vary] = value
        out.append(predict(mechanism, s, **z, quality=quality, draws=draws, rng=seed, advise=advise, public=public,
                           model_accuracy=model_accuracy, spread=spread, route_accuracy=route_accuracy))
    return out
