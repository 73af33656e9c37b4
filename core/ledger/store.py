"""The ledger store: one SQLite file shared by the app, the command line and the library.

Where it is (:func:`store_path`, decided once): the path given (``--ledger PATH`` on the
command line, ``store=`` in the library), else the environment variable
``PRIVATE_LABEL_LAB_LEDGER``, else ``$XDG_DATA_HOME/private-label-lab/ledger.sqlite``
(``~/.local/share/private-label-lab/ledger.sqlite``).

What it holds, per dataset **name** (the name the data owner gives the data; nothing is
derived from the data's bytes or values):

* ``datasets``: the name, the budget (ε, δ) or none, a version bumped by every write;
* ``runs``: every run charged, in order: its ledger entry as JSON (the privacy map and the
  run's public parameters: :func:`core.ledger.entries.public_params` drops anything
  data-dependent), the index of its distinct map, and whether it read the whole dataset
  or named units;
* ``units`` (only once a run named units): the units' 64-bit keyed hashes
  (:mod:`core.ledger.units`; the secret is **not** in the store but beside it, or in the
  environment), each unit's class, and each class's count of runs per map
  (:mod:`core.ledger.classes`);
* ``meta``: the format's name and version, a check value of the units' secret, and the
  store's identity (a random token drawn when the file is made): a ledger unpickled in
  another process charges the store only where the file at its path is this very store
  (a Dask worker on another machine finds another file there, or none).

No private value is stored: no row, no hash of a row, no ID in the clear, no count
read from the data.

Durability and concurrency.  The file is in write-ahead-log mode with
``synchronous=FULL``; a charge runs in one ``BEGIN IMMEDIATE`` transaction that reads the
dataset's ledger, checks the run against its budget and writes it, and is committed
before the caller reads any private row.  SQLite's write lock serialises the transactions
of every process (two command-line runs, the app's server and a notebook), so two charges
can never both pass a budget that has room for one; a process killed before its commit
leaves no trace, and one killed after it leaves the run recorded.

References
----------
.. [SQLite] D. R. Hipp et al., SQLite, "Write-Ahead Logging" and "Atomic Commit"
   (https://sqlite.org/wal.html, https://sqlite.org/atomiccommit.html).
"""

from __future__ import annotations

import contextlib
import os
import stat
import sqlite3
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import DataError, LedgerUnreachable, ParameterError
from core.ledger.classes import UnitClasses
from core.ledger.state import Budget, LedgerState, Run
from core.ledger.units import key_check, store_secret

__all__ = ["FORMAT", "STORE_ENV", "VERSION", "LedgerStore", "default_store_path", "store_path"]

STORE_ENV = "PRIVATE_LABEL_LAB_LEDGER"
"""Environment variable naming the ledger store's file."""

FORMAT = "private-label-lab-ledger"
VERSION = 2

BUSY_TIMEOUT_S = 600.0
"""How long a charge waits for another process's transaction before giving up."""

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS datasets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    budget_epsilon REAL,
    budget_delta REAL,
    version INTEGER NOT NULL DEFAULT 0,
    created TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS runs (
    dataset_id INTEGER NOT NULL REFERENCES datasets(id),
    seq INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    whole INTEGER NOT NULL CHECK (whole IN (0, 1)),
    entry TEXT NOT NULL,
    PRIMARY KEY (dataset_id, seq)
)""",
    """CREATE TABLE IF NOT EXISTS units (
    dataset_id INTEGER PRIMARY KEY REFERENCES datasets(id),
    keys BLOB NOT NULL,
    class_of BLOB NOT NULL,
    class_dtype TEXT NOT NULL,
    vectors BLOB NOT NULL,
    vector_dtype TEXT NOT NULL,
    n_kinds INTEGER NOT NULL
)""",
)


def default_store_path() -> Path:
    """The per-user default: ``$XDG_DATA_HOME/private-label-lab/ledger.sqlite``.

    Returns
    -------
    pathlib.Path
    """
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    root = Path(base) if base else Path.home() / ".local" / "share"
    return root / "private-label-lab" / "ledger.sqlite"


def store_path(path: str | os.PathLike | None = None) -> Path:
    """The ledger store's file: ``path``, else ``$PRIVATE_LABEL_LAB_LEDGER``, else the default.

    Parameters
    ----------
    path : path, optional

    Returns
    -------
    pathlib.Path
        Absolute, ``~`` expanded.
    """
    if path is None:
        env = os.environ.get(STORE_ENV, "").strip()
        chosen = Path(env) if env else default_store_path()
    else:
        chosen = Path(path)
    return chosen.expanduser().absolute()


def check_name(name: Any) -> str:
    """A dataset's name: a non-empty text (surrounding spaces removed), at most 200 characters.

    Parameters
    ----------
    name : str
        The name as given (anything but a text is refused).

    Returns
    -------
    str

    Raises
    ------
    ParameterError
    """
    if not isinstance(name, str) or not name.strip():
        raise ParameterError("a ledger needs the private dataset's name (a non-empty text, e.g. dataset=\"credit\"): "
                             "the name its budget is kept under.")
    name = name.strip()
    if len(name) > 200:
        raise ParameterError(f"a dataset's name is at most 200 characters, got {len(name)}.")
    return name


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _blob(arr: np.ndarray) -> tuple[bytes, str]:
    dt = np.dtype(arr.dtype).newbyteorder("<")
    return np.ascontiguousarray(arr, dtype=dt).tobytes(), dt.str


def _array(blob: bytes, dtype: str) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.dtype(dtype)).copy()


def _owner_only(path: Path) -> None:
    """Make the store, its WAL files and its key file readable by their owner only; warn of any
    that another user owns or can replace.

    A store made by this library is created 0600; one made beforehand (copied, restored from a
    backup, created under a loose umask) may be readable by others, and its units' hashes with its
    key file would let them enumerate charged IDs (docs/design.md §9).  A file owned by another
    user is left as it is (its owner decides), but never silently: a store or key file planted in
    a shared folder by someone else lets them read what is charged (with the key, which IDs),
    and change or reset it, so a :class:`core.errors.PrivacyWarning` names the files and what to
    do.  Files of yours are no safer when another user can replace them: a symbolic link on the
    path that another user owns (they can point it at a fresh store), or a folder that another
    user owns or that anyone may write without the sticky bit (they can delete or swap the
    files: a store deleted is a ledger reset), is warned of the same way.  Called when the store
    is opened and again when the key file is first read (it is made, or found, at the first
    charge naming units, after the store was opened).
    """
    me = os.getuid()
    others = []
    for name in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}.key")):
        with contextlib.suppress(OSError):
            link = os.lstat(name)
            if stat.S_ISLNK(link.st_mode) and link.st_uid != me:
                others.append((f"{name} (a link of user id {link.st_uid})", link.st_uid))
        with contextlib.suppress(OSError):
            info = os.stat(name)
            if info.st_uid != me:
                others.append((f"{name} (user id {info.st_uid})", info.st_uid))
            elif info.st_mode & 0o077:
                os.chmod(name, stat.S_IMODE(info.st_mode) & 0o700)
    with contextlib.suppress(OSError):
        folder = os.stat(path.parent)
        if folder.st_uid not in (me, 0):
            others.append((f"the folder {path.parent} (user id {folder.st_uid})", folder.st_uid))
        elif folder.st_mode & stat.S_IWOTH and not folder.st_mode & stat.S_ISVTX:
            others.append((f"the folder {path.parent} (anyone may write it: mode "
                           f"{stat.S_IMODE(folder.st_mode):o}, no sticky bit)", None))
    if others:
        import warnings

        from core.errors import PrivacyWarning

        files = ", ".join(what for what, _ in others)
        warnings.warn(
            f"The ledger store's file(s) or folder {files} belong to another user, not to you (user id {me}), or "
            "another user can replace them: that user can read the runs charged and the units' hashes (with the key "
            "file, which IDs were charged) or can change, swap or reset them (a store deleted is a ledger with "
            "nothing spent), and this library leaves their mode as it is. Keep the store in a folder only you can "
            "write (store=PATH, --ledger PATH), or have its owner hand the files over to you if sharing them is "
            "meant.", PrivacyWarning, stacklevel=2)


class LedgerStore:
    """The SQLite ledger store at ``path`` (module docstring).

    Thread-safe and process-safe: every operation opens its own connection, and writes
    happen in ``BEGIN IMMEDIATE`` transactions.

    Parameters
    ----------
    path : path, optional
        The store's file (:func:`store_path` decides when None); created with its folder
        on first use.
    identity : str, optional (keyword-only)
        The identity the file at ``path`` must carry (a store unpickled in another
        process): a missing file is not created, and another store there is refused
        (:class:`core.errors.LedgerUnreachable`), so a charge never lands in a file the
        ledger's owner does not read.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, identity: str | None = None) -> None:
        self.path = store_path(path)
        self._lock = threading.Lock()
        self._secret: bytes | None = None
        self._cache: dict[str, tuple[int, LedgerState]] = {}
        self._ready = False
        self._expected = identity
        self._identity: str | None = None

    def __repr__(self) -> str:
        return f"LedgerStore({str(self.path)!r})"

    def __reduce__(self):
        return (_restore_store, (str(self.path), self.identity()))

    def identity(self) -> str:
        """The store's identity token (``meta``), drawn when the file was made.

        Returns
        -------
        str
        """
        if self._identity is None:
            with self._connection():
                pass
        return self._identity

    def _unreachable(self, why: str) -> LedgerUnreachable:
        return LedgerUnreachable(
            f"the ledger store {self.path} {why}: this copy of a ledger was pickled where the store is another file "
            "(a Dask worker or a process on another machine), and a charge here would never reach it. Nothing was "
            "run. Put the store on a file system every worker shares (the same path everywhere), or run where the "
            "store is.")

    # -- connections ---------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._expected is not None and not self._ready and not self.path.exists():
            raise self._unreachable("does not exist here")
        try:
            if not self.path.parent.exists():
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self.path.exists():  # readable by its owner only (SQLite gives its WAL files the same mode)
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            con = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise DataError(f"cannot open the ledger store {self.path}: {exc}.") from None
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
            con.execute("PRAGMA foreign_keys=ON")
            if not self._ready:
                self._prepare(con)
        except sqlite3.DatabaseError as exc:
            con.close()
            raise DataError(f"{self.path} is not a Private Label Lab ledger store ({exc}); give another --ledger path "
                            f"(or {STORE_ENV}).") from None
        return con

    def _prepare(self, con: sqlite3.Connection) -> None:
        _owner_only(self.path)  # the WAL files SQLite has just made take the store's mode
        con.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                con.execute(statement)
            rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
            if not rows:
                con.executemany("INSERT INTO meta (key, value) VALUES (?, ?)",
                                [("format", FORMAT), ("version", str(VERSION))])
            elif rows.get("format") != FORMAT:
                raise DataError(f"{self.path} is not a Private Label Lab ledger store; give another --ledger path.")
            elif rows.get("version") != str(VERSION):
                raise DataError(f"{self.path} is a ledger store of version {rows.get('version')}; this library reads "
                                f"version {VERSION}.")
            identity = rows.get("identity")
            if identity is None:  # a new file, or one made before stores carried their identity
                identity = uuid.uuid4().hex
                con.execute("INSERT INTO meta (key, value) VALUES ('identity', ?)", (identity,))
            if self._expected is not None and identity != self._expected:
                raise self._unreachable("here is another store than the one this ledger was made with")
            con.execute("COMMIT")
            self._identity = identity
        except BaseException:
            con.execute("ROLLBACK")
            raise
        self._ready = True

    @contextlib.contextmanager
    def _connection(self):
        con = self._connect()
        try:
            yield con
        finally:
            con.close()

    # -- the units' secret ---------------------------------------------------------------

    def secret(self, con: sqlite3.Connection, *, create: bool) -> bytes | None:
        """The units' secret, checked against the store's check value (created when asked)."""
        stored = con.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchone()
        if self._secret is None:
            self._secret = store_secret(self.path, create=create and stored is None)
            if self._secret is not None:  # the key file may have appeared since the store was opened
                _owner_only(self.path)
        if self._secret is None:
            if stored is not None:
                raise DataError(f"the ledger store {self.path} keeps privacy units, but its key file "
                                f"{self.path}.key is missing (and PRIVATE_LABEL_LAB_LEDGER_KEY is not set): the units "
                                "cannot be matched to their accounts. Restore the key file; nothing was charged.")
            return None
        check = key_check(self._secret)
        if stored is None:
            if create:
                con.execute("INSERT INTO meta (key, value) VALUES ('key_check', ?)", (check,))
        elif stored[0] != check:
            raise DataError(f"the key for the ledger store {self.path} is not the one its privacy units were hashed "
                            "with: charging with it would open a fresh account for every unit. Restore the original "
                            f"{self.path}.key (or PRIVATE_LABEL_LAB_LEDGER_KEY); nothing was charged.")
        return self._secret

    def units_secret(self) -> bytes:
        """The units' secret, created (with the store's check value) when the store has none yet.

        Returns
        -------
        bytes
        """
        if self._secret is not None:  # checked against (or written as) the store's check value already
            return self._secret
        with self._lock, self._connection() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                secret = self.secret(con, create=True)
                con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise
        return secret

    # -- reading -------------------------------------------------------------------------

    def datasets(self) -> list[str]:
        """The names of the datasets in the store, sorted.

        Returns
        -------
        list of str
        """
        with self._connection() as con:
            return [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name")]

    def _dataset_row(self, con: sqlite3.Connection, name: str) -> tuple | None:
        return con.execute("SELECT id, budget_epsilon, budget_delta, version FROM datasets WHERE name = ?",
                           (name,)).fetchone()

    def _load(self, con: sqlite3.Connection, name: str) -> tuple[int | None, int, LedgerState]:
        row = self._dataset_row(con, name)
        if row is None:
            return None, -1, LedgerState()
        ds_id, b_eps, b_delta, version = row
        hit = self._cache.get(name)
        if hit is not None and hit[0] == version:
            return ds_id, version, hit[1]
        runs = []
        for kind, whole, text in con.execute("SELECT kind, whole, entry FROM runs WHERE dataset_id = ? ORDER BY seq",
                                             (ds_id,)):
            runs.append(Run(None, bool(whole), int(kind), text=text))  # parsed when read (a kind's first run: now)
        u = con.execute("SELECT keys, class_of, class_dtype, vectors, vector_dtype, n_kinds FROM units "
                        "WHERE dataset_id = ?", (ds_id,)).fetchone()
        classes = None
        if u is not None:
            keys = _array(u[0], "<u8")
            vectors = _array(u[3], u[4]).reshape(-1, int(u[5]))
            classes = UnitClasses(keys, _array(u[1], u[2]), vectors)
        budget = None if b_eps is None else Budget(b_eps, b_delta)
        state = LedgerState.from_runs(runs, classes, budget)
        self._cache[name] = (version, state)
        return ds_id, version, state

    def read(self, name: str) -> LedgerState:
        """The ledger of dataset ``name`` as stored now (empty when the name is new).

        Parameters
        ----------
        name : str
            The dataset's name (:func:`check_name`).

        Returns
        -------
        LedgerState
        """
        name = check_name(name)
        with self._lock, self._connection() as con:
            return self._load(con, name)[2]

    def look(self, name: str, fn: Callable[[LedgerState, Callable[[bool], bytes | None]], Any]) -> Any:
        """``fn(state, secret)`` on dataset ``name``'s ledger as stored now; writes nothing.

        Parameters
        ----------
        name : str
        fn : callable
            Gets the state and a function returning the units' secret (None when the
            store keeps no units; it is never created here).

        Returns
        -------
        Any
        """
        name = check_name(name)
        with self._lock, self._connection() as con:
            con.execute("BEGIN")
            try:
                _, _, state = self._load(con, name)
                return fn(state, lambda create: self.secret(con, create=False))
            finally:
                con.execute("ROLLBACK")

    # -- writing -------------------------------------------------------------------------

    def update(self, name: str, change: Callable[[LedgerState, Callable[[bool], bytes | None]], tuple[LedgerState, Any]]) -> Any:
        """Change dataset ``name``'s ledger in one transaction; return what ``change`` returns.

        ``change(state, secret)`` gets the stored state and a function returning the
        units' secret (``secret(True)`` creates it), and returns the new state (whose
        runs extend the old ones) and a result.  An exception inside ``change`` rolls
        everything back: nothing is written.

        Parameters
        ----------
        name : str
        change : callable

        Returns
        -------
        Any
        """
        name = check_name(name)
        with self._lock, self._connection() as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                ds_id, version, state = self._load(con, name)
                new, result = change(state, lambda create: self.secret(con, create=create))
                if new is not state:
                    self._write(con, name, ds_id, version, state, new)
                con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                self._cache.pop(name, None)
                raise
            return result

    def _write(self, con: sqlite3.Connection, name: str, ds_id: int | None, version: int, old: LedgerState,
               new: LedgerState) -> None:
        b = new.budget
        if ds_id is None:
            cur = con.execute("INSERT INTO datasets (name, budget_epsilon, budget_delta, version, created) "
                              "VALUES (?, ?, ?, 0, ?)", (name, None if b is None else b.epsilon,
                                                         None if b is None else b.delta, _now()))
            ds_id, version = int(cur.lastrowid), 0
        if len(new.runs) < len(old.runs) or any(a is not b for a, b in zip(new.runs, old.runs)):
            raise ParameterError("a ledger's recorded runs are never changed or removed.")
        for seq, r in enumerate(new.runs[len(old.runs):], start=len(old.runs)):
            con.execute("INSERT INTO runs (dataset_id, seq, kind, whole, entry) VALUES (?, ?, ?, ?, ?)",
                        (ds_id, seq, r.kind, int(r.whole), r.text()))
        if new.classes is not old.classes and new.classes.n_units:
            keys, _ = _blob(new.classes.keys.astype(np.uint64))
            class_of, class_dtype = _blob(new.classes.class_of)
            vectors, vector_dtype = _blob(new.classes.vectors)
            con.execute("INSERT OR REPLACE INTO units (dataset_id, keys, class_of, class_dtype, vectors, vector_dtype, "
                        "n_kinds) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (ds_id, keys, class_of, class_dtype, vectors, vector_dtype, int(new.classes.vectors.shape[1])))
        con.execute("UPDATE datasets SET budget_epsilon = ?, budget_delta = ?, version = ? WHERE id = ?",
                    (None if b is None else b.epsilon, None if b is None else b.delta, version + 1, ds_id))
        self._cache[name] = (version + 1, new)


def _restore_store(path: str, identity: str) -> LedgerStore:
    """Unpickle a store: the file at ``path`` must be the store of this ``identity``."""
    return LedgerStore(path, identity=identity)
