"""`verify list` from the shipped listing (verify/catalog_index.json) says exactly what the catalog says, for any
selection, and is not used once the sources change (issue 22: `verify list` without SymPy)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify.catalog_index as index
import verify.reporting.listing as listing
from verify.catalog import CATALOG, PAPERS, select
from verify.cli import _wrapped, main


def test_the_shipped_listing_matches_the_sources_and_the_catalog():
    shipped = json.loads(index.INDEX.read_text())
    assert shipped["digest"] == index.digest(shipped["sources"]), ("verify/catalog_index.json is out of date: run "
                                                 "`python -m verify.catalog_index` and commit it")
    if shipped["sympy"] != index.sympy_version():  # another SymPy may print a bound otherwise: the listing is unused
        assert index.entries() is None
        pytest.skip(f"the listing was printed by SymPy {shipped['sympy']}, this is {index.sympy_version()}")
    assert shipped == listing.build()


SELECTORS = st.lists(st.sampled_from(sorted(CATALOG) + sorted(PAPERS) + ["chen2024.lemma_c3", "thudi2024.theorem3_6"]),
                     max_size=3)


@settings(max_examples=25, deadline=None, database=None)
@given(selectors=SELECTORS)
def test_a_selection_lists_what_the_catalog_selects(selectors):
    """The fast path against the catalog's own `select` (the reference), for ids, paper keys and id prefixes."""
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["list", *selectors]) == 0
    expected = _wrapped("\n".join(index.entry_text(t) for t in select(selectors))) + "\n"
    assert out.getvalue() == expected


def test_a_listing_that_does_not_match_the_sources_is_not_used(monkeypatch, capsys):
    monkeypatch.setattr(index, "digest", lambda *_: "changed sources")
    assert index.entries() is None
    assert main(["list", "bu2020"]) == 0
    assert capsys.readouterr().out == _wrapped(index.entry_text(CATALOG["bu2020.clt.delta"])) + "\n"


def test_an_unknown_selector_is_bad_input_on_both_paths(monkeypatch, capsys):
    assert main(["list", "nosuch"]) == 2
    monkeypatch.setattr(index, "digest", lambda *_: "changed sources")
    assert main(["list", "nosuch"]) == 2
    assert capsys.readouterr().err.count("nothing in the catalog matches nosuch") == 2


@pytest.mark.parametrize("path", ["fast", "slow"])
def test_json_listing_is_the_full_summary(path, monkeypatch, capsys):
    if path == "slow":
        monkeypatch.setattr(index, "digest", lambda *_: "changed sources")
    assert main(["list", "--json", "bu2020"]) == 0
    assert [e["id"] for e in json.loads(capsys.readouterr().out)] == ["bu2020.clt.delta"]


@pytest.mark.parametrize("command", ["list", "families"])
def test_no_line_is_wider_than_the_terminal(command, capsys, monkeypatch):
    """Issue 25: 83 lines of `verify list` and 82 of `verify families` exceeded 100 columns (up to 505)."""
    for columns in ("100", "60"):
        monkeypatch.setenv("COLUMNS", columns)
        assert main([command]) == 0
        lines = capsys.readouterr().out.splitlines()
        long = [ln for ln in lines if len(ln) > int(columns) - 1 and " " in ln.strip()]  # one unbreakable word may
        assert not long, long[:3]


def test_a_results_file_describes_each_theorem_as_sympy_prints_it():
    """The summaries a results file takes from the listing (issue 22: ~0.5 s of printing per run) are what SymPy prints
    for every catalog entry; a theorem that only shares a catalog id (a user's variant) is printed itself, and a
    caller that changes a summary (results_dict adds each assumption's status) does not change the next one."""
    import dataclasses

    import sympy as sp

    from verify.reporting.results_json import printed_summary, theorem_summary

    if index.entries() is None:
        pytest.skip("the shipped listing does not match these sources or this SymPy")
    for t in CATALOG.values():
        assert theorem_summary(t) == printed_summary(t)
    t = CATALOG["bu2020.clt.delta"]
    theirs = dataclasses.replace(t, bound=t.bound + sp.Rational(1, 7))
    assert theorem_summary(theirs)["bound"] == str(theirs.bound) != theorem_summary(t)["bound"]
    first = theorem_summary(t)
    first["assumptions"].append({"name": "changed"})
    first["source"]["result"] = "changed"
    assert theorem_summary(t) == printed_summary(t)


LOADED = ("import json, sys\nfrom verify.catalog import CATALOG\nfrom verify.catalog_index import entry_text\n"
          "from verify.reporting.results_json import printed_summary\n"
          "for t in CATALOG.values():\n    entry_text(t), printed_summary(t)\n"
          "print(json.dumps(sorted(m.__file__ for n, m in list(sys.modules.items())\n"
          "                        if n.split('.')[0] == 'verify' and getattr(m, '__file__', None))))")


def test_the_listing_names_every_module_its_text_is_printed_with():
    """Issue 47: verify/quantities.py (the quantities' names and kinds in every entry) was not in the hand-made list
    of the digest's sources. The shipped sources must hold every verify module that a fresh interpreter loads to
    print each entry's text and summary through the public functions (an independent derivation)."""
    import subprocess
    import sys
    from pathlib import Path

    shipped = json.loads(index.INDEX.read_text())["sources"]
    out = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, check=True, timeout=600)
    loaded = {Path(f).resolve().relative_to(index.HERE.resolve()).as_posix() for f in json.loads(out.stdout)}
    assert "quantities.py" in shipped
    assert loaded <= set(shipped), sorted(loaded - set(shipped))


def test_touching_any_source_of_the_listing_invalidates_it(tmp_path):
    """A copy of the package: one byte more in any source of the listing changes its digest (so `entries()` no
    longer serves it), and so does a source that is gone."""
    import shutil

    names = json.loads(index.INDEX.read_text())["sources"]
    copy = tmp_path / "verify"
    shutil.copytree(index.HERE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    base = index.digest(names, copy)
    assert base == index.digest(names) is not None
    for name in names:
        path = copy / name
        original = path.read_bytes()
        path.write_bytes(original + b"\n")
        assert index.digest(names, copy) != base, name
        path.unlink()
        assert index.digest(names, copy) is None, name
        path.write_bytes(original)
    assert index.digest(names, copy) == base
