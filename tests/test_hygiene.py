"""Export hygiene: the labeled CSV and the privacy report hold exactly the documented
columns and keys, and nothing derived from the private data beyond the private outputs:
no vote counts, margins, distances, teacher accuracies, data-dependent ε presented as a
guarantee, and no seed.

The vote counts below use distinctive numbers (k = 7919 teachers, counts such as 6151)
so that a leaked value can be found by searching the serialized text.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from core import mechanisms as ag
from core.export import (
    FORBIDDEN_WORD_EXCEPTIONS,
    FORBIDDEN_WORDS,
    LABEL_COLUMNS,
    PUBLIC_PARAMETERS,
    RELEASE_KEYS,
    REPORT_KEYS,
    labeled_frame,
    privacy_report,
    report_json,
)
from core.mechanisms.stability import distance_to_instability, margins

K = 7919
SEED = 987_654_321  # a seed used for the noise: it must appear nowhere in an export
N_PRIVATE = 80_000
CLASS_NAMES = ("benign", "malignant", "unsure")
NESTED = {
    "privacy_unit": ["unit", "column", "units", "description"],
    "guarantee": ["epsilon", "delta", "accounting"],
    "counts": ["queries", "answered", "abstained", "not_processed", "public_rows"],
    "ensemble": ["learner", "k", "n_private"],
}
FORBIDDEN_TEXT = ["seed", "random_state", "vote", "margin", "accuracy", "data_dependent", "data-dependent",
                  "data dependent", "moments"]


def _counts():
    # distinctive counts; margins 4303, 2, 6979, 5 and the distances are distinctive too
    rows = [[6111, 1808, 0], [3959, 3957, 3], [7449, 470, 0], [3000, 2457, 2462]]
    c = np.array(rows)
    assert np.all(c.sum(axis=1) == K)
    return c


def _scores():
    rng = np.random.default_rng(0)
    s = np.clip(rng.normal(0.83, 0.02, size=(4, 200)), 0, 1)
    s[1] = rng.uniform(0, 1, 200)
    return s


def _public(m):
    return pd.DataFrame({"age": np.arange(m) + 30.5, "colour": ["red", "blue", "green", "red"][:m]},
                        index=pd.RangeIndex(100, 100 + m))


def _results():
    c = _counts()
    return {
        "btt": ag.btt_label(c, epsilon=20.0, delta=1e-5, T=2, calibration="tight", rng=SEED),
        "btt_paper": ag.btt_label(c, epsilon=1.0, delta=1e-5, T=1, calibration="paper", rng=SEED),
        "btt-soft": ag.btt_soft_label(_scores(), epsilon=10.0, delta=1e-5, T=2, eta=0.1, calibration="tight", rng=SEED),
        "lnmax": ag.lnmax_label(c, gamma=0.05, delta=1e-5, rng=SEED),
        "baseline": ag.composition_baseline_label(c, epsilon=20.0, delta=1e-5, rng=SEED),
        "a-stab": ag.a_stab_label(c, epsilon=5.0, delta=1e-5, rng=SEED),
    }


RESULTS = _results()


def _secrets(result) -> list[str]:
    """Text forms of values that must never be exported."""
    c = _counts()
    values = [SEED, *c.ravel().tolist(), *margins(c).tolist(), *distance_to_instability(c).tolist()]
    out = [str(v) for v in values if v >= 100]  # small numbers occur legitimately
    if result.epsilon_data_dependent is not None:
        e = result.epsilon_data_dependent
        out += [repr(e), f"{e:.6g}", f"{e:.4g}", f"{e:.4f}"]
    return out


def _has(text: str, secret: str) -> bool:
    """Whether ``secret`` occurs as a whole token (not inside a longer number)."""
    return re.search(r"(?<![\w.])" + re.escape(secret) + r"(?![\w])", text) is not None


def _exports(result):
    public = _public(result.m)
    names = CLASS_NAMES if result.scores is None else None
    frame = labeled_frame(public, result, names)
    csv = frame.to_csv(index=False)
    report = privacy_report(result, n_private=N_PRIVATE, n_public=result.m, learner="logistic_regression",
                            k=K, dataset="unit-test")
    return public, frame, csv, report, report_json(report)


def _all_keys(obj):
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield key
            yield from _all_keys(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _all_keys(value)


# ----------------------------------------------------------------------------- labeled CSV


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_labeled_frame_has_exactly_the_documented_columns(name):
    result = RESULTS[name]
    public, frame, csv, _, _ = _exports(result)
    assert list(frame.columns) == list(public.columns) + list(LABEL_COLUMNS) == ["age", "colour", "label", "answered", "status"]
    assert frame.index.equals(public.index)
    pd.testing.assert_frame_equal(frame[list(public.columns)], public)
    assert frame["answered"].dtype == bool
    assert np.array_equal(frame["answered"].to_numpy(), result.answered)
    expected_status = np.where(result.labels >= 0, "answered",
                               np.where(result.labels == ag.BOTTOM, "abstained", "not processed"))
    assert frame["status"].tolist() == expected_status.tolist()
    assert (frame.loc[~frame["answered"], "label"] == "").all()
    answered = frame.loc[frame["answered"], "label"]
    if result.scores is None:
        assert set(answered) <= set(CLASS_NAMES)
    else:
        assert all(isinstance(v, float) and 0 <= v <= 1 for v in answered)
    # the CSV text has the same header and nothing else
    back = pd.read_csv(io.StringIO(csv), keep_default_na=False)
    assert list(back.columns) == list(frame.columns)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_csv_holds_no_private_values_or_seed(name):
    result = RESULTS[name]
    _, _, csv, _, _ = _exports(result)
    for secret in _secrets(result):
        assert not _has(csv, secret), (name, secret)
    low = csv.lower()
    for word in FORBIDDEN_TEXT:
        assert word not in low, (name, word)


# ----------------------------------------------------------------------------- report


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_report_has_exactly_the_documented_keys(name):
    result = RESULTS[name]
    _, _, _, report, text = _exports(result)
    assert list(report) == list(REPORT_KEYS)
    for key, sub in NESTED.items():
        assert list(report[key]) == sub
    assert set(report["parameters"]) <= PUBLIC_PARAMETERS
    parsed = json.loads(text)
    assert list(parsed) == list(REPORT_KEYS)
    for key, sub in NESTED.items():
        assert list(parsed[key]) == sub
    # the guarantee is the data-independent one
    assert parsed["guarantee"]["epsilon"] == pytest.approx(result.epsilon)
    assert parsed["guarantee"]["delta"] == pytest.approx(result.delta)
    assert parsed["counts"]["answered"] == result.n_answered
    assert parsed["counts"]["abstained"] == result.n_bottom
    assert parsed["counts"]["not_processed"] == result.n_unprocessed


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_report_holds_no_private_values_or_seed(name):
    result = RESULTS[name]
    _, _, _, report, text = _exports(result)
    parsed = json.loads(text)
    documented = set(REPORT_KEYS) | {k for sub in NESTED.values() for k in sub}
    assert set(_all_keys({k: v for k, v in parsed.items() if k != "parameters"})) <= documented
    for key in parsed["parameters"]:
        assert not any(word in key.lower() for word in FORBIDDEN_WORDS), key
    for secret in _secrets(result):
        assert not _has(text, secret), (name, secret)
    low = text.lower()
    for word in FORBIDDEN_TEXT:
        assert word not in low, (name, word)


def test_lnmax_data_dependent_epsilon_is_never_exported():
    result = RESULTS["lnmax"]
    eps_dd = result.epsilon_data_dependent
    assert eps_dd is not None and np.isfinite(eps_dd) and eps_dd != result.epsilon  # precondition
    _, _, csv, report, text = _exports(result)
    assert report["guarantee"]["epsilon"] == pytest.approx(result.epsilon)
    numbers = [float(x) for x in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", text + csv)]
    assert not any(abs(x - eps_dd) <= 1e-9 * max(1.0, abs(eps_dd)) for x in numbers)
    for key in _all_keys(report):
        assert "dependent" not in key


def test_injected_private_parameters_are_dropped():
    """Whatever a mechanism puts in ``params``, only allow-listed public names leave."""
    base = RESULTS["btt"]
    c = _counts()
    poisoned = dataclasses.replace(base, params={
        **base.params,
        "seed": SEED,
        "rng": SEED,
        "random_state": SEED,
        "vote_counts": c.tolist(),
        "votes": 6111,
        "margins": margins(c).tolist(),
        "margin": 4303,
        "distances": distance_to_instability(c).tolist(),
        "teacher_accuracy": 0.9731,
        "accuracy": 0.9731,
        "epsilon_data_dependent": 3.14159,
        "scores_raw": [0.123456],
        "counts_matrix": 7449,
    })
    report = privacy_report(poisoned, n_private=N_PRIVATE, n_public=4, learner="knn", k=K)
    text = report_json(report)
    assert report["parameters"] == privacy_report(base, n_private=N_PRIVATE, n_public=4, learner="knn", k=K)["parameters"]
    for secret in [str(SEED), "6111", "4303", "0.9731", "3.14159", "0.123456", "7449"]:
        assert not _has(text, secret), secret
    for word in ["seed", "vote", "margin", "accuracy", "dependent", "distances", "scores_raw", "counts_matrix"]:
        assert word not in text.lower()


def test_export_of_every_parameter_name_is_public():
    # every allow-listed name is a setting or a function of the settings
    for name in PUBLIC_PARAMETERS - FORBIDDEN_WORD_EXCEPTIONS:
        assert not any(word in name.lower() for word in FORBIDDEN_WORDS), name


# ----------------------------------------------------------------------------- app


@pytest.mark.slow
def test_app_export_page_report_holds_no_seed(monkeypatch):
    """The report the app offers for download (shown in its preview) in demo mode:
    the demo seed is used for the noise but never written out."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    root = Path(__file__).resolve().parents[1]
    monkeypatch.syspath_prepend(str(root))
    from app_pages import _session as _state

    at = AppTest.from_file(str(root / "app.py"), default_timeout=300)
    at.session_state["demo_seed"] = True
    at.session_state["ensemble_cfg"] = {"learner": "gaussian_nb", "params": {}, "k": 20}
    at.run()
    at.switch_page("app_pages/6_Student_and_export.py").run()
    assert not at.exception, at.exception
    at.button(key="release").click().run()  # only a release is exported
    assert not at.exception, at.exception
    codes = [c.value for c in at.code]
    assert codes, "the export page shows its report preview"
    report = json.loads(codes[-1])
    assert list(report) == list(REPORT_KEYS) + list(RELEASE_KEYS)
    text = codes[-1].lower()
    assert str(_state.DEMO_SEED) not in text
    for word in FORBIDDEN_TEXT:
        assert word not in text, word
