"""Session state and caching shared by the pages of the app.

Everything here either remembers the user's choices (``st.session_state``, one per
browser session) or calls into :mod:`core` and caches the expensive results:

* a loaded dataset is cached on its identity: the bundled name or generator settings,
  or the SHA-256 of the uploaded bytes, plus the split sizes and the seed;
* a trained ensemble and its votes on the public queries are cached on the dataset
  identity, the learner and its hyperparameters, ``k`` and the seed;
* a labeling run is remembered per session on all of the above plus every privacy
  knob, so moving a slider re-runs only the aggregation on the cached votes.

Uploaded files stay in memory (session state and the in-process cache); nothing here
writes to disk.  Two sessions only ever share a cache entry when they hold the very
same bytes (the key includes their hash), so neither can see the other's upload.

No algorithm lives here: labels, guarantees, bounds, splits, teachers and students all
come from :mod:`core` calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.errors import PrivateLabelLabError, PrivacyWarning

DEMO_SEED = 2018
"""The fixed seed of the "reproducible demo" option (never used otherwise, never exported)."""

DEFAULT_DATASET = "breast_cancer"
"""The bundled dataset offered first when the user picks "Bundled dataset"."""

# First launch: a complete, convincing result without a click, in a few seconds.
#
# BTT answers a query for free when its vote is stable and pays one of its T rounds for
# each ⊥, so the first screen needs (a) enough teachers that a unanimous vote clears the
# threshold w with room to spare (core.theory.btt_min_teachers: k ≥ 2⌊w⌋ + 3, here w = 97 and
# k ≥ 197 at ε = 4, δ = 1e-5, T = 5, m = 2,000, tight calibration; k = 400 lets a vote
# with about 75 % agreement pass, so accurate teachers pass on almost every query) and
# (b) data on which few public queries are genuinely ambiguous.  Two Gaussian classes
# 6 standard deviations apart (Bayes error Φ(−3) ≈ 0.13 %) in d = 2 dimensions do both:
# 40 rows per teacher already give accurate teachers, and only the handful of queries
# near the boundary are ⊥.  Gaussian naive Bayes is the matching generative model and
# among the fastest learners to fit, so 400 teachers train in about two seconds.
# 20,000 rows split 10 % public (m = 2,000 queries), 10 % held-out test, 80 % private
# (16,000 rows, δ = 1e-5 well below 1/n).  First screens of 12 fresh sessions: 1,291 to
# 1,998 of the 2,000 queries answered (median 1,874; the run stops at its 5th ⊥, on one
# of the few queries near the boundary), accuracy on answered ≈ 99.9 %, (ε, δ) = (4,
# 9.5e-6); the demo seed gives 1,997 answered and 3 ⊥.  First load ≈ 3 s.
DEFAULT_GENERATOR = "two_gaussians"
DEFAULT_GENERATOR_PARAMS: dict[str, Any] = {"d": 2, "separation": 6.0}

DEFAULT_DATA: dict[str, Any] = {
    "source": "generator",
    "name": DEFAULT_GENERATOR,
    "n": 20_000,
    "params": dict(DEFAULT_GENERATOR_PARAMS),
    "public_fraction": 0.1,
    "test_fraction": 0.1,
}
DEFAULT_ENSEMBLE: dict[str, Any] = {
    "learner": "gaussian_nb",
    "params": {},
    "k": 400,
}
DEFAULT_PRIVACY: dict[str, Any] = {
    "mechanism": "btt",
    "epsilon": 4.0,
    "delta": 1e-5,
    "T": 5,
    "beta": 0.05,
    "gamma": 0.05,
    "eta": 0.1,
    "calibration": "tight",
}

MECHANISMS: dict[str, str] = {
    "btt": "BTT, hard labels (stability + sparse vector)",
    "btt-soft": "BTT, soft labels (binary tasks, precision η)",
    "lnmax": "PATE, Laplace noisy max (LNMax)",
    "baseline": "Advanced-composition baseline (A_stab on every query)",
}

PAGES: list[tuple[str, str, str]] = [
    ("pages/1_Data.py", "Data", ":material/table_view:"),
    ("pages/2_Ensemble.py", "Ensemble", ":material/groups:"),
    ("pages/3_Private_labeling.py", "Private labeling", ":material/lock:"),
    ("pages/4_Bounds.py", "Bounds", ":material/show_chart:"),
    ("pages/5_Compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/6_Student_and_export.py", "Student & export", ":material/school:"),
    ("pages/8_Privacy_audit.py", "Privacy audit", ":material/policy:"),
]
"""The app's pages in menu order: (script from the repository root, title, icon)."""

DELTAS: list[float] = [1e-3, 5e-4, 1e-4, 5e-5, 1e-5, 1e-6, 1e-7, 1e-8]
"""The δ choices of every page that sets ``privacy["delta"]`` (they share one widget key)."""


def app_pages() -> list[tuple[str, str, str]]:
    """The entries of :data:`PAGES` whose script exists: the pages ``app.py`` registers."""
    root = Path(__file__).resolve().parent.parent
    return [entry for entry in PAGES if (root / entry[0]).is_file()]


BOTTOM_POLICIES: dict[str, str] = {
    "drop": "drop the ⊥ rows (default)",
    "random": "give ⊥ rows a random label (BTT's analysis)",
    "semi": "keep ⊥ rows unlabeled (semi-supervised student)",
}


# --------------------------------------------------------------------------------------
# Session state: persistent choices and widget keys
# --------------------------------------------------------------------------------------


def init() -> None:
    """Put the defaults into this session's state (idempotent)."""
    ss = st.session_state
    if "_session_seed" not in ss:
        # A per-session seed drawn from the operating system: it only names this
        # session's random split and teacher partition so that they can be cached.
        ss["_session_seed"] = secrets.randbits(31)
    ss.setdefault("demo_seed", False)
    ss.setdefault("data_cfg", dict(DEFAULT_DATA, params=dict(DEFAULT_DATA["params"])))
    # The Data page's generator controls start from the default dataset's parameters.
    ss.setdefault(f"gen_{DEFAULT_GENERATOR}", dict(DEFAULT_GENERATOR_PARAMS))
    ss.setdefault("ensemble_cfg", dict(DEFAULT_ENSEMBLE, params=dict(DEFAULT_ENSEMBLE["params"])))
    ss.setdefault("privacy", dict(DEFAULT_PRIVACY))
    ss.setdefault("_labelings", OrderedDict())


def run_through_app() -> None:
    """Make sure a page runs inside ``app.py`` (navigation and sidebar), never alone.

    Streamlit treats an app with a ``pages/`` folder as an old-style multipage app until
    its main script has called ``st.navigation`` once in the server process.  So the very
    first request of a fresh server for a page's URL (a bookmark, or a browser tab that
    reconnects after ``make run`` restarted) runs that page file on its own: no shared
    sidebar, and a navigation menu listing every file of the folder.  A page calls this
    first: when it was started on its own that way, the old mode is switched off and the
    run starts again, now through ``app.py`` (same page, same URL).  A page opened
    directly as a script (``streamlit run pages/x.py``, ``AppTest.from_file`` of a page)
    is not in that mode and runs as it is.
    """
    if st.session_state.get("_in_app"):
        return
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # pragma: no cover - a Streamlit without this mode
        return
    if getattr(PagesManager, "uses_pages_directory", None):
        PagesManager.uses_pages_directory = False
        st.rerun()


def demo_mode() -> bool:
    """Whether the "reproducible demo seed" option is on."""
    return bool(st.session_state.get("demo_seed", False))


def seed() -> int:
    """The seed naming this session's random split and teacher partition."""
    init()
    return DEMO_SEED if demo_mode() else int(st.session_state["_session_seed"])


def noise_rng() -> int | None:
    """The ``rng`` argument of the private mechanisms: OS entropy unless in demo mode."""
    return DEMO_SEED if demo_mode() else None


def privacy() -> dict[str, Any]:
    """The current privacy settings (a dict kept in session state)."""
    init()
    return st.session_state["privacy"]


def widget_key(section: str, name: str) -> str:
    """The key of the widget editing ``st.session_state[section][name]``.

    Streamlit forgets a widget's value when its page is not shown; the persistent copy
    lives in ``st.session_state[section]`` and seeds the widget when it comes back.
    """
    init()
    key = f"w_{section}_{name}"
    if key not in st.session_state:
        st.session_state[key] = st.session_state[section][name]
    return key


def enter_page(name: str) -> None:
    """Called by ``app.py`` before a page runs: on a page change, forget widget mirrors.

    Pages share settings (ε is set on three pages), and their widgets use the same keys.
    When the page changes, every ``w_*`` widget key is dropped so that the new page's
    widgets start from the persistent settings, never from another page's widget state.
    """
    init()
    ss = st.session_state
    if ss.get("_page") != name:
        for key in [k for k in ss if isinstance(k, str) and k.startswith("w_")]:
            del ss[key]
        ss["_page"] = name


def remember(section: str, name: str, value: Any) -> None:
    """Store a widget's value in the persistent settings."""
    init()
    st.session_state[section][name] = value


@contextlib.contextmanager
def shown_errors() -> Iterator[None]:
    """Show a library error in place with ``st.error`` instead of a traceback."""
    try:
        yield
    except PrivateLabelLabError as exc:
        st.error(str(exc))


# --------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """The data of one session: private rows, public queries and held-out test rows."""

    key: str
    title: str
    source: str  # "bundled" | "generator" | "upload"
    private: Any  # core.data.Table
    public_X: pd.DataFrame
    public_y: np.ndarray | None  # true labels of the public queries (diagnostics only)
    test: Any | None  # core.data.Table of held-out labeled rows, or None
    public_note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def class_names(self) -> tuple[str, ...]:
        return tuple(self.private.class_names)

    @property
    def n_classes(self) -> int:
        return int(self.private.n_classes)

    @property
    def n_private(self) -> int:
        return int(self.private.n_rows)

    @property
    def n_public(self) -> int:
        return int(len(self.public_X))

    @property
    def n_test(self) -> int:
        return 0 if self.test is None else int(self.test.n_rows)


def _sizes(n_rows: int, public_fraction: float, test_fraction: float) -> tuple[int, int]:
    n_public = max(1, int(round(n_rows * public_fraction)))
    n_test = max(1, int(round(n_rows * test_fraction)))
    return n_public, n_test


def _split_dataset(table, public_fraction: float, test_fraction: float, split_seed: int, *,
                   key: str, title: str, source: str, public_note: str) -> Dataset:
    """A :class:`Dataset` whose held-out test rows, then public queries, are drawn from ``table``.

    Each draw is ``core.data.split_public``; the public queries keep their true labels
    (diagnostics only).
    """
    from core.data import split_public

    n_public, n_test = _sizes(table.n_rows, public_fraction, test_fraction)
    rng = np.random.default_rng(split_seed)
    rest, test = split_public(table, n_test, rng=rng)
    private, public = split_public(rest, n_public, rng=rng)
    return Dataset(key=key, title=title, source=source, private=private, public_X=public.features,
                   public_y=public.labels, test=test, public_note=public_note)


@st.cache_resource(max_entries=16, show_spinner=False)
def _bundled_dataset(name: str, public_fraction: float, test_fraction: float, split_seed: int) -> Dataset:
    from core.data import load_bundled

    return _split_dataset(
        load_bundled(name), public_fraction, test_fraction, split_seed,
        key=f"bundled:{name}:{public_fraction}:{test_fraction}:{split_seed}",
        title=name,
        source="bundled",
        public_note="public queries drawn at random from the dataset (their true labels are held out for diagnostics)",
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _generated_dataset(
    name: str, n: int, params: tuple, public_fraction: float, test_fraction: float, split_seed: int
) -> Dataset:
    from core.data import generate

    table = generate(name, n, rng=np.random.default_rng(split_seed + 1), **dict(params))
    return _split_dataset(
        table, public_fraction, test_fraction, split_seed,
        key=f"generator:{name}:{n}:{params!r}:{public_fraction}:{test_fraction}:{split_seed}",
        title=f"{name} (generated, n = {n})",
        source="generator",
        public_note="public queries drawn at random from the generated rows (true labels held out for diagnostics)",
    )


def digest(data: bytes) -> str:
    """SHA-256 of uploaded bytes: the identity of an upload in every cache key."""
    return hashlib.sha256(data).hexdigest()


@st.cache_resource(max_entries=8, show_spinner=False)
def _uploaded_dataset(
    private_hash: str,
    _private_bytes: bytes,
    filename: str,
    label_column: str | None,
    missing: str,
    public_hash: str | None,
    _public_bytes: bytes | None,
    public_fraction: float,
    test_fraction: float,
    split_seed: int,
) -> Dataset:
    # The bytes are keyed by their hash (the underscore arguments are not hashed again).
    from core.data import load_table, read_public

    table = load_table(_private_bytes, label_column=label_column, missing=missing, name=filename)
    key = f"upload:{private_hash}:{label_column}:{missing}:{public_hash}:{public_fraction}:{test_fraction}:{split_seed}"
    if _public_bytes is None:
        return _split_dataset(
            table, public_fraction, test_fraction, split_seed,
            key=key,
            title=filename,
            source="upload",
            public_note="no public file uploaded: public queries drawn at random from the uploaded rows",
        )
    public_X = read_public(_public_bytes, table)
    from core.data import split_public

    _, n_test = _sizes(table.n_rows, 0.0, test_fraction)
    private, test = split_public(table, n_test, rng=np.random.default_rng(split_seed))
    return Dataset(
        key=key,
        title=filename,
        source="upload",
        private=private,
        public_X=public_X,
        public_y=None,
        test=test,
        public_note="public queries from the uploaded public file (unlabeled: no accuracy diagnostics)",
    )


def load_dataset(cfg: dict[str, Any]) -> Dataset:
    """Load (or fetch from the cache) the dataset a data configuration describes.

    Raises the :mod:`core.errors` exception of the library on bad input.
    """
    pf = float(cfg.get("public_fraction", DEFAULT_DATA["public_fraction"]))
    tf = float(cfg.get("test_fraction", DEFAULT_DATA["test_fraction"]))
    s = seed()
    if cfg["source"] == "bundled":
        return _bundled_dataset(cfg["name"], pf, tf, s)
    if cfg["source"] == "generator":
        params = tuple(sorted(cfg.get("params", {}).items()))
        return _generated_dataset(cfg["name"], int(cfg["n"]), params, pf, tf, s)
    if cfg["source"] == "upload":
        uploads = st.session_state.get("_uploads", {})
        private = uploads.get(cfg["private_hash"])
        if private is None:
            raise core.errors.DataError("The uploaded file is no longer in memory; upload it again.")
        public = uploads.get(cfg.get("public_hash")) if cfg.get("public_hash") else None
        return _uploaded_dataset(
            cfg["private_hash"],
            private,
            cfg.get("filename", "upload.csv"),
            cfg.get("label_column"),
            cfg.get("missing", "refuse"),
            cfg.get("public_hash"),
            public,
            pf,
            tf,
            s,
        )
    raise core.errors.DataError(f"Unknown data source {cfg['source']!r}.")


def keep_upload(uploaded) -> str:
    """Hold an uploaded file's bytes in this session's memory; return their hash.

    ``uploaded`` is a Streamlit ``UploadedFile`` (or plain bytes).  The bytes live in
    ``st.session_state`` only, never on disk.
    """
    init()
    ss = st.session_state
    file_id = getattr(uploaded, "file_id", None)
    seen = ss.setdefault("_upload_ids", {})
    if file_id is not None and file_id in seen and seen[file_id] in ss.get("_uploads", {}):
        return seen[file_id]
    data = uploaded.getvalue() if hasattr(uploaded, "getvalue") else bytes(uploaded)
    h = digest(data)
    ss.setdefault("_uploads", {})[h] = data
    if file_id is not None:
        seen[file_id] = h
    return h


def drop_uploads(keep: set[str]) -> None:
    """Forget uploaded bytes that no configuration refers to any more."""
    uploads = st.session_state.get("_uploads", {})
    for h in [h for h in uploads if h not in keep]:
        del uploads[h]
    ids = st.session_state.get("_upload_ids", {})
    for f in [f for f, h in ids.items() if h not in keep]:
        del ids[f]


def dataset() -> Dataset:
    """The session's current dataset (the default bundled one on first launch)."""
    init()
    return load_dataset(st.session_state["data_cfg"])


def try_dataset(cfg: dict[str, Any]) -> Dataset | None:
    """Load ``cfg`` and make it current; on error show it in place and keep the old data."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PrivacyWarning)
            ds = load_dataset(cfg)
    except PrivateLabelLabError as exc:
        st.error(str(exc))
        return None
    for w in caught:
        if issubclass(w.category, UserWarning):
            st.warning(str(w.message))
    st.session_state["data_cfg"] = dict(cfg)
    fit_teachers_to(ds)
    return ds


def fit_teachers_to(ds: Dataset) -> None:
    """Lower the number of teachers when the new data cannot take the current k.

    The ensemble's k stays the user's choice wherever the data allow it; on a smaller
    table it becomes the largest k the table allows (``core.data.largest_k``), said in
    place, so that every page keeps working after a change of dataset.  A class holding
    under 1 % of the rows leaves k alone: the class-size error then explains the data.
    """
    from core.data import largest_k

    ss = st.session_state
    k_max = largest_k(ds.private)
    k = int(ss["ensemble_cfg"]["k"])
    # A class under 1 % of the rows is a property of the data the user should see (the
    # class-size error names it and the largest k); only then is k left as it is.
    balanced = int(ds.private.class_counts.min()) >= 0.01 * ds.n_private
    if k > k_max and balanced:
        ss["ensemble_cfg"] = {**ss["ensemble_cfg"], "k": k_max}
        if "ens_ui" in ss:
            ss["ens_ui"]["k"] = k_max
        ss.pop("w_ens_ui_k", None)  # the Ensemble page's k box starts from the new value
        st.info(f"Number of teachers lowered from k = {k} to {k_max}, the most this data allows "
                f"({ds.n_private} private rows; every class needs a possible majority). "
                "Change it on the Ensemble page.")


# --------------------------------------------------------------------------------------
# Learners and ensembles
# --------------------------------------------------------------------------------------


def learner_names() -> list[str]:
    from core.ensemble.learners import LEARNERS

    return list(LEARNERS)


def learner_spec(name: str):
    from core.ensemble.learners import LEARNERS

    return LEARNERS[name]


def learner_label(name: str) -> str:
    return learner_spec(name).label


def hyperparameter_widget(where, section: str, hp) -> Any:
    """One control for a :class:`core.ensemble.learners.Hyperparameter`-like spec.

    The value is kept in ``st.session_state[section][hp.name]``.  Ranges and choices come
    from the spec; the library checks the value again when the model is built.
    """
    ss = st.session_state
    ss.setdefault(section, {})
    ss[section].setdefault(hp.name, hp.default)
    label = hp.name.replace("_", " ")
    if getattr(hp, "allow_none", False):
        unlimited = where.checkbox(f"{label}: no limit", key=widget_key_for(section, hp.name + "__none",
                                   ss[section][hp.name] is None), help=hp.help)
        ss[section][hp.name + "__none"] = unlimited
        if unlimited:
            ss[section][hp.name] = None
            return None
        if ss[section][hp.name] is None:
            ss[section][hp.name] = int(hp.min or 1) if hp.type is int else float(hp.min or 1.0)
    key = widget_key(section, hp.name)
    if hp.type is bool:
        value = where.checkbox(label, key=key, help=hp.help)
    elif hp.type is str:
        value = where.selectbox(label, list(hp.choices or [hp.default]), key=key, help=hp.help)
    elif hp.type is int:
        value = where.number_input(label, min_value=None if hp.min is None else int(hp.min),
                                   max_value=None if hp.max is None else int(hp.max), step=1, key=key, help=hp.help)
        value = int(value)
    else:
        value = where.number_input(label, min_value=None if hp.min is None else float(hp.min),
                                   max_value=None if hp.max is None else float(hp.max),
                                   format="%g", key=key, help=hp.help)
        value = float(value)
    ss[section][hp.name] = value
    return value


def widget_key_for(section: str, name: str, default: Any) -> str:
    """Like :func:`widget_key` for a value that has no persistent entry yet."""
    st.session_state.setdefault(section, {}).setdefault(name, default)
    return widget_key(section, name)


def make_pipeline(table, learner: str, params: dict[str, Any]):
    """The learner behind the table's preprocessing (one-hot encoding, imputation).

    A table of numeric columns loaded without imputation needs no preprocessing (its
    preprocessor passes every column through unchanged), so the learner is used on its
    own there: the same model, fitted about twice as fast, which matters for hundreds
    of teachers.
    """
    from sklearn.pipeline import make_pipeline as sk_make_pipeline

    from core.ensemble.learners import make_learner

    model = make_learner(learner, **params)
    if plain_numeric(table):
        return model
    return sk_make_pipeline(table.preprocessor(), model)


def plain_numeric(table) -> bool:
    """Whether a table's features go to the learner unchanged (numeric, no imputation)."""
    return not table.categorical_columns and table.missing == "refuse"


def model_input(table, X: pd.DataFrame):
    """Features as the teachers see them: a float array for a plain numeric table.

    Fitting and predicting on an array skips pandas' per-call checks, which cost more
    than fitting a small teacher; both give the same teachers and votes.
    """
    return X.to_numpy(dtype=float) if plain_numeric(table) else X


class Ensemble:
    """A trained ensemble and what the pages need from it, each computed once.

    The vote counts are computed with the teachers (every mechanism needs them).  The
    per-teacher predictions (a non-private diagnostic) and the positive-class scores
    (soft labels only) cost one more pass of every teacher over the public queries
    each, so they are computed on first use and then kept: the first screen does not
    wait for them.
    """

    def __init__(self, key: tuple, teachers: Any, votes: np.ndarray, public_X: Any) -> None:
        self.key = key
        self.teachers = teachers  # core.ensemble.teachers.TeacherEnsemble
        self.votes = votes  # (m, n_classes) vote counts on the public queries
        self._public_X = public_X
        self._lock = threading.Lock()
        self._predictions: np.ndarray | None = None
        self._scores: tuple[np.ndarray | None, str | None] | None = None
        self._memo: dict[Any, Any] = {}

    @property
    def predictions(self) -> np.ndarray:
        """(m, k) per-teacher labels on the public queries: NON-PRIVATE diagnostic."""
        with self._lock:
            if self._predictions is None:
                self._predictions = np.asarray(self.teachers.predictions(self._public_X))
            return self._predictions

    def _score_pair(self) -> tuple[np.ndarray | None, str | None]:
        with self._lock:
            if self._scores is None:
                try:
                    self._scores = (np.asarray(self.teachers.scores(self._public_X)), None)
                except PrivateLabelLabError as exc:
                    self._scores = (None, str(exc))
            return self._scores

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """A value derived from this ensemble alone, computed once (``compute()``)."""
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        value = compute()
        with self._lock:
            self._memo[key] = value
        return value

    @property
    def scores(self) -> np.ndarray | None:
        """(m, k) positive-class scores for soft labels (binary tasks only), else None."""
        return self._score_pair()[0]

    @property
    def scores_error(self) -> str | None:
        """Why soft labels are unavailable, if they are."""
        return self._score_pair()[1]


class _Store:
    """A small thread-safe LRU map shared by the sessions of this process."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.items: OrderedDict = OrderedDict()

    def get(self, key):
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            return None

    def put(self, key, value) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _ensemble_store() -> _Store:
    return _Store(size=6)


@st.cache_resource(show_spinner=False)
def _model_store() -> _Store:
    return _Store(size=6)


def ensemble_key(ds: Dataset, cfg: dict[str, Any]) -> tuple:
    return (ds.key, cfg["learner"], tuple(sorted(cfg["params"].items())), int(cfg["k"]))


def cached_ensemble(ds: Dataset | None = None, cfg: dict[str, Any] | None = None) -> Ensemble | None:
    """The cached ensemble for the current (or given) settings, or None if not trained."""
    init()
    ds = ds or dataset()
    cfg = cfg or st.session_state["ensemble_cfg"]
    return _ensemble_store().get(ensemble_key(ds, cfg))


def train(ds: Dataset, cfg: dict[str, Any], progress: Callable[[int, int], None] | None = None) -> Ensemble:
    """Train the teachers for ``cfg`` on ``ds`` (or fetch them) and compute their votes."""
    from core.data import check_class_sizes
    from core.ensemble.teachers import train_teachers

    key = ensemble_key(ds, cfg)
    hit = _ensemble_store().get(key)
    if hit is not None:
        return hit
    table = ds.private
    check_class_sizes(table, int(cfg["k"]))
    teachers = train_teachers(
        model_input(table, table.features),
        table.labels,
        make_pipeline(table, cfg["learner"], cfg["params"]),
        int(cfg["k"]),
        n_classes=table.n_classes,
        rng=np.random.default_rng(seed() + 2),
        n_jobs=1,
        progress=progress,
    )
    public_X = model_input(table, ds.public_X)
    votes = np.asarray(teachers.vote_counts(public_X))
    entry = Ensemble(key=key, teachers=teachers, votes=votes, public_X=public_X)
    _ensemble_store().put(key, entry)
    return entry


def ensemble(container=None) -> Ensemble:
    """The current ensemble, trained now (with a progress bar) if it is not cached."""
    init()
    ds = dataset()
    cfg = st.session_state["ensemble_cfg"]
    hit = cached_ensemble(ds, cfg)
    if hit is not None:
        return hit
    where = container if container is not None else st
    bar = where.progress(0.0, text=f"Training {cfg['k']} teachers ({learner_label(cfg['learner'])})…")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=f"Trained {done} of {total} teachers")

    entry = train(ds, cfg, progress)
    bar.empty()
    return entry


def nonprivate_model(ds: Dataset, cfg: dict[str, Any]):
    """The learner fitted on all private rows: the NON-PRIVATE reference model."""
    key = (ds.key, cfg["learner"], tuple(sorted(cfg["params"].items())))
    hit = _model_store().get(key)
    if hit is None:
        hit = make_pipeline(ds.private, cfg["learner"], cfg["params"]).fit(ds.private.features, ds.private.labels)
        _model_store().put(key, hit)
    return hit


# --------------------------------------------------------------------------------------
# Private labeling
# --------------------------------------------------------------------------------------


def label(mechanism: str, ens: Ensemble, settings: dict[str, Any], rng=None):
    """Run one mechanism of :mod:`core.mechanisms` on the cached votes."""
    from core import mechanisms as agg

    if mechanism == "btt":
        return agg.btt_label(
            ens.votes,
            epsilon=settings["epsilon"],
            delta=settings["delta"],
            T=int(settings["T"]),
            calibration=settings["calibration"],
            beta=settings["beta"],
            rng=rng,
        )
    if mechanism == "btt-soft":
        if ens.scores is None:
            raise core.errors.ParameterError(
                ens.scores_error or "Soft labels need a binary task and a learner with probabilities."
            )
        return agg.btt_soft_label(
            ens.scores,
            epsilon=settings["epsilon"],
            delta=settings["delta"],
            T=int(settings["T"]),
            eta=settings["eta"],
            calibration=settings["calibration"],
            beta=settings["beta"],
            rng=rng,
        )
    if mechanism == "lnmax":
        return agg.lnmax_label(ens.votes, gamma=settings["gamma"], delta=settings["delta"], rng=rng)
    if mechanism == "baseline":
        return agg.composition_baseline_label(ens.votes, epsilon=settings["epsilon"], delta=settings["delta"], rng=rng)
    raise core.errors.ParameterError(f"Unknown mechanism {mechanism!r}.")


_RELEVANT = {
    "btt": ("epsilon", "delta", "T", "beta", "calibration"),
    "btt-soft": ("epsilon", "delta", "T", "eta", "beta", "calibration"),
    "lnmax": ("gamma", "delta"),
    "baseline": ("epsilon", "delta"),
}


def labeling(mechanism: str | None = None, settings: dict[str, Any] | None = None, ens: Ensemble | None = None):
    """The labeling result for the current (or given) settings, computed once per session.

    Returns ``(result, warnings)``: the :class:`core.mechanisms.LabelingResult` and the
    texts of any :class:`core.errors.PrivacyWarning` raised on the way.
    """
    init()
    settings = dict(privacy(), **(settings or {}))
    mechanism = mechanism or settings["mechanism"]
    ens = ens or ensemble()
    key = (ens.key, mechanism, tuple((n, settings[n]) for n in _RELEVANT[mechanism]), demo_mode())
    memo: OrderedDict = st.session_state["_labelings"]
    if key in memo:
        memo.move_to_end(key)
        return memo[key]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        result = label(mechanism, ens, settings, rng=noise_rng())
    found = [str(w.message) for w in caught if issubclass(w.category, PrivacyWarning)]
    memo[key] = (result, found)
    while len(memo) > 200:
        memo.popitem(last=False)
    return result, found


# --------------------------------------------------------------------------------------
# Diagnostics (NON-PRIVATE: they read true labels or teacher internals)
# --------------------------------------------------------------------------------------


def answered_accuracy(result, ds: Dataset) -> float | None:
    """Accuracy of the released hard labels on answered queries (needs true public labels)."""
    from sklearn.metrics import accuracy_score

    if ds.public_y is None or result.scores is not None:
        return None
    mask = result.answered
    if not mask.any():
        return None
    return float(accuracy_score(ds.public_y[mask], result.labels[mask]))


def teacher_accuracies(ens: Ensemble, ds: Dataset) -> np.ndarray | None:
    """Each teacher's accuracy on the public queries' true labels (NON-PRIVATE diagnostic).

    The share of queries on which a teacher's label equals the true one, for all teachers
    at once; kept with the ensemble, as it does not change with the privacy settings.
    """
    if ds.public_y is None:
        return None
    return ens.memo(("teacher_accuracies", ds.key),
                    lambda: np.mean(ens.predictions == np.asarray(ds.public_y)[:, None], axis=0))


def model_accuracy(model, table) -> float:
    """Accuracy of a fitted model on a labeled table."""
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(table.labels, model.predict(table.features)))


def fmt(x: float | None, digits: int = 3) -> str:
    """Format a number for display (— when absent)."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return f"{x:.{digits}g}"


def privacy_summary(p: dict[str, Any]) -> str:
    """The privacy settings in one short markdown block (for the sidebar)."""
    mech = p["mechanism"]
    lines = [f"**{MECHANISMS[mech].split(' (')[0]}**"]
    if mech in ("btt", "btt-soft", "baseline"):
        lines.append(f"ε = {p['epsilon']:g} · δ = {p['delta']:g}")
    else:
        lines.append(f"γ = {p['gamma']:g} · δ = {p['delta']:g}")
    if mech in ("btt", "btt-soft"):
        extra = f"T = {p['T']} · {p['calibration']} calibration"
        if mech == "btt-soft":
            extra += f" · η = {p['eta']:g}"
        lines.append(extra)
    return "  \n".join(lines)


def plurality_accuracy(ens: Ensemble, ds: Dataset) -> float | None:
    """Accuracy of the un-noised plurality vote (NON-PRIVATE diagnostic)."""
    from sklearn.metrics import accuracy_score

    from core.mechanisms.stability import plurality

    if ds.public_y is None:
        return None
    return float(accuracy_score(ds.public_y, plurality(ens.votes)))


def median(values) -> float:
    """Median, for a caption."""
    return float(np.median(np.asarray(values)))


def preview(table, rows: int = 20) -> pd.DataFrame:
    """The first rows of a table with its label column (class names), for display."""
    frame = table.features.head(rows).copy()
    names = np.asarray(table.class_names, dtype=object)
    frame[table.label_column] = names[table.labels[:rows]]
    return frame


# --------------------------------------------------------------------------------------
# Generators (specs from core.data.GENERATORS)
# --------------------------------------------------------------------------------------


def generator_description(spec: dict[str, Any]) -> str:
    """One caption describing a generator: what it draws, its VC dimension, its noise."""
    return (
        f"{spec.get('description', '')} VC dimension: {spec.get('vc_dimension', '?')}. "
        f"Noise: {spec.get('noise_model', 'none')}."
    )


def generator_parameters(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The generator's parameters as a list of dicts (each with its ``name``)."""
    return [dict(p, name=name) for name, p in spec.get("params", {}).items()]


def parameter_widget(where, section: str, p: dict[str, Any]) -> Any:
    """A number input for one generator parameter spec (kept in ``session_state[section]``)."""
    ss = st.session_state
    ss.setdefault(section, {})
    is_int = p.get("type") == "int"
    default = int(p["default"]) if is_int else float(p["default"])
    ss[section].setdefault(p["name"], default)
    key = widget_key(section, p["name"])
    if is_int:
        value = int(where.number_input(p.get("label", p["name"]), min_value=int(p["min"]), max_value=int(p["max"]),
                                       step=1, key=key, help=p.get("help")))
    else:
        value = float(where.number_input(p.get("label", p["name"]), min_value=float(p["min"]),
                                         max_value=float(p["max"]), step=float(p.get("step", 0.1)),
                                         format="%g", key=key, help=p.get("help")))
    ss[section][p["name"]] = value
    return value


# --------------------------------------------------------------------------------------
# Helpers for the labeling pages
# --------------------------------------------------------------------------------------

STATUS_COLORS = {"answered": "#2e7d32", "⊥": "#c62828", "not processed": "#9e9e9e"}


def timeline(result) -> list[tuple[str, np.ndarray, str]]:
    """Query indices of each outcome, for the timeline plot."""
    from core.mechanisms import BOTTOM, UNPROCESSED

    return [
        ("answered", np.flatnonzero(result.labels >= 0), STATUS_COLORS["answered"]),
        ("⊥", np.flatnonzero(result.labels == BOTTOM), STATUS_COLORS["⊥"]),
        ("not processed", np.flatnonzero(result.labels == UNPROCESSED), STATUS_COLORS["not processed"]),
    ]


def public_params(result) -> dict[str, Any]:
    """The run's data-independent parameters (``core.export.PUBLIC_PARAMETERS``) for ``st.json``."""
    from core.export import PUBLIC_PARAMETERS

    out = {}
    for k, v in result.params.items():
        if k not in PUBLIC_PARAMETERS:
            continue
        if isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def min_teachers(result) -> int | None:
    """BTT's fewest teachers for which a unanimous vote passes half the time (core.theory)."""
    from core.theory import btt_min_teachers

    if result.mechanism not in ("btt", "btt-soft"):
        return None
    p = result.params
    return int(btt_min_teachers(p["epsilon_target"], p["delta_target"], int(p["T"]), int(p["m"]),
                                calibration=p["calibration"], soft=result.mechanism == "btt-soft"))


def min_teachers_for_settings(m: int) -> tuple[int, float] | None:
    """``(k_min, w)`` of BTT at the current privacy settings on ``m`` queries, or None.

    ``k_min`` is :func:`core.theory.btt_min_teachers` (the fewest teachers whose
    unanimous vote passes half the time), ``w`` the threshold of
    :func:`core.accounting.calibrate_btt`.  None for the mechanisms without a threshold
    on the distance (LNMax) and for settings the library refuses.
    """
    from core.accounting import calibrate_btt
    from core.theory import btt_min_teachers

    p = privacy()
    if p["mechanism"] not in ("btt", "btt-soft"):
        return None
    soft = p["mechanism"] == "btt-soft"
    try:
        k_min = btt_min_teachers(p["epsilon"], p["delta"], int(p["T"]), int(m), calibration=p["calibration"], soft=soft)
        w = calibrate_btt(p["epsilon"], p["delta"], int(p["T"]), int(m), calibration=p["calibration"], soft=soft).threshold
    except PrivateLabelLabError:
        return None
    return int(k_min), float(w)


def mean_teacher_error(ens: Ensemble, ds: Dataset) -> float | None:
    """Average teacher error on the public queries' true labels (NON-PRIVATE diagnostic)."""
    accs = teacher_accuracies(ens, ds)
    return None if accs is None else float(1.0 - np.mean(accs))


def theorem_32(result, ens: Ensemble, ds: Dataset) -> dict[str, float] | None:
    """Theorem 3.2's cutoff and T/m bound with the teachers' measured error as γ + α."""
    from core.theory import cutoff_T, misclassification_bound

    err = mean_teacher_error(ens, ds)
    if err is None:
        return None
    beta = float(privacy()["beta"])
    return {
        "error": err,
        "T": float(cutoff_T(err, 0.0, result.m, beta)),
        "bound": float(misclassification_bound(err, 0.0, result.m, beta)),
    }


def soft_error(result, ds: Dataset, ens: Ensemble | None = None) -> float | None:
    """Mean absolute error of released scores against the true 0/1 labels (diagnostic)."""
    from sklearn.metrics import mean_absolute_error

    if ds.public_y is None or result.scores is None:
        return None
    mask = result.answered
    if not mask.any():
        return None
    return float(mean_absolute_error(ds.public_y[mask], result.scores[mask]))


# --------------------------------------------------------------------------------------
# Student and export
# --------------------------------------------------------------------------------------


def student(result, ds: Dataset, learner: str, bottom: str):
    """A student trained on the private labels (``core.ensemble.student.train_student``), once per session."""
    from core.ensemble.student import train_student

    memo = st.session_state.setdefault("_students", {})
    key = (id(result), ds.key, learner, bottom, demo_mode())
    hit = memo.get(key)
    if hit is not None and hit[0] is result:
        return hit[1]
    model = make_pipeline(ds.private, learner, {})
    fitted = train_student(ds.public_X, result, model, bottom=bottom, n_classes=ds.n_classes, rng=noise_rng())
    if len(memo) > 20:
        memo.clear()
    memo[key] = (result, fitted)
    return fitted


def labeled_csv(result, ds: Dataset) -> bytes:
    """The labeled CSV (``core.export.labeled_frame``) as bytes, built in memory."""
    from core.export import labeled_frame

    return labeled_frame(ds.public_X, result, ds.class_names).to_csv(index=False).encode("utf-8")


def report(result, ds: Dataset, cfg: dict[str, Any]) -> str:
    """The JSON privacy report (``core.export.privacy_report`` + ``report_json``)."""
    from core.export import privacy_report, report_json

    name = None if ds.source == "upload" else ds.title
    return report_json(privacy_report(result, n_private=ds.n_private, n_public=ds.n_public,
                                      learner=cfg["learner"], k=int(cfg["k"]), dataset=name))


def model_bytes(model) -> bytes:
    """A fitted model serialized with joblib, in memory."""
    import io

    import joblib

    buf = io.BytesIO()
    joblib.dump(model, buf)
    return buf.getvalue()


# --------------------------------------------------------------------------------------
# Comparison at equal (ε, δ)
# --------------------------------------------------------------------------------------


COMPARED = ("btt_tight", "btt_paper", "btt-soft", "lnmax", "baseline")
COMPARED_LABELS = {
    "btt_tight": "BTT hard labels (tight)",
    "btt_paper": "BTT hard labels (paper)",
    "btt-soft": "BTT soft labels (tight)",
    "lnmax": "PATE LNMax",
    "baseline": "Advanced-composition baseline",
}


def compare_run(variant: str, epsilon: float, ens: Ensemble | None = None):
    """One mechanism of the comparison at budget ε (δ, T, β, η from the current settings)."""
    ens = ens or ensemble()
    p = privacy()
    if variant == "btt_tight":
        return labeling("btt", {"epsilon": epsilon, "calibration": "tight"}, ens)
    if variant == "btt_paper":
        return labeling("btt", {"epsilon": epsilon, "calibration": "paper"}, ens)
    if variant == "btt-soft":
        return labeling("btt-soft", {"epsilon": epsilon, "calibration": "tight"}, ens)
    if variant == "lnmax":
        from core.accounting import lnmax_gamma_for_epsilon

        gamma = float(lnmax_gamma_for_epsilon(epsilon, int(ens.votes.shape[0]), float(p["delta"])))
        return labeling("lnmax", {"gamma": gamma}, ens)
    return labeling("baseline", {"epsilon": epsilon}, ens)


def available_variants(ens: Ensemble) -> list[str]:
    """The compared mechanisms that apply to this ensemble (soft labels need scores)."""
    return [v for v in COMPARED if v != "btt-soft" or ens.scores is not None]


def correct_count(result, ds: Dataset) -> int | None:
    """Answered hard labels that match the true label (NON-PRIVATE diagnostic)."""
    if ds.public_y is None or result.scores is not None:
        return None
    mask = result.answered
    return int(np.count_nonzero(result.labels[mask] == ds.public_y[mask]))


# --------------------------------------------------------------------------------------
# Bounds page (every number comes from core.theory)
# --------------------------------------------------------------------------------------


def bounds_defaults(ds: Dataset) -> dict[str, Any]:
    """Starting values of the Bounds page for a dataset: its n, m and a VC dimension."""
    cfg = st.session_state["data_cfg"]
    if cfg.get("source") == "generator":
        from core.data import vc_dimension

        V = int(vc_dimension(cfg["name"], **cfg.get("params", {})))
        note = f"The VC dimension of the generator's hypothesis class ({cfg['name']})."
    else:
        V = len(ds.private.features.columns) + 1
        note = "Suggested: d + 1 for linear classifiers on the d feature columns; change it for other learners."
    return {"V": V, "V_note": note, "n": ds.n_private, "m": ds.n_public, "setting": "realizable", "gamma": 0.1}


def rate_curves(V: int, epsilon: float, n: int, setting: str, gamma: float, m: int) -> dict[str, Any]:
    """Misclassification-rate shapes vs m for BTT and the composition baseline (core.theory)."""
    from core.theory import crossover_m, misclassification_rate_btt, misclassification_rate_composition

    M = float(crossover_m(V, epsilon, n, setting, gamma))
    top = max(10.0 * m, 100.0 * (M if np.isfinite(M) else m), 10.0)
    grid = np.geomspace(1.0, top, 200)
    return {
        "m": grid,
        "btt": misclassification_rate_btt(grid, V, epsilon, n, setting, gamma),
        "composition": misclassification_rate_composition(grid, V, epsilon, n, setting, gamma),
        "crossover": M,
    }


def sample_complexity_curves(V: int, epsilon: float) -> dict[str, Any]:
    """Private and non-private sample-complexity shapes vs α (core.theory)."""
    from core.theory import sample_complexity_nonprivate, sample_complexity_private

    alpha = np.geomspace(0.005, 0.5, 120)
    return {
        "alpha": alpha,
        "curves": {
            "private, realizable (Thm 4.2)": sample_complexity_private(alpha, V, epsilon, "realizable"),
            "private, agnostic (Thm 4.3)": sample_complexity_private(alpha, V, epsilon, "agnostic"),
            "private, realizable ERM (Remark 2)": sample_complexity_private(alpha, V, epsilon, "realizable_erm"),
            "private, efficient learner (Remark 3)": sample_complexity_private(alpha, V, epsilon, "realizable_efficient"),
            "non-private, realizable V/α": sample_complexity_nonprivate(alpha, V, "realizable"),
            "non-private, agnostic V/α²": sample_complexity_nonprivate(alpha, V, "agnostic"),
        },
    }


@st.cache_data(max_entries=64, show_spinner="Solving the loop T → α → k → T…")
def solve_loop(n: float, V: float, epsilon: float, delta: float, beta: float, m: int, gamma: float, setting: str):
    """``core.theory.solve_btt_parameters`` with the paper calibration (cached on its inputs).

    The tight calibration is not offered here: its solver calls the exact accountant for
    every candidate T and takes minutes.
    """
    from core.theory import solve_btt_parameters

    return solve_btt_parameters(n, V, epsilon, delta, beta, m, gamma, setting=setting, calibration="paper")


def answers_model(alpha: float, ens: Ensemble, result) -> dict[str, Any]:
    """Expected answered count vs k (``core.theory.expected_answers_btt``) at the run's settings."""
    from core.theory import btt_min_teachers, expected_answers_btt

    p = result.params
    ks = np.unique(np.geomspace(2, max(2000, 4 * ens.teachers.k), 40).astype(int))
    answered = expected_answers_btt(ks, alpha, p["epsilon_target"], p["delta_target"], int(p["T"]), int(p["m"]),
                                    calibration=p["calibration"])
    k_min = btt_min_teachers(p["epsilon_target"], p["delta_target"], int(p["T"]), int(p["m"]),
                             calibration=p["calibration"])
    return {"k": ks, "answered": answered, "k_min": int(k_min)}


def value_range(*arrays) -> tuple[float, float]:
    """Smallest positive and largest finite value of some curves (to draw marker lines on log axes)."""
    values = np.concatenate([np.asarray(a, dtype=float).ravel() for a in arrays])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return 1e-3, 1.0
    return float(values.min()), float(values.max())
