"""Datasets of the app: bundled, generated, uploaded and two-file jobs, split and cached.

A loaded dataset is cached (``st.cache_resource``, shared by the sessions of the process) on
its identity: the bundled name or generator settings, or the SHA-256 of the uploaded bytes,
plus the split sizes and the seed.  Two sessions share an entry only when they hold the very
same bytes, so neither can see the other's upload.  Uploaded files stay in memory; nothing
here writes to disk.  A split of one file is a **teaching split**; a real job has a private
and a separate public file.
"""

from __future__ import annotations

import contextlib
import hashlib
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.errors import PrivacyWarning, PrivateLabelLabError
from app_pages import _serving as serving
from app_pages import _session as session
from app_pages._text import app_words, literal

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
        return int(self.private.n_units)  # the file's count, before a drop (public)

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

    @property
    def export_columns(self) -> dict[str, str]:
        """The names of the columns an export adds, decided from the loaded files' columns
        (never one of them), so that a release is never refused for a clash."""
        from core.export import export_columns

        return export_columns(list(self.all_columns))

    @property
    def join_keys(self) -> pd.DataFrame | None:
        """A two-file job's public columns left out of the features (identifiers, codes...), one
        row per public query: what the export may carry as join keys (the public file's own
        values, never the private file's).  None when there are none."""
        keys = self.extra.get("public_keys")
        return None if keys is None or keys.shape[1] == 0 else keys

    @property
    def public_rows(self):
        """A teaching split's public queries as row numbers of the file they were drawn from
        (1 = the first data row), for an export that can be joined back to that file."""
        return self.extra.get("public_source_rows", np.arange(1, self.n_public + 1))


def _units(table) -> int:
    """What a split counts: rows, or persons when the table has a privacy unit (split whole)."""
    return table.n_units


def _sizes(n_rows: int, public_fraction: float, test_fraction: float) -> tuple[int, int]:
    n_public = max(1, int(round(n_rows * public_fraction)))
    n_test = max(1, int(round(n_rows * test_fraction)))
    return n_public, n_test


def _split_dataset(table, public_fraction: float, test_fraction: float, split_seed: int, *,
                   key: str, title: str, source: str, public_note: str) -> Dataset:
    """A :class:`Dataset` whose held-out test rows, then public queries, are drawn from ``table``.

    With a privacy unit the public part holds whole persons, and ONE row of each is a query,
    chosen at random without reading it (:func:`core.data.units.bound_rows`, ``r = 1``): the
    number of queries ``m`` is then the public part's number of persons, its share of the
    file's count (public), never its number of rows, which counts how many rows each of its
    persons has (private under docs/design.md §1.2) -- and with ``m`` the price, the ledger
    entry and the report of every run."""
    from core.data import split_public

    n_public, n_test = _sizes(_units(table), public_fraction, test_fraction)  # persons with a unit
    rng = np.random.default_rng(split_seed)
    rest, test = split_public(table, n_test, rng=rng)
    private, public = split_public(rest, n_public, rng=rng)
    public_X, public_y, rows = public.features, public.labels, public.rows
    if public.unit is not None:  # one query per person: m is the persons' count, not their rows'
        from core.data.units import bound_rows

        one = bound_rows(public.unit, 1, rng=rng)
        public_X, public_y, rows = public_X.iloc[one].reset_index(drop=True), public_y[one], rows[one]
    return Dataset(key=key, title=title, source=source, private=private, public_X=public_X,
                   public_y=public_y, test=test, public_note=public_note,
                   extra={"public_source_rows": rows})


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
    fixes: tuple = (False, False),
    before: tuple = (),
    privacy_unit: str | None = None,
    csv_format: tuple = (None, None, None),
    public_name: str | None = None,
    left_out: tuple = (),
    classes: tuple | None = None,
) -> Dataset:
    # The bytes are keyed by their hash (the underscore arguments are not hashed again).
    # ``fixes``: (rename duplicate column names, drop columns empty in every row);
    # ``before``: columns left out before loading (a column that would stop the file from loading);
    # ``csv_format``: the File format controls (separator, decimal mark, encoding; None: detected);
    # ``left_out``: columns left out of the features by default (core.data.default_features), also
    # before loading (a cause of death empty for the living must not refuse the file); the public
    # file's copies of the columns left out before loading are kept aside as possible join keys;
    # ``classes``: the declared class list (None: read from the file, treated as public).
    from core.data import CsvFormat, check_pair, copied_rows, load_table, split_public
    from core.data.problems import without_columns

    if label_column is None:
        raise core.errors.DataError("Choose the label column: it is never guessed.")
    if _public_bytes is not None:  # one file uploaded in both boxes: refused before anything is read
        with naming(filename):
            check_pair(_private_bytes, _public_bytes)
    rename, drop_empty = (bool(f) for f in fixes)
    fmt = CsvFormat(*csv_format)
    remove = tuple(before) + tuple(c for c in left_out if c not in before)
    private_bytes, fmt_private = _private_bytes, fmt
    with naming(filename):
        if remove:  # the columns left out; the bytes become plain CSV (comma, decimal point, UTF-8)
            private_bytes, fmt_private = without_columns(_private_bytes, remove, rename_duplicates=rename,
                                                         csv_format=fmt, privacy_unit=privacy_unit), None
        table = load_table(private_bytes, label_column=label_column, missing=missing, missing_markers=markers,
                           name=filename, rename_duplicates=rename, drop_empty_columns=drop_empty,
                           privacy_unit=privacy_unit, csv_format=fmt_private, classes=classes)
    key = (f"upload:{private_hash}:{label_column}:{missing}:{markers}:{public_hash}:{public_fraction}:"
           f"{test_fraction}:{split_seed}:{rename}:{drop_empty}:{before}:{privacy_unit}:{csv_format}:{left_out}"
           + ("" if classes is None else f":classes={list(classes)!r}"))
    if _public_bytes is None:  # a one-file job: its queries are private rows, so no drop (m would read them)
        from core.data import check_one_file_queries

        with naming(filename):
            check_one_file_queries(table)
        return _split_dataset(
            table, public_fraction, test_fraction, split_seed,
            key=key,
            title=filename,
            source="upload",
            public_note="teaching split: no public file uploaded, so the public queries are drawn at random "
            "from the private file (they are private rows)",
        )
    with naming(public_name or "the public file"):
        # the person column is never a feature, but the public file's own IDs join its labels back: a key
        carried = remove + ((privacy_unit,) if privacy_unit and privacy_unit not in remove else ())
        public_X, keys = _public_rows(_public_bytes, table, carried, rename, fmt)
    copied = copied_rows(table, public_X)  # NON-PRIVATE: for the owner, shown on loading only
    _, n_test = _sizes(_units(table), 0.0, test_fraction)  # the test hold-out: whole persons with a unit
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
        extra={"two_file": True, "public_keys": keys, "copied_rows": None if copied is None else copied.message},
    )


def _public_rows(data: bytes, table, remove: tuple, rename: bool, fmt):
    """The uploaded public file's checked rows (:func:`core.data.read_public`'s path) and, for the
    columns left out before loading that it has, those columns of the same rows (the rows kept
    when ``missing="drop"`` leaves some out): the export's possible join keys (public columns,
    never features), or None."""
    from core.data import read_public

    return read_public(data, table, rename_duplicates=rename, csv_format=fmt, keys=remove)


JOBS: dict[str, dict[str, Any]] = {
    "adult": {"title": "Adult: private = adult_train, public = adult_test (features only)",
              "private": "adult_train", "public": "adult_test", "label_column": "income",
              "classes": ("<=50K", ">50K")},
}
"""Ready two-file jobs on bundled files: a private labeled file and a separate public file, and
their declared (public) classes."""


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
                       missing_markers=markers, name=job["private"], classes=job.get("classes"))
    public = load_table(_bundled_path(job["public"]), label_column=job["label_column"], missing=missing,
                        missing_markers=markers, name=job["public"], classes=job.get("classes"))
    public_y = public.labels if tuple(public.class_names) == tuple(table.class_names) else None
    _, n_test = _sizes(_units(table), 0.0, test_fraction)
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
    keys = ds.extra.get("public_keys")
    if drop:
        private = _without_columns(private, drop)
        test = None if test is None else _without_columns(test, drop)
        if ds.extra.get("two_file"):  # the public file's copies of the columns left out: possible join keys
            more = public_X[[c for c in drop if c in public_X.columns]].reset_index(drop=True)
            keys = more if keys is None else pd.concat([keys, more], axis=1)
        public_X = public_X[[c for c in public_X.columns if c not in set(drop)]].copy()
    extra = {**ds.extra, "all_columns": tuple(ds.private.features.columns), "dropped": drop,
             "public_rows": len(ds.public_X), "public_keys": keys}
    if n_label and n_label < len(public_X):
        public_X = public_X.iloc[:n_label].reset_index(drop=True)
        public_y = None if public_y is None else np.asarray(public_y)[:n_label]
        if keys is not None:
            extra["public_keys"] = keys.iloc[:n_label].reset_index(drop=True)
        if "public_source_rows" in extra:
            extra["public_source_rows"] = np.asarray(extra["public_source_rows"])[:n_label]
    return dataclasses.replace(ds, key=f"{ds.key}|drop={drop}|first={n_label}", private=private, test=test,
                               public_X=public_X, public_y=public_y, extra=extra)


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
            (bool(cfg.get("rename_duplicates")), bool(cfg.get("drop_empty_columns"))),
            tuple(cfg.get("drop_before", ())), cfg.get("privacy_unit") or None,
            tuple(cfg.get("csv_format", (None, None, None))), cfg.get("public_filename"), tuple(cfg.get("left_out", ())),
            tuple(cfg["class_names"]) if cfg.get("class_names") else None,
        )
    raise core.errors.DataError(f"Unknown data source {cfg['source']!r}.")


@st.cache_data(max_entries=16, show_spinner="Checking the columns…")
def _file_check(private_hash: str, _data: bytes, label_column: str | None, missing: str, markers: tuple,
                rename: bool, drop_empty: bool, drop: tuple, privacy_unit: str | None = None,
                csv_format: tuple = (None, None, None)):
    from core.data import CsvFormat
    from core.data.problems import check_file

    return check_file(_data, label_column=label_column, missing=missing, missing_markers=markers,
                      rename_duplicates=rename, drop_empty_columns=drop_empty, drop_columns=drop,
                      privacy_unit=privacy_unit, csv_format=CsvFormat(*csv_format))


@contextlib.contextmanager
def naming(filename: str | None) -> Iterator[None]:
    """Name the uploaded file ``filename`` in the library errors raised inside (the bytes the
    library reads have no name of their own): ``The file 'x.csv' is ...``."""
    from core.data.formats import named

    try:
        yield
    except core.errors.DataError as exc:
        renamed = type(exc)(named(str(exc), filename))
        renamed.__dict__.update(exc.__dict__)
        raise renamed from None


def upload_check(cfg: dict[str, Any], drop: tuple = ()):
    """The one column check of an uploaded private file with the options of ``cfg``
    (:func:`core.data.check_file`): every problem at once, before and after loading.

    Its stand-in findings read the private labels: a NON-PRIVATE diagnostic for the data's
    owner, shown on the page only."""
    data = st.session_state.get("_uploads", {}).get(cfg["private_hash"])
    if data is None:
        raise core.errors.DataError("The uploaded file is no longer in memory; upload it again.")
    with naming(cfg.get("filename")):
        return _file_check(cfg["private_hash"], data, cfg.get("label_column"), cfg.get("missing", "refuse"),
                       tuple(cfg.get("missing_markers", ())), bool(cfg.get("rename_duplicates")),
                       bool(cfg.get("drop_empty_columns")), tuple(sorted({*cfg.get("drop_before", ()), *drop})),
                       cfg.get("privacy_unit") or None, tuple(cfg.get("csv_format", (None, None, None))))


@st.cache_data(max_entries=16, show_spinner="Checking the columns…")
def _table_check(key: str, _table, generated: bool):
    from core.data.problems import check_columns

    reason = ("generated data: the generator computes the label from the features, so a feature that gives "
              "the label is there by design") if generated else None
    return check_columns(_table, stand_ins_reason=reason)


def table_check(ds: Dataset):
    """The column checks of a loaded bundled, generated or two-file dataset
    (:func:`core.data.check_columns`; no stand-in check on generated data, said so)."""
    return _table_check(ds.key, ds.private, ds.source == "generator")


WIDE_TABLE = 200
"""A bundled table with more feature columns than this checks its columns on a click (each
column alone takes time: MNIST's 784 pixels would slow the set's first opening)."""


def _table_key(ds: Dataset) -> str:
    return ds.key.split("|", 1)[0]  # the loaded table's, whatever columns are chosen from it


def check_waits(ds: Dataset) -> bool:
    """True for a wide bundled table whose column check has not been asked for yet."""
    return (ds.source == "bundled" and len(ds.private.features.columns) > WIDE_TABLE
            and _table_key(ds) not in st.session_state.setdefault("_checked_tables", set()))


def check_now(ds: Dataset) -> None:
    """Ask for a wide table's column check (the page's button)."""
    st.session_state.setdefault("_checked_tables", set()).add(_table_key(ds))


def column_choice(cfg: dict[str, Any]):
    """The column check of the data ``cfg`` loads, every column included (but those the user
    left out before loading), and its default features (:func:`core.data.default_features`,
    the same decision as the command line's): identifiers, survey weights and label stand-ins
    left out unless ``cfg["keep"]`` keeps them.

    Returns
    -------
    (core.data.ColumnCheck, core.data.FeatureChoice)
        ``(None, None)`` for a wide bundled table not checked yet (:func:`check_waits`).
    """
    from core.data import default_features

    if cfg["source"] == "upload":
        check = upload_check(cfg)
    else:
        pf = float(cfg.get("public_fraction", session.DEFAULT_DATA["public_fraction"]))
        tf = float(cfg.get("test_fraction", session.DEFAULT_DATA["test_fraction"]))
        base = _load_base(cfg, pf, tf, session.seed())
        if check_waits(base):
            return None, None
        check = _table_check(base.key, base.private, base.source == "generator")
    keep = [c for c in cfg.get("keep", ()) if c in check.features]
    return check, default_features(check, keep=keep, public=public_check(cfg, check))


def report_features(ds: Dataset) -> Any:
    """What a release's report says of its features (``privacy_report(..., features=)``,
    docs/design.md §1.3): the default choice (:func:`column_choice`) with its statement, the
    capitals note included when a check of the private rows chose it; a set the user changed in
    the feature box keeps that note (the box opened on the default), and is declared only when
    no check of the private rows chose the default.  A wide table not checked: its columns,
    all of them (no check read them)."""
    import dataclasses

    features = tuple(str(c) for c in ds.private.features.columns)
    cfg = st.session_state.get("data_cfg", {})
    if ds.source == "upload" and cfg.get("private_hash") not in st.session_state.get("_uploads", {}):
        choice = None
    else:
        choice = column_choice(cfg)[1]
    if choice is None:
        return list(features)
    if tuple(choice.features) == features:
        return choice
    return dataclasses.replace(choice, features=features, declared=choice.read_private is None)


def public_check(cfg: dict[str, Any], check) -> Any:
    """The value-based column checks of an upload's PUBLIC file (:func:`core.data.check_public_columns`):
    in a two-file job they, not the private file's, decide the default features (docs/design.md
    §1.3).  None without a public file (a one-file job, bundled or generated data)."""
    if cfg.get("source") != "upload" or not cfg.get("public_hash") or check is None:
        return None
    data = st.session_state.get("_uploads", {}).get(cfg["public_hash"])
    if data is None:
        raise core.errors.DataError("The uploaded public file is no longer in memory; upload it again.")
    with naming(cfg.get("public_filename")):
        return _public_check(cfg["public_hash"], data, tuple(check.features), tuple(cfg.get("missing_markers", ())),
                             tuple(cfg.get("csv_format", (None, None, None))))


@st.cache_data(max_entries=16, show_spinner="Checking the public columns…")
def _public_check(public_hash: str, _data: bytes, features: tuple, markers: tuple, csv_format: tuple):
    from core.data import CsvFormat
    from core.data.problems import check_public_columns

    return check_public_columns(_data, features=features, missing_markers=markers, csv_format=CsvFormat(*csv_format))


def keep_upload(uploaded) -> str:
    """Hold an uploaded file's bytes in this session's memory; return their hash.

    ``uploaded`` is a Streamlit ``UploadedFile`` (or plain bytes).  The bytes live in
    ``st.session_state`` only, never on disk.  Refused (:class:`app_pages._serving.UploadRefused`)
    on a server that takes no private file from this session (:func:`app_pages._serving.may_upload`).
    """
    serving.require_upload()
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
        st.error(app_words(exc))
        lacks = getattr(exc, "columns", None)  # public columns missing: the Data page offers their Drop button
        st.session_state["_public_lacks"] = tuple(lacks) if lacks else ()
        return None
    st.session_state["_public_lacks"] = ()
    for w in caught:
        if issubclass(w.category, UserWarning):
            st.warning(literal(w.message))
    if ds.extra.get("copied_rows"):  # a NON-PRIVATE diagnostic, marked as such in its text; never exported
        st.warning(literal(ds.extra["copied_rows"]))
    st.session_state["data_cfg"] = dict(cfg)
    session.first_view(ds)
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
    With a declared class list no class count is read (``largest_k`` limits k by the
    persons only, docs/design.md §1.3).
    """
    from core.data import largest_k

    ss = st.session_state
    k_max = largest_k(ds.private)
    k = int(ss["ensemble_cfg"]["k"])
    declared = ds.private.classes_declared  # a declared class list: no class count is read (core.data.largest_k)
    balanced = declared or int(ds.private.class_counts.min()) >= 0.01 * ds.n_private
    if k > k_max and balanced:
        ss["ensemble_cfg"] = {**ss["ensemble_cfg"], "k": k_max}
        if "ens_ui" in ss:
            ss["ens_ui"]["k"] = k_max
        ss.pop("w_ens_ui_k", None)  # the Ensemble page's k box starts from the new value
        st.info(f"Number of teachers lowered from k = {k} to {k_max}, the most this data allows "
                f"({ds.n_private} private rows; "
                + ("every chunk needs two). " if declared else "every class needs a possible majority). ")
                + "Change it on the Ensemble page.")
        if not declared:
            st.caption("This k is chosen from the private class counts: it is the data owner's decision, "
                       "made on the private data and outside the (ε, δ) guarantee (the published k says "
                       "that the smallest class has at least k/2 rows). Set k on the Ensemble page to "
                       "choose it yourself, or declare the classes (then no class count is read).")


def preview(table, rows: int = 20) -> pd.DataFrame:
    """The first rows of a table with its label column (class names), for display."""
    frame = table.features.head(rows).copy()
    names = np.asarray(table.class_names, dtype=object)
    frame[table.label_column] = names[table.labels[:rows]]
    return frame
