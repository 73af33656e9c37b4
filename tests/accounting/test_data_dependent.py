"""Data-dependent RDP (core.accounting.data_dependent) and smooth sensitivity (core.accounting.smooth_sensitivity)
against plain, slow references written here from the formulas of docs/design.md §8.4–8.5."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dp_accounting.rdp.rdp_privacy_accountant import compute_epsilon
from scipy.special import ndtri

from core.accounting import data_dependent as dd
from core.accounting import gnmax_sensitivity as gs
from core.accounting import smooth_sensitivity as ss
from core.errors import ParameterError

ORDERS = np.array([2.0, 2.5, 3.0, 5.0, 8.0, 13.5, 20.0, 32.0, 50.0, 80.0, 150.0, 400.0])


# ----------------------------------------------------------------------------- references


def ref_theorem6(q: float, sigma: float, lam: float) -> float:
    """Theorem 6 with the data-independent cap, plain floats."""
    ind = lam / sigma**2
    if q == 0.0:
        return 0.0
    mu2 = sigma * math.sqrt(math.log(1.0 / q))
    mu1 = mu2 + 1.0
    e1, e2 = mu1 / sigma**2, mu2 / sigma**2
    if not (lam <= mu1 and mu2 > 1.0 and q * math.exp(e2) < 1.0):
        return ind
    if not q <= math.exp((mu2 - 1.0) * e2) / (mu1 / (mu1 - 1.0) * mu2 / (mu2 - 1.0)) ** mu2:
        return ind
    a = (1.0 - q) / (1.0 - (q * math.exp(e2)) ** ((mu2 - 1.0) / mu2))
    b = math.exp(e1) / q ** (1.0 / (mu1 - 1.0))
    log_terms = [math.log(1.0 - q) + (lam - 1.0) * math.log(a), math.log(q) + (lam - 1.0) * math.log(b)]
    top = max(log_terms)
    val = (top + math.log(sum(math.exp(t - top) for t in log_terms))) / (lam - 1.0)
    return min(max(val, 0.0), ind)


def ref_q_gnmax(row, sigma: float) -> float:
    row = [int(x) for x in row]
    if len(row) == 1:
        return 0.0
    star = row.index(max(row))
    q = sum(0.5 * math.erfc((row[star] - n) / (2.0 * sigma)) for c, n in enumerate(row) if c != star)
    return min(q, 1.0 - 1.0 / len(row))


def ref_q_threshold(row, t: float, sigma1: float) -> float:
    p = 0.5 * math.erfc((t - max(row)) / (sigma1 * math.sqrt(2.0)))  # P[N(0, σ1²) ≥ t − max]
    not_p = 0.5 * math.erfc((max(row) - t) / (sigma1 * math.sqrt(2.0)))  # 1 − p without cancellation
    return min(p, not_p)


def ref_gnmax(counts, sigma, orders):
    return np.array([[ref_theorem6(ref_q_gnmax(r, sigma), sigma, lam) for lam in orders] for r in counts])


def ref_threshold(counts, t, s1, orders):
    return np.array([[ref_theorem6(ref_q_threshold(r, t, s1), math.sqrt(2.0) * s1, lam) for lam in orders]
                     for r in counts])


def histograms(rng, k, n_classes, n):
    out = [rng.multinomial(k, rng.dirichlet(np.full(n_classes, a))) for a in rng.choice([0.05, 0.5, 5.0], n)]
    unanimous = np.zeros(n_classes, int)
    unanimous[0] = k
    tie = np.zeros(n_classes, int)
    tie[: min(2, n_classes)] = k // min(2, n_classes)
    tie[0] += k - tie.sum()
    out += [unanimous, tie, np.roll(unanimous, n_classes - 1)]
    return np.array(out)


def close(a, b, rel=1e-9, abs_=1e-13):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.all(np.abs(a - b) <= rel * np.abs(b) + abs_)


# ----------------------------------------------------------------------------- data-dependent RDP


@pytest.mark.parametrize("n_classes", [2, 3, 10])
@pytest.mark.parametrize("sigma", [5.0, 20.0, 40.0])
def test_gnmax_matches_reference(n_classes, sigma):
    rng = np.random.default_rng(int(sigma) * 10 + n_classes)
    counts = histograms(rng, 250, n_classes, 40)
    got = dd.gnmax_rdp_data_dependent(counts, sigma=sigma, orders=ORDERS)
    assert got.shape == (counts.shape[0], ORDERS.size)
    assert close(got, ref_gnmax(counts, sigma, ORDERS))


def test_gnmax_one_class_is_free():
    got = dd.gnmax_rdp_data_dependent(np.array([[7], [7]]), sigma=3.0, orders=ORDERS)
    assert np.all(got == 0.0)


@pytest.mark.parametrize("t,s1", [(200.0, 150.0), (200.0, 30.0), (125.0, 10.0), (240.0, 5.0)])
def test_threshold_matches_reference(t, s1):
    rng = np.random.default_rng(int(t + s1))
    counts = histograms(rng, 250, 4, 40)
    # rows whose top count sits at, just below and just above the threshold
    near = np.array([[int(t) + j, 250 - int(t) - j, 0, 0] for j in (-2, -1, 0, 1, 2) if 0 <= int(t) + j <= 250])
    counts = np.vstack([counts, near])
    got = dd.threshold_rdp_data_dependent(counts, threshold=t, sigma1=s1, orders=ORDERS)
    assert close(got, ref_threshold(counts, t, s1, ORDERS))


def test_never_above_data_independent():
    rng = np.random.default_rng(1)
    orders = np.array(dd.DEFAULT_ORDERS)
    for sigma in (1.0, 4.0, 40.0, 100.0):
        counts = histograms(rng, 250, 10, 30)
        g = dd.gnmax_rdp_data_dependent(counts, sigma=sigma, orders=orders)
        assert np.all(g <= orders / sigma**2) and np.all(g >= 0)
        h = dd.threshold_rdp_data_dependent(counts, threshold=200, sigma1=sigma, orders=orders)
        assert np.all(h <= orders / (2 * sigma**2)) and np.all(h >= 0)


@pytest.mark.parametrize("sigma,n_classes", [(100.0, 3), (100.0, 10), (150.0, 2), (150.0, 10), (200.0, 2)])
def test_large_sigma_equals_data_independent(sigma, n_classes):
    # 250 teachers: every histogram, the unanimous one (the most favourable) included.
    # (For K = 2 at σ = 100 the unanimous histogram does gain at orders ≥ 43.5: not tested.)
    rng = np.random.default_rng(2)
    orders = np.array(dd.DEFAULT_ORDERS)
    counts = histograms(rng, 250, n_classes, 50)
    g = dd.gnmax_rdp_data_dependent(counts, sigma=sigma, orders=orders)
    assert np.array_equal(g, np.broadcast_to(orders / sigma**2, g.shape))


def test_lnmax_matches_moments():
    from core.accounting import pate_moments_epsilon
    from core.accounting.pate import pate_moments_alpha

    rng = np.random.default_rng(3)
    counts = histograms(rng, 250, 10, 20)
    orders = np.arange(2.0, 10.0)
    got = dd.lnmax_rdp_data_dependent(counts, gamma=0.05, orders=orders)
    ref = pate_moments_alpha(counts, 0.05, np.arange(1, 9)) / np.arange(1, 9)
    assert close(got, ref)
    # same ε as the moments accountant: min_l (Σα(l) + log 1/δ)/l
    total = got.sum(axis=0) * (orders - 1)
    eps = np.min((total + math.log(1e5)) / (orders - 1))
    assert eps == pytest.approx(pate_moments_epsilon(counts, gamma=0.05, delta=1e-5), rel=1e-12)
    frac = dd.lnmax_rdp_data_dependent(counts, gamma=0.05, orders=[2.5])
    assert np.allclose(frac, min(2 * 0.05, 2 * 0.05**2 * 2.5))


def test_confident_epsilon_diagnostic():
    rng = np.random.default_rng(4)
    counts = histograms(rng, 250, 10, 30)
    answered = rng.random(counts.shape[0]) < 0.5
    orders = ORDERS
    curve = ref_threshold(counts, 200, 150, orders).sum(0) + ref_gnmax(counts[answered], 40, orders).sum(0)
    want, _ = compute_epsilon(orders, curve, 1e-5)
    got = dd.confident_gnmax_epsilon_data_dependent(counts, threshold=200, sigma1=150, sigma2=40, delta=1e-5,
                                                    orders=orders, answered=answered)
    assert got == pytest.approx(want, rel=1e-9)
    indep = orders * counts.shape[0] / (2 * 150**2) + orders * answered.sum() / 40**2
    assert got <= compute_epsilon(orders, indep, 1e-5)[0] + 1e-12
    with pytest.raises(ParameterError):
        dd.confident_gnmax_epsilon_data_dependent(counts, threshold=200, sigma1=150, sigma2=40, delta=1e-5,
                                                  answered=answered[:3])


def test_bad_parameters():
    with pytest.raises(ParameterError):
        dd.gnmax_rdp_data_dependent([[3, 1]], sigma=0.0)
    with pytest.raises(ParameterError):
        dd.gnmax_rdp_data_dependent([[3, 1]], sigma=1.0, orders=[1.0])
    with pytest.raises(ParameterError):
        ss.smooth_sensitivity_profile([[3, 1]], threshold=2, sigma1=1, sigma2=1, order=20, beta=0.01)


# ----------------------------------------------------------------------------- smooth sensitivity

def all_histograms(k, n_classes):
    return [h for h in itertools.product(range(k + 1), repeat=n_classes) if sum(h) == k]


def neighbours(h):
    out = set()
    for a, b in itertools.permutations(range(len(h)), 2):
        if h[a] > 0:
            g = list(h)
            g[a] -= 1
            g[b] += 1
            out.add(tuple(g))
    return out


def distances(h0, k):
    dist = {tuple(h0): 0}
    frontier = [tuple(h0)]
    d = 0
    while frontier:
        d += 1
        nxt = []
        for h in frontier:
            for g in neighbours(h):
                if g not in dist:
                    dist[g] = d
                    nxt.append(g)
        frontier = nxt
    return dist


class RefAnalysis:
    """Plain-float re-derivation of q0, q1, f, bu/bl and Algorithm 3 (bisection for q0)."""

    def __init__(self, sigma, n_classes, lam):
        self.s, self.K, self.lam = sigma, n_classes, lam
        self.ind = lam / sigma**2
        hi = min(-(1 + 1 / sigma) ** 2, -((lam - 0.99) / sigma) ** 2, -1 / sigma**2)

        def raw(x):
            q = math.exp(x)
            mu2 = sigma * math.sqrt(-x)
            mu1 = mu2 + 1
            e1, e2 = mu1 / sigma**2, mu2 / sigma**2
            a = (1 - q) / (1 - (q * math.exp(e2)) ** ((mu2 - 1) / mu2))
            b = math.exp(e1) / q ** (1 / (mu1 - 1))
            return math.log((1 - q) * a ** (lam - 1) + q * b ** (lam - 1)) / (lam - 1)

        if raw(hi) < self.ind:
            self.x0 = hi
        else:
            lo = 2 * hi
            while raw(lo) > self.ind:
                lo *= 1.5
            for _ in range(200):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if raw(mid) <= self.ind else (lo, mid)
            self.x0 = lo
        self.x1 = self.log_shift(self.x0, -1)
        self.plateau = self.ls_raw(self.x1)

    def f(self, x):
        x = min(x, math.log(1 - 1 / self.K))
        if x == -math.inf:
            return 0.0
        return ref_theorem6(math.exp(x), self.s, self.lam) if x <= self.x0 else self.ind

    def log_shift(self, x, sign):
        from scipy.special import log_ndtr
        z = ndtri(math.exp(x) / (self.K - 1))
        return min(math.log(self.K - 1) + float(log_ndtr(z + sign * math.sqrt(2) / self.s)), math.log(1 - 1 / self.K))

    def ls_raw(self, x):
        return max(self.f(self.log_shift(x, 1)) - self.f(x), self.f(x) - self.f(self.log_shift(x, -1)))

    def ls(self, x):
        return self.ls_raw(self.x1 if self.x1 <= x <= self.x0 else x)


def logq_of(h, sigma):
    q = ref_q_gnmax(h, sigma)
    return math.log(q) if q > 0 else -math.inf


def thr_term(v, t, s1, lam):
    return ref_theorem6(ref_q_threshold([v], t, s1), math.sqrt(2) * s1, lam)


CASES = [  # (k, K, sigma2, order, threshold, sigma1)
    (6, 2, 3.0, 2.0, 4.0, 1.0),
    (8, 2, 3.0, 3.0, 6.0, 1.5),
    (7, 3, 3.0, 2.0, 5.0, 1.0),
    (6, 3, 4.0, 4.0, 4.5, 0.7),
    (8, 3, 5.0, 5.0, 7.0, 2.0),
    # larger k / σ: histograms in all three regimes (q̃ < q1, plateau, q̃ > q0)
    (20, 2, 3.0, 2.0, 14.0, 2.0),
    (24, 2, 4.0, 4.0, 18.0, 3.0),
    (15, 3, 3.0, 3.0, 10.0, 2.0),
    (14, 3, 2.5, 2.0, 9.0, 1.5),
]


def test_cases_cover_every_regime():
    seen = set()
    for k, K, s2, lam, _, _ in CASES:
        a = gs.gnmax_sensitivity(sigma=s2, n_classes=K, order=lam)
        for h in all_histograms(k, K):
            x = logq_of(h, s2)
            seen.add("below" if x < a.logq1 else "above" if x > a.logq0 else "plateau")
    assert seen == {"below", "plateau", "above"}


@pytest.mark.parametrize("k,K,s2,lam,t,s1", CASES)
def test_analysis_constants(k, K, s2, lam, t, s1):
    a = gs.gnmax_sensitivity(sigma=s2, n_classes=K, order=lam)
    r = RefAnalysis(s2, K, lam)
    assert a.logq0 == pytest.approx(r.x0, rel=1e-8)
    assert a.logq1 == pytest.approx(r.x1, rel=1e-8)
    assert a.plateau == pytest.approx(r.plateau, rel=1e-7)


@pytest.mark.parametrize("k,K,s2,lam,t,s1", CASES)
def test_local_sensitivity_bound_is_sound(k, K, s2, lam, t, s1):
    """Algorithm 3's bound ≥ the exact local sensitivity, found by enumerating neighbours."""
    a = gs.gnmax_sensitivity(sigma=s2, n_classes=K, order=lam)
    hs = all_histograms(k, K)
    counts = np.array(hs)
    thr, gn = ss.certified_rdp_terms(counts, threshold=t, sigma1=s1, sigma2=s2, order=lam)
    term = {h: (thr[i], gn[i]) for i, h in enumerate(hs)}
    ls_thr_rows, ls_gn_rows = ss.local_sensitivity_profile(counts, threshold=t, sigma1=s1, sigma2=s2, order=lam, d_max=0)
    for i, h in enumerate(hs):
        exact_gn = max(abs(term[g][1] - term[h][1]) for g in neighbours(h))
        exact_thr = max(abs(term[g][0] - term[h][0]) for g in neighbours(h))
        bound_gn = float(a.local_sensitivity(np.array(logq_of(h, s2))))
        assert exact_gn <= bound_gn + 1e-12
        assert exact_thr <= ls_thr_rows[i, 0] + 1e-12
        assert ls_gn_rows[i, 0] == pytest.approx(bound_gn, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("k,K,s2,lam,t,s1", CASES)
def test_ls_at_distance_matches_brute_force(k, K, s2, lam, t, s1):
    """A_i(d) against a brute-force enumeration of every histogram within d moves."""
    r = RefAnalysis(s2, K, lam)
    hs = all_histograms(k, K)
    counts = np.array(hs)
    ls_thr, ls_gn = ss.local_sensitivity_profile(counts, threshold=t, sigma1=s1, sigma2=s2, order=lam, d_max=k + 2)
    vmin = -(-k // K)
    thr_vals = {v: thr_term(v, t, s1, lam) for v in range(k + 1)}

    def thr_ls(v):  # |ρ(v±1) − ρ(v)| over feasible v ± 1
        return max([abs(thr_vals[w] - thr_vals[v]) for w in (v - 1, v + 1) if vmin <= w <= k] + [0.0])

    for i, h in enumerate(hs):
        dist = distances(h, k)
        for d in range(k + 3):
            ball = [g for g, dg in dist.items() if dg <= d]
            # threshold: the exact maximum over the ball
            assert ls_thr[i, d] == pytest.approx(max(thr_ls(max(g)) for g in ball), rel=1e-12, abs=1e-15)
            # GNMax: the maximum of the (unimodal) bound over the hull of reachable q̃
            xs = [logq_of(g, s2) for g in ball]
            lo, hi = min(xs), max(xs)
            if hi >= r.x1 and lo <= r.x0:
                want = r.plateau
            elif hi < r.x1:
                want = r.ls(hi)
            else:
                want = r.ls(lo)
            pointwise = max(r.ls(x) for x in xs)
            assert ls_gn[i, d] == pytest.approx(want, rel=1e-9, abs=1e-13), (h, d)
            assert ls_gn[i, d] >= pointwise - 1e-12


@pytest.mark.parametrize("k,K,s2,lam,t,s1", CASES)
def test_smooth_sensitivity_matches_brute_force(k, K, s2, lam, t, s1):
    rng = np.random.default_rng(k * 100 + K)
    hs = all_histograms(k, K)
    beta = 0.4 / lam
    for _ in range(5):
        counts = np.array([hs[j] for j in rng.integers(0, len(hs), 4)])
        ls_thr, ls_gn = ss.local_sensitivity_profile(counts, threshold=t, sigma1=s1, sigma2=s2, order=lam, d_max=k)
        want = max(math.exp(-beta * d) * (ls_thr[:, d].sum() + ls_gn[:, d].sum()) for d in range(k + 1))
        got = ss.smooth_sensitivity_profile(counts, threshold=t, sigma1=s1, sigma2=s2, order=lam, beta=beta)
        assert got.smooth == pytest.approx(want, rel=1e-9, abs=1e-15)
        assert ss.confident_gnmax_smooth_sensitivity(counts, threshold=t, sigma1=s1, sigma2=s2, order=lam,
                                                     beta=beta) == got.smooth


def test_smooth_sensitivity_is_beta_smooth():
    """S(D) ≤ e^β S(D') for datasets differing in one teacher (one vote per query)."""
    rng = np.random.default_rng(7)
    k, K, m = 60, 4, 30
    for s2, lam in ((8.0, 4.0), (20.0, 10.0)):
        beta = 0.4 / lam
        for _ in range(10):
            votes = rng.integers(0, K, size=(k, m))  # votes[j, i] = teacher j's class on query i
            votes[:, : m // 2] = np.where(rng.random((k, m // 2)) < 0.9, 0, votes[:, : m // 2])
            other = votes.copy()
            other[rng.integers(k)] = rng.integers(0, K, size=m)
            c1 = np.stack([np.bincount(votes[:, i], minlength=K) for i in range(m)])
            c2 = np.stack([np.bincount(other[:, i], minlength=K) for i in range(m)])
            s_1 = ss.confident_gnmax_smooth_sensitivity(c1, threshold=45, sigma1=10, sigma2=s2, order=lam, beta=beta)
            s_2 = ss.confident_gnmax_smooth_sensitivity(c2, threshold=45, sigma1=10, sigma2=s2, order=lam, beta=beta)
            assert s_1 <= math.exp(beta) * s_2 * (1 + 1e-12) and s_2 <= math.exp(beta) * s_1 * (1 + 1e-12)
            e1 = sum(map(np.sum, ss.certified_rdp_terms(c1, threshold=45, sigma1=10, sigma2=s2, order=lam)))
            e2 = sum(map(np.sum, ss.certified_rdp_terms(c2, threshold=45, sigma1=10, sigma2=s2, order=lam)))
            assert abs(e1 - e2) <= min(s_1, s_2) + 1e-12  # local sensitivity ≤ S


def test_certified_gnmax_term_matches_diagnostic_below_q0():
    rng = np.random.default_rng(8)
    counts = histograms(rng, 250, 10, 200)
    a = gs.gnmax_sensitivity(sigma=40.0, n_classes=10, order=20.0)
    _, gn = ss.certified_rdp_terms(counts, threshold=200, sigma1=150, sigma2=40, order=20)
    diag = dd.gnmax_rdp_data_dependent(counts, sigma=40, orders=[20.0])[:, 0]
    logq = dd.log_q_gnmax(counts, sigma=40)
    assert np.all(gn >= diag - 1e-15)
    below = logq <= a.logq0
    assert below.any() and np.allclose(gn[below], diag[below], rtol=1e-12, atol=0)


def test_conditions_reject_small_sigma():
    assert gs.check_conditions(40.0, 10, 20.0) == (True, True)
    assert gs.check_conditions(2.0, 2, 3.0)[1] is False
    with pytest.raises(ParameterError, match="C6"):
        gs.gnmax_sensitivity(sigma=2.0, n_classes=2, order=3.0)


def test_profile_fields_and_speed_scale():
    rng = np.random.default_rng(9)
    counts = histograms(rng, 250, 10, 500)
    p = ss.smooth_sensitivity_profile(counts, threshold=200, sigma1=150, sigma2=40, order=20, beta=0.02)
    assert p.ls_total.shape == p.ls_gnmax.shape == p.ls_threshold.shape
    disc = np.exp(-0.02 * np.arange(p.ls_total.size)) * p.ls_total
    assert p.smooth == disc.max() and p.argmax_d == int(disc.argmax())
