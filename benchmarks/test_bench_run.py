"""The whole catalog as a user runs it (`verify run`, `verify report`): wall time, the peak memory of the whole
process tree, and the size of what it writes. Targets (issue 22, 2-core machine): `verify report` (README's main
command, figures included) <= 60 s, `verify run --falsify 0` <= 20 s; peak memory < 2 GB, results.json < 5 MB,
report folder < 10 MB. With a reference tree (issue 49): `verify run --falsify 0` at most 0.35x the reference's time,
`verify run` and `verify report` at most 0.5x, the report's peak memory below 1.5 GB; the reference runs first, and
the ratio is printed and recorded (`extra_info["ratio"]`). `verify report --cache DIR` is also measured cold then
warm, on the current tree only.

Side by side with a reference: set VERIFY_BENCH_REFERENCE to the source tree of an earlier verify (e.g.
`git worktree add /tmp/ref <commit>`) and each command also runs from that tree (PYTHONPATH, same interpreter and
dependencies) in the same session; only the current tree is held to the targets. Every command runs in its own
temporary folder: `python -m` puts the current folder first on sys.path, so run from the repository root the
"reference" silently imported the current tree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ._process import measure

VERIFY = [sys.executable, "-m", "verify.cli"]
_REFERENCE = os.environ.get("VERIFY_BENCH_REFERENCE")
TREES = [*(["reference"] if _REFERENCE else []), "current"]  # the reference first: the current tree's ratio to it
_SECONDS: dict[str, float] = {}  # the reference's time per command, in this session
RATIOS = {"default falsifier": 0.5, "grid only": 0.35, "report": 0.5}  # issue 49: current / reference at most


def _env(tree: str) -> dict[str, str] | None:
    return {"PYTHONPATH": str(Path(_REFERENCE).resolve())} if tree == "reference" else None


def _ratio(label: str, tree: str, seconds: float, benchmark) -> float | None:
    """The current tree's time over the reference's for `label` (None without a reference in this session)."""
    if tree == "reference":
        _SECONDS[label] = seconds
        return None
    if label not in _SECONDS:
        return None
    ratio = seconds / _SECONDS[label]
    benchmark.extra_info["ratio"] = ratio
    print(f"{label}: current / reference = {ratio:.2f} (target <= {RATIOS[label]})")
    return ratio


def _folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize(("label", "falsify", "seconds"), [("default falsifier", [], 60.0),
                                                           ("grid only", ["--falsify", "0"], 20.0)])
def test_whole_catalog_run(benchmark, tmp_path, tree, label, falsify, seconds):
    out = tmp_path / "results.json"
    m = benchmark.pedantic(measure, args=([*VERIFY, "run", "--quiet", "--json", str(out), *falsify],),
                           kwargs={"env": _env(tree), "cwd": tmp_path}, rounds=1, iterations=1)
    assert m.returncode == 0, m.stdout[-2000:]
    size = out.stat().st_size / 2**20
    benchmark.extra_info.update({"tree": tree, "seconds": m.seconds, "peak_total_mb": m.peak_total_mb,
                                 "peak_process_mb": m.peak_process_mb, "results_json_mb": size})
    print(f"\n{tree}, {label}: {m.seconds:.1f} s, peak {m.peak_total_mb:.0f} MB (one process at most "
          f"{m.peak_process_mb:.0f} MB), results.json {size:.2f} MB")
    ratio = _ratio(label, tree, m.seconds, benchmark)
    if tree == "current":
        assert m.seconds < seconds and m.peak_total_mb < 2048 and size < 5
        assert ratio is None or ratio <= RATIOS[label]


@pytest.mark.parametrize("tree", TREES)
def test_whole_catalog_report(benchmark, tmp_path, tree):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report"
    m = benchmark.pedantic(measure, args=([*VERIFY, "report", "--quiet", "--out", str(out)],),
                           kwargs={"env": _env(tree), "cwd": tmp_path}, rounds=1, iterations=1)
    assert m.returncode == 0, m.stdout[-2000:]
    size = _folder_mb(out)
    benchmark.extra_info.update({"tree": tree, "seconds": m.seconds, "peak_total_mb": m.peak_total_mb,
                                 "folder_mb": size})
    print(f"\n{tree}, report: {m.seconds:.1f} s, peak {m.peak_total_mb:.0f} MB, folder {size:.2f} MB")
    ratio = _ratio("report", tree, m.seconds, benchmark)
    if tree == "current":
        assert m.peak_total_mb < 1536 and size < 10
        assert m.seconds <= 60 and (ratio is None or ratio <= RATIOS["report"])


def test_whole_catalog_report_with_a_truth_cache(benchmark, tmp_path):
    """`verify report --cache DIR` twice (current tree only): the first run fills the cache, the second reads it. The
    targets above are measured cold; this records what a user who iterates gets (certificates are recomputed)."""
    pytest.importorskip("matplotlib")
    cache = tmp_path / "cache"

    def cold_then_warm():
        return [measure([*VERIFY, "report", "--quiet", "--out", str(tmp_path / name), "--cache", str(cache)],
                        cwd=tmp_path) for name in ("cold", "warm")]

    cold, warm = benchmark.pedantic(cold_then_warm, rounds=1, iterations=1)
    assert cold.returncode == warm.returncode == 0, (cold.stdout + warm.stdout)[-2000:]
    benchmark.extra_info.update({"cold_seconds": cold.seconds, "warm_seconds": warm.seconds,
                                 "cache_mb": _folder_mb(cache)})
    print(f"\nreport with --cache: cold {cold.seconds:.1f} s, warm {warm.seconds:.1f} s, "
          f"cache {_folder_mb(cache):.1f} MB")
