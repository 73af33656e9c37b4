"""A labeling stream answered in chunks equals one run on all its rows (same seed)."""

from __future__ import annotations

import numpy as np
import pytest

from core import pipeline
from core.mechanisms.btt import btt_label
from core.mechanisms.gaussian import confident_gnmax_label
from core.mechanisms.result import BOTTOM, UNPROCESSED
from core.mechanisms.session import AlignedNoise, ConfidentGNMaxSession
from core.pipeline import stream_session
from core.noise import _CHUNK, discrete_laplace


def votes(m, k=60, seed=0, agree=0.8):
    """Vote counts of k teachers on m binary queries; most queries near unanimous."""
    gen = np.random.default_rng(seed)
    p = np.where(gen.random(m) < agree, 0.97, 0.55)
    ones = gen.binomial(k, p)
    return np.stack([k - ones, ones], axis=1)


def run_chunks(session, counts, sizes):
    out, start = [], 0
    for size in sizes:
        out.append(session.answer(counts[start:start + size]))
        start += size
    assert start == counts.shape[0]
    return np.concatenate(out)


def cuts(m, seed):
    gen = np.random.default_rng(seed)
    bounds = np.sort(gen.choice(np.arange(1, m), size=7, replace=False))
    return np.diff(np.concatenate([[0], bounds, [m]])).tolist()


def test_aligned_noise_replays_one_call_in_any_batches():
    total = _CHUNK + 1000
    one = discrete_laplace(3.5, total, np.random.default_rng(4))
    noise = AlignedNoise(3.5, total, np.random.default_rng(4))
    sizes = [1, 999, _CHUNK - 1500, 1, 1499]
    got = np.concatenate([noise.take(n) for n in sizes])
    assert np.array_equal(got, one)


@pytest.mark.parametrize("T, k, halts", [(10, 1000, True), (3, 3000, False)])
def test_btt_chunked_equals_one_shot(T, k, halts):
    counts = votes(5000, k=k, agree=0.98)
    settings = {"epsilon": 8.0, "delta": 1e-6, "T": T, "calibration": "tight"}
    params = pipeline.resolve("btt", settings, counts.shape[0])
    one = btt_label(counts, **params, rng=11)
    session = stream_session("btt", settings, counts.shape[0], rng=11)
    labels = run_chunks(session, counts, cuts(counts.shape[0], T))
    assert np.array_equal(labels, one.labels)
    assert session.n_bottom == one.n_bottom
    assert (one.n_unprocessed > 0) == halts
    assert one.n_answered > 0
    whole = stream_session("btt", settings, counts.shape[0], rng=11)
    assert np.array_equal(whole.answer(counts), one.labels)


@pytest.mark.parametrize("accounting, budget", [("fixed", None), ("filter", None), ("filter", 60.0)])
def test_confident_gnmax_chunked_equals_one_shot(accounting, budget):
    counts = votes(4000, seed=3)
    m = counts.shape[0]
    settings = {"sigma1": 20.0, "sigma2": 8.0, "threshold": 45.0, "delta": 1e-6, "accounting": accounting}
    one = confident_gnmax_label(counts, threshold=45.0, sigma1=20.0, sigma2=8.0, delta=1e-6,
                                accounting=accounting, budget=budget, rng=5)
    session = ConfidentGNMaxSession(m, 5, **{k: v for k, v in settings.items()}, budget=budget)
    labels = run_chunks(session, counts, cuts(m, 9))
    assert np.array_equal(labels, one.labels)
    assert session.spent().epsilon == pytest.approx(one.epsilon, rel=1e-12)
    if budget is not None:  # the filter halted part-way, across chunk boundaries
        assert one.halted_at is not None and 0 < one.n_unprocessed < m
        assert session.halted_at == one.halted_at
        assert session.spent().parts["rdp_spent"] == pytest.approx(one.params["rdp_spent"])
    assert set(np.unique(labels)) <= {0, 1, BOTTOM, UNPROCESSED}


def test_confident_stream_session_through_the_registry():
    counts = votes(3000, seed=8)
    settings = {"epsilon": 4.0, "delta": 1e-6, "accounting": "filter"}
    session = stream_session("confident-gnmax", settings, counts.shape[0], rng=2)
    assert isinstance(session, ConfidentGNMaxSession)
    params = pipeline.resolve("confident-gnmax", settings, counts.shape[0])
    one = pipeline.label(counts, "confident-gnmax", settings, rng=2)
    labels = run_chunks(session, counts, [1000, 1000, 1000])
    assert np.array_equal(labels, one.labels)
    assert session.sigma1 == params["sigma1"] and session.threshold == pytest.approx(0.8 * 60)


def test_filter_budget_below_one_query_is_refused():
    from core.errors import ParameterError

    with pytest.raises(ParameterError, match="below the charge of one query"):
        ConfidentGNMaxSession(10, 0, threshold=1.0, sigma1=1.0, sigma2=1.0, delta=1e-5,
                              accounting="filter", budget=1e-6)
