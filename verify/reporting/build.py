"""Write a report folder atomically: results.json, report.md, index.html, plots/ and static/.

Everything is written to a hidden temporary folder beside the destination and moved into place at the end,
so a failed or interrupted run never leaves a report that looks complete.

Nothing is lost. Every report folder holds a manifest (the `.verify-report` marker: JSON listing each file verify
wrote there, with its size and SHA-256). A later report into the same folder replaces only the files its manifest
lists, and only while they are unchanged; files a user added survive, a changed listed file or a marker without a
valid manifest is refused (exit 2) before the run. Default run folders (`reports/<run-id>`) are created with
os.mkdir before the run, so two runs never share one; the `latest` link and `LATEST` note are replaced atomically
and only when verify wrote them. A destination that changed during the run (another run wrote there) is a refusal
too, and the finished report is kept beside it under a new name.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, as_completed
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from verify.backend import backend_name
from verify.errors import ParameterError
from verify.executors import fork_executor
from verify.model import Theorem
from verify.pipeline.memo import shared_truths
from verify.pipeline.truth_cache import check_cache_executor, disk_truths
from verify.reporting.columns import dump_results
from verify.reporting.html import STATIC_DIR, copy_static, render_html, single_file
from verify.reporting.markdown import render_markdown
from verify.reporting.plots import plot_sweeps
from verify.reporting.results_json import SCHEMA_VERSION, json_safe, results_document
from verify.reporting.sweeps import base_point, sweep, swept_parameters, typical_parameters, typical_point
from verify.reporting.view import QUANTITY_LABEL, TYPICAL, anchors, build_view
from verify.runner import (
    FALSIFY_EXAMPLES,
    RunResult,
    check_writable,
    family_weight,
    is_results_file,
    run,
    use_backend,
)

Progress = Callable[[str, str, int, int], None]  # (phase, label, done, total)
DEFAULT_ROOT = Path("reports")
PARALLEL_FROM = 6  # results; below this, worker processes cost more than they save


class Report(NamedTuple):
    path: Path
    run: RunResult


RUN_ID = re.compile(r"\d{8}T\d{6}Z(-\d+)?")  # a default run folder's name


def _stamp() -> str:
    """The UTC second, e.g. 20250101T120000Z: the base of a run id."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def reserve_run_dir(root: Path) -> tuple[str, Path]:
    """Create a new run folder `root/<run-id>` (the UTC second, then -2, -3, ... on a collision) with os.mkdir, which
    fails where the name exists: two runs, in one process or several, never get the same folder. Returns the id and
    the (empty) folder; a ParameterError if `root` cannot be written."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        base = _stamp()
        for k in itertools.count(1):
            run_id = base if k == 1 else f"{base}-{k}"
            try:
                os.mkdir(root / run_id)
            except FileExistsError:
                continue
            return run_id, root / run_id
    except OSError as err:
        raise ParameterError(f"reports folder {root} cannot be written: {_why(err)}") from None
    raise AssertionError("unreachable")  # pragma: no cover


def _why(err: OSError) -> str:
    where = f" ({err.filename})" if err.filename else ""
    return f"{err.strerror or err}{where}"


class _Serial(Executor):
    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future


_THEOREMS: dict[str, Theorem] = {}  # the run's theorems by id while a report is written (inherited by workers)


def _figure(theorem_id: str, family: str, base: dict[str, float], stem: Path, typical: bool = False) -> list[dict]:
    """Sweep one result around `base` (along K, alpha and n; the first of them only at a `typical` point), draw
    `stem`.svg when some sweep has two points; return the sweeps. Call it inside `shared_truths()`: the sweeps share
    the base point's truths, their companions' and their bindings', and the figures of one family share theirs."""
    theorem = _THEOREMS[theorem_id]
    app = theorem.application(family)
    parameters = typical_parameters(app) if typical else swept_parameters(app)
    sweeps = json_safe([sweep(theorem, app, base, p).to_dict() for p in parameters])
    plottable = [s for s in sweeps if len(s["values"]) >= 2]
    if plottable:
        ylabel = QUANTITY_LABEL.get(theorem.quantity.value, theorem.quantity.value)
        plot_sweeps(plottable, f"{theorem_id} — {theorem.title}", ylabel, stem)
    return sweeps


class _FigureJob(NamedTuple):
    """One figure of a report: its file stem's name (in the report's plots folder), and what `_figure` needs."""

    name: str
    theorem: str
    family: str
    base: dict[str, float]
    typical: bool


def _figures(jobs: Sequence[_FigureJob], plots: Path) -> list[list[dict]]:
    """The figures of one family in one task, drawn into `plots`, sharing one truth memo (their sweeps meet at many
    points: a figure each with its own memo recomputed a quarter of the report's sweep truths), which starts from
    the run's truths (`RunResult.truths`: a sweep passes through grid and falsifier points)."""
    with shared_truths():
        return [_figure(j.theorem, j.family, j.base, plots / j.name, j.typical) for j in jobs]


def _by_family(jobs: Sequence[_FigureJob]) -> list[list[_FigureJob]]:
    """The figure jobs grouped by family, costliest first (longest-processing-time order balances the workers): cost
    ~ figures times `family_weight`, as the run weighs its entries. By count alone, the Monte-Carlo NMF family's
    three figures (a fifth of the catalog's figure time) started last."""
    groups: dict[str, list[_FigureJob]] = {}
    for j in jobs:
        groups.setdefault(j.family, []).append(j)
    return sorted(groups.values(), key=lambda g: len(g) * family_weight(g[0].family), reverse=True)


def _write(outcome: RunResult, folder: Path, run_id: str | None, progress: Progress, workers: int | None,
           one_file: bool = False) -> None:
    data = results_document(outcome, run_id)
    _THEOREMS.clear()
    _THEOREMS.update((t.id, t) for t in outcome.theorems)
    stems = anchors(data["results"])
    plots = folder / "plots"
    plots.mkdir()
    sweeps: dict[str, list[dict]] = {}
    try:
        figures: list[_FigureJob] = []
        for i, r in enumerate(outcome.results):
            theorem = _THEOREMS[r.theorem]
            app = theorem.application(r.family)
            base = base_point(theorem, app, r) if app else None
            if base is not None:
                figures.append(_FigureJob(stems[i], r.theorem, r.family, base, False))
            typical = typical_point(app, r) if base is not None else None
            if typical is not None:
                name = f"{stems[i]}{TYPICAL}"
                figures.append(_FigureJob(name, r.theorem, r.family, typical, True))
        parallel = len(outcome.results) >= PARALLEL_FROM
        groups = _by_family(figures)
        pool = (fork_executor(workers, len(groups), outcome.backend) if parallel else None) or _Serial()
        with use_backend(outcome.backend), shared_truths(outcome.truths), pool:  # forked workers inherit the memo
            jobs = {pool.submit(_figures, group, plots): group for group in groups}
            try:
                done = 0
                for job in as_completed(jobs):
                    for figure, swept in zip(jobs[job], job.result(), strict=True):
                        sweeps[figure.name] = swept
                        done += 1
                        progress("figures", figure.theorem, done, len(figures))
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)  # do not finish the other figures first
                raise
    finally:
        _THEOREMS.clear()
    for entry, stem in zip(data["results"], stems, strict=True):
        entry["figure"] = None
        if (plots / f"{stem}.svg").exists():
            entry["figure"] = {"svg": f"plots/{stem}.svg", "data": f"plots/{stem}.json"}
            typical = f"{stem}{TYPICAL}"
            if (plots / f"{typical}.svg").exists():
                entry["figure"]["typical"] = {"svg": f"plots/{typical}.svg", "data": f"plots/{typical}.json"}
            for name in (stem, typical):
                if name in sweeps and (plots / f"{name}.svg").exists():
                    (plots / f"{name}.json").write_text(json.dumps(sweeps[name], separators=(",", ":"),
                                                                   ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / "results.json").write_text(dump_results(data), encoding="utf-8")
    view = build_view(data, sweeps)
    (folder / "report.md").write_text(render_markdown(view), encoding="utf-8")
    page = render_html(view, SCHEMA_VERSION, folder)
    (folder / "index.html").write_text(page, encoding="utf-8")
    copy_static(folder)
    if one_file:
        (folder / "report.html").write_text(single_file(page, folder), encoding="utf-8")


MARKER = ".verify-report"  # the manifest of the files verify wrote in a report folder
TOOL = "dp-verify"
_HEX = frozenset("0123456789abcdef")
_ANY = object()  # write_report's `expect`: whatever the destination holds


class Manifest(NamedTuple):
    """A report folder's marker: the files verify wrote there (relative POSIX path -> {"size", "sha256"}) and, while
    a new report is being moved in, the files of that one (`pending`); `text` is the marker's text."""

    files: dict[str, dict]
    pending: dict[str, dict]
    text: str


class _Dest(NamedTuple):
    manifest: Manifest | None  # None: the destination is absent or an empty folder
    owned: dict[str, dict]  # the listed files present now (unchanged: each matches its record) -> that record
    token: str | None  # what the destination holds: the marker's text (None: absent or empty)


class _Refused(ParameterError):
    """The destination is refused when the finished report is to be moved in; nothing was changed there."""


def _digest(path: Path) -> dict:
    h = hashlib.sha256()
    size = 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
    return {"size": size, "sha256": h.hexdigest()}


def _inventory(folder: Path) -> dict[str, dict]:
    """Every file under `folder` but the marker, by relative POSIX path, with its size and SHA-256."""
    out = {}
    for dirpath, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            rel = (Path(dirpath) / name).relative_to(folder).as_posix()
            if rel != MARKER:
                out[rel] = _digest(folder / rel)
    return out


def _safe_rel(rel: object) -> bool:
    """A relative POSIX path that stays inside its folder: no absolute path, no '..', '.', empty part or backslash."""
    if not isinstance(rel, str) or not rel or rel == MARKER or "\\" in rel or "\0" in rel or rel.startswith("/"):
        return False
    parts = rel.split("/")
    return all(p not in ("", ".", "..") for p in parts) and ":" not in parts[0]


def _valid_record(rec: object) -> bool:
    return (isinstance(rec, dict) and type(rec.get("size")) is int and rec["size"] >= 0
            and isinstance(rec.get("sha256"), str) and len(rec["sha256"]) == 64 and set(rec["sha256"]) <= _HEX)


def read_manifest(folder: Path | str) -> Manifest | None:
    """The manifest in `folder`'s marker, or None: no marker, a link, or not a valid manifest (a bare marker, one of
    an older verify, one that lists a path outside the folder). Only a valid manifest lets verify replace files."""
    marker = Path(folder) / MARKER
    try:
        if marker.is_symlink() or not marker.is_file():
            return None
        text = marker.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("tool") != TOOL:
        return None
    files, pending = data.get("files"), data.get("pending", {})
    if not isinstance(files, dict) or not isinstance(pending, dict):
        return None
    if not all(_safe_rel(rel) and _valid_record(rec) for m in (files, pending) for rel, rec in m.items()):
        return None
    return Manifest(files, pending, text)


def _marker_text(run_id: str, files: Mapping[str, dict], pending: Mapping[str, dict] | None = None) -> str:
    data = {"tool": TOOL, "schema_version": SCHEMA_VERSION, "run_id": run_id, "write": uuid.uuid4().hex,
            "about": "the files verify wrote in this folder; a later report here replaces only these, and only "
                     "while unchanged", "files": dict(files)}
    if pending is not None:
        data.update(pending=dict(pending), complete=False)
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def is_report(path: Path) -> bool:
    """True if `path` is a report folder this tool wrote: it holds a valid manifest (or, written before the marker
    existed, results.json with a schema_version beside report.md and index.html)."""
    if not path.is_dir() or path.is_symlink():
        return False
    if read_manifest(path) is not None:
        return True
    return all((path / f).is_file() for f in ("report.md", "index.html")) and is_results_file(path / "results.json")


def _owned(out_dir: Path, manifest: Manifest, shown: str) -> dict[str, dict]:
    """The files of `manifest` present in `out_dir`, each with the record it matches; a ParameterError if one was
    changed, or a folder on its path is now a link or a file (verify would touch what it did not write)."""
    owned = {}
    for rel in sorted(set(manifest.files) | set(manifest.pending)):
        path, present = out_dir, True
        for part in rel.split("/")[:-1]:
            path = path / part
            if not os.path.lexists(path):
                present = False
                break
            if path.is_symlink() or not path.is_dir():
                raise ParameterError(f"--out {shown}: {path.relative_to(out_dir).as_posix()} is no longer the folder "
                                     "verify made; verify never touches files it did not create: move it away or "
                                     "choose another folder")
        target = out_dir / rel
        if not present or not os.path.lexists(target):
            continue  # a listed file the user removed: nothing to replace
        records = [m[rel] for m in (manifest.files, manifest.pending) if rel in m]
        if target.is_symlink() or not target.is_file():
            raise ParameterError(f"--out {shown}: {rel} is no longer the file verify wrote; verify never overwrites "
                                 "files it did not create: move it away or choose another folder")
        size = target.stat().st_size
        digest = _digest(target) if any(r["size"] == size for r in records) else None
        match = next((r for r in records if digest is not None and r["sha256"] == digest["sha256"]), None)
        if match is None:
            raise ParameterError(f"--out {shown}: {rel} was changed after verify wrote it; verify never overwrites "
                                 "files it did not create: move it away or choose another folder")
        owned[rel] = match
    return owned


def _inspect(out_dir: Path) -> _Dest:
    """What `out_dir` holds, refused (ParameterError) unless it is absent, an empty folder or a report with a valid
    manifest whose files are unchanged: never a file, a link, a folder of someone's files, a bare marker, the current
    folder or one of its parents."""
    shown = str(out_dir)
    if out_dir.is_symlink():
        raise ParameterError(f"--out {shown} is a symbolic link; give a new folder or a previous report folder")
    resolved = out_dir.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents or resolved == Path.home().resolve():
        raise ParameterError(f"--out {shown} is the current folder, one of its parents or the home folder; give a new "
                             "folder for the report")
    if not os.path.lexists(out_dir):
        return _Dest(None, {}, None)
    if not out_dir.is_dir():
        raise ParameterError(f"--out {shown} is a file; verify never overwrites files it did not create")
    manifest = read_manifest(out_dir)
    if manifest is None:
        try:
            entries = {p.name for p in out_dir.iterdir()}
        except OSError as err:
            raise ParameterError(f"--out {shown} cannot be read: {_why(err)}") from None
        if not entries:
            return _Dest(None, {}, None)
        if MARKER in entries:
            raise ParameterError(f"--out {shown} holds a {MARKER} file but no valid manifest of the files verify "
                                 "wrote (a bare marker, or a report of an older verify); verify never deletes files "
                                 "it cannot prove it wrote: remove the folder yourself or choose another")
        raise ParameterError(f"--out {shown} is a folder that is not empty and not a verify report; verify never "
                             "deletes files it did not create")
    return _Dest(manifest, _owned(out_dir, manifest, shown), manifest.text)


def _clash(out_dir: Path, rels: Iterable[str], owned: Mapping[str, dict]) -> str | None:
    """The first path that putting the files `rels` in `out_dir` would overwrite although verify did not write it
    there (or a file or link where a folder must go); None if there is none."""
    for rel in sorted(rels):
        parts = rel.split("/")
        path = out_dir
        for i, part in enumerate(parts):
            path = path / part
            if not os.path.lexists(path):
                break
            if i == len(parts) - 1:
                if rel not in owned:
                    return rel
            elif path.is_symlink() or not path.is_dir():
                return "/".join(parts[:i + 1])
    return None


def _fixed_files() -> list[str]:
    """The files every report has, whatever its results: results.json, report.md, index.html and static/."""
    static = [(Path(d) / f).relative_to(STATIC_DIR).as_posix() for d, _, files in os.walk(STATIC_DIR) for f in files]
    return ["results.json", "report.md", "index.html", *(f"static/{rel}" for rel in static)]


def _clash_message(shown: str, clash: str) -> str:
    return (f"--out {shown}: {clash} is not a file verify wrote there and the new report would overwrite it; verify "
            "never overwrites files it did not create: move it away or choose another folder")


def check_out_dir(out_dir: Path | str) -> Path:
    """The report destination, refused (ParameterError, before any work) unless it is absent, an empty folder or a
    previous report with a valid manifest whose listed files are unchanged, where the report's fixed files would not
    overwrite a user's, and where files can be created: never a file, a link, a folder of someone's files, a bare
    marker, the current folder or one of its parents."""
    out_dir = Path(out_dir)
    _check_out(out_dir)
    return out_dir


def _check_out(out_dir: Path) -> _Dest:
    dest = _inspect(out_dir)
    clash = _clash(out_dir, _fixed_files(), dest.owned)
    plots = out_dir / "plots"
    if clash is None and os.path.lexists(plots) and (plots.is_symlink() or not plots.is_dir()):
        clash = "plots"
    if clash is not None:
        raise ParameterError(_clash_message(str(out_dir), clash))
    check_writable(out_dir.parent, f"--out {out_dir}")
    if os.path.lexists(out_dir):
        check_writable(out_dir, f"--out {out_dir}")
    return dest


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock (flock) on `directory` where the platform has one: verify processes that move reports
    into one folder, or update its `latest`, take turns. Best effort: without flock, no lock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        fcntl = None
    fd = None
    if fcntl is not None:
        try:
            fd = os.open(directory, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _move_into_place(folder: Path, out_dir: Path, files: Mapping[str, dict], expect: object = _ANY) -> None:
    """Put the finished report `folder` (whose marker lists `files`) at `out_dir`: a rename where that is absent or
    an empty folder; else, in a previous report, replace exactly the files its manifest lists (checked again, under
    a lock). `expect`: the token `out_dir` had before the run; another one means another run wrote there meanwhile,
    and `_Refused` is raised without changing anything (as for any refusal)."""
    with _locked(out_dir.parent):
        try:
            dest = _inspect(out_dir)
        except ParameterError as err:
            raise _Refused(str(err)) from None
        if expect is not _ANY and dest.token != expect:
            raise _Refused(f"--out {out_dir} was written by another verify run while this one ran; verify never "
                           "replaces a report silently")
        clash = _clash(out_dir, files, dest.owned)
        if clash is not None:
            raise _Refused(_clash_message(str(out_dir), clash))
        if dest.manifest is None:
            try:
                os.rename(folder, out_dir)  # atomic; replaces nothing but an empty folder (else it fails)
                return
            except OSError:
                if not out_dir.is_dir():
                    raise
        _merge(folder, out_dir, files, dest)


def _merge(folder: Path, out_dir: Path, files: Mapping[str, dict], dest: _Dest) -> None:
    """Move the files of `folder` into the report folder `out_dir`, replacing only the files `dest` found verify's.
    The marker first lists both versions (an interrupted move is still a folder of known files), last the new ones;
    files a user added, and folders holding them, stay."""
    marker = out_dir / MARKER
    run_id = json.loads((folder / MARKER).read_text(encoding="utf-8")).get("run_id") or out_dir.name
    try:
        _replace_text(marker, _marker_text(run_id, dest.owned, files))
        for rel in sorted(files):
            target = out_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(folder / rel, target)
        for rel in sorted(set(dest.owned) - set(files)):
            target = out_dir / rel
            try:
                target.unlink()
            except FileNotFoundError:
                pass
            for parent in target.relative_to(out_dir).parents:
                if parent == Path("."):
                    break
                try:
                    (out_dir / parent).rmdir()  # only if empty: never a folder with a user's files
                except OSError:
                    break
        os.replace(folder / MARKER, marker)
    except OSError as err:
        raise ParameterError(f"cannot finish writing the report into {out_dir}: {_why(err)}; its manifest lists "
                             "both versions, so the next report there replaces them") from None
    shutil.rmtree(folder, ignore_errors=True)  # what is left of the temporary folder: empty folders


def _replace_text(path: Path, text: str) -> None:
    """Write `text` to `path` atomically: a new temporary file beside it, then os.replace."""
    tmp = path.parent / f"{path.name}.{uuid.uuid4().hex[:12]}.partial"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _keep_aside(folder: Path, out_dir: Path, run_id: str) -> Path:
    """Rename the finished report `folder` to a new folder `<out_dir>.<run_id>[-k]` beside `out_dir` (created with
    os.mkdir first, so that nothing is replaced); `folder` itself if that fails."""
    for k in itertools.count(1):
        cand = out_dir.parent / f"{out_dir.name}.{run_id}{'' if k == 1 else f'-{k}'}"
        try:
            os.mkdir(cand)
        except FileExistsError:
            continue
        except OSError:
            return folder
        try:
            os.rename(folder, cand)
            return cand
        except OSError:
            try:
                cand.rmdir()
            except OSError:
                pass
            return folder
    raise AssertionError("unreachable")  # pragma: no cover


def write_report(outcome: RunResult, out_dir: Path | str, *, run_id: str | None = None,
                 progress: Progress | None = None, workers: int | None = None, expect: object = _ANY,
                 single_file: bool = False) -> Path:
    """Write the report of `outcome` to `out_dir` atomically; return `out_dir`.

    `out_dir` may be absent, an empty folder or a previous report: there only the files its manifest lists are
    replaced (see the module doc); anything else is refused with a ParameterError, and the finished report is then
    kept beside it (the message says where). Any OSError is a one-line ParameterError.
    `run_id` is recorded under results.json's `timing` (default: the folder's name); `workers` caps the
    processes that compute the sweeps and draw the plots (default: up to 4 for large reports; 1: this process).
    `single_file` also writes report.html, the report in one self-contained file (styles, scripts, fonts and plots
    inlined).
    """
    out_dir = Path(out_dir)
    run_id = run_id or out_dir.name
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=out_dir.parent))
        folder.chmod(0o755)  # mkdtemp makes it private; a report is meant to be read
    except OSError as err:
        raise ParameterError(f"cannot write the report to {out_dir}: {_why(err)}") from None
    try:
        _write(outcome, folder, run_id, progress or (lambda *_: None), workers, single_file)
        files = _inventory(folder)
        (folder / MARKER).write_text(_marker_text(run_id, files), encoding="utf-8")
        _move_into_place(folder, out_dir, files, expect)
    except _Refused as err:
        kept = _keep_aside(folder, out_dir, run_id)
        raise ParameterError(f"{err}; this run's report is at {kept}") from None
    except BaseException as err:
        shutil.rmtree(folder, ignore_errors=True)
        if isinstance(err, OSError):
            raise ParameterError(f"cannot write the report to {out_dir}: {_why(err)}") from None
        raise
    return out_dir


def _our_link(link: Path) -> bool:
    """True if `link` is a `latest` link verify made: a symbolic link to one plain name, a report folder beside it (a
    user's link to a folder of their own was replaced), or, where that folder is gone, named as verify names runs."""
    try:
        target = os.readlink(link)
    except OSError:
        return False
    if "/" in target or "\\" in target or target in ("", ".", ".."):
        return False
    if not (link.parent / target).exists():  # dangling: ours if it names a run folder as verify names them
        return bool(RUN_ID.fullmatch(target))
    return is_report(link.parent / target)


def update_latest(root: Path, target: Path) -> Path:
    """Point `root/latest` at `target` (a relative symlink, replaced atomically); if symlinks fail, write the
    target's name to `root/LATEST` instead (a temporary file, replaced atomically). Neither ever replaces something
    verify did not write (checked again under a lock on `root`). Returns the link or file written."""
    link = root / "latest"
    note = root / "LATEST"
    with _locked(root):
        if os.path.lexists(link) and not _our_link(link):
            raise ParameterError(f"{link} exists and is not the link verify keeps; move it away to update it")
        if os.path.lexists(note) and not _our_note(note, root):
            raise ParameterError(f"{note} exists and is not the note verify keeps; move it away to update it")
        tmp = root / f".latest-{uuid.uuid4().hex[:12]}"
        try:
            os.symlink(os.path.relpath(target, root), tmp, target_is_directory=True)
            os.replace(tmp, link)
        except OSError:
            if tmp.is_symlink():
                tmp.unlink()
            try:
                _replace_text(note, os.path.relpath(target, root) + "\n")
            except OSError as err:
                raise ParameterError(f"cannot update {note}: {_why(err)}") from None
            return note
        if os.path.lexists(note) and _our_note(note, root):
            try:
                note.unlink()  # a stale fallback (ours) would contradict the link
            except FileNotFoundError:
                pass
    return link


def _our_note(note: Path, root: Path) -> bool:
    """True if `note` is a LATEST file this tool wrote: one line naming a report folder under `root` (or a run
    folder's name, whose report may since have been removed)."""
    try:
        if note.is_symlink() or not note.is_file():
            return False
        lines = note.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    if len(lines) != 1 or not _safe_rel(lines[0]) or "/" in lines[0]:
        return False
    return bool(RUN_ID.fullmatch(lines[0])) or is_report(root / lines[0])


def build_report(selectors: Sequence[str] = (), out: Path | str | None = None, *, root: Path | str = DEFAULT_ROOT,
                 seed: int = 0, backend: str | None = None, progress: Progress | None = None,
                 workers: int | None = None, falsify: int = FALSIFY_EXAMPLES, executor: str = "local",
                 scheduler: str | None = None, single_file: bool = False, cache: Path | str | None = None,
                 cache_size: int | None = None) -> Report:
    """Run the checks and write their report.

    Without `out` the report goes to `root/<run-id>/` and `root/latest` is pointed at it once it is complete;
    with `out` it goes there and `latest` is left alone. `workers` (default: up to 4, one per CPU) forked
    processes check the entries and draw the figures; `executor="dask"` checks them on a Dask cluster instead
    (verify.executors), the figures are still drawn here. `cache`: a folder of truths kept across runs, used by the
    checks and the figures (pipeline.truth_cache), capped at `cache_size` bytes (None: env VERIFY_CACHE_SIZE, else
    1 GiB).
    """
    root = Path(root)
    if cache is not None and out is not None and Path(cache).resolve().is_relative_to(Path(out).resolve()):
        raise ParameterError(f"--cache {cache} is inside --out {out}: the report's folder must hold the report alone; "
                             "keep the cache beside it")
    if out is not None:
        dest_dir = Path(out)
        expect = _check_out(dest_dir).token  # before the run: a refused destination costs nothing
        run_id = _stamp()
        reserved = None
    else:
        link, note = root / "latest", root / "LATEST"
        for name, ours in ((link, _our_link), (note, lambda p: _our_note(p, root))):
            if os.path.lexists(name) and not ours(name):
                raise ParameterError(f"{name} exists and is not one verify keeps; move it away first")
        made_root = not os.path.lexists(root)
        run_id, reserved = reserve_run_dir(root)  # a folder of its own, before the run
        dest_dir, expect = reserved, None
    report = progress or (lambda *_: None)
    try:
        check_cache_executor(cache, executor)
        with disk_truths(cache, backend_name(backend), cache_size):
            outcome = run(selectors, lambda t, i, n: report("checks", t.id, i, n), seed=seed, backend=backend,
                          workers=workers, falsify=falsify, executor=executor, scheduler=scheduler, keep_truths=True)
            path = write_report(outcome, dest_dir, run_id=run_id, progress=progress, workers=workers,
                                expect=expect, single_file=single_file)
    except BaseException:
        if reserved is not None:
            for empty in (reserved, root) if made_root else (reserved,):
                try:
                    empty.rmdir()  # only if still empty
                except OSError:
                    pass
        raise
    if out is None:
        update_latest(root, path)
    return Report(path, outcome)
