"""Regenerate the bundled CSV files from the copies that ship with scikit-learn.

Run from the repository root::

    .venv/bin/python datasets/make_datasets.py

Each file has a header row, the feature columns under scikit-learn's feature names and a
last column ``label`` holding the class as text (scikit-learn's class names where it has
them, e.g. ``malignant``/``benign``; the digit itself for digits).  Floating-point values
are written in their shortest exact (round-trip) form, so the CSV holds exactly the values
scikit-learn returns; digits' pixel counts are written as whole numbers.  The output is
deterministic: running the script twice gives identical files.

Sources and licenses are listed in ``datasets/README.md``.
"""

from __future__ import annotations

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


def main() -> None:
    for stem, (loader, as_int) in SOURCES.items():
        frame = build_frame(loader, as_int)
        path = HERE / f"{stem}.csv"
        frame.to_csv(path, index=False, lineterminator="\n")
        print(f"{path.name}: {frame.shape[0]} rows x {frame.shape[1] - 1} features, "
              f"{frame['label'].nunique()} classes")


if __name__ == "__main__":
    main()
