"""Builders shared by the tests (one definition each): LabelingResult by hand, a COMPAS-like
table, a learner that records whose rows it saw, and the plain per-query reference loops of BTT's sparse vector that the vectorized
code (and the aggregation bench) are checked against."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sklearn.base import BaseEstimator, ClassifierMixin

from core import accounting, noise
from core.mechanisms import BOTTOM, UNPROCESSED, LabelingResult


def euro_frames(rng: np.random.Generator, n_private: int, n_public: int, public_start: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A private and a public table as a French-speaking office writes them: accented city names, French
    labels ('oui'/'non') and a row number ``rownum`` (the public rows numbered from ``public_start``,
    without the label).  The private table is drawn first, then the public one."""

    def frame(n: int, start: int) -> pd.DataFrame:
        x1, x2 = rng.normal(size=n).round(3), rng.normal(size=n).round(3)
        return pd.DataFrame({"rownum": np.arange(start, start + n), "x1": x1, "x2": x2,
                             "city": rng.choice(["Zürich", "Genève", "Köln"], size=n),
                             "label": np.where(x1 + x2 > 0, "oui", "non")})

    return frame(n_private, 0), frame(n_public, public_start).drop(columns=["label"])


class PersonRecorder(ClassifierMixin, BaseEstimator):
    """A learner that remembers the person codes (column 0) of the rows it was fitted on."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        self.persons_ = frozenset(np.asarray(X)[:, 0].astype(int).tolist())
        return self

    def predict(self, X):
        return np.full(len(X), self.classes_[0])


def make_result(labels, scores=None, mechanism="btt", params=None, epsilon=4.0, delta=1e-5,
                accounting="10 sparse-vector rounds composed by pld", **extra) -> LabelingResult:
    """A :class:`LabelingResult` with the given labels (counts derived from them)."""
    labels = np.asarray(labels, dtype=np.int64)
    return LabelingResult(
        mechanism=mechanism,
        labels=labels,
        scores=None if scores is None else np.asarray(scores, dtype=float),
        n_answered=int((labels >= 0).sum()),
        n_bottom=int((labels == BOTTOM).sum()),
        n_unprocessed=int((labels == UNPROCESSED).sum()),
        halted_at=None,
        epsilon=epsilon,
        delta=delta,
        params=params or {},
        accounting=accounting,
        **extra,
    )


def compas_like(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """A COMPAS-like table: id, name, dob, free text, an outcome equal to the label, real features."""
    g = np.random.default_rng(seed)
    age = g.integers(18, 70, n)
    priors = g.poisson(2, n)
    risk = 1 / (1 + np.exp(-(0.4 * priors - 0.05 * (age - 35))))
    label = np.where(g.random(n) < risk, "yes", "no")
    words = ["possession", "of", "cannabis", "battery", "grand", "theft", "driving", "license", "suspended"]
    return pd.DataFrame({
        "id": np.arange(1, n + 1),
        "name": [f"Person {i} Lastname{i}" for i in range(n)],
        "dob": [f"19{g.integers(50, 99)}-{g.integers(1, 13):02d}-{g.integers(1, 29):02d}" for _ in range(n)],
        "c_charge_desc": [" ".join(g.choice(words, 6)) + f" case {i}" for i in range(n)],
        "age": age,
        "priors_count": priors,
        "sex": g.choice(["Male", "Female"], n),
        "is_recid": np.where(label == "yes", 1, 0),
        "two_year_recid": label,
    })


def reference_btt(counts, epsilon, delta, T, calibration, seed):
    m = counts.shape[0]
    cal = accounting.calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration)
    rng = np.random.default_rng(seed)
    zt = noise.discrete_laplace(cal.noise_scale, T, rng)  # same stream order as btt_label
    zq = noise.discrete_laplace(2 * cal.noise_scale, m, rng)
    out = [UNPROCESSED] * m
    c = 0
    w_hat = cal.threshold + zt[0]
    for i in range(m):
        if c >= T:
            break
        v = counts[i]
        top2 = sorted(v)[-2:] if len(v) > 1 else [0, v[0]]
        margin = top2[1] - top2[0]
        dist = max(0, math.ceil(margin / 2) - 1)
        if dist + zq[i] > w_hat:
            out[i] = int(np.argmax(v))
        else:
            out[i] = BOTTOM
            c += 1
            if c < T:
                w_hat = cal.threshold + zt[c]
    return np.array(out)


def reference_soft(scores, epsilon, delta, T, eta, calibration, seed):
    m, k = scores.shape
    nb = round(1 / eta)
    cal = accounting.calibrate_btt(epsilon, delta=delta, T=T, m=m, calibration=calibration, soft=True)
    rng = np.random.default_rng(seed)
    zt = noise.discrete_laplace(cal.noise_scale, 2 * T, rng)
    zq = noise.discrete_laplace(2 * cal.noise_scale, (m, 2), rng)
    out = [math.nan] * m
    lab = [UNPROCESSED] * m
    c = 0

    def dist_and_mid(hist, mids):
        order = sorted(range(len(hist)), key=lambda b: (-hist[b], b))
        top = order[0]
        second = hist[order[1]] if len(hist) > 1 else 0
        return max(0, math.ceil((hist[top] - second) / 2) - 1), mids[top]

    for i in range(m):
        if c >= 2 * T:
            break
        h1 = [0] * nb
        h2 = [0] * (nb - 1)
        for s in scores[i]:
            h1[min(int(math.floor(s * nb)), nb - 1)] += 1
            t = s * nb - 0.5
            if t >= 0 and int(math.floor(t)) < nb - 1:
                h2[int(math.floor(t))] += 1
        d1, mid1 = dist_and_mid(h1, [(b + 0.5) / nb for b in range(nb)])
        if d1 + zq[i, 0] > cal.threshold + zt[c]:
            out[i], lab[i] = mid1, 1
            continue
        c += 1
        if c >= 2 * T:
            lab[i] = BOTTOM
            break
        d2, mid2 = dist_and_mid(h2, [(b + 1.0) / nb for b in range(nb - 1)])
        if d2 + zq[i, 1] > cal.threshold + zt[c]:
            out[i], lab[i] = mid2, 1
        else:
            lab[i] = BOTTOM
            c += 1
    return np.array(lab), np.array(out)
