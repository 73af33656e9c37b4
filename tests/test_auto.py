"""core.auto: the route and k chosen from public quantities, and ``label --mechanism auto --k auto``."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from core import auto
from core.accounting.rdp import gnmax_sigma_for_epsilon
from core.errors import ParameterError

ADULT = dict(n=32_561, m=1_500, d=92, n_classes=2, delta=1e-5)


def test_flip_rate_and_noise_ratio_by_hand():
    # margin (2·0.9 − 1)·100 = 80; with σ = 80/√2 the argument is 1: Φ(−1) = 0.158655…
    assert auto.flip_rate(100, 80 / math.sqrt(2)) == pytest.approx(0.15865525393145707, rel=1e-12)
    r = auto.dp_noise_ratio(n=32_561, d=92, epsilon=1.0, delta=1e-5)
    # σ = 2R √(8 log(2/δ) + 4ε)/ε (replace-one moves the gradient by up to 2R)
    assert r == pytest.approx(2 * math.sqrt(8 * math.log(2e5) + 4) * math.sqrt(93) / 32_561, rel=1e-12)


@pytest.fixture(scope="module")
def adult_public():
    """Adult's public rows as the DP-training routes encode them (the first 1,500 of adult_test)."""
    from core.data import load_bundled
    from core.plan import PublicRows

    train, test = load_bundled("adult_train", missing="impute"), load_bundled("adult_test", missing="impute")
    return PublicRows.of(train, test.features.iloc[:1_500].reset_index(drop=True))


def test_adult_at_small_epsilon_chooses_the_dp_logistic_regression_and_says_why(adult_public):
    # The plan reads the job's public rows, as the command line passes them (a stand-in of d
    # uniform columns is kinder to naive Bayes's Gaussian likelihoods than Adult's one-hot rows).
    choice = auto.choose(epsilon=1.0, learner="logistic_regression", public=adult_public, **ADULT)
    assert choice.mechanism == "dp-logistic" and choice.settings == {"perturbation": "gaussian"}
    sigma = float(gnmax_sigma_for_epsilon(1.0, n_answers=1_500, delta=1e-5))
    assert choice.predictions["sigma"] == pytest.approx(sigma)
    assert choice.predictions["flip_rate"] > 0.2  # σ ≈ 222 against at most 50 teachers' margins
    assert "Chose the DP logistic regression" in choice.reason and f"σ = {sigma:.1f}" in choice.reason
    # a flexible learner too: the ensemble's labels would flip too often at ε = 1
    assert auto.choose(epsilon=1.0, learner="random_forest", public=adult_public, **ADULT).mechanism == "dp-logistic"


def test_a_large_budget_on_few_queries_keeps_the_ensemble_for_a_flexible_learner():
    choice = auto.choose(n=200_000, m=20, d=20, n_classes=2, epsilon=8.0, delta=1e-5, learner="random_forest")
    assert choice.mechanism == "gnmax" and choice.predictions["flip_rate"] <= auto.MAX_FLIP
    assert 200_000 / choice.k >= 5 * 21  # enough rows per teacher
    # the smallest k on the grid that meets the flip rate
    smaller = [k for k in auto.K_GRID if k < choice.k]
    assert all(auto.flip_rate(k, choice.predictions["sigma"]) > auto.MAX_FLIP for k in smaller)


def test_k_only_for_a_given_mechanism_and_parse_k():
    choice = auto.choose(epsilon=2.0, learner="logistic_regression", mechanism="confident-gnmax", **ADULT)
    assert choice.mechanism == "confident-gnmax" and choice.k in auto.K_GRID
    assert auto.parse_k("auto") == "auto" and auto.parse_k(" AUTO ") == "auto" and auto.parse_k("250") == 250
    with pytest.raises(ParameterError):
        auto.parse_k("many")


def test_label_command_with_auto(tmp_path):
    from core.cli import EXIT_OK, main

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (3000, 3))
    y = np.where(X[:, 0] + X[:, 1] > 1, "yes", "no")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame.assign(label=y).iloc[:2800].to_csv(tmp_path / "private.csv", index=False)
    frame.iloc[2800:].to_csv(tmp_path / "public.csv", index=False)
    argv = ["label", "--private", str(tmp_path / "private.csv"), "--public", str(tmp_path / "public.csv"),
            "--label-column", "label", "--learner", "logistic_regression", "--k", "auto", "--mechanism", "auto",
            "--epsilon", "2", "--delta", "1e-5", "--out", str(tmp_path / "labeled.csv"),
            "--report", str(tmp_path / "report.json"), "--seed", "3", "--no-progress"]
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(argv) == EXIT_OK, err.getvalue()
    assert "auto: Chose the DP logistic regression" in err.getvalue()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["mechanism"] == "dp-logistic"
    assert report["guarantee"]["epsilon"] == 2.0 and report["guarantee"]["delta"] == 1e-5
    labeled = pd.read_csv(tmp_path / "labeled.csv")
    truth = np.where(X[2800:, 0] + X[2800:, 1] > 1, "yes", "no")
    assert (labeled["label"].to_numpy() == truth).mean() > 0.9
    # auto needs the budget
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main([a for a in argv if a not in ("--epsilon", "2")]) != EXIT_OK


def test_label_auto_takes_the_plans_assumptions(tmp_path):
    """auto makes the plan's choice under the owner's assumptions: --route-accuracy and --model-accuracy
    reach its prediction (said on stderr), --majority-share 0.95 leaves no route useful (said), and the
    assumptions are refused with a named mechanism, which reads none of them."""
    import contextlib

    from core.cli import EXIT_OK, main

    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, (1200, 3))
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(0, 0.3, 1200) > 1, "yes", "no")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame.assign(label=y).iloc[:1000].to_csv(tmp_path / "private.csv", index=False)
    frame.iloc[1000:].to_csv(tmp_path / "public.csv", index=False)
    base = ["label", "--private", str(tmp_path / "private.csv"), "--public", str(tmp_path / "public.csv"),
            "--label-column", "label", "--epsilon", "1", "--delta", "1e-5", "--seed", "3", "--no-progress",
            "--budget-epsilon", "10", "--budget-delta", "1e-4"]

    def run(extra, out):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            code = main(base + ["--out", str(tmp_path / out)] + extra)
        return code, err.getvalue()

    code, err = run(["--mechanism", "auto", "--model-accuracy", "0.8", "--route-accuracy", "dp-logistic=0.9"], "a.csv")
    assert code == EXIT_OK, err
    assert "right 80.0% of the time, dp-logistic's own model without noise right 90.0%" in err
    code, err = run(["--mechanism", "auto", "--majority-share", "0.95", "--model-accuracy", "0.8"], "b.csv")
    assert "No route is predicted to beat always answering the majority class" in err
    code, err = run(["--mechanism", "gnmax", "--k", "10", "--learner", "logistic_regression",
                     "--model-accuracy", "0.8"], "c.csv")
    assert code != EXIT_OK and "--model-accuracy steer --mechanism auto's choice" in err
    code, err = run(["--mechanism", "gnmax", "--k", "10", "--learner", "logistic_regression",
                     "--accuracy", "0.9"], "d.csv")  # a teacher-quality flag too, though it has a default
    assert code != EXIT_OK and "--accuracy steer --mechanism auto's choice" in err
