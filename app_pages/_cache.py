"""Caching shared by the pages: datasets, trained ensembles, reference models, labeling runs.

* Datasets: :mod:`app_pages._datasets`; the ledger and the release: :mod:`app_pages._ledger`.
* A trained ensemble and its votes on the public queries are cached on the dataset
  identity, the learner and its hyperparameters, ``k`` and the seed, trained once for every
  session of the server (:class:`app_pages._shared.OncePerKey`, hand-rolled: see its
  docstring for why).
* A labeling run, a student, are remembered **per session** (:func:`labeling`): noise is
  drawn once per request, so a rerun shows the same draw. With the public demo seed a run
  is the same draw in every session, and is computed once for the process.
* Every labeling run on the private data is charged to that data's privacy ledger
  (:func:`app_pages._ledger.ledger`: per session on teaching data, the named dataset's in the
  ledger store on a real job) before it runs; a **release** (:func:`app_pages._ledger.release`) is a
  fresh run at settings fixed before it is shown, and the only run the Student & export page
  lets the user download (docs/design.md §9).
* On a **real job** (:func:`app_pages._session.data_kind`) :func:`labeling` never runs anything:
  it shows the runs the user paid for (:func:`priced_run`, a button that showed its price)
  and otherwise raises :class:`NotRunYet`; the pages show predictions (:mod:`app_pages._plan`).

Uploaded files stay in memory (session state and the in-process cache); nothing here
writes to disk.  Every run goes through :mod:`core.pipeline`.
"""

from __future__ import annotations

import importlib.abc
import sys
import threading
import warnings
from collections import OrderedDict
from typing import Any, Callable

import numpy as np
import streamlit as st

import core
from core import pipeline
from core.errors import PrivacyWarning, PrivateLabelLabError
from app_pages import _session as session
from app_pages import _ledger as ledgers
from app_pages import _style
from app_pages._datasets import Dataset, dataset
from app_pages._shared import OncePerKey, Pending
from app_pages._text import literal


class NotRunYet(PrivateLabelLabError):
    """On a real job: nothing has run on the private votes at these settings (shown as a next step)."""

    shown_as = "info"


NOT_RUN_YET = (
    "Nothing has run on the private votes at these settings: this is a real job, so a run happens only when "
    "you ask for it. The Private labeling page shows the predicted result for free and a button with the "
    "run's price."
)

# --------------------------------------------------------------------------------------
# Ensembles
# --------------------------------------------------------------------------------------


class Ensemble:
    """A trained ensemble and what the pages read from it, each computed once.

    The vote counts are computed with the teachers (most mechanisms read them).  The
    per-teacher predictions (a NON-PRIVATE diagnostic) and the positive-class scores
    (mechanisms whose ``inputs`` is ``"scores"``) cost one more pass of every teacher
    over the public queries each, so they are computed on first use and then kept.
    """

    def __init__(self, key: tuple, teachers: Any, table: Any, public_X: Any, votes: np.ndarray,
                 predictions: np.ndarray | None = None) -> None:
        self.key = key
        self.teachers = teachers  # core.ensemble.teachers.TeacherEnsemble
        self.votes = votes  # (m, n_classes) vote counts on the public queries
        self._table = table
        self._public_X = public_X
        self._lock = threading.Lock()
        self._predictions: np.ndarray | None = predictions  # computed on first use if None
        self._scores: tuple[np.ndarray | None, str | None] | None = None

    @property
    def predictions(self) -> np.ndarray:
        """(m, k) per-teacher labels on the public queries: NON-PRIVATE diagnostic."""
        with self._lock:
            if self._predictions is None:
                X = pipeline.model_input(self._table, self._public_X)
                self._predictions = np.asarray(self.teachers.predictions(X))
            return self._predictions

    def _score_pair(self) -> tuple[np.ndarray | None, str | None]:
        with self._lock:
            if self._scores is None:
                try:
                    scores = pipeline.mechanism_inputs(_scores_mechanism(), self.teachers, self._table, self._public_X)
                    self._scores = (scores, None)
                except PrivateLabelLabError as exc:
                    self._scores = (None, str(exc))
            return self._scores

    @property
    def scores(self) -> np.ndarray | None:
        """(m, k) positive-class scores (binary tasks, learners with probabilities), else None."""
        return self._score_pair()[0]

    @property
    def scores_error(self) -> str | None:
        """Why scores are unavailable, if they are."""
        return self._score_pair()[1]

    def inputs(self, mechanism: str) -> np.ndarray:
        """What ``mechanism`` reads (its registered ``inputs``): votes, or scores.

        Raises
        ------
        ParameterError
            When the mechanism needs scores this ensemble cannot give (said why).
        """
        from core.mechanisms import registry

        if registry.get(mechanism).inputs == "rows":  # a model trained with DP on the private rows
            return pipeline.mechanism_inputs(mechanism, self.teachers, self._table, self._public_X)
        if registry.get(mechanism).inputs != "scores":
            return self.votes
        if self.scores is None:
            raise core.errors.ParameterError(self.scores_error or "This mechanism needs teacher scores.")
        return self.scores

    def offers(self, mechanism: str) -> bool:
        """Whether this ensemble has what ``mechanism`` reads."""
        from core.mechanisms import registry

        return registry.get(mechanism).inputs != "scores" or self.scores is not None


def _scores_mechanism() -> str:
    """A registered mechanism that reads scores (the pipeline computes inputs by mechanism)."""
    from core.mechanisms import registry

    return next(n for n in registry.names() if registry.get(n).inputs == "scores")


@st.cache_resource(show_spinner=False)
def _ensembles() -> OncePerKey:
    return OncePerKey(size=6)


@st.cache_resource(show_spinner=False)
def _demo_runs() -> OncePerKey:
    return OncePerKey(size=500)


def ensemble_key(ds: Dataset, cfg: dict[str, Any]) -> tuple:
    return (ds.key, cfg["learner"], tuple(sorted(cfg["params"].items())), int(cfg["k"]))


def cached_ensemble(ds: Dataset | None = None, cfg: dict[str, Any] | None = None) -> Ensemble | None:
    """The cached ensemble for the current (or given) settings, or None if not trained."""
    session.init()
    ds = ds or dataset()
    cfg = cfg or st.session_state["ensemble_cfg"]
    return _ensembles().get(ensemble_key(ds, cfg))


_ONE_PASS_ENTRIES = 25_000_000
"""Largest m × k for which votes and predictions come from one pass (an int32 matrix of
at most 100 MB); beyond it the votes are counted block by block as on the command line."""


def train(ds: Dataset, cfg: dict[str, Any], progress: Callable[[int, int], None] | None = None,
          votes_progress: Callable[[int, int], None] | None = None,
          waiting: Callable[[float, str], None] | None = None) -> Ensemble:
    """Train the teachers for ``cfg`` on ``ds`` (:func:`core.pipeline.train`), or fetch them.

    Once per key for the process: a session asking while another trains the same
    ensemble waits for it (``waiting`` is then called with the training session's
    progress: a fraction and its text) instead of training its own.
    """
    key = ensemble_key(ds, cfg)

    def compute(job: Pending) -> Ensemble:
        def shared(report: Callable[[int, int], None] | None, text: str):
            def progress(done: int, total: int) -> None:
                job.progress = (min(1.0, done / max(total, 1)), text.format(done=done, total=total))
                if report is not None:
                    report(done, total)
            return progress

        return _train(ds, cfg, key, shared(progress, "Trained {done} of {total} teachers"),
                      shared(votes_progress, "Teachers voting: {done:,} of {total:,} public queries"))

    return _ensembles().get_or_compute(key, compute, waiting)


def _train(ds: Dataset, cfg: dict[str, Any], key: tuple, progress, votes_progress) -> Ensemble:
    from core.mechanisms import registry

    teachers = pipeline.train(ds.private, cfg["learner"], cfg["params"], int(cfg["k"]),
                              rng=np.random.default_rng(session.seed() + 2), n_jobs=1, progress=progress)
    predictions = None
    if len(ds.public_X) * int(cfg["k"]) <= _ONE_PASS_ENTRIES:
        # One pass of the teachers for the votes AND the per-teacher predictions the pages
        # show (a NON-PRIVATE diagnostic): asking every teacher twice cost the app up to
        # twice the command line's time (bench/bench_app_vs_cli.py).
        votes, predictions = pipeline.votes_and_predictions(teachers, ds.private, ds.public_X, progress=votes_progress)
    else:  # too many to hold: the votes block by block, the predictions on first use
        counts = next(n for n in registry.names() if registry.get(n).inputs == "counts")
        votes = pipeline.mechanism_inputs(counts, teachers, ds.private, ds.public_X, progress=votes_progress)
    return Ensemble(key=key, teachers=teachers, table=ds.private, public_X=ds.public_X, votes=votes,
                    predictions=predictions)


def ensemble(container=None) -> Ensemble:
    """The current ensemble, trained now (with a progress bar) if it is not cached."""
    from app_pages._widgets import learner_label

    session.init()
    ds = dataset()
    cfg = st.session_state["ensemble_cfg"]
    hit = cached_ensemble(ds, cfg)
    if hit is not None:
        return hit
    where = container if container is not None else st
    bar = where.progress(0.0, text=f"Training {cfg['k']} teachers ({learner_label(cfg['learner'])})…")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=f"Trained {done} of {total} teachers")

    def votes_progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / max(total, 1)),
                     text=f"Teachers voting: {done:,} of {total:,} public queries")

    def waiting(fraction: float, text: str) -> None:  # another session trains these teachers
        bar.progress(fraction, text=f"{text} (trained once for every session of this server)")

    entry = train(ds, cfg, progress, votes_progress, waiting)
    bar.empty()
    return entry


@st.cache_resource(max_entries=6, show_spinner=False)
def _nonprivate_model(ds_key: str, learner: str, params: tuple, _ds: Dataset):
    return pipeline.teacher_model(_ds.private, learner, dict(params)).fit(_ds.private.features, _ds.private.labels)


def nonprivate_model(ds: Dataset, cfg: dict[str, Any]):
    """The learner fitted on all private rows: the NON-PRIVATE reference model (cached)."""
    return _nonprivate_model(ds.key, cfg["learner"], tuple(sorted(cfg["params"].items())), ds)


# --------------------------------------------------------------------------------------
# Private labeling (per session)
# --------------------------------------------------------------------------------------


def labeling(mechanism: str | None = None, settings: dict[str, Any] | None = None, ens: Ensemble | None = None):
    """The labeling run for the current (or given) settings, computed once per session.

    Every run is :func:`core.pipeline.label` on the ensemble's votes (or scores).  The
    result is remembered in this session, keyed on the ensemble and the request, because
    each run draws fresh noise: a Streamlit rerun (any widget change elsewhere on the
    page) must show the *same* draw, not a new one, and moving a slider back must bring
    back the run shown before.  It is per session, never shared, so one session's noise
    is never shown to another; except with the reproducible demo seed on, where a run is a
    function of the public seed, the votes and the request, the same draw in every session:
    it is then computed once for the process (a class following a lecture with the demo
    seed on), and each session's ledger is charged for it before it is shown.

    **The ledger.** A run that is not in the memo is charged to the private data's
    ledger (:func:`ledger`) through ``pipeline.label(..., ledger=...)`` before it runs,
    exactly once: a memoised rerun shows the *same* draw, which was charged when it was
    drawn, and showing an output again is post-processing of that output, so it costs
    nothing new.  A run past the ledger's budget raises
    :class:`core.errors.BudgetExhausted` (nothing runs, nothing is remembered, so a
    later rerun asks again).  A run evicted from the memo and asked again is a new draw,
    and is charged again.

    **A real job** runs nothing here: a run the user paid for (:func:`priced_run`) at these
    settings is shown again; asked for the current settings, the latest paid run
    (the release) is shown; otherwise :class:`NotRunYet` is raised.

    Returns
    -------
    (LabelingResult, list of str)
        The result and the texts of any :class:`core.errors.PrivacyWarning` raised.

    Raises
    ------
    BudgetExhausted
        When the run would take the ledger's total past its budget.
    NotRunYet
        On a real job, when nothing was paid for at these settings.
    """
    session.init()
    current = mechanism is None and settings is None
    mechanism = mechanism or session.privacy()["mechanism"]
    ens = ens or ensemble()
    asked = session.request(mechanism, settings)
    key = _memo_key(ens, mechanism, asked)
    memo: OrderedDict = st.session_state["_labelings"]
    if key not in memo and key[-1]:  # a demonstration may show a draw the lesson already paid for
        key = key[:-1] + (False,) if key[:-1] + (False,) in memo else key
    if key in memo:
        memo.move_to_end(key)
        return memo[key]
    ds = dataset()
    if session.is_real_job(ds):
        rel = ledgers.current_release(ds, ens) if current else None
        if rel is not None:  # the run the user paid for last (pages that show "the" run)
            return rel["result"], []
        raise NotRunYet(NOT_RUN_YET)
    inputs = ens.inputs(mechanism)
    led = ledgers.ledger(ds)
    if session.demo_mode():
        # The public demo seed makes the run a function of the votes and the request: the
        # same draw in every session, so it is computed once for the process (a class
        # following the lecture with the demo seed on). Each session's lesson still pays for
        # what it is shown, before it is shown (refused past its budget: nothing shown).
        m = max(int(np.shape(inputs)[0]), 1)
        led.charge(pipeline.ledger_entry(mechanism, asked, m))
        rng = session.noise_rng(ds)
        memo[key] = _demo_runs().get_or_compute(key, lambda job: _run(inputs, mechanism, asked, None, rng))
    else:
        # Charged BEFORE the run (refused past the budget: BudgetExhausted, nothing runs).
        memo[key] = _run(inputs, mechanism, asked, led, session.noise_rng(ds))
    while len(memo) > 200:
        memo.popitem(last=False)
    return memo[key]


def _run(inputs, mechanism: str, asked: dict[str, Any], led, rng) -> tuple[Any, list[str]]:
    """One labeling run (charged to ``led`` first, if given) and the texts of its privacy warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        result = pipeline.label(inputs, mechanism, asked, rng=rng, ledger=led)
    return result, [str(w.message) for w in caught if issubclass(w.category, PrivacyWarning)]


def _memo_key(ens: Ensemble, mechanism: str, asked: dict[str, Any]) -> tuple:
    # A demonstration's runs (not charged to the lesson) are remembered apart: showing one again
    # after the demonstration is a new run of the lesson, charged to it.
    return (ens.key, mechanism, tuple(sorted(asked.items())), session.demo_mode(),
            bool(st.session_state.get("_demonstration", False)))


def paid_run(mechanism: str, settings: dict[str, Any] | None = None, ens: Ensemble | None = None):
    """The run already paid for at these settings in this session (real job or teaching), or None."""
    session.init()
    ens = ens or ensemble()
    hit = st.session_state["_labelings"].get(_memo_key(ens, mechanism, session.request(mechanism, settings)))
    return None if hit is None else hit[0]


def priced_run(mechanism: str, settings: dict[str, Any] | None = None, ens: Ensemble | None = None):
    """A run on the private votes the user asked for after seeing its price: a release.

    Charged before it runs (:func:`app_pages._ledger.release`: refused past the budget, and on
    a real job before a budget is set); remembered so that :func:`labeling` shows it.
    """
    session.init()
    ens = ens or ensemble()
    ds = dataset()
    asked = session.request(mechanism, settings)
    rel = ledgers.release(ds, ens, mechanism, asked)
    memo: OrderedDict = st.session_state["_labelings"]
    memo[_memo_key(ens, mechanism, asked)] = (rel["result"], [])
    return rel["result"]


def priced_compare(rows: dict[str, tuple], ens: Ensemble, epsilon: float) -> dict[str, Any]:
    """Compare on the private votes: every row run once, as one priced action.

    All rows are priced together before anything runs (refused as a whole past the
    budget); each run is remembered like :func:`priced_run` and the table kept for the
    Compare page at this ε.
    """
    ds = dataset()
    runs = [(name, session.request(name, settings)) for name, settings in rows.values()]
    results = ledgers.spend(ds, ens, runs, keep_going=True)
    memo: OrderedDict = st.session_state["_labelings"]
    for (name, asked), result in zip(runs, results):
        if not isinstance(result, Exception):
            memo[_memo_key(ens, name, asked)] = (result, [])
    table = dict(zip(rows, results))
    st.session_state.setdefault("_paid_compare", {})[(ens.key, float(epsilon))] = table
    return table


def paid_compare(ens: Ensemble, epsilon: float) -> dict[str, Any] | None:
    """The Compare table paid for at ``epsilon`` on this ensemble, or None."""
    return st.session_state.get("_paid_compare", {}).get((ens.key, float(epsilon)))


def student(result, ds: Dataset, learner: str, bottom: str):
    """The student of a run (:func:`core.pipeline.student`), once per session and run."""
    memo = st.session_state.setdefault("_students", {})
    key = (id(result), ds.key, learner, bottom, session.demo_mode())
    hit = memo.get(key)
    if hit is not None and hit[0] is result:
        return hit[1]
    fitted = pipeline.student(ds.public_X, result, learner, {}, ds.private, bottom=bottom, rng=session.noise_rng(ds))
    if len(memo) > 20:
        memo.clear()
    memo[key] = (result, fitted)
    return fitted


_WRITER_WARMED = threading.Event()


WALK_HIDDEN = ("dask", "cupy", "torch", "jax", "sparse", "ndonnx")
"""Array libraries of scikit-learn's array-API shims, hidden from skops's import walk (:func:`warm_student_writer`)."""


class _HiddenFromWalk(importlib.abc.MetaPathFinder):
    """Refuses the :data:`WALK_HIDDEN` libraries to the thread that warms the student writer only."""

    def find_spec(self, fullname, path=None, target=None):
        if threading.current_thread().name == WARM_THREAD and fullname.split(".")[0] in WALK_HIDDEN:
            raise ModuleNotFoundError(f"{fullname} is not imported by the student writer's warm-up", name=fullname)
        return None


WARM_THREAD = "warm-skops"
"""The name of the thread that imports skops in the background."""


def warm_student_writer() -> None:
    """Import the student file's writer (skops) in the background, once per process.

    skops reads scikit-learn's whole list of estimators when it is imported (seconds, tens of
    seconds on a busy machine); done while a page is read, the release's files are written at
    once after the click.  Reads no data.
    """
    if _WRITER_WARMED.is_set():
        return
    _WRITER_WARMED.set()

    def _load() -> None:
        # skops walks every scikit-learn package on import, scikit-learn's array-API shims among them,
        # and a shim imports its array library (dask.array: seconds). While that import is under way
        # here, scikit-learn on the page's thread checks arrays against the half-imported module and
        # fails ("partially initialized module 'dask.array'"). The walk ignores a package that cannot
        # be imported, so this thread alone is refused those libraries (a finder that answers for
        # this thread only: sys.modules is not touched, the page's thread sees nothing change).
        finder = _HiddenFromWalk()
        sys.meta_path.insert(0, finder)
        try:
            import skops.io  # noqa: F401
        except ImportError:  # the download then says so itself
            pass
        finally:
            sys.meta_path.remove(finder)

    threading.Thread(target=_load, name=WARM_THREAD, daemon=True).start()


def model_bytes(model) -> bytes:
    """A fitted model serialized with joblib, in memory."""
    import io

    import joblib

    buf = io.BytesIO()
    joblib.dump(model, buf)
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# Comparison at equal ε (every registered mechanism that applies)
# --------------------------------------------------------------------------------------


def compare_rows(ens: Ensemble | None, epsilon: float, m: int, extra: tuple = (),
                 n_classes: int = 2) -> tuple[dict[str, tuple], list[str]]:
    """The runs of the comparison at budget ε: every registered mechanism that applies.

    A mechanism applies when it takes ε, this ensemble has its inputs, and its guarantee
    at that ε on ``m`` queries (:func:`core.pipeline.privacy_map`, before any data is
    seen) is at most ε: a mechanism that spends ε per query is left out, with the
    reason.  Choice parameters (BTT's calibration) take their registered default;
    ``extra`` adds rows ``(name, settings)`` at other settings.  The other settings (δ,
    T, …) are the session's.  Without an ensemble (a plan before training) a mechanism
    reading teacher scores applies to two classes (``n_classes``) only.

    Returns
    -------
    (dict, list of str)
        Row label → ``(name, settings)`` for :func:`labeling`, and why others are left out.
    """
    from core.mechanisms import registry

    rows: dict[str, tuple] = {}
    skipped: list[str] = []
    wanted = [(name, {}) for name in registry.names()]
    for name, more in extra:  # an extra row follows its mechanism's row
        at = max(i for i, (n, _) in enumerate(wanted) if n == name) + 1 if name in registry.names() else len(wanted)
        wanted.insert(at, (name, dict(more)))
    for name, more in wanted:
        mech = registry.get(name)
        if not mech.takes_epsilon:
            skipped.append(f"{mech.title} is not compared: it takes no ε.")
            continue
        if ens is None and mech.inputs == "scores" and int(n_classes) != 2:
            skipped.append(f"{mech.title} is not compared: it reads teacher scores, which are for two classes.")
            continue
        if ens is not None and not ens.offers(name):
            skipped.append(f"{mech.title} is not compared: {literal(ens.scores_error)}")
            continue
        choices = {p.name: p.default for p in mech.parameters if p.kind == "choice"}
        settings = {**choices, **more, "epsilon": float(epsilon)}
        try:
            spent = pipeline.privacy_map(name, session.request(name, settings), m)
        except PrivateLabelLabError as exc:
            skipped.append(f"{mech.title} is not compared: {literal(exc)}")
            continue
        if spent.epsilon > float(epsilon) * (1 + 1e-6) + 1e-9:
            spends = f"{spent.epsilon:,.0f}" if spent.epsilon >= 1e4 else f"{spent.epsilon:.4g}"
            skipped.append(f"{mech.title} is not compared: at ε = {float(epsilon):g} it spends ε = {spends} "
                           f"on {m:,} queries (ε per query).")
            continue
        rows[(name, tuple(sorted((c, settings[c]) for c in choices)))] = (name, settings)
    return {_style.row_label(name, settings, several=sum(n == name for n, _ in rows) > 1): (name, settings)
            for name, settings in rows.values()}, skipped


@st.cache_data(max_entries=64, show_spinner="Solving the loop T → α → k → T…")
def solve_loop(n: float, V: float, epsilon: float, delta: float, beta: float, m: int, gamma: float, setting: str,
               scope: str = ""):
    """:func:`core.theory.solve_loop` (paper calibration), cached on its inputs and ``scope`` (shared by every
    session while n is public: :func:`app_pages._plan.cache_scope`)."""
    from core.theory import solve_loop as solve

    return solve(n, V, epsilon, delta, beta, m, gamma, setting)
