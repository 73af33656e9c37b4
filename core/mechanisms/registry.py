"""The one registry of labeling mechanisms.

Every mechanism is registered once, here, with everything its callers need: its name
(one spelling everywhere: the library, the app, the command line, the audit, the
estimator, the experiments and the exports), a title and a one-line description, its
public parameters (name, type, range, default, help), its labeling function, its
privacy map (public parameters and the number of queries -> the guarantee, before any
data is seen), the inverse that spends a target ε (which noise parameter follows from
ε), and its audit scenario.  The app's mechanism selector and parameter widgets, the
command line's ``--mechanism`` choices, flags and ``--help``, the audit's list, the
estimator and the experiments are all generated from :data:`REGISTRY`; adding a
mechanism is one module plus one :func:`register` call (docs/design.md §5,
docs/API.md "Adding a mechanism").  An installed package adds its mechanisms through the
entry-point group :data:`ENTRY_POINT_GROUP` (``private_label_lab.mechanisms``): they are
registered the first time the registry is read (:func:`load_plugins`).

Parameters are validated by the labeling function itself (one validation path:
:mod:`core.validation`); the registry only describes them.

References
----------
.. [BTT18] R. Bassily, O. Thakkar, A. Thakurta. Model-Agnostic Private Learning. NeurIPS 2018.
.. [PATE17] N. Papernot, M. Abadi, Ú. Erlingsson, I. Goodfellow, K. Talwar. Semi-supervised
   Knowledge Transfer for Deep Learning from Private Training Data. ICLR 2017.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from core.errors import ParameterError

__all__ = ["Parameter", "TestPicture", "Mechanism", "REGISTRY", "register", "unregister", "get", "names", "PARAMETERS",
           "ENTRY_POINT_GROUP", "load_plugins", "BUDGET"]


@dataclass(frozen=True)
class Parameter:
    """A public parameter of a mechanism.

    Attributes
    ----------
    name : str
        The keyword of the labeling function (and ``--name`` on the command line).
    kind : {"float", "int", "choice"}
    default : Any
        The default (None: the parameter must be given, or follows from ε).
    label : str
        A short label for a widget.
    help : str
        One or two sentences for a tooltip or ``--help``.
    low, high : float or None
        The range offered by widgets (validation is the labeling function's).
    choices : tuple or None
        The values of a ``"choice"`` parameter (or the steps of a select slider).
    log : bool
        Whether a widget should step on a log scale.
    metavar : str
        The command line's placeholder.
    optional : bool
        None is a valid value (the mechanism chooses it from public sizes, e.g. a
        threshold as a share of the number of teachers).
    choice_words : tuple of str or None
        For a ``"choice"`` parameter: each choice in words, in the order of ``choices``
        ("the paper's calibration"), for the pages' labels and legends.
    """

    name: str
    kind: str
    default: Any
    label: str
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    log: bool = False
    metavar: str = "X"
    optional: bool = False
    choice_words: tuple[str, ...] | None = None

    def describe_choice(self, value: Any) -> str:
        """A choice in words (:attr:`choice_words`), or ``"<label> <value>"`` without them.

        Parameters
        ----------
        value : object
            One of :attr:`choices`.

        Returns
        -------
        str
        """
        if self.choices is not None and self.choice_words is not None and value in self.choices:
            return self.choice_words[list(self.choices).index(value)]
        return f"{self.label} {value}"

    def convert(self, value: Any) -> Any:
        """``value`` as this parameter's type (command-line text or a widget value).

        Parameters
        ----------
        value : object
            Text or a widget value; ``None`` stays ``None``.

        Returns
        -------
        object
            ``value`` converted to the parameter's kind.

        Raises
        ------
        ParameterError
            If ``value`` cannot be converted.
        """
        if value is None:
            return None
        try:
            if self.kind == "int":
                as_float = float(value)
                if as_float != int(as_float):
                    raise ValueError
                return int(as_float)
            if self.kind == "float":
                return float(value)
        except (TypeError, ValueError):
            raise ParameterError(f"{self.name} must be a {'whole number' if self.kind == 'int' else 'number'}, got {value!r}.") from None
        if self.choices is not None and value not in self.choices:
            raise ParameterError(f"{self.name} must be one of {', '.join(map(str, self.choices))}, got {value!r}.")
        return value


@dataclass(frozen=True)
class TestPicture:
    """The test a mechanism runs on each query, as a picture: the statistic, the line, the bound.

    Pages draw every mechanism's histogram from this declaration alone (a mechanism
    registered later brings its own picture).  All callables read the votes of a
    teaching or generated dataset and a run's public parameters (``LabelingResult.params``);
    they are NON-PRIVATE teaching views, never exported.

    Attributes
    ----------
    statistic : str
        The axis title: what the test reads ("distance to instability").
    symbol : str
        The name of the line on that axis ("w", "t", "g").
    kind : {"threshold", "flip"}
        ``"threshold"``: a query is answered when its statistic plus noise passes the
        line (right of it mostly answered, left mostly ⊥).  ``"flip"``: every query is
        answered; the line is the gap at which the noise changes the top answer with
        probability ``flip_level`` (right of it the plurality is kept, left it may flip).
    reads : str
        One or two sentences for the caption under the picture.
    values : callable
        ``values(votes, params) -> ndarray (m,)``: the statistic of each query.
    threshold : callable
        ``threshold(params) -> float``: the line's position on the statistic's axis.
    odds : callable
        ``odds(votes, params, truth=None) -> (p_answered, p_correct)``: each query's
        analytic probability of being answered and of being answered with ``truth``
        (None without ``truth``), for a query processed on its own at the run's noise.
    draw : callable
        ``draw(votes_row, params, draws, rng) -> (labels, scores)``: one query processed
        ``draws`` times through the mechanism's own noise (labels as in
        ``LabelingResult``, scores for soft labels, else None).
    bound : str
        The mechanism's own explicit bound with its constants (LaTeX-free text), or a
        sentence saying that none is known.
    bound_rates : callable or None
        ``bound_rates(votes, params, truth, beta) -> dict``: upper bounds, as shares of
        the queries, on some of ``"wrong"`` (answered with a wrong label) and ``"⊥"``,
        with the constants of ``bound``; None when no explicit bound is known.
    bound_conditions : callable or None
        ``bound_conditions(votes, params, truth, beta)``: the conditions of a bound that
        holds only under them, checked for one run (an object with ``holds`` and
        ``sentence()``, e.g. :class:`core.theory.Theorem32Check`); ``bound_rates`` leaves that
        bound out where they fail.  None when every bound holds at every setting.
    flip_level : float
        For ``kind="flip"``: the flip probability that places the line.
    """

    statistic: str
    symbol: str
    kind: str
    reads: str
    values: Callable[..., Any]
    threshold: Callable[..., float]
    odds: Callable[..., Any]
    draw: Callable[..., Any]
    bound: str
    bound_rates: Callable[..., Any] | None = None
    flip_level: float = 0.05
    bound_conditions: Callable[..., Any] | None = None


@dataclass(frozen=True)
class Mechanism:
    """Everything the callers of a mechanism need, registered once.

    Attributes
    ----------
    name : str
        The one spelling of the mechanism's name (``LabelingResult.mechanism``).
    title : str
        A short human name ("BTT, hard labels").
    description : str
        One line saying what it does and what it costs.
    parameters : tuple of Parameter
        Every keyword of ``label`` besides the input and ``rng``.
    label : callable
        ``label(inputs, **params, rng=None) -> LabelingResult``.
    privacy_map : callable
        ``privacy_map(m, **params) -> PrivacyGuarantee``: the data-independent guarantee
        of a run on ``m`` queries, from public parameters only.
    spend : callable or None
        ``spend(epsilon, m, **params) -> dict``: the noise parameters (named in
        ``derived``) at which the run on ``m`` queries spends exactly ``epsilon``.
        None when ε is itself a parameter.
    derived : tuple of str
        The parameters ``spend`` sets.
    inputs : {"counts", "scores", "rows"}
        Vote counts ``(m, n_classes)``, positive-class scores ``(m, k)`` (binary only), or
        ``"rows"``: the private rows themselves with the public rows
        (:class:`core.mechanisms.dp_training.PrivateRows`), for a model trained with
        differential privacy that labels every public row.
    audit : callable or None
        ``audit(pair=None, **settings) -> core.audit.AuditScenario``: the mechanism on
        its worst-case neighbouring pair, for the empirical privacy audit.
    audit_pairs : callable or None
        ``audit_pairs() -> (names, default)``: the neighbouring pairs the audit offers.
    audit_defaults : dict
        Settings at which the audit has power (small ε, few queries).
    explanation : str
        Markdown for the app: how it works, in two or three sentences.
    formulas : tuple of str
        LaTeX lines shown under the explanation.
    data_dependent : str or None
        What ``LabelingResult.epsilon_data_dependent`` holds, if the mechanism reports a
        NON-PRIVATE data-dependent diagnostic.
    per_query : bool
        True when every query is answered independently with the same noise, so a
        stream of queries can be answered batch by batch (the estimator) and the
        guarantee of ``n`` queries is ``privacy_map(n, ...)``.
    online : callable or None
        For a mechanism with state across queries (BTT's sparse vector):
        ``online(m_max, rng, **params)`` returning an object with ``answer(inputs) ->
        labels`` and ``spent() -> PrivacyGuarantee`` (see :mod:`core.pipeline.estimator`).
    diagnostic : callable or None
        ``diagnostic(counts, result) -> float``: the NON-PRIVATE data-dependent ε of a run
        on these votes, computed on demand (for mechanisms whose labeling function does
        not report it itself, because it would cost more than the labeling); used only by
        :func:`core.nonprivate.data_dependent_epsilon`, never exported.
    ledger_entry : callable or None
        ``ledger_entry(m, **params)``: the run's privacy map in the ledger's terms (pure-DP
        steps or an RDP curve, which compose more tightly than (ε, δ)); None records the
        privacy map's (ε, δ) (:mod:`core.ledger`).
    picture : TestPicture or None
        The statistic its test reads, the line on that axis and its own explicit bound
        (:class:`TestPicture`); pages draw the test from it.  None: no picture.
    """

    name: str
    title: str
    description: str
    parameters: tuple[Parameter, ...]
    label: Callable[..., Any]
    privacy_map: Callable[..., Any]
    spend: Callable[..., dict] | None = None
    derived: tuple[str, ...] = ()
    inputs: str = "counts"
    audit: Callable[..., Any] | None = None
    audit_pairs: Callable[[], tuple[list[str], str]] | None = None
    audit_defaults: Mapping[str, Any] = field(default_factory=dict)
    explanation: str = ""
    formulas: tuple[str, ...] = ()
    data_dependent: str | None = None
    per_query: bool = False
    online: Callable[..., Any] | None = None
    ledger_entry: Callable[..., Any] | None = None
    diagnostic: Callable[..., Any] | None = None
    picture: TestPicture | None = None

    def __reduce__(self):
        # Pickled by name (its functions may be closures): a run's state that holds its
        # mechanism (an estimator's session) pickles, and comes back with the registered one.
        return (get, (self.name,))

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """The parameters' names, in order.

        Returns
        -------
        tuple of str
        """
        return tuple(p.name for p in self.parameters)

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name``.

        Parameters
        ----------
        name : str
            One of :attr:`parameter_names`.

        Returns
        -------
        Parameter

        Raises
        ------
        ParameterError
            If the mechanism has no such parameter.
        """
        for p in self.parameters:
            if p.name == name:
                return p
        raise ParameterError(f"{self.name} has no parameter {name!r}; it takes {', '.join(self.parameter_names)}.")

    @property
    def takes_epsilon(self) -> bool:
        """Whether ε can be given (as a parameter, or spent through ``spend``).

        Returns
        -------
        bool
        """
        return "epsilon" in self.parameter_names or self.spend is not None


INPUT_KINDS = ("counts", "scores", "rows")
"""What a mechanism can read: vote counts, teacher scores, or the private rows (DP training)."""

REGISTRY: dict[str, Mechanism] = {}
"""Name -> :class:`Mechanism`, in registration order."""

_LOCK = threading.Lock()


def register(mechanism: Mechanism, *, replace: bool = False) -> Mechanism:
    """Add a mechanism to :data:`REGISTRY` (every caller picks it up from there).

    Parameters
    ----------
    mechanism : Mechanism
    replace : bool
        Allow replacing a registered mechanism of the same name.

    Returns
    -------
    Mechanism
    """
    if not isinstance(mechanism, Mechanism):
        raise ParameterError("register() takes a core.mechanisms.Mechanism.")
    if not mechanism.name or mechanism.name != mechanism.name.strip().lower() or "_" in mechanism.name or " " in mechanism.name:
        raise ParameterError(
            f"A mechanism's name is lower case with hyphens (e.g. 'btt-soft'), got {mechanism.name!r}."
        )
    if mechanism.inputs not in INPUT_KINDS:
        raise ParameterError(f"inputs must be one of {', '.join(map(repr, INPUT_KINDS))}, got {mechanism.inputs!r}.")
    missing = [d for d in mechanism.derived if d not in mechanism.parameter_names]
    if missing:
        raise ParameterError(f"{mechanism.name}: derived parameters {missing} are not among its parameters.")
    if mechanism.picture is not None and mechanism.picture.kind not in ("threshold", "flip"):
        raise ParameterError(f"{mechanism.name}: a picture's kind is 'threshold' or 'flip', got {mechanism.picture.kind!r}.")
    with _LOCK:
        if mechanism.name in REGISTRY and not replace:
            raise ParameterError(f"A mechanism named {mechanism.name!r} is already registered.")
        REGISTRY[mechanism.name] = mechanism
    return mechanism


def unregister(name: str) -> None:
    """Remove a mechanism (tests register toy mechanisms and remove them again).

    Parameters
    ----------
    name : str
        The mechanism's name (nothing happens if it is not registered).
    """
    with _LOCK:
        REGISTRY.pop(name, None)


def names() -> list[str]:
    """The registered mechanisms' names, in registration order (installed plugins included).

    Returns
    -------
    list of str
    """
    _load_plugins_once()
    return list(REGISTRY)


def get(name: str) -> Mechanism:
    """The registered mechanism called ``name``; a clear error listing the names if none.

    Parameters
    ----------
    name : str
        A registered name (:func:`names`), matched exactly.

    Returns
    -------
    Mechanism

    Raises
    ------
    ParameterError
        If no mechanism has that name.
    """
    mech = REGISTRY.get(name)
    if mech is None and _load_plugins_once():
        mech = REGISTRY.get(name)
    if mech is None:
        raise ParameterError(f"Unknown mechanism {name!r}; choose one of {', '.join(REGISTRY)}.")
    return mech


ENTRY_POINT_GROUP = "private_label_lab.mechanisms"
"""The entry-point group an installed package declares its mechanisms in, e.g. in its
``pyproject.toml``::

    [project.entry-points."private_label_lab.mechanisms"]
    gumbel-max = "my_package.gumbel:GUMBEL_MAX"

The object named is a :class:`Mechanism`, a list of them, or a callable returning either;
each is registered (a name already taken is refused with a warning, never replaced)."""

_PLUGINS = {"loaded": False}
_PLUGIN_LOCK = threading.Lock()


def load_plugins(*, reload: bool = False) -> list[str]:
    """Register the mechanisms installed packages declare under :data:`ENTRY_POINT_GROUP`.

    Called by :func:`names` and :func:`get` the first time the registry is read (the
    built-in mechanisms are registered when :mod:`core.mechanisms` is imported), so the
    app, the command line, the audit and the estimator see installed mechanisms without a
    call; call it with ``reload=True`` after installing a package into a running process.
    A plugin that fails to load, or whose name is taken, is skipped with a warning naming
    it: one broken package never stops the others.

    Parameters
    ----------
    reload : bool
        Read the entry points again (already registered mechanisms stay).

    Returns
    -------
    list of str
        The names registered by this call.
    """
    import importlib.metadata

    with _PLUGIN_LOCK:
        if _PLUGINS["loaded"] and not reload:
            return []
        _PLUGINS["loaded"] = True  # before loading: a plugin that reads the registry does not recurse
    added: list[str] = []
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, Mechanism):
                obj = obj()
            found = [obj] if isinstance(obj, Mechanism) else list(obj)
            for mech in found:
                if not isinstance(mech, Mechanism):
                    raise ParameterError(f"it gave a {type(mech).__name__}, not a core.mechanisms.Mechanism")
                if REGISTRY.get(mech.name) is mech:  # its module registered it on import
                    continue
                register(mech)
                added.append(mech.name)
        except Exception as exc:  # noqa: BLE001 - a broken plugin is reported, never fatal
            warnings.warn(f"The mechanism plugin {ep.name!r} ({ep.value}) was not registered: "
                          f"{type(exc).__name__}: {exc}", stacklevel=2)
    return added


def _load_plugins_once() -> bool:
    """Load the installed plugins on the first read of the registry; True if any was registered.

    The built-in mechanisms need nothing here: they are registered when the package is
    imported (``core/mechanisms/__init__.py`` imports :mod:`core.mechanisms.builtin`, which
    imports this module), so the registry imports no module above it.
    """
    if _PLUGINS["loaded"]:
        return False
    return bool(load_plugins())


# The parameters shared by several mechanisms: one definition each.
BUDGET = ("epsilon", "delta")
"""The settings that never take a default: a run states its budget (ε, or the noise it decides,
and δ) in the library, the pipeline, the estimator and the command line alike."""

PARAMETERS: dict[str, Parameter] = {
    "epsilon": Parameter(
        "epsilon", "float", 4.0, "ε (privacy budget)",
        "The privacy budget for all queries together: smaller ε is stronger privacy and fewer or noisier answers.",
        low=0.1, high=20.0, metavar="E",
    ),
    "delta": Parameter(
        "delta", "float", 1e-5, "δ",
        "The probability allowance of (ε, δ)-DP; keep it well below 1/(number of private rows).",
        low=1e-10, high=0.1, choices=(1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8), log=True, metavar="D",
    ),
    "T": Parameter(
        "T", "int", 5, "cutoff T (most ⊥)",
        "BTT's cutoff: the mechanism stops after T abstentions (⊥); each ⊥ is one paid sparse-vector round.",
        low=1, high=200, metavar="N",
    ),
    "calibration": Parameter(
        "calibration", "choice", "tight", "calibration",
        "'tight': the smallest noise whose exact accounting meets (ε, δ); 'paper': BTT's printed constants.",
        choices=("tight", "paper"), metavar="C",
        choice_words=("tight calibration", "paper's calibration"),
    ),
    "beta": Parameter(
        "beta", "float", 0.05, "β (failure probability)",
        "Failure probability used only for BTT's recommended number of teachers (not a privacy parameter).",
        low=1e-4, high=0.5, metavar="B",
    ),
    "eta": Parameter(
        "eta", "float", 0.1, "precision η",
        "Width of the score bins of soft labels; 1/η must be a whole number.",
        choices=(0.5, 0.25, 0.2, 0.1, 0.05), metavar="H",
    ),
    "sigma": Parameter(
        "sigma", "float", None, "GNMax noise σ",
        "GNMax adds N(0, σ²) to every vote count; follows from ε when ε is given.",
        low=0.1, high=1000.0, log=True, metavar="S",
    ),
    "threshold": Parameter(
        "threshold", "float", None, "confidence threshold t",
        "Confident-GNMax answers a query only when its top vote count plus N(0, σ1²) reaches t "
        "(default 0.8 × the number of teachers, a public choice).",
        low=0.0, high=100000.0, metavar="T", optional=True,
    ),
    "ratio": Parameter(
        "ratio", "float", 3.75, "σ1 / σ2",
        "Ratio of the threshold test's noise σ1 to the answer noise σ2 when both follow from ε "
        "(PATE 2018 used 150/40 = 3.75 on MNIST).",
        low=0.25, high=20.0, metavar="R",
    ),
    "sigma1": Parameter(
        "sigma1", "float", None, "threshold noise σ1",
        "Noise of Confident-GNMax's threshold test; follows from ε (with σ2) when ε is given.",
        low=0.1, high=1000.0, log=True, metavar="S",
    ),
    "sigma2": Parameter(
        "sigma2", "float", None, "answer noise σ2",
        "Noise of Confident-GNMax's noisy argmax; follows from ε (with σ1) when ε is given.",
        low=0.1, high=1000.0, log=True, metavar="S",
    ),
    "accounting": Parameter(
        "accounting", "choice", "fixed", "accounting",
        "'fixed': every query is charged both steps in advance; 'filter': a Rényi filter with the "
        "same budget stops before the realised charge would exceed it.",
        choices=("fixed", "filter"), metavar="A",
        choice_words=("charged in advance", "Rényi filter"),
    ),
    "gamma": Parameter(
        "gamma", "float", None, "LNMax noise γ",
        "LNMax adds Lap(1/γ) to every vote count; follows from ε when ε is given.",
        low=1e-4, high=1.0, log=True, metavar="G",
    ),
}
