"""``label`` on a public file of any length: read it in chunks, label each, write as it goes.

The public file is read ``chunk_rows`` rows at a time (pandas' CSV reader, the library's
header checks and :func:`core.data.check_public` on every chunk); each chunk's votes come
from the teachers on rows encoded once (:mod:`core.ensemble.voter`) and go to one
stream session for the whole file (:func:`core.pipeline.stream_session`: one
budget, BTT's sparse-vector state and Confident-GNMax's Rényi filter carried from chunk to
chunk); the labeled rows are written with :func:`core.export.labeled_frame`, the header
once.  For a chunk of text cells in the table's columns, the marking, the check and each
cell's CSV text are worked out once per distinct value of a column and the rows joined
from that text (:func:`_fast_chunk`, :func:`_write_fast`: the same frame, bytes and errors,
tested against the general path).  Memory stays flat in the number of public rows: one chunk of rows, its votes and
one byte per row for the report's counts.  The number of rows is counted first (a pass
over the bytes), because the budget is set for it (docs/design.md §5).
"""

from __future__ import annotations

import gzip
import io
import time
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

import numpy as np

__all__ = ["DEFAULT_CHUNK_ROWS", "count_rows", "read_chunks", "label_stream", "write_stream", "RateBar"]

DEFAULT_CHUNK_ROWS = 100_000
"""Public rows read, voted on, labeled and written at a time."""

_BLOCK = 1 << 24


def _open(path: Path):
    return gzip.open(path, "rb") if str(path).lower().endswith(".gz") else open(path, "rb")


def count_rows(path: str | Path) -> int:
    """Data rows of a CSV file (blank lines not counted), from one pass over its bytes.

    A file that holds a quote character may have line breaks inside quoted fields, so it
    is counted by pandas' reader instead (a slower pass).

    Parameters
    ----------
    path : str or Path
        A CSV file with a header row (``.gz`` read compressed).

    Returns
    -------
    int
    """
    path = Path(path)
    lines = blank = 0
    last = b"\n"
    quoted = False
    with _open(path) as handle:
        while True:
            block = handle.read(_BLOCK)
            if not block:
                break
            quoted = quoted or b'"' in block
            lines += block.count(b"\n")
            joined = last + block
            blank += joined.count(b"\n\n") + joined.count(b"\n\r\n")
            last = block[-1:]
    if quoted:
        import pandas as pd

        total = 0
        for chunk in pd.read_csv(path, dtype=str, usecols=[0], chunksize=1_000_000, skip_blank_lines=True,
                                 index_col=False):
            total += len(chunk)
        return total
    if last not in (b"\n", b""):
        lines += 1  # a last line without a line break
    return max(0, lines - blank - 1)


def _header(path: Path, rename_duplicates: bool) -> list[str]:
    """The header's column names, checked by the library's reader (same messages)."""
    from core.data import DEFAULT_MAX_BYTES, read_csv

    with _open(path) as handle:
        head = handle.read(1 << 16)
        while b"\n" not in head:
            more = handle.read(1 << 16)
            if not more:
                break
            head += more
    first_lines = b"\n".join(head.split(b"\n")[:2]) + b"\n"
    frame, _ = read_csv(io.BytesIO(first_lines), DEFAULT_MAX_BYTES,
                        f"The file '{path}' has a header row but no data rows.",
                        rename_duplicates=rename_duplicates)
    return [str(c) for c in frame.columns]


def read_chunks(path: str | Path, chunk_rows: int, *, rename_duplicates: bool = False) -> Iterator[Any]:
    """The rows of a CSV file as text frames of at most ``chunk_rows`` rows.

    The same parsing as :func:`core.data.read_csv` (every column as text, empty field
    missing, spaces after commas skipped, blank lines skipped), without its size limit.

    Raises
    ------
    core.errors.DataError
        An unreadable header or row.
    """
    import csv
    import warnings

    import pandas as pd

    from core.errors import DataError

    path = Path(path)
    names = _header(path, rename_duplicates)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            reader = pd.read_csv(path, sep=",", header=0, names=names, dtype=object, index_col=False,
                                 skipinitialspace=True, skip_blank_lines=True, on_bad_lines="error",
                                 chunksize=int(chunk_rows), encoding="utf-8-sig")
            with reader:
                for chunk in reader:
                    yield chunk.reset_index(drop=True)
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, csv.Error, UnicodeDecodeError) as exc:
        detail = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        raise DataError(
            f"The file '{path}' cannot be read as CSV: {detail}. Every row must have as many "
            "comma-separated fields as the header; quote fields that contain commas."
        ) from None


class RateBar:
    """Progress of a stream on one terminal line: rows done, rows per second, time left.

    Parameters
    ----------
    stream : text stream or None
        Where to draw (stderr); None draws nothing.
    label : str
    total : int
    """

    def __init__(self, stream: TextIO | None, label: str, total: int, width: int = 24) -> None:
        self.stream, self.label, self.total, self.width = stream, label, max(1, int(total)), width
        self.start = time.perf_counter()

    def __call__(self, done: int) -> None:
        if self.stream is None:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        rate = done / elapsed
        left = (self.total - done) / rate if rate > 0 and done < self.total else 0.0
        filled = min(self.width, (self.width * done) // self.total)
        bar = "#" * filled + "-" * (self.width - filled)
        minutes, seconds = divmod(int(round(left)), 60)
        self.stream.write(f"\r{self.label} [{bar}] {done:,}/{self.total:,} rows  {rate:,.0f} rows/s  "
                          f"{minutes}:{seconds:02d} left ")
        if done >= self.total:
            self.stream.write("\n")
        self.stream.flush()


def _marked(frame: Any, markers: tuple[str, ...], columns: Any) -> tuple[Any, np.ndarray]:
    """:func:`core.data.missing.mark_missing` (text equal to a marker after stripping -> NaN)
    with one strip per distinct value of a column instead of one per cell, and which rows are
    missing a cell in ``columns`` (from the same one pass per column)."""
    import pandas as pd

    wanted = set(markers)
    out = frame.copy() if markers else frame
    missing = np.zeros(len(frame), dtype=bool)
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            if column in columns:
                missing |= values.isna().to_numpy()
            continue
        if not markers and column not in columns:
            continue
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        hit_unique = np.array([isinstance(u, str) and u.strip() in wanted for u in uniques] + [False])
        hit = hit_unique[codes]
        if hit.any():
            out[column] = values.astype(object).mask(hit, np.nan)
        if column in columns:
            missing |= (codes < 0) | hit
    return out, missing


def _whole_numbers_as_int(frame: Any) -> Any:
    """Float columns holding whole numbers only (no missing cell) as int64: written as
    :func:`core.export.labeled_frame` writes them (``40``, not ``40.0``), but faster."""
    out = frame
    for column in frame.columns:
        values = frame[column]
        if values.dtype == np.float64:
            arr = values.to_numpy()
            if arr.size and np.all(np.isfinite(arr)) and np.all(np.abs(arr) < 2**53) and np.all(arr == np.round(arr)):
                if out is frame:
                    out = frame.copy()
                out[column] = arr.astype(np.int64)
    return out



_QUOTED = (",", '"', "\r", "\n")


def _fast_chunk(table: Any, raw: Any, markers: tuple[str, ...]) -> Any:
    """The stream's marking, dropping and :func:`core.data.check_public` of one text chunk,
    worked out once per distinct value of each column, with each kept cell's CSV text.

    Returns ``"skip"`` (every row missing a cell: skipped, as the general path does),
    ``(checked, (texts, quote))`` (the checked frame; per feature column, its cells as
    written by :func:`core.export.labeled_frame` and ``DataFrame.to_csv``, None for a column
    of fractional numbers; whether a cell holds a character that CSV quotes) or None: anything else (other columns, a non-text cell, text in a
    numeric column, an infinite value, a refused or all-missing chunk) goes the general
    path, which gives its result or its error.
    """
    import pandas as pd

    names = list(table.feature_names)
    if [c if isinstance(c, str) else None for c in raw.columns] != names or table.missing not in ("drop", "impute"):
        return None
    numeric = set(table.numeric_columns)
    wanted = set(markers)
    dropping = table.missing == "drop"
    parts = []
    first_missing = np.zeros(len(raw), dtype=bool)
    for column in names:
        values = raw[column]
        if values.dtype != object:
            return None
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        uniques = np.asarray(uniques, dtype=object)
        if not all(type(u) is str for u in uniques):
            return None
        stripped = [u.strip() for u in uniques]
        marked = np.array([t in wanted for t in stripped], dtype=bool)
        has_na = bool((codes < 0).any())
        if column in numeric:
            shown = uniques.copy()
            shown[marked] = np.nan
            probe = np.append(shown, np.nan) if has_na else shown
            numbers = pd.to_numeric(pd.Series(probe, dtype=object), errors="coerce").to_numpy(dtype=np.float64)[:len(uniques)]
            blank = np.array([t == "" for t in stripped], dtype=bool)
            if np.any(np.isnan(numbers) & ~marked & ~blank) or np.any(np.isinf(numbers)):
                return None
            cell = numbers
            gap = np.isnan(numbers)
        else:
            cell = np.array([np.nan if (m or t == "") else t for t, m in zip(stripped, marked)] + [np.nan],
                            dtype=object)[:len(uniques)]
            gap = marked | np.array([t == "" for t in stripped], dtype=bool)
        if dropping:
            first_missing |= (codes < 0) | np.append(marked, False)[codes]
        parts.append((column, codes, cell, gap))
    keep = ~first_missing
    if dropping and not keep.any():
        return "skip"
    has_missing = np.zeros(int(keep.sum()), dtype=bool)
    kept_codes = []
    for column, codes, cell, gap in parts:
        kept = codes[keep] if dropping else codes
        kept_codes.append(kept)
        has_missing |= (kept < 0) | np.append(gap, False)[kept]
    dropped = 0
    if dropping and has_missing.all():  # refused by the general path
        return None
    if dropping and has_missing.any():
        dropped = int(has_missing.sum())
        kept_codes = [k[~has_missing] for k in kept_codes]
    out, texts, quote = {}, [], False
    for (column, _, cell, gap), kept in zip(parts, kept_codes):
        full = np.append(cell, np.nan if column in numeric else None)
        if column in numeric:
            full[-1] = np.nan
            out[column] = pd.Series(full[kept], dtype=np.float64)
            present = np.zeros(len(cell) + 1, dtype=bool)
            present[kept] = True
            known = full[present]
            known = known[~np.isnan(known)]
            if known.size and np.all(known == np.round(known)) and np.all(np.abs(known) < 2**53):
                text = np.array([("" if np.isnan(v) else str(int(v))) for v in full], dtype=object)
                texts.append(text[kept])  # digits and '-': never quoted
            elif not known.size:
                texts.append(np.full(len(kept), "", dtype=object))
            else:
                texts.append(None)
        else:
            full[-1] = np.nan
            out[column] = pd.Series(full[kept], dtype=object)
            text = np.array([("" if not isinstance(v, str) else v) for v in full], dtype=object)
            texts.append(text[kept])
            quote = quote or any(q in v for v in text.tolist() for q in _QUOTED)
    checked = pd.DataFrame(out, columns=names)
    checked.attrs["dropped_rows"] = dropped
    return checked, (texts, quote)


def _write_fast(out: TextIO, public: Any, cells: tuple, part: Any, class_names: Any, header: bool) -> bool:
    """Write the labeled rows from their cells' text: the bytes :func:`core.export.labeled_frame`
    and ``to_csv`` write (``csv`` quoting wherever a cell needs it).  False when a column
    cannot be written so (fractional numbers, soft labels): the caller then writes with pandas."""
    import csv
    import os

    from core.export import STATUS_ABSTAINED, STATUS_ANSWERED, STATUS_NOT_PROCESSED, export_columns, labeled_frame

    texts, quote = cells
    if any(t is None for t in texts):
        return False
    added = export_columns(list(public.columns))
    extra = labeled_frame(public.iloc[:, :0], part, class_names, columns=added)
    label = extra[added["label"]].to_numpy(dtype=object)
    names = set(label.tolist())
    if not all(type(v) is str for v in names):
        return False
    answered = np.where(extra[added["answered"]].to_numpy(dtype=bool), "True", "False").astype(object)
    status = extra[added["status"]].to_numpy(dtype=object)
    columns = list(texts) + [label, answered, status]
    head = [str(c) for c in public.columns] + [added["label"], added["answered"], added["status"]]
    rows = zip(*columns)
    if quote or any(q in v for v in names.union(head, (STATUS_ANSWERED, STATUS_ABSTAINED, STATUS_NOT_PROCESSED)) for q in _QUOTED):
        writer = csv.writer(out, lineterminator=os.linesep, quoting=csv.QUOTE_MINIMAL)
        if header:
            writer.writerow(head)
        writer.writerows(rows)
    else:
        if header:
            out.write(",".join(head) + os.linesep)
        out.write(os.linesep.join(map(",".join, rows)) + os.linesep)
    return True


def label_stream(
    *,
    chunks: Iterator[Any],
    table: Any,
    teachers: Any,
    mechanism: str,
    settings: dict,
    m: int,
    rng: Any,
    out: TextIO,
    prepare: Callable[[Any], Any] | None = None,
    progress: Callable[[int], None] | None = None,
    keep: bool = False,
):
    """Label a stream of public chunks under one budget and write the labeled CSV.

    Parameters
    ----------
    chunks : iterator of pandas.DataFrame
        The public rows, as text (:func:`read_chunks`).
    table : core.data.Table
        The private table (the public rows are checked against its schema).
    teachers : core.ensemble.TeacherEnsemble
    mechanism : str
        A registered mechanism reading votes.
    settings : dict
        The request (resolved for ``m`` queries by the session).
    m : int
        The number of public rows (the budget's horizon).
    rng : Generator, int or None
    out : text stream
        Where the labeled CSV goes (header once).
    prepare : callable, optional
        Applied to each text chunk before the schema check (column selection).
    progress : callable, optional
        ``progress(rows_done)`` after each chunk.
    keep : bool
        Keep the checked public rows (for a student; memory then grows with the rows).

    Returns
    -------
    result : LabelingResult
        The whole stream's labels (one byte per row) and the session's guarantee.
    kept : pandas.DataFrame or None
        The checked public rows, when ``keep``.
    """
    import pandas as pd

    from core import pipeline
    from core.data import check_public
    from core.export import labeled_frame
    from core.mechanisms.result import make_result
    from core.pipeline import stream_result, stream_session

    session = stream_session(mechanism, settings, m, rng=rng)
    import dataclasses

    markers = tuple(table.missing_markers)
    # the markers are applied here (once per distinct value); the schema check then has none to apply
    unmarked = dataclasses.replace(table, missing_markers=()) if markers else table
    labels: list[np.ndarray] = []
    kept: list[Any] = []
    done = 0
    first = True
    for raw in chunks:
        if prepare is not None:
            raw = prepare(raw)
        done += len(raw)
        fast = _fast_chunk(table, raw, markers) if len(raw) else None
        texts = None
        if isinstance(fast, tuple):
            public, texts = fast
        elif fast == "skip":
            public = raw.iloc[:0]
        else:
            dropping = table.missing == "drop"
            raw, missing = _marked(raw, markers, set(table.feature_names) if dropping else ())
            if dropping and missing.any():  # a chunk whose every row is dropped is skipped, not refused
                raw = raw.loc[~missing].reset_index(drop=True)
            public = check_public(unmarked, raw) if len(raw) else raw
        if len(public):
            counts = pipeline.mechanism_inputs(mechanism, teachers, table, public)
            ids = session.answer(counts)
            part = make_result(mechanism, ids, None, None, session.spent(), {})
            if texts is None or not _write_fast(out, public, texts, part, table.class_names, first):
                labeled_frame(_whole_numbers_as_int(public), part, table.class_names).to_csv(out, header=first, index=False)
            first = False
            labels.append(ids.astype(np.int8 if table.n_classes <= 127 else np.int32))
            if keep:
                kept.append(public)
        if progress is not None:
            progress(done)
    if first:
        from core.errors import DataError

        raise DataError("The public file has no rows to label (every row was dropped or the file is empty).")
    result = stream_result(session, mechanism, np.concatenate(labels), settings, k=teachers.k,
                           n_classes=table.n_classes)
    frame = pd.concat(kept, ignore_index=True) if keep else None
    return result, frame


def write_stream(path: Path, **kwargs: Any):
    """:func:`label_stream` into the file ``path``, which appears only once complete.

    The rows go to ``path`` + ``.part`` in the same folder, renamed to ``path`` at the end;
    on any error the partial file is removed, so a failed run leaves no labeled rows.

    Raises
    ------
    core.cli.common.CommandError
        When the file cannot be written.
    """
    import os

    from core.cli.common import CommandError

    path = Path(path)
    part = path.with_name(path.name + ".part")
    try:
        with open(part, "w", newline="", encoding="utf-8") as out:
            outcome = label_stream(out=out, **kwargs)
        os.replace(part, path)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise CommandError(f"Cannot write --out '{path}': {exc.strerror or exc}.") from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return outcome
