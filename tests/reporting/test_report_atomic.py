"""A failed run never leaves a report that looks complete, and `latest` only moves to complete reports."""

from __future__ import annotations

import os

import pytest

from .conftest import SMALL, needs_report_extra

ONE = ("chourasia2021.theorem3.exact",)


def _boom(*_args, **_kwargs):
    raise RuntimeError("boom while rendering")


def test_failure_midway_leaves_no_folder_and_latest_unchanged(tmp_path, monkeypatch):
    needs_report_extra()
    from verify.reporting import build

    root = tmp_path / "reports"
    first = build.build_report(ONE, root=root, workers=1).path
    assert (root / "latest").resolve() == first.resolve()
    assert (root / "latest" / "index.html").is_file()

    monkeypatch.setattr(build, "render_html", _boom)  # after the checks, plots and results.json are written
    with pytest.raises(RuntimeError, match="boom"):
        build.build_report(ONE, root=root, workers=1)
    assert sorted(os.listdir(root)) == sorted([first.name, "latest"])  # no new folder, no partial leftovers
    assert (root / "latest").resolve() == first.resolve()


def test_failure_with_out_leaves_no_folder(tmp_path, monkeypatch):
    needs_report_extra()
    from verify.cli import main
    from verify.reporting import build

    monkeypatch.setattr(build, "plot_sweeps", _boom)
    out = tmp_path / "out"
    assert main(["report", "--only", *ONE, "--out", str(out), "--quiet"]) == 4  # an internal error, one line
    assert os.listdir(tmp_path) == []


def test_rewriting_a_folder_replaces_only_its_own_files(tmp_path):
    needs_report_extra()
    from verify.reporting import write_report
    from verify.runner import run

    out = tmp_path / "r"
    out.mkdir()
    write_report(run(ONE), out, workers=1)  # an empty folder may receive a report
    (out / "notes.txt").write_text("a user's note")
    write_report(run(ONE), out, workers=1)  # a previous report: the files its manifest lists are replaced
    assert (out / "notes.txt").read_text() == "a user's note" and (out / "results.json").is_file()
    assert sorted(os.listdir(tmp_path)) == ["r"]


def test_default_folder_is_a_timestamped_run_under_reports(tmp_path, monkeypatch, capsys):
    needs_report_extra()
    from verify.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["report", "--only", *SMALL, "--quiet"]) == 0
    runs = [p for p in (tmp_path / "reports").iterdir() if p.name != "latest"]
    assert len(runs) == 1 and runs[0].name[:8].isdigit() and runs[0].name.endswith("Z")
    assert os.readlink(tmp_path / "reports" / "latest") == runs[0].name  # relative link
    assert "as expected" in capsys.readouterr().out


def test_latest_falls_back_to_a_text_file_without_symlinks(tmp_path, monkeypatch):
    needs_report_extra()
    from verify.reporting import build

    def no_symlinks(*_args, **_kwargs):
        raise OSError("symlinks not supported here")

    monkeypatch.setattr(build.os, "symlink", no_symlinks)
    root = tmp_path / "reports"
    path = build.build_report(ONE, root=root, workers=1).path
    assert not (root / "latest").exists()
    assert (root / "LATEST").read_text().strip() == path.name
