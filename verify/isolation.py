"""Run untrusted code where a deadline can stop it: in a forked worker process, killed (SIGKILL) at the deadline.

The truths of families that are not built in (plugins, families registered from Python) run this way (`truth`, which
verify.memo calls): their code may sit in one long C call, or catch the DeadlineExceeded that an in-process deadline
raises, and no in-process deadline stops either. Built-in families run in-process (verify.limits' deadlines hold for
them in every thread).

The worker is forked from this process, so it has the families and their closures, as they are when it is forked.
It lives for one evaluation session (`session()`: a search, a check, a run's family group; sessions nest and share
the outermost one's worker) and is ended when the session ends, so a later session computes what the caller's code
computes then (a plugin module's globals changed, a pytest `monkeypatch`, a family registered again); within a
session it is reused across points (~0.3 ms a point more than in-process; a fresh fork per point costs 10-45 ms on a
2-core machine). Outside any session each truth forks afresh. A worker is replaced after a kill, a memory error, a
change of the memory cap, or when a family it does not have (by identity) is asked for. It sees this process's
environment (sent with each request where it changed). Every request carries an id that its reply echoes: any
exception between a request and its reply (a deadline, Ctrl-C) ends the worker, and a reply to another request is
never taken for this one's. Its address space is capped (RLIMIT_AS) at its size when forked plus the memory cap (env
VERIFY_MEMORY_CAP) plus HEADROOM: an allocation past it is a MemoryLimitExceeded. Whatever a family's code raises in
a worker, SystemExit and KeyboardInterrupt included (SIGINT is ignored there, so it is the code's own), comes back as
that point's error, never as an exit of verify's.
A truth comes back pickled, which drops its `enclose` closure (verify.results.Truth), so an isolated truth gets an
`enclose` that runs in the worker too and sends the Enclosure's ends back exactly (Arb balls as integer
mantissa-exponent pairs). Exceptions come back as they were raised (class, args and attributes).

`call_capped(fn, *args, seconds=, what=)` runs any function in a fresh forked process the same way.
Env VERIFY_ISOLATION: "worker" (the default), "fork" (a fresh process per truth and per enclosure), "off" (plugin
truths in-process: code you trust, under in-process deadlines only). Without os.fork (Windows) truths run
in-process.
"""

from __future__ import annotations

import collections
import contextlib
import ctypes
import dataclasses
import itertools
import os
import pickle
import signal
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Mapping
from multiprocessing import Pipe
from typing import TYPE_CHECKING, Any

from verify import families  # read at call time: a test may give it another FAMILIES
from verify.errors import (
    DeadlineExceeded,
    MemoryLimitExceeded,
    ParameterError,
    PluginError,
    ResourceLimitError,
    VerifyError,
)
from verify.limits import ISOLATION_MODES as MODES
from verify.limits import caps_env, deferred_deadline, memory_cap, remaining, truth_deadline, uninterrupted
from verify.limits import isolation_mode as mode
from verify.results import Truth
from verify.truth.numbers import Enclosure

if TYPE_CHECKING:
    from verify.model import Family, Quantity

# address space a worker may add beyond the memory cap: thread stacks, BLAS buffers and malloc arenas, which reserve
# address space per thread (measured: NumPy's first LAPACK call adds ~18 MiB per BLAS thread)
HEADROOM = (256 << 20) + (64 << 20) * (os.cpu_count() or 1)
_CACHED_TRUTHS = 64  # truths a worker keeps for their enclosures


class WorkerDied(ResourceLimitError):
    """An isolated computation's process died without an answer (a crash in its code, or a cap hit inside C code)."""


def trusted(family: Family) -> bool:
    """A built-in family, whose truths run in-process: one of verify's names, which no plugin can register (a copy
    made in Python with another truth, as tests do to count calls, is code of this process's own)."""
    return family.name in families.BUILT_IN


def truth(family: Family, quantity: Quantity, params: Mapping[str, float]) -> Truth:
    """`family`'s truth at validated `params`: in-process for a built-in family, else in a worker process stopped at
    the innermost deadline (or at the point's deadline, env VERIFY_TRUTH_DEADLINE, outside any)."""
    if trusted(family) or mode() == "off":
        return family.truth_validated(quantity, params)
    key = (family.name, quantity, tuple(sorted(params.items())))
    what = f"the {family.name} truth"
    if mode() == "fork" or not _in_session():
        found, enclosable = call_capped(_truth_job, family, key, seconds=_budget(what), what=what)
    else:
        found, enclosable = _worker_for(family).ask(("truth", key), _budget(what), what)
    if not isinstance(found, Truth):
        return found  # what the family's code returned, as in-process (the checker names the problem)
    return dataclasses.replace(found, enclose=_IsolatedEnclose(family, key) if enclosable else None)


def call_capped(fn: Callable[..., Any], *args: Any, seconds: float, what: str) -> Any:
    """`fn(*args)` run in a freshly forked process (it sees everything this process has, closures included), stopped
    with SIGKILL after `seconds` (DeadlineExceeded), under the memory cap; its result (which must pickle) or its
    exception comes back."""
    if not hasattr(os, "fork"):
        raise ParameterError("call_capped needs os.fork (POSIX)")
    child = _Child(job=(fn, args))
    try:
        value = child.answer(seconds, what)
    except BaseException:
        child.stop()
        raise
    child.stop(wait=False)  # it exits by itself: reaped later, not waited for (its teardown takes milliseconds)
    return value


def _budget(what: str) -> float:
    seconds = min(remaining(), truth_deadline())
    if not seconds > 0:
        raise DeadlineExceeded(f"{what} ran past its deadline (no time left to start it)")
    return seconds


# --- the two computations a child runs: a truth, and its enclosure ---

def _truth_job(family: Family, key: tuple, cache: dict | None = None) -> tuple[Any, bool]:
    _, quantity, items = key
    found = family.truth_validated(quantity, dict(items), in_worker=True)
    if cache is not None and isinstance(found, Truth) and found.enclose is not None:
        cache[key] = found
        while len(cache) > _CACHED_TRUTHS:
            cache.pop(next(iter(cache)))
    return found, getattr(found, "enclose", None) is not None


def _enclose_job(family: Family, key: tuple, prec: int, cache: dict | None = None) -> Any:
    found = (cache or {}).get(key)
    if found is None:  # a fresh worker (the one that computed the truth was replaced): compute it again
        found = family.truth_validated(key[1], dict(key[2]), in_worker=True)
    if getattr(found, "enclose", None) is None:
        raise VerifyError(f"the {family.name} truth has no enclosure here")
    return _encode_enclosure(found.enclose(prec))


class _IsolatedEnclose:
    """The `enclose` of an isolated truth: runs the family's own in a worker process, under the innermost deadline."""

    def __init__(self, family: Family, key: tuple):
        self.family, self.key = family, key

    def __call__(self, prec: int) -> Any:
        what = f"the {self.family.name} truth's enclosure"
        if mode() == "fork" or not _in_session():
            encoded = call_capped(_enclose_job, self.family, self.key, prec, seconds=_budget(what), what=what)
        else:
            encoded = _worker_for(self.family).ask(("enclose", self.key, prec), _budget(what), what)
        return _decode_enclosure(encoded)


# --- exact transport of an Enclosure (verify.truth.numbers): ends are exact Arb balls or +-inf floats ---

def _encode_end(x: Any) -> tuple:
    from flint import arb
    if isinstance(x, arb):
        if x.is_finite():
            return ("arb", x.mid().man_exp(), x.rad().man_exp())
        return ("arb-str", x.str(30, radius=True))
    return ("obj", x)


def _decode_end(code: tuple) -> Any:
    from flint import arb
    kind = code[0]
    if kind == "arb":
        (m, e), (rm, re) = code[1], code[2]
        return arb((int(m), int(e)), (int(rm), int(re)))
    if kind == "arb-str":
        return arb(code[1])
    return code[1]


def _encode_enclosure(enc: Any) -> tuple:
    if isinstance(enc, Enclosure):
        return ("enclosure", _encode_end(enc.lower), _encode_end(enc.upper), enc.method, enc.prec)
    return ("obj", enc)


def _decode_enclosure(code: tuple) -> Any:
    if code[0] == "enclosure":
        return Enclosure(_decode_end(code[1]), _decode_end(code[2]), code[3], code[4])
    return code[1]


# --- exceptions: back as raised where their class and attributes pickle, else by name and message ---

def _exception_payload(err: BaseException) -> tuple:
    try:
        data = pickle.dumps((type(err), err.args, dict(getattr(err, "__dict__", {}))))
        _rebuild_exception(data)
        return ("exception", data)
    except Exception:  # noqa: BLE001 - an exception that does not travel: its name and message do
        return ("text", type(err).__qualname__, str(err), isinstance(err, VerifyError))


def _rebuild_exception(data: bytes) -> BaseException:
    cls, args, attrs = pickle.loads(data)
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(attrs)
    return err


def _memory_error(err: BaseException | None) -> MemoryError | None:
    """The MemoryError behind `err` (Family.truth_validated wraps a plugin's in a PluginError), if any."""
    seen = 0
    while err is not None and seen < 10:
        if isinstance(err, MemoryError):
            return err
        err, seen = err.__cause__ or err.__context__, seen + 1
    return None


def _raise_payload(payload: tuple, what: str) -> None:
    if payload[0] == "exception":
        raise _rebuild_exception(payload[1])
    _, name, message, ours = payload
    cls = VerifyError if ours else RuntimeError
    raise cls(f"{what} raised {name}: {message}")


# --- the child process ---

_LIVE: weakref.WeakSet[_Child] = weakref.WeakSet()  # this process's children, closed (not killed) in a forked child
_UNREAPED: list[int] = []  # killed children not waited for yet


def _reap() -> None:
    for pid in list(_UNREAPED):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            _UNREAPED.remove(pid)


def _after_fork_in_child() -> None:
    for child in list(_LIVE):
        child.forget()
    _LIVE.clear()
    _UNREAPED.clear()
    _workers.__dict__.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _vm_bytes() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _limit_memory(cap: int) -> None:
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return
    size = _vm_bytes()
    if size is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + cap + HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft == resource.RLIM_INFINITY or limit < soft:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: killed when the forking thread ends
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass


def _apply_env(env: Mapping[str, str] | None) -> None:
    if env is not None and env != os.environ:
        os.environ.clear()
        os.environ.update(env)


def _as_error(err: BaseException, request: tuple) -> BaseException:
    """What the parent raises for `err`: an Exception as it is; a SystemExit, KeyboardInterrupt or other
    BaseException that the code run here raised (this process ignores SIGINT and is never asked to exit) is that
    computation's error, a PluginError naming it, never an exit or an interrupt of the parent's."""
    if isinstance(err, Exception):
        return err
    where = f"the {request[1][0]} truth" if request[0] in ("truth", "enclose") else "an isolated computation"
    detail = f"code {err.code!r}" if isinstance(err, SystemExit) else str(err)
    return PluginError(f"{where} raised {type(err).__name__}" + (f": {detail}" if detail else ""))


def _child_main(conn: Any, families: Mapping[str, Family], job: tuple | None, cap: int) -> None:
    """The forked process: answer requests until the parent closes the connection (or one job, then exit)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops this process
    _die_with_parent()
    _limit_memory(cap)
    cache: dict = collections.OrderedDict()
    while True:
        if job is not None:
            rid, request, env = 0, ("job",), None
        else:
            try:
                rid, request, env = conn.recv()
            except (EOFError, OSError):
                return
        fatal = False
        try:
            _apply_env(env)
            if request[0] == "job":
                value = job[0](*job[1])
            elif request[0] == "truth":
                value = _truth_job(families[request[1][0]], request[1], cache)
            else:
                value = _enclose_job(families[request[1][0]], request[1], request[2], cache)
            reply = (rid, "ok", value)
        except BaseException as err:  # noqa: BLE001 - the parent re-raises it
            memory = _memory_error(err)
            if memory is not None:  # the process may be in a bad state: answer, then end
                reply, fatal = (rid, "memory", str(memory)), True
            else:
                reply = (rid, "error", _exception_payload(_as_error(err, request)))
        try:
            data = pickle.dumps(reply)
        except Exception as err:  # noqa: BLE001 - an answer that cannot travel is an error there
            data = pickle.dumps((rid, "error", ("text", type(err).__qualname__,
                                                f"its result cannot be sent back ({err})", True)))
        try:
            conn.send_bytes(data)
        except OSError:
            return
        if job is not None or fatal:
            return


class _Child:
    """A forked process serving truths (or one job) over a socket pair."""

    def __init__(self, families: Mapping[str, Family] | None = None, job: tuple | None = None):
        self.families = dict(families or {})
        self.cap = memory_cap()
        self.env: dict | None = None  # the environment it has (sent when it changes)
        self.ids = itertools.count(1)  # request ids (a job's reply carries 0)
        _reap()
        ours, theirs = Pipe(duplex=True)
        with warnings.catch_warnings():  # Python >= 3.12 warns of fork in a threaded process: the child runs one job
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
            code = 0
            try:
                ours.close()
                _child_main(theirs, self.families, job, self.cap)
            except BaseException:  # noqa: BLE001
                code = 70
            os._exit(code)
        theirs.close()
        self.pid: int | None = pid
        self.conn: Any = ours
        _LIVE.add(self)

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            done = self.pid
        if done:
            self.pid = None
            self.stop()
        return self.pid is not None

    def ask(self, request: tuple, seconds: float, what: str) -> Any:
        """Send `request` and return its reply. The in-process deadline is deferred from before the request is sent
        until its reply is read (the wait stops the worker at `seconds` instead), and any exception in between (Ctrl-C,
        a broken connection) ends the worker: a reply left unread would answer the next request."""
        env = dict(os.environ)
        for name, value in caps_env().items():  # caps carried to this thread (a Dask task) count as environment
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        with deferred_deadline(what):
            try:
                rid = next(self.ids)
                try:
                    self.conn.send((rid, request, None if env == self.env else env))
                except OSError:
                    raise WorkerDied(f"{what}: its worker process is gone") from None
                self.env = env
                kind, value = self._receive(seconds, what, rid)
            except BaseException:
                if self.pid is not None:
                    self.stop()
                raise
        return self._result(kind, value, what)

    def answer(self, seconds: float, what: str) -> Any:
        """The reply of a one-job process (its id is 0)."""
        return self._result(*self._receive(seconds, what, 0), what)

    def _receive(self, seconds: float, what: str, rid: int) -> tuple[str, Any]:
        """The reply to request `rid`: replies to earlier requests (abandoned by an exception that ended the wait
        before this worker was stopped) are passed over, never taken for this one's; the process is stopped at
        `seconds`, where any exception interrupts the wait, or where it answers a request not asked yet."""
        end = time.monotonic() + seconds
        with deferred_deadline(what):  # the in-process deadline does not interrupt the wait: this one stops the child
            try:
                while True:
                    left = end - time.monotonic()
                    if left <= 0:
                        raise DeadlineExceeded(f"{what} ran past its deadline ({seconds:.3g} s); its process was "
                                               "stopped")
                    if self.conn.poll(min(left, 1.0)):
                        replied, kind, value = pickle.loads(self.conn.recv_bytes())
                        if replied == rid:
                            return kind, value
                        if replied > rid:
                            raise WorkerDied(f"{what}: its worker answered request {replied}, not asked yet, for "
                                             f"request {rid}")
            except (EOFError, OSError):
                how = self.stop()
                raise WorkerDied(f"{what}: its process died ({how}) without an answer: a crash in its code, or a "
                                 f"cap hit inside C code (memory cap {self.cap / 2**20:.0f} MiB, env "
                                 "VERIFY_MEMORY_CAP)") from None
            except BaseException:
                self.stop()
                raise

    def _result(self, kind: str, value: Any, what: str) -> Any:
        if kind == "ok":
            return value
        if kind == "memory":
            self.stop()
            raise MemoryLimitExceeded(f"{what} ran out of memory under the memory cap of {self.cap / 2**20:.0f} MiB "
                                      f"(env VERIFY_MEMORY_CAP) in its process ({value or 'MemoryError'})")
        _raise_payload(value, what)
        raise AssertionError("unreachable")  # pragma: no cover

    def stop(self, wait: bool = True) -> str:
        """Kill and reap the process (`wait=False`: reap it later); says how it ended."""
        pid = self.pid
        if pid is not None:  # killed first: an interrupt that lands in here leaves no live process behind
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.pid = None
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
        if pid is None:
            return "already reaped"
        if not wait:
            _UNREAPED.append(pid)
            return "killed"
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            return "already reaped"
        if os.WIFSIGNALED(status):
            return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
        return f"exit code {os.WEXITSTATUS(status)}"

    def forget(self) -> None:
        """In a forked child: close this inherited connection, leave the process (a sibling) alone."""
        self.pid = None
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None

    def __del__(self) -> None:
        if getattr(self, "pid", None) is not None:
            self.stop()


_workers = threading.local()  # .worker: this thread's _Child; .depth: how many sessions this thread is inside


def _in_session() -> bool:
    return getattr(_workers, "depth", 0) > 0


class session(contextlib.ContextDecorator):  # noqa: N801 - used as a function and a decorator
    """One evaluation session (a search, a check, a run's family group) in this thread: isolated truths share one
    worker process inside it, forked at its first isolated truth, so it computes what the caller's code computes
    when the session starts; the worker ends with the outermost session. Sessions nest (the inner ones share it)."""

    @uninterrupted
    def __enter__(self) -> session:
        depth = getattr(_workers, "depth", 0)
        if depth == 0:
            shutdown()  # one left behind (an exit that was itself interrupted) is not reused
        _workers.depth = depth + 1
        return self

    @uninterrupted
    def __exit__(self, *exc: object) -> None:
        _workers.depth = getattr(_workers, "depth", 1) - 1
        if _workers.depth <= 0:
            _workers.depth = 0
            shutdown(wait=False)


def _worker_for(family: Family) -> _Child:
    """This thread's worker, forked again if it is gone, if the memory cap changed, or if it lacks `family`."""
    worker: _Child | None = getattr(_workers, "worker", None)
    if worker is not None and worker.alive() and worker.cap == memory_cap() and \
            worker.families.get(family.name) is family:
        return worker
    if worker is not None:
        worker.stop()
    worker = _workers.worker = _Child({**families.FAMILIES, family.name: family})
    return worker


def shutdown(wait: bool = True) -> None:
    """Stop this thread's worker process (a later isolated truth forks a new one); `wait=False` reaps it later."""
    worker = getattr(_workers, "worker", None)
    _workers.worker = None
    if worker is not None:
        worker.stop(wait=wait)


__all__ = ["HEADROOM", "MODES", "WorkerDied", "call_capped", "mode", "session", "shutdown", "trusted", "truth"]
