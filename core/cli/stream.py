"""``label`` on a public file of any length: read it in chunks, label each, write as it goes.

The public file is read ``chunk_rows`` rows at a time (pandas' CSV reader, the library's
header checks and :func:`core.data.check_public` on every chunk); each chunk's votes come
from the teachers on rows encoded once (:mod:`core.ensemble.voter`) and go to one
stream session for the whole file (:func:`core.pipeline.stream_session`: one
budget, BTT's sparse-vector state and Confident-GNMax's Rényi filter carried from chunk to
chunk); the labeled rows are written with :func:`core.export.labeled_frame`, the header
once.  The check works out each rule once per distinct value of a column
(:func:`core.data.public.check_public_coded`), and so does each cell's CSV text, the rows
joined from that text (:func:`_cell_texts`, :func:`_write_fast`: the bytes pandas writes,
tested against it).  Memory stays flat in the number of public rows: one chunk of rows, its votes and
one byte per row for the report's counts.  The number of rows is counted first (a pass
over the bytes), because the budget is set for it (docs/design.md §5).
"""

from __future__ import annotations

import gzip
import io
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TextIO

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
        # Rows only: any encoding that writes quotes and line breaks as ASCII counts alike.
        for chunk in pd.read_csv(path, dtype=str, usecols=[0], chunksize=1_000_000, skip_blank_lines=True,
                                 index_col=False, encoding="latin-1"):
            total += len(chunk)
        return total
    if last not in (b"\n", b""):
        lines += 1  # a last line without a line break
    return max(0, lines - blank - 1)


def _header(path: Path, rename_duplicates: bool, csv_format: Any = None) -> list[str]:
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
                        rename_duplicates=rename_duplicates, csv_format=csv_format)
    return [str(c) for c in frame.columns]


def read_chunks(path: str | Path, chunk_rows: int, *, rename_duplicates: bool = False,
                csv_format: Any = None) -> Iterator[Any]:
    """The rows of a CSV file as text frames of at most ``chunk_rows`` rows.

    The same parsing as :func:`core.data.read_csv` (every column as text, empty field
    missing, spaces after separators skipped, blank lines skipped, decimal commas written
    as points), without its size limit; the encoding, separator and decimal mark not given
    in ``csv_format`` are found in the file's first lines (:func:`core.data.sniff_format`).

    Raises
    ------
    core.errors.DataError
        An unreadable header or row.
    """
    import csv
    import warnings

    import pandas as pd

    from core.data import sniff_format
    from core.data.formats import SEPARATORS, decimal_points
    from core.errors import DataError

    path = Path(path)
    fmt = sniff_format(path, csv_format)
    names = _header(path, rename_duplicates, fmt)
    encoding = "utf-8-sig" if fmt.encoding == "utf-8" else fmt.encoding
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            reader = pd.read_csv(path, sep=fmt.sep, header=0, names=names, dtype=object, index_col=False,
                                 skipinitialspace=True, skip_blank_lines=True, on_bad_lines="error",
                                 chunksize=int(chunk_rows), encoding=encoding)
            with reader:
                for chunk in reader:
                    yield decimal_points(chunk.reset_index(drop=True), fmt.decimal)
    except UnicodeDecodeError as exc:
        raise DataError(
            f"The file '{path}' is not {fmt.encoding} text past its first lines (byte 0x{exc.object[exc.start]:02x}). "
            "Read it with encoding='latin-1' (encoding='cp1252' for Windows-1252), or save it as UTF-8."
        ) from None
    except (pd.errors.ParserError, pd.errors.ParserWarning, ValueError, csv.Error) as exc:
        detail = str(exc).replace("Error tokenizing data. C error: ", "").strip()
        raise DataError(
            f"The file '{path}' cannot be read as CSV: {detail}. Every row must have as many "
            f"{SEPARATORS[fmt.sep]}-separated fields as the header; quote fields that contain the separator."
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


def _cell_texts(public: Any, coded: dict, numeric: set) -> tuple[list, bool]:
    """Each checked cell's CSV text, worked out once per distinct value of its column.

    From :func:`core.data.public.check_public_coded`'s codes: per feature column, its cells
    as :func:`core.export.labeled_frame` and ``DataFrame.to_csv`` write them (None for a
    column without codes or of fractional numbers: pandas writes those), and whether a
    cell holds a character that CSV quotes.
    """
    texts, quote = [], False
    for column in public.columns:
        if column not in coded:
            texts.append(None)
            continue
        codes, values = coded[column]
        if column in numeric:
            used = np.zeros(len(values) + 1, dtype=bool)
            used[codes] = True
            known = np.append(values, np.nan)[used]
            known = known[~np.isnan(known)]
            if known.size and not (np.all(known == np.round(known)) and np.all(np.abs(known) < 2**53)):
                texts.append(None)
                continue
            text = np.array([("" if np.isnan(v) else str(int(v))) for v in values] + [""], dtype=object)
        else:
            text = np.append(values, "").astype(object)
            quote = quote or any(q in v for v in text.tolist() for q in _QUOTED)
        texts.append(text[codes])  # numbers: digits and '-', never quoted
    return texts, quote


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
    keys: Sequence[str] = (),
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
    keys : sequence of str
        Columns of the public file carried into the CSV as join keys (first, as written;
        :func:`core.export.labeled_frame`), following the rows kept.

    Returns
    -------
    result : LabelingResult
        The whole stream's labels (one byte per row) and the session's guarantee.
    kept : pandas.DataFrame or None
        The checked public rows, when ``keep``.
    """
    import pandas as pd

    from core import pipeline
    from core.data.public import check_public_coded
    from core.export import labeled_frame
    from core.mechanisms.result import make_result
    from core.pipeline import stream_result, stream_session

    session = stream_session(mechanism, settings, m, rng=rng)
    numeric = set(table.numeric_columns)
    labels: list[np.ndarray] = []
    kept: list[Any] = []
    done = 0
    first = True
    keys = list(keys)
    for raw in chunks:
        key_part = raw[keys].reset_index(drop=True) if keys else None  # the public file's text, before selection
        if prepare is not None:
            raw = prepare(raw)
        done += len(raw)
        # a chunk whose every row is dropped is skipped, not refused
        if len(raw):
            public, coded, rows = check_public_coded(table, raw, skip_empty=True, return_rows=True)
        else:
            public, coded, rows = raw, {}, np.arange(0)
        if key_part is not None:  # the keys follow the rows kept
            key_part = key_part.iloc[rows].reset_index(drop=True)
        if len(public):
            counts = pipeline.mechanism_inputs(mechanism, teachers, table, public, codes=coded)
            ids = session.answer(counts)
            part = make_result(mechanism, ids, None, None, session.spent(), {})
            if key_part is not None or not _write_fast(out, public, _cell_texts(public, coded, numeric), part,
                                                       table.class_names, first):
                labeled_frame(_whole_numbers_as_int(public), part, table.class_names,
                              keys=key_part).to_csv(out, header=first, index=False)
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
