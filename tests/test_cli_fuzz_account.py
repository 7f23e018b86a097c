"""Fuzz of `verify account` (issue 47, done-when: 0 exit 4 in a fuzz run of every command, `account` included):
hypothesis-made argv, run in-process through `verify.cli.main`. Whatever the input, the exit code is a documented
one and never 4, an exit 2 is one line on stderr, and `--json` output is strict JSON. The schedules drawn are small
(T up to 1e3, loose tolerances) so that each case costs well under a second; hostile numbers (NaN, inf, negatives,
zero, subnormals, huge values, non-numbers) are mixed into every option. For a long run: VERIFY_FUZZ_EXAMPLES=2000."""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.cli import main
from verify.errors import DeadlineExceeded
from verify.limits import deadline

LONG = int(os.environ.get("VERIFY_FUZZ_EXAMPLES", "0"))
DOCUMENTED = {0, 1, 2, 3}


def fuzz(n: int):
    return settings(max_examples=LONG or n, deadline=None, database=None, derandomize=not LONG,
                    suppress_health_check=list(HealthCheck))


HOSTILE = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "-0", "1e-320", "1e308", "1e400", "abc", "", " ", "1,2",
                           "0x10", "1_000", "٣", "1e-300", "2", "0.5"])


def number(low: float, high: float, *, log: bool = False) -> st.SearchStrategy[str]:
    if log:
        values = st.floats(math.log10(low), math.log10(high)).map(lambda e: f"{10 ** e:.6g}")
    else:
        values = st.floats(low, high).map(lambda v: f"{v:.6g}")
    return st.integers(0, 11).flatmap(lambda i: HOSTILE if i == 0 else values)  # one value in 12 hostile


@st.composite
def account_argv(draw) -> list[str]:
    q, sigma = number(1e-4, 1.0, log=True), number(0.3, 20.0)
    steps = st.one_of(st.integers(1, 1000).map(str), HOSTILE)
    argv = ["account"]
    if draw(st.booleans()):
        argv += ["--q", draw(q), "--sigma", draw(sigma), "--steps", draw(steps)]
    else:
        for _ in range(draw(st.integers(0, 3))):
            argv += ["--phase", f"{draw(q)},{draw(sigma)},{draw(steps)}"]
    which = draw(st.sampled_from(["--delta"] * 4 + ["--eps"] * 4 + ["both", "none"]))
    delta, eps = draw(number(1e-12, 0.5, log=True)), draw(number(0.05, 20.0))
    argv += {"--delta": ["--delta", delta], "--eps": ["--eps", eps], "both": ["--delta", delta, "--eps", eps],
             "none": []}[which]
    if draw(st.booleans()):
        argv += ["--tol", draw(number(1e-2, 0.5, log=True))]
    if draw(st.integers(0, 5)) == 0:
        argv += ["--abs-tol", draw(number(1e-2, 1.0, log=True))]
    if draw(st.integers(0, 4)) == 0:
        argv += ["--neighbouring", draw(st.sampled_from(["add_remove", "add", "remove", "both"]))]
    if draw(st.integers(0, 6)) == 0:
        argv += ["--calibrate", draw(st.sampled_from(["sigma", "steps", "q", "eps"]))]
    if draw(st.integers(0, 6)) == 0:
        argv += ["--target-eps", draw(number(0.5, 20.0))]
    if draw(st.booleans()):
        argv.append("--json")
    return argv


@fuzz(30)
@given(argv=account_argv())
def test_account_never_fails_internally(argv, capsys):
    code = None
    try:
        with deadline(20, "the fuzz case"):  # a schedule that is slow to bracket is a cap hit (exit 3), not a hang
            code = main(argv)
    except DeadlineExceeded:  # this test's own cap: main() answered 3 (its bracket so far), or was stopped outside
        code = 3 if code in (None, 3) else code
    except Exception as err:  # noqa: BLE001 - main() must turn every error into an exit code
        pytest.fail(f"{argv}: main raised {type(err).__name__}: {err}")
    out, err = capsys.readouterr()
    assert code in DOCUMENTED, (argv, code, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1, (argv, err)
    if "--json" in argv and code == 0:
        json.loads(out, parse_constant=lambda token: pytest.fail(f"non-strict JSON token {token}: {argv}"))
