"""Teachers on a Dask cluster and under other joblib backends (core.ensemble.distributed).

The cluster tests start one local ``dask.distributed`` cluster with two worker
processes for the whole module (one xdist group, so a single pytest worker owns it) and
check that training and vote computation sent through its scheduler address give
exactly the local, sequential results for the same seed, and that the work really ran on
the cluster's workers.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
import time
import warnings
from collections import Counter

import numpy as np
import pytest
from joblib import parallel_config
from sklearn.linear_model import LogisticRegression

from core.ensemble import distributed as cd
from core.data import halfspaces
from core.ensemble.distributed import joblib_backend
from core.errors import ParameterError, PrivacyWarning
from core.ensemble.teachers import train_teachers

K = 40
# One xdist group keeps the module's cluster on a single pytest worker (`make test` runs
# `-n 2 --dist loadgroup`).  pytest-xdist registers the marker; without the plugin
# (`-p no:xdist`) --strict-markers rejects it, and there is nothing to group anyway.
try:
    DASK_GROUP = pytest.mark.xdist_group("dask")
except pytest.fail.Exception:
    DASK_GROUP = pytest.mark.slow  # every test using it is marked slow already
# no dashboard, and the scheduler's HTTP endpoint on a free port (not 8787, which another
# cluster on this machine may hold)
QUIET = {"dashboard_address": ":0", "scheduler_kwargs": {"dashboard": False}}
NO_SPILL = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False}


def _task():
    X, y = halfspaces(3_000, 8, noise=0.1, rng=0)
    Q, _ = halfspaces(700, 8, rng=1)
    return X, y, Q


def _outputs(ensemble, Q):
    # block_size 256: three blocks, so vote computation sends several rounds of tasks
    return (
        ensemble.vote_counts(Q, block_size=256),
        ensemble.scores(Q, block_size=256),
        ensemble.predictions(Q, block_size=256),
    )


def _calls_by_function(task_stream: list[dict]) -> Counter:
    """Joblib-on-Dask task keys read ``batch_of_<function>_<calls>_calls-<uuid>``."""
    calls: Counter = Counter()
    for task in task_stream:
        match = re.match(r"batch_of_(.+)_(\d+)_calls-", str(task["key"]))
        if match:
            calls[match.group(1)] += int(match.group(2))
    return calls


@pytest.fixture(scope="module")
def local_run():
    X, y, Q = _task()
    with joblib_backend("sequential"):
        ensemble = train_teachers(X, y, LogisticRegression(), K, rng=7)
        return _outputs(ensemble, Q)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    import dask
    import psutil

    # spilling off, as docs/guide/data-owner.md ("Running on a Dask cluster") recommends for private data: workers keep it in memory
    with dask.config.set(NO_SPILL):
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, **QUIET
        )
    with distributed.Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
    try:
        yield cluster
    finally:
        cluster.close()
        deadline = time.monotonic() + 20
        while any(psutil.pid_exists(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(psutil.pid_exists(p) for p in pids), "Dask worker processes outlived the cluster"


# --------------------------------------------------------------------------- on the cluster


@pytest.mark.slow
@DASK_GROUP
def test_cluster_votes_equal_the_local_run_and_ran_on_the_workers(cluster, local_run):
    import distributed

    X, y, Q = _task()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyWarning)  # this cluster does not spill
        with joblib_backend("dask", cluster.scheduler_address) as client:
            workers = set(client.scheduler_info()["workers"])
            with distributed.get_task_stream(client=client) as stream:
                ensemble = train_teachers(X, y, LogisticRegression(), K, rng=7)
                remote = _outputs(ensemble, Q)
    assert client.status == "closed"  # the client the context opened is closed again

    counts, scores, predictions = remote
    assert counts.shape == (700, 2) and np.all(counts.sum(axis=1) == K)
    np.testing.assert_array_equal(counts, local_run[0])
    np.testing.assert_array_equal(scores, local_run[1])  # bit-identical probabilities
    np.testing.assert_array_equal(predictions, local_run[2])

    # every teacher was fitted on a worker; the linear teachers' votes are one stacked
    # product here, their probabilities went to the workers
    assert len(workers) == 2
    assert stream.data and {task["worker"] for task in stream.data} <= workers
    calls = _calls_by_function(stream.data)
    assert calls["_fit_teacher"] == K
    # 3 blocks x 2 teacher groups (one per worker thread) for the scores
    assert calls["_group_encoded"] == 3 * 2 and calls["_group_output"] == 0


@pytest.mark.slow
@DASK_GROUP
def test_cluster_votes_of_trees_run_on_the_workers(cluster):
    from sklearn.tree import DecisionTreeClassifier

    import distributed

    X, y, Q = _task()
    with joblib_backend("sequential"):
        local = _outputs(train_teachers(X, y, DecisionTreeClassifier(max_depth=3), K, rng=7), Q)
    with joblib_backend("dask", cluster.scheduler_address) as client:
        with distributed.get_task_stream(client=client) as stream:
            ensemble = train_teachers(X, y, DecisionTreeClassifier(max_depth=3), K, rng=7)
            remote = _outputs(ensemble, Q)
    for a, b in zip(local, remote):
        np.testing.assert_array_equal(a, b)
    # every block of the shared encoding went to both workers, for each of the three outputs
    assert _calls_by_function(stream.data)["_group_encoded"] == 3 * 2 * 3


@pytest.mark.slow
@DASK_GROUP
def test_a_labeling_job_on_the_cluster_gives_the_same_labels(cluster, tmp_path):
    """The command line's streaming job, on two Dask workers and here: the same files."""
    import pandas as pd

    from core.cli import main
    from core.data import DATASETS_DIR

    train = pd.read_csv(DATASETS_DIR / "adult_train.csv.gz", dtype=str, keep_default_na=False)
    test = pd.read_csv(DATASETS_DIR / "adult_test.csv.gz", dtype=str, keep_default_na=False)
    train.iloc[:3000].to_csv(tmp_path / "private.csv", index=False)
    test.iloc[:600].drop(columns=["income"]).to_csv(tmp_path / "public.csv", index=False)
    outputs = []
    for backend in ([], ["--backend", "dask", "--scheduler", cluster.scheduler_address]):
        out = tmp_path / f"labeled{len(backend)}.csv"
        argv = ["label", "--private", str(tmp_path / "private.csv"), "--label-column", "income",
                "--public", str(tmp_path / "public.csv"), "--missing", "impute", "--missing-marker", "?",
                "--learner", "random_forest", "--learner-param", "n_estimators=3", "--k", "30",
                "--mechanism", "confident-gnmax", "--epsilon", "5", "--delta", "1e-5", "--accounting", "filter",
                "--chunk-rows", "250", "--seed", "4", "--out", str(out), *backend]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(argv) in (0, 3)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    labeled = pd.read_csv(tmp_path / "labeled0.csv", keep_default_na=False)
    assert len(labeled) == 600 and (labeled["status"] == "answered").sum() > 0


@pytest.mark.slow
@DASK_GROUP
def test_cluster_object_and_explicit_n_jobs(cluster, local_run):
    X, y, Q = _task()
    with joblib_backend("dask", cluster) as client:
        ensemble = train_teachers(X, y, LogisticRegression(), K, rng=7, n_jobs=2)
        assert ensemble.n_jobs == 2 and len(ensemble._groups()) == 2
        counts = ensemble.vote_counts(Q, block_size=256)
    assert client.status == "closed"
    np.testing.assert_array_equal(counts, local_run[0])


@pytest.mark.slow
@DASK_GROUP
def test_a_client_given_by_the_caller_stays_open_and_workers_keep_nothing(cluster, local_run):
    import distributed

    X, y, Q = _task()
    with distributed.Client(cluster, set_as_default=False) as client:
        with joblib_backend("dask", client) as used:
            assert used is client
            scores = train_teachers(X, y, LogisticRegression(), K, rng=7).scores(Q)
        assert client.status == "running"
        np.testing.assert_array_equal(scores, local_run[1])
        # the workers held the private chunks in plain memory (no spill buffer) and
        # dropped them once the results came back
        kinds = client.run(lambda dask_worker: type(dask_worker.data).__name__)
        assert set(kinds.values()) == {"dict"}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            held = client.run(lambda dask_worker: len(dask_worker.data))
            if not any(held.values()):
                break
            time.sleep(0.1)
        assert not any(held.values()), held


@pytest.mark.slow
@DASK_GROUP
def test_workers_with_another_version_are_refused(cluster, monkeypatch):
    monkeypatch.setattr(cd, "_local_version", lambda: "0.0.0.other")
    refused = r"2 of 2 Dask workers .*has version .*Install private-label-lab 0\.0\.0\.other"
    with pytest.raises(ParameterError, match=refused):
        with joblib_backend("dask", cluster.scheduler_address):
            pass


# --------------------------------------------------------------------------- in-process clusters


@pytest.mark.slow
@DASK_GROUP
def test_spilling_workers_draw_a_privacy_warning():
    distributed = pytest.importorskip("distributed")
    import dask

    with distributed.LocalCluster(
        n_workers=1, processes=False, memory_limit="2GiB", **QUIET
    ) as spilling:
        with pytest.warns(PrivacyWarning, match="may spill the private chunks"):
            with joblib_backend("dask", spilling):
                pass
        with dask.config.set(NO_SPILL), warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyWarning)
            with joblib_backend("dask", spilling):
                pass


@pytest.mark.slow
@DASK_GROUP
def test_a_scheduler_without_workers_is_a_clear_error():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, **QUIET) as empty:
        start = time.monotonic()
        with pytest.raises(ParameterError, match="has no workers"):
            with joblib_backend("dask", empty.scheduler_address, timeout=0.5):
                pass
        assert time.monotonic() - start < 10


# --------------------------------------------------------------------------- other backends


@pytest.mark.parametrize("backend", ["threading", pytest.param("loky", marks=pytest.mark.slow)])
def test_votes_follow_the_joblib_backend_and_stay_identical(backend, local_run):
    X, y, Q = _task()
    with parallel_config(backend=backend, n_jobs=2):
        ensemble = train_teachers(X, y, LogisticRegression(), K, rng=7)
        assert len(ensemble._groups()) == 2  # n_jobs=None follows the configuration
        remote = _outputs(ensemble, Q)
    for got, expected in zip(remote, local_run):
        np.testing.assert_array_equal(got, expected)


def test_a_named_backend_uses_every_core_unless_told():
    from joblib import cpu_count, effective_n_jobs

    with joblib_backend("threading"):
        assert effective_n_jobs(None) == cpu_count()
    with joblib_backend("threading", n_jobs=1):
        assert effective_n_jobs(None) == 1
    with joblib_backend("sequential"):
        assert effective_n_jobs(None) == 1


def test_no_backend_changes_nothing():
    X, y, _ = _task()
    with joblib_backend(None):
        ensemble = train_teachers(X[:200], y[:200], LogisticRegression(), 4, rng=0)
    assert len(ensemble._groups()) == 1


# --------------------------------------------------------------------------- errors


def test_unreachable_scheduler_fails_quickly():
    pytest.importorskip("distributed")
    start = time.monotonic()
    unreachable = r"Could not reach the Dask scheduler at tcp://127\.0\.0\.1:9 within 1 s"
    with pytest.raises(ParameterError, match=unreachable):
        with joblib_backend("dask", "tcp://127.0.0.1:9", timeout=1):
            pass
    assert time.monotonic() - start < 8


@pytest.mark.parametrize(
    "backend, scheduler, match",
    [
        ("dask", None, "needs the address of a running Dask scheduler"),
        ("spark", None, r"Unknown parallel backend 'spark'; choose one of .*dask.*loky"),
        (None, "tcp://127.0.0.1:8786", "without a backend"),
        ("loky", "tcp://127.0.0.1:8786", "only used by the Dask backend"),
        ("dask", 8786, "scheduler must be an address"),
        ("dask", "   ", "address is empty"),
        (3, None, "backend must be a name"),
    ],
)
def test_bad_arguments_are_parameter_errors(backend, scheduler, match):
    pytest.importorskip("distributed")
    with pytest.raises(ParameterError, match=match):
        joblib_backend(backend, scheduler)


@pytest.mark.parametrize("n_jobs", [0, -2, 1.5, True])
def test_bad_n_jobs(n_jobs):
    with pytest.raises(ParameterError, match="n_jobs must be"):
        joblib_backend("loky", n_jobs=n_jobs)


@pytest.mark.parametrize("address", ["localhost", "foo://127.0.0.1:8786", "nonsense", "tcp://host", "tcp://:8786"])
def test_malformed_addresses_are_parameter_errors(address):
    pytest.importorskip("distributed")
    with pytest.raises(ParameterError, match="is not a Dask scheduler address"):
        with joblib_backend("dask", address, timeout=1):
            pass


@pytest.mark.parametrize("timeout", [0, -1, "10", True])
def test_bad_timeout(timeout):
    with pytest.raises(ParameterError, match="timeout"):
        joblib_backend("dask", "tcp://127.0.0.1:8786", timeout=timeout)


def test_missing_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ParameterError, match=r"pip install 'private-label-lab\[dask\]'"):
        joblib_backend("dask", "tcp://127.0.0.1:8786")


def test_malformed_address_leaves_no_client_behind():
    """Refused before a Client exists: the interpreter exits at once, with no traceback of
    a half-built client's clean-up on stderr."""
    pytest.importorskip("distributed")
    import subprocess

    code = (
        "from core.ensemble.distributed import joblib_backend\n"
        "try:\n"
        "    with joblib_backend('dask', 'nonsense'):\n"
        "        pass\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.stdout.strip() == "ParameterError"
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
