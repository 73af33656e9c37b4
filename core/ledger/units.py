"""Privacy units as the ledger keeps them: declared IDs, stored only as keyed hashes.

A run that reads part of a dataset is charged to the privacy units it reads (a person, or
whatever the data owner declares), given by their IDs (docs/design.md §9).  The ledger
never keeps an ID: :func:`unit_keys` turns each one into a 64-bit keyed BLAKE2b hash

    ``key = BLAKE2b-64(secret, "private-label-lab/unit/v1" ‖ dataset name ‖ 0x00 ‖ canonical ID)``

whose secret is **not** in the ledger's store (:func:`store_secret`: a key file beside it,
readable by its owner only, or ``PRIVATE_LABEL_LAB_LEDGER_KEY``).  Without the secret a
hash is a pseudorandom number: enumerating every possible ID (or every possible row of a
small table) and hashing it finds nothing to compare with.  The dataset's name is hashed
in, so one person's keys in two datasets cannot be linked either.

Canonical IDs.  An ID is hashed in its canonical form (:func:`core.data.ids.canonical_id`),
the same form that decides which rows are one person in the partition of the rows
(:mod:`core.data.units`), so the ledger's accounts and the mechanisms' persons agree.  Two
spellings of one ID must never become two units (that would split a person's account and
under-count), while two IDs sharing one unit only over-counts, so the form merges
generously (``7``, ``7.0``, ``"007"``, ``"1,000"``/1000, ``"P 001"``/``"p001"``, a composed
and a decomposed ``"José"``, invisible marks: one unit each).  A missing ID (None, NaN) is
refused: it would be nobody's unit.  Two IDs whose 64-bit hashes collide share one account
(probability about n²/2⁶⁵: 3·10⁻⁸ for a million persons), which over-counts only.

References
----------
.. [AB13] J.-P. Aumasson, S. Neves, Z. Wilcox-O'Hearn, C. Winnerlein, "BLAKE2: simpler,
   smaller, fast as MD5", ACNS 2013 (keyed mode as a MAC / PRF).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from core.data.ids import INT64, canonical_id
from core.errors import DataError, ParameterError

__all__ = ["KEY_ENV", "canonical_id", "key_check", "sorted_unique", "store_secret", "unit_keys"]

KEY_ENV = "PRIVATE_LABEL_LAB_LEDGER_KEY"
"""Environment variable holding the units' secret as hex (instead of the key file)."""

_PREFIX = b"private-label-lab/unit/v1"
_CHECK = b"private-label-lab/key-check/v1"


_INT64 = INT64


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D numeric array, sorted (by sorting: NumPy's hash-based
    ``unique`` is many times slower on a million integers).

    Parameters
    ----------
    values : numpy.ndarray, 1-D

    Returns
    -------
    numpy.ndarray
    """
    x = np.sort(np.asarray(values).ravel())
    if x.size < 2:
        return x
    keep = np.empty(x.size, dtype=bool)
    keep[0] = True
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    return x[keep]


def _id_array(units: Any) -> np.ndarray:
    """``units`` as a 1-D array (a table's rows as tuples: an ID made of several columns)."""
    if isinstance(units, np.ndarray):
        arr = units
    elif hasattr(units, "itertuples"):  # a DataFrame: one ID per row, from several columns
        arr = np.fromiter(units.itertuples(index=False, name=None), dtype=object, count=len(units))
    elif hasattr(units, "to_numpy"):
        arr = units.to_numpy()
    else:
        values = list(units) if not isinstance(units, (str, bytes)) else [units]
        if any(isinstance(v, tuple) for v in values):
            arr = np.fromiter(values, dtype=object, count=len(values))
        else:
            arr = np.asarray(values)
    if arr.ndim != 1:
        raise ParameterError(f"units must be a 1-D array of privacy-unit IDs (one per row read), got shape {arr.shape}.")
    return arr


def _forms(units: Any) -> list[bytes]:
    """The distinct canonical IDs of ``units``."""
    arr = _id_array(units)
    if arr.dtype.kind == "U" and arr.size:
        stripped = np.char.strip(arr)
        if bool(np.all(np.char.isdecimal(stripped) & (np.char.str_len(stripped) <= 18))):
            arr = stripped.astype(np.int64)  # decimal digits only: the numbers they write
    if arr.dtype.kind in "iub" and (arr.dtype.kind != "u" or arr.size == 0 or int(arr.max()) < _INT64):
        raw = sorted_unique(arr.astype("<i8")).tobytes()
        return [b"i" + raw[i:i + 8] for i in range(0, len(raw), 8)]
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise DataError("a privacy-unit ID is missing (NaN): every row read needs its unit's ID.")
        values = sorted_unique(arr).tolist()
    elif arr.dtype.kind in "US":
        values = sorted_unique(arr).tolist()
    else:
        import pandas as pd

        values = pd.unique(pd.Series(arr, dtype=object)).tolist()
    return list({canonical_id(v) for v in values})


def unit_keys(units: Any, *, secret: bytes, dataset: str) -> np.ndarray:
    """The distinct privacy units of ``units`` as the ledger keeps them: sorted 64-bit keyed hashes.

    Parameters
    ----------
    units : 1-D array-like of hashable
        The IDs of the rows a run reads (repeats allowed: one unit each); a DataFrame
        gives one ID per row made of its columns.
    secret : bytes
        The store's secret (:func:`store_secret`), 16 to 64 bytes.
    dataset : str
        The dataset's name (hashed in: keys of two datasets cannot be linked).

    Returns
    -------
    numpy.ndarray of uint64
        Sorted and distinct (two IDs of one canonical form give one key).

    Raises
    ------
    DataError
        For a missing ID.
    """
    if not 16 <= len(secret) <= 64:
        raise ParameterError("the units' secret must be 16 to 64 bytes.")
    base = hashlib.blake2b(_PREFIX + dataset.encode("utf-8") + b"\x00", digest_size=8, key=secret)

    def digest(form: bytes, copy=base.copy) -> bytes:
        h = copy()
        h.update(form)
        return h.digest()

    digests = b"".join(map(digest, _forms(units)))
    return sorted_unique(np.frombuffer(digests, dtype="<u8").astype(np.uint64))


def key_check(secret: bytes) -> str:
    """A value that tells whether a secret is the one a store's keys were made with.

    HMAC-SHA-256 of a fixed text under the secret: it reveals nothing about the secret
    (nor about any ID) and lets the store refuse a different secret instead of silently
    starting every unit's account again.

    Parameters
    ----------
    secret : bytes

    Returns
    -------
    str
        64 hex digits.
    """
    return hmac.new(secret, _CHECK, hashlib.sha256).hexdigest()


def store_secret(store_path: str | os.PathLike, *, create: bool) -> bytes | None:
    """The units' secret of the store at ``store_path``.

    ``PRIVATE_LABEL_LAB_LEDGER_KEY`` (hex, 16 to 64 bytes) when set; otherwise the key file
    ``<store>.key`` beside the store, created with 32 random bytes from the operating
    system (mode 0600, never overwritten) when ``create`` is true and it does not exist.

    Parameters
    ----------
    store_path : path
        The store's file.
    create : bool
        Create the key file when it is missing.

    Returns
    -------
    bytes or None
        None when there is no secret and ``create`` is false.

    Raises
    ------
    ParameterError
        For a malformed secret.
    """
    env = os.environ.get(KEY_ENV, "").strip()
    if env:
        try:
            secret = bytes.fromhex(env)
        except ValueError:
            raise ParameterError(f"{KEY_ENV} must be hex digits (16 to 64 bytes).") from None
        if not 16 <= len(secret) <= 64:
            raise ParameterError(f"{KEY_ENV} must hold 16 to 64 bytes (32 to 128 hex digits).")
        return secret
    path = Path(str(store_path) + ".key")
    if not path.exists():
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=str(path.parent))  # mode 0600
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
            os.link(tmp, path)  # atomic; never replaces a key another process made first
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    try:
        secret = bytes.fromhex(path.read_text().strip())
    except ValueError:
        raise ParameterError(f"{path} is not a ledger key file (hex digits expected).") from None
    if not 16 <= len(secret) <= 64:
        raise ParameterError(f"{path} is not a ledger key file (16 to 64 bytes expected).")
    return secret
