"""Where a run's work goes: this process, a local pool of forked processes (the default), or a Dask cluster.

A run splits its entries into groups by family (verify.runner.family_groups); each group is one task, named by
theorem ids and application indices only, so a task runs the same anywhere: a forked worker inherits this process,
a Dask worker imports verify (and the `plugins` the run names) and looks the theorems up in the catalog. The falsifier's
seed is the run's, per entry, so results never depend on which worker ran what or in which order.

Dask: `dask_executor(None, workers)` starts a LocalCluster of `workers` single-threaded processes; an address
(`tcp://host:8786`) connects to a running scheduler instead (README, "Sweeps on a cluster"). Each task carries this
process's caps (env VERIFY_TRUTH_DEADLINE, VERIFY_MEMORY_CAP), which a worker started elsewhere or earlier lacks, and
a Dask task runs in a worker's thread, where verify.limits' deadlines hold too (a watchdog thread, not a signal):
a point past its deadline is the same DeadlineExceeded in every executor.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_all_start_methods, get_context
from typing import Any

from verify.errors import ParameterError
from verify.limits import caps_env, caps_from

EXECUTORS = ("local", "dask")
CONNECT_TIMEOUT_S = 20.0  # to a Dask scheduler given by address


def fork_executor(workers: int | None, n_jobs: int, backend: str = "numpy") -> Executor | None:
    """A pool of `workers` forked processes (default: up to 4, one per CPU), or None where forking is not worth
    it or not safe: one worker or job, no fork on this platform, or the cupy backend (CUDA does not survive a
    fork). Forked workers inherit the catalog and any state set before the first submit."""
    workers = min(4, os.cpu_count() or 1) if workers is None else workers
    if workers <= 1 or n_jobs < 2 or backend == "cupy" or "fork" not in get_all_start_methods():
        return None
    return ProcessPoolExecutor(max_workers=min(workers, n_jobs), mp_context=get_context("fork"))


@contextmanager
def dask_executor(scheduler: str | None, workers: int | None) -> Iterator[Executor]:
    """A concurrent.futures Executor on a Dask cluster: a LocalCluster of `workers` processes (default: up to 4)
    when `scheduler` is None, else the scheduler at that address. Needs the `dask` extra."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as err:
        raise ParameterError(f"--executor dask needs Dask: pip install 'dp-verify[dask]' ({err})") from None
    cluster = None
    if scheduler is None:
        n = min(4, os.cpu_count() or 1) if workers is None else workers
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
    try:
        client = Client(cluster) if cluster is not None else Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, ValueError, TypeError) as err:  # ValueError, TypeError: an address Dask cannot parse
        if cluster is not None:
            cluster.close()
        raise ParameterError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    try:
        yield CappedExecutor(client.get_executor())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def with_caps(caps: dict[str, str | None], fn, *args: Any, **kwargs: Any) -> Any:
    """Run one task under the caps of the process that submitted it (verify.limits.caps_from)."""
    with caps_from(caps):
        return fn(*args, **kwargs)


class CappedExecutor(Executor):
    """An Executor whose tasks carry the submitting thread's caps (verify.limits.caps_env) to the worker."""

    def __init__(self, inner: Executor):
        self.inner = inner

    def submit(self, fn, /, *args: Any, **kwargs: Any) -> Future:
        return self.inner.submit(with_caps, caps_env(), fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.inner.shutdown(wait=wait)


def check_executor(executor: str, scheduler: str | None) -> None:
    if executor not in EXECUTORS:
        raise ParameterError(f"executor must be one of {', '.join(EXECUTORS)}, got '{executor}'")
    if scheduler is not None and executor != "dask":
        raise ParameterError("--scheduler is an address of a Dask scheduler: it needs --executor dask")
    if scheduler is not None:
        check_scheduler(scheduler)


_SCHEDULER = re.compile(r"(?:(?:tcp|tls|ucx|ws|wss)://)?(?P<host>[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
                        r"|\[[0-9A-Fa-f:.]+\])(?::(?P<port>[0-9]{1,5}))?")


def check_scheduler(address: str) -> None:
    """A ParameterError unless `address` reads as a Dask scheduler address: [tcp|tls|ucx|ws|wss://]host[:port],
    host a name, an IPv4 address or a bracketed IPv6 address, port 1..65535 (whether it answers is seen on connect)."""
    match = _SCHEDULER.fullmatch(address) if isinstance(address, str) else None
    if match is None or (match["port"] is not None and not 1 <= int(match["port"]) <= 65535):
        raise ParameterError(f"--scheduler {address!r} is not a Dask scheduler address; expected "
                             "[tcp://]host[:port], e.g. tcp://head:8786 or tcp://[::1]:8786")
