"""Issue 21, section 3 ("Nothing lost"), attacked with generated inputs: verify never deletes or overwrites a file
it did not write, concurrent runs never silently replace each other, an unwritable destination is refused before
the run, and a run records the versions (and git commit) it ran with.

Cost: one real run of one cheap entry (shared), about eight real report writes, two pairs of forked report
processes; the rest is refused before any checking (the run is replaced by a function that fails the test)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verify.reporting.results_json as results_json
from verify import runner
from verify.cli import main
from verify.reporting.results_json import results_document
from verify.runner import RunResult

from .conftest import needs_report_extra

ONE = ("wang2021.zcdp_to_dp",)  # one entry, one family, one cheap figure
ARGS = ["--only", *ONE, "--falsify", "0", "--quiet", "--workers", "1"]
FAST = settings(deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _snapshot(root: Path) -> dict[str, object]:
    """Every file (bytes), link (target) and folder under `root`."""
    out: dict[str, object] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = path.read_bytes()
    return out


def _no_run(*_args, **_kwargs):
    raise AssertionError("the run started although the destination should have been refused first")


@pytest.fixture(scope="module")
def outcome() -> RunResult:
    return runner.run(ONE, falsify=0, workers=1)


@pytest.fixture(scope="module")
def template(tmp_path_factory, outcome) -> Path:
    """A previous report (written by verify), copied for each example."""
    needs_report_extra()
    from verify.reporting.build import write_report

    return write_report(outcome, tmp_path_factory.mktemp("template") / "report", run_id="previous", workers=1)


def _listed(report: Path) -> dict[str, dict]:
    from verify.reporting.build import read_manifest

    manifest = read_manifest(report)
    assert manifest is not None and not manifest.pending
    return manifest.files


# ---- 1. a previous report: only the files its manifest lists are replaced -------------------------------------

PART = st.sampled_from(["plots", "static", "katex", "fonts", "notes.txt", "results.json", "report.md", "index.html",
                        "data.csv", ".hidden", "sub", "wang2021.zcdp_to_dp.png", ".verify-report", "x y"])
USER_TREE = st.lists(st.tuples(st.lists(PART, min_size=1, max_size=4), st.binary(max_size=64)), max_size=8)


def _plant(out: Path, listed: dict, tree) -> dict[str, bytes]:
    """Put the user's files of `tree` in `out` wherever a user could add a file (not over one of verify's, not
    where a file already blocks the path); return them by relative path."""
    planted = {}
    for parts, content in tree:
        rel = "/".join(parts)
        if rel == ".verify-report" or rel in listed or any(p.startswith(rel + "/") for p in listed):
            continue
        path = out / rel
        if any((out / "/".join(parts[:i])).is_file() for i in range(1, len(parts))) or path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        planted[rel] = content
    return planted


@settings(FAST, max_examples=6)
@given(tree=USER_TREE, removed=st.sets(st.sampled_from(["report.md", "index.html", "static/report.css"]),
                                       max_size=2))
def test_user_files_in_a_previous_report_survive_a_rewrite(tmp_path_factory, template, outcome, tree, removed):
    from verify.reporting.build import write_report

    root = tmp_path_factory.mktemp("rewrite")
    out = root / "report"
    shutil.copytree(template, out)
    listed = _listed(out)
    planted = _plant(out, listed, tree)
    for rel in removed:  # a user may delete verify's files too; they are written again
        (out / rel).unlink()
    write_report(outcome, out, run_id="again", workers=1)
    for rel, content in planted.items():
        assert (out / rel).read_bytes() == content, rel
    now = _listed(out)
    assert set(now) == set(listed) and not set(now) & set(planted)  # the same report files; the user's not listed
    assert json.loads((out / ".verify-report").read_text())["run_id"] == "again"
    assert json.loads((out / "results.json").read_text())["timing"]["run_id"] == "again"
    assert os.listdir(root) == ["report"]  # no temporary folder, no probe file left behind


def test_cli_rewrite_keeps_user_files_and_drops_only_stale_report_files(tmp_path, template, capsys):
    out = tmp_path / "report"
    shutil.copytree(template, out)
    stale = out / "plots" / "old-entry.png"  # a figure of the previous report that the new one does not draw
    stale.write_bytes(b"old figure")
    marker = json.loads((out / ".verify-report").read_text())
    marker["files"]["plots/old-entry.png"] = {"size": 10, "sha256": hashlib.sha256(b"old figure").hexdigest()}
    (out / ".verify-report").write_text(json.dumps(marker))
    (out / "plots" / "mine.txt").write_text("my notes on the figures")
    (out / "notes.md").write_text("mine")
    assert main(["report", "--out", str(out), *ARGS]) == 0
    assert not stale.exists()  # listed in the manifest and unchanged: verify's, replaced
    assert (out / "plots" / "mine.txt").read_text() == "my notes on the figures" and (out / "notes.md").read_text()
    capsys.readouterr()


# ---- 2. no valid manifest, or a changed listed file: refused before the run, nothing touched ------------------

def _traversal_markers(victim_sha: str, size: int) -> st.SearchStrategy:
    record = {"size": size, "sha256": victim_sha}
    paths = st.sampled_from(["../victim.txt", "/victim.txt", "a/../../victim.txt", "./../victim.txt",
                             "..\\victim.txt", "", ".", "plots/../../victim.txt", "C:/victim.txt"])
    return paths.map(lambda p: json.dumps({"tool": "dp-verify", "files": {p: record}}))


def _bad_markers(victim_sha: str, size: int) -> st.SearchStrategy:
    return st.one_of(
        st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
        st.just(""),
        st.just(json.dumps({"tool": "dp-verify", "schema_version": "3.0", "run_id": "20250101T000000Z"})),  # older
        st.just(json.dumps({"tool": "someone-else", "files": {}})),
        st.just(json.dumps({"tool": "dp-verify", "files": []})),
        st.just(json.dumps({"tool": "dp-verify", "files": {"notes.txt": {"size": -1, "sha256": "0" * 64}}})),
        st.just(json.dumps({"tool": "dp-verify", "files": {"notes.txt": {"size": 1, "sha256": "xyz"}}})),
        st.just(json.dumps({"tool": "dp-verify", "files": {}, "pending": None})),
        _traversal_markers(victim_sha, size),
    )


@settings(FAST, max_examples=25)
@given(data=st.data(), tree=USER_TREE)
def test_a_marker_without_a_valid_manifest_authorises_nothing(tmp_path_factory, monkeypatch, capsys, data, tree):
    needs_report_extra()
    from verify.reporting import build

    monkeypatch.setattr(build, "run", _no_run)
    root = tmp_path_factory.mktemp("bare")
    victim = root / "victim.txt"
    victim.write_text("precious, beside the folder")
    out = root / "sub" / "out"
    out.mkdir(parents=True)
    (out.parent / "victim.txt").write_text("precious, beside the folder")
    marker = data.draw(_bad_markers(hashlib.sha256(victim.read_bytes()).hexdigest(), victim.stat().st_size))
    (out / ".verify-report").write_text(marker, encoding="utf-8")
    _plant(out, {}, tree)
    before = _snapshot(root)
    assert main(["report", "--out", str(out), *ARGS]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: --out {out}") and "never" in err[0]
    assert _snapshot(root) == before


CHANGES = st.sampled_from(["append", "truncate", "folder", "link", "link_folder", "same_size"])


@settings(FAST, max_examples=12)
@given(change=CHANGES, which=st.sampled_from(["report.md", "results.json", "static/report.css",
                                              "plots/wang2021.zcdp_to_dp.svg"]))
def test_a_changed_listed_file_is_refused_before_the_run(tmp_path_factory, monkeypatch, capsys, template, change,
                                                         which):
    from verify.reporting import build

    monkeypatch.setattr(build, "run", _no_run)
    root = tmp_path_factory.mktemp("changed")
    out = root / "report"
    shutil.copytree(template, out)
    target = out / which
    outside = root / "outside"
    shutil.copy(target, outside)  # the same bytes, elsewhere: a link to it must not pass for verify's file
    if change == "append":
        target.write_bytes(target.read_bytes() + b"\nmy edit")
    elif change == "truncate":
        target.write_bytes(b"")
    elif change == "same_size":
        content = bytearray(target.read_bytes())
        content[0] ^= 1
        target.write_bytes(bytes(content))
    elif change == "folder":
        target.unlink()
        target.mkdir()
        (target / "mine").write_text("x")
    elif change == "link":
        target.unlink()
        target.symlink_to(outside)
    elif target.parent == out:  # a top-level file: its folder is the destination itself (links are refused)
        target.unlink()
        target.symlink_to(outside)
    else:  # the folder that holds the file becomes a link to a copy elsewhere
        moved = root / "moved"
        shutil.move(target.parent, moved)
        target.parent.symlink_to(moved, target_is_directory=True)
    before = _snapshot(root)
    assert main(["report", "--out", str(out), *ARGS]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: --out {out}") and "never" in err[0]
    assert _snapshot(root) == before


def test_a_user_file_where_the_report_writes_is_refused_before_the_run(tmp_path, monkeypatch, capsys, template):
    from verify.reporting import build

    monkeypatch.setattr(build, "run", _no_run)
    out = tmp_path / "report"
    shutil.copytree(template, out)
    (out / "report.md").unlink()
    (out / "report.md").write_text("my own report")  # removed verify's, wrote one of mine: not listed any more...
    marker = json.loads((out / ".verify-report").read_text())
    del marker["files"]["report.md"]
    (out / ".verify-report").write_text(json.dumps(marker))
    before = _snapshot(tmp_path)
    assert main(["report", "--out", str(out), *ARGS]) == 2
    assert "report.md is not a file verify wrote" in capsys.readouterr().err
    assert _snapshot(tmp_path) == before


# ---- 3. concurrent runs: distinct folders, no silent replacement --------------------------------------------------

def test_run_folders_are_reserved_atomically(tmp_path, monkeypatch):
    from verify.reporting import build

    monkeypatch.setattr(build, "_stamp", lambda: "20250101T000000Z")
    got: list[str] = []
    barrier = threading.Barrier(8)

    def reserve():
        barrier.wait()
        got.append(build.reserve_run_dir(tmp_path)[0])

    threads = [threading.Thread(target=reserve) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 8 and sorted(os.listdir(tmp_path)) == sorted(got)
    assert all(build.RUN_ID.fullmatch(g) for g in got)


def _forked_pair(argv: list[str], outcome: RunResult, monkeypatch) -> list[int]:
    """Run `verify ARGV` in two forked processes that reach the end of their run together (a barrier), with the
    clock frozen at one second; return both exit codes."""
    from verify.reporting import build

    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)

    def together(*_args, **_kwargs):
        barrier.wait(timeout=60)  # both runs have passed their checks of the destination
        return outcome

    monkeypatch.setattr(build, "_stamp", lambda: "20250101T000000Z")
    monkeypatch.setattr(build, "run", together)
    procs = [ctx.Process(target=lambda: sys.exit(main(argv))) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return sorted(p.exitcode for p in procs)


def test_two_runs_in_one_second_both_keep_their_report(tmp_path, monkeypatch, outcome, capfd):
    needs_report_extra()
    monkeypatch.chdir(tmp_path)
    assert _forked_pair(["report", *ARGS], outcome, monkeypatch) == [0, 0]
    root = tmp_path / "reports"
    runs = sorted(p.name for p in root.iterdir() if p.name != "latest")
    assert runs == ["20250101T000000Z", "20250101T000000Z-2"]
    for name in runs:
        assert _listed(root / name) and json.loads((root / name / "results.json").read_text())["timing"][
            "run_id"] == name
    assert os.readlink(root / "latest") in runs
    capfd.readouterr()


def test_two_runs_into_one_out_never_replace_each_other_silently(tmp_path, monkeypatch, outcome, capfd):
    needs_report_extra()
    out = tmp_path / "out"
    assert _forked_pair(["report", "--out", str(out), *ARGS], outcome, monkeypatch) == [0, 2]
    err = capfd.readouterr().err
    assert "written by another verify run" in err and "this run's report is at" in err
    kept = [p for p in tmp_path.iterdir() if p.name != "out"]
    assert len(kept) == 1 and kept[0].name.startswith("out.20250101T000000Z") and str(kept[0]) in err
    assert _listed(out) and _listed(kept[0])  # both finished reports exist, complete


def test_latest_never_replaces_a_link_verify_did_not_make(tmp_path):
    from verify.errors import ParameterError
    from verify.reporting.build import update_latest

    (tmp_path / "a").mkdir()
    (tmp_path / "latest").symlink_to("/somewhere/else")
    with pytest.raises(ParameterError, match="not the link verify keeps"):
        update_latest(tmp_path, tmp_path / "a")
    assert os.readlink(tmp_path / "latest") == "/somewhere/else"
    (tmp_path / "latest").unlink()
    (tmp_path / "latest").symlink_to("my-notes")  # one plain name, gone, not a run's: the user's
    with pytest.raises(ParameterError, match="not the link verify keeps"):
        update_latest(tmp_path, tmp_path / "a")
    (tmp_path / "latest").unlink()
    (tmp_path / "latest").symlink_to("20261127T101500Z")  # verify's: a run folder's name (the run since deleted)
    assert update_latest(tmp_path, tmp_path / "a") == tmp_path / "latest"
    assert os.readlink(tmp_path / "latest") == "a" and sorted(os.listdir(tmp_path)) == ["a", "latest"]


# ---- 4. unwritable destinations: exit 2 before the run; any OSError at the end is one line ---------------------

DEPTH = st.lists(st.sampled_from(["a", "b", "out", "x.json", "r e"]), min_size=1, max_size=3)


@settings(FAST, max_examples=20)
@given(under=st.sampled_from(["file", "proc"]), parts=DEPTH, command=st.sampled_from(["report", "run"]))
def test_unwritable_destinations_are_refused_before_the_run(tmp_path_factory, monkeypatch, capsys, under, parts,
                                                             command):
    needs_report_extra()
    from verify.reporting import build

    monkeypatch.setattr(build, "run", _no_run)
    monkeypatch.setattr(runner, "run", _no_run)
    root = tmp_path_factory.mktemp("unwritable")
    base = root / "somefile" if under == "file" else Path("/proc") / f"verify-{os.getpid()}-absent"
    (root / "somefile").write_text("a regular file")
    dest = base.joinpath(*parts)
    before = _snapshot(root)
    option = "--out" if command == "report" else "--json"
    assert main([command, option, str(dest), *ARGS]) == 2  # refused before the run (_no_run would make it exit 4)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {option} {dest} cannot be written")
    assert _snapshot(root) == before


def test_run_json_into_a_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "run", _no_run)
    assert main(["run", "--json", str(tmp_path), *ARGS]) == 2
    assert "is a folder" in capsys.readouterr().err


def _spoil(path: Path):
    """A run that, while it runs, puts a regular file where the destination's folder must go."""
    def spoiled(*_args, **_kwargs):
        path.write_text("appeared during the run")
        return runner.RunResult((), (), 0.0)
    return spoiled


def test_an_oserror_while_writing_results_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "run", _spoil(tmp_path / "sub"))
    assert main(["run", "--json", str(tmp_path / "sub" / "deeper" / "r.json"), *ARGS]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot write") and "r.json" in err[0]
    assert os.listdir(tmp_path) == ["sub"] and (tmp_path / "sub").read_text() == "appeared during the run"


def test_an_oserror_while_writing_a_report_is_one_line(tmp_path, monkeypatch, capsys):
    needs_report_extra()
    from verify.reporting import build

    monkeypatch.setattr(build, "run", _spoil(tmp_path / "sub"))
    assert main(["report", "--out", str(tmp_path / "sub" / "deeper" / "r"), *ARGS]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot write the report")
    assert os.listdir(tmp_path) == ["sub"]


def test_a_foreign_file_that_appears_at_json_during_the_run_is_kept(tmp_path, monkeypatch, capsys):
    path = tmp_path / "r.json"
    monkeypatch.setattr(runner, "run", _spoil(path))
    assert main(["run", "--json", str(path), *ARGS]) == 2
    assert path.read_text() == "appeared during the run"
    err = capsys.readouterr().err
    kept = re.search(r"the results are in (\S+)", err)
    assert kept and json.loads(Path(kept.group(1)).read_text())["schema_version"] == results_json.SCHEMA_VERSION


# ---- 5. the versions and commit a run ran with ---------------------------------------------------------------

def test_run_records_versions_and_git_commit():
    data = results_document(RunResult((), (), 0.0))
    versions = data["run"]["versions"]
    assert {"python", "verify", "dp-verify", "hypothesis", "python-flint", "sympy", "mpmath", "numpy",
            "scipy"} <= set(versions)
    import flint
    import hypothesis

    assert versions["python-flint"] == flint.__version__ and versions["hypothesis"] == hypothesis.__version__
    source = Path(results_json.__file__).resolve().parents[2]
    commit = data["run"]["git_commit"]
    if (source / ".git").exists() and shutil.which("git"):
        assert re.fullmatch(r"[0-9a-f]{40}", commit)
        assert subprocess.run(["git", "cat-file", "-t", commit], cwd=source, capture_output=True,
                              text=True).stdout.strip() == "commit"
    try:
        from verify.reporting.schema import validate
    except ImportError:  # pragma: no cover
        return
    validate(data)


def test_git_commit_is_null_without_git_or_outside_a_checkout(tmp_path, monkeypatch, capfd):
    results_json.git_commit.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the path
    assert results_json.git_commit() is None
    results_json.git_commit.cache_clear()
    monkeypatch.undo()
    fake = tmp_path / "site-packages" / "verify" / "reporting" / "results_json.py"
    monkeypatch.setattr(results_json, "__file__", str(fake))  # installed, not a checkout
    assert results_json.git_commit() is None
    fake.parent.mkdir(parents=True)
    (tmp_path / "site-packages" / ".git").write_text("gitdir: /nonexistent\n")  # a broken checkout
    results_json.git_commit.cache_clear()
    assert results_json.git_commit() is None
    results_json.git_commit.cache_clear()
    out, err = capfd.readouterr()
    assert out == "" and err == ""
