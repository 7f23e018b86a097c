"""Short reprs and notebook forms (issue 25): every catalog entry, family, point result, search and counterexample
prints as one line that names it (not a dataclass dump) and renders as well-formed HTML with its content escaped."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

import verify.families as families
from verify.catalog import CATALOG
from verify.runner import run
from verify.testing import falsify_outcome


class _Balanced(HTMLParser):
    """Counts open tags; well-formed fragments close every tag they open."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack.pop() == tag


def _well_formed(fragment: str) -> None:
    parser = _Balanced()
    parser.feed(fragment)
    parser.close()
    assert parser.stack == []


@pytest.mark.parametrize("theorem_id", sorted(CATALOG))
def test_every_catalog_entry_has_a_one_line_repr_html_and_latex(theorem_id):
    t = CATALOG[theorem_id]
    line = repr(t)
    assert line.startswith(f"<Theorem {t.id}:") and "\n" not in line and len(line) < 400
    _well_formed(t._repr_html_())
    latex = t._repr_latex_()
    assert latex.startswith("$") and latex.endswith("$")


@pytest.mark.parametrize("name", sorted(families.FAMILIES))
def test_every_family_has_a_one_line_repr_and_html(name):
    fam = families.FAMILIES[name]
    line = repr(fam)
    assert line.startswith(f"<Family {name}:") and "\n" not in line
    _well_formed(fam._repr_html_())


def test_results_searches_and_counterexamples_read_as_one_line_and_render():
    result = run(["chen2024.theorem4_6.proof"], falsify=0).results[0]
    assert repr(result).startswith("<ApplicationResult chen2024.theorem4_6.proof on ")
    assert "VIOLATED" in repr(result) and "counterexample at K=" in repr(result)
    point = result.counterexample
    assert repr(point).startswith("<PointResult VIOLATED") and point.certificate is not None
    assert repr(point.certificate).startswith("<PointCertificate VIOLATED: truth in [")
    outcome = falsify_outcome("Phi(Phi_inv(1 - type1) - 0.9/sigma)", "sampled_gaussian", "lower",
                              quantity="tradeoff_beta", defaults={"q": 1}, max_examples=20)
    assert repr(outcome).startswith("<SearchOutcome user.bound on sampled_gaussian: counterexample at q=1")
    assert repr(outcome.counterexample).startswith("<Counterexample to user.bound")
    for thing in (result, point, outcome, outcome.counterexample):
        assert "\n" not in repr(thing)
        _well_formed(thing._repr_html_())


def test_html_escapes_what_it_shows():
    """An assumption such as mu <= beta reaches the page as text (&lt;=), never as markup."""
    t = next(t for t in CATALOG.values() if any("<" in str(a.condition) for a in t.assumptions))
    shown = [str(a.condition) for a in t.assumptions if "<" in str(a.condition)]
    assert shown
    page = t._repr_html_()
    assert all(text.replace("<", "&lt;") in page for text in shown)
    _well_formed(page)
