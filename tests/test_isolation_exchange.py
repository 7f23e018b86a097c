"""Issue 47 §1, a truth always belongs to its point: an isolated (plugin) truth's request and its reply cannot fall
out of step, wherever an exception interrupts the exchange; a worker computes what the caller's code computes now
(a fresh worker per evaluation session); whatever a plugin truth raises, SystemExit and KeyboardInterrupt included,
is that point's error, never an exit code of verify's."""

from __future__ import annotations

import math
import os
import random
import sys
import time

import pytest
import sympy as sp
from flint import arb
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verify.families as families
from verify.cli import main
from verify.errors import PluginError, VerifyError
from verify.model import Family, Parameter, Quantity
from verify.pipeline import isolation
from verify.pipeline.memo import shared_truths, truth_of
from verify.results import Truth
from verify.testing import falsify_outcome
from verify.truth.numbers import Enclosure

SETTINGS = settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
x = sp.Symbol("x", positive=True)
SCALE = {"value": 1.0}  # state of "the caller's code" that a test changes between calls


def expected(x: float) -> float:
    """The toy truth at x: a different value at every point, so an answer for another point cannot pass."""
    return SCALE["value"] * (x * 1000.0 + 0.5)


def _point_truth(x):
    value = expected(x)
    return Truth.exact(value, f"at x={x!r}", enclose=lambda prec: Enclosure(arb(value), arb(value), f"x={x!r}", prec))


def _slow_truth(x):  # a few milliseconds of Python: deadlines land before, during and after it
    end = time.monotonic() + (x % 7) * 1e-3
    while time.monotonic() < end:
        pass
    return _point_truth(x)


def _raises(kind):
    def truth(x):
        if x > 2:
            raise kind
        return _point_truth(x)
    return truth


def _family(name: str, truth) -> Family:
    return Family(name=name, description="toy", parameters=(Parameter(x, x < 1e6, "x"),), facts=frozenset(),
                  truths={Quantity.RENYI: truth}, method="toy")


POINT = _family("toy_point", _point_truth)
SLOW = _family("toy_slow_point", _slow_truth)
RAISING = {name: _family(f"toy_raises_{name}", _raises(kind)) for name, kind in [
    ("exit0", SystemExit(0)), ("exit", SystemExit), ("exit3", SystemExit(3)), ("interrupt", KeyboardInterrupt),
    ("generator", GeneratorExit), ("zero", ZeroDivisionError)]}


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    monkeypatch.setattr(families, "FAMILIES", dict(families.FAMILIES))
    families.register(POINT, SLOW, *RAISING.values())
    monkeypatch.delenv("VERIFY_ISOLATION", raising=False)
    SCALE["value"] = 1.0
    yield
    isolation.shutdown()


class Injected(Exception):
    """Raised by the tracer at one line of verify/isolation.py: an interrupt landing there."""


def _interrupt_at(step: int):
    """A tracer that raises Injected at the `step`-th line run in verify/isolation.py (an exception can land
    between any two lines: a deadline's signal, Ctrl-C, a broken pipe)."""
    seen = [0]

    def local(frame, event, arg):
        if event == "line":
            seen[0] += 1
            if seen[0] == step:
                raise Injected(f"at {frame.f_code.co_name}:{frame.f_lineno}")
        return local

    def tracer(frame, event, arg):
        if frame.f_code.co_filename == isolation.__file__:
            return local
        return None

    return tracer


def _truth_value(x: float) -> float:
    return truth_of(POINT, Quantity.RENYI, {"x": x}).value


def _enclosure(x: float) -> Enclosure:
    truth = truth_of(POINT, Quantity.RENYI, {"x": x})
    return truth.enclose(64)


@SETTINGS
@given(step=st.integers(1, 400), kind=st.sampled_from(["truth", "enclose"]),
       points=st.lists(st.integers(1, 10**6), min_size=4, max_size=4, unique=True))
def test_an_exchange_interrupted_at_any_line_never_answers_for_another_point(step, kind, points):
    """An exception raised at any line of isolation.py during one request (its send, the wait, the reply's reading,
    the worker's stop) leaves no reply to be read for another request: every later answer is its own point's."""
    xs = [p / 7.0 for p in points]
    with isolation.session():
        _truth_value(xs[0])  # the worker is up and in step
        sys.settrace(_interrupt_at(step))
        try:
            (_truth_value if kind == "truth" else _enclosure)(xs[1])
        except (Injected, VerifyError):
            pass
        finally:
            sys.settrace(None)
        answers = []
        for x_ in xs[1:] + xs[:1]:
            try:
                answers.append((x_, _truth_value(x_), _enclosure(x_)))
            except isolation.WorkerDied:  # the worker killed by the interrupt may be found dead once: an error,
                continue  # never another point's answer
        assert len(answers) >= len(xs) - 1
        for x_, value, enc in answers:
            assert value == expected(x_)
            assert enc.method == f"x={x_!r}" and float(enc.lower.mid()) == expected(x_)


def _request(x_: float) -> tuple:
    return ("truth", ("toy_point", Quantity.RENYI, (("x", float(x_)),)))


@SETTINGS
@given(st.data())
def test_a_reply_to_an_abandoned_request_is_passed_over(data):
    """Requests whose replies are never read (their reader stopped before it could cancel them) are answered first
    by the worker; every later request still gets its own point's answer (Pebble matches replies to tasks)."""
    xs = data.draw(st.lists(st.integers(1, 10**6), min_size=2, max_size=6, unique=True))
    with isolation.session():
        worker = isolation._worker_for(POINT)
        abandoned = data.draw(st.integers(1, len(xs) - 1))
        for x_ in xs[:abandoned]:  # sent, never read
            worker.pool.submit(isolation._serve, 30, _request(x_), worker.env_generation, isolation._env())
        for x_ in xs[abandoned:]:
            found, _ = worker.ask(_request(x_), 30, "toy")
            assert found.value == expected(float(x_))


def _pid_truth(x):  # the worker's pid below 1; past it, a truth that never ends
    if x >= 1:
        while True:
            time.sleep(1)
    return Truth.exact(float(os.getpid()), "pid")


PID = _family("toy_pid", _pid_truth)


def _gone(pid: int, within: float = 0.0) -> bool:
    """Whether process `pid` has ended and been reaped, waiting up to `within` s for it (a stop in another thread)."""
    end = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > end:
            return False
        time.sleep(0.01)


def test_an_abandoned_request_stops_its_process_and_the_next_answer_is_its_own():
    """A request whose wait was interrupted is cancelled: its process is stopped (it never answers another
    request), and the next request is answered by a fresh process."""
    families.register(PID)
    with isolation.session():
        first = int(truth_of(PID, Quantity.RENYI, {"x": 0.5}).value)
        worker = isolation._worker_for(PID)
        future = worker.pool.submit(isolation._serve, None, ("truth", ("toy_pid", Quantity.RENYI, (("x", 5.0),))),
                                    worker.env_generation, isolation._env())
        while not future.running():
            time.sleep(0.01)
        future.cancel()
        assert _truth_value(7.0) == expected(7.0)
        second = int(isolation.truth(PID, Quantity.RENYI, {"x": 0.25}).value)
    assert second != first and _gone(first, within=60)


def test_searches_under_tight_budgets_give_every_point_its_own_truth(monkeypatch):
    """100 plugin searches whose budgets end at every moment of the exchange (the budget's deadline is deferred
    while a request is out, then the worker is stopped or its reply read): every truth and every enclosure that
    comes back belongs to the point it was asked for."""
    wrong: list[tuple] = []
    asked = {"truth": 0, "enclose": 0}
    truth, enclose = isolation.truth, isolation._IsolatedEnclose.__call__

    def checked_truth(family, quantity, params):
        found = truth(family, quantity, params)
        asked["truth"] += 1
        if found.value != expected(params["x"]):
            wrong.append(("truth", params, found.value))
        return found

    def checked_enclose(self, prec):
        enc = enclose(self, prec)
        asked["enclose"] += 1
        x_ = dict(self.key[2])["x"]
        if enc.method != f"x={x_!r}" or float(enc.lower.mid()) != expected(x_):
            wrong.append(("enclosure", x_, enc))
        return enc

    monkeypatch.setattr(isolation, "truth", checked_truth)
    monkeypatch.setattr(isolation._IsolatedEnclose, "__call__", checked_enclose)
    rng = random.Random(47)
    for i in range(100):
        budget = rng.choice([0.02, 0.05, 0.1, 0.2, 0.4])
        bound = rng.choice(["1000*x + 0.5", "999*x", "2000*x + 1", "x"])
        outcome = falsify_outcome(bound, "toy_slow_point", "upper", budget_s=budget, seed=i, max_examples=200)
        assert outcome is not None
    assert wrong == []
    assert asked["truth"] > 100 and asked["enclose"] > 10  # the searches did ask


def test_a_worker_computes_what_the_callers_code_computes_now():
    """A bound 4x below the truth is found violated after the plugin's state changed, whatever ran before: each
    session forks its worker afresh (the issue's R_alpha example in miniature)."""
    bound = "1000*x + 0.5"
    assert falsify_outcome(bound, "toy_point", "upper", budget_s=20, seed=0, max_examples=50).counterexample is None
    SCALE["value"] = 4.0
    found = falsify_outcome(bound, "toy_point", "upper", budget_s=20, seed=0, max_examples=50).counterexample
    assert found is not None and found.truth.value == 4 * (found.params["x"] * 1000 + 0.5)
    SCALE["value"] = 1.0
    assert falsify_outcome(bound, "toy_point", "upper", budget_s=20, seed=0, max_examples=50).counterexample is None


def test_a_monkeypatched_truth_is_seen_by_the_next_check(monkeypatch):
    with shared_truths():
        assert truth_of(POINT, Quantity.RENYI, {"x": 2.0}).value == expected(2.0)
    monkeypatch.setitem(SCALE, "value", 0.25)
    with shared_truths():
        assert truth_of(POINT, Quantity.RENYI, {"x": 2.0}).value == expected(2.0) == 0.25 * 2000.5
    assert truth_of(POINT, Quantity.RENYI, {"x": 3.0}).value == 0.25 * 3000.5  # outside a session: forked afresh


def test_the_worker_ends_with_its_session():
    families.register(PID)
    with isolation.session():
        with isolation.session():
            pid = int(truth_of(PID, Quantity.RENYI, {"x": 0.5}).value)
            worker = isolation._workers.worker
        assert isolation._workers.worker is worker and worker.pool.active and not _gone(pid)  # the outer one holds it
    assert getattr(isolation._workers, "worker", None) is None and not worker.pool.active
    assert _gone(pid, within=60)  # the session's end stopped it (joined in the background)


@pytest.mark.parametrize("name", sorted(RAISING))
@pytest.mark.parametrize("how", ["worker", "fork"])
def test_whatever_a_plugin_truth_raises_is_that_points_error(name, how, monkeypatch):
    """SystemExit (any code), KeyboardInterrupt, GeneratorExit or an ordinary exception raised by a plugin's truth in
    its worker is a PluginError naming it: never an exit of verify's, never Ctrl-C."""
    monkeypatch.setenv("VERIFY_ISOLATION", how)
    family = RAISING[name]
    assert truth_of(family, Quantity.RENYI, {"x": 1.0}).value == expected(1.0)
    with isolation.session(), pytest.raises(PluginError) as err:
        truth_of(family, Quantity.RENYI, {"x": 3.0})
    shown = {"exit0": "SystemExit", "exit": "SystemExit", "exit3": "SystemExit", "interrupt": "KeyboardInterrupt",
             "generator": "GeneratorExit", "zero": "ZeroDivisionError"}[name]
    assert shown in str(err.value) and family.name in str(err.value)


def test_system_exit_in_process_is_the_points_error_too(monkeypatch):
    monkeypatch.setenv("VERIFY_ISOLATION", "off")
    with pytest.raises(PluginError, match="SystemExit"):
        truth_of(RAISING["exit0"], Quantity.RENYI, {"x": 3.0})
    with pytest.raises(KeyboardInterrupt):  # in-process, Ctrl-C stays the user's
        truth_of(RAISING["interrupt"], Quantity.RENYI, {"x": 3.0})


@pytest.mark.parametrize("name", ["exit0", "exit", "interrupt"])
def test_falsify_never_exits_with_a_plugins_exit_code(name, capsys):
    """`verify falsify` on a family whose truth raises SystemExit(0) past x = 2 checks the other points and says
    what failed; it never exits 0 with nothing checked."""
    family = RAISING[name].name
    code = main(["falsify", "1000*x + 0.5", "--family", family, "--budget", "20", "--max-examples", "60"])
    out, err = capsys.readouterr()
    assert code != 0 or "checked" in out
    assert (out + err).strip(), "no output"
    assert "SystemExit" in out + err or "KeyboardInterrupt" in out + err
    assert math.isfinite(code) and code in (0, 1, 2, 3)
