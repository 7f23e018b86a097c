"""The pytest plugin as a researcher's suite uses it (run in a pytester sandbox): fixtures, options, and the
counterexample section of a failing bound."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

# The plugin imports verify (and NumPy) only when a fixture is used. pytester's in-process runs drop the modules they
# import, and NumPy cannot be loaded twice in one process: load the fixtures' modules here, outside the runs.
import verify.testing.falsify  # noqa: F401
import verify.testing.paper_items  # noqa: F401

pytest_plugins = ["pytester"]
README = Path(__file__).resolve().parent.parent / "docs" / "guides" / "pytest-plugin.md"

SUITE = '''
import sympy as sp
from verify.families import closed_form
from verify.model import Family, Parameter, Quantity

x = sp.Symbol("x", positive=True)
TOY = Family(name="toy_plugin_identity", description="R = x", parameters=(Parameter(x, x < 10, "the divergence"),),
             facts=frozenset(), truths={Quantity.RENYI: closed_form(lambda x: x, "identity")}, method="identity")


def test_half_is_too_small(verify_register, assert_bound_holds):
    verify_register(TOY)
    assert_bound_holds("x/2", TOY.name)


def test_double_holds(verify_register, assert_bound_holds):
    verify_register(TOY)
    assert_bound_holds("2*x", TOY.name, max_examples=50)


def test_family_is_gone_after_the_test():
    import verify.families as families
    assert "toy_plugin_identity" not in families.FAMILIES


def test_catalog_fixture(verify_catalog):
    assert "chourasia2021.theorem1" in verify_catalog
'''


def test_a_failing_bound_shows_its_certified_counterexample(pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--verify-max-examples", "200")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*verify counterexample*", "*counterexample to user.bound on toy_plugin_identity*",
                                 "*certified VIOLATED: truth in*"])


def test_the_options_are_listed(pytester):
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*--verify-seed*", "*--verify-max-examples*", "*--verify-budget*"])


def test_the_readme_example_passes(pytester):
    example = re.search(r"<!-- pytest-plugin-example -->\n```python\n(.*?)```", README.read_text(), re.S)
    assert example, "docs/guides/pytest-plugin.md lost its example"
    pytester.makepyfile(test_readme=example.group(1))
    result = pytester.runpytest("-p", "no:cacheprovider", "--verify-max-examples", "300")
    result.assert_outcomes(passed=1)


STATEFUL_SUITE = '''
import pytest
import sympy as sp
from verify.families import closed_form
from verify.model import Family, Parameter, Quantity

alpha, sigma = sp.symbols("alpha sigma", positive=True)
STATE = {"scale": 0.25}  # the plugin's module state: R_alpha = scale * alpha / (2 sigma^2) * 4


def renyi(alpha, sigma):
    return STATE["scale"] * 4 * alpha / (2 * sigma**2)


TOY = Family(name="toy_stateful_gaussian", description="R = alpha/(2 sigma^2) once scale is 0.25",
             parameters=(Parameter(alpha, (alpha > 1) & (alpha < 10), "order"),
                         Parameter(sigma, (sigma > 0.5) & (sigma < 4), "noise")),
             facts=frozenset(), truths={Quantity.RENYI: closed_form(renyi, "scaled Gaussian")}, method="toy")


def test_a_correct_bound(verify_register, assert_bound_holds):
    verify_register(TOY)
    assert_bound_holds("alpha/(2*sigma**2)", TOY.name, max_examples=60)


def test_after_the_state_changed(verify_register, assert_bound_holds, monkeypatch):
    verify_register(TOY)
    monkeypatch.setitem(STATE, "scale", 1.0)  # the truth is now 4x the bound
    assert_bound_holds("alpha/(2*sigma**2)", TOY.name, max_examples=60)
'''


def test_a_bound_is_judged_against_the_plugin_state_of_its_own_test(pytester):
    """Issue 47 §1: a worker kept from an earlier test answered for the state before a monkeypatch, so a bound 4x
    below the truth passed, depending on test order. In both orders, the stale-state test fails with a certified
    counterexample and the correct one passes."""
    pytester.makepyfile(test_stateful=STATEFUL_SUITE)
    for order in (["test_a_correct_bound", "test_after_the_state_changed"],
                  ["test_after_the_state_changed", "test_a_correct_bound"]):
        result = pytester.runpytest("-p", "no:cacheprovider", "-p", "no:randomly",
                                    *[f"test_stateful.py::{name}" for name in order])
        result.assert_outcomes(passed=1, failed=1)
        result.stdout.fnmatch_lines(["*FAILED test_stateful.py::test_after_the_state_changed*"])
        result.stdout.fnmatch_lines(["*certified VIOLATED: truth in*"])


UNDECIDED_SUITE = '''
import time

import sympy as sp
from flint import arb, ctx
from verify.model import Family, Parameter, Quantity
from verify.results import Truth
from verify.truth.numbers import Enclosure

x = sp.Symbol("x", positive=True)


def slow_truth(x):  # R = 2x, exact; its enclosure takes a minute, stopped by the re-check's deadline
    def enclose(prec):
        end = time.monotonic() + 60
        while time.monotonic() < end:
            time.sleep(0.01)
        with ctx.workprec(prec):
            return Enclosure.of(arb(x) * 2, "2x", prec)
    return Truth.exact(2 * x, "2x", enclose=enclose)


SLOW = Family("toy_plugin_slow_enclosure", "R = 2x", (Parameter(x, x <= 100, "x"),), frozenset(),
              {Quantity.RENYI: slow_truth}, "2x, slowly enclosed")


def test_thirty_times_too_small(verify_register, assert_bound_holds):
    verify_register(SLOW)
    assert_bound_holds("x/15", SLOW.name, max_examples=20)
'''


def test_an_undecided_search_lists_its_uncertified_points_in_the_report(pytester):
    """Issue 47 §2: the search ends undecided (NothingChecked); the report shows each point that looked violated."""
    pytester.makepyfile(test_undecided=UNDECIDED_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--verify-budget", "6", "--verify-recheck", "0.2")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*verify uncertified points*", "*points look violated in floating point, not "
                                 "certified (rigorous re-check capped at 0.2 s)*", "*x=*: bound * vs truth * (ratio "
                                 "0.03333); uncertified: *DeadlineExceeded*"])


PAPER = """
[paper]
key = "{key}"
title = "A paper under pytest"

[[theorem]]
id = "gaussian"
result = "Lemma 1"
bound = '\\frac{{\\alpha}}{{2\\sigma^2}}'
family = "sampled_gaussian"
where = {{ q = "1" }}
grid = {{ alpha = [2, 8], sigma = [1.0, 2.0] }}
expect = "HOLDS"

[[theorem]]
id = "misprint"
result = "Lemma 2"
sympy = "alpha/(4*sigma**2)"
family = "sampled_gaussian"
where = {{ q = "1" }}
grid = {{ alpha = [2, 8], sigma = [1.0, 2.0] }}
expect = "HOLDS"
"""


@pytest.fixture
def restored_catalog():
    """The inner sessions add their papers to this process's catalog: taken out again after the test."""
    import verify.catalog as catalog
    from verify.catalog import paper_file

    saved = [(d, dict(d)) for d in (catalog.CATALOG, catalog.USER_PAPERS)]
    loaded = list(paper_file._LOADED)
    yield
    for d, copy in saved:
        d.clear()
        d.update(copy)
    paper_file._LOADED[:] = loaded


def test_a_paper_file_is_a_test_module_and_a_misprint_shows_its_counterexample(pytester, restored_catalog):
    """The Gaussian mechanism's R_alpha is alpha/(2 sigma^2) exactly (q = 1): half of it is violated at every point."""
    pytester.makefile(".verify.toml", draft=PAPER.format(key="pytestpaper"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--verify-falsify", "0", "-rA")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*pytestpaper.misprint on sampled_gaussian: VIOLATED, expected HOLDS*",
                                 "*certified counterexample: alpha=*", "*certified VIOLATED: truth in*",
                                 "*PASSED draft.verify.toml::pytestpaper.gaussian*"])


def test_verify_paper_names_a_file_of_any_name_and_a_bad_one_is_one_collection_error(pytester, restored_catalog):
    pytester.makefile(".toml", mine=PAPER.format(key="pytestpaper_option").replace(  # the misprint expected VIOLATED
        'sympy = "alpha/(4*sigma**2)"\nfamily = "sampled_gaussian"\nwhere = { q = "1" }\ngrid = { alpha = [2, 8], '
        'sigma = [1.0, 2.0] }\nexpect = "HOLDS"', 'sympy = "alpha/(4*sigma**2)"\nfamily = "sampled_gaussian"\n'
        'where = { q = "1" }\ngrid = { alpha = [2, 8], sigma = [1.0, 2.0] }\nexpect = "VIOLATED"'))
    result = pytester.runpytest("-p", "no:cacheprovider", "--verify-falsify", "0", "--verify-paper", "mine.toml")
    result.assert_outcomes(passed=2)
    pytester.makefile(".verify.toml", broken=PAPER.format(key="pytestpaper_broken").replace('"sampled_gaussian"',
                                                                                            '"sampled_gausian"', 1))
    result = pytester.runpytest("-p", "no:cacheprovider", "broken.verify.toml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*broken.verify.toml: theorem 'gaussian', key 'family': no family "
                                 "'sampled_gausian' (did you mean 'sampled_gaussian'*"])
    assert "Traceback" not in result.stdout.str()


DROPPED_MODULES = '''
import sys
import sympy as sp
from verify.certify.boxes import arb_bounds
from verify.model import stable_form

x = sp.Symbol("x", positive=True)
kept = set(sys.modules)
arb_bounds(stable_form(1 - sp.exp(-2 * x)), {"x": "1e-30"})  # the inner run: its stable form and Arb evaluation
for name in set(sys.modules) - kept:  # pytester's in-process run drops the modules it imported
    del sys.modules[name]
for value in sys.argv[1:]:
    lo, hi = arb_bounds(stable_form(1 - sp.exp(-3 * x)), {"x": value})
    print(*lo.man_exp(), *hi.man_exp())  # exact
'''


def test_a_run_that_drops_the_modules_it_imported_leaves_bounds_evaluable(tmp_path):
    """An in-process pytester run drops the modules it imported; the bounds of the process's later runs keep their
    rigorous enclosures (before, a run made after one that first imported sympy.codegen found its expm1 unknown to
    the Arb translation: 'cannot evaluate expm1 with interval arithmetic', two catalog entries INCONCLUSIVE). A
    fresh interpreter, since the modules this process has already imported decide what a run drops."""
    import os
    import subprocess
    import sys

    import mpmath

    import verify

    values = ["1e-300", "1e-30", "1e-8", "0.5", "3"]
    here = os.pathsep.join(filter(None, [str(Path(verify.__file__).parents[1]), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", DROPPED_MODULES, *values], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": here})  # this process's verify
    assert done.returncode == 0, done.stderr[-2000:]
    with mpmath.workdps(60):
        for value, line in zip(values, done.stdout.splitlines(), strict=True):
            truth = -mpmath.expm1(-3 * mpmath.mpf(value))
            lo_man, lo_exp, hi_man, hi_exp = map(int, line.split())
            lo, hi = mpmath.ldexp(lo_man, lo_exp), mpmath.ldexp(hi_man, hi_exp)
            assert lo <= truth <= hi
            assert hi - lo <= truth * mpmath.mpf("1e-15")
