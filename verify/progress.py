"""One progress display for `verify run`, `verify report` and `verify falsify`: a tqdm bar on stderr with the count,
elapsed time, ETA and the item being worked on, redrawn twice a second so that its clock moves while one long item
runs; silent when stderr is not a terminal (or with --quiet)."""

from __future__ import annotations

import sys
import threading
from typing import TextIO

REFRESH_S = 0.5  # how often the clock is redrawn while nothing finishes


class ProgressBar:
    """`bar(phase, label, done, total)`: `done` of `total` finished in `phase` ("checks", "figures", "search"),
    `label` the item being worked on; a new phase starts a new bar. `close()` clears it. A no-op unless `enabled`,
    which defaults to whether the stream is a terminal."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._bar = None
        self._phase = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, phase: str, label: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        with self._lock:
            if self._bar is None or phase != self._phase or self._bar.total != total:
                if self._bar is not None:
                    self._bar.close()
                self._bar = tqdm(total=total, desc=f"{phase:<8}", file=self.stream, leave=False, dynamic_ncols=True,
                                 bar_format="{desc} {bar} {n_fmt}/{total_fmt} [{elapsed}<{remaining}]{postfix}",
                                 mininterval=0.1)
                self._phase = phase
            self._bar.n = max(self._bar.n, done)  # workers report out of order; the count never goes back
            self._bar.set_postfix_str(label, refresh=False)
            self._bar.refresh()
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="verify-progress", daemon=True)
            self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(REFRESH_S):
            with self._lock:
                if self._bar is not None:
                    self._bar.refresh()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
