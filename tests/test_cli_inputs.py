"""Bad input is refused before any work, in one line naming it, with exit 2 (issue 47, section 4): an --assume that
is no condition (`alpha` ran 1,739 points of "truth failed" and exit 3), a --fix value no float holds (a subnormal
delta = 2e-308 made a constant bound undefined everywhere), and a repeated single-valued option or NAME of a
NAME=VALUE option (argparse kept the last value silently), for every option of every subcommand."""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys

import pytest
import sympy as sp
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from verify.cli import build_parser, keyed, main
from verify.errors import ParameterError
from verify.families import family
from verify.testing import falsify_outcome

# the module (verify.testing.falsify is the function)
falsify_module = importlib.import_module("verify.testing.falsify")
FAMILY = "noisy_gd_quadratic"
QUICK = {"deadline": None, "database": None,  # capsys is read out and monkeypatch set alike in every example; the
         # falsifier runs its own search (@given) inside
         "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.nested_given]}
NAMES = ["alpha", "sigma", "eta", "n", "K", "S", "lam", "start_var"]  # FAMILY's renyi parameters
NUMBERS = st.one_of(st.integers(-5, 100).map(str), st.sampled_from(["0.5", "1e-3", "pi", "E"]))
COMPARISONS = st.tuples(st.sampled_from(NAMES), st.sampled_from(["<", "<=", ">", ">="]), NUMBERS).map(
    lambda t: f"{t[0]} {t[1]} {t[2]}")


def _expressions(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "-", "*", "/", "**"]), children).map(
            lambda t: f"({t[0]}) {t[1]} ({t[2]})"),
        st.tuples(st.sampled_from(["exp", "log", "sqrt", "floor", "Abs", "harmonic"]), children).map(
            lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(["Max", "Min", "binomial"]), children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"))


EXPRESSIONS = st.recursive(st.one_of(st.sampled_from(NAMES), NUMBERS), _expressions, max_leaves=5)
NOT_CONDITIONS = st.one_of(  # an expression where a condition belongs, alone or joined to comparisons
    EXPRESSIONS,
    EXPRESSIONS.map(lambda e: f"~({e})"),
    st.tuples(COMPARISONS, st.sampled_from(["&", "|"]), EXPRESSIONS, st.booleans()).map(
        lambda t: f"({t[0]}) {t[1]} ({t[2]})" if t[3] else f"({t[2]}) {t[1]} ({t[0]})"))


def _search_must_not_run(*args, **kwargs):
    raise AssertionError("the search ran on bad input")


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code != 4, err
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("error:"), err
    return code, out, err


@settings(max_examples=60, **QUICK)
@given(text=NOT_CONDITIONS)
def test_an_assume_that_is_no_condition_is_bad_input_named_before_the_search(text, capsys, monkeypatch):
    monkeypatch.setattr(falsify_module, "search_outcome", _search_must_not_run)
    code, _, err = _run(capsys, ["falsify", "1", "--family", FAMILY, "--assume", "K >= 1", "--assume", text])
    assert code == 2 and f"--assume {text!r}: not a condition" in err, err
    with pytest.raises(ParameterError, match="not a condition"):  # the Python API
        falsify_outcome("1", FAMILY, extra_assumptions=[text])


def _sympy_case(case: tuple[str, str, int]) -> sp.Basic:
    """A SymPy object that is no condition, though SymPy takes most as Booleans (a Symbol is one). In And and Or
    the symbol is a plain one: SymPy drops a positive symbol there (And(sigma > 1, alpha) is sigma > 1)."""
    symbols = {p.name: p.symbol for p in family(FAMILY).parameters}
    a, b, plain = symbols[case[0]], symbols[case[1]], sp.Symbol(case[0])
    return [a, sp.Not(a), sp.And(b > 1, plain), sp.Or(plain, b < 2), a + b, sp.exp(a) * b][case[2]]


@settings(max_examples=30, **QUICK)
@given(case=st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES), st.integers(0, 5)))
def test_a_sympy_assumption_that_is_no_condition_is_refused(case):
    with pytest.raises(ParameterError, match="not a condition"):
        falsify_outcome("1", FAMILY, extra_assumptions=[_sympy_case(case)])


@settings(max_examples=25, **QUICK)
@given(conditions=st.lists(st.one_of(COMPARISONS, st.tuples(COMPARISONS, COMPARISONS).map(
    lambda t: f"({t[0]}) | ~({t[1]})")), min_size=1, max_size=2))
def test_conditions_still_restrict_the_search(conditions, capsys):
    argv = ["falsify", "100*alpha*S**2*eta*K/(n**2*sigma**2) + 1e6", "--family", FAMILY, "--max-examples", "5",
            "--budget", "20", "--min-checked", "0"]
    code, _, err = _run(capsys, argv + [a for c in conditions for a in ("--assume", c)])
    assert code in (0, 1, 3) and "not a condition" not in err, err


EXTREME = st.one_of(
    st.floats(),
    st.sampled_from([2e-308, -2e-308, 5e-324, 1e-320, 2.2250738585072014e-308, 1.7976931348623157e308, 0.0, -0.0]),
    st.floats(min_value=1e-320, max_value=1e-300), st.floats(min_value=1e300),
    st.integers(-2**60, 2**60), st.integers(10**300, 10**310))


@settings(max_examples=40, **QUICK)
@given(name=st.sampled_from(["delta", "sigma", "eta", "lam", "S", "K", "start_var"]), value=EXTREME)
def test_a_fixed_value_is_refused_naming_it_or_the_search_runs_with_it(name, value, capsys):
    """Exit 2 with the option and the name, before the search; or a run in which the constant bound is defined at
    every point tried (a value no float holds made it undefined everywhere)."""
    text = repr(value) if isinstance(value, float) else str(value)
    # a budget of 5 s: a value that is answered takes ~0.1 s for its 4 points; one whose truth is slow (S or eta
    # ~1e300: 10 s of CPU a point) ends at the budget having tried none, at 20 s as at 5 (it cost 20 s an example)
    code, out, err = _run(capsys, ["falsify", "100", "--family", FAMILY, "--quantity", "dp_epsilon", "--fix",
                                   f"{name}={text}", "--max-examples", "4", "--budget", "5", "--json"])
    as_float = float(value) if not isinstance(value, int) or abs(value) < 2**1000 else math.inf
    held = math.isfinite(as_float) and (as_float == 0 or abs(as_float) >= sys.float_info.min) and as_float == value
    event(f"exit {code}")
    if code == 2:
        assert f"--fix {name}" in err, err
        assert not held or "domain" in err or "integer" in err, err  # a float that holds it: only the domain refuses
        return
    assert held and code in (0, 1, 3), (code, err)
    record = json.loads(out)
    # the point a value no float holds made undefined everywhere; how many points a budget allows is the machine's
    # (one point's truth at S = 1.3e161 takes over 20 s here: exp of a 1e322 argument in mpmath)
    assert record["undefined"] == 0 and (record["tried"] > 0 or record["budget_hit"]), record


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"": parser, **action.choices}


def _value(action: argparse.Action, key: str, salt: int) -> str | None:
    """A value the option's own type accepts (NAME=... with the given key where the option is keyed), or None."""
    candidates = ([f"{key}={v}" for v in ("1", "2", "0:1", "0.5")] if keyed(action) else
                  list(action.choices or ()) or [str(salt + 1), f"{salt + 1}.5", f"x{salt}", "0.1,1,10",
                                                  f"tcp://localhost:{8786 + salt}"])
    for text in candidates[salt % len(candidates):] + candidates:
        try:
            if action.type is not None:
                action.type(text)
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
        return text
    return None


OPTIONS = [(command, action) for command, parser in _subcommands().items() for action in parser._actions
           if action.option_strings and (isinstance(action, argparse._StoreAction) or keyed(action))]


def test_the_options_named_in_the_issue_are_among_those_tried():
    names = {(c, a.option_strings[0]) for c, a in OPTIONS}
    assert {("falsify", "--fix"), ("falsify", "--bind"), ("check", "--param"), ("account", "--delta"),
            ("certify", "--box"), ("falsify", "--seed"), ("run", "--only"), ("certify", "--assume")} <= names


@settings(max_examples=80, **QUICK)
@given(option=st.sampled_from(OPTIONS), key=st.sampled_from(["delta", "K", "R", "n"]), salt=st.integers(0, 5),
       same=st.booleans())
def test_an_option_given_twice_is_one_line_naming_it(option, key, salt, same, capsys, monkeypatch):
    """A single-valued option twice, or one NAME of a NAME=VALUE option twice (with the same value or not): exit 2
    naming the option (and the name), before the command runs; two different NAMEs are accepted."""
    command, action = option
    first, second = _value(action, key, salt), _value(action, key, salt + (0 if same else 1))
    assert first is not None and second is not None, action.option_strings
    flag = action.option_strings[-1]
    argv = [*([command] if command else []), flag, first, flag, second]
    monkeypatch.setattr(falsify_module, "search_outcome", _search_must_not_run)
    code, _, err = _run(capsys, argv)
    assert code == 2 and "given twice" in err and action.option_strings[0] in err, (argv, err)
    if keyed(action):
        assert f"{key} given twice" in err
        other = _value(action, key + "2", salt)
        code, _, err = _run(capsys, [*([command] if command else []), flag, first, flag, other, "--help"])
        assert code == 0 and "given twice" not in err
