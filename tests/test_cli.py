"""The command line: list, check, run; exit codes 0 / 1 / 2 and no tracebacks on bad input."""

import dataclasses
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify
import verify.catalog
import verify.families
from verify import Verdict
from verify.cli import main

POINT = ["-p", "alpha=2", "-p", "sigma=1", "-p", "eta=0.1", "-p", "n=10", "-p", "K=5", "-p", "S=4", "-p", "lam=1"]


def test_list_shows_every_entry(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for theorem_id in verify.catalog.CATALOG:
        assert theorem_id in out


def test_check_prints_a_verdict(capsys):
    assert main(["check", "chourasia2021.corollary1", *POINT]) == 0
    assert "verdict: HOLDS" in capsys.readouterr().out


def test_bad_input_exits_2_naming_the_assumption():
    proc = subprocess.run([sys.executable, "-m", "verify.cli", "check", "chourasia2021.theorem3", *POINT,
                           "-p", "start_var=0.5"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "assumption 'fixed_start'" in proc.stderr and "start_var=0.5" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_writes_json_and_exits_0(tmp_path, capsys):
    path = tmp_path / "out" / "results.json"
    assert main(["run", "--only", "chourasia2021.theorem3", "--json", str(path), "--quiet"]) == 0
    data = json.loads(path.read_text())
    assert data["all_as_expected"] and {r["theorem"] for r in data["results"]} >= {"chourasia2021.theorem3"}
    assert "counterexample" in capsys.readouterr().out  # the misapplied variants are found violated


def test_run_exits_1_on_an_unexpected_verdict(monkeypatch, capsys):
    t = verify.catalog.CATALOG["chourasia2021.theorem3.exact"]
    flipped = dataclasses.replace(t, applications=(dataclasses.replace(t.applications[0],
                                                                       expected=Verdict.VIOLATED),))
    monkeypatch.setitem(verify.catalog.CATALOG, t.id, flipped)
    assert main(["run", "--only", t.id, "--quiet"]) == 1
    assert "UNEXPECTED" in capsys.readouterr().out


def test_a_verify_process_takes_one_blas_thread_unless_the_user_set_a_count(monkeypatch):
    from verify.cli import BLAS_THREADS, single_threaded_blas

    for name in BLAS_THREADS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    single_threaded_blas()
    assert {name: os.environ[name] for name in BLAS_THREADS} == {
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "1"}


def test_every_option_of_every_command_has_help_text():
    """Issue 25: `verify <command> --help` explains every option and argument."""
    import argparse

    from verify.cli import build_parser

    missing = []

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{prefix} {name}")
            elif not action.help and action.dest != "help":
                missing.append(f"{prefix} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "verify")
    assert missing == []


def _grid_point(app) -> dict:
    """The first point of the application's first grid (every parameter it varies or fixes)."""
    return {name: values[0] for name, values in app.grids[0].items()}


@settings(max_examples=12, deadline=None, database=None)
@given(st.sampled_from(sorted((t.id, i) for t in verify.catalog.CATALOG.values() for i in range(len(t.applications))
                              if not verify.families.family(t.applications[i].family).expensive)))
def test_check_takes_the_grids_fixed_constants_as_defaults(entry):
    """`verify check`'s --param help says the entry's grid gives the other parameters: one that takes a single value
    on every grid of the application may be left out (before, `missing parameter eta` however fixed it was); the
    point is then the full one, value for value."""
    theorem_id, i = entry
    app = verify.catalog.CATALOG[theorem_id].applications[i]
    point = _grid_point(app)
    given_ = {k: v for k, v in point.items() if len(app.grid_values(k)) > 1}
    try:
        full = verify.check(theorem_id, family=app.family, **point)
    except (verify.ParameterError, verify.AssumptionError):  # the first grid point is excluded: so is the shorter one
        with pytest.raises((verify.ParameterError, verify.AssumptionError)):
            verify.check(theorem_id, family=app.family, **given_)
        return
    short = verify.check(theorem_id, family=app.family, **given_)
    assert short.params == full.params and short.verdict is full.verdict and short.bound == full.bound
    assert short.truth.value == full.truth.value


def test_the_filled_constants_never_change_a_grid_point():
    """Every grid of every application: its first point, resolved as given and with the filled constants in place of
    the grid's own values, gives the same values (or the same refusal). The first rule (one value across the grids)
    filled beta = 1 from chen2024.theorem4_6.corrected's fourth grid into points whose beta is max(1, mu)."""
    from verify.api import fixed_constants
    from verify.checker import resolve
    from verify.pipeline.memo import shared_truths

    def resolved(theorem, app, point):
        try:
            return resolve(theorem, app, point)[1]
        except (verify.ParameterError, verify.AssumptionError) as err:
            return type(err).__name__

    with shared_truths():
        for theorem in verify.catalog.CATALOG.values():
            for app in theorem.applications:
                fixed = fixed_constants(app)
                for grid in app.grids:
                    point = {k: v[0] for k, v in grid.items()}
                    short = {k: v for k, v in point.items() if k not in fixed}
                    assert resolved(theorem, app, {**fixed, **short}) == resolved(theorem, app, point), theorem.id


def test_a_grid_value_never_replaces_a_derived_default(capsys):
    """mu = 2 on chen2024.theorem4_6.corrected: beta = kappa_h = max(1, mu) = 2, not the 1 and 1.1 of another grid
    (the first filling rule refused the entry's own grid point: 'mu <= beta fails at beta=1')."""
    argv = ["check", "chen2024.theorem4_6.corrected", "-p", "alpha=2", "-p", "mu=2", "-p", "m=2", "-p", "K=1",
            "-p", "o=0.001", "-p", "o_last=0.001", "-p", "o_rate=1", "-p", "wd=0", "--json"]
    assert main(argv) == 0
    params = json.loads(capsys.readouterr().out)["params"]
    assert params["beta"] == params["kappa_h"] == 2


def test_a_parameter_a_default_needs_is_named_missing(capsys):
    """chen2024.composition derives beta = max(1, mu): without mu the message named beta as undefined at the point;
    it names mu as missing (exit 2)."""
    assert main(["check", "chen2024.composition", "-p", "S=2"]) == 2
    err = capsys.readouterr().err
    assert "missing parameter mu" in err and "undefined" not in err


def _theorem_symbols_given_by_the_grid(theorem, app) -> list[str]:
    family_names = {p.name for p in verify.families.family(app.family).parameters}
    return sorted(s.name for s in theorem.symbols
                  if s.name not in family_names and s.name not in app.bind and s.name in app.grids[0])


def test_every_missing_theorem_symbol_is_named():
    """Each theorem symbol a grid gives (not a family parameter), left out of the grid's first point, is named as
    missing (before: the first assumption using it failed 'at :' with an empty list, e.g. alpha of
    thudi2024.rdp_to_dp.classical). Every application, every such symbol."""
    from verify.checker import resolve

    cases = 0
    for theorem in verify.catalog.CATALOG.values():
        for app in theorem.applications:
            for name in _theorem_symbols_given_by_the_grid(theorem, app):
                point = {k: v for k, v in _grid_point(app).items() if k != name}
                with pytest.raises(verify.ParameterError, match=rf"missing parameter\S* .*\b{name}\b"):
                    resolve(theorem, app, point)
                cases += 1
    assert cases > 50


def test_a_value_for_a_bound_symbol_is_refused(capsys):
    """A value given for a symbol the entry binds (to a family quantity or an expression) was silently replaced by
    the bound value after the assumptions had been checked with it; it is refused, naming the binding. Every
    application, every bound symbol."""
    from verify.checker import resolve

    cases = 0
    for theorem in verify.catalog.CATALOG.values():
        for app in theorem.applications:
            family_names = {p.name for p in verify.families.family(app.family).parameters}
            givable = {s.name for s in theorem.symbols} | family_names
            for name in sorted(app.bind.keys() & givable):
                with pytest.raises(verify.ParameterError, match=rf"{name} cannot be given: the entry binds {name} ="):
                    resolve(theorem, app, {**_grid_point(app), name: 0.5})
                cases += 1
    assert cases > 20
    assert main(["check", "chen2024.lemma_c3", "-p", "L_F=0.123"]) == 2
    assert "binds L_F = the family's gradient_map_lipschitz" in capsys.readouterr().err
