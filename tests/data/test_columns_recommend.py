"""Tests of core.data.columns (column warnings) and core.recommend (suggested settings)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from builders import compas_like

from core import theory
from core.data import two_gaussians
from core.data.columns import ColumnWarning, column_warnings, single_column_accuracy
from core.mechanisms import registry
from core.recommend import Recommendation, recommend_settings


def test_compas_like_warnings_name_each_problem_column():
    frame = compas_like()
    warnings = column_warnings(frame, "two_year_recid")
    kinds = {(w.column, w.kind) for w in warnings}
    assert ("id", "identifier") in kinds
    assert ("name", "identifier") in kinds
    assert ("dob", "date") in kinds
    assert ("c_charge_desc", "free_text") in kinds
    assert ("is_recid", "label_stand_in") in kinds
    flagged = {w.column for w in warnings}
    assert not flagged & {"age", "priors_count", "sex", "two_year_recid"}
    proxy = next(w for w in warnings if w.kind == "label_stand_in")
    assert "NON-PRIVATE" in proxy.sentence and "--" not in proxy.sentence  # no command-line flag in the words
    assert all(isinstance(w, ColumnWarning) and str(w) == w.sentence for w in warnings)


def test_labels_given_apart_and_clean_tables_have_no_warnings():
    X, y = two_gaussians(500, rng=1)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
    assert column_warnings(frame, None, labels=y) == []
    acc, base = single_column_accuracy(pd.Series(y), y)
    assert acc == 1.0 and base < 0.75


def test_recommend_adult_sizes_never_btt_t5_at_k250():
    sizes = dict(n_private=32_561, class_counts=[24_720, 7_841], epsilon=2.0, delta=1e-5, m=4_884)
    plain = recommend_settings(**sizes)
    assert isinstance(plain, Recommendation) and plain.mechanism in registry.names()
    assert plain.mechanism != "btt" and plain.reasons
    assert any("btt_min_teachers" in r for r in plain.reasons)
    # Adult-like agreement: most rows easy, a fifth hard (measured per held-out row).
    g = np.random.default_rng(0)
    shares = np.where(g.random(1000) < 0.8, 0.97, g.uniform(0.5, 0.8, 1000))
    at_250 = recommend_settings(**sizes, agreement=shares, k=250)
    assert not (at_250.mechanism == "btt" and at_250.k == 250 and at_250.T == 5)
    assert at_250.mechanism != "btt"
    # ... and indeed BTT at k = 250, T = 5 sits below a unanimous vote's minimum.
    assert theory.btt_min_teachers(2.0, 1e-5, 5, 4_884, calibration="tight") > 250
    assert any("NON-PRIVATE" in r for r in at_250.reasons)
    assert "--mechanism" in at_250.flags() and "--k 250" in at_250.flags()


def test_recommend_two_gaussians_with_high_agreement_picks_btt():
    X, y = two_gaussians(20_000, rng=3)
    counts = np.bincount(y)
    rec = recommend_settings(n_private=len(y), class_counts=counts, epsilon=4.0, delta=1e-5, m=200, agreement=0.99)
    assert rec.mechanism == "btt" and rec.T is not None
    assert rec.k >= theory.btt_min_teachers(4.0, 1e-5, rec.T, 200, calibration="tight")
    assert rec.expected_answered >= 100 and rec.settings["T"] == rec.T
    hard = np.random.default_rng(1).uniform(0.5, 0.7, 300)  # per held-out row: mostly split votes
    low = recommend_settings(n_private=len(y), class_counts=counts, epsilon=4.0, delta=1e-5, m=200, agreement=hard)
    assert low.mechanism in {"gnmax", "confident-gnmax"}


def test_recommend_bad_inputs():
    with pytest.raises(Exception):
        recommend_settings(n_private=10, class_counts=[10], epsilon=1, delta=1e-5, m=5)
    with pytest.raises(Exception):
        recommend_settings(n_private=100, class_counts=[50, 50], epsilon=1, delta=1e-5, m=5, agreement=1.5)
