"""Privacy units in the ledger: each unit's runs compose, the data's total is the largest unit's,
the budget is checked on the units a run reads, and no charge, refusal or total reads a
private value.  Checked against slow plain loops over every unit's own list of runs."""

from __future__ import annotations

import copy
import gc
import itertools
import pickle

import numpy as np
import pytest

from core import accounting
from core import ledger as L
from core.errors import BudgetExhausted, DataError, ParameterError
from core.ledger.classes import UnitClasses
from core.ledger.largest import maximal, signature, upper_bounds, worst_total
from core.ledger.units import canonical_id, unit_keys


def pure(eps, n=1, **kw):
    return L.PureDPEntry.uniform(eps_step=eps, n_steps=n, **kw)


# ----------------------------------------------------------------------------- slow references


def by_unit(runs, units):
    """Each unit's own list of entries (plain loops): ``runs`` = [(entry, ids or None)]."""
    out = {u: [] for u in units}
    for entry, ids in runs:
        for u in units:
            if ids is None or u in set(ids):
                out[u].append(entry)
    return out


def slow_total(runs, units, delta=None):
    """The largest unit's total: every unit's own runs composed, the largest ε and δ (plain loop)."""
    totals = [L.compose_entries(lst, delta=delta) for lst in by_unit(runs, units).values()]
    return max(t.epsilon for t in totals), max(t.delta for t in totals)


# ----------------------------------------------------------------------------- composing per unit


def test_whole_data_runs_reach_every_unit_and_unit_runs_only_theirs():
    led = L.PrivacyLedger()
    led.record(pure(0.5))
    led.record(pure(0.25), units=["a"])
    assert led.total(units=["a"]).epsilon == pytest.approx(0.75)
    assert led.total(units=["never-seen"]).epsilon == pytest.approx(0.5)  # only the whole-data run
    assert led.total().epsilon == pytest.approx(0.75)
    led.record(pure(0.125))  # a later whole-data run reaches units seen and unseen alike
    assert led.total(units=["a"]).epsilon == pytest.approx(0.875)
    assert led.total(units=["b"]).epsilon == pytest.approx(0.625)
    assert led.n_units == 1 and len(led) == 3


def test_the_data_total_is_the_largest_units():
    led = L.PrivacyLedger()
    led.record(pure(0.5), units=["a", "b"])
    led.record(pure(0.25), units=["b", "c"])
    led.record(pure(0.25), units=["c", "c", "c"])  # repeats are one unit
    assert [led.total(units=[u]).epsilon for u in "abc"] == pytest.approx([0.5, 0.75, 0.5])
    assert led.total().epsilon == pytest.approx(0.75)
    assert led.total(units=["a", "c"]).epsilon == pytest.approx(0.5)


def test_disjoint_folds_compose_in_parallel():
    ids = np.arange(300)
    led = L.PrivacyLedger()
    e = L.gnmax_entry(sigma=40.0, m=100, delta=1e-5)
    for fold in range(5):
        led.charge(e, units=ids[ids % 5 == fold])  # each unit in one fold
    one = L.PrivacyLedger(entries=[e]).total()
    assert led.total().epsilon == pytest.approx(one.epsilon, rel=1e-12)
    for fold in range(5):
        led.charge(e, units=ids[ids % 5 != fold])  # cross-validation: each unit in 4 of 5 training sets
    five = L.PrivacyLedger(entries=[e] * 5).total()
    assert led.total().epsilon == pytest.approx(five.epsilon, rel=1e-12)
    assert led.total().epsilon < L.PrivacyLedger(entries=[e] * 10).total().epsilon


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_subsets_match_every_units_own_composition(seed):
    rng = np.random.default_rng(seed)
    units = [f"u{i}" for i in range(30)]
    maps = [pure(0.1, 5, delta_composition=1e-6), pure(0.3), L.gnmax_entry(sigma=30.0, m=50, delta=1e-5),
            L.ApproxDPEntry(epsilon=0.2, delta=1e-7), L.gnmax_entry(sigma=60.0, m=50, delta=1e-6)]
    runs = []
    led = L.PrivacyLedger()
    for _ in range(12):
        e = maps[rng.integers(len(maps))]
        ids = None if rng.random() < 0.15 else [u for u in units if rng.random() < 0.5]
        runs.append((e, ids))
        led.record(e, units=ids)
    for u, lst in by_unit(runs, units).items():  # each unit alone: its own runs, composed
        t = led.total(units=[u])
        assert (t.epsilon, t.delta) == pytest.approx(
            max(((x.epsilon, x.delta) for x in [L.compose_entries(lst)]), default=(0, 0)), rel=1e-9)
    for delta in (None, 1e-3):
        t = led.total(delta=delta)
        assert (t.epsilon, t.delta) == pytest.approx(slow_total(runs, units, delta), rel=1e-9)


def test_laplace_steps_are_never_counted_as_generic_steps_of_the_same_size():
    """LNMax's Laplace coordinates compose by their own loss distribution: a unit with many
    generic steps of size γ and one with as many Laplace steps of size γ have equal step counts
    but different totals; the data's total is the larger (the generic one), as a plain loop says."""
    lap = pure(0.05, 40, delta_composition=1e-6, laplace=True)
    gen = pure(0.05, 40, delta_composition=1e-6)
    runs = [(lap, ["a"]), (lap, ["a"]), (gen, ["b"]), (gen, ["b"]), (lap, ["c"]), (gen, ["c"])]
    led = L.PrivacyLedger()
    for e, ids in runs:
        led.record(e, units=ids)
    alone = {u: L.compose_entries([e for e, ids in runs if u in ids]).epsilon for u in "abc"}
    assert alone["a"] < alone["c"] < alone["b"]
    assert led.total().epsilon == pytest.approx(slow_total(runs, list("abc"))[0], rel=1e-9)
    assert led.total().epsilon == pytest.approx(alone["b"], rel=1e-9)


def test_with_basic_composition_the_total_is_the_largest_units_sum():
    rng = np.random.default_rng(5)
    units = list(range(40))
    touched = []
    led = L.PrivacyLedger()
    for j in range(6):
        pick = [u for u in units if rng.random() < 0.5]
        touched.append(set(pick))
        led.record(pure(0.1 * (j + 1)), units=pick)
    worst = 0.0
    for u in units:  # slow loop: each unit's own basic composition
        own = sum(0.1 * (j + 1) for j in range(6) if u in touched[j])
        assert led.total(units=[u]).epsilon == pytest.approx(own)
        worst = max(worst, own)
    assert led.total().epsilon == pytest.approx(worst)


def test_a_budget_holds_for_each_unit_and_is_checked_on_the_units_a_run_reads():
    led = L.PrivacyLedger(budget_epsilon=1.0, budget_delta=0.0)
    led.charge(pure(0.6), units=["a", "b"])
    led.charge(pure(0.4), units=["b", "c"])  # b reaches 1.0 exactly: accepted
    with pytest.raises(BudgetExhausted, match="privacy unit this run reads"):
        led.charge(pure(0.1), units=["b"])
    led.charge(pure(0.4), units=["a", "d"])  # other units still have room
    with pytest.raises(BudgetExhausted, match="for this dataset"):
        led.charge(pure(0.1))  # the whole dataset, b among it
    assert len(led) == 3 and led.total().epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetExhausted):
        led.check(pure(0.5), units=["e", "a"])  # a would pass; nothing recorded
    assert len(led) == 3 and led.n_units == 4


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_every_refusal_matches_the_units_own_compositions(seed):
    """Charge after charge on random subsets, the ledger accepts a run exactly when every unit it
    reads keeps its own-δ total or its total at the budget's δ within the budget (plain loop)."""
    from core.ledger.state import Budget, within

    rng = np.random.default_rng(seed)
    units = list(range(12))
    maps = [pure(0.3, 3, delta_composition=1e-5), pure(0.3, 1, delta_composition=1e-3),
            L.gnmax_entry(sigma=25.0, m=60, delta=1e-5), L.ApproxDPEntry(epsilon=0.4, delta=1e-6)]
    budget = Budget(float(rng.uniform(2.0, 4.0)), 1e-3)
    led = L.PrivacyLedger(budget_epsilon=budget.epsilon, budget_delta=budget.delta)
    runs = []
    decisions = []
    for _ in range(25):
        e = maps[rng.integers(len(maps))]
        ids = None if rng.random() < 0.2 else [u for u in units if rng.random() < 0.4] or [0]
        touched = units if ids is None else ids
        own = by_unit(runs + [(e, ids)], units)
        fits = True
        for u in touched:
            ok = within(L.compose_entries(own[u]), budget)
            try:
                ok = ok or within(L.compose_entries(own[u], delta=budget.delta), budget)
            except ParameterError:
                pass
            fits = fits and ok
        try:
            led.charge(e, units=ids)
            accepted = True
        except BudgetExhausted:
            accepted = False
        decisions.append(accepted)
        assert accepted == fits
        if accepted:
            runs.append((e, ids))
    assert True in decisions and False in decisions
    assert len(led) == len(runs)


def test_several_runs_priced_together():
    led = L.PrivacyLedger(budget_epsilon=1.0, budget_delta=0.0)
    led.charge(pure(0.5))
    assert led.total_with([pure(0.25), pure(0.25)]).epsilon == pytest.approx(1.0)
    led.check([pure(0.25), pure(0.25)])
    with pytest.raises(BudgetExhausted, match="these 3 runs"):
        led.check([pure(0.25), pure(0.25), pure(0.25)])
    assert len(led) == 1


def test_ids_are_one_unit_whatever_their_spelling():
    secret = b"k" * 32
    same = [7, 7.0, "7", " 7 ", "007", np.int64(7), np.float32(7)]
    keys = {int(unit_keys([v], secret=secret, dataset="d")[0]) for v in same}
    assert len(keys) == 1
    assert unit_keys(["a", "b", "a"], secret=secret, dataset="d").size == 2
    assert unit_keys([(1, "x"), (1, "x"), (2, "x")], secret=secret, dataset="d").size == 2
    assert not set(unit_keys([7], secret=secret, dataset="d")) & set(unit_keys([7], secret=secret, dataset="e"))
    assert not set(unit_keys([7], secret=secret, dataset="d")) & set(unit_keys([7], secret=b"j" * 32, dataset="d"))
    for missing in ([None], [float("nan")], np.array([1.0, np.nan])):
        with pytest.raises(DataError, match="missing"):
            unit_keys(missing, secret=secret, dataset="d")
    with pytest.raises(ParameterError, match="1-D"):
        unit_keys(np.zeros((2, 2)), secret=secret, dataset="d")
    assert canonical_id("x") != canonical_id("y") and canonical_id(1.5) == canonical_id("1.5")


# ----------------------------------------------------------------------------- nothing private decides


def test_changing_one_private_value_never_changes_a_refusal_or_a_total():
    """The ledger reads the runs' public maps and the declared IDs, never a row's values."""
    from sklearn.linear_model import LogisticRegression

    from core.data import halfspaces
    from core.pipeline import PrivateEnsembleClassifier

    X, y = halfspaces(400, 3, rng=4)
    ids = np.repeat(np.arange(200), 2)  # two rows per person

    def history(X, y):
        led = L.PrivacyLedger(budget_epsilon=1.7, budget_delta=1e-4)  # room for 3 runs at ε 1 (1.56 at δ 1e-4)
        clf = PrivateEnsembleClassifier(LogisticRegression(), k=10, mechanism="gnmax", epsilon=1.0, delta=1e-5, max_queries=50,
                                        rng=0, ledger=led)
        out = []
        for rows in (slice(0, 400), slice(0, 200), slice(100, 400), slice(0, 400), slice(0, 400)):
            try:
                clf.fit(X[rows], y[rows])
                out.append(("ok", len(led), led.total().epsilon, led.total().delta))
            except BudgetExhausted as exc:
                out.append(("refused", len(led), str(exc)))
        return out

    base = history(X, y)
    assert [h[0] for h in base] == ["ok", "ok", "ok", "refused", "refused"]
    for i, j in ((0, 0), (37, 2), (399, 1)):
        X2 = X.copy()
        X2[i, j] = X2[i, j] + 1e3
        y2 = y.copy()
        y2[i] = 1 - y2[i]
        assert history(X2, y) == base and history(X, y2) == base
        X3 = X.copy()
        X3[i] = X3[(i + 1) % 400]  # a duplicate of another row: still charged in full
        assert history(X3, y) == base
    # with person IDs: the totals and refusals follow the IDs, not the values
    def by_person(X, y):
        led = L.PrivacyLedger(budget_epsilon=2.5, budget_delta=1e-4)
        e = L.gnmax_entry(sigma=20.0, m=50, delta=1e-5)
        out = []
        for rows in (ids < 100, ids >= 50, ids < 150, ids >= 0):
            try:
                led.charge(e, units=ids[rows])
                out.append(led.total().epsilon)
            except BudgetExhausted as exc:
                out.append(str(exc))
        return out

    assert by_person(X, y) == by_person(X + 1.0, 1 - y)


# ----------------------------------------------------------------------------- the classes


def test_classes_split_on_a_run_and_merge_equal_vectors():
    c = UnitClasses.empty()
    keys = lambda *xs: np.array(sorted(xs), dtype=np.uint64)  # noqa: E731
    c = c.after_run(0, keys(1, 2, 3))
    assert c.n_classes == 2 and c.n_units == 3  # the zero class and {1, 2, 3}
    c = c.after_run(0, keys(3, 4))  # 4 is new: from the zero class to one run, with 1 and 2
    assert c.vectors[:, 0].tolist() == [0, 1, 2] and c.n_units == 4
    assert [int(c.vectors[c.class_of[i], 0]) for i in range(4)] == [1, 1, 2, 1]
    c = c.after_run(1, keys(1))
    c = c.after_run(1, keys(2))  # 1 and 2 have equal vectors again: one class
    cls = {int(k): int(c.class_of[i]) for i, k in enumerate(c.keys)}
    assert cls[1] == cls[2] != cls[4]
    assert c.vectors[0].tolist() == [0, 0]  # the zero class stays first


@pytest.mark.parametrize("columns", [1, 2, 3])
def test_maximal_keeps_one_of_each_row_not_beaten_by_another(columns):
    rng = np.random.default_rng(columns)
    V = rng.integers(0, 4, size=(80, columns)).astype(float)
    keep = maximal(V)
    kept_rows = {tuple(V[i]) for i in keep}
    assert len(kept_rows) == len(keep)  # one index per distinct row
    for i, v in enumerate(V):
        beaten = any(np.all(v <= V[j]) and np.any(v < V[j]) for j in range(len(V)))
        assert (tuple(v) in kept_rows) == (not beaten)


def test_the_sums_decide_the_composition_monotonely():
    """A class whose sums are all beaten by another's never composes to more (the reason only
    maximal sums are composed)."""
    kinds = [pure(0.05, 40, delta_composition=1e-6), pure(0.05, 3, delta_composition=1e-4),
             L.gnmax_entry(sigma=30.0, m=100, delta=1e-5), L.gnmax_entry(sigma=50.0, m=100, delta=1e-6),
             L.ApproxDPEntry(epsilon=0.1, delta=1e-7)]
    vectors = np.array(list(itertools.product(range(3), repeat=len(kinds))))
    sig = signature(kinds, vectors, np.zeros(len(kinds), dtype=int))
    eps = np.array([L.compose_counts(kinds, v.tolist(), floor=False).epsilon for v in vectors])
    rng = np.random.default_rng(0)
    for i, j in rng.integers(0, len(vectors), size=(3000, 2)):
        if np.all(sig[i] <= sig[j]):
            assert eps[i] <= eps[j] * (1 + 1e-12), (vectors[i], vectors[j])


def test_upper_bounds_are_never_below_the_exact_compositions():
    kinds = [pure(0.05, 40, delta_composition=1e-6), L.gnmax_entry(sigma=30.0, m=100, delta=1e-5),
             L.RDPEntry.filter(order=8.0, rho_budget=0.5, delta_conversion=1e-6), L.ApproxDPEntry(epsilon=0.1, delta=1e-7),
             pure(0.2, 1, delta_additive=1e-8)]
    vectors = np.array(list(itertools.product(range(3), repeat=len(kinds))))[1:]
    common = np.zeros(len(kinds), dtype=int)
    for delta in (None, 0.01):
        ub_e, ub_d = upper_bounds(kinds, vectors, common, delta=delta)
        for v, be, bd in zip(vectors, ub_e, ub_d):
            t = L.compose_counts(kinds, v.tolist(), delta=delta, floor=False)
            assert t.epsilon <= be and t.delta <= bd
        got = worst_total(kinds, vectors, common, delta=delta)
        full = [L.compose_counts(kinds, v.tolist(), delta=delta) for v in vectors]
        assert got.epsilon == pytest.approx(max(t.epsilon for t in full), rel=1e-12)
        assert got.delta == pytest.approx(max(t.delta for t in full), rel=1e-12)
    one_size = [pure(0.1, 10, delta_composition=1e-6), pure(0.1, 1, delta_composition=1e-5)]
    vectors = np.array(list(itertools.product(range(6), repeat=2)))[1:]
    ub_e, _ = upper_bounds(one_size, vectors, np.zeros(2, dtype=int))
    for v, be in zip(vectors, ub_e):  # randomized response's RDP bound on the optimal composition
        assert L.compose_counts(one_size, v.tolist(), floor=False).epsilon <= be


# ----------------------------------------------------------------------------- one ledger


def test_a_ledger_is_never_copied():
    led = L.PrivacyLedger()
    led.record(pure(0.5), units=["a"])
    assert copy.copy(led) is led and copy.deepcopy(led) is led and copy.deepcopy({"x": led})["x"] is led
    assert pickle.loads(pickle.dumps(led)) is led
    key = led.open_session({"state": 1})
    twin = pickle.loads(pickle.dumps(led))
    assert twin.session(key) is led.session(key)


def test_an_unpickled_in_memory_ledger_without_its_original_is_rebuilt_once():
    led = L.PrivacyLedger(budget_epsilon=2.0, budget_delta=1e-6)
    led.record(pure(0.5), units=["a", "b"])
    key = led.open_session([1, 2, 3])
    blob = pickle.dumps(led)
    ledger_id = led.ledger_id
    del led
    gc.collect()
    first = pickle.loads(blob)
    second = pickle.loads(blob)
    assert first is second and first.ledger_id == ledger_id
    assert first.total(units=["a"]).epsilon == pytest.approx(0.5, rel=1e-4) and first.session(key) == [1, 2, 3]
    assert first.budget == L.Budget(2.0, 1e-6)


def test_gaussian_entries_compose_exactly_and_check_their_curve():
    e = L.planned_entry("gnmax", sigma=40.0, delta=1e-5, m=100)
    assert e.gaussian_mu_sq == pytest.approx(200 / 1600)
    two = L.PrivacyLedger(entries=[e, e]).total(delta=1e-5)
    assert two.epsilon == pytest.approx(accounting.gaussian_epsilon(2 * 200 / 1600, delta=1e-5), rel=1e-9)
    assert "gaussian" in two.method
    with pytest.raises(Exception, match="gaussian_mu_sq is for a Gaussian run only"):
        L.RDPEntry(orders=(2.0, 3.0), rho=(1.0, 1.0), delta_conversion=1e-5, gaussian_mu_sq=1.0)
    mixed = L.PrivacyLedger(entries=[e, L.RDPEntry(orders=tuple(accounting.ORDERS), rho=tuple(accounting.ORDERS * 0.01),
                                                   delta_conversion=1e-5)]).total()
    assert "rdp:rdp" in mixed.method  # a non-Gaussian RDP run: composed by RDP
    back = L.entry_from_dict(e.to_dict())
    assert back.gaussian_mu_sq == e.gaussian_mu_sq


def test_a_part_charges_its_units_and_shows_the_datasets_total(tmp_path):
    """``ledger.part(ids)``: every charge, check and planned total reads the part's units;
    the total, budget and runs are the dataset's; a pickled part is its ledger (no IDs)."""
    led = L.PrivacyLedger("panel", store=tmp_path / "l.sqlite", budget_epsilon=2.5, budget_delta=0.0)
    train, held = [f"p{i}" for i in range(80)], [f"p{i}" for i in range(80, 100)]
    led.charge(pure(1.0), units=train + held)  # a run on every person
    part = led.part(np.repeat(train, 3))  # three rows per person
    assert part.check(pure(1.0)).epsilon == pytest.approx(2.0)
    assert part.total_with(pure(1.0)).epsilon == pytest.approx(2.0)
    part.charge(pure(1.0))
    assert len(part) == len(led) == 2 and part.budget == led.budget and part.entries == led.entries
    assert led.total(units=held).epsilon == pytest.approx(1.0)  # the held-out persons were not read
    assert part.total().epsilon == led.total().epsilon == pytest.approx(2.0)
    with pytest.raises(BudgetExhausted, match="for a privacy unit this run reads"):
        part.charge(pure(1.0))
    led.charge(pure(1.0), units=held)  # the held-out persons still have room
    assert pickle.loads(pickle.dumps(part)) is led
    assert "p1" not in repr(part)
    with pytest.raises(ParameterError):
        led.part(None)
