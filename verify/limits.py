"""Caps on what one truth evaluation may spend: wall-clock deadlines and memory.

`deadline(seconds)` bounds a block, in any thread: on the main thread of a POSIX process a real-time timer's signal
raises `DeadlineExceeded` inside the block; on any other thread (a Dask worker's task, a thread of your own) a
watchdog thread raises it there asynchronously (PyThreadState_SetAsyncExc). Either way it lands between Python
bytecodes: pure-Python loops, mpmath, between NumPy calls; a long C call ends first (code that may stay in C, or
catch the exception, runs in a process that is killed at the deadline: pipeline.isolation). Deadlines are per thread
and nest (the earliest wins); `check_deadline()` and `expired()` poll them (`due()`: when the earliest passes).
`deferred_deadline(what)` marks C code that calls back into Python (acb.integral): nothing is raised inside it; the
deadline is enforced when it ends.
`truth_deadline()` is the default cap of one point (the checker applies it; env VERIFY_TRUTH_DEADLINE).
`require_memory(nbytes, what)` refuses an allocation above the cap (default 1 GiB, env VERIFY_MEMORY_CAP in bytes)
before it is made. `caps_env()`/`caps_from(env)` carry both caps to a worker whose environment lacks them (Dask).
`cache_size(given)` is the size cap of the on-disk truth cache (`--cache-size`, else env VERIFY_CACHE_SIZE, else
1 GiB; verify.pipeline.truth_cache), parsed by `parse_size` ("2GB", "512MiB", "1e9").
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from verify.errors import DeadlineExceeded, MemoryLimitExceeded, ParameterError

DEFAULT_MEMORY_CAP = 1 << 30  # bytes one truth evaluation may allocate in its largest arrays
DEFAULT_CACHE_SIZE = 1 << 30  # bytes the on-disk truth cache may hold (--cache-size, VERIFY_CACHE_SIZE)
DEFAULT_TRUTH_DEADLINE = 120.0  # seconds one point (truth and its rigorous re-check) may take
CAP_VARS = ("VERIFY_TRUTH_DEADLINE", "VERIFY_MEMORY_CAP")
_RETRY_S = 0.05  # a watchdog that finds its thread inside C callbacks (deferred_deadline) tries again this much later
_SOON_S = 1e-3  # a passed deadline whose interrupt was withdrawn (not to land in the wrong place) fires again then
_UNBOUNDED_S = 1e8  # a deadline further away (three years) is no cap: the real-time timer cannot be set that far
_AGAIN_S = 0.1  # a passed deadline whose block still runs fires again this often: an interrupt can be lost (raised
#                 inside a garbage-collector callback or __del__, which swallow it) or caught by the code it stops


class DeadlineInterrupt(DeadlineExceeded):
    """The watchdog's DeadlineExceeded, raised asynchronously in a thread (CPython builds it without arguments); the
    `deadline` block it stops re-raises it as a DeadlineExceeded naming what ran past its deadline."""

    def __init__(self, *args: object):
        super().__init__(*(args or ("a computation ran past its deadline",)))


class _Caps(threading.local):
    env: Mapping[str, str | None] | None = None  # per-thread overrides of CAP_VARS (caps_from)


_caps = _Caps()


def _getenv(name: str) -> str | None:
    override = _caps.env
    if override is not None and name in override:
        return override[name]
    return os.environ.get(name)


ISOLATION_MODES = ("worker", "fork", "off")


def isolation_mode() -> str:
    """How plugin truths run (env VERIFY_ISOLATION, pipeline.isolation): "worker", "fork" or "off". Here, beside the
    caps, so that the CLI checks it at start-up without importing the isolation (and the families it runs)."""
    value = os.environ.get("VERIFY_ISOLATION", "worker")
    if value not in ISOLATION_MODES:
        raise ParameterError(f"VERIFY_ISOLATION must be one of {', '.join(ISOLATION_MODES)}, got {value!r}")
    return value if hasattr(os, "fork") else "off"


def caps_env() -> dict[str, str | None]:
    """This thread's caps as the environment states them (None: unset, the default), to be carried to a worker."""
    return {name: _getenv(name) for name in CAP_VARS}


@contextmanager
def caps_from(env: Mapping[str, str | None]) -> Iterator[None]:
    """Apply caps carried from another process (`caps_env()` there) in this thread until the block ends."""
    previous = _caps.env
    _caps.env = {**(previous or {}), **{k: v for k, v in env.items() if k in CAP_VARS}}
    try:
        yield
    finally:
        _caps.env = previous


def memory_cap() -> int:
    """The memory cap in bytes (env VERIFY_MEMORY_CAP overrides the default)."""
    raw = _getenv("VERIFY_MEMORY_CAP")
    if raw is None:
        return DEFAULT_MEMORY_CAP
    try:
        value = int(float(raw))
    except (ValueError, OverflowError):  # not a number, NaN, inf, 1e400
        raise ParameterError(f"VERIFY_MEMORY_CAP must be a finite number of bytes, got {raw!r}") from None
    if value <= 0:
        raise ParameterError(f"VERIFY_MEMORY_CAP must be > 0, got {raw!r}")
    return value


def truth_deadline() -> float:
    """Seconds one point's truth may take (env VERIFY_TRUTH_DEADLINE overrides the default; inf: no cap)."""
    raw = _getenv("VERIFY_TRUTH_DEADLINE")
    if raw is None:
        return DEFAULT_TRUTH_DEADLINE
    try:
        value = float(raw)
    except ValueError:
        raise ParameterError(f"VERIFY_TRUTH_DEADLINE must be a number of seconds, got {raw!r}") from None
    if not value > 0:
        raise ParameterError(f"VERIFY_TRUTH_DEADLINE must be > 0, got {raw!r}")
    return value


_SIZE = re.compile(r"\s*(?P<number>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*(?P<unit>[A-Za-z]*)\s*")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "k": 2**10, "kib": 2**10, "m": 2**20, "mib": 2**20, "g": 2**30, "gib": 2**30, "t": 2**40, "tib": 2**40}


def parse_size(text: str, what: str) -> int:
    """A number of bytes from `text`: a number with an optional unit (B; kB, MB, GB, TB: powers of 1000; KiB, MiB,
    GiB, TiB, or K, M, G, T: powers of 1024), e.g. "2GB", "512MiB", "1e9". A ParameterError naming `what` else."""
    match = _SIZE.fullmatch(text) if isinstance(text, str) else None
    unit = _UNITS.get(match["unit"].lower()) if match else None
    if unit is None:
        raise ParameterError(f"{what} must be a size such as 2GB, 512MiB or 1e9 (bytes), got {text!r}")
    try:
        value = float(match["number"]) * unit
        size = int(value)
    except (OverflowError, ValueError):  # 1e400
        raise ParameterError(f"{what} must be a finite size, got {text!r}") from None
    if not 1 <= size <= 2**62:  # SQLite's integers hold diskcache's size_limit
        raise ParameterError(f"{what} must be between one byte and 4 EiB, got {text!r}")
    return size


def cache_size(given: str | None = None) -> int:
    """The truth cache's size cap in bytes: `given` (--cache-size), else env VERIFY_CACHE_SIZE, else 1 GiB."""
    if given is not None:
        return parse_size(given, "--cache-size")
    raw = os.environ.get("VERIFY_CACHE_SIZE")
    return DEFAULT_CACHE_SIZE if raw is None else parse_size(raw, "VERIFY_CACHE_SIZE")


def require_memory(nbytes: float, what: str) -> None:
    """Raise MemoryLimitExceeded, naming `what`, if `nbytes` exceeds the memory cap."""
    cap = memory_cap()
    if not nbytes <= cap:  # NaN counts as too much
        raise MemoryLimitExceeded(f"{what} needs about {nbytes / 2**20:.0f} MiB, above the memory cap of "
                                  f"{cap / 2**20:.0f} MiB (env VERIFY_MEMORY_CAP)")


# --- deadlines: per-thread stacks, a signal timer on the main thread, a watchdog thread for the others ---

class _Thread:
    """One thread's deadlines (innermost last), its depth inside C callbacks, and whether an asynchronous
    DeadlineInterrupt may be pending for it. Mutated under _lock where the watchdog reads it."""

    __slots__ = ("ident", "stack", "deferred", "pending")

    def __init__(self) -> None:
        self.ident = threading.get_ident()
        self.stack: list[_Entry] = []
        self.deferred = 0
        self.pending = False


class _Local(threading.local):
    def __init__(self) -> None:
        self.info = _Thread()


_local = _Local()


class _Entry:
    __slots__ = ("end", "what", "thread", "active", "due", "frame", "lasti")

    def __init__(self, end: float, what: str, thread: _Thread, frame) -> None:
        self.end, self.what, self.thread = end, what, thread
        self.active, self.due = True, end  # when the watchdog next looks at it
        self.frame, self.lasti = frame, getattr(frame, "f_lasti", -1)  # the frame running the `with` block


def _me() -> _Thread:
    return _local.info


def remaining() -> float:
    """Seconds left before the innermost deadline of this thread (inf without one)."""
    return due() - time.monotonic()


def due() -> float:
    """The time.monotonic() at which the earliest deadline of this thread passes (inf without one): a callback that
    runs thousands of times inside one C call compares the clock with it instead of polling `expired()`."""
    return min((e.end for e in _me().stack), default=math.inf)


def check_deadline(what: str = "computation") -> None:
    """Raise DeadlineExceeded if the innermost deadline has passed (for loops that cannot be interrupted)."""
    if remaining() <= 0:
        raise DeadlineExceeded(f"{what} ran past its deadline")


def expired() -> bool:
    """True if the innermost deadline has passed (for callbacks, which must not raise)."""
    return remaining() <= 0


_set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
_set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
_set_async_exc.restype = ctypes.c_int


_PROTECTED: set = set()  # code objects an interrupt waits for: see `uninterrupted`


def uninterrupted(func: Callable) -> Callable:
    """Mark `func` (the `__enter__` or `__exit__` of a context manager that holds process state: the run memo, an
    isolation session) as code a deadline's interrupt does not land in: it lands just after. An interrupt inside an
    `__exit__` left the state of the block behind (a memo of earlier truths, a worker of an earlier session, served
    to the next check); one in the body is handled by the `with` statement, which still runs `__exit__`."""
    _PROTECTED.add(func.__code__)
    return func


def _importing(frame, block) -> bool:
    """True if `frame` runs a module's import started inside the `with` block whose frame is `block`, or code marked
    `uninterrupted`: an import cut short leaves half-initialised extension modules behind (every later import of
    scipy.optimize in the process failed with pybind11's 'type "ObjSense" is already registered'), so an interrupt
    waits for the import (or the marked code) to end."""
    while frame is not None and frame is not block:
        if _imports(frame):
            return True
        frame = frame.f_back
    return False


def _imports(frame) -> bool:
    return frame.f_code.co_filename.startswith("<frozen importlib") or frame.f_code in _PROTECTED


def _raise_in(entry: _Entry) -> float | None:
    """Raise DeadlineInterrupt in the thread of `entry` if its `with` block still runs there and imports no module
    (under _lock); the seconds after which to look again, or None where the entry is forgotten (its block ended
    without its exit being able to say so, or the thread is gone)."""
    thread = entry.thread
    top = sys._current_frames().get(thread.ident)
    importing = False
    while top is not None and top is not entry.frame:
        importing = importing or _imports(top)
        top = top.f_back
    if top is None:
        entry.active = False
        thread.stack[:] = [e for e in thread.stack if e is not entry]
        return None
    if importing:
        return _SOON_S
    if _set_async_exc(thread.ident, DeadlineInterrupt):
        thread.pending = True
    return _AGAIN_S  # again until its block ends


def _clear_pending(thread: _Thread) -> None:
    """Withdraw an asynchronous DeadlineInterrupt not yet delivered (under _lock): it fires again where it is safe
    (after the C callbacks, or in the outer block that is still running)."""
    if thread.pending:
        _set_async_exc(thread.ident, ctypes.py_object())  # NULL: clears what is pending
        thread.pending = False
        _soon(thread)


def _soon(thread: _Thread) -> None:
    """Passed deadlines of `thread` fire again shortly (under _lock)."""
    now = time.monotonic()
    for e in thread.stack:
        if e.active and e.end <= now:
            _watchdog.push(now + _SOON_S, e)


class _Watchdog:
    """One daemon thread that raises DeadlineInterrupt in threads whose deadline has passed."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, _Entry]] = []
        self.seq = itertools.count()
        self.wake = threading.Condition(_lock)
        self.thread: threading.Thread | None = None

    def push(self, when: float, entry: _Entry) -> None:  # under _lock
        entry.due = when
        heapq.heappush(self.heap, (when, next(self.seq), entry))
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="verify-deadline-watchdog", daemon=True)
            self.thread.start()
        self.wake.notify()

    def _run(self) -> None:
        with self.wake:
            while True:
                now = time.monotonic()
                while self.heap and self.heap[0][0] <= now:
                    when, _, e = heapq.heappop(self.heap)
                    if not e.active or when != e.due:  # ended, or looked at another time
                        continue
                    if e.thread.deferred:  # inside C code calling back into Python: not there
                        self.push(now + _RETRY_S, e)
                        continue
                    again = _raise_in(e)
                    if again is not None:
                        self.push(now + again, e)
                self.wake.wait(self.heap[0][0] - now if self.heap else None)


_lock = threading.Lock()
_watchdog = _Watchdog()


def _after_fork_in_child() -> None:
    """A forked child has one thread: fresh lock and watchdog, and no deadlines (its parent enforces them)."""
    global _lock, _watchdog
    _lock = threading.Lock()
    _watchdog = _Watchdog()
    me = _me()
    me.ident, me.stack, me.deferred, me.pending = threading.get_ident(), [], 0, False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=lambda: _lock.acquire(), after_in_parent=lambda: _lock.release(),
                        after_in_child=_after_fork_in_child)


def _purge(thread: _Thread, here, entering: bool) -> None:
    """Drop passed deadlines left behind by a block whose exit was itself interrupted (under _lock, or in the
    signal handler): their `with` frame is no longer running (`here` is the current frame), or is entering the same
    `with` again."""
    if not thread.stack:
        return
    running, frame = set(), here
    while frame is not None:
        running.add(id(frame))
        frame = frame.f_back
    now = time.monotonic()
    keep = []
    for e in thread.stack:
        again = entering and e.frame is here and e.lasti == here.f_lasti
        if e.end <= now and (id(e.frame) not in running or again):
            e.active = False
        else:
            keep.append(e)
    thread.stack[:] = keep


def _truncate(thread: _Thread, entry: _Entry) -> None:
    """Remove `entry` and any deadline nested in it (under _lock)."""
    for i, e in enumerate(thread.stack):
        if e is entry:
            for inner in thread.stack[i:]:
                inner.active = False
                inner.frame = None
            del thread.stack[i:]
            return


@contextmanager
def deferred_deadline(what: str) -> Iterator[None]:
    """Run C code that calls back into Python: the deadline does not raise inside it (callbacks poll `expired()`);
    it is enforced when the block ends."""
    me = _me()
    with _lock:
        me.deferred += 1
        _clear_pending(me)  # fired just before: it must not land inside the C callbacks
    try:
        yield
    finally:
        with _lock:
            me.deferred -= 1
    check_deadline(what)


def _late(me: _Thread, entry: _Entry) -> str | None:
    """What ran past its deadline when `entry`'s block ended without an exception after its own deadline or an outer
    one (the earliest that passed), else None: a block that overran fails even when its interrupt was lost (raised in a
    garbage-collector callback, which swallows it) or landed too late, so its outcome does not depend on when the
    signal came."""
    now = time.monotonic()
    try:
        i = me.stack.index(entry)
    except ValueError:
        return None
    passed = [e for e in me.stack[: i + 1] if e.end <= now]
    return min(passed, key=lambda e: e.end).what if passed else None


def _stopped_by_interrupt(exc: BaseException | None) -> bool:
    """True if an error (an Exception, never Ctrl-C or an exit) left a block because its deadline stopped it, though it
    is no DeadlineExceeded: C code that the interrupt reached can report it as a SystemError ("returned a result with
    an exception set", chained to it, or "error return without exception set", chained to nothing), and a handler
    can wrap it in an error of its own. Both links of the chain (__cause__ and __context__) are followed, a context
    suppressed by `raise ... from None` too: the caller converts only where the block's deadline has passed."""
    if not isinstance(exc, Exception) or isinstance(exc, DeadlineExceeded):
        return False
    if isinstance(exc, SystemError):
        return True
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        link = todo.pop()
        if isinstance(link, DeadlineExceeded):
            return True
        if id(link) not in seen:
            seen.add(id(link))
            todo += [e for e in (link.__cause__, link.__context__) if e is not None]
    return False


def _raise_if_overran(late: str | None, exc: BaseException | None) -> None:
    """DeadlineExceeded naming `late` (what ran past its deadline, from `_late`) for a block that ended without an
    exception, or with an error its deadline caused (`_stopped_by_interrupt`); nothing otherwise."""
    if late is not None and (exc is None or _stopped_by_interrupt(exc)):
        raise DeadlineExceeded(f"{late} ran past its deadline") from exc


# signal.signal without its enum conversion of the handler it returns (a function is looked up in signal.Handlers
# through a ValueError: ~10 us, twice per point); what it returns is only handed back to it
_set_handler = getattr(signal, "_signal", signal).signal


def _can_signal() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


class deadline:  # noqa: N801 - used as a function: `with deadline(seconds, what):`
    """Run the block with a wall-clock cap of `seconds` (inf: no cap); raises DeadlineExceeded past it, in any thread
    (see the module's docstring)."""

    def __init__(self, seconds: float, what: str = "truth evaluation"):
        if math.isnan(seconds) or seconds <= 0:
            raise DeadlineExceeded(f"{what}: no time left (deadline {seconds!r} s)")
        self.seconds, self.what = (math.inf if seconds > _UNBOUNDED_S else seconds), what
        self._entry: _Entry | None = None
        self._signal: tuple | None = None

    def __enter__(self) -> deadline:
        if math.isinf(self.seconds):
            return self
        me = _me()
        here = sys._getframe(1)  # the frame running the `with` statement
        entry = _Entry(time.monotonic() + self.seconds, self.what, me, here)
        if _can_signal():
            _purge(me, here, True)
            me.stack.append(entry)
            self._entry = entry
            self._arm_signal(me)
            return self
        with _lock:
            _purge(me, here, True)
            me.stack.append(entry)
            self._entry = entry
            _watchdog.push(entry.end, entry)
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        entry = self._entry
        if entry is None:
            return False
        self._entry = None
        me = entry.thread
        if self._signal is not None:
            late = _late(me, entry)
            self._disarm_signal(me, entry)  # first: no interrupt lands while the error is looked at
            _raise_if_overran(late, exc)
            return False
        with _lock:
            delivered = isinstance(exc, DeadlineInterrupt)
            if delivered:
                me.pending = False
                now = time.monotonic()
                passed = min((e for e in me.stack if e.end <= now), key=lambda e: e.end, default=None)
            else:
                _clear_pending(me)  # fired as the block ended: not to land after it
            late = _late(me, entry)
            _truncate(me, entry)
            _soon(me)  # outer deadlines that passed: their interrupt lands in their own blocks
        if delivered and passed is not None:  # name what ran past its deadline (the earliest that passed)
            raise DeadlineExceeded(f"{passed.what} ran past its deadline") from None
        _raise_if_overran(late, exc)
        return False

    # the main thread: a real-time timer whose signal raises in the block
    def _arm_signal(self, me: _Thread) -> None:
        def on_alarm(signum, frame):
            if me.deferred:  # cannot unwind through C callbacks: poll again shortly (the callback checks expired())
                signal.setitimer(signal.ITIMER_REAL, _RETRY_S)
                return
            _purge(me, sys._getframe(), False)  # a block whose exit this signal interrupted has ended all the same
            now = time.monotonic()
            passed = [e for e in me.stack if e.end <= now + 1e-3]
            if passed and _importing(frame, passed[-1].frame):  # not inside an import: just after it
                signal.setitimer(signal.ITIMER_REAL, _SOON_S)
                return
            if passed:  # again shortly if the block still runs (the exception was lost or caught)
                signal.setitimer(signal.ITIMER_REAL, _AGAIN_S)
                interrupt = DeadlineExceeded(f"{min(passed, key=lambda e: e.end).what} ran past its deadline")
                interrupt.from_alarm = True  # told apart by the unraisable hook
                raise interrupt
            if me.stack:
                signal.setitimer(signal.ITIMER_REAL, max(remaining(), 1e-3))  # an outer, later deadline

        previous_hook = sys.unraisablehook

        def on_unraisable(args) -> None:
            """An interrupt raised where CPython swallows exceptions (a garbage-collector or weak-reference callback, a
            finaliser: "Exception ignored in") fires again at once, unreported; anything else goes on as before."""
            if getattr(args.exc_value, "from_alarm", False):
                signal.setitimer(signal.ITIMER_REAL, _SOON_S)
            else:
                previous_hook(args)

        previous_handler = _set_handler(signal.SIGALRM, on_alarm)
        sys.unraisablehook = on_unraisable
        previous_timer = signal.setitimer(signal.ITIMER_REAL, max(remaining(), 1e-3))
        self._signal = (previous_handler, previous_timer, previous_hook, on_unraisable)

    def _disarm_signal(self, me: _Thread, entry: _Entry) -> None:
        previous_handler, previous_timer, previous_hook, hook = self._signal
        self._signal = None
        _truncate(me, entry)
        signal.setitimer(signal.ITIMER_REAL, 0)
        _set_handler(signal.SIGALRM, previous_handler)
        if sys.unraisablehook is hook:  # not where another hook has since been put
            sys.unraisablehook = previous_hook
        if previous_timer and previous_timer[0] > 0:  # re-arm an outer timer for what is left of it
            signal.setitimer(signal.ITIMER_REAL, max(remaining(), 1e-3) if me.stack else previous_timer[0])
