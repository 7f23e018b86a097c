"""Run a command and sample the resident memory of it and all its descendants (Linux /proc), for benchmarks."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class Measured:
    returncode: int
    seconds: float  # wall clock, interpreter start-up included
    peak_total_mb: float  # the largest sum of the resident sets of the process tree at one sample
    peak_process_mb: float  # the largest resident set of one process
    stdout: str


def _tree_rss(root: int) -> tuple[float, float]:
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()
            parents[int(entry.name)] = int(fields[1])
            rss[int(entry.name)] = int(fields[21]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        children = [c for c, p in parents.items() if p == pid and c not in tree]
        tree.update(children)
        frontier.extend(children)
    sizes = [rss.get(pid, 0) for pid in tree]
    return sum(sizes) / 2**20, max(sizes, default=0) / 2**20


def measure(args: list[str], interval: float = 0.05, cwd: Path | None = None,
            env: dict[str, str] | None = None) -> Measured:
    """Run `args` (with `env` added to the environment), sampling the memory of its process tree every `interval`
    seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd,
                            env={**os.environ, **env} if env else None)
    total = single = 0.0
    sampling = Path("/proc").is_dir()
    while proc.poll() is None:
        if sampling:
            t, s = _tree_rss(proc.pid)
            total, single = max(total, t), max(single, s)
        time.sleep(interval)
    out = proc.stdout.read() if proc.stdout else ""
    return Measured(proc.returncode, time.perf_counter() - start, total, single, out)
