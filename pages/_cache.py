"""Caching shared by the pages: datasets, trained ensembles, reference models, labeling runs.

* A loaded dataset is cached (``st.cache_resource``, shared by the sessions of the
  process) on its identity: the bundled name or generator settings, or the SHA-256 of
  the uploaded bytes, plus the split sizes and the seed.  Two sessions share an entry
  only when they hold the very same bytes, so neither can see the other's upload.
* A trained ensemble and its votes on the public queries are cached on the dataset
  identity, the learner and its hyperparameters, ``k`` and the seed (:class:`_Ensembles`,
  hand-rolled: see its docstring for why).
* A labeling run, a student, are remembered **per session** (:func:`labeling`): noise is
  drawn once per request, so a rerun shows the same draw.
* Every labeling run on the private data is charged to that data's privacy ledger
  (:func:`ledger`, one per private dataset, process-wide) before it runs; a
  **release** (:func:`release`) is a fresh run at settings fixed before it is shown, and
  the only run the Student & export page lets the user download (docs/design.md §9).

Uploaded files stay in memory (session state and the in-process cache); nothing here
writes to disk.  Every run goes through :mod:`core.pipeline`.
"""

from __future__ import annotations

import hashlib
import threading
import warnings
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pandas as pd
import streamlit as st

import core
from core import pipeline
from core.errors import PrivacyWarning, PrivateLabelLabError
from pages import _session as session

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

    @property
    def teaching_split(self) -> bool:
        """True when the public queries are a split of the private file (a **teaching split**),
        False for a real job whose public rows come from a separate public file."""
        return not self.extra.get("two_file", False)

    @property
    def all_columns(self) -> tuple[str, ...]:
        """Every feature column of the loaded file(s), before the user dropped any."""
        return tuple(self.extra.get("all_columns", tuple(self.private.features.columns)))


def _sizes(n_rows: int, public_fraction: float, test_fraction: float) -> tuple[int, int]:
    n_public = max(1, int(round(n_rows * public_fraction)))
    n_test = max(1, int(round(n_rows * test_fraction)))
    return n_public, n_test


def _split_dataset(table, public_fraction: float, test_fraction: float, split_seed: int, *,
                   key: str, title: str, source: str, public_note: str) -> Dataset:
    """A :class:`Dataset` whose held-out test rows, then public queries, are drawn from ``table``."""
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
        public_note="teaching split: public queries drawn at random from the dataset (their true labels are held "
        "out for diagnostics)",
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
        public_note="teaching split: public queries drawn at random from the generated rows (true labels held out "
        "for diagnostics)",
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
    markers: tuple,
    public_hash: str | None,
    _public_bytes: bytes | None,
    public_fraction: float,
    test_fraction: float,
    split_seed: int,
) -> Dataset:
    # The bytes are keyed by their hash (the underscore arguments are not hashed again).
    from core.data import load_table, read_public, split_public

    table = load_table(_private_bytes, label_column=label_column, missing=missing, missing_markers=markers,
                       name=filename)
    key = f"upload:{private_hash}:{label_column}:{missing}:{markers}:{public_hash}:{public_fraction}:{test_fraction}:{split_seed}"
    if _public_bytes is None:
        return _split_dataset(
            table, public_fraction, test_fraction, split_seed,
            key=key,
            title=filename,
            source="upload",
            public_note="teaching split: no public file uploaded, so the public queries are drawn at random "
            "from the private file (they are private rows)",
        )
    public_X = read_public(_public_bytes, table)
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
        extra={"two_file": True},
    )


JOBS: dict[str, dict[str, str]] = {
    "adult": {"title": "Adult: private = adult_train, public = adult_test (features only)",
              "private": "adult_train", "public": "adult_test", "label_column": "income"},
}
"""Ready two-file jobs on bundled files: a private labeled file and a separate public file."""


def _bundled_path(name: str):
    from core.data import DATASETS_DIR

    for suffix in (".csv.gz", ".csv"):
        path = DATASETS_DIR / f"{name}{suffix}"
        if path.is_file():
            return path
    raise core.errors.DataError(f"The bundled file {name!r} is missing from {DATASETS_DIR}.")


@st.cache_resource(max_entries=4, show_spinner="Loading the private and the public file…")
def _bundled_job(name: str, missing: str, markers: tuple, test_fraction: float, split_seed: int) -> Dataset:
    """A ready two-file job: the private file (minus held-out test rows) and the public file's features.

    The public file's labels are kept aside as ``public_y`` for the non-private diagnostics only;
    the public rows exported are its features.
    """
    from core.data import load_table, split_public

    job = JOBS[name]
    table = load_table(_bundled_path(job["private"]), label_column=job["label_column"], missing=missing,
                       missing_markers=markers, name=job["private"])
    public = load_table(_bundled_path(job["public"]), label_column=job["label_column"], missing=missing,
                        missing_markers=markers, name=job["public"])
    public_y = public.labels if tuple(public.class_names) == tuple(table.class_names) else None
    _, n_test = _sizes(table.n_rows, 0.0, test_fraction)
    private, test = split_public(table, n_test, rng=np.random.default_rng(split_seed))
    return Dataset(
        key=f"job:{name}:{missing}:{markers}:{test_fraction}:{split_seed}",
        title=job["title"], source="job", private=private, public_X=public.features, public_y=public_y,
        test=test,
        public_note=f"two-file job: the public queries are the rows of {job['public']} (features only; its labels "
        "are kept aside for the non-private diagnostics), the private rows those of "
        f"{job['private']} minus {n_test:,} held-out test rows",
        extra={"two_file": True, "public_table": public},
    )


def _without_columns(table, drop: tuple):
    """``table`` without the feature columns in ``drop`` (the user's column choice)."""
    import dataclasses

    keep = [c for c in table.features.columns if c not in set(drop)]
    if not keep:
        raise core.errors.DataError("Keep at least one feature column.")
    return dataclasses.replace(
        table, features=table.features[keep].copy(),
        numeric_columns=tuple(c for c in table.numeric_columns if c in keep),
        categorical_columns=tuple(c for c in table.categorical_columns if c in keep),
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _finished(key: str, _ds: Dataset, drop: tuple, n_label: int) -> Dataset:
    import dataclasses

    ds = _ds
    private, test, public_X, public_y = ds.private, ds.test, ds.public_X, ds.public_y
    if drop:
        private = _without_columns(private, drop)
        test = None if test is None else _without_columns(test, drop)
        public_X = public_X[[c for c in public_X.columns if c not in set(drop)]].copy()
    if n_label and n_label < len(public_X):
        public_X = public_X.iloc[:n_label].reset_index(drop=True)
        public_y = None if public_y is None else np.asarray(public_y)[:n_label]
    return dataclasses.replace(
        ds, key=f"{ds.key}|drop={drop}|first={n_label}", private=private, test=test, public_X=public_X,
        public_y=public_y, extra={**ds.extra, "all_columns": tuple(ds.private.features.columns),
                                  "dropped": drop, "public_rows": len(ds.public_X)},
    )


def finish(ds: Dataset, drop=(), n_label: int | None = None) -> Dataset:
    """The user's column choice (``drop``, applied to private, test and public rows alike) and
    the number of public rows to label (the first ``n_label`` public rows; ε is spent over them)."""
    drop = tuple(sorted(c for c in (drop or ()) if c in ds.private.features.columns))
    n_label = int(n_label or 0)
    if not drop and not (0 < n_label < ds.n_public):
        return ds
    return _finished(ds.key, ds, drop, n_label if 0 < n_label < ds.n_public else 0)


def load_dataset(cfg: dict[str, Any]) -> Dataset:
    """Load (or fetch from the cache) the dataset a data configuration describes.

    Raises the :mod:`core.errors` exception of the library on bad input.
    """
    pf = float(cfg.get("public_fraction", session.DEFAULT_DATA["public_fraction"]))
    tf = float(cfg.get("test_fraction", session.DEFAULT_DATA["test_fraction"]))
    base = _load_base(cfg, pf, tf, session.seed())
    return finish(base, cfg.get("drop_columns", ()), cfg.get("n_label"))


def _load_base(cfg: dict[str, Any], pf: float, tf: float, s: int) -> Dataset:
    markers = tuple(cfg.get("missing_markers", ()))
    if cfg["source"] == "bundled":
        return _bundled_dataset(cfg["name"], pf, tf, s)
    if cfg["source"] == "job":
        return _bundled_job(cfg["name"], cfg.get("missing", "drop"), markers, tf, s)
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
            cfg["private_hash"], private, cfg.get("filename", "upload.csv"), cfg.get("label_column"),
            cfg.get("missing", "refuse"), markers, cfg.get("public_hash"), public, pf, tf, s,
        )
    raise core.errors.DataError(f"Unknown data source {cfg['source']!r}.")


def keep_upload(uploaded) -> str:
    """Hold an uploaded file's bytes in this session's memory; return their hash.

    ``uploaded`` is a Streamlit ``UploadedFile`` (or plain bytes).  The bytes live in
    ``st.session_state`` only, never on disk.
    """
    session.init()
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
    """The session's current dataset (the default one on first launch)."""
    session.init()
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
    place, so that every page keeps working after a change of dataset.  ``largest_k``
    reads the private class counts: this k is the data owner's decision, outside the
    (ε, δ) guarantee (no privacy is spent on it; said in a caption where it happens and
    in docs/design.md §9).  A class holding
    under 1 % of the rows leaves k alone: the class-size error then explains the data.
    """
    from core.data import largest_k

    ss = st.session_state
    k_max = largest_k(ds.private)
    k = int(ss["ensemble_cfg"]["k"])
    balanced = int(ds.private.class_counts.min()) >= 0.01 * ds.n_private
    if k > k_max and balanced:
        ss["ensemble_cfg"] = {**ss["ensemble_cfg"], "k": k_max}
        if "ens_ui" in ss:
            ss["ens_ui"]["k"] = k_max
        ss.pop("w_ens_ui_k", None)  # the Ensemble page's k box starts from the new value
        st.info(f"Number of teachers lowered from k = {k} to {k_max}, the most this data allows "
                f"({ds.n_private} private rows; every class needs a possible majority). "
                "Change it on the Ensemble page.")
        st.caption("This k is chosen from the private class counts: it is the data owner's decision, "
                   "made on the private data and outside the (ε, δ) guarantee (the published k says "
                   "that the smallest class has at least k/2 rows). Set k on the Ensemble page to "
                   "choose it yourself.")


def preview(table, rows: int = 20) -> pd.DataFrame:
    """The first rows of a table with its label column (class names), for display."""
    frame = table.features.head(rows).copy()
    names = np.asarray(table.class_names, dtype=object)
    frame[table.label_column] = names[table.labels[:rows]]
    return frame


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

    def __init__(self, key: tuple, teachers: Any, table: Any, public_X: Any, votes: np.ndarray) -> None:
        self.key = key
        self.teachers = teachers  # core.ensemble.teachers.TeacherEnsemble
        self.votes = votes  # (m, n_classes) vote counts on the public queries
        self._table = table
        self._public_X = public_X
        self._lock = threading.Lock()
        self._predictions: np.ndarray | None = None
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


class _Ensembles:
    """The trained ensembles of the process: a small thread-safe LRU map.

    Hand-rolled on purpose, not ``st.cache_resource``: training reports its progress to
    a bar on the page, and a Streamlit-cached function records the page elements it
    touches and replays them on every later hit; and the pages ask whether an ensemble
    is trained already (to show the bar only then), which a Streamlit cache cannot
    answer without running the function.  The map itself lives in ``st.cache_resource``.
    """

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
def _ensembles() -> _Ensembles:
    return _Ensembles(size=6)


def ensemble_key(ds: Dataset, cfg: dict[str, Any]) -> tuple:
    return (ds.key, cfg["learner"], tuple(sorted(cfg["params"].items())), int(cfg["k"]))


def cached_ensemble(ds: Dataset | None = None, cfg: dict[str, Any] | None = None) -> Ensemble | None:
    """The cached ensemble for the current (or given) settings, or None if not trained."""
    session.init()
    ds = ds or dataset()
    cfg = cfg or st.session_state["ensemble_cfg"]
    return _ensembles().get(ensemble_key(ds, cfg))


def train(ds: Dataset, cfg: dict[str, Any], progress: Callable[[int, int], None] | None = None,
          votes_progress: Callable[[int, int], None] | None = None) -> Ensemble:
    """Train the teachers for ``cfg`` on ``ds`` (:func:`core.pipeline.train`), or fetch them."""
    from core.mechanisms import registry

    key = ensemble_key(ds, cfg)
    hit = _ensembles().get(key)
    if hit is not None:
        return hit
    teachers = pipeline.train(ds.private, cfg["learner"], cfg["params"], int(cfg["k"]),
                              rng=np.random.default_rng(session.seed() + 2), n_jobs=1, progress=progress)
    counts = next(n for n in registry.names() if registry.get(n).inputs == "counts")
    votes = pipeline.mechanism_inputs(counts, teachers, ds.private, ds.public_X, progress=votes_progress)
    entry = Ensemble(key=key, teachers=teachers, table=ds.private, public_X=ds.public_X, votes=votes)
    _ensembles().put(key, entry)
    return entry


def ensemble(container=None) -> Ensemble:
    """The current ensemble, trained now (with a progress bar) if it is not cached."""
    from pages._widgets import learner_label

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

    entry = train(ds, cfg, progress, votes_progress)
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
    is never shown to another.

    **The ledger.** A run that is not in the memo is charged to the private data's
    ledger (:func:`ledger`) through ``pipeline.label(..., ledger=...)`` before it runs,
    exactly once: a memoised rerun shows the *same* draw, which was charged when it was
    drawn, and showing an output again is post-processing of that output, so it costs
    nothing new.  A run past the ledger's budget raises
    :class:`core.errors.BudgetExhausted` (nothing runs, nothing is remembered, so a
    later rerun asks again).  A run evicted from the memo and asked again is a new draw,
    and is charged again.

    Returns
    -------
    (LabelingResult, list of str)
        The result and the texts of any :class:`core.errors.PrivacyWarning` raised.

    Raises
    ------
    BudgetExhausted
        When the run would take the ledger's total past its budget.
    """
    session.init()
    mechanism = mechanism or session.privacy()["mechanism"]
    ens = ens or ensemble()
    asked = session.request(mechanism, settings)
    key = (ens.key, mechanism, tuple(sorted(asked.items())), session.demo_mode())
    memo: OrderedDict = st.session_state["_labelings"]
    if key in memo:
        memo.move_to_end(key)
        return memo[key]
    inputs = ens.inputs(mechanism)
    led = ledger(ens=ens)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        # Charged BEFORE the run (refused past the budget: BudgetExhausted, nothing runs).
        result = pipeline.label(inputs, mechanism, asked, rng=session.noise_rng(), ledger=led)
    found = [str(w.message) for w in caught if issubclass(w.category, PrivacyWarning)]
    memo[key] = (result, found)
    while len(memo) > 200:
        memo.popitem(last=False)
    return result, found


# --------------------------------------------------------------------------------------
# The privacy ledger of the private data, and the release (docs/design.md §9)
# --------------------------------------------------------------------------------------

BUDGET_SECTION = "ledger_budget"
"""Session-state section of the optional total budget: ``{"epsilon": 0 (none) or ε, "delta": δ}``."""

DEFAULT_BUDGET_DELTA = 1e-4
"""The budget's δ offered first (the runs' δs and composition slacks add up to the total δ)."""

SPENT_EXPLANATION = (
    "Every labeling run the app made on these private rows counts, including runs only looked at "
    "(each new setting, every Compare row and curve point, each release); they compose into this "
    "total. Showing a run again costs nothing: it is the same draw."
)


def fingerprint(table) -> str:
    """The ledger key of a private table: :func:`core.accounting.dataset_fingerprint` of
    its features and labels (the private rows as split, not the file they came from).

    A SHA-256 of a canonical serialisation: equal private rows give the same ledger,
    and the hash reveals nothing about the rows beyond equality (someone who could
    guess the whole table could confirm the guess; it is never shown or exported).
    Computed once per table and kept beside it.
    """
    from core.accounting import dataset_fingerprint

    with _FINGERPRINT_LOCK:
        hit = _FINGERPRINTS.get(id(table))
        if hit is not None and hit[0] is table:
            return hit[1]
    fp = dataset_fingerprint(table.features, table.labels)
    with _FINGERPRINT_LOCK:
        _FINGERPRINTS[id(table)] = (table, fp)
        while len(_FINGERPRINTS) > 32:
            _FINGERPRINTS.pop(next(iter(_FINGERPRINTS)))
    return fp


_FINGERPRINTS: dict[int, tuple] = {}
_FINGERPRINT_LOCK = threading.Lock()


def ledger(ds: Dataset | None = None, *, ens: Ensemble | None = None):
    """The privacy ledger of the current (or given) private data, with this session's budget.

    One ledger per private dataset for the whole process
    (:func:`core.accounting.ledger_for` on :func:`fingerprint`): two sessions on the same
    private rows add to the same total.  The optional budget set on the Private labeling
    page is applied to it here, before every charge (the last budget set for this data
    applies).
    """
    from core.accounting import ledger_for

    table = ens._table if ens is not None else (ds or dataset()).private
    led = ledger_for(fingerprint(table))
    wanted = st.session_state.get(BUDGET_SECTION) or {}
    eps = wanted.get("epsilon")
    if eps is not None and float(eps) > 0:
        led.set_budget(epsilon=float(eps), delta=float(wanted.get("delta", DEFAULT_BUDGET_DELTA)))
    elif led.budget is not None:
        led.set_budget(epsilon=None)
    return led


def show_spent(where=None, ds: Dataset | None = None, *, ens: Ensemble | None = None) -> None:
    """Show "Spent on this data so far: (ε, δ)" with its one-line explanation."""
    where = where if where is not None else st
    led = ledger(ds, ens=ens)
    total = led.total()
    budget = led.budget
    of = "" if budget is None else f" of a budget (ε, δ) = ({budget.epsilon:.4g}, {budget.delta:.3g})"
    where.markdown(f"**Spent on this data so far: (ε, δ) = ({total.epsilon:.4g}, {total.delta:.3g})** "
                   f"over {len(led)} run{'s' if len(led) != 1 else ''}{of}.")
    where.caption(SPENT_EXPLANATION)


def release(ds: Dataset, ens: Ensemble, mechanism: str, asked: dict[str, Any]) -> dict[str, Any]:
    """A **release**: a fresh run at ``(mechanism, asked)``, fixed before it is shown.

    Never taken from the memo of :func:`labeling`: a new draw of the noise (in demo
    mode a fixed seed other than the exploring runs' one, so the release is still a new
    draw and still repeats), charged to the ledger before it runs (BudgetExhausted past
    the budget: nothing runs and the previous release, if any, stays).  Stored in this
    session as the one run the downloads export.
    """
    led = ledger(ds, ens=ens)
    rng = session.DEMO_SEED + 1 if session.demo_mode() else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        result = pipeline.label(ens.inputs(mechanism), mechanism, dict(asked), rng=rng, ledger=led)
    st.session_state["_release"] = {"result": result, "mechanism": mechanism, "asked": dict(asked),
                                    "ens_key": ens.key, "ds_key": ds.key, "number": len(led)}
    return st.session_state["_release"]


def current_release(ds: Dataset, ens: Ensemble) -> dict[str, Any] | None:
    """This session's release on the current data and ensemble, or None."""
    rel = st.session_state.get("_release")
    if rel is None or rel["ens_key"] != ens.key or rel["ds_key"] != ds.key:
        return None
    return rel


def student(result, ds: Dataset, learner: str, bottom: str):
    """The student of a run (:func:`core.pipeline.student`), once per session and run."""
    memo = st.session_state.setdefault("_students", {})
    key = (id(result), ds.key, learner, bottom, session.demo_mode())
    hit = memo.get(key)
    if hit is not None and hit[0] is result:
        return hit[1]
    fitted = pipeline.student(ds.public_X, result, learner, {}, ds.private, bottom=bottom, rng=session.noise_rng())
    if len(memo) > 20:
        memo.clear()
    memo[key] = (result, fitted)
    return fitted


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


def compare_rows(ens: Ensemble, epsilon: float, m: int, extra: tuple = ()) -> tuple[dict[str, tuple], list[str]]:
    """The runs of the comparison at budget ε: every registered mechanism that applies.

    A mechanism applies when it takes ε, this ensemble has its inputs, and its guarantee
    at that ε on ``m`` queries (:func:`core.pipeline.privacy_map`, before any data is
    seen) is at most ε: a mechanism that spends ε per query is left out, with the
    reason.  Choice parameters (BTT's calibration) take their registered default;
    ``extra`` adds rows ``(name, settings)`` at other settings.  The other settings (δ,
    T, …) are the session's.

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
        if not ens.offers(name):
            skipped.append(f"{mech.title} is not compared: {ens.scores_error}")
            continue
        choices = {p.name: p.default for p in mech.parameters if p.kind == "choice"}
        settings = {**choices, **more, "epsilon": float(epsilon)}
        try:
            spent = pipeline.privacy_map(name, session.request(name, settings), m)
        except PrivateLabelLabError as exc:
            skipped.append(f"{mech.title} is not compared: {exc}")
            continue
        if spent.epsilon > float(epsilon) * (1 + 1e-6) + 1e-9:
            skipped.append(f"{mech.title} is not compared: at ε = {float(epsilon):g} it spends ε = {spent.epsilon:.4g} "
                           f"on {m:,} queries (ε per query).")
            continue
        label = mech.title + "".join(f" ({settings[c]})" for c in choices)
        rows[label] = (name, settings)
    return rows, skipped


@st.cache_data(max_entries=64, show_spinner="Solving the loop T → α → k → T…")
def solve_loop(n: float, V: float, epsilon: float, delta: float, beta: float, m: int, gamma: float, setting: str):
    """:func:`core.theory.solve_loop` (paper calibration), cached on its public inputs."""
    from core.theory import solve_loop as solve

    return solve(n, V, epsilon, delta, beta, m, gamma, setting)
