"""Tests of the ledger's composition (core.ledger.compose) against hand computations, the budget,
thread safety, and the privacy maps of the library's mechanisms (core.ledger.maps)."""

from __future__ import annotations

import math
import threading
from typing import ClassVar

import numpy as np
import pytest

from core import accounting
from core import mechanisms as agg
from core import ledger as L
from core.errors import BudgetExhausted, ParameterError

# ---------------------------------------------------------------------------
# Hand-written references (slow, plain loops)
# ---------------------------------------------------------------------------

def _rr_delta(eps_list_counts, eps):
    """δ(ε) of the adaptive composition of pure steps, by enumerating the product of
    randomized responses: E[(1 − e^(ε − L))₊], L = Σ_j e_j (n_j − 2 i_j),
    i_j ~ Bin(n_j, 1/(1 + e^{e_j})).  Plain loops, math.comb."""
    supports = []
    for e, n in eps_list_counts:
        q = 1.0 / (1.0 + math.exp(e))
        supports.append([(e * (n - 2 * i), math.comb(n, i) * (1 - q) ** (n - i) * q**i) for i in range(n + 1)])
    # combine (plain nested loop over the two or one supports)
    law = {0.0: 1.0}
    for sup in supports:
        new = {}
        for l1, p1 in law.items():
            for l2, p2 in sup:
                key = round(l1 + l2, 12)
                new[key] = new.get(key, 0.0) + p1 * p2
        law = new
    total = 0.0
    for loss, p in law.items():
        if loss > eps:
            total += p * (1.0 - math.exp(eps - loss))
    return total


def _rr_epsilon(eps_list_counts, delta):
    lo, hi = 0.0, sum(e * n for e, n in eps_list_counts)
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if _rr_delta(eps_list_counts, mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def _rdp_to_dp(alpha, rho, delta):
    """Balle et al. 2020 conversion, at one order, by hand."""
    return rho + math.log((alpha - 1) / alpha) - (math.log(delta) + math.log(alpha)) / (alpha - 1)


def _counts(seed, m=60, k=250, c=3):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(c) * 0.3, size=m)
    return np.array([rng.multinomial(k, pp) for pp in p])


# ---------------------------------------------------------------------------
# Pure composition
# ---------------------------------------------------------------------------

def test_two_equal_pure_runs_match_kov_sum():
    eps0, T, slack = 0.08, 25, 1e-6
    led = L.PrivacyLedger("fp")
    led.record(L.PureDPEntry.uniform(eps_step=eps0, n_steps=T, delta_composition=slack, delta_additive=2e-7))
    led.record(L.PureDPEntry.uniform(eps_step=eps0, n_steps=T, delta_composition=slack, delta_additive=3e-7))
    tot = led.total()
    ref = _rr_epsilon([(eps0, 2 * T)], 2 * slack)  # slack: the sum of the runs' slacks
    assert tot.groups[0].method == "kov-exact"
    assert tot.epsilon == pytest.approx(ref, rel=1e-9)
    assert tot.epsilon >= ref - 1e-12  # the library returns the upper end of its bracket
    assert tot.delta == pytest.approx(2 * slack + 5e-7, rel=1e-12)
    assert tot.epsilon < 2 * T * eps0  # better than basic


def test_two_btt_runs_equal_rounds():
    c = _counts(1)
    r = agg.btt_label(c, epsilon=2.0, delta=1e-5, T=5, calibration="tight", rng=3)
    e = L.entry_from_result(r)
    led = L.PrivacyLedger("fp", entries=[e, e])
    eps0 = 2.0 / r.params["noise_scale"]
    ref = _rr_epsilon([(eps0, 2 * r.params["rounds"])], 2 * r.params["delta_svt"])
    assert led.total().epsilon == pytest.approx(ref, rel=1e-9)
    assert led.total().delta == pytest.approx(2 * r.delta, rel=1e-12)


def test_heterogeneous_pure_runs_pld_vs_exact_enumeration():
    steps = [(0.1, 30), (0.25, 20)]
    led = L.PrivacyLedger("fp")
    led.record(L.PureDPEntry.uniform(eps_step=0.1, n_steps=30, delta_composition=1e-5))
    led.record(L.PureDPEntry.uniform(eps_step=0.25, n_steps=20, delta_composition=1e-5))
    tot = led.total()
    assert tot.groups[0].method == "pld"
    ref = _rr_epsilon(steps, 2e-5)
    assert tot.epsilon == pytest.approx(ref, abs=1e-3)
    assert tot.epsilon >= ref - 1e-9  # pessimistic PLD: an upper bound
    # and against dp-accounting's PLD called directly
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    p = None
    for e, n in steps:
        q = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(e, 0.0), value_discretization_interval=1e-4).self_compose(n)
        p = q if p is None else p.compose(q)
    assert tot.epsilon == pytest.approx(p.get_epsilon_for_delta(2e-5), abs=1e-3)


def test_heterogeneous_steps_in_one_entry_equal_two_entries():
    one = L.PureDPEntry(steps=((0.1, 30), (0.25, 20)), delta_composition=2e-5)
    two = [L.PureDPEntry.uniform(eps_step=0.1, n_steps=30, delta_composition=1e-5),
           L.PureDPEntry.uniform(eps_step=0.25, n_steps=20, delta_composition=1e-5)]
    assert L.compose_entries([one]).epsilon == pytest.approx(L.compose_entries(two).epsilon, rel=1e-12)


def test_basic_wins_without_slack():
    e = L.PureDPEntry.uniform(eps_step=0.5, n_steps=4)
    g = L.compose_entries([e])
    assert g.epsilon == pytest.approx(2.0) and g.delta == 0.0 and g.groups[0].method == "basic"


def test_two_runs_at_different_eps_total_larger_than_either():
    a = L.PureDPEntry.uniform(eps_step=0.02, n_steps=100, delta_composition=1e-6, mechanism="lnmax")
    b = L.PureDPEntry.uniform(eps_step=0.1, n_steps=100, delta_composition=1e-6, mechanism="lnmax")
    led = L.PrivacyLedger("fp", entries=[a, b])
    tot = led.total()
    # Own-δ total: the slacks add (2e-6), and at that slack the 200 steps cost slightly
    # less than b's 100 steps at 1e-6; ε is then floored at b's own ε.  So the total is
    # above each run in δ and at least each run in ε ...
    for e in (a, b):
        assert tot.epsilon >= L.compose_entries([e]).epsilon
        assert tot.delta > L.compose_entries([e]).delta
    assert tot.epsilon > L.compose_entries([a]).epsilon
    # ... and strictly above each in ε with runs at equal ε-scale, or at one fixed δ:
    c = L.PureDPEntry.uniform(eps_step=0.05, n_steps=100, delta_composition=1e-6)
    d = L.PureDPEntry.uniform(eps_step=0.08, n_steps=100, delta_composition=1e-6)
    both = L.compose_entries([c, d])
    assert both.epsilon > max(L.compose_entries([c]).epsilon, L.compose_entries([d]).epsilon)
    for e in (a, b):
        assert led.total(delta=1e-5).epsilon > L.compose_entries([e], delta=1e-5).epsilon


def test_an_entrys_own_epsilon_is_remembered_on_it_and_nothing_else_changes():
    """The floor of a total reads each entry's own ε once: charging n runs costs n compositions, not n²."""
    import dataclasses

    from core.ledger import compose as ledger_compose

    big = L.PureDPEntry.uniform(eps_step=0.05, n_steps=2000, delta_composition=1e-9)
    small = L.PureDPEntry.uniform(eps_step=0.05, n_steps=1, delta_composition=1e-3)
    fresh = L.PureDPEntry.uniform(eps_step=0.05, n_steps=2000, delta_composition=1e-9)
    first = L.compose_entries([big, small])
    assert big.__dict__["_alone_epsilon"] == L.compose_entries([fresh]).epsilon  # the plain computation
    assert big == fresh and repr(big) == repr(fresh)  # not a field
    calls = []
    real = ledger_compose.compose_entries
    ledger_compose.compose_entries = lambda entries, **kw: calls.append(len(list(entries))) or real(entries, **kw)
    try:
        again = real([big, small])
    finally:
        ledger_compose.compose_entries = real
    assert calls == [] and (again.epsilon, again.delta) == (first.epsilon, first.delta)
    changed = dataclasses.replace(big, delta_composition=1e-3)
    assert "_alone_epsilon" not in changed.__dict__  # another entry: computed afresh
    assert L.compose_entries([changed, small]).epsilon == pytest.approx(
        max(L.compose_entries([changed]).epsilon, real([changed, small]).epsilon))


def test_total_never_below_a_run_it_contains():
    big = L.PureDPEntry.uniform(eps_step=0.05, n_steps=2000, delta_composition=1e-9)
    small = L.PureDPEntry.uniform(eps_step=0.05, n_steps=1, delta_composition=1e-3)
    tot = L.compose_entries([big, small])
    assert tot.epsilon >= L.compose_entries([big]).epsilon
    assert tot.delta >= L.compose_entries([big]).delta


def test_total_at_given_delta_splits_equally():
    p = L.PureDPEntry.uniform(eps_step=0.1, n_steps=50, delta_composition=1e-6, delta_additive=1e-6)
    r = L.RDPEntry(orders=(4.0, 8.0), rho=(0.2, 0.4), delta_conversion=1e-6)
    a = L.ApproxDPEntry(epsilon=0.3, delta=2e-6)
    tot = L.compose_entries([p, r, a], delta=1e-4)
    share = (1e-4 - 1e-6 - 2e-6) / 2
    assert tot.groups[0].slack == pytest.approx(share)
    assert tot.groups[1].slack == pytest.approx(share)
    assert tot.delta == pytest.approx(1e-4, rel=1e-12)
    with pytest.raises(ParameterError, match="no slack"):
        L.compose_entries([p, a], delta=2e-6)


# ---------------------------------------------------------------------------
# RDP
# ---------------------------------------------------------------------------

def test_rdp_curves_added_at_one_order_match_hand_formula():
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    alpha = 8.0
    e1 = L.RDPEntry(orders=(alpha,), rho=(0.5,), delta_conversion=1e-6)
    e2 = L.RDPEntry(orders=(alpha,), rho=(0.7,), delta_conversion=1e-6)
    tot = L.PrivacyLedger("fp", entries=[e1, e2]).total()
    hand = _rdp_to_dp(alpha, 1.2, 2e-6)
    assert tot.epsilon == pytest.approx(hand, rel=1e-12)
    assert rdp.compute_epsilon([alpha], [1.2], 2e-6)[0] == pytest.approx(hand, rel=1e-12)
    assert tot.delta == pytest.approx(2e-6)
    assert tot.groups[0].order == alpha


def test_gaussian_curves_match_rdp_accountant():
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = np.array(rdp.DEFAULT_RDP_ORDERS, dtype=float)
    orders = orders[orders > 1]
    sig1, sig2 = 40.0, 25.0  # GNMax, replace-one: ρ(α) = α/σ² per answer
    e1 = L.RDPEntry(orders=tuple(orders), rho=tuple(100 * orders / sig1**2), delta_conversion=5e-6, mechanism="gnmax")
    e2 = L.RDPEntry(orders=tuple(orders), rho=tuple(30 * orders / sig2**2), delta_conversion=5e-6, mechanism="gnmax")
    acc = rdp.RdpAccountant(orders)
    # GaussianDpEvent(z) costs α/(2z²): z = σ/√2 gives α/σ²
    acc.compose(dp_event.GaussianDpEvent(sig1 / math.sqrt(2)), 100)
    acc.compose(dp_event.GaussianDpEvent(sig2 / math.sqrt(2)), 30)
    assert L.compose_entries([e1, e2]).epsilon == pytest.approx(acc.get_epsilon(1e-5), rel=1e-9)


def test_renyi_filter_entry_monotone_fill():
    sig = 30.0
    orders = (2.0, 4.0, 8.0, 16.0, 32.0)
    g = L.RDPEntry(orders=orders, rho=tuple(50 * a / sig**2 for a in orders), delta_conversion=1e-6)
    f = L.RDPEntry.filter(order=8.0, rho_budget=1.5, delta_conversion=1e-6)
    assert f.rho == (1.5,)
    tot = L.compose_entries([g, f])
    # by hand: ρ* at orders ≤ 8, inf above
    hand = min(_rdp_to_dp(a, 50 * a / sig**2 + 1.5, 2e-6) for a in (2.0, 4.0, 8.0))
    assert tot.epsilon == pytest.approx(hand, rel=1e-12)
    assert math.isinf(f.curve([16.0])[0]) and f.curve([3.0])[0] == 1.5


# ---------------------------------------------------------------------------
# Mixed
# ---------------------------------------------------------------------------

def test_mixed_kinds_basic_composition_of_groups():
    p = L.PureDPEntry.uniform(eps_step=0.1, n_steps=40, delta_composition=1e-6, delta_additive=1e-7)
    r = L.RDPEntry(orders=(6.0,), rho=(0.4,), delta_conversion=1e-6)
    a = L.ApproxDPEntry(epsilon=0.75, delta=3e-7)
    tot = L.compose_entries([p, r, a])
    eps_p = _rr_epsilon([(0.1, 40)], 1e-6)
    eps_r = _rdp_to_dp(6.0, 0.4, 1e-6)
    assert tot.epsilon == pytest.approx(eps_p + eps_r + 0.75, rel=1e-9)
    assert tot.delta == pytest.approx(1e-6 + 1e-7 + 1e-6 + 3e-7, rel=1e-12)
    assert {g.kind for g in tot.groups} == {"pure", "rdp", "approx"}
    assert tot.parts["approx_epsilon"] == 0.75
    two = L.compose_entries([a, a])
    assert (two.epsilon, two.delta) == pytest.approx((1.5, 6e-7))


# ---------------------------------------------------------------------------
# Budget
# ---------------------------------------------------------------------------

def test_budget_refusal_before_run_and_nothing_recorded():
    led = L.PrivacyLedger("fp", budget_epsilon=3.0, budget_delta=1e-5)
    e = L.PureDPEntry.uniform(eps_step=0.1, n_steps=20, delta_composition=2e-6, mechanism="lnmax")
    led.charge(e)
    led.charge(e)
    n = len(led)
    big = L.PureDPEntry.uniform(eps_step=0.2, n_steps=20, delta_composition=2e-6, mechanism="btt")
    with pytest.raises(BudgetExhausted) as info:
        led.charge(big)
    msg = str(info.value)
    assert "budget" in msg and "not started" in msg and "btt" in msg and "ε = 3" in msg
    assert len(led) == n
    with pytest.raises(BudgetExhausted):
        led.check(big)
    assert len(led) == n


def test_run_spending_exactly_the_rest_is_accepted():
    e = L.ApproxDPEntry(epsilon=1.0, delta=1e-6)
    led = L.PrivacyLedger("fp", budget_epsilon=2.0, budget_delta=2e-6)
    led.charge(e)
    led.charge(e)
    with pytest.raises(BudgetExhausted):
        led.charge(L.ApproxDPEntry(epsilon=1e-3, delta=0.0))


def test_budget_uses_budget_delta_when_tighter():
    # own-δ total is 2 runs at slack 2e-7 (large ε); at the budget's δ the slack is larger
    e = L.PureDPEntry.uniform(eps_step=0.05, n_steps=400, delta_composition=1e-7)
    led = L.PrivacyLedger("fp", entries=[e])
    own = L.compose_entries([e, e]).epsilon
    at_budget = L.compose_entries([e, e], delta=1e-3).epsilon
    assert at_budget < own
    led.set_budget(epsilon=0.5 * (own + at_budget), delta=1e-3)
    assert led.check(e).epsilon == pytest.approx(at_budget)


def test_a_pure_run_is_quoted_at_its_asked_epsilon_and_a_real_saving_still_counts():
    # One pure run at 0.9 is (0.8999986, 1e-6)-DP (the optimal trade, [KOV15]): valid, but quoted
    # as the run's own 0.9, since the saving is below the fourth significant digit shown.
    run = L.PureDPEntry.uniform(eps_step=0.9, n_steps=1, mechanism="lnmax")
    exact = L.compose_entries([run], delta=1e-6).epsilon
    assert exact == pytest.approx(0.9 + math.log(1 - 1e-6 * (1 + math.exp(-0.9))), rel=1e-9) and exact < 0.9
    for delta in (1e-6, 1e-5):
        led = L.PrivacyLedger("fp", budget_epsilon=3.0, budget_delta=delta)
        led.charge(run)
        assert (led.total().epsilon, led.total().delta) == (0.9, delta)
        assert led.total_with(run).epsilon == 1.8  # two: still their plain sum
    # Many runs: composing at the budget's δ saves much; quoted at most one unit of the 4th digit above it.
    many = L.PureDPEntry.uniform(eps_step=0.01, n_steps=1000)
    led = L.PrivacyLedger("fp", entries=[many], budget_epsilon=20.0, budget_delta=1e-5)
    exact = L.compose_entries([many], delta=1e-5).epsilon
    assert exact < 2.0 and exact <= led.total().epsilon <= exact + 1e-3 * 10 ** math.floor(math.log10(exact))
    assert f"{led.total().epsilon:.4g}" == f"{led.total().epsilon:.15g}"  # on the grid shown
    # A total the budget check accepts is never quoted above the budget by the rounding up.
    led = L.PrivacyLedger("fp", entries=[many], budget_epsilon=exact * (1 + 1e-10), budget_delta=1e-5)
    assert exact <= led.total().epsilon <= led.budget.epsilon


def test_the_quote_never_falls_after_a_run():
    rng = np.random.default_rng(3)
    led = L.PrivacyLedger("fp", budget_epsilon=1e9, budget_delta=1e-5)
    last = 0.0
    for eps in rng.choice([1e-6, 1e-3, 0.2, 0.9], size=16):
        led.charge(L.PureDPEntry.uniform(eps_step=float(eps), n_steps=int(rng.integers(1, 4))))
        now = led.total().epsilon
        assert now >= last
        last = now


def test_a_refusal_names_the_mechanism_in_brackets():
    for name, said in (("btt", "this run (btt) would cost"), ("a", "this run (a) would cost"), ("", "this run would cost")):
        led = L.PrivacyLedger("fp", budget_epsilon=1.0, budget_delta=0.0)
        run = L.PureDPEntry.uniform(eps_step=0.6, n_steps=1, mechanism=name)
        led.charge(run)
        with pytest.raises(BudgetExhausted) as info:
            led.charge(run)
        assert said in str(info.value) and "this a run" not in str(info.value), str(info.value)


# ---------------------------------------------------------------------------
# Identical runs reduce to counts
# ---------------------------------------------------------------------------

def test_compose_counts_equals_the_list_it_stands_for():
    p = L.PureDPEntry(steps=((0.1, 3), (0.2, 4)), delta_composition=1e-6, delta_additive=1e-8, mechanism="btt")
    r = L.RDPEntry.filter(order=8.0, rho_budget=1.0, delta_conversion=1e-6)
    g = L.gnmax_entry(sigma=40.0, m=100, delta=1e-5)
    a = L.ApproxDPEntry(epsilon=0.5, delta=1e-7, mechanism="ptr")
    for counts in ([2, 1, 0, 3], [1, 0, 4, 0], [0, 2, 0, 1], [5, 5, 5, 5]):
        listed = [e for e, c in zip((p, r, g, a), counts) for _ in range(c)]
        for delta in (None, 0.5):
            one, other = L.compose_counts([p, r, g, a], counts, delta=delta), L.compose_entries(listed, delta=delta)
            assert one.epsilon == pytest.approx(other.epsilon, rel=1e-12)
            assert one.delta == pytest.approx(other.delta, rel=1e-12)
            assert one.n_entries == other.n_entries == sum(counts)


def test_map_key_reads_the_map_only():
    from core.ledger.entries import map_key

    a = L.PureDPEntry.uniform(eps_step=0.1, n_steps=5, delta_composition=1e-6, mechanism="btt", description="x",
                              params={"T": 3})
    b = L.PureDPEntry.uniform(eps_step=0.1, n_steps=5, delta_composition=1e-6, mechanism="lnmax", description="y")
    assert map_key(a) == map_key(b)
    assert map_key(a) != map_key(L.PureDPEntry.uniform(eps_step=0.1, n_steps=6, delta_composition=1e-6))
    assert map_key(L.ApproxDPEntry(epsilon=1.0, delta=0.0)) != map_key(L.PureDPEntry.uniform(eps_step=1.0, n_steps=1))


def test_a_run_keeps_no_data_dependent_value():
    r = agg.lnmax_label(_counts(4), gamma=0.05, delta=1e-5, rng=0)
    assert r.epsilon_data_dependent is not None
    text = str(L.entry_from_result(r).to_dict())
    assert "data_dependent" not in text and repr(r.epsilon_data_dependent) not in text


# ---------------------------------------------------------------------------
# Thread safety
# ---------------------------------------------------------------------------

def test_threads_recording_on_one_ledger_lose_nothing():
    led = L.PrivacyLedger("threads")
    e = L.ApproxDPEntry(epsilon=0.01, delta=0.0)
    errors = []

    def work():
        try:
            for _ in range(50):
                led.record(e)
                led.total()
        except Exception as exc:  # noqa: BLE001 - any error in a thread is reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(led) == 400 and led.total().epsilon == pytest.approx(4.0)
    L.forget_ledgers()
    assert len(L.default_ledger()) == 0


def test_concurrent_charges_never_exceed_budget():
    led = L.PrivacyLedger("fp", budget_epsilon=1.0, budget_delta=0.0)
    e = L.ApproxDPEntry(epsilon=0.1, delta=0.0)
    refused = []

    def work():
        for _ in range(5):
            try:
                led.charge(e)
            except BudgetExhausted:
                refused.append(1)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(led) == 10 and len(refused) == 20


# ---------------------------------------------------------------------------
# entry_from_result on real results
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda c: agg.btt_label(c, epsilon=2.0, delta=1e-5, T=5, rng=0),
    lambda c: agg.btt_label(c, epsilon=1.0, delta=1e-6, T=8, calibration="tight", rng=1),
    lambda c: agg.lnmax_label(c, gamma=0.04, delta=1e-5, rng=2),
    lambda c: agg.lnmax_label(c, gamma=accounting.lnmax_gamma_for_epsilon(2.0, n_answers=c.shape[0], delta=1e-5), delta=1e-5, rng=2),
    lambda c: agg.a_stab_label(c[:4], epsilon=0.5, delta=1e-6, rng=3),
], ids=["btt-paper", "btt-tight", "lnmax", "lnmax-calibrated", "a-stab"])
def test_entry_from_result_reproduces_own_guarantee(make):
    r = make(_counts(7))
    e = L.entry_from_result(r)
    assert isinstance(e, L.PureDPEntry) and e.mechanism == r.mechanism
    g = L.PrivacyLedger("fp", entries=[e]).total()
    assert g.epsilon == pytest.approx(r.epsilon, rel=1e-9)
    assert g.delta == pytest.approx(r.delta, rel=1e-9)


def test_entry_from_btt_soft_result():
    rng = np.random.default_rng(5)
    scores = np.clip(rng.beta(0.3, 0.3, size=(40, 1)) + rng.normal(0, 0.05, size=(40, 200)), 0, 1)
    r = agg.btt_soft_label(scores, epsilon=2.0, delta=1e-5, T=4, eta=0.25, rng=0)
    g = L.compose_entries([L.entry_from_result(r)])
    assert L.entry_from_result(r).steps[0][1] == 8  # 2T rounds
    assert g.epsilon == pytest.approx(r.epsilon, rel=1e-9) and g.delta == pytest.approx(r.delta, rel=1e-9)


def test_entry_from_baseline_result_is_at_most_its_own():
    # The baseline reports advanced (or basic) composition; the ledger composes the same
    # m pure ε0-steps optimally at the same slack δ', so its ε can only be smaller.
    for m, eps in ((60, 2.0), (3, 1.0)):
        r = agg.composition_baseline_label(_counts(8, m=m), epsilon=eps, delta=1e-5, rng=0)
        g = L.compose_entries([L.entry_from_result(r)])
        assert g.epsilon <= r.epsilon * (1 + 1e-9)
        assert g.delta == pytest.approx(r.delta, rel=1e-9)
        if r.params["delta_prime"] > 0:
            ref = _rr_epsilon([(r.params["eps0"], m)], r.params["delta_prime"])
            assert g.epsilon == pytest.approx(ref, rel=1e-9)


def test_unknown_mechanism_is_approximate_and_registry_overrides():
    class R:
        mechanism = "ptr_certified"
        epsilon = 1.25
        delta = 2e-6
        params: ClassVar[dict] = {"sigma1": 100.0, "lambda": 20, "epsilon_data_dependent": 0.1}

    e = L.entry_from_result(R())
    assert isinstance(e, L.ApproxDPEntry) and (e.epsilon, e.delta) == (1.25, 2e-6)
    assert "epsilon_data_dependent" not in e.to_dict()["params"]
    L.register_privacy_map("ptr_certified", lambda r: L.RDPEntry.filter(order=20.0, rho_budget=0.5, delta_conversion=1e-6,
                                                                         mechanism=r.mechanism))
    try:
        assert isinstance(L.entry_from_result(R()), L.RDPEntry)
    finally:
        from core.ledger import maps as ledger_maps

        ledger_maps._PRIVACY_MAPS.pop("ptr_certified", None)


# ---------------------------------------------------------------------------
# Repeat and select
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [1.0, 0.5, math.inf])
def test_repeat_and_select_matches_dp_accounting_event(shape):
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    eps0, n = 0.1, 10
    inner = L.PureDPEntry.uniform(eps_step=eps0, n_steps=n, mechanism="lnmax")
    rs = L.repeat_and_select(inner, mean=5.0, shape=shape, delta_conversion=1e-6)
    # the same with dp-accounting's event: a pure ε0 step is at worst binary randomized
    # response, noise parameter p = 2/(1 + e^ε0) (replace-one)
    from dp_accounting.privacy_accountant import NeighboringRelation

    acc = rdp.RdpAccountant(rs.orders, neighboring_relation=NeighboringRelation.REPLACE_ONE)
    rr = dp_event.RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(eps0)), num_buckets=2)
    acc.compose(dp_event.RepeatAndSelectDpEvent(dp_event.SelfComposedDpEvent(rr, n), 5.0, shape))
    assert L.compose_entries([rs]).epsilon == pytest.approx(acc.get_epsilon(1e-6), rel=1e-9)
    # repeating and selecting costs more than one run, and stays finite
    single = L.compose_entries([inner], delta=1e-6).epsilon
    assert single < L.compose_entries([rs]).epsilon < math.inf


def test_repeat_and_select_refuses_additive_delta_and_approx():
    with pytest.raises(ParameterError):
        L.repeat_and_select(L.PureDPEntry.uniform(eps_step=0.1, n_steps=3, delta_additive=1e-7), mean=3)
    with pytest.raises(ParameterError):
        L.repeat_and_select(L.ApproxDPEntry(epsilon=1.0, delta=1e-6), mean=3)
    with pytest.raises(ParameterError):
        L.repeat_and_select(L.PureDPEntry.uniform(eps_step=0.1, n_steps=3), mean=0.5)


def test_pure_dp_rdp_is_randomized_response():
    eps = 0.3
    a = np.array([2.0, 5.0])
    p = math.exp(eps) / (1 + math.exp(eps))
    hand = [math.log(p**x * (1 - p) ** (1 - x) + (1 - p) ** x * p ** (1 - x)) / (x - 1) for x in a]
    assert np.allclose(L.pure_dp_rdp([(eps, 1)], a), hand, rtol=1e-12)
    assert np.all(L.pure_dp_rdp([(eps, 1)], a) <= eps)


# ---------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------

def test_entry_validation():
    with pytest.raises(ParameterError):
        L.PureDPEntry(steps=((-0.1, 3),))
    with pytest.raises(ParameterError):
        L.PureDPEntry(steps=((0.1, 2.5),))
    with pytest.raises(ParameterError):
        L.RDPEntry(orders=(1.0,), rho=(0.1,), delta_conversion=1e-6)
    with pytest.raises(ParameterError):
        L.RDPEntry(orders=(2.0, 3.0), rho=(0.1,), delta_conversion=1e-6)
    with pytest.raises(ParameterError):
        L.RDPEntry(orders=(2.0,), rho=(0.1,), delta_conversion=0.0)
    with pytest.raises(ParameterError):
        L.ApproxDPEntry(epsilon=1.0, delta=2.0)
    with pytest.raises(ParameterError):
        L.PrivacyLedger("fp", budget_epsilon=1.0)
    with pytest.raises(ParameterError):
        L.PrivacyLedger("fp").record("not an entry")
    with pytest.raises(TypeError):
        L.PureDPEntry(((0.1, 3),))  # keyword-only


def test_empty_ledger():
    t = L.PrivacyLedger("fp").total()
    assert (t.epsilon, t.delta, t.n_entries) == (0.0, 0.0, 0)


@pytest.mark.parametrize("mech,kw,run", [
    ("btt", {"epsilon": 2.0, "T": 5, "calibration": "tight"}, lambda c: agg.btt_label(c, epsilon=2.0, delta=1e-5, T=5, calibration="tight", rng=0)),
    ("lnmax", {"gamma": 0.04}, lambda c: agg.lnmax_label(c, gamma=0.04, delta=1e-5, rng=0)),
    ("baseline", {"epsilon": 2.0}, lambda c: agg.composition_baseline_label(c, epsilon=2.0, delta=1e-5, rng=0)),
    ("a-stab", {"epsilon": 0.5}, lambda c: agg.a_stab_label(c, epsilon=0.5, delta=1e-5, rng=0)),
])
def test_planned_entry_equals_entry_from_result(mech, kw, run):
    c = _counts(9, m=30)
    planned = L.planned_entry(mech, delta=1e-5, m=30, **kw)
    after = L.entry_from_result(run(c))
    assert planned.steps == after.steps
    assert (planned.delta_composition, planned.delta_additive) == (after.delta_composition, after.delta_additive)
    with pytest.raises(ParameterError):
        L.planned_entry("gnmax", delta=1e-5, m=3)


def test_a_filter_run_is_charged_what_its_result_claims():
    """Confident-GNMax under a Rényi filter: the entry charged before the run (the pipeline's)
    equals the result's map afterwards, so a report's ledger total is never below the run."""
    from core import pipeline

    settings = {"epsilon": 20.0, "accounting": "filter", "delta": 1e-5}
    planned = pipeline.ledger_entry("confident-gnmax", settings, 30)
    result = pipeline.label(_counts(3, m=30, k=100), "confident-gnmax", settings, rng=0)
    after = L.entry_from_result(result)
    assert planned.orders == after.orders and planned.rho == pytest.approx(after.rho, rel=1e-12)
    assert L.compose_entries([planned]).epsilon == pytest.approx(result.epsilon, rel=1e-9)


def test_compose_delta_is_the_delta_of_the_full_composition():
    kinds = [L.PureDPEntry.uniform(eps_step=0.1, n_steps=30, delta_composition=1e-6, delta_additive=1e-8),
             L.PureDPEntry.uniform(eps_step=2.0, n_steps=1, delta_composition=0.3),  # basic wins here
             L.gnmax_entry(sigma=30.0, m=100, delta=1e-5), L.ApproxDPEntry(epsilon=0.2, delta=1e-7)]
    for counts in ([1, 0, 0, 0], [0, 1, 0, 0], [2, 1, 1, 1], [0, 0, 3, 2], [3, 0, 1, 0]):
        for delta in (None, 0.5):
            assert L.compose_counts(kinds, counts, delta=delta).delta == pytest.approx(
                L.compose.compose_delta(kinds, counts, delta=delta), rel=1e-15, abs=0)
