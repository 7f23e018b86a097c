"""One progress display for `verify run`, `verify report` and `verify falsify`: a tqdm bar on stderr with the count,
elapsed time, what is left and the item being worked on, redrawn twice a second so that its clock moves while one
long item runs; silent when stderr is not a terminal (or with --quiet).

What is left is never a guess that misleads: a search that a budget bounds shows the budget left (not the time its
maximum count of points would take at the current rate: "1:33:37" under a 60 s budget), and a run shows an estimate
only once MIN_DONE items have finished, marked "~", and never beyond a budget it knows."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

REFRESH_S = 0.5  # how often the clock is redrawn while nothing finishes
MIN_DONE = 3  # items finished before a rate is trusted for an estimate


def clock_text(seconds: float) -> str:
    """Seconds as m:ss, or h:mm:ss from an hour on (whole seconds, rounded down)."""
    whole = int(max(0.0, seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def timing_text(elapsed: float, done: int, total: int, budget_s: float | None = None) -> str:
    """The bar's clock: the time elapsed, then the budget left where one bounds the work, else an estimate of what
    is left once MIN_DONE of `total` items have finished (none before, none when all have)."""
    shown = f"{clock_text(elapsed)} elapsed"
    if budget_s is not None:
        return f"{shown}, {clock_text(budget_s - elapsed)} of the budget left"
    if done < MIN_DONE or done >= total:
        return shown
    return f"{shown}, ~{clock_text(elapsed / done * (total - done))} left"


class ProgressBar:
    """`bar(phase, label, done, total)`: `done` of `total` finished in `phase` ("checks", "figures", "search"),
    `label` the item being worked on; a new phase starts a new bar. `close()` clears it. A no-op unless `enabled`,
    which defaults to whether the stream is a terminal. `budget_s`: a wall-clock budget that bounds the whole work
    from the bar's creation (a search's --budget): the bar shows what is left of it instead of an estimate. `clock`:
    the time source (a test's fake clock)."""

    def __init__(self, stream: TextIO | None = None, enabled: bool | None = None, budget_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.budget_s = budget_s
        self._clock = clock
        self._created = clock()
        self._started = self._created
        self._bar = None
        self._phase = ""
        self._label = ""
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
                                 bar_format="{desc} {bar} {n_fmt}/{total_fmt}{postfix}", mininterval=0.1)
                if self._phase:  # a later phase's clock starts with it; the first's with the bar
                    self._started = self._clock()
                self._phase = phase
            self._bar.n = max(self._bar.n, done)  # workers report out of order; the count never goes back
            self._label = label
            self._redraw()
        if self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="verify-progress", daemon=True)
            self._ticker.start()

    def _redraw(self) -> None:
        """Draw the bar with the clock as of now (the lock held)."""
        now = self._clock()
        budget = None if self.budget_s is None else self.budget_s - (self._started - self._created)
        timing = timing_text(now - self._started, self._bar.n, self._bar.total, budget)
        self._bar.set_postfix_str(f"{timing}; {self._label}", refresh=False)
        self._bar.refresh()

    def _tick(self) -> None:
        while not self._stop.wait(REFRESH_S):
            with self._lock:
                if self._bar is not None:
                    self._redraw()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            if self._bar is not None:
                self._bar.close()
                self._bar = None
