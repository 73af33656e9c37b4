"""The ledger file's low-level parts: its format, a lock per file, atomic read and write.

A ledger file holds several ledgers keyed by dataset fingerprint (strict JSON, no private
value: :mod:`core.accounting.ledger`); read-modify-write happens under a thread lock and
an ``flock`` across processes, and the file is replaced atomically.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import DataError

__all__ = ["FILE_FORMAT", "FILE_VERSION"]

FILE_FORMAT = "private-label-lab-ledger"
FILE_VERSION = 1


_PATH_LOCKS: dict[str, threading.Lock] = {}
_PATH_LOCKS_LOCK = threading.Lock()


@contextlib.contextmanager
def _file_lock(path: Path):
    """Serialise read-modify-write of one file: a thread lock, and ``flock`` across processes."""
    key = str(path.resolve())
    with _PATH_LOCKS_LOCK:
        lock = _PATH_LOCKS.setdefault(key, threading.Lock())
    with lock:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            yield
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(str(path) + ".lock", "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _read_file(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        d = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path} is not a ledger file (not valid JSON: {exc}). Give another --ledger path.") from None
    if not isinstance(d, dict) or d.get("format") != FILE_FORMAT or not isinstance(d.get("ledgers"), dict):
        raise DataError(f"{path} is not a Private Label Lab ledger file. Give another --ledger path.")
    if d.get("version") != FILE_VERSION:
        raise DataError(f"{path} is a ledger file of version {d.get('version')!r}; this library reads version {FILE_VERSION}.")
    return d["ledgers"]


def _write_file(path: Path, ledgers: Mapping[str, Any]) -> None:
    text = json.dumps({"format": FILE_FORMAT, "version": FILE_VERSION, "ledgers": dict(ledgers)},
                      indent=2, allow_nan=False, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


