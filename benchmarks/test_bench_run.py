"""The whole catalog as a user runs it (`verify run`, `verify report`): wall time, the peak memory of the whole
process tree, and the size of what it writes. Targets (issue 10, 2-core machine): default run < 60 s, grid only
< 15 s, peak memory < 2 GB, results.json < 5 MB, report folder < 10 MB."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ._process import measure

VERIFY = [sys.executable, "-m", "verify.cli"]


def _folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


@pytest.mark.parametrize(("label", "falsify", "seconds"), [("default falsifier", [], 60.0),
                                                           ("grid only", ["--falsify", "0"], 15.0)])
def test_whole_catalog_run(benchmark, tmp_path, label, falsify, seconds):
    out = tmp_path / "results.json"
    m = benchmark.pedantic(measure, args=([*VERIFY, "run", "--quiet", "--json", str(out), *falsify],),
                           rounds=1, iterations=1)
    assert m.returncode == 0, m.stdout[-2000:]
    size = out.stat().st_size / 2**20
    benchmark.extra_info.update({"seconds": m.seconds, "peak_total_mb": m.peak_total_mb,
                                 "peak_process_mb": m.peak_process_mb, "results_json_mb": size})
    print(f"\n{label}: {m.seconds:.1f} s, peak {m.peak_total_mb:.0f} MB (one process at most "
          f"{m.peak_process_mb:.0f} MB), results.json {size:.2f} MB")
    assert m.seconds < seconds and m.peak_total_mb < 2048 and size < 5


def test_whole_catalog_report(benchmark, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report"
    m = benchmark.pedantic(measure, args=([*VERIFY, "report", "--quiet", "--out", str(out)],), rounds=1,
                           iterations=1)
    assert m.returncode == 0, m.stdout[-2000:]
    size = _folder_mb(out)
    benchmark.extra_info.update({"seconds": m.seconds, "peak_total_mb": m.peak_total_mb, "folder_mb": size})
    print(f"\nreport: {m.seconds:.1f} s, peak {m.peak_total_mb:.0f} MB, folder {size:.2f} MB")
    assert size < 10
