"""Run untrusted code where a deadline can stop it: in a forked worker process, killed at the deadline (on Pebble).

The truths of families that are not built in (plugins, families registered from Python) run this way (`truth`, which
pipeline.memo calls): their code may sit in one long C call, or catch the DeadlineExceeded that an in-process deadline
raises, and no in-process deadline stops either. Built-in truths run in-process: their code is verify's own, and a
worker's round trip (~0.3-0.5 ms) would cost more than many of them; verify.limits' deadlines hold for them in every
thread.

The worker is a Pebble ProcessPool of one process, forked from this process (fork context), so it has the families
and their closures as they are when it is forked; Pebble matches each reply to its task (a reply to an abandoned
task is dropped, never taken for another's) and stops a task at its timeout by ending its process (SIGTERM, whose
default action the worker restores so that it ends even inside C code; SIGKILL 3 s later if the code ignores it).
Pebble was chosen over loky (no fork start, no per-task timeout: a stuck task needs the executor killed) and
concurrent.futures (no per-task timeout either): see issue 49's measurements. A pool lives for one evaluation
session (`session()`: a search, a check, a run's family group; sessions nest and share the outermost one's pool) and
is stopped when the session ends, so a later session computes what the caller's code computes then (a plugin
module's globals changed, a pytest `monkeypatch`, a family registered again). Outside any session (and with env
VERIFY_ISOLATION=fork) each truth runs in a freshly forked process. A pool is replaced after a memory error, an
exception while it was asked (Ctrl-C), a change of the memory cap, or when a family it does not have (by identity)
is asked for; Pebble replaces a process it stopped or that died. The worker sees this process's environment: it is
sent with a request when it changed since the one before (or when the worker's own differs: a replaced process, or
code that changed it there, asks for it again). Its address space is capped (RLIMIT_AS) at its size when forked plus
the memory cap (env VERIFY_MEMORY_CAP) plus HEADROOM: an allocation past it is a MemoryLimitExceeded. Whatever a
family's code raises in a worker, SystemExit and KeyboardInterrupt included (SIGINT is ignored there, so it is the
code's own), comes back as that point's error, never as an exit of verify's.
A reply is pickled in the worker (an answer that does not pickle is that point's error), and comes back as bytes.
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
import multiprocessing
import os
import pickle
import signal
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from concurrent.futures import CancelledError
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

import pebble
import pebble.concurrent

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
_FORK = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
_POLL_S = 1.0  # a wait for a reply wakes this often: an exception raised into a thread that is not the main one lands
_LATE_S, _START_S = 2.0, 30.0  # a reply not back this long after the timeout (after the task started, before) is
#                                stopped here: Pebble's own timeout fires first (it polls every 0.1 s)
# Python >= 3.12 warns of fork in a threaded process (Pebble's pool has threads): the worker runs only the truths
warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks", category=DeprecationWarning)


class WorkerDied(ResourceLimitError):
    """An isolated computation's process died without an answer (a crash in its code, or a cap hit inside C code)."""


def trusted(family: Family) -> bool:
    """A built-in family, whose truths run in-process: one of verify's names, which no plugin can register (a copy
    made in Python with another truth, as tests do to count calls, is code of this process's own)."""
    return family.name in families.BUILT_IN


def truth(family: Family, quantity: Quantity, params: Mapping[str, float]) -> Truth:
    """`family`'s truth at validated `params`: in-process for a built-in family, else in a worker process stopped at
    the innermost deadline (or at the point's deadline, env VERIFY_TRUTH_DEADLINE, outside any)."""
    if trusted(family):
        return family.truth_validated(quantity, params)
    how = mode()
    if how == "off":
        return family.truth_validated(quantity, params)
    key = (family.name, quantity, tuple(sorted(params.items())))
    what = f"the {family.name} truth"
    if how == "fork" or not _in_session():
        found, enclosable = call_capped(_truth_job, family, key, seconds=_budget(what), what=what)
    else:
        found, enclosable = _worker_for(family).ask(("truth", key), _budget(what), what)
    if not isinstance(found, Truth):
        return found  # what the family's code returned, as in-process (the checker names the problem)
    return dataclasses.replace(found, enclose=_IsolatedEnclose(family, key) if enclosable else None)


def call_capped(fn: Callable[..., Any], *args: Any, seconds: float, what: str) -> Any:
    """`fn(*args)` run in a freshly forked process (it sees everything this process has, closures included), stopped
    after `seconds` (DeadlineExceeded), under the memory cap; its result (which must pickle) or its exception comes
    back."""
    if _FORK is None:
        raise ParameterError("call_capped needs os.fork (POSIX)")
    cap = memory_cap()
    _may_have_children()
    run = pebble.concurrent.process(timeout=seconds, context=_FORK)(_capped_job)
    with deferred_deadline(what):  # the wait is not interrupted by the in-process deadline: the timeout stops it
        future = run(fn, args, cap)
        return _reply(future, seconds, what, cap)


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



# --- the worker process (Pebble's), and what it runs ---

_served: dict = {}  # in a worker: its families and its cache of truths (for their enclosures)


def _start_worker(families: Mapping[str, Family], cap: int) -> None:
    """Pebble's initializer, in a freshly forked worker (Pebble ignores SIGINT there: Ctrl-C is the parent's)."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # Pebble's stop (SIGTERM) ends it at once, inside C code too
    _prepare(cap)
    _served.clear()
    _served.update(families=families, cache=collections.OrderedDict(), env=None)


def _prepare(cap: int) -> None:
    _die_with_parent()
    _limit_memory(cap)


def _environ_now() -> dict:
    """This process's environment as it is stored (a copy made in C: cheap enough to compare on every request)."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environ)


def _serve(request: tuple, generation: int, env: Mapping[str, str] | None) -> bytes:
    """One request, in a worker: ("ok", value), ("memory", text), ("error", exception payload) or ("need-env", None),
    pickled; never raises. `env` is the parent's environment, number `generation`, or None where the parent sent it
    before: if this process has not that one (a replaced process, or code that changed its environment since), it asks
    for it ("need-env") instead of running the request."""
    if env is None:
        have = _served.get("env")
        if have is None or have[0] != generation or have[1] != _environ_now():
            return pickle.dumps(("need-env", None))

    def run() -> Any:
        if env is not None:
            _served["env"] = (generation, _environ_now())
        fams, cache = _served["families"], _served["cache"]
        if request[0] == "truth":
            return _truth_job(fams[request[1][0]], request[1], cache)
        return _enclose_job(fams[request[1][0]], request[1], request[2], cache)
    return _answer(run, request, env)


def _capped_job(fn: Callable[..., Any], args: tuple, cap: int) -> bytes:
    """call_capped's process: its one job."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _prepare(cap)
    return _answer(lambda: fn(*args), ("job",), None)


def _answer(run: Callable[[], Any], request: tuple, env: Mapping[str, str] | None) -> bytes:
    """`run()`'s outcome, pickled here (once: Pebble sends the bytes), so that an answer that does not pickle is an
    error of the request's, whatever the pickling raises."""
    try:
        _apply_env(env)
        reply: tuple[str, Any] = ("ok", run())
    except BaseException as err:  # noqa: BLE001 - the parent re-raises it
        memory = _memory_error(err)
        if memory is not None:  # the process may be in a bad state: the parent ends it
            return pickle.dumps(("memory", str(memory)))
        reply = ("error", _exception_payload(_as_error(err, request)))
    try:
        return pickle.dumps(reply)
    except Exception as err:  # noqa: BLE001 - an answer that cannot travel is an error there
        text = f"its result cannot be sent back ({err})"
        return pickle.dumps(("error", ("text", type(err).__qualname__, text, True)))


# --- the parent's side ---

def _reply(future: Any, seconds: float, what: str, cap: int) -> Any:
    """The value that `future` (a Pebble task with the timeout `seconds`) answers. Pebble stops its process at the
    timeout (counted from the task's start); any exception that interrupts the wait cancels the task, which stops
    its process too. A wait that outlives the timeout by _LATE_S (after the task started) or _START_S (before) is
    stopped here the same way."""
    asked, started = time.monotonic(), None
    try:
        while True:
            try:
                data = future.result(timeout=_POLL_S)
                break
            except FutureTimeout:
                if future.done():  # Pebble's timeout
                    raise
                now = time.monotonic()
                if started is None and future.running():
                    started = now
                if now > (asked + _START_S if started is None else started + _LATE_S) + seconds:
                    raise
    except (FutureTimeout, CancelledError):
        future.cancel()
        raise DeadlineExceeded(f"{what} ran past its deadline ({seconds:.3g} s); its process was stopped") from None
    except pebble.ProcessExpired as err:
        code = err.exitcode or 0
        how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
        raise WorkerDied(f"{what}: its process died ({how}) without an answer: a crash in its code, or a cap hit "
                         f"inside C code (memory cap {cap / 2**20:.0f} MiB, env VERIFY_MEMORY_CAP)") from None
    except BaseException:
        future.cancel()  # Pebble stops the process running it
        raise
    try:
        kind, value = pickle.loads(data)
    except Exception as err:  # noqa: BLE001 - pickled there, but not something this process can rebuild
        raise VerifyError(f"{what}: its result cannot be received here ({type(err).__qualname__}: {err})") from None
    if kind == "need-env":
        return _NEED_ENV
    if kind == "ok":
        return value
    if kind == "memory":
        raise MemoryLimitExceeded(f"{what} ran out of memory under the memory cap of {cap / 2**20:.0f} MiB "
                                  f"(env VERIFY_MEMORY_CAP) in its process ({value or 'MemoryError'})")
    _raise_payload(value, what)
    raise AssertionError("unreachable")  # pragma: no cover


_NEED_ENV = object()  # a worker's reply: send the environment (see _serve)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for name, value in caps_env().items():  # caps carried to this thread (a Dask task) count as environment
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _env_state() -> tuple:
    """What decides the environment a worker must see, cheap to compare: this process's, and this thread's caps."""
    return _environ_now(), tuple(caps_env().items())


def _may_have_children() -> None:
    """A daemonic process (a Dask worker, a multiprocessing.Pool's worker) may not start multiprocessing's children:
    they would outlive it when it is terminated. Verify's workers die with their parent (PR_SET_PDEATHSIG), so the
    flag is lifted here (its public attribute, which a process that was started may set on itself)."""
    me = multiprocessing.current_process()
    if me.daemon:
        me.daemon = False


class _Worker:
    """A Pebble pool of one forked process serving truths and enclosures for one session."""

    def __init__(self, families: Mapping[str, Family]):
        self.families = dict(families)
        self.cap = memory_cap()
        self.env_state: tuple | None = None  # the environment last sent (as _env_state gives it), and its number
        self.env_generation = 0
        _may_have_children()
        self.pool = pebble.ProcessPool(max_workers=1, context=_FORK, initializer=_start_worker,
                                       initargs=(self.families, self.cap))
        self.stopped = threading.Lock()  # held by the first stop: a pool is stopped and joined once

    def usable(self, family: Family) -> bool:
        return self.pool.active and self.cap == memory_cap() and self.families.get(family.name) is family

    def ask(self, request: tuple, seconds: float, what: str) -> Any:
        """Send `request` and return its reply. The in-process deadline is deferred while it is out (the task's
        timeout stops the worker at `seconds` instead). A memory error, a broken pool or any exception that is not
        an Exception (Ctrl-C) ends this pool: a later request gets a new one."""
        with deferred_deadline(what):
            try:
                state = _env_state()
                if state != self.env_state:
                    self.env_state, self.env_generation = state, self.env_generation + 1
                    reply = self._send(request, _env(), seconds, what)
                else:
                    reply = self._send(request, None, seconds, what)
                    if reply is _NEED_ENV:  # a fresh process, or one whose environment its code changed
                        reply = self._send(request, _env(), _budget(what), what)
                if reply is _NEED_ENV:  # pragma: no cover - it was sent
                    raise WorkerDied(f"{what}: its worker did not take the environment sent")
                return reply
            except (MemoryLimitExceeded, WorkerDied):
                self.stop(wait=False)
                raise
            except Exception:  # the point's own error, or its deadline (Pebble stopped its process)
                raise
            except BaseException:
                self.stop(wait=False)
                raise

    def _send(self, request: tuple, env: Mapping[str, str] | None, seconds: float, what: str) -> Any:
        try:
            future = self.pool.submit(_serve, seconds, request, self.env_generation, env)
        except RuntimeError as err:  # "the Pool is not active": its threads ended
            raise WorkerDied(f"{what}: its worker pool is gone ({err})") from None
        return _reply(future, seconds, what, self.cap)

    def stop(self, wait: bool = True) -> None:
        """Stop the pool and its process, once (`wait=False`: joined in the background, as Pebble's join polls its
        threads every 0.1 s). A second stop does nothing: two joins of one pool both closed its channels, and the
        second raised OSError (a bad file descriptor) in its thread, printed as a traceback."""
        if not self.stopped.acquire(blocking=False):
            return
        self.pool.stop()
        if wait:
            self.pool.join()
        else:
            threading.Thread(target=self.pool.join, name="verify-isolation-stop", daemon=True).start()


_workers = threading.local()  # .worker: this thread's _Worker; .depth: how many sessions this thread is inside


def _after_fork_in_child() -> None:
    _workers.__dict__.clear()  # the parent's pools (their threads are not here) are not this process's


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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
            shutdown(wait=False)  # one left behind (an exit that was itself interrupted) is not reused
        _workers.depth = depth + 1
        return self

    @uninterrupted
    def __exit__(self, *exc: object) -> None:
        _workers.depth = getattr(_workers, "depth", 1) - 1
        if _workers.depth <= 0:
            _workers.depth = 0
            shutdown(wait=False)


def _worker_for(family: Family) -> _Worker:
    """This thread's worker, started again if it is gone, if the memory cap changed, or if it lacks `family`."""
    worker: _Worker | None = getattr(_workers, "worker", None)
    if worker is not None and worker.usable(family):
        return worker
    _workers.worker = None
    if worker is not None:
        worker.stop(wait=False)
    worker = _workers.worker = _Worker({**families.FAMILIES, family.name: family})
    return worker


def shutdown(wait: bool = True) -> None:
    """Stop this thread's worker process (a later isolated truth starts a new one); `wait=False` joins it later."""
    worker = getattr(_workers, "worker", None)
    _workers.worker = None
    if worker is not None:
        worker.stop(wait=wait)


__all__ = ["HEADROOM", "MODES", "WorkerDied", "call_capped", "mode", "session", "shutdown", "trusted", "truth"]
