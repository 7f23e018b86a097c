"""Start-up as a user meets it (issue 22): fresh interpreters running `import verify`, `verify --help`,
`verify --version`, `verify list`, and a pytest session of a tiny project that uses none of verify's fixtures, with
and without verify's plugin. Targets (2-core machine, median wall time): import <= 0.3 s; --help, --version and
`verify list` <= 0.5 s (the list from the shipped listing, verify/catalog_index.py: ~0.15 s; building the catalog
instead, SymPy and its expressions, took ~1.3 s); the plugin adds <= 0.1 s to a session."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROUNDS = 5
VERIFY = str(Path(sys.executable).with_name("verify"))  # the console script a user runs
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def _run(args: list[str], cwd: Path | None = None) -> None:
    """Run `args` to completion; a failure shows its output."""
    done = subprocess.run(args, capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]


def _wall(args: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    _run(args, cwd)
    return time.perf_counter() - start


@pytest.fixture(scope="module")
def tiny_project(tmp_path_factory) -> Path:
    """A user's project: one test that uses no fixture of verify's."""
    root = tmp_path_factory.mktemp("tiny_project")
    (root / "test_tiny.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    return root


# label: (command, target median in seconds, whether the target is asserted)
COMMANDS = {
    "import verify": ([sys.executable, "-c", "import verify"], 0.3, True),
    "verify --help": ([VERIFY, "--help"], 0.5, True),
    "verify --version": ([VERIFY, "--version"], 0.5, True),
    "verify list": ([VERIFY, "list"], 0.5, True),
}


@pytest.mark.parametrize("label", list(COMMANDS))
def test_startup(benchmark, label):
    args, target, asserted = COMMANDS[label]
    benchmark.pedantic(_run, args=(args,), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    median = benchmark.stats.stats.median
    benchmark.extra_info.update({"command": label, "median_s": median, "target_s": target})
    print(f"\n{label}: median {median:.3f} s over {ROUNDS} runs (target {target} s)")
    assert median <= target or not asserted


def test_pytest_plugin_overhead(benchmark, tiny_project):
    without = statistics.median([_wall([*PYTEST, "-p", "no:verify"], tiny_project) for _ in range(ROUNDS)])
    benchmark.pedantic(_run, args=(PYTEST, tiny_project), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    with_plugin = benchmark.stats.stats.median
    overhead = with_plugin - without
    benchmark.extra_info.update({"with_plugin_s": with_plugin, "without_plugin_s": without, "overhead_s": overhead,
                                 "target_overhead_s": 0.1})
    print(f"\npytest session: {with_plugin:.3f} s with verify's plugin, {without:.3f} s without "
          f"(overhead {overhead:+.3f} s, target 0.1 s)")
    assert overhead <= 0.1
