"""Issue 47 §3: a command stopped by SIGTERM or SIGINT ends every process it started and leaves nothing half written
(verify.stopping, the one mechanism every command runs under).

In-process: trees of forked processes of generated shapes (one that keeps forking included) are ended whole; a second
signal does not cut the clean-up short; an interrupt swallowed in a finaliser is raised again; processes forked inside
get the handlers of before; a caller's own children are spared. As commands (`verify` processes): run, report,
falsify (an isolated plugin truth), certify and account --compare are signalled at generated moments, each an
observable state (its handlers in place, its workers started, a first file written) plus a drawn delay; after it
exits, no process of its tree is left (found by a mark in their environment, so one that escaped the tree is found
too), the exit code is 128 + the signal's number (or the command had finished: its output is then whole) and no
partial file remains. Nothing here asserts a duration: every wait is for a state, under a generous guard."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import stopping
from verify.exitcodes import stopped_by
from verify.stopping import Interrupted, stop_on_signals

LINUX = sys.platform.startswith("linux")
GUARD_S = 600.0  # a wait for a state that never comes fails the test after this long (a hang, not a slow machine)
EXAMPLES = int(os.environ.get("VERIFY_STOP_EXAMPLES", "0"))


def _examples(n: int) -> settings:
    return settings(max_examples=EXAMPLES or n, deadline=None, database=None, derandomize=not EXAMPLES,
                    suppress_health_check=list(HealthCheck))


def _wait_until(predicate, what: str) -> None:
    end = time.monotonic() + GUARD_S
    while not predicate():
        if time.monotonic() > end:
            pytest.fail(f"never came: {what}")
        time.sleep(0.01)


ENDED_S = 60.0  # end_children has sent SIGKILL to what outlived its grace before it returns: a process still there
# this long after is one it never found (a wait of GUARD_S per failing example made one failure cost 20 minutes)


def _eof(fd: int) -> bool:
    """True once every process that holds the write end of the pipe `fd` reads from has ended (their end closed)."""
    end = time.monotonic() + ENDED_S
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready and os.read(fd, 4096) == b"":
            return True
    return False


# --- in-process: the mechanism ---------------------------------------------------------------------------------

def _grow(shape: tuple[int, ...], depth: int, ready: int, spawner: bool) -> None:
    """In a forked process: fork the children of `shape[depth]`, say so on `ready`, then wait (or, as a spawner leaf,
    keep forking children that wait). Never returns."""
    try:
        for _ in range(shape[depth] if depth < len(shape) else 0):
            if os.fork() == 0:
                _grow(shape, depth + 1, ready, spawner)
        os.write(ready, b"+")
        for _ in range(10 if spawner and depth == len(shape) else 0):  # forking while it is being ended
            if os.fork() == 0:
                while True:
                    time.sleep(100)
            time.sleep(0.005)
        while True:
            time.sleep(100)
    finally:
        os._exit(0)


def _tree(shape: tuple[int, ...], spawner: bool) -> tuple[int, int]:
    """Fork a tree of processes of `shape` (children per level) and wait until each has started its own; returns the
    read end of a pipe whose write end every process of the tree holds, and the number of root processes."""
    alive_r, alive_w = os.pipe()
    ready_r, ready_w = os.pipe()
    roots = shape[0]
    for _ in range(roots):
        if os.fork() == 0:
            os.close(alive_r)
            os.close(ready_r)
            _grow(shape, 1, ready_w, spawner)
    os.close(alive_w)
    os.close(ready_w)
    expected, width = 0, 1
    for n in shape:
        width *= n
        expected += width
    got = 0
    while got < expected:
        ready, _, _ = select.select([ready_r], [], [], GUARD_S)
        assert ready, "the tree never started"
        got += len(os.read(ready_r, 4096))
    os.close(ready_r)
    return alive_r, roots


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
@_examples(12)
@given(shape=st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple), spawner=st.booleans(),
       signum=st.sampled_from([signal.SIGTERM, signal.SIGINT]))
def test_a_signal_ends_the_whole_tree_of_processes_started_inside(shape, spawner, signum):
    """Every process of the tree (a leaf that keeps forking included) has ended when Interrupted is raised: the pipe
    they all hold reads its end. Before verify.stopping, SIGINT raised KeyboardInterrupt and left them all."""
    alive = None
    try:
        with pytest.raises(Interrupted) as stop, stop_on_signals(own_process=False):
            alive, _ = _tree(shape, spawner)
            os.kill(os.getpid(), signum)
            while True:  # the handler raises at the next bytecode
                time.sleep(0.01)
        assert stop.value.signum == signum and stop.value.exit_code == stopped_by(signum) == 128 + signum
        assert _eof(alive), "a process of the tree outlived the stop"
    finally:
        _reap()
        if alive is not None:
            os.close(alive)


def test_a_second_signal_does_not_cut_the_clean_up_short():
    cleaned = []
    with pytest.raises(Interrupted) as stop, stop_on_signals(own_process=False):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            while True:
                time.sleep(0.01)
        finally:
            os.kill(os.getpid(), signal.SIGINT)  # lands here, in the clean-up
            for _ in range(1000):  # bytecodes after it: the handler has run by the end of the loop
                pass
            cleaned.append("done")
    assert cleaned == ["done"] and stop.value.signum == signal.SIGTERM


def _finaliser_interrupted() -> list:
    """A SIGTERM whose Interrupted lands in a finaliser (CPython swallows it there) inside a stop_on_signals block:
    the steps the block ran after it, up to a guard of ENDED_S (the interrupt was lost, not late)."""
    class Finalised:
        def __del__(self) -> None:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs in here: CPython swallows what a finaliser raises
                pass

    ran = []
    with pytest.raises(Interrupted), stop_on_signals(own_process=False):
        obj = Finalised()
        del obj
        end = time.monotonic() + ENDED_S
        while time.monotonic() < end:  # raised again in this loop; before the unraisable hook, it ran to its end
            ran.append(0)
        ran.append("end")
    return ran


def test_an_interrupt_swallowed_in_a_finaliser_is_raised_again():
    assert "end" not in _finaliser_interrupted()


@pytest.mark.parametrize("again_s", [0.0, 1e-5])
def test_an_interrupt_raised_again_before_the_hook_returns_is_not_lost(again_s, monkeypatch):
    """The interrupt raised again from a timer thread can land in the unraisable hook itself, while it still waits
    for that thread to start (a busy machine: CI lost it there once); it is then raised again, not swallowed a second
    time. A timer of 0 s makes that landing the common case."""
    monkeypatch.setattr(stopping, "_AGAIN_S", again_s)
    for _ in range(30):
        assert "end" not in _finaliser_interrupted()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forks")
def test_a_process_forked_inside_gets_the_handlers_of_before():
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    r, w = os.pipe()
    with stop_on_signals(own_process=False):
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        pid = os.fork()
        if pid == 0:
            try:
                now = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
                os.write(w, b"same" if now == before else repr(now).encode())
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    os.close(w)
    assert os.read(r, 4096) == b"same"
    os.close(r)
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before  # and this process too


def test_the_children_a_caller_had_before_are_spared():
    before = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        with pytest.raises(Interrupted), stop_on_signals(own_process=False):
            inside = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
            os.kill(os.getpid(), signal.SIGTERM)
            while True:
                time.sleep(0.01)
        assert inside.wait(timeout=GUARD_S) == -signal.SIGTERM
        assert before.poll() is None
    finally:
        before.kill()
        before.wait()


# --- commands: `verify` processes signalled at generated moments ------------------------------------------------

SLOW_PLUGIN = '''
import ctypes
import sympy as sp
from verify.model import Family, Parameter, Quantity
from verify.results import Truth

x = sp.Symbol("x", nonnegative=True)


def slow(x):  # one C call of 1000 s: the truth is being computed in its worker process
    ctypes.CDLL(None).usleep(ctypes.c_uint(999_999))
    ctypes.CDLL(None).sleep(ctypes.c_uint(1000))
    return Truth.exact(x, "slept")


FAMILIES = (Family(name="toy_stop_slow", description="toy", parameters=(Parameter(x, x < 1e6, "x"),),
                   facts=frozenset(), truths={Quantity.RENYI: slow}, method="toy"),)
'''

FAKE_PEER = '''
import sys, time
import verify.accountant_compare as compare
compare.ACCOUNTANTS = {"a slow peer": ("math", lambda r: time.sleep(1000))}
from verify.cli import main
sys.exit(main())
'''


def _catches_sigterm(proc: psutil.Process) -> bool:
    """Linux: the process has a handler for SIGTERM (verify's guard is in place; /proc's SigCgt mask)."""
    try:
        status = Path(f"/proc/{proc.pid}/status").read_text()
    except OSError:
        return False
    mask = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
    return bool(mask >> (signal.SIGTERM - 1) & 1)


def _children(n: int):
    def seen(proc: psutil.Process, _folder: Path) -> bool:
        try:
            return len(proc.children(recursive=True)) >= n
        except psutil.Error:
            return False
    return seen


def _file(pattern: str):
    return lambda _proc, folder: any(folder.glob(pattern))


MOMENTS = {"handlers": lambda proc, _folder: _catches_sigterm(proc), "a worker": _children(1),
           "two workers": _children(2), "a cache shard": _file("cache/cache.db"),
           "the report's folder": _file(".rep.partial-*")}

COMMANDS = {
    "run": (["run", "--workers", "2", "--only", "chourasia2021", "--falsify", "0", "--quiet", "--json", "out.json",
             "--cache", "cache"], ("handlers", "two workers", "a cache shard")),
    "report": (["report", "--workers", "2", "--only", "chourasia2021", "--falsify", "0", "--quiet", "--out", "rep"],
               ("handlers", "two workers", "the report's folder")),
    "falsify": (["falsify", "--plugin", "toy_stop.py", "--family", "toy_stop_slow", "x + 1", "--max-examples", "3",
                 "--min-checked", "1"], ("handlers", "a worker")),
    "certify": (["certify", "--lhs", "0", "--rhs", "Sum(MinOver(x + j*k, j, 1, 3000), k, 1, 3000)", "--box", "x=0:1",
                 "--budget", "600"], ("handlers",)),
    "account --compare": (["account", "--q", "0.01", "--sigma", "1", "--steps", "10", "--delta", "1e-5", "--tol",
                           "0.1", "--compare"], ("handlers", "a worker")),
}
OUTPUTS = {"run": "out.json", "report": "rep"}  # what a finished command leaves; nothing else may stay


def _marked(mark: str) -> list[psutil.Process]:
    """The live processes whose environment carries `mark` (a command's tree, escaped processes included)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("VERIFY_STOP_TEST") == mark and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            pass
    return found


def _start(command: str, folder: Path, mark: str) -> subprocess.Popen:
    argv, _ = COMMANDS[command]
    (folder / "toy_stop.py").write_text(SLOW_PLUGIN)
    code = FAKE_PEER if command.startswith("account") else "import sys\nfrom verify.cli import main\nsys.exit(main())"
    env = {**os.environ, "VERIFY_STOP_TEST": mark, "XDG_CACHE_HOME": str(folder / ".xdg"),
           "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}
    with open(folder / ".stderr", "wb") as err:
        return subprocess.Popen([sys.executable, "-c", code, *argv], cwd=folder, env=env, stdout=subprocess.DEVNULL,
                                stderr=err)


def _left_files(folder: Path) -> set[str]:
    """Every path under `folder` but the test's own files, the outputs a finished command writes, and the truth
    cache's marker and database (SQLite: a write stopped half way is rolled back, never a partial file)."""
    ours = {"toy_stop.py", ".stderr", ".xdg", "__pycache__"}
    left = set()
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if rel.parts[0] in ours or path.is_dir():
            continue
        if rel.parts[0] == "cache" and rel.name in ("VERIFY_TRUTH_CACHE", "cache.db", "cache.db-wal", "cache.db-shm"):
            continue
        left.add(str(rel))
    return left


@pytest.mark.skipif(not LINUX, reason="reads /proc for the state a command is in")
@pytest.mark.parametrize("command", list(COMMANDS))
@_examples(3)
@given(data=st.data(), signum=st.sampled_from([signal.SIGTERM, signal.SIGINT]),
       delay=st.sampled_from([0.0, 0.05, 0.5, 2.0]))
def test_a_stopped_command_leaves_no_process_and_no_partial_file(command, data, signum, delay, tmp_path_factory):
    """The signal lands after an observable state (handlers in place, workers started, a first file written) and a
    drawn delay. Before verify.stopping, `run`'s pool workers outlived it (orphaned, blocked for good) and so did the
    isolated truth's worker and the peers' processes."""
    folder = tmp_path_factory.mktemp("stopped")
    moment = data.draw(st.sampled_from(COMMANDS[command][1]), label="moment")
    mark = uuid.uuid4().hex
    proc = _start(command, folder, mark)
    try:
        watched = psutil.Process(proc.pid)
        _wait_until(lambda: proc.poll() is not None or MOMENTS[moment](watched, folder), f"{command}: {moment}")
        time.sleep(delay)  # any moment after the state: nothing below depends on how long this is
        finished_before = proc.poll() is not None
        proc.send_signal(signum)
        code = proc.wait(timeout=GUARD_S)
        _wait_until(lambda: not _marked(mark), "every process of the command's tree to end")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for left in _marked(mark):
            left.kill()
    err = (folder / ".stderr").read_text()
    if code == stopped_by(signum):
        assert err.strip().splitlines()[-1] == f"error: stopped by {signal.Signals(signum).name}", err
        assert _left_files(folder) == set(), "a partial file stayed"
    else:  # it had finished when the signal came (or its guard was gone: it returned): its output is whole
        assert code in (0, 1, 3, -signum), (code, finished_before, err)
        left = _left_files(folder)
        output = OUTPUTS.get(command)
        if output == "out.json":
            assert left == {"out.json"} and json.loads((folder / "out.json").read_text())["results"]
        elif output == "rep":
            assert {"rep/results.json", "rep/index.html"} <= left
            assert not [p for p in left if "partial" in p]
        else:
            assert left == set()


def test_the_exit_codes_of_a_stop_are_documented():
    readme = (Path(__file__).resolve().parents[1] / "docs" / "reference" / "exit-codes.md").read_text()
    assert "| 130, 143 |" in readme and stopped_by(signal.SIGINT) == 130 and stopped_by(signal.SIGTERM) == 143
    assert str(Interrupted(signal.SIGTERM)) == "stopped by SIGTERM"
