"""A class on one server: what sessions of one server share, and what each keeps.

Shared (no privacy is at stake: nothing private is read to draw them): the random split
and the teacher partition (:func:`app_pages._session.server_seed`, drawn once per server), and
so the trained teachers and their votes, trained once per key for all sessions even when
they ask at the same moment (:func:`app_pages._cache.train`: the others wait and follow its
progress).  Kept per session: every noise draw and, on teaching data, the ledger (each
person's own lesson); on a real job the ledger is the private data's, whoever looks
(tests/app/test_app_plan_spend.py checks both ledgers with the demo seed on; here they are
checked with it off, as a class uses the app).

The served app is also opened by ten sessions at once through Streamlit's own protocol
(``bench/bench_app_load.py``'s client): every one gets its first result.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from types import SimpleNamespace

import pytest
from streamlit.testing.v1 import AppTest

from conftest import start_app
from test_app import ROOT, go

CFG = {"learner": "stand-in", "params": {}, "k": 3}


@pytest.fixture
def fresh_server(monkeypatch):
    """As a freshly started server: a new server seed, no trained ensemble; sessions without the demo seed."""
    monkeypatch.syspath_prepend(str(ROOT))
    from app_pages import _cache, _session

    _session.server_seed.clear()
    _cache._ensembles.clear()

    return lambda: start_app(demo=None)  # the app's own default (a class's sessions)


def counted_training(monkeypatch):
    """Count the teacher trainings of the app (core.pipeline.train, as app_pages/_cache calls it)."""
    from core import pipeline

    calls = []
    real = pipeline.train

    def train(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "train", train)
    return calls


def test_sessions_of_one_server_share_the_split_and_the_teachers(fresh_server, monkeypatch):
    calls = counted_training(monkeypatch)
    one = fresh_server()  # the default view: trains the default teachers and labels
    assert len(calls) == 1
    two = fresh_server()
    assert two.session_state["_session_seed"] == one.session_state["_session_seed"]
    assert len(calls) == 1  # the second session read the first one's teachers
    assert "Answered" in [m.label for m in two.main.metric]
    from app_pages import _cache

    assert len(_cache._ensembles().items) == 1


def test_teaching_sessions_without_the_demo_seed_keep_their_own_ledgers(fresh_server):
    one, two = go(fresh_server(), "Private labeling"), go(fresh_server(), "Private labeling")
    caption = lambda at: next(c.value.strip("*") for c in at.sidebar.markdown if c.value.startswith("**Your lesson's ledger"))  # noqa: E731
    assert caption(one).endswith("over 1 run.") and caption(two).endswith("over 1 run.")
    one.slider(key="w_privacy_epsilon").set_value(2.0).run()
    two.run()
    assert caption(one).endswith("over 2 runs.")
    assert caption(two).endswith("over 1 run.")  # the other person's look is on their ledger only
    one.sidebar.button(key="new_lesson").click().run()
    notes = [i.value for i in one.sidebar.info]
    assert caption(one).endswith("over 1 run.")  # the page shown again: the new lesson's first run
    assert notes == ["**New lesson**: your ledger started again at zero. Then this page drew what it shows "
                     "again: its run is the first of the new lesson."], notes
    one.run()
    assert not one.sidebar.info  # said once
    assert caption(two).endswith("over 1 run.")


def _fake_train(monkeypatch, behaviour):
    """Replace the app's training of one ensemble by ``behaviour(progress, votes_progress)``."""
    from app_pages import _cache

    monkeypatch.setattr(_cache, "_train", lambda ds, cfg, key, progress, votes: behaviour(progress, votes))
    _cache._ensembles.clear()
    return _cache


def test_sessions_asking_together_train_once_and_follow_its_progress(monkeypatch):
    calls, seen, results = [], [], []
    started = threading.Event()

    def behaviour(progress, votes):
        calls.append(1)
        progress(1, 4)
        started.set()
        time.sleep(0.8)  # the others arrive while it trains
        progress(4, 4)
        return object()

    cache = _fake_train(monkeypatch, behaviour)
    ds = SimpleNamespace(key="a class's data")

    def ask(waiting=None):
        results.append(cache.train(ds, CFG, waiting=waiting))

    first = threading.Thread(target=ask)
    first.start()
    assert started.wait(10)
    others = [threading.Thread(target=ask, args=(lambda f, t: seen.append((f, t)),)) for _ in range(4)]
    for t in others:
        t.start()
    for t in [first, *others]:
        t.join(20)
    assert len(calls) == 1
    assert len(results) == 5 and all(r is results[0] for r in results)
    assert (0.25, "Trained 1 of 4 teachers") in seen  # the waiting sessions' bars follow the training


def test_a_training_that_stopped_is_trained_by_the_next_session(monkeypatch):
    calls = []
    arrived = threading.Event()

    def behaviour(progress, votes):
        calls.append(1)
        if len(calls) == 1:  # the first session moves on (an error, or its user left) mid-training
            arrived.wait(10)
            time.sleep(0.3)
            raise KeyboardInterrupt("stopped")
        return "teachers"

    cache = _fake_train(monkeypatch, behaviour)
    ds = SimpleNamespace(key="data")
    out = {}

    def first():
        try:
            cache.train(ds, CFG)
        except KeyboardInterrupt:
            out["first"] = "stopped"

    t1 = threading.Thread(target=first)
    t1.start()
    time.sleep(0.1)
    t2 = threading.Thread(target=lambda: out.setdefault("second", cache.train(ds, CFG)))
    t2.start()
    arrived.set()
    t1.join(20)
    t2.join(20)
    assert out == {"first": "stopped", "second": "teachers"}
    assert len(calls) == 2
    assert cache.train(ds, CFG) == "teachers" and len(calls) == 2  # then it is cached for everyone


def _bench():
    spec = importlib.util.spec_from_file_location("bench_app_load", ROOT / "bench" / "bench_app_load.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_ten_sessions_opening_a_fresh_server_together_all_get_a_first_result_and_the_apps_menu(app_server):
    from app_pages import _session

    bench = _bench()
    out: list = []
    menus: list = []
    started = time.perf_counter()
    threads = [threading.Thread(target=bench.wire_session, args=(app_server, started, out, menus)) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert len(out) == 10 and all(t is not None for t in out), out
    titles = {title for _, title, _ in _session.app_pages()}
    shown = [menu for menu in menus if any(menu)]  # (a new session's first message names no page)
    assert len(shown) >= 10 and all(set(menu) == titles for menu in shown), shown  # never the folder's files


def test_with_the_demo_seed_a_run_is_drawn_once_for_the_class_and_paid_by_each(fresh_server, monkeypatch):
    from core import pipeline
    from app_pages import _cache

    _cache._demo_runs.clear()
    draws, own = [], []  # runs for the class (no ledger: each session is charged apart) / a session's own
    real = pipeline.label
    monkeypatch.setattr(pipeline, "label",
                        lambda *a, **kw: (own if kw.get("ledger") is not None else draws).append(1) or real(*a, **kw))

    def demo() -> AppTest:
        at = fresh_server()
        own.clear()
        at.sidebar.toggle(key="demo_seed").set_value(True).run()
        at = go(at, "Private labeling")
        assert not own  # with the demo seed on, nothing is drawn per session
        return at

    caption = lambda at: next(c.value.strip("*") for c in at.sidebar.markdown if c.value.startswith("**Your lesson's ledger"))  # noqa: E731
    one = demo()
    shown = [m.value for m in one.main.metric if m.label in ("Answered", "Abstained (⊥)")]
    n_draws = len(draws)
    assert n_draws >= 1
    two = demo()
    assert len(draws) == n_draws  # the same draw, not drawn again
    assert [m.value for m in two.main.metric if m.label in ("Answered", "Abstained (⊥)")] == shown
    assert caption(one) == caption(two)  # each paid for its own look at it
    runs_before = caption(one)
    two.slider(key="w_privacy_epsilon").set_value(2.5).run()
    assert len(draws) == n_draws + 1
    one.slider(key="w_privacy_epsilon").set_value(2.5).run()
    assert len(draws) == n_draws + 1  # the other session's draw at 2.5, read
    assert caption(one) != runs_before and caption(one) == caption(two)


def test_a_lecture_server_starts_every_session_with_the_demo_seed(fresh_server, monkeypatch):
    from app_pages import _session

    monkeypatch.setenv(_session.DEMO_SEED_ENV, "1")
    one, two = fresh_server(), fresh_server()
    assert one.session_state["demo_seed"] and two.session_state["demo_seed"]
    answered = lambda at: next(m.value for m in at.main.metric if m.label == "Answered")  # noqa: E731
    assert answered(one) == answered(two)  # the projector's numbers in every seat
    one.sidebar.toggle(key="demo_seed").set_value(False).run()  # a student may still switch it off
    assert not one.session_state["demo_seed"] and two.session_state["demo_seed"]
    monkeypatch.delenv(_session.DEMO_SEED_ENV)
    assert not fresh_server().session_state["demo_seed"]
