"""Folds chosen by reading the labels, handed to scikit-learn as a list or a generator
(docs/design.md §13): the splitter is gone before the estimator sees the search."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score

from core import PrivateEnsembleClassifier
from core import ledger as L
from core.data import halfspaces
from core.errors import ParameterError


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="check_cv turns a generator or a list of folds into a plain list of index pairs: whether "
                          "they were chosen by reading the labels cannot be seen (the refusal covers splitter "
                          "objects only; docs/design.md §13)")
@pytest.mark.parametrize("given", ["generator", "list"])
def test_stratified_folds_given_as_index_pairs_are_refused(given):
    X, y = halfspaces(120, 3, rng=2)
    folds = StratifiedKFold(2, shuffle=True, random_state=0).split(X, y)
    cv = folds if given == "generator" else list(folds)
    clf = PrivateEnsembleClassifier(LogisticRegression(), k=3, mechanism="gnmax", epsilon=1.0, delta=1e-5,
                                    max_queries=100, rng=0, ledger=L.PrivacyLedger("folds"))
    refused = False
    try:
        with pytest.warns(Warning):
            cross_val_score(clf, X, y, cv=cv)
    except ParameterError:
        refused = True
    assert refused, "folds placed by the labels ran"
