"""Caps on what one truth evaluation may spend: wall-clock deadlines and memory.

`deadline(seconds)` bounds a block: on the main thread of a POSIX process it arms a real-time timer whose signal
raises `DeadlineExceeded` inside the block (pure-Python loops, mpmath and between NumPy calls); elsewhere it only
records the deadline, which long loops poll with `check_deadline()`. Deadlines nest (the earliest wins).
`truth_deadline()` is the default cap of one point (the checker applies it; env VERIFY_TRUTH_DEADLINE).
`require_memory(nbytes, what)` refuses an allocation above the cap (default 1 GiB, env VERIFY_MEMORY_CAP in bytes)
before it is made.
"""

from __future__ import annotations

import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from verify.errors import DeadlineExceeded, MemoryLimitExceeded, ParameterError

DEFAULT_MEMORY_CAP = 1 << 30  # bytes one truth evaluation may allocate in its largest arrays
DEFAULT_TRUTH_DEADLINE = 120.0  # seconds one point (truth and its rigorous re-check) may take
_deadlines: list[float] = []  # monotonic times, innermost last (per process; signals are per process too)
_deferred = [0]  # > 0 while inside C code that calls back into Python (acb.integral): the alarm must not raise there


def memory_cap() -> int:
    """The memory cap in bytes (env VERIFY_MEMORY_CAP overrides the default)."""
    raw = os.environ.get("VERIFY_MEMORY_CAP")
    if raw is None:
        return DEFAULT_MEMORY_CAP
    try:
        value = int(float(raw))
    except ValueError:
        raise ParameterError(f"VERIFY_MEMORY_CAP must be a number of bytes, got {raw!r}") from None
    if value <= 0:
        raise ParameterError(f"VERIFY_MEMORY_CAP must be > 0, got {raw!r}")
    return value


def truth_deadline() -> float:
    """Seconds one point's truth may take (env VERIFY_TRUTH_DEADLINE overrides the default; inf: no cap)."""
    raw = os.environ.get("VERIFY_TRUTH_DEADLINE")
    if raw is None:
        return DEFAULT_TRUTH_DEADLINE
    try:
        value = float(raw)
    except ValueError:
        raise ParameterError(f"VERIFY_TRUTH_DEADLINE must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ParameterError(f"VERIFY_TRUTH_DEADLINE must be > 0, got {raw!r}")
    return value


def require_memory(nbytes: float, what: str) -> None:
    """Raise MemoryLimitExceeded, naming `what`, if `nbytes` exceeds the memory cap."""
    cap = memory_cap()
    if not nbytes <= cap:  # NaN counts as too much
        raise MemoryLimitExceeded(f"{what} needs about {nbytes / 2**20:.0f} MiB, above the memory cap of "
                                  f"{cap / 2**20:.0f} MiB (env VERIFY_MEMORY_CAP)")


def remaining() -> float:
    """Seconds left before the innermost deadline (inf without one)."""
    return min(_deadlines, default=math.inf) - time.monotonic()


def check_deadline(what: str = "computation") -> None:
    """Raise DeadlineExceeded if the innermost deadline has passed (for loops that cannot be interrupted)."""
    if remaining() <= 0:
        raise DeadlineExceeded(f"{what} ran past its deadline")


def expired() -> bool:
    """True if the innermost deadline has passed (for callbacks, which must not raise)."""
    return remaining() <= 0


@contextmanager
def deferred_deadline(what: str) -> Iterator[None]:
    """Run C code that calls back into Python: the alarm does not raise inside it (callbacks poll `expired()`);
    the deadline is enforced when the block ends."""
    _deferred[0] += 1
    try:
        yield
    finally:
        _deferred[0] -= 1
    check_deadline(what)


def _can_signal() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def deadline(seconds: float, what: str = "truth evaluation") -> Iterator[None]:
    """Run the block with a wall-clock cap of `seconds` (inf: no cap); raises DeadlineExceeded past it."""
    if math.isnan(seconds) or seconds <= 0:
        raise DeadlineExceeded(f"{what}: no time left (deadline {seconds!r} s)")
    if math.isinf(seconds):
        yield
        return
    end = time.monotonic() + seconds
    _deadlines.append(end)
    armed = _can_signal()
    previous_handler = previous_timer = None
    if armed:
        def on_alarm(signum, frame):
            if _deferred[0]:  # cannot unwind through C callbacks: poll again shortly (the callback checks expired())
                signal.setitimer(signal.ITIMER_REAL, 0.05)
                return
            if remaining() <= 1e-3:
                raise DeadlineExceeded(f"{what} ran past its deadline")
            signal.setitimer(signal.ITIMER_REAL, max(remaining(), 1e-3))  # an outer, later deadline

        previous_handler = signal.signal(signal.SIGALRM, on_alarm)
        previous_timer = signal.setitimer(signal.ITIMER_REAL, max(remaining(), 1e-3))
    try:
        yield
    finally:
        _deadlines.remove(end)
        if armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_handler)
            if previous_timer and previous_timer[0] > 0:  # re-arm an outer timer for what is left of it
                signal.setitimer(signal.ITIMER_REAL, max(remaining(), 1e-3) if _deadlines else previous_timer[0])
