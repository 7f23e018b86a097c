"""The pytest plugin as a researcher's suite uses it (run in a pytester sandbox): fixtures, options, and the
counterexample section of a failing bound."""

from __future__ import annotations

import re
from pathlib import Path

# The plugin imports verify (and NumPy) only when a fixture is used. pytester's in-process runs drop the modules they
# import, and NumPy cannot be loaded twice in one process: load the fixtures' modules here, outside the runs.
import verify.testing.falsify  # noqa: F401

pytest_plugins = ["pytester"]
README = Path(__file__).resolve().parent.parent / "README.md"

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
    assert example, "README lost its pytest-plugin example"
    pytester.makepyfile(test_readme=example.group(1))
    result = pytester.runpytest("-p", "no:cacheprovider", "--verify-max-examples", "300")
    result.assert_outcomes(passed=1)
