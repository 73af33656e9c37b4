"""PrivateSearchCV: private model selection as a scikit-learn estimator (docs/design.md §10.8).

Its whole guarantee is priced before it runs, charged to the ledger (the selection, then
the refit: two runs, however many repetitions ran), and checked against dp-accounting's
RDP accountant composing the events the proof says the search is.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dp_accounting import dp_event as E
from dp_accounting.rdp import rdp_privacy_accountant as R
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from core import PrivateEnsembleClassifier, PrivateSearchCV
from core import ledger as L
from core.accounting.rdp import ORDERS
from core.errors import BudgetExhausted, ParameterError, PrivacyWarning

ROOT = Path(__file__).resolve().parents[2]
GRID = {"learner__logisticregression__C": [1e-4, 1.0]}


@pytest.fixture(scope="module")
def adult():
    """The first 2,000 rows of UCI Adult's training file, its numeric columns, income > 50K."""
    df = pd.read_csv(ROOT / "datasets" / "adult_train.csv.gz", skipinitialspace=True, nrows=2000)
    X = df[["age", "education-num", "capital-gain", "capital-loss", "hours-per-week"]].to_numpy(float)
    y = np.where(df["income"].astype(str).str.startswith(">50K"), ">50K", "<=50K")
    return X, y


def _clf(ledger, **kw):
    settings = {"k": 20, "mechanism": "gnmax", "epsilon": 2.0, "delta": 1e-5, "max_queries": 400, **kw}
    return PrivateEnsembleClassifier(make_pipeline(StandardScaler(), LogisticRegression()), ledger=ledger, **settings)


def _independent_epsilon(sigma: float, m: int, mean: float, shape: float, score_sigma: float, delta: float) -> float:
    """dp-accounting's RDP accountant on the events of the proof: repeat-and-select of one
    repetition (the candidate's m GNMax answers, a Gaussian of multiplier σ/√2 composed m
    times, dominating the score's α/(2σ_s²) here), then the refit's m answers."""
    assert m / sigma**2 >= 1 / (2 * score_sigma**2)  # the run's curve dominates the score's
    acc = R.RdpAccountant(orders=list(ORDERS))
    one = E.SelfComposedDpEvent(E.GaussianDpEvent(sigma / math.sqrt(2.0)), m)
    acc.compose(E.RepeatAndSelectDpEvent(one, mean, shape))
    acc.compose(one)
    return acc.get_epsilon(delta)


def test_private_search_on_adult_puts_its_whole_guarantee_on_the_ledger(adult):
    X, y = adult
    led = L.PrivacyLedger("adult")
    search = PrivateSearchCV(_clf(led, classes=["<=50K", ">50K"]), GRID, mean=3.0, rng=1)  # the classes declared
    price = search.price()  # before anything runs, from the parameters alone
    assert len(led) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # the covered route: no "not covered" warning
        search.fit(X, y)
    # the whole guarantee on the ledger: the selection and the refit, two runs however many repetitions ran
    assert len(led) == 2
    assert led.total().epsilon == pytest.approx(price.epsilon, rel=1e-12)
    assert led.total().delta == pytest.approx(price.delta, rel=1e-12) == pytest.approx(2e-5)
    assert search.privacy_.epsilon == pytest.approx(price.epsilon, rel=1e-12)
    # checked against an independent computation, with the σ the refit actually ran
    sigma = search.best_estimator_.settings_["sigma"]
    assert price.epsilon == pytest.approx(_independent_epsilon(sigma, 400, 3.0, 1.0, 5.0, 2e-5), rel=1e-6)
    # released: the candidate and its noisy held-out accuracy; not the candidates tried or their scores
    assert search.best_params_ in list(ParameterGrid(GRID))
    assert search.n_scored_ == 400 and 0.0 <= search.best_score_ <= 1.1
    assert not hasattr(search, "cv_results_")
    assert set(search.classes_) == {"<=50K", ">50K"}
    assert set(np.unique(search.predict(X[:50]))) <= {"<=50K", ">50K", -1}


def test_the_search_is_refused_before_anything_runs_past_the_budget_or_with_a_stateful_mechanism(adult):
    X, y = adult
    probe = PrivateSearchCV(_clf(None), GRID, mean=3.0)
    whole, selection = probe.price(), clone(probe).set_params(refit=False).price()
    assert selection.epsilon < whole.epsilon
    # room for the selection but not for its refit: refused, nothing charged, nothing trained
    led = L.PrivacyLedger(budget_epsilon=(selection.epsilon + whole.epsilon) / 2, budget_delta=1e-4)
    with pytest.raises(BudgetExhausted):
        PrivateSearchCV(_clf(led), GRID, mean=3.0, rng=0).fit(X, y)
    assert len(led) == 0
    with pytest.raises(ParameterError, match="answered independently"):
        PrivateSearchCV(_clf(None, mechanism="btt", T=5), GRID).price()
    with pytest.raises(ParameterError, match="max_queries"):
        PrivateSearchCV(_clf(L.PrivacyLedger()), GRID, holdout=0.5).fit(X, y)
    with pytest.raises(ParameterError, match="the search's own"):
        PrivateSearchCV(_clf(None), {"rng": [0, 1]}).price()


def test_held_out_by_person_one_row_each_and_the_charge_names_the_persons(adult):
    X, y = adult
    persons = np.arange(len(y)) // 2  # two rows each
    led = L.PrivacyLedger()
    search = PrivateSearchCV(_clf(led, k=10), {"k": [10]}, mean=1.0, holdout=200, rng=2).fit(X, y, groups=persons)
    assert search.n_scored_ == 200  # one row of each of the 200 held-out persons
    assert led.n_units == len(np.unique(persons)) and len(led) == 2
    assert led.total().epsilon == pytest.approx(search.privacy_.epsilon, rel=1e-12)


def test_step_one_a_held_out_rows_bernoulli_term_costs_at_most_the_shift_by_one_exact_enumeration():
    """The proof's held-out case, computed exactly: the noisy count is c + B + Z on one side and
    c + B' + Z on the other (B, B' Bernoulli, Z discrete Gaussian σ); its Rényi divergence is at
    most α/(2σ²), the discrete Gaussian shifted by one, with equality at integer α for B = 1, B' = 0."""
    from scipy.special import logsumexp

    sigma = 2.0
    z = np.arange(-60, 62).astype(float)
    log_norm = logsumexp(-np.arange(-400, 401) ** 2 / (2 * sigma**2))

    def log_law(p):  # log of the law of B + Z on the integers z (B ~ Bernoulli(p)), in logs: no underflow
        a = -z**2 / (2 * sigma**2) - log_norm
        b = -(z - 1) ** 2 / (2 * sigma**2) - log_norm
        with np.errstate(divide="ignore"):  # log(0) = -inf: that branch drops out of logaddexp
            return np.logaddexp(np.log1p(-p) + a, np.log(p) + b)

    for alpha in (1.5, 2.0, 5.0, 10.0, 32.0):
        bound = alpha / (2 * sigma**2)
        worst = 0.0
        for p in (0.0, 0.1, 0.5, 0.9, 1.0):
            for q in (0.0, 0.1, 0.5, 0.9, 1.0):
                lp, lq = log_law(p), log_law(q)
                d = float(logsumexp(alpha * lp + (1 - alpha) * lq)) / (alpha - 1)
                worst = max(worst, d)
                assert d <= bound * (1 + 1e-9) + 1e-12, (alpha, p, q, d, bound)
        if alpha == int(alpha):
            assert worst == pytest.approx(bound, rel=1e-9)
