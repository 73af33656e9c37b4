"""Values shared by every session of the server, each computed once (trained ensembles, demo runs).

A class opening the same view together must not compute the same thing once per student:
:class:`OncePerKey` lets the first session asking compute a value while the others wait
for it (docs/design.md §10.5).  Used by :mod:`app_pages._cache`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable


class Pending:
    """A value being computed by one session: what other sessions asking for it wait on."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.progress: tuple[float, str] | None = None  # the training session's bar: fraction, text


class OncePerKey:
    """Values shared by every session of the process: a small thread-safe LRU map, computed once per key.

    Used for the trained ensembles (:func:`app_pages._cache.train`) and, with the demo seed
    on, for labeling runs (:func:`app_pages._cache.labeling`).

    Hand-rolled on purpose, not ``st.cache_resource``: training reports its progress to
    a bar on the page, and a Streamlit-cached function records the page elements it
    touches and replays them on every later hit; and the pages ask whether an ensemble
    is trained already (to show the bar only then), which a Streamlit cache cannot
    answer without running the function.  The map itself lives in ``st.cache_resource``.

    **Once per key.** Sessions asking for the same value at the same time (a class
    opening the default view together) do not each compute it: the first one computes
    (:meth:`claim` gives it the key), the others wait for it (:meth:`wait`; for an
    ensemble their bars follow the training session's), and all read the one result.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.items: OrderedDict = OrderedDict()
        self.training: dict = {}  # key -> Pending, while one session computes it

    def get(self, key):
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
            return None

    def claim(self, key) -> tuple[Any, Pending | None, bool]:
        """``(value, None, False)`` when computed; else the key's computation and whether the caller does it."""
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key], None, False
            if key in self.training:
                return None, self.training[key], False
            job = self.training[key] = Pending()
            return None, job, True

    def finish(self, key, job: Pending, value=None) -> None:
        """End ``job``: store its value; None when the computation stopped (the next asker computes it)."""
        with self.lock:
            if value is not None:
                self.items[key] = value
                self.items.move_to_end(key)
                while len(self.items) > self.size:
                    self.items.popitem(last=False)
            self.training.pop(key, None)
        job.done.set()

    @staticmethod
    def wait(job: Pending, shown: Callable[[float, str], None] | None = None) -> None:
        """Wait for another session's computation of ``job``, showing its progress through ``shown``.

        A computation that stopped (an error, or its session moved on) leaves no value:
        the waiting session then computes it itself (and meets any error itself).
        """
        last = None
        while not job.done.wait(0.2):
            if shown is not None and job.progress is not None and job.progress != last:
                last = job.progress
                shown(*last)


    def get_or_compute(self, key, compute: Callable[[Pending], Any],
                       waiting: Callable[[float, str], None] | None = None) -> Any:
        """The value of ``key``, computed by ``compute(job)`` once for all sessions asking.

        ``compute`` may set ``job.progress`` (a fraction and its text); a session waiting
        for it sees that progress through ``waiting``.
        """
        while True:
            hit, job, mine = self.claim(key)
            if hit is not None:
                return hit
            if mine:
                break
            self.wait(job, waiting)  # then read it (or, evicted or stopped meanwhile, compute it)
        try:
            value = compute(job)
        except BaseException:
            self.finish(key, job)
            raise
        self.finish(key, job, value=value)
        return value
