"""Class 3 of the trust issue: `verify report --out` and `verify run --json` never delete or overwrite what verify
did not write, and refuse before the run starts."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.cli import main

from .conftest import needs_report_extra

ONE = ["--only", "wang2021.zcdp_to_dp", "--falsify", "0", "--quiet"]
NAMES = st.sampled_from(["notes.txt", "data.csv", "results.json", "index.html", "report.md", ".hidden", "sub"])


def _snapshot(root) -> dict[str, bytes]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            path = os.path.join(dirpath, f)
            out[os.path.relpath(path, root)] = open(path, "rb").read()
    return out


@settings(max_examples=15, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=st.lists(NAMES, min_size=1, max_size=4, unique=True), as_file=st.booleans())
def test_user_data_is_refused_and_untouched(tmp_path_factory, files, as_file, capsys):
    needs_report_extra()
    root = tmp_path_factory.mktemp("user")
    target = root / "out"
    if as_file:
        target.write_text("precious")
    else:
        target.mkdir()
        for name in files:
            (target / name).write_text(f"user content of {name}")
    before = _snapshot(root)
    assert main(["report", "--out", str(target), *ONE]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --out") and "never" in err[0]
    assert _snapshot(root) == before


def test_current_folder_and_links_are_refused(tmp_path, monkeypatch, capsys):
    needs_report_extra()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.txt").write_text("x")
    os.symlink(tmp_path, tmp_path / "link")
    for out in (".", "..", str(tmp_path), "link"):
        assert main(["report", "--out", out, *ONE]) == 2
    assert (tmp_path / "mine.txt").read_text() == "x" and capsys.readouterr().out == ""


def test_previous_report_and_empty_folder_are_replaced(tmp_path):
    needs_report_extra()
    out = tmp_path / "r"
    out.mkdir()
    assert main(["report", "--out", str(out), *ONE]) == 0
    assert main(["report", "--out", str(out), *ONE]) == 0  # a previous report: replaced
    assert (out / ".verify-report").is_file() and sorted(os.listdir(tmp_path)) == ["r"]


def test_run_json_never_overwrites_foreign_files(tmp_path, capsys):
    path = tmp_path / "mine.json"
    path.write_text('{"my": "data"}')
    assert main(["run", "--json", str(path), *ONE]) == 2
    assert path.read_text() == '{"my": "data"}'
    fresh = tmp_path / "results.json"
    assert main(["run", "--json", str(fresh), *ONE]) == 0
    assert main(["run", "--json", str(fresh), *ONE]) == 0  # its own previous results: replaced
    capsys.readouterr()


def test_user_latest_is_not_clobbered(tmp_path, monkeypatch):
    needs_report_extra()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "latest").write_text("my notes")
    assert main(["report", *ONE]) == 2
    assert (tmp_path / "reports" / "latest").read_text() == "my notes"
    assert os.listdir(tmp_path / "reports") == ["latest"]
