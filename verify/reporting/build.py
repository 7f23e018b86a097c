"""Write a report folder atomically: results.json, report.md, index.html, plots/ and static/.

Everything is written to a hidden temporary folder beside the destination and moved into place at the end,
so a failed or interrupted run never leaves a report that looks complete.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, as_completed
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from verify.errors import ParameterError
from verify.executors import fork_executor
from verify.model import Theorem
from verify.reporting.columns import dump_results
from verify.reporting.html import copy_static, render_html
from verify.reporting.markdown import render_markdown
from verify.reporting.plots import plot_sweeps
from verify.reporting.sweeps import base_point, sweep, swept_parameters
from verify.reporting.view import QUANTITY_LABEL, anchors, build_view
from verify.runner import (
    FALSIFY_EXAMPLES,
    SCHEMA_VERSION,
    RunResult,
    is_results_file,
    json_safe,
    run,
    use_backend,
)

Progress = Callable[[str, str, int, int], None]  # (phase, label, done, total)
DEFAULT_ROOT = Path("reports")
PARALLEL_FROM = 6  # results; below this, worker processes cost more than they save


class Report(NamedTuple):
    path: Path
    run: RunResult


def new_run_id(root: Path) -> str:
    """A timestamp-based id (UTC, e.g. 20250101T120000Z) not yet used under `root`."""
    base = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_id, k = base, 1
    while (root / run_id).exists():
        k += 1
        run_id = f"{base}-{k}"
    return run_id


class _Serial(Executor):
    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


_THEOREMS: dict[str, Theorem] = {}  # the run's theorems by id while a report is written (inherited by workers)


def _figure(theorem_id: str, family: str, base: dict[str, float], stem: Path) -> list[dict]:
    """Sweep one result around `base`, draw `stem`.png/.svg when some sweep has two points; return the sweeps."""
    theorem = _THEOREMS[theorem_id]
    app = theorem.application(family)
    sweeps = json_safe([sweep(theorem, app, base, p).to_dict() for p in swept_parameters(app)])
    plottable = [s for s in sweeps if len(s["values"]) >= 2]
    if plottable:
        ylabel = QUANTITY_LABEL.get(theorem.quantity.value, theorem.quantity.value)
        plot_sweeps(plottable, f"{theorem_id} — {theorem.title}", ylabel, stem)
    return sweeps


def _write(outcome: RunResult, folder: Path, run_id: str | None, progress: Progress, workers: int | None) -> None:
    data = outcome.to_dict(run_id)
    _THEOREMS.clear()
    _THEOREMS.update((t.id, t) for t in outcome.theorems)
    stems = anchors(data["results"])
    plots = folder / "plots"
    plots.mkdir()
    jobs: dict[Future, int] = {}
    parallel = len(outcome.results) >= PARALLEL_FROM
    pool = (fork_executor(workers, len(outcome.results), outcome.backend) if parallel else None) or _Serial()
    try:
        with use_backend(outcome.backend), pool:
            for i, r in enumerate(outcome.results):
                theorem = _THEOREMS[r.theorem]
                app = theorem.application(r.family)
                base = base_point(theorem, app, r) if app else None
                if base is not None:
                    jobs[pool.submit(_figure, r.theorem, r.family, base, plots / stems[i])] = i
            sweeps: dict[str, list[dict]] = {}
            try:
                for done, job in enumerate(as_completed(jobs), 1):
                    i = jobs[job]
                    sweeps[stems[i]] = job.result()
                    progress("figures", outcome.results[i].theorem, done, len(jobs))
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # do not finish the other figures first
                raise
    finally:
        _THEOREMS.clear()
    for entry, stem in zip(data["results"], stems, strict=True):
        entry["figure"] = None
        if (plots / f"{stem}.png").exists():
            entry["figure"] = {"png": f"plots/{stem}.png", "svg": f"plots/{stem}.svg", "data": f"plots/{stem}.json"}
            (plots / f"{stem}.json").write_text(json.dumps(sweeps[stem], indent=1, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    (folder / "results.json").write_text(dump_results(data), encoding="utf-8")
    view = build_view(data, sweeps)
    (folder / "report.md").write_text(render_markdown(view), encoding="utf-8")
    (folder / "index.html").write_text(render_html(view, SCHEMA_VERSION), encoding="utf-8")
    copy_static(folder)


MARKER = ".verify-report"  # written in every report folder: only such folders (or empty ones) are ever replaced


def is_report(path: Path) -> bool:
    """True if `path` is a report folder this tool wrote: it holds the marker file (or, written before the marker
    existed, results.json with a schema_version beside report.md and index.html)."""
    if not path.is_dir() or path.is_symlink():
        return False
    if (path / MARKER).is_file():
        return True
    return all((path / f).is_file() for f in ("report.md", "index.html")) and is_results_file(path / "results.json")


def check_out_dir(out_dir: Path | str) -> Path:
    """The report destination, refused (ParameterError, before any work) unless it is absent, an empty folder or a
    previous report: never a file, a link, a folder of someone's files, the current folder or one of its parents."""
    out_dir = Path(out_dir)
    shown = str(out_dir)
    if out_dir.is_symlink():
        raise ParameterError(f"--out {shown} is a symbolic link; give a new folder or a previous report folder")
    resolved = out_dir.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents or resolved == Path.home().resolve():
        raise ParameterError(f"--out {shown} is the current folder, one of its parents or the home folder; give a new "
                             "folder for the report")
    if out_dir.exists():
        if not out_dir.is_dir():
            raise ParameterError(f"--out {shown} is a file; verify never overwrites files it did not create")
        if not is_report(out_dir) and any(out_dir.iterdir()):
            raise ParameterError(f"--out {shown} is a folder that is not empty and not a verify report; verify never "
                                 "deletes files it did not create")
    return out_dir


def _move_into_place(folder: Path, out_dir: Path) -> None:
    """Put the finished report at `out_dir`, replacing only an empty folder or a previous report (checked again)."""
    check_out_dir(out_dir)
    old = None
    if out_dir.exists():
        old = out_dir.parent / f".{out_dir.name}.old-{uuid.uuid4().hex[:8]}"
        os.replace(out_dir, old)
    os.replace(folder, out_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)  # an empty folder or a report this tool wrote


def write_report(outcome: RunResult, out_dir: Path | str, *, run_id: str | None = None,
                 progress: Progress | None = None, workers: int | None = None) -> Path:
    """Write the report of `outcome` to `out_dir` (replacing it) atomically; return `out_dir`.

    `run_id` is recorded under results.json's `timing` (default: the folder's name); `workers` caps the
    processes that compute the sweeps and draw the plots (default: up to 4 for large reports; 1: this process).
    """
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
    folder.chmod(0o755)  # mkdtemp makes it private; a report is meant to be read
    try:
        _write(outcome, folder, run_id or out_dir.name, progress or (lambda *_: None), workers)
        (folder / MARKER).write_text(json.dumps({"tool": "dp-verify", "schema_version": SCHEMA_VERSION,
                                                 "run_id": run_id or out_dir.name}) + "\n", encoding="utf-8")
        _move_into_place(folder, out_dir)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return out_dir


def update_latest(root: Path, target: Path) -> Path:
    """Point `root/latest` at `target` (a relative symlink, replaced atomically); if symlinks fail, write the
    target's name to `root/LATEST` instead. Returns the link or file written."""
    link = root / "latest"
    note = root / "LATEST"
    if link.exists() and not link.is_symlink():
        raise ParameterError(f"{link} exists and is not the link verify keeps; move it away to update it")
    if note.exists() and not _our_note(note, root):
        raise ParameterError(f"{note} exists and is not the note verify keeps; move it away to update it")
    tmp = root / f".latest-{uuid.uuid4().hex[:8]}"
    try:
        os.symlink(os.path.relpath(target, root), tmp, target_is_directory=True)
        os.replace(tmp, link)
    except OSError:
        if tmp.is_symlink():
            tmp.unlink()
        tmp_note = root / f".LATEST-{uuid.uuid4().hex[:8]}"
        tmp_note.write_text(os.path.relpath(target, root) + "\n", encoding="utf-8")
        os.replace(tmp_note, note)
        return note
    if note.exists():
        note.unlink()  # a stale fallback (ours, checked above) would contradict the link
    return link


def _our_note(note: Path, root: Path) -> bool:
    """True if `note` is a LATEST file this tool wrote: one line naming a report folder under `root`."""
    try:
        lines = note.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return note.is_file() and len(lines) == 1 and is_report(root / lines[0])


def build_report(selectors: Sequence[str] = (), out: Path | str | None = None, *, root: Path | str = DEFAULT_ROOT,
                 seed: int = 0, backend: str | None = None, progress: Progress | None = None,
                 workers: int | None = None, falsify: int = FALSIFY_EXAMPLES, executor: str = "local",
                 scheduler: str | None = None) -> Report:
    """Run the checks and write their report.

    Without `out` the report goes to `root/<run-id>/` and `root/latest` is pointed at it once it is complete;
    with `out` it goes there and `latest` is left alone. `workers` (default: up to 4, one per CPU) forked
    processes check the entries and draw the figures; `executor="dask"` checks them on a Dask cluster instead
    (verify.executors), the figures are still drawn here.
    """
    root = Path(root)
    if out is not None:
        check_out_dir(out)  # before the run: a refused destination costs nothing
    else:
        for name in ("latest", "LATEST"):
            if (root / name).exists() and not (root / name).is_symlink() and not (
                    name == "LATEST" and _our_note(root / name, root)):
                raise ParameterError(f"{root / name} exists and is not one verify keeps; move it away first")
    run_id = new_run_id(root)
    report = progress or (lambda *_: None)
    outcome = run(selectors, lambda t, i, n: report("checks", t.id, i, n), seed=seed, backend=backend,
                  workers=workers, falsify=falsify, executor=executor, scheduler=scheduler)
    path = write_report(outcome, Path(out) if out is not None else root / run_id, run_id=run_id,
                        progress=progress, workers=workers)
    if out is None:
        update_latest(root, path)
    return Report(path, outcome)
