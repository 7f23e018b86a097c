"""A one-line progress bar on stderr, shown only on a terminal."""

from __future__ import annotations

import shutil
import sys
from typing import TextIO


class ProgressBar:
    """`bar(phase, label, done, total)` redraws `phase [#####.....] done/total label`; `close()` clears it.

    Disabled (a no-op) unless `enabled`, which defaults to whether the stream is a terminal.
    """

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None, width: int = 24) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self._shown = False

    def __call__(self, phase: str, label: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        filled = self.width * done // max(total, 1)
        line = f"{phase:<8} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {label}"
        columns = shutil.get_terminal_size((100, 20)).columns - 1
        print("\r" + line[:columns].ljust(columns), end="", file=self.stream, flush=True)
        self._shown = True

    def close(self) -> None:
        if self._shown:
            columns = shutil.get_terminal_size((100, 20)).columns - 1
            print("\r" + " " * columns + "\r", end="", file=self.stream, flush=True)
            self._shown = False
