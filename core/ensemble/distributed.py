"""Where teacher training and vote computation run: a joblib backend or a Dask cluster.

:func:`train_teachers <core.ensemble.teachers.train_teachers>` and the vote computations of
:class:`TeacherEnsemble <core.ensemble.teacher_ensemble.TeacherEnsemble>` run their work through
:class:`joblib.Parallel`, so they follow the caller's :func:`joblib.parallel_config`.
:func:`joblib_backend` is the one place that turns a backend name (and, for Dask, a
scheduler address) into such a configuration.  It is the library's way of choosing
where the work runs (the functions themselves take no backend argument), and the
command line's ``--backend`` and ``--scheduler`` options go through it: one context
around training and voting serves both, with one connection to the cluster, including
the vote computations made inside the aggregators and
:class:`core.pipeline.estimator.PrivateEnsembleClassifier`.

What is sent where
------------------
With a process backend (``"loky"``, ``"multiprocessing"``) or a Dask cluster, the
private rows of each teacher's chunk are pickled and sent to a worker, which fits the
teacher and sends the fitted teacher back; for vote computation the fitted teachers and
the public query rows are sent to the workers, which send back the votes.  Workers hold
these objects in memory only, for as long as the task needs them; Private Label Lab
writes nothing to disk, on the workers or in the calling process.

Dask's own memory management may, however, *spill* data held by a worker to its local
directory when the worker nears its memory limit (by default from 60 % of the limit,
``distributed.worker.memory.target``, and 70 %, ``distributed.worker.memory.spill``).
On a cluster that handles private data, start the workers with spilling disabled,
either by setting both keys to false (e.g. ``DASK_DISTRIBUTED__WORKER__MEMORY__TARGET=False
DASK_DISTRIBUTED__WORKER__MEMORY__SPILL=False`` in the workers' environment, or in their
Dask configuration file) or with no memory limit (``dask worker --memory-limit 0``).
Connections between the client, scheduler and workers are plain TCP unless the cluster
is configured with TLS (``tls://`` addresses); use TLS or a private network when the
machines do not share one.

The results do not depend on where the work runs: every teacher's seed is drawn from the
generator before any work is sent out, so the same generator gives the same teachers and
identical votes on a laptop, with any ``n_jobs``, and on a cluster whose workers run the
same package versions.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import warnings
from typing import Any, Iterator

from core.errors import ParameterError, PrivacyWarning

__all__ = ["joblib_backend", "DEFAULT_CONNECT_TIMEOUT", "DASK_EXTRA", "DISTRIBUTION"]

DEFAULT_CONNECT_TIMEOUT = 10.0
"""Seconds :func:`joblib_backend` waits for a Dask scheduler to answer."""

DASK_EXTRA = "pip install 'private-label-lab[dask]'"
"""The command that installs the optional Dask support."""

DISTRIBUTION = "private-label-lab"
"""The installed distribution's name; every Dask worker needs the same version."""


def _joblib_backend_names() -> list[str]:
    from joblib.parallel import BACKENDS, EXTERNAL_BACKENDS

    return sorted(set(BACKENDS) | set(EXTERNAL_BACKENDS))


def _import_distributed() -> Any:
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise ParameterError(
            f"The Dask backend needs the optional Dask packages; install them with {DASK_EXTRA}."
        ) from None
    return distributed


def _check_timeout(timeout: Any) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ParameterError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    return float(timeout)


def joblib_backend(
    backend: str | None = None,
    scheduler: Any = None,
    *,
    n_jobs: int | None = None,
    timeout: float = DEFAULT_CONNECT_TIMEOUT,
) -> contextlib.AbstractContextManager:
    """A context in which teacher training and vote computation use the given backend.

    Parameters
    ----------
    backend : str, optional
        None (default) changes nothing: joblib's default, or whatever
        :func:`joblib.parallel_config` the caller has entered.  A joblib backend name
        (``"loky"``, ``"threading"``, ``"multiprocessing"``, ``"sequential"``, or one
        registered with :func:`joblib.register_parallel_backend`) enters
        ``joblib.parallel_config(backend=backend)``.  ``"dask"`` sends the work to the
        Dask cluster given by ``scheduler``.
    scheduler : str, distributed.Client or cluster, optional
        Only with ``backend="dask"``, and required there: the scheduler's address (e.g.
        ``"tcp://10.0.0.5:8786"``), a connected :class:`distributed.Client`, or a
        cluster object such as :class:`distributed.LocalCluster`.  For an address or a
        cluster the context opens a client and closes it on exit; a client given by the
        caller is used as it is and left open.
    n_jobs : int, optional
        Workers used inside the context when a function is called with ``n_jobs=None``
        (an explicit ``n_jobs`` argument wins).  None (default) means every core the
        backend offers: all local cores for ``"loky"``, ``"threading"`` and
        ``"multiprocessing"``, every worker thread of the cluster for ``"dask"`` (joblib's
        Dask backend always uses them all).  Ignored when ``backend`` is None.
    timeout : float
        Seconds to wait for the Dask scheduler to answer, and for it to have a worker
        (default :data:`DEFAULT_CONNECT_TIMEOUT`).

    Returns
    -------
    contextlib.AbstractContextManager
        Use it in a ``with`` statement; for Dask it yields the connected
        :class:`distributed.Client`.  The arguments are checked at once; entering
        connects to the scheduler and checks its workers.

    Raises
    ------
    ParameterError
        At once: an unknown backend name; ``"dask"`` without a scheduler, or a scheduler
        with another backend; the Dask packages not installed; a bad ``n_jobs`` or
        ``timeout``.  On entering (Dask): a malformed address; the scheduler not reached
        within ``timeout`` seconds; no worker within ``timeout`` seconds; a worker that
        lacks this version of Private Label Lab (it would fit the teachers with other
        code, or fail to unpickle the tasks).

    Warns
    -----
    PrivacyWarning
        On entering (Dask), when a worker may spill the data it holds to disk (it has a
        memory limit and ``distributed.worker.memory.target`` or ``.spill`` is not
        false).

    Notes
    -----
    With a process backend or Dask, each teacher's chunk of private rows is sent to a
    worker and the fitted teacher comes back; vote computation sends blocks of public
    query rows with a group of fitted teachers and gets votes (or scores) back.  The
    workers keep these in memory only and Private Label Lab writes nothing to disk (it
    also turns off joblib's memory-mapping of large arguments to a temporary folder),
    but Dask workers spill data to their local directory under memory pressure unless
    ``distributed.worker.memory.target`` and ``distributed.worker.memory.spill`` are
    both false or the workers have no memory limit (``dask worker --memory-limit 0``);
    see the module docstring.

    Every worker must have the same version of Private Label Lab (and of scikit-learn
    and numpy) as the calling process: the tasks call the project's functions by name.

    Examples
    --------
    >>> from core.ensemble.distributed import joblib_backend
    >>> from core.ensemble.teachers import train_teachers
    >>> with joblib_backend("dask", "tcp://10.0.0.5:8786"):  # doctest: +SKIP
    ...     ensemble = train_teachers(X, y, "logistic_regression", k=200, rng=0)
    ...     votes = ensemble.vote_counts(X_public)
    """
    timeout = _check_timeout(timeout)
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1
    ):
        raise ParameterError(
            f"n_jobs must be None (every core the backend offers), a positive number of workers "
            f"or -1, got {n_jobs!r}."
        )
    jobs = -1 if n_jobs is None else n_jobs
    if backend is None:
        if scheduler is not None:
            raise ParameterError(
                "A Dask scheduler was given without a backend; choose the Dask backend "
                "(backend='dask', or --backend dask on the command line) to use it."
            )
        return contextlib.nullcontext()
    if not isinstance(backend, str):
        raise ParameterError(
            f"backend must be a name such as 'loky' or 'dask', got {type(backend).__name__}."
        )
    name = backend.strip().lower()
    names = _joblib_backend_names()
    if name not in names:
        raise ParameterError(
            f"Unknown parallel backend {backend!r}; choose one of {', '.join(names)}."
        )
    if name != "dask":
        if scheduler is not None:
            raise ParameterError(
                f"A scheduler is only used by the Dask backend, not by {name!r}; "
                "choose backend='dask' (--backend dask) or leave the scheduler out."
            )
        from joblib import parallel_config

        return parallel_config(backend=name, n_jobs=jobs)
    if scheduler is None:
        raise ParameterError(
            "The Dask backend needs the address of a running Dask scheduler, e.g. "
            "scheduler='tcp://10.0.0.5:8786' (--scheduler tcp://10.0.0.5:8786); start one "
            "with `dask scheduler` and workers with `dask worker ADDRESS`."
        )
    distributed = _import_distributed()
    if isinstance(scheduler, str):
        if not scheduler.strip():
            raise ParameterError("The Dask scheduler address is empty; give e.g. tcp://10.0.0.5:8786.")
        scheduler = scheduler.strip()
    elif not isinstance(scheduler, distributed.Client) and not hasattr(scheduler, "scheduler_address"):
        raise ParameterError(
            "scheduler must be an address such as 'tcp://10.0.0.5:8786', a distributed.Client "
            f"or a Dask cluster object, got {type(scheduler).__name__}."
        )
    return _dask_context(distributed, scheduler, timeout, jobs)


def _describe(scheduler: Any) -> str:
    if isinstance(scheduler, str):
        return scheduler
    return str(getattr(scheduler, "scheduler_address", None) or type(scheduler).__name__)


@contextlib.contextmanager
def _dask_context(distributed: Any, scheduler: Any, timeout: float, n_jobs: int) -> Iterator[Any]:
    from joblib import parallel_config

    if isinstance(scheduler, distributed.Client):
        client, owned = scheduler, False
    else:
        if isinstance(scheduler, str):
            _check_address(scheduler)  # before a Client exists: a half-built one lingers
        try:
            client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ParameterError(
                f"Could not reach the Dask scheduler at {_describe(scheduler)} within {timeout:g} s "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no answer'}). "
                "Check the address and that `dask scheduler` is running and reachable."
            ) from None
        except ValueError as exc:
            raise ParameterError(
                f"{_describe(scheduler)!r} is not a Dask scheduler address ({exc}); give one like "
                "tcp://10.0.0.5:8786."
            ) from None
        owned = True
    try:
        _check_workers(client, _describe(scheduler), timeout)
        config = {"n_jobs": n_jobs, "client": client, "wait_for_workers_timeout": timeout}
        with parallel_config(backend="dask", **config):
            yield client
    finally:
        if owned:
            client.close()


def _check_address(address: str) -> None:
    """Refuse a scheduler address that does not name a host and port (``tcp://host:8786``)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        host, port = parse_host_port(location) if scheme in ("tcp", "tls") else (location, 0)
    except ValueError as exc:
        raise ParameterError(
            f"{address!r} is not a Dask scheduler address ({exc}); give one like tcp://10.0.0.5:8786."
        ) from None
    if scheme in ("tcp", "tls") and (not host or not port):
        raise ParameterError(
            f"{address!r} is not a Dask scheduler address (it needs a host and a port); "
            "give one like tcp://10.0.0.5:8786."
        )


def _local_version() -> str | None:
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:  # running from a source tree
        return None


def _check_workers(client: Any, where: str, timeout: float) -> None:
    """Fail early when the cluster cannot run the work; warn when it may spill to disk.

    Only standard functions are sent to the workers here (no project code), so the
    check works even where the project is missing.
    """
    import dask

    try:
        client.wait_for_workers(1, timeout=timeout)
    except (TimeoutError, OSError):
        raise ParameterError(
            f"The Dask scheduler at {where} has no workers (waited {timeout:g} s); start them "
            f"with `dask worker {where}` on the machines that should do the work."
        ) from None
    version = _local_version()
    if version is not None:
        found = client.run(importlib.metadata.version, DISTRIBUTION, on_error="return")
        wrong = {w: v for w, v in found.items() if v != version}
        if wrong:
            worker, got = sorted(wrong.items())[0]
            seen = "does not have it" if isinstance(got, BaseException) else f"has version {got}"
            raise ParameterError(
                f"{len(wrong)} of {len(found)} Dask workers cannot run the teachers as this process "
                f"does: worker {worker} {seen}. Install {DISTRIBUTION} {version} (with the same "
                "scikit-learn and numpy versions) on every worker, so the votes are the same as on "
                "this machine."
            )
    limits = {w: info.get("memory_limit") for w, info in client.scheduler_info()["workers"].items()}
    memory = client.run(dask.config.get, "distributed.worker.memory", on_error="return")
    spilling = sorted(
        w
        for w, settings in memory.items()
        if limits.get(w)
        and (
            not isinstance(settings, dict)
            or settings.get("target") is not False
            or settings.get("spill") is not False
        )
    )
    if spilling:
        warnings.warn(
            f"{len(spilling)} of {len(memory)} Dask workers may spill the private chunks and fitted "
            "teachers they hold to their local disk when short of memory (Dask's "
            "distributed.worker.memory.target and .spill settings). Start the workers with "
            "DASK_DISTRIBUTED__WORKER__MEMORY__TARGET=False and "
            "DASK_DISTRIBUTED__WORKER__MEMORY__SPILL=False, or with --memory-limit 0, to keep "
            "private data in memory only.",
            PrivacyWarning,
            stacklevel=4,
        )
