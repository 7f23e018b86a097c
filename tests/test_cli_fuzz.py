"""Fuzz of the whole command line (issue 21, section 4): hypothesis-made argv for every subcommand, run in-process
through `verify.cli.main`. Whatever the input, the exit code is never 4 (an internal error is a bug), an exit 2 says
one line on stderr, stdout is UTF-8 text, and `--json` output is strict JSON (no Infinity/NaN tokens). Bound strings
come from a grammar of the bound language with hostile tokens mixed in (huge literals and powers, nested and
misnamed Sum indices, forbidden syntax, deep nesting, long inputs). Also: `load_results` on damaged results files is
a clean ParameterError or a document its readers can expand.

Every case is cheap (tiny budgets, a few falsifier points, one small catalog entry, refused report folders), so the
examples below cost well under a minute. For a long run: VERIFY_FUZZ_EXAMPLES=2000 (per test; random seeds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import verify.families as families
from verify.cli import main
from verify.errors import ParameterError
from verify.reporting.columns import dump_results, load_results, point_rows, skipped_rows
from verify.reporting.results_json import results_document

LONG = int(os.environ.get("VERIFY_FUZZ_EXAMPLES", "0"))


def fuzz(n: int):
    """n examples in CI (derandomized: the same cases each run); VERIFY_FUZZ_EXAMPLES of random ones for a long run."""
    return settings(max_examples=LONG or n, deadline=None, database=None, derandomize=not LONG,
                    suppress_health_check=list(HealthCheck))


CHEAP_ENTRY = "chourasia2021.lemma5"  # two entries, ~0.5 s over their grid without the falsifier
FAMILY = "noisy_gd_quadratic"  # closed-form truths: a falsifier point costs milliseconds


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """A fresh family registry (plugins register into it), a short truth deadline, and a scratch folder as cwd."""
    monkeypatch.setattr(families, "FAMILIES", dict(families.FAMILIES))
    monkeypatch.setattr(families, "_ENTRY_POINTS_LOADED", False)
    monkeypatch.setenv("VERIFY_TRUTH_DEADLINE", "5")
    monkeypatch.chdir(tmp_path)


def _reject_constant(token: str):
    raise AssertionError(f"non-strict JSON token {token}")


def run_cli(capsys, argv: list[str], *, json_out: bool = False) -> int:
    """main(argv) must return a documented code; exit 2 is one line; --json output is strict JSON."""
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert isinstance(code, int), (argv, code)
    assert code != 4, f"internal error on {argv!r}:\n{err}"
    assert code in (0, 1, 2, 3, 130), (argv, code, err)
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("error"), f"{argv!r}: exit 2 with stderr {err!r}"
    out.encode("utf-8")  # a strict UTF-8 stdout can print it
    if json_out and code in (0, 1) and out.strip():
        json.loads(out, parse_constant=_reject_constant)
    return code


# ---- the bound language, with hostile tokens ----------------------------------------------------------------------

NAMES = ["alpha", "sigma", "eta", "K", "n", "S", "lam", "gap", "start_var", "x", "k", "j", "t", "bogus"]
INDEX = st.one_of(st.sampled_from(["k", "j", "t", "i", "Integer", "Symbol", "Float", "Rational", "pi", "E", "I",
                                   "oo", "zoo", "nan", "S", "N", "e", "max", "sum", "range", "mpf", "exp", "alpha",
                                   "_k", "__builtins__", "_verify_range", "_verify_index_k"]),
                  st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,5}", fullmatch=True))
NUMBERS = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["0", "1", "2", "0.5", "1/2", "1e308", "1e-320", "1e999999", "1e-999999", "10**100",
                     "9**9**9**9", "2**(10**100)", "(10**1000)**1000", "10**4000", "3**10000", "4" * 1900,
                     "0.1e-5", "1_000", "0x1F", "1j", "1e400"]),
)
ATOMS = st.one_of(st.sampled_from(NAMES), NUMBERS, st.sampled_from(["pi", "E", "inf", "oo", "None", "True"]))
UNARY = ["exp", "log", "sqrt", "erf", "erfc", "Abs", "tanh", "floor", "ceiling", "harmonic", "factorial", "gamma",
         "sin", "__import__", "eval", "Symbol", "Integer"]
BINARY = ["Max", "Min", "binomial", "Sum", "Float", "Rational"]
OPERATORS = ["+", "-", "*", "/", "**", "^", "%", "//", "@", "&", "|", "<", ">=", "==", ".", " "]


def _combine(children):
    return st.one_of(
        st.tuples(children, st.sampled_from(OPERATORS), children, st.booleans()).map(
            lambda t: f"({t[0]}){t[1]}({t[2]})" if t[3] else f"{t[0]}{t[1]}{t[2]}"),
        children.map(lambda a: f"-{a}"),
        st.tuples(st.sampled_from(UNARY), children).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(BINARY), children, children).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(st.sampled_from(["Sum", "MinOver"]), children, INDEX, children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]}, {t[3]}, {t[4]})"),
        st.tuples(st.sampled_from(["Sum", "MinOver"]), children, INDEX).map(
            lambda t: f"{t[0]}({t[1]}*{t[2]}, {t[2]}, 1, 3)"),
        st.tuples(children, st.integers(1, 60)).map(lambda t: "(" * t[1] + t[0] + ")" * t[1]),
    )


EXPRESSIONS = st.recursive(ATOMS, _combine, max_leaves=10)
FAMILY_NAMES = ["alpha", "sigma", "eta", "n", "K", "S", "lam", "start_var"]  # parameters of FAMILY's renyi truth


def _valid(children):
    """Well-formed bounds over FAMILY's parameters, so that the search and the evaluators run on them."""
    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "-", "*", "/"]), children).map(lambda t: f"({t[0]}){t[1]}({t[2]})"),
        st.tuples(children, st.sampled_from(["2", "3", "-1", "1/2", "0.5", "K", "eta", "10", "64"])).map(
            lambda t: f"({t[0]})**{t[1]}"),
        st.tuples(st.sampled_from(["exp", "log", "sqrt", "erf", "erfc", "Abs", "tanh", "floor", "ceiling",
                                   "harmonic"]), children).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(st.sampled_from(["Max", "Min", "binomial"]), children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.tuples(st.sampled_from(["Sum", "MinOver"]), children, st.sampled_from(["k", "j", "i"]),
                  st.sampled_from(["0", "1", "2", "K", "n", "-3", "1.5"]),
                  st.sampled_from(["1", "3", "K", "n", "K + 2", "10**5", "k", "j"])).map(
            lambda t: f"{t[0]}(({t[1]})*{t[2]}, {t[2]}, {t[3]}, {t[4]})"),
    )


VALID = st.recursive(st.one_of(st.sampled_from(FAMILY_NAMES), st.sampled_from(["1", "2", "0.5", "1e-300", "1e300",
                                                                              "pi", "E", "0"])),
                     _valid, max_leaves=8)
VALID_CONDITIONS = st.tuples(VALID, st.sampled_from(["<", ">=", ">"]), VALID).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
HOSTILE = st.sampled_from([
    "Sum(Sum(k*j, j, 1, 3), k, 1, 4)", "Sum(Sum(k*j, j, 1, k), k, 1, 4)", "MinOver(MinOver(k - j, j, 1, k), k, 1, 3)",
    "Sum(Integer, Integer, 1, 3)", "Sum(Symbol*2, Symbol, 1, 3)", "Sum(E*e, e, 1, 2)", "Sum(Max(max, 1), max, 1, 3)",
    "Sum(k, k, 1, 10**100)", "Sum(k, k, 1, 10**5)", "Sum(k, k, 3, 1)", "MinOver(k, k, 3, 1)", "Sum(k, k, 1, 2.5)",
    "Sum(k, k, 1, K)", "Sum(k, k, 1, eta)", "Sum(1/k**2, k, 1, K) + alpha", "Sum(k)", "Sum(k, 1, 1, 2)",
    "9**9**9**9", "2**(10**100)", "factorial(10**8)", "harmonic(10**8)", "binomial(10**6, 3000)", "1e999999",
    "1e-999999", "floor(exp(10**5))", "floor(pi**10000)", "2**floor(10**4000)", "(2*K)**10000", "(3*K)**10000",
    "(K + 2)**10000", "x" + "**x" * 60, "-" * 2500 + "1", "(" * 300 + "alpha" + ")" * 300, "+".join(["alpha"] * 900),
    "Max(" + ", ".join(f"alpha*{i}" for i in range(40)) + ")", "alpha" * 500, "__import__('os').system('true')",
    "lambda: 1", "alpha.real", "alpha[0]", "'text'", "...", "alpha if K else n", "[alpha]", "{alpha}", "alpha; K",
    "\udcff", "alpha\udcfe", "é", "\u2028alpha", "alpha\n", "", " ", "1/0", "0**-1", "(-8)**(1/3)", "zoo", "nan",
    "oo", "I", "alpha ** (1/0)", "log(0)", "sqrt(-1)", "alpha*1e308*1e308", "exp(exp(exp(10)))",
])
TEXT = st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=40)
BOUNDS = st.one_of(VALID, EXPRESSIONS, HOSTILE, TEXT)
CONDITIONS = st.one_of(
    st.tuples(EXPRESSIONS, st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), EXPRESSIONS).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}"),
    st.tuples(st.sampled_from(NAMES), st.sampled_from(NAMES)).map(lambda t: f"({t[0]} < 1) & ({t[1]} > 0)"),
    VALID_CONDITIONS,
    st.sampled_from(["eta*lam < 1", "(K >= 3) | ~(n < 2)", "alpha < alpha", "True", "1 < 2 < 3", "K"]),
    HOSTILE, TEXT)


@fuzz(150)
@given(text=st.one_of(BOUNDS, CONDITIONS), condition=st.booleans())
def test_the_parser_is_total_and_quick(text, condition):
    """Any text parses, or is a ParameterError: the work SymPy may do is bounded first (h), by the checks on the
    text, never by the parse's safety-net deadline (_PARSE_DEADLINE_S, 10 s: far beyond any parse that passed the
    checks, even on a loaded machine)."""
    import sympy as sp

    from verify.parsing import parse_expression

    symbols = {name: sp.Symbol(name, positive=True) for name in FAMILY_NAMES}
    try:
        out = parse_expression(text, symbols, condition=condition)
    except ParameterError as err:
        assert "\n" not in str(err) and "SymPy took more than" not in str(err), text
    else:
        sp.sstr(out)  # printable (no integer beyond Python's int-to-text limit)


def _opt(flag: str, values) -> st.SearchStrategy[list[str]]:
    """[] or [flag, value]."""
    return st.one_of(st.just([]), values.map(lambda v: [flag, v]))


def _argv(*parts) -> st.SearchStrategy[list[str]]:
    return st.tuples(*parts).map(lambda ps: [a for p in ps for a in p])


NUMBER_TEXT = st.sampled_from(["0", "1", "2", "0.5", "-1", "nan", "inf", "-inf", "1e400", "1e-320", "abc", "", "3x",
                               "10**3", "1_0", "0x10", "\udcff"])


# ---- falsify ------------------------------------------------------------------------------------------------------

CLEAN_FALSIFY = _argv(  # valid options around a bound: the search, the evaluators and the certifier run
    st.one_of(VALID, VALID, HOSTILE).map(lambda b: ["falsify", b, "--family", FAMILY]),
    st.sampled_from(["0.5", "0.3"]).map(lambda b: ["--budget", b]),
    st.sampled_from(["3", "8", "15"]).map(lambda m: ["--max-examples", m]),
    _opt("--side", st.sampled_from(["upper", "lower", "exact"])),
    _opt("--assume", VALID_CONDITIONS),
    _opt("--fix", st.tuples(st.sampled_from(FAMILY_NAMES), st.sampled_from(["1", "2", "0.5", "10", "1e-3"])).map(
        lambda t: f"{t[0]}={t[1]}")),
    _opt("--quantity", st.sampled_from(["renyi", "dp_epsilon"])),
    _opt("--seed", st.sampled_from(["0", "7"])),
    st.sampled_from([[], ["--json"]]),
)
MIXED_FALSIFY = _argv(
    st.tuples(BOUNDS).map(lambda t: ["falsify", t[0]]),
    st.sampled_from([["--family", FAMILY]] * 6 + [["--family", "bogus"], ["--family", ""], []]),
    st.sampled_from(["0.5", "0.3", "0.05", "1e-9", "nan", "inf", "-1", "0", "abc"]).map(lambda b: ["--budget", b]),
    st.sampled_from(["1", "3", "5", "8", "0", "-1", "x", "1e3"]).map(lambda m: ["--max-examples", m]),
    _opt("--side", st.sampled_from(["upper", "lower", "exact", "bogus"])),
    st.lists(CONDITIONS.map(lambda c: ["--assume", c]), max_size=2).map(lambda ls: [a for p in ls for a in p]),
    _opt("--bind", st.tuples(st.sampled_from(NAMES + ["", "Integer", "L", "1x"]), BOUNDS).map(
        lambda t: f"{t[0]}={t[1]}")),
    _opt("--quantity", st.sampled_from(["renyi", "dp_epsilon", "lsi_constant", "bogus", ""])),
    _opt("--fix", st.tuples(st.sampled_from(NAMES + [""]), NUMBER_TEXT).map(lambda t: f"{t[0]}={t[1]}")),
    _opt("--convention", st.sampled_from(["lipschitz_replace_one", "bogus", ""])),
    _opt("--seed", st.sampled_from(["0", "7", "-1", "x"])),
    _opt("--min-checked", st.sampled_from(["0", "1", "100", "-1"])),
    st.sampled_from([[], ["--json"]]),
)
FALSIFY = st.one_of(CLEAN_FALSIFY, MIXED_FALSIFY)


@fuzz(40)
@given(argv=FALSIFY)
def test_falsify_never_fails_internally(argv, capsys):
    run_cli(capsys, argv, json_out="--json" in argv)


# ---- certify ------------------------------------------------------------------------------------------------------

BOX_NAMES = st.sampled_from(["alpha", "x", "K", "eta", "k", "exp", "Integer", "pi", "_x", "1x", "", "x y", "lambda"])
BOX_ENDS = st.sampled_from(["0", "1", "2", "-1", "1/2", "0.1", "nan", "inf", "1e999", "x", "", "10**3", "1/0",
                            "3/1e400"])
BOX = st.tuples(BOX_NAMES, BOX_ENDS, BOX_ENDS, st.booleans()).map(
    lambda t: f"{t[0]}={t[1]}:{t[2]}" if t[3] else f"{t[0]}={t[1]}")
LIMITS = _argv(
    st.sampled_from(["0.2", "0.05", "nan", "inf", "-1", "0", "x", "1e-9"]).map(lambda b: ["--budget", b]),
    st.sampled_from(["50", "1", "0", "-3", "x"]).map(lambda m: ["--max-boxes", m]),
    _opt("--min-width", st.sampled_from(["1e-3", "nan", "inf", "0", "-1", "1e-300"])),
    _opt("--prec", st.sampled_from(["64", "8", "16", "5000", "x"])),
    _opt("--relation", st.sampled_from(["<=", "<", ">=", ">", "==", "bogus", ""])),
    st.sampled_from([[], ["--json"]]),
)


def _claims() -> list[str]:
    from verify.certify import CLAIMS
    return sorted(CLAIMS)


CLEAN_LIMITS = _argv(st.sampled_from([["--budget", "0.2"], ["--budget", "0.05"]]),
                     st.sampled_from([["--max-boxes", "50"], ["--max-boxes", "5"]]), st.sampled_from([[], ["--json"]]),
                     _opt("--relation", st.sampled_from(["<=", "<", ">=", ">"])))
CLEAN_BOX = st.tuples(st.sampled_from(FAMILY_NAMES), st.sampled_from(["0", "1", "1/2", "2"]),
                      st.sampled_from(["1", "2", "10", "100"])).map(lambda t: ["--box", f"{t[0]}={t[1]}:{t[2]}"])
CERTIFY = st.one_of(
    _argv(st.just(["certify", "--lhs"]), VALID.map(lambda b: [b]), st.just(["--rhs"]),
          st.one_of(VALID, HOSTILE).map(lambda b: [b]),
          st.lists(CLEAN_BOX, min_size=len(FAMILY_NAMES), max_size=len(FAMILY_NAMES),
                   unique_by=lambda b: b[1].partition("=")[0]).map(lambda ls: [a for p in ls for a in p]),
          _opt("--assume", VALID_CONDITIONS),
          CLEAN_LIMITS),
    _argv(st.sampled_from(_claims()).map(lambda c: ["certify", c]), CLEAN_LIMITS),
    _argv(st.just(["certify", "--lhs"]), BOUNDS.map(lambda b: [b]), st.just(["--rhs"]), BOUNDS.map(lambda b: [b]),
          st.lists(BOX.map(lambda b: ["--box", b]), max_size=3).map(lambda ls: [a for p in ls for a in p]),
          _opt("--assume", CONDITIONS), LIMITS),
    _argv(st.sampled_from(_claims() + ["bogus", ""]).map(lambda c: ["certify", c]), LIMITS),
    _argv(st.just(["certify"]), st.sampled_from([["--list"], [], ["--lhs", "x"], ["--help"], ["--bogus"]])),
)


@fuzz(40)
@given(argv=CERTIFY)
def test_certify_never_fails_internally(argv, capsys):
    run_cli(capsys, argv, json_out="--json" in argv)


# ---- check, list ----------------------------------------------------------------------------------------------------

GOOD = {"alpha": "2", "sigma": "1", "eta": "0.1", "n": "10", "K": "5", "S": "4", "lam": "1", "start_var": "0"}
PARAM_VALUES = st.one_of(st.sampled_from(sorted(set(GOOD.values()))), NUMBER_TEXT,
                         st.floats(allow_nan=True, allow_infinity=True).map(repr),
                         st.sampled_from(["1e300", "1e-300", "1000000", "2.5", "1.0000000000001"]))
IN_DOMAIN = st.one_of(st.sampled_from(["1", "2", "3", "10", "100", "1e-3", "1e3", "1e6", "1e-300", "1e300",
                                       "1.0000000000001", "5e-324"]),
                      st.floats(1e-6, 1e6).map(repr), st.integers(1, 10**6).map(str))
CHECK_IDS = st.sampled_from(["chourasia2021.corollary1", "chourasia2021.lemma5", "chourasia2021.lemma5.lsi_start",
                             "chourasia2021.theorem1"])
CHECK = st.one_of(
    _argv(CHECK_IDS.map(lambda i: ["check", i]),  # in the domain, at any scale: the truths and the certificate run
          st.dictionaries(st.sampled_from(sorted(GOOD)), IN_DOMAIN, max_size=8).map(
              lambda d: [a for k, v in {**GOOD, **d}.items() for a in ("-p", f"{k}={v}")]),
          st.sampled_from([[], ["--json"]])),
    _argv(st.one_of(CHECK_IDS, st.sampled_from(["bogus.id", "", "chourasia2021"])).map(lambda i: ["check", i]),
          st.dictionaries(st.sampled_from([*GOOD, "gap", "bogus", "", "K K"]), PARAM_VALUES, max_size=10).map(
              lambda d: [a for k, v in {**GOOD, **d}.items() for a in ("-p", f"{k}={v}")]),
          st.sampled_from([[], ["--family", FAMILY], ["--family", "bogus"], ["-p", "alpha"], ["-p", "=1"]]),
          st.sampled_from([[], ["--json"]])),
)


@fuzz(25)
@given(argv=CHECK)
def test_check_never_fails_internally(argv, capsys):
    run_cli(capsys, argv, json_out="--json" in argv)


def test_check_json_is_strict_where_a_value_is_infinite(capsys):
    """A bound and a truth beyond float range are written as the string "Infinity", as in results.json."""
    params = {**GOOD, "alpha": "1e308", "S": "1e300", "start_var": "2"}
    code = main(["check", "chourasia2021.corollary1", *[a for k, v in params.items() for a in ("-p", f"{k}={v}")],
                 "--json"])
    out = capsys.readouterr().out
    data = json.loads(out, parse_constant=_reject_constant)
    assert code == 0 and data["bound"] == "Infinity" and data["truth"]["value"] == "Infinity"


LIST = _argv(st.just(["list"]), st.lists(st.sampled_from([CHEAP_ENTRY, "chourasia2021", "bogus", "", "*", "."]),
                                        min_size=1, max_size=3),
             st.sampled_from([[], ["--json"]]))


@fuzz(10)
@given(argv=LIST)
def test_list_never_fails_internally(argv, capsys):
    run_cli(capsys, argv, json_out="--json" in argv)


# ---- run and report (one small entry; refused destinations only: no report is built) ------------------------------

BAD_SCHEDULERS = st.one_of(st.sampled_from(["::::", "tcp://[bad", "tcp://h:99999", "tcp://:8786", "", "tcp://",
                                            "h:abc", "foo://h:1", "tcp://a b:1", "tcp://h:0", "-h", "\udcff"]),
                           TEXT.filter(lambda s: not s.isalnum()))


def _bad_paths(root: Path) -> list[str]:
    """Destinations verify must refuse before it runs anything."""
    (root / "afile").write_text("not verify's\n")
    (root / "foreign").mkdir(exist_ok=True)
    (root / "foreign" / "data.txt").write_text("x\n")
    if not (root / "alink").is_symlink():
        (root / "alink").symlink_to(root / "foreign")
    return [str(root / "afile"), str(root / "afile" / "sub"), str(root / "foreign"), "/dev/null", "/proc/verify-x/y",
            "", ".", "/", str(root / "alink"), str(root / ("a" * 300)), str(root / ("b" * 300) / "c")]


CLEAN_RUN_OPTIONS = _argv(st.just(["--only", CHEAP_ENTRY, "--falsify", "0", "--workers", "1"]),
                          _opt("--seed", st.sampled_from(["0", "3"])))
MIXED_RUN_OPTIONS = _argv(
    st.sampled_from([[CHEAP_ENTRY], ["bogus"], [CHEAP_ENTRY, "bogus"], [""]]).map(lambda s: ["--only", *s]),
    st.sampled_from([["--falsify", "0"]] * 4 + [["--falsify", "-1"], ["--falsify", "x"]]),
    st.sampled_from([["--workers", "1"]] * 4 + [["--workers", "0"], ["--workers", "x"]]),
    _opt("--seed", st.sampled_from(["0", "3", "-1", "x"])),
    st.one_of(st.just([]), st.just(["--executor", "bogus"]),
              BAD_SCHEDULERS.map(lambda s: ["--executor", "dask", "--scheduler", s]),
              BAD_SCHEDULERS.map(lambda s: ["--scheduler", s])),
)
RUN_OPTIONS = st.one_of(CLEAN_RUN_OPTIONS, MIXED_RUN_OPTIONS)


@fuzz(12)
@given(options=RUN_OPTIONS, data=st.data())
def test_run_never_fails_internally(options, data, capsys, tmp_path):
    target = data.draw(st.sampled_from([None, str(tmp_path / "out" / "results.json"), *_bad_paths(tmp_path)]))
    run_cli(capsys, ["run", *options, *([] if target is None else ["--json", target])])


@fuzz(15)
@given(options=RUN_OPTIONS, data=st.data())
def test_report_to_a_bad_folder_is_refused_cleanly(options, data, capsys, tmp_path):
    out = data.draw(st.sampled_from(_bad_paths(tmp_path)))
    backend = data.draw(st.sampled_from([[], ["--backend", "numpy"], ["--backend", "bogus"]]))
    code = run_cli(capsys, ["report", "--out", out, *options, *backend, "--quiet"])
    assert code == 2  # refused before anything ran


# ---- families, conventions, plugins -------------------------------------------------------------------------------

TOY = ("import sympy as sp\nfrom verify.model import Family, Parameter, Quantity\nfrom verify.results import Truth\n"
       "x = sp.Symbol('x', positive=True)\n"
       "def renyi(x):\n    return Truth.exact(x, 'R = x')\n")
PLUGINS = {
    "no_families.py": "x = 1\n",
    "not_families.py": "FAMILIES = [1, 2]\n",
    "int_families.py": "FAMILIES = 5\n",
    "none_families.py": "FAMILIES = None\n",
    "str_families.py": "FAMILIES = 'abc'\n",
    "dict_families.py": "FAMILIES = {'a': object()}\n",
    "empty_families.py": "FAMILIES = ()\n",
    "sys_exit.py": "import sys\nsys.exit(3)\n",
    "system_exit_text.py": "raise SystemExit('bye')\n",
    "base_exception.py": "class Boom(BaseException):\n    pass\nraise Boom('x')\n",
    "generator_exit.py": "raise GeneratorExit\n",
    "keyboard_interrupt.py": "raise KeyboardInterrupt\n",
    "memory_error.py": "raise MemoryError\n",
    "zero_division.py": "1/0\n",
    "syntax_error.py": "def f(:\n",
    "iter_raises.py": "class Bad:\n    def __iter__(self):\n        raise RuntimeError('no')\nFAMILIES = Bad()\n",
    "getattr_raises.py": "def __getattr__(name):\n    raise RuntimeError(name)\n",
    "register_nothing.py": "from verify.families import register\nregister()\n",
    "toy_ok.py": TOY + "FAMILIES = [Family(name='toy_fuzz_ok', description='R = x', parameters=(Parameter(x, x < 10, "
                       "'x'),), facts=frozenset(), truths={Quantity.RENYI: renyi}, method='closed form')]\n",
    "toy_name_int.py": TOY + "FAMILIES = [Family(name=3, description='d', parameters=(), facts=frozenset(), "
                             "truths={Quantity.RENYI: renyi}, method='m')]\n",
    "toy_str_quantity.py": TOY + "FAMILIES = [Family(name='toy_fuzz_q', description='d', parameters=(), "
                                 "facts=frozenset(), truths={'renyi': renyi}, method='m')]\n",
    "toy_bad_parameters.py": TOY + "FAMILIES = [Family(name='toy_fuzz_p', description='d', parameters=[1], "
                                   "facts=frozenset(), truths={Quantity.RENYI: renyi}, method='m')]\n",
    "toy_no_truth.py": TOY + "FAMILIES = [Family(name='toy_fuzz_none', description='d', parameters=(), "
                             "facts=frozenset(), truths={}, method='m')]\n",
    "toy_taken_name.py": TOY + f"FAMILIES = [Family(name='{FAMILY}', description='d', parameters=(), "
                               "facts=frozenset(), truths={Quantity.RENYI: renyi}, method='m')]\n",
    "toy_facts_str.py": TOY + "FAMILIES = [Family(name='toy_fuzz_f', description='d', parameters=(), facts='abc', "
                              "truths={Quantity.RENYI: renyi}, method='m')]\n",
}


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("plugins")
    for name, body in PLUGINS.items():
        (root / name).write_text(body)
    (root / "not_utf8.py").write_bytes(b"\xff\xfe = 1\n")
    (root / "not_python.txt").write_text("FAMILIES = []\n")
    (root / "folder.py").mkdir()
    return root


@fuzz(30)
@given(data=st.data())
def test_plugins_and_listings_never_fail_internally(plugin_dir, data, capsys):
    files = sorted(str(p) for p in plugin_dir.iterdir())
    plugin = data.draw(st.sampled_from([*files, str(plugin_dir / "missing.py"), "os", "json", "", ".", "..",
                                        "verify", "verify.families", "no_such_module_xyz", "a..b", "/", "\udcff.py",
                                        str(plugin_dir / ("a" * 300)) + ".py"]))
    command = data.draw(st.sampled_from([["families", "--plugin", plugin], ["--plugin", plugin, "families"],
                                         ["--plugin", plugin, "conventions"], ["conventions"], ["families"],
                                         ["list", CHEAP_ENTRY, "--plugin", plugin]]))
    code = run_cli(capsys, command)
    if code == 130:
        assert "keyboard_interrupt" in plugin


# ---- load_results on damaged files --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def results_text() -> str:
    from verify.runner import run

    return dump_results(results_document(run((CHEAP_ENTRY,), falsify=3)))


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 10**20), st.floats(allow_nan=False, allow_infinity=False),
              st.text(max_size=5)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=3)), max_leaves=8)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:3]):
            yield from _paths(v, (*prefix, i))


def _edited(data, path, action, value):
    """A copy of `data` with the node at `path` deleted, replaced by `value`, or (a list) shortened."""
    data = json.loads(json.dumps(data))
    if not path:
        return value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "shorten" and isinstance(parent[last], list) and parent[last]:
        parent[last].pop()
    else:
        parent[last] = value
    return data


@fuzz(120)
@given(data=st.data())
def test_load_results_refuses_damaged_files_cleanly(results_text, data, tmp_path):
    original = json.loads(results_text)
    kind = data.draw(st.sampled_from(["edit", "edit", "edit", "truncate", "bytes", "value", "nan"]))
    if kind == "edit":
        path = data.draw(st.sampled_from(list(_paths(original))))
        action = data.draw(st.sampled_from(["delete", "replace", "shorten"]))
        if not path and action == "delete":
            action = "replace"
        raw = json.dumps(_edited(original, path, action, data.draw(JSON_VALUES))).encode()
    elif kind == "truncate":
        raw = results_text.encode()[:data.draw(st.integers(0, len(results_text) - 1))]
    elif kind == "bytes":
        raw = bytearray(results_text.encode())
        for _ in range(data.draw(st.integers(1, 5))):
            raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
        raw = bytes(raw)
    elif kind == "value":
        raw = json.dumps(data.draw(JSON_VALUES)).encode()
    else:
        raw = results_text.replace('"Infinity"', "Infinity").replace("0.0", "NaN", 1).encode()
    target = tmp_path / "results.json"
    target.write_bytes(raw)
    try:
        loaded = load_results(target)
    except ParameterError as err:
        assert "\n" not in str(err) and str(target) in str(err)
        return
    for entry in loaded["results"]:
        point_rows(entry["points"], entry["theorem"], entry["family"])
        skipped_rows(entry["skipped_points"])


def test_load_results_names_unreadable_files(tmp_path):
    for bad in (tmp_path / "missing.json", tmp_path, tmp_path / ("a" * 300)):
        with pytest.raises(ParameterError, match="cannot read"):
            load_results(bad)
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ParameterError):
        load_results(tmp_path / "deep.json")


# ---- the command line as a process ----------------------------------------------------------------------------------

def test_a_non_utf8_argument_is_one_line_exit_2_in_a_real_process(tmp_path):
    """Bytes that are not UTF-8 arrive as surrogate escapes; the error line must still reach stderr."""
    proc = subprocess.run([sys.executable, "-m", "verify.cli", "falsify", b"alpha\xff", "--family", FAMILY],
                          capture_output=True, cwd=tmp_path, env={**os.environ, "PYTHONIOENCODING": "utf-8"},
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1



# ---- the named defects of issue 21 (section 4, and section 2's parse-time cap), one by one -------------------------

FALSIFY_TAIL = ["--family", FAMILY, "--budget", "0.5", "--max-examples", "3"]
NAMED = [
    # (a) a malformed Dask scheduler address
    (["run", "--only", CHEAP_ENTRY, "--executor", "dask", "--scheduler", "::::"], "scheduler"),
    (["run", "--only", CHEAP_ENTRY, "--executor", "dask", "--scheduler", "tcp://[bad"], "scheduler"),
    (["report", "--only", CHEAP_ENTRY, "--executor", "dask", "--scheduler", "tcp://h:99999"], "scheduler"),
    # (c) a Sum index named like a SymPy, parser or evaluator name
    *[(["falsify", f"Sum({k}*2, {k}, 1, 3)", *FALSIFY_TAIL], "reserved")
      for k in ("Integer", "Symbol", "Float", "Rational", "I", "oo", "N", "e", "max", "_k")],
    (["falsify", "Sum(pi, pi, 1, 3)", *FALSIFY_TAIL], "already"),
    # (e) a certify budget that is not a finite positive number of seconds
    *[(["certify", "--lhs", "x", "--rhs", "1", "--box", "x=0:1", "--budget", b], "--budget")
      for b in ("nan", "inf", "-inf", "-1", "0")],
    (["certify", "--lhs", "x", "--rhs", "1", "--box", "x=0:1", "--min-width", "inf"], "--min-width"),
    # (h) work SymPy would do at parse time, refused before it starts
    *[(["falsify", b, *FALSIFY_TAIL], needle) for b, needle in [
        ("9**9**9**9", "exponent"), ("2**(10**100)", "exponent"), ("(10**1000)**1000", "too large"),
        ("harmonic(10**8)", "too large"), ("binomial(10**6, 3000)", "too large"), ("1e999999", "range of a double"),
        ("1e-999999", "range of a double"), ("floor(exp(10**5))", "too large"), ("2**floor(10**4000)", "exponent"),
        ("(alpha + 2)**10000", "degree"), ("factorial(10**8)", "not allowed"), ("alpha" * 1000, "longer than"),
        ("alpha*" + "-" * 1990 + "1", "nested"),
        ("Max(" + ", ".join(f"alpha*{i}" for i in range(40)) + ")", "Max and Min")]],
]


@pytest.mark.parametrize(("argv", "needle"), NAMED, ids=lambda v: repr(v)[:60] if isinstance(v, list) else v)
def test_each_named_defect_is_one_line_exit_2(argv, needle, capsys, monkeypatch):
    """Refused, not computed: no run, report or certification starts, and no text of the command reaches SymPy's
    parser (the work it would do is refused before it starts)."""
    import importlib

    import sympy.parsing.sympy_parser as sympy_parser

    started = []
    for module, name in (("verify.runner", "run"), ("verify.certify", "certify"),
                         ("verify.reporting.build", "build_report")):
        try:
            target = importlib.import_module(module)
        except ImportError:  # the report extra is not installed: no report can start
            continue
        monkeypatch.setattr(target, name, lambda *_args, _name=name, **_kwargs: started.append(_name))
    parse = sympy_parser.parse_expr
    parsed = []

    def recorded(text, *args, **kwargs):
        parsed.append(text)
        return parse(text, *args, **kwargs)

    monkeypatch.setattr(sympy_parser, "parse_expr", recorded)
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and needle in err[0], (code, err)
    assert started == [] and not set(argv) & set(parsed), (started, parsed)


def test_plugin_contract_violations_are_one_line_exit_2(plugin_dir, capsys):
    for name in ("no_families.py", "not_families.py", "int_families.py", "dict_families.py", "sys_exit.py",
                 "system_exit_text.py", "base_exception.py", "generator_exit.py", "iter_raises.py",
                 "getattr_raises.py", "toy_name_int.py", "toy_str_quantity.py", "toy_bad_parameters.py",
                 "toy_no_truth.py", "toy_taken_name.py", "not_utf8.py", "not_python.txt", "folder.py"):
        code = main(["families", "--plugin", str(plugin_dir / name)])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and "plugin" in err[0], (name, code, err)
    assert main(["families", "--plugin", str(plugin_dir / "toy_ok.py")]) == 0
    assert "toy_fuzz_ok" in capsys.readouterr().out
    assert main(["families", "--plugin", str(plugin_dir / "toy_ok.py")]) == 0  # loading it again is fine


def test_a_nested_sum_is_evaluated_not_undefined(capsys):
    """SymPy merges Sum(Sum(...)) into one Sum with two limits: the evaluators take both (b): 60 = sum of k*j."""
    code = main(["falsify", "alpha - 1 + Sum(Sum(k*j, j, 1, 3), k, 1, 4) - 60", "--side", "upper", *FALSIFY_TAIL[:2],
                 "--max-examples", "20", "--json"])
    outcome = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and outcome["checked"] + bool(outcome["counterexample"]) > 0 and outcome["undefined"] == 0
    for lhs, status in (("Sum(Sum(k*j, j, 1, k), k, 1, 4)", 0), ("MinOver(MinOver(k - j, j, 1, k), k, 2, 4) + x", 0)):
        assert main(["certify", "--lhs", lhs, "--rhs", "65", "--box", "x=0:1", "--budget", "5"]) == status
        capsys.readouterr()
    import sympy as sp

    from verify.bounds import HELPERS
    from verify.parsing import parse_expression

    expr = parse_expression("Sum(Sum(k*j, j, 1, k), k, 1, 4) + MinOver(MinOver(k - j, j, 1, k), k, 2, 4)", {})
    for module in ("mpmath", "math"):
        assert sp.lambdify([], expr, modules=[HELPERS, module])() == 65
