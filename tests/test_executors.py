"""The executor seam: a Dask LocalCluster run gives the same results.json as a local one (timing aside), whatever
the number of workers; bad executor options are named errors."""

from __future__ import annotations

import pytest
from reporting.conftest import strip_timing  # tests/ is on the path (pytest's rootdir-based imports)

from verify.cli import main
from verify.errors import ParameterError
from verify.reporting.results_json import results_document
from verify.runner import run

pytest.importorskip("distributed")

# several families (one task each), a falsifier finding, an exact and a grid-certified truth
SELECTION = ("thudi2024.fact3_5", "thudi2024.fact3_4", "chourasia2021.theorem3",
             "thudi2024.fact5_2")


@pytest.fixture(scope="module")
def local_run() -> dict:
    return strip_timing(results_document(run(SELECTION, workers=1, falsify=20, seed=5)))


def test_dask_local_cluster_gives_the_local_results(local_run):
    """verify's own LocalCluster of two single-threaded processes (one process is the threaded test's case below,
    through a scheduler's address)."""
    on_dask = results_document(run(SELECTION, workers=2, falsify=20, seed=5, executor="dask"))
    assert strip_timing(on_dask) == local_run


def test_the_cli_runs_on_dask(tmp_path, capsys):
    assert main(["run", "--only", "thudi2024.fact3_5", "--falsify", "0", "--executor", "dask", "--workers", "2",
                 "--json", str(tmp_path / "r.json"), "--quiet"]) == 0
    assert (tmp_path / "r.json").exists()


@pytest.mark.parametrize(("kwargs", "message"), [({"executor": "ray"}, "executor must be one of"),
                                                 ({"scheduler": "tcp://x:1"}, "needs --executor dask")])
def test_bad_executor_options_are_named(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        run(("thudi2024.fact3_5",), falsify=0, **kwargs)


def test_an_unreachable_scheduler_is_a_named_error(monkeypatch):
    monkeypatch.setattr("verify.executors.CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(ParameterError, match="cannot reach the Dask scheduler"):
        run(("thudi2024.fact3_5",), falsify=0, executor="dask", scheduler="tcp://127.0.0.1:1")


def test_a_multi_threaded_dask_worker_gives_the_local_results(local_run):
    """A scheduler's workers may run several tasks in threads: mpmath's and python-flint's precision, the backend
    variable and the truth memo are process-wide, so the tasks of one worker process run one at a time (the same
    results as a local run, with four tasks on one worker of four threads)."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=4, processes=True, dashboard_address=None) as cluster:
        on_dask = results_document(run(SELECTION, falsify=20, seed=5, executor="dask",
                                       scheduler=cluster.scheduler_address))
    assert strip_timing(on_dask) == local_run


def test_tasks_in_threads_of_one_process_run_one_at_a_time(monkeypatch):
    """Four threads of one process each run a task: at no moment do two of them check entries (before, all four
    did at once, each setting the process's working precision under the others)."""
    import threading
    import time

    import verify.runner as runner

    running, most = [0], [0]
    guard = threading.Lock()

    def entry(theorem, app, falsify, seed):
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with guard:
            running[0] -= 1

    monkeypatch.setattr(runner, "check_entry", entry)
    threads = [threading.Thread(target=runner._check_group, args=([("thudi2024.fact3_5", 0)], 0, 0, "numpy", False))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
