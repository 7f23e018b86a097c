"""What a person meets first (issue 48): every command's output fits a 100-column terminal, parameters read as typed
(K=5, not 'K': 5.0), verdicts coloured on a terminal only, JSON on every command a program reads, and `verify check
ID` without -p checks the entry's first grid point as `verify run` does."""

from __future__ import annotations

import json
import math
import os
import pty
import re
import subprocess
import sys
from contextlib import redirect_stdout
from io import StringIO
from pathlib import Path

import pytest
import sympy as sp
from conftest import untimed
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

import verify.catalog
import verify.families
from verify.certify import CLAIMS
from verify.cli import main
from verify.conventions import CONVENTIONS
from verify.display import number_text, params_text
from verify.runner import run

ROOT = Path(__file__).parents[1]
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CHEAP = "chourasia2021.lemma5"  # two entries, ~0.5 s over their grid without the falsifier

VIOLATED_ARGV = ["check", "feldman2018.theorem1", "-p", "alpha=2", "-p", "K=1", "-p", "D0=10", "-p", "kappa=1",
                 "-p", "sigma=1e200"]  # a certified VIOLATED (exit 1)
# each command on small inputs, as a person first tries it
COMMANDS = [
    ["list"], ["list", "chourasia2021"], ["families"], ["conventions"], ["certify", "--list"],
    ["certify", "chourasia2021.cor2_below_cor1", "--budget", "2"],  # inconclusive (exit 3) on a slow machine
    ["check", "chourasia2021.corollary1"], ["check", "thudi2024.fact3_5"],
    VIOLATED_ARGV,
    ["run", "--only", "chourasia2021.theorem3", "--falsify", "5", "--quiet"],
    ["account", "--q", "0.01", "--sigma", "1", "--steps", "100", "--delta", "1e-5"],
    ["account", "--calibrate", "sigma", "--q", "0.01", "--steps", "100", "--delta", "1e-5", "--target-eps", "1"],
    ["falsify", "--family", "noisy_gd_quadratic", "alpha*S**2*eta*K/(40*n**2*sigma**2)", "--max-examples", "30",
     "--budget", "20"],
    ["falsify", "--family", "noisy_gd_quadratic", "alpha*S**2*eta*K/(4*n**2*sigma**2)", "--max-examples", "30",
     "--budget", "20"],
]


def _output(capsys, monkeypatch, argv: list[str], columns: int = 100) -> tuple[int, str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    code = main(argv)
    got = capsys.readouterr()
    return code, got.out + got.err


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_every_command_fits_100_columns(argv, capsys, monkeypatch):
    code, text = _output(capsys, monkeypatch, argv)
    assert code in (0, 1, 3), text
    wide = [line for line in text.splitlines() if len(line) > 100]
    assert wide == []
    assert not ANSI.search(text)  # captured output is no terminal: plain


@pytest.mark.parametrize("argv", [["list", "chourasia2021"], ["families"], ["conventions"], ["certify", "--list"],
                                  ["check", "chourasia2021.corollary1"]], ids=" ".join)
def test_wrapping_keeps_every_word(argv, capsys, monkeypatch):
    """The 100-column text has the words of the 1000-column one, in order: wrapping only moves line breaks."""
    narrow = _output(capsys, monkeypatch, argv, 100)[1]
    wide = _output(capsys, monkeypatch, argv, 1000)[1]
    assert narrow.split() == wide.split()


@settings(max_examples=examples(200, 2000), database=None)
@given(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**30, 10**30),
                 st.integers(-2**53, 2**53).map(float)))
def test_a_parameter_value_reads_back_as_itself(value):
    """Typed back, the text is the same number (float's own parser as the reference); an integral value has no
    '.0' and no exponent below 2**53, an int of any size is shown in full."""
    text = number_text(value)
    if isinstance(value, int):
        assert text == str(value) and int(text) == value
        return
    assert float(text) == value
    if value.is_integer() and abs(value) < 2.0**53:
        assert re.fullmatch(r"-?\d+", text) and int(text) == value


def test_check_shows_integers_as_integers(capsys, monkeypatch):
    argv = ["check", "chourasia2021.corollary1", "-p", "alpha=2", "-p", "sigma=1", "-p", "eta=0.1", "-p", "n=10",
            "-p", "K=5", "-p", "S=4", "-p", "lam=1"]
    text = _output(capsys, monkeypatch, argv)[1]
    assert "K=5, S=4, alpha=2, eta=0.1, lam=1, n=10, sigma=1, start_var=2" in text
    assert "5.0" not in text and "'K'" not in text


def _cheap_ids() -> list[str]:
    return sorted(t.id for t in verify.catalog.CATALOG.values()
                  if not verify.families.family(t.applications[0].family).expensive)


@settings(max_examples=examples(4, 30), database=None)
@given(st.sampled_from(_cheap_ids()))
@example("chen2024.theorem4_6.per_batch")  # an infinite bound: "Infinity" in the JSON
def test_check_without_parameters_is_the_runs_first_point(theorem_id):
    """`verify check ID` without -p checks the first grid point a run checks (its assumptions admitting it): the
    same parameters, verdict, bound and truth as `verify run --only ID`'s point there."""
    app = verify.catalog.CATALOG[theorem_id].applications[0]
    out = StringIO()
    with redirect_stdout(out):
        code = main(["check", theorem_id, "--json"])
    assert code in (0, 1, 3)
    got = json.loads(out.getvalue())
    result = next(r for r in run([theorem_id], falsify=0).results if r.theorem == theorem_id and r.family == app.family)
    first = result.points[0]
    assert got["params"] == {k: float(v) for k, v in first.params.items()}
    assert got["verdict"] == first.verdict.value
    assert _same(got["bound"], first.bound) and _same(got["truth"]["value"], first.truth.value)


def _same(shown: float | str, value: float) -> bool:
    """A JSON number (non-finite ones as "Infinity", "-Infinity", "NaN") equals `value` to 12 digits."""
    a, b = float(shown), float(value)
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def test_check_without_parameters_says_where_it_checks(capsys, monkeypatch):
    text = _output(capsys, monkeypatch, ["check", "chourasia2021.corollary1"])[1]
    assert "at the first point of its grid" in text and "verdict: HOLDS" in text


# ---- colour ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("env", "coloured"), [
    ({}, False), ({"FORCE_COLOR": "1"}, True), ({"FORCE_COLOR": "0"}, False),
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, False), ({"NO_COLOR": "", "FORCE_COLOR": "1"}, True)])
def test_verdicts_coloured_only_where_asked_when_piped(env, coloured, capsys, monkeypatch):
    """Piped (capsys: no terminal) output is plain unless FORCE_COLOR; NO_COLOR (non-empty) wins over it."""
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(VIOLATED_ARGV) == 1
    out = capsys.readouterr().out
    assert ("\x1b[31mVIOLATED\x1b[0m" in out) is coloured
    assert bool(ANSI.search(out)) is coloured


def test_each_verdict_has_its_colour(monkeypatch):
    from verify.cli import _coloured

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert _coloured("HOLDS") == "\x1b[32mHOLDS\x1b[0m"
    assert _coloured("HOLDS (vacuous)") == "\x1b[32mHOLDS (vacuous)\x1b[0m"
    assert _coloured("VIOLATED") == "\x1b[31mVIOLATED\x1b[0m"
    assert _coloured("INCONCLUSIVE") == "\x1b[33mINCONCLUSIVE\x1b[0m"
    assert _coloured("ERROR") == "ERROR"


def _on_a_terminal(argv: list[str], env: dict[str, str]) -> str:
    """stdout of `verify ARGV` run on a pseudo-terminal."""
    leader, follower = pty.openpty()
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    proc = subprocess.Popen([sys.executable, "-m", "verify.cli", *argv], stdout=follower, stderr=subprocess.DEVNULL,
                            env={**clean, "PYTHONPATH": str(ROOT), **env}, cwd=ROOT)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process ended
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode()


def test_verdicts_coloured_on_a_terminal_unless_no_color():
    argv = ["check", "chourasia2021.corollary1", "-p", "alpha=2", "-p", "sigma=1", "-p", "eta=0.1", "-p", "n=10",
            "-p", "K=5", "-p", "S=4", "-p", "lam=1"]
    assert "\x1b[32mHOLDS\x1b[0m" in _on_a_terminal(argv, {})
    plain = _on_a_terminal(argv, {"NO_COLOR": "1"})
    assert "HOLDS" in plain and not ANSI.search(plain)


# ---- JSON -----------------------------------------------------------------------------------------------------------

def _json(capsys, argv: list[str]):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_families_json_lists_the_registered_families(capsys):
    got = _json(capsys, ["families", "--json"])
    assert [f["name"] for f in got] == list(verify.families.FAMILIES)
    for entry in got:
        fam = verify.families.FAMILIES[entry["name"]]
        assert [(p["name"], p["integer"]) for p in entry["parameters"]] == [(p.name, p.integer)
                                                                           for p in fam.parameters]
        assert entry["quantities"] == [q.value for q in fam.truths]
        symbols = {p.name: p.symbol for p in fam.parameters}
        for p, declared in zip(entry["parameters"], fam.parameters, strict=True):
            assert sp.sympify(p["domain"], locals=symbols) == declared.domain


def test_conventions_json_lists_the_conventions(capsys):
    got = _json(capsys, ["conventions", "--json"])
    assert {c["name"]: (c["defines"], tuple(c["needs"])) for c in got} == {
        c.name: (dict(c.defines), c.needs) for c in CONVENTIONS.values()}


def test_certify_list_json_lists_the_claims(capsys):
    got = _json(capsys, ["certify", "--list", "--json"])
    assert [c["id"] for c in got] == list(CLAIMS)
    for entry in got:
        claim = CLAIMS[entry["id"]]
        symbols = {s.name: s for s in claim.lhs.free_symbols | claim.rhs.free_symbols}
        assert sp.sympify(entry["lhs"], locals=symbols) == claim.lhs
        assert sp.sympify(entry["rhs"], locals=symbols) == claim.rhs
        assert (entry["relation"], entry["expected"]) == (claim.relation, claim.expected)
        assert {k: tuple(v) for k, v in entry["box"].items()} == dict(claim.box)


def test_run_json_to_stdout_is_the_results_document(capsys, tmp_path):
    """`run --json -`: stdout is the results document alone (the schema's, the same results as a file written by
    `--json PATH`), the table on stderr."""
    import jsonschema

    argv = ["run", "--only", CHEAP, "--falsify", "0", "--quiet"]
    assert main([*argv, "--json", "-"]) == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    schema = json.loads((ROOT / "verify" / "reporting" / "results.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert CHEAP in got.err and "checks in" in got.err
    assert main([*argv, "--json", str(tmp_path / "r.json")]) == 0
    capsys.readouterr()
    written = json.loads((tmp_path / "r.json").read_text())
    assert untimed(doc["results"]) == untimed(written["results"])
    assert {r["theorem"] for r in doc["results"]} == {t.id for t in verify.catalog.select([CHEAP])}
    assert not Path("-").exists()


def test_run_table_lists_each_result_once(capsys, monkeypatch):
    text = _output(capsys, monkeypatch, ["run", "--only", CHEAP, "--falsify", "0", "--quiet"])[1]
    for t in verify.catalog.select([CHEAP]):
        assert re.search(rf"^{re.escape(t.id)}$", text, re.M)
        for app in t.applications:
            assert re.search(rf"^  {re.escape(app.family)} +(HOLDS|VIOLATED|INCONCLUSIVE)", text, re.M)


def test_params_text_of_a_run_counterexample_is_typed_back(capsys, monkeypatch):
    """The counterexample `run` prints, typed back into `check -p`, is the same point (repr digits)."""
    text = _output(capsys, monkeypatch, ["run", "--only", "chourasia2021.theorem3.cor1_start", "--falsify", "0",
                                         "--quiet"], columns=1000)[1]
    shown = re.search(r"counterexample: (.*): bound", text).group(1)
    point = dict(part.split("=") for part in shown.split(", "))
    result = verify.check("chourasia2021.theorem3.cor1_start", **{k: float(v) for k, v in point.items()})
    assert result.verdict.value == "VIOLATED" and params_text(result.params) == shown



def test_python_dash_m_verify_is_the_command_line():
    """`python -m verify` runs the `verify` script's command line (it had no __main__: "cannot be directly
    executed")."""
    proc = subprocess.run([sys.executable, "-m", "verify", "conventions", "--json"], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [c["name"] for c in json.loads(proc.stdout)] == list(CONVENTIONS)
