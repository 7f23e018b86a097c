"""A command stopped by SIGTERM or SIGINT ends every process it started and leaves nothing half written.

`stop_on_signals()` wraps a command (verify.cli runs each command inside it). Inside it, on the main thread, SIGTERM
and SIGINT first end the processes the command started, with all their descendants (`end_children`: a pool's
workers, the isolated truths' workers, the capped processes of `account --compare`, a Dask LocalCluster), then raise
`Interrupted` (a KeyboardInterrupt) in the main thread, so that the command unwinds through its `finally` blocks,
which remove what it had half written; verify then exits with 128 + the signal's number (130 for SIGINT, 143 for
SIGTERM; README, "Exit codes"). The children go first because a pool's shutdown waits for its running tasks, and a
worker whose parent is gone blocks forever (seen: `verify run`'s workers kept ~640 MB each after a SIGTERM).

A process forked inside the block gets back the handlers that were in place before (an at-fork hook): a pool worker
or an isolated truth dies of SIGTERM as it did, and never stops on its own. A signal that comes while the command
unwinds from an Interrupted (inside the `finally` blocks and handlers it runs) ends the children again but does not
interrupt the clean-up; anywhere else it stops again. An Interrupted raised where CPython swallows exceptions (a
garbage-collector callback, a finaliser) is raised again at once.
"""

from __future__ import annotations

import _thread
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from verify.exitcodes import stopped_by

SIGNALS = (signal.SIGTERM, signal.SIGINT)
GRACE_S = 2.0  # a child that handles SIGTERM (a Dask worker) has this long to end before SIGKILL
FREEZE_S = 2.0  # a process sent SIGSTOP is waited for this long to stop before its children are listed
_POLL_S = 0.01
_AGAIN_S = 1e-3  # a swallowed Interrupted is raised again this much later
# stopped while the tree is walked (without SIGSTOP, not POSIX: ended at once)
_FREEZE, _THAW = getattr(signal, "SIGSTOP", signal.SIGTERM), getattr(signal, "SIGCONT", signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """The command was stopped by signal `signum`; its exit code is 128 + signum."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return stopped_by(self.signum)

    def __str__(self) -> str:
        return f"stopped by {signal.Signals(self.signum).name}"


class _Guard:
    """The state of the active `stop_on_signals` block: the process that set it up, the children it spares (those
    that existed before it began), and what it replaced."""

    def __init__(self, own_process: bool) -> None:
        self.own_process = own_process
        self.spare = frozenset() if own_process else _existing_children()
        self.previous: dict[int, Any] = {}
        self.previous_hook = sys.unraisablehook
        self.busy = False
        self.stopped = False  # a signal has come
        self.closing = False  # the block has ended: a signal is left to the handlers of before
        self.pending: int | None = None  # a signal that came while the block closed


_guard: _Guard | None = None


def _identity(proc: Any) -> tuple[int, float]:
    return proc.pid, proc.create_time()


def _existing_children() -> frozenset[tuple[int, float]]:
    import psutil

    found = set()
    for proc in psutil.Process().children():
        try:
            found.add(_identity(proc))
        except psutil.Error:
            pass
    return frozenset(found)


def end_children(spare: frozenset[tuple[int, float]] = frozenset()) -> int:
    """End every child of this process (but those in `spare`, by pid and start time) and every descendant of theirs;
    returns how many processes were ended. They are stopped first (SIGSTOP) until the tree stops growing, so that
    none forks a process that would escape, then sent SIGTERM (and SIGCONT), and SIGKILL after GRACE_S."""
    import psutil

    def ours(proc: psutil.Process) -> bool:
        try:
            return _identity(proc) not in spare
        except psutil.Error:
            return False

    def signal_all(procs, signum: int) -> None:
        for proc in procs:
            try:
                proc.send_signal(signum)
            except psutil.Error:
                pass

    def running(proc: psutil.Process) -> bool:
        try:
            return proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def moving(proc: psutil.Process) -> bool:
        try:
            return proc.status() not in (psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
        except psutil.Error:
            return False

    def wait_frozen(procs) -> None:
        """Until each of `procs` has stopped (SIGSTOP is delivered after kill returns: a process still running
        when its children are listed could fork one more, which would escape), or FREEZE_S has passed."""
        end = time.monotonic() + FREEZE_S
        waiting = list(procs)
        while waiting and time.monotonic() < end:
            waiting = [p for p in waiting if moving(p)]
            if waiting:
                time.sleep(_POLL_S / 10)

    tree: dict[int, psutil.Process] = {}
    helper = _multiprocessing_helper()
    frontier = [p for p in psutil.Process().children() if ours(p) and p.pid != helper]
    try:
        while frontier:
            signal_all(frontier, _FREEZE)
            if _FREEZE != signal.SIGTERM:
                wait_frozen(frontier)
            tree.update((p.pid, p) for p in frontier)
            frontier = []
            for proc in list(tree.values()):
                try:
                    frontier += [c for c in proc.children() if c.pid not in tree]
                except psutil.Error:
                    pass
        signal_all(tree.values(), signal.SIGTERM)
    finally:
        signal_all(tree.values(), _THAW)
    end = time.monotonic() + GRACE_S
    while any(running(p) for p in tree.values()) and time.monotonic() < end:
        time.sleep(_POLL_S)
    left = [p for p in tree.values() if running(p)]
    if left:
        signal_all(left, signal.SIGKILL)
        for proc in left:  # their own children, started while they ended
            try:
                signal_all(proc.children(recursive=True), signal.SIGKILL)
            except psutil.Error:
                pass
    return len(tree)


def _multiprocessing_helper() -> int | None:
    """The pid of multiprocessing's resource tracker of this process (a Dask LocalCluster starts one), or None: it
    ignores SIGTERM and ends by itself when this process ends, after it has removed the semaphores and shared memory
    the ended processes left, so it is left to do that."""
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    return getattr(getattr(tracker, "_resource_tracker", None), "_pid", None)


def _unwinding() -> bool:
    """True if this thread is handling an Interrupted (running a `finally` block or a handler on its way out), or an
    exception raised while it did so."""
    err, seen = sys.exc_info()[1], 0
    while err is not None and seen < 100:
        if isinstance(err, Interrupted):
            return True
        err, seen = err.__context__, seen + 1
    return False


def _on_signal(signum: int, frame: Any) -> None:
    guard = _guard
    if guard is None or guard.busy:
        return
    if guard.closing:
        guard.pending = signum
        return
    guard.busy = True
    try:
        if guard.own_process and not guard.stopped:  # what libraries report about the processes ended (a Dask
            logging.disable(logging.CRITICAL)           # cluster's failed or restarted workers) is no news
        guard.stopped = True
        end_children(guard.spare)
    finally:
        guard.busy = False
    if not _unwinding():
        raise Interrupted(signum)


def _on_unraisable(args: Any) -> None:
    """An Interrupted swallowed where it landed is raised again at once (from another thread: raised from here, it
    would land in this hook and be swallowed again); anything else goes to the previous hook."""
    guard = _guard
    if isinstance(args.exc_value, Interrupted) and guard is not None:
        # Starting the timer's thread waits until it runs: on a busy machine its interrupt can come before `start`
        # returns and land here, where it would be swallowed again (CI lost one so). It is caught and scheduled
        # again, later each time; nothing of this hook runs after `start` returns.
        for attempt in range(64):
            delay = _AGAIN_S if attempt == 0 else min(1.0, _AGAIN_S + 1e-3 * 2**attempt)
            try:
                threading.Timer(delay, _thread.interrupt_main, (args.exc_value.signum,)).start()
                return
            except Interrupted:
                continue
    elif guard is not None:
        guard.previous_hook(args)
    else:
        sys.__unraisablehook__(args)


def _reset_in_child() -> None:
    """In a process forked inside the block: the handlers that were in place before it."""
    global _guard
    guard, _guard = _guard, None
    if guard is None:
        return
    for signum, handler in guard.previous.items():
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError, TypeError):
            pass
    if sys.unraisablehook is _on_unraisable:
        sys.unraisablehook = guard.previous_hook


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_in_child)


@contextmanager
def stop_on_signals(own_process: bool = True) -> Iterator[None]:
    """Run the block so that SIGTERM and SIGINT end the processes it started and raise Interrupted (see the module's
    docstring); outside the main thread, or nested in another such block, it changes nothing. `own_process`: this
    process is verify's (a `verify` command): every child is the command's, and after a stop what libraries log or
    report at exit is not shown. Otherwise (verify called inside another program) the children this process had
    before the block are left alone, and so are its logging and unraisable hook."""
    global _guard
    if _guard is not None or threading.current_thread() is not threading.main_thread():
        yield
        return
    guard = _guard = _Guard(own_process)
    sys.unraisablehook = _on_unraisable
    try:
        try:
            for signum in SIGNALS:
                previous = signal.signal(signum, _on_signal)
                guard.previous[signum] = signal.SIG_DFL if previous is None else previous  # None: set outside Python
        except (ValueError, OSError):  # a platform or embedding where one cannot be caught: the block runs without
            pass
        yield
    except KeyboardInterrupt:  # an Interrupted that came back from a worker, a Ctrl-C of a thread: no child left
        end_children(guard.spare)
        raise
    finally:
        try:
            guard.closing = True
        finally:  # also where a signal's Interrupted landed just before: the handlers are put back all the same
            _close(guard)


def _close(guard: _Guard) -> None:
    """Put back what the block replaced; a signal that came while it closed goes to the handlers of before."""
    global _guard
    for signum, handler in guard.previous.items():
        signal.signal(signum, handler)
    _guard = None
    if sys.unraisablehook is _on_unraisable:
        sys.unraisablehook = _quiet if guard.own_process and guard.stopped else guard.previous_hook
    if guard.pending is not None:
        signal.raise_signal(guard.pending)


def _quiet(args: Any) -> None:
    """The unraisable hook of a verify process that was stopped: exit handlers' errors about the processes it ended
    (a Dask cluster closed half started) are not shown."""
