"""Run catalog entries over their default grids and collect the results of a whole run (RunResult). Its JSON
certificate is written by reporting (verify.reporting.results_json.results_document), which this module never
imports."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from verify.backend import ENV_VAR, backend_name, get_namespace
from verify.catalog import BUILT_IN_KEYS, companions, select
from verify.catalog import theorem as catalog_theorem
from verify.catalog.paper_file import load_sources, loaded_sources
from verify.checker import ApplicationResult, SearchSummary, aggregate, check_application
from verify.errors import ParameterError
from verify.executors import check_executor, dask_executor, fork_executor
from verify.families import BUILT_IN
from verify.families import family as get_family
from verify.model import Application, Theorem
from verify.pipeline.memo import shared_truths, truths_in
from verify.pipeline.truth_cache import check_cache_executor, disk_truths
from verify.results import RESULTS_SCHEMA, Truth, Verdict

FALSIFY_EXAMPLES = 100  # falsifier points per application in `verify run` / `verify report` (0: grid only)
FALSIFY_BUDGET_S = 120.0  # wall-clock cap per application; generous so that the point count decides (reproducible)
def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class RunResult:
    """Every selected theorem checked on every family it applies to."""

    theorems: tuple[Theorem, ...]
    results: tuple[ApplicationResult, ...]
    seconds: float
    seed: int = 0
    backend: str = "numpy"
    selectors: tuple[str, ...] = ()
    started: str = field(default_factory=_utc_now)  # UTC, ISO 8601: a timing field
    # the truths the run computed, by truth_of's key: a report's sweeps start from them (not part of the results)
    truths: Mapping[tuple, Truth] = field(default_factory=dict, repr=False, compare=False)

    @property
    def unexpected(self) -> list[ApplicationResult]:
        """Results whose verdict differs from the expected one, and results with errors."""
        return [r for r in self.results if not r.as_expected]

    @property
    def errors(self) -> list[ApplicationResult]:
        return [r for r in self.results if r.errors]



def is_results_file(path: Path) -> bool:
    """True if `path` is a results file this tool wrote (`verify run --json`, results.json): a regular file (not a
    link) holding one JSON object with verify's schema_version, run and results, naming verify's results schema (a
    user's file with the first three keys alone was overwritten)."""
    try:
        if not path.is_file() or path.is_symlink():
            return False
        with path.open(encoding="utf-8") as fh:
            if not fh.read(200).lstrip().startswith("{"):
                return False
            fh.seek(0)
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return False
    return (isinstance(data, dict) and {"schema_version", "run", "results"} <= set(data)
            and data.get("schema") == RESULTS_SCHEMA)


def check_writable(folder: Path | str, what: str) -> None:
    """Refuse (ParameterError naming `what`, one line) unless files can be created in `folder` or, where it does not
    exist yet, in its nearest existing parent: that one must be a folder, and a probe file is created there and
    removed again. Called before a run, so that an unwritable destination costs nothing."""
    folder = Path(folder)
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ParameterError(f"{what} cannot be written: {existing} is not a folder")
    probe = existing / f".verify-probe-{uuid.uuid4().hex[:12]}"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as err:
        raise ParameterError(f"{what} cannot be written: {existing}: {err.strerror or err}") from None
    try:
        os.unlink(probe)
    except OSError:
        pass


def check_results_path(path: Path | str) -> Path:
    """The destination of `verify run --json`, refused before the run unless it is absent or a results file verify
    wrote, and its folder can be written."""
    path = Path(path)
    what = f"--json {path}"
    if path.is_symlink() or (path.exists() and not path.is_dir() and not is_results_file(path)):
        raise ParameterError(f"{what} exists and is not a verify results file; verify never overwrites files it did "
                             "not create")
    if path.is_dir():
        raise ParameterError(f"{what} is a folder; give a file name for the results")
    check_writable(path.parent, what)
    return path


def write_results(path: Path | str, text: str) -> Path:
    """Write `text` (a results file) to `path` atomically: to a new temporary file beside it, then moved over `path`
    only if that is still absent or a results file verify wrote. Any failure is one ParameterError line; a foreign
    file that appeared at `path` during the run is left alone and the results are kept in the temporary file."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex[:12]}.partial"
    kept = False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if path.is_symlink() or path.is_dir() or (path.exists() and not is_results_file(path)):
            kept = True
            raise ParameterError(f"{path} appeared during the run and is not a verify results file; verify never "
                                 f"overwrites files it did not create: the results are in {tmp}")
        os.replace(tmp, path)
    except BaseException as err:  # an I/O error, or a stop (verify.stopping): no half-written file stays
        if not kept:
            _remove_quietly(tmp)
        if isinstance(err, OSError):
            raise ParameterError(f"cannot write {path}: {err.strerror or err}") from None
        raise
    return path


def _remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_JOBS: dict[str, Theorem] = {}  # the theorems of a parallel run, inherited by its forked workers
_STARTS: int | None = None  # a pipe's write end on which forked workers announce each entry they start, or None


def check_entry(theorem: Theorem, app: Application, falsify: int, seed: int) -> ApplicationResult:
    """The default grid, then the falsifier (see `falsify_application`)."""
    return falsify_application(theorem, app, check_application(theorem, app, companions(app)), falsify, seed)


@contextmanager
def use_backend(name: str):
    """Make `name` the array backend of the numerical kernels (env VERIFY_BACKEND) for the duration."""
    get_namespace(name)  # fails early, naming the backend, if it is unknown or unusable
    previous = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = name
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = previous


def run(selectors: Sequence[str] = (), progress: Callable[[Theorem, int, int], None] | None = None, *,
        seed: int = 0, backend: str | None = None, workers: int | None = 1,
        falsify: int = FALSIFY_EXAMPLES, executor: str = "local", scheduler: str | None = None,
        cache: Path | str | None = None, cache_size: int | None = None, keep_truths: bool = False) -> RunResult:
    """Check the selected entries (all by default) over their default grids.

    `backend` is the array backend of the numerical kernels during the run (None: $VERIFY_BACKEND, else numpy);
    `seed` seeds the falsifier (`falsify` points per application beside the grid; 0 turns it off) and is recorded
    (sampling families take their own seed as a grid parameter).
    `workers` > 1 (None: up to 4) checks entries in forked processes, with the same result as one worker;
    `executor="dask"` sends them to a Dask LocalCluster of `workers` processes, or to the scheduler at `scheduler`
    (verify.executors), with the same result again.
    `progress(theorem, i, total)` is called before each entry (one worker) or as entries finish.
    Each truth is computed once per process (pipeline.memo): entries on one family share a worker. `cache`: a folder
    of truths kept across runs (verify.pipeline.truth_cache; the local executor only), with the same result as without,
    capped at `cache_size` bytes (None: env VERIFY_CACHE_SIZE, else 1 GiB).
    `keep_truths`: the result holds the truths computed (`RunResult.truths`; a report's sweeps start from them).
    """
    started = _utc_now()
    start = time.perf_counter()
    theorems = select(list(selectors))
    jobs = [(t, i) for t in theorems for i in range(len(t.applications))]
    backend = backend_name(backend)
    check_executor(executor, scheduler)
    check_cache_executor(cache, executor)
    if falsify > 0:
        import verify.testing.falsify  # noqa: F401 - before forked workers start, so that they share the import
    truths: dict[tuple, Truth] | None = {} if keep_truths else None
    with use_backend(backend), disk_truths(cache, backend, cache_size):
        groups = family_groups(jobs, falsify)
        if executor == "dask":
            with dask_executor(scheduler, workers) as pool:
                results = _run_parallel(pool, jobs, groups, progress, falsify, int(seed), backend, truths)
        elif (pool := fork_executor(workers, len(groups), backend)) is not None:
            with pool, _announced_starts(jobs, progress) as done:
                results = _run_parallel(pool, jobs, groups, progress, falsify, int(seed), backend, truths, done)
        else:
            results = []
            with shared_truths() as memo:
                for i, t in enumerate(theorems):
                    if progress:
                        progress(t, i, len(theorems))
                    results.extend(check_entry(t, app, falsify, int(seed)) for app in t.applications)
                if truths is not None:
                    truths.update(truths_in(memo))
    return RunResult(tuple(theorems), tuple(results), time.perf_counter() - start, int(seed), backend,
                     tuple(selectors), started, truths or {})


def family_weight(family: str) -> float:
    """How much a unit of work (a grid point, a falsifier example, a figure) on `family` weighs when tasks are put in
    longest-processing-time order: 10 on expensive families, else 1."""
    return 10.0 if get_family(family).expensive else 1.0


def family_groups(jobs: Sequence[tuple[Theorem, int]], falsify: int = FALSIFY_EXAMPLES) -> list[list[int]]:
    """Indices of `jobs` grouped by family (a group runs in one process and shares its truths), costliest first
    (longest-processing-time order balances the workers): cost ~ grid points plus `falsify` falsifier examples,
    times `family_weight`."""
    groups: dict[str, list[int]] = {}
    for k, (t, i) in enumerate(jobs):
        groups.setdefault(t.applications[i].family, []).append(k)

    def cost(group: list[int]) -> float:
        apps = [jobs[k][0].applications[jobs[k][1]] for k in group]
        work = sum(sum(math.prod(len(v) for v in g.values()) for g in app.grids) + falsify for app in apps)
        return family_weight(apps[0].family) * work

    return sorted(groups.values(), key=cost, reverse=True)


_ONE_TASK_AT_A_TIME = threading.Lock()


def _check_group(keys: list[tuple[str, int]], falsify: int, seed: int, backend: str,
                 keep_truths: bool, sources: Sequence[tuple[str, str]] = ()) -> tuple[list[ApplicationResult],
                                                                                     dict[tuple, Truth]]:
    """One task: entries on one family, sharing their truths; returns their results and (`keep_truths`) those
    truths. A forked worker finds the theorems in _JOBS; a Dask worker (a process of its own) in the catalog, after
    loading the paper files and plugins the run's process had loaded (`sources`, paper_file.loaded_sources). A
    process runs one task at a time: mpmath's and python-flint's working precision, the backend variable and the
    truth memo are process-wide, so two tasks in threads of one Dask worker (a scheduler's workers may have several)
    would change them under each other."""
    with _ONE_TASK_AT_A_TIME, use_backend(backend), shared_truths() as memo:
        if any(tid not in _JOBS for tid, _ in keys):
            load_sources(sources)
        found = [(_JOBS.get(tid) or catalog_theorem(tid), i) for tid, i in keys]
        out = []
        for t, i in found:
            if _STARTS is not None:  # one write below PIPE_BUF: atomic, and no lock a killed worker could keep
                os.write(_STARTS, f"{t.id}\n".encode())
            out.append(check_entry(t, t.applications[i], falsify, seed))
        return out, truths_in(memo) if keep_truths else {}


@contextmanager
def _announced_starts(jobs: list[tuple[Theorem, int]], progress: Callable[[Theorem, int, int], None] | None):
    """While forked workers run, a thread reports each entry they start to `progress` (with the count finished so
    far), so that the display names the entry being checked instead of waiting for a whole family group; yields
    the shared count, which `_run_parallel` advances as entries finish."""
    global _STARTS
    done = [0]
    if progress is None:
        yield done
        return
    by_id = {t.id: t for t, _ in jobs}
    reader, _STARTS = os.pipe()  # before the first submit forks the workers
    writer = _STARTS

    def listen() -> None:
        with open(reader, "rb") as lines:
            for line in lines:
                if line == b"\n":  # the end
                    return
                progress(by_id[line.decode().rstrip("\n")], done[0], len(jobs))

    listener = threading.Thread(target=listen, name="verify-starts", daemon=True)
    listener.start()
    try:
        yield done
    finally:
        _STARTS = None
        try:
            os.write(writer, b"\n")
            listener.join(timeout=5)
        except OSError:  # the listener has ended already (its reader is closed)
            pass
        os.close(writer)


def _run_parallel(pool: Executor, jobs: list[tuple[Theorem, int]], groups: list[list[int]],
                  progress: Callable[[Theorem, int, int], None] | None, falsify: int,
                  seed: int, backend: str, truths: dict[tuple, Truth] | None,
                  finished: list[int] | None = None) -> list[ApplicationResult]:
    _JOBS.clear()
    _JOBS.update((t.id, t) for t, _ in jobs)
    out: list[ApplicationResult | None] = [None] * len(jobs)
    finished = [0] if finished is None else finished
    try:
        sources = _sources(jobs)
        futures = {pool.submit(_check_group, [(jobs[k][0].id, jobs[k][1]) for k in group], falsify, seed,
                               backend, truths is not None, sources): group for group in groups}
        try:
            for future in as_completed(futures):
                results, computed = future.result()
                if truths is not None:
                    truths.update(computed)
                for k, result in zip(futures[future], results, strict=True):
                    out[k] = result
                    finished[0] += 1
                    if progress:
                        progress(jobs[k][0], finished[0], len(jobs))
        except BaseException:
            for future in futures:  # do not finish the other entries first
                future.cancel()
            raise
    finally:
        _JOBS.clear()
    return [r for r in out if r is not None]


def _sources(jobs: Sequence[tuple[Theorem, int]]) -> tuple[tuple[str, str], ...]:
    """What a worker of its own must load for `jobs`: the paper files and plugins this process loaded, where a job
    is a user's paper's theorem or on a family that is not built in; else nothing."""
    own = any(t.id.split(".", 1)[0] not in BUILT_IN_KEYS or t.applications[i].family not in BUILT_IN for t, i in jobs)
    return loaded_sources() if own else ()


def falsify_application(theorem: Theorem, app: Application, result: ApplicationResult, examples: int,
                        seed: int) -> ApplicationResult:
    """Run the falsifier beside the grid: `examples` hypothesis points (a tenth of them, at least 10, on families
    whose truths are expensive; none on families whose truths are estimates, where no point can be certified VIOLATED,
    nor on an exhaustive application, whose grid is every admissible point);
    a counterexample joins the points (origin "falsifier") and the verdict. The first certified counterexample is
    kept unshrunk: shrinking re-drew costly points (58 s of the catalog's 226 s of searches went to one entry's)."""
    if examples <= 0 or get_family(app.family).estimated or app.exhaustive:  # an estimate never certifies
        return result
    if get_family(app.family).expensive:
        examples = max(10, examples // 10)
    from verify.testing.falsify import search_outcome  # hypothesis: only where a run searches (`run` imports it)

    outcome = search_outcome(theorem, app, max_examples=examples, budget_s=FALSIFY_BUDGET_S, seed=seed,
                             companions=companions(app), shrink=False)
    found = outcome.counterexample
    points = result.points
    if found is not None:
        points = points + (dataclasses.replace(found.result, origin="falsifier"),)
    verdict = aggregate(points, result.errors)
    if found is None and outcome.uncertified and verdict is Verdict.HOLDS:
        verdict = Verdict.INCONCLUSIVE  # search points that look violated, unproven
    summary = SearchSummary(examples, seed, found is not None, outcome.tried, outcome.checked,
                            sum(outcome.excluded.values()), outcome.undefined, outcome.capped, outcome.failed,
                            outcome.uncertified, outcome.undecided, outcome.failure_reasons,
                            outcome.uncertified_reasons, outcome.region)
    return dataclasses.replace(result, points=points, verdict=verdict, search=summary)
