"""A paper as a catalog (issue 48): TOML paper files and modules of THEOREMS join the catalog, every command takes
them, and a bad file is one line naming the file, the theorem and the key (exit 2). Verdicts of generated papers are
known independently: a bound c * F where the test proves F equal to the true divergence by mpmath quadrature of the
Rényi integral (c > 1 HOLDS, c < 1 VIOLATED)."""

from __future__ import annotations

import importlib.util
import io
import itertools
import json
import shutil
import sys
import types
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples

import verify.catalog as catalog
import verify.families as families
from verify.catalog import paper_file
from verify.cli import main
from verify.runner import run

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "paper"
_KEYS = itertools.count()


@contextmanager
def restored():
    """The catalog, the user's papers, the families and what paper_file loaded, as they were (in place: other modules
    hold these objects)."""
    saved = [(d, dict(d)) for d in (catalog.CATALOG, catalog.USER_PAPERS, families.FAMILIES)]
    loaded = list(paper_file._LOADED)
    try:
        yield
    finally:
        for d, copy in saved:
            d.clear()
            d.update(copy)
        paper_file._LOADED[:] = loaded


@pytest.fixture(autouse=True)
def clean_catalog():
    with restored():
        yield


def _new_key() -> str:
    return f"gen{next(_KEYS)}"


# --- independent references: the Rényi divergence by quadrature of its integral, 30 digits ---

def _renyi_by_quadrature(p, q, alpha: float) -> mpmath.mpf:
    """R_alpha(P || Q) = log(int p^alpha q^(1-alpha)) / (alpha - 1) for densities on the real line."""
    with mpmath.workdps(30):
        alpha = mpmath.mpf(alpha)
        integral = mpmath.quad(lambda x: p(x) ** alpha * q(x) ** (1 - alpha), [-mpmath.inf, -1, 0, 1, 2, mpmath.inf])
        return mpmath.log(integral) / (alpha - 1)


def _gaussian(mu: float, sigma: float):
    return lambda x: mpmath.npdf(x, mu, sigma)


def _laplace(mu: float, b: float):
    return lambda x: mpmath.exp(-abs(x - mu) / b) / (2 * b)


GAUSS = {"family": "sampled_gaussian", "where": '{ q = "1" }', "scale": "sigma",
         "sympy": "alpha/(2*sigma**2)", "latex": r"\frac{\alpha}{2\sigma^2}",
         "formula": lambda a, s: mpmath.mpf(a) / (2 * mpmath.mpf(s) ** 2),
         "reference": lambda a, s: _renyi_by_quadrature(_gaussian(0, s), _gaussian(1, s), a)}
LAPLACE = {"family": "laplace_mechanism", "where": "{}", "scale": "b",
           "sympy": "log(alpha/(2*alpha - 1)*exp((alpha - 1)/b) + (alpha - 1)/(2*alpha - 1)*exp(-alpha/b))/(alpha - 1)",
           "latex": r"\frac{1}{\alpha - 1}\log\left(\frac{\alpha}{2\alpha - 1} e^{(\alpha - 1)/b}"
                    r" + \frac{\alpha - 1}{2\alpha - 1} e^{-\alpha/b}\right)",
           "formula": lambda a, b: mpmath.log(mpmath.mpf(a) / (2 * a - 1) * mpmath.exp(mpmath.mpf(a - 1) / b)
                                              + mpmath.mpf(a - 1) / (2 * a - 1) * mpmath.exp(-mpmath.mpf(a) / b))
           / (a - 1),
           "reference": lambda a, b: _renyi_by_quadrature(_laplace(0, b), _laplace(1, b), a)}
# c as SymPy text and as LaTeX, its value, and the verdict c * truth earns (far from 1: every grid point decides)
FACTORS = [("1/2", r"\frac{1}{2}", 0.5), ("4/5", r"\frac{4}{5}", 0.8), ("5/4", r"\frac{5}{4}", 1.25),
           ("2", "2", 2.0)]


def _paper(key: str, theorems: str, family_plugin: bool = True) -> str:
    head = f'[paper]\nkey = "{key}"\ntitle = "A generated paper"\nreference = "tests"\n\n'
    plugin = f'[[family]]\nplugin = "{EXAMPLE / "my_families.py"}"\n\n' if family_plugin else ""
    return head + plugin + theorems


@settings(max_examples=examples(6, 40), deadline=None)
@given(fam=st.sampled_from([GAUSS, LAPLACE]), factor=st.sampled_from(FACTORS), latex=st.booleans(),
       side=st.sampled_from(["upper", "lower"]),
       alphas=st.lists(st.sampled_from([1.5, 2.0, 3.0, 8.0]), min_size=1, max_size=2, unique=True),
       scales=st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=1, max_size=2, unique=True))
def test_generated_papers_get_the_verdicts_known_independently(tmp_path_factory, fam, factor, latex, side, alphas,
                                                               scales):
    text, tex, c = factor
    for a, s in itertools.product(alphas, scales):  # the formula is the divergence: quadrature of its integral
        assert fam["formula"](a, s) == pytest.approx(float(fam["reference"](a, s)), rel=1e-12)
    expect = "HOLDS" if (c > 1) == (side == "upper") else "VIOLATED"
    bound = f"bound = '{tex} {fam['latex']}'" if latex else f'sympy = "{text}*({fam["sympy"]})"'
    key = _new_key()
    path = tmp_path_factory.mktemp("paper") / f"{key}.verify.toml"
    path.write_text(_paper(key, f'[[theorem]]\nid = "claim"\nresult = "Theorem 1"\n{bound}\n'
                                f'side = "{side}"\nfamily = "{fam["family"]}"\nwhere = {fam["where"]}\n'
                                f'grid = {{ alpha = {alphas}, {fam["scale"]} = {scales} }}\nexpect = "{expect}"\n'))
    with restored():
        paper = paper_file.load_paper_file(path)
        assert [t.id for t in paper.theorems] == [f"{key}.claim"]
        (result,) = run([key], falsify=0).results
        assert result.verdict.value == expect and result.as_expected
        assert len(result.points) == len(alphas) * len(scales) and not result.errors
        for p in result.points:  # each point's truth is the independent value
            ref = fam["reference"](p.params["alpha"], p.params[fam["scale"]])
            assert p.truth.value == pytest.approx(float(ref), rel=1e-9)


# --- malformed files: one line naming the file, the theorem (or table) and the key; exit 2 ---

BASE = {
    "paper": {"key": '"badpaper"', "title": '"A paper"', "reference": '"ref"'},
    "theorem": {"id": '"thm1"', "result": '"Theorem 1"', "sympy": '"alpha/(2*sigma**2)"',
                "family": '"sampled_gaussian"', "quantity": '"renyi"', "side": '"upper"', "where": '{ q = "1" }',
                "assume": '["sigma > 0"]', "grid": "{ alpha = [2, 4], sigma = [1.0] }", "expect": '"HOLDS"',
                "note": '"n"', "variant": '"printed"'},
}


def _render(tables: dict, extra: str = "") -> str:
    out = ["[paper]", *(f"{k} = {v}" for k, v in tables["paper"].items()), "", "[[theorem]]",
           *(f"{k} = {v}" for k, v in tables["theorem"].items())]
    return "\n".join(out) + "\n" + extra


def _fails_in_one_line(path: Path, capsys, *parts: str, command: str = "list") -> str:
    args = [command, "--paper", str(path)] + (["--falsify", "0"] if command == "run" else [])
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for part in (str(path), *parts):
        assert part in err, (part, err)
    return err


def test_the_base_file_is_valid(tmp_path, capsys):
    path = tmp_path / "base.toml"
    path.write_text(_render(BASE))
    assert main(["list", "--paper", str(path)]) == 0
    assert "badpaper.thm1" in capsys.readouterr().out


@pytest.mark.parametrize(("table", "key"), [("paper", "key"), ("paper", "title"), *(
    ("theorem", k) for k in ("id", "result", "family", "grid", "expect"))])
def test_each_required_key_missing(tmp_path, capsys, table, key):
    tables = {t: dict(v) for t, v in BASE.items()}
    del tables[table][key]
    path = tmp_path / "p.toml"
    path.write_text(_render(tables))
    where = "[paper]" if table == "paper" else ("theorem #1" if key == "id" else "theorem 'thm1'")
    _fails_in_one_line(path, capsys, where, f"key '{key}'", "missing")


# wrong values per key: (key, value, a part of the message)
WRONG = [
    ("paper", "key", "3", "must be a non-empty string"), ("paper", "key", '"Bad-Key"', "[a-z][a-z0-9_]*"),
    ("paper", "key", '"chourasia2021"', "built-in"), ("paper", "title", "[]", "non-empty string"),
    ("paper", "refrence", '"x"', "did you mean 'reference'"),
    ("theorem", "id", '"Thm 1"', "[a-z0-9_.]+"), ("theorem", "family", '"noisy_gd_quadratc"', "did you mean"),
    ("theorem", "quantity", '"renyii"', "did you mean 'renyi'"), ("theorem", "side", '"uper"', "did you mean"),
    ("theorem", "expect", '"HOLD"', "did you mean 'HOLDS'"), ("theorem", "variant", '"typo"', "not one of"),
    ("theorem", "sympy", '"alpha/(2*sigma**2"', "syntax"), ("theorem", "sympy", '"alpha*x"', "x"),
    ("theorem", "sympy", "1", "string"), ("theorem", "assume", '["alpha"]', "condition"),
    ("theorem", "assume", "3", "array of strings"), ("theorem", "where", "3", "table"),
    ("theorem", "where", '{ q = "renyi(beta=2)" }', "where.q"), ("theorem", "where", '{ R = "1/0" }', "where.R"),
    ("theorem", "grid", '"x"', "table"), ("theorem", "grid", "{ alpha = [2] }", "no values for sigma"),
    ("theorem", "grid", "{ alpha = [0.5], sigma = [1] }", "outside"),
    ("theorem", "grid", "{ alpha = [2], sigma = [1], sigmaa = [1] }", "did you mean 'sigma'"),
    ("theorem", "grid", "{ alpha = [], sigma = [1] }", "non-empty array"),
    ("theorem", "grid", '{ alpha = ["2"], sigma = [1] }', "numbers"),
    ("theorem", "grid", "{ alpha = [2], sigma = [1], delta = [0.1] }", "not used"),
    ("theorem", "bund", '"x"', "did you mean 'bound'"),
]


@pytest.mark.parametrize(("table", "key", "value", "message"), WRONG)
def test_each_wrong_value_is_one_line_naming_file_theorem_and_key(tmp_path, capsys, table, key, value, message):
    tables = {t: dict(v) for t, v in BASE.items()}
    tables[table][key] = value
    path = tmp_path / "p.toml"
    path.write_text(_render(tables))
    where = "[paper]" if table == "paper" else "theorem '"
    _fails_in_one_line(path, capsys, where, f"key '{key}", message)


@settings(max_examples=examples(25, 200), deadline=None)
@given(key=st.sampled_from(sorted(BASE["theorem"])),
       value=st.one_of(st.integers(-3, 3).map(str), st.sampled_from(["true", "[]", "[1, 2]", "{}", "{ a = 1 }",
                                                                       '"?"', '"1/("', '"zzz"', "2.5", '""'])))
def test_generated_wrong_types_never_crash(tmp_path_factory, key, value):
    """Any theorem key given a value of the wrong type or an unknown name: exit 2 and one line naming the file, the
    theorem and the key (never a traceback or exit 4); or, where the value happens to be valid, exit 0."""
    tables = {t: dict(v) for t, v in BASE.items()}
    tables["theorem"][key] = value
    path = tmp_path_factory.mktemp("gen") / "p.toml"
    path.write_text(_render(tables))
    with restored(), redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()) as stderr:
        code = main(["list", "--paper", str(path)])
    err = stderr.getvalue()
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and str(path) in err and "key '" in err and "theorem" in err, err


def test_bad_toml_duplicate_ids_and_a_taken_key(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[paper\nkey = "x"\n')
    _fails_in_one_line(bad, capsys, "not valid TOML", "line 1")
    twice = tmp_path / "twice.toml"
    twice.write_text(_render(BASE, "\n[[theorem]]\n" + "\n".join(f"{k} = {v}" for k, v in BASE["theorem"].items())))
    _fails_in_one_line(twice, capsys, "theorem 'thm1'", "key 'id'", "declared twice", command="run")
    neither = {t: dict(v) for t, v in BASE.items()}
    del neither["theorem"]["sympy"]
    (tmp_path / "neither.toml").write_text(_render(neither))
    _fails_in_one_line(tmp_path / "neither.toml", capsys, "key 'bound'", "exactly one of bound")
    both = {t: dict(v) for t, v in BASE.items()}
    both["theorem"]["bound"] = "'1'"
    (tmp_path / "both.toml").write_text(_render(both))
    _fails_in_one_line(tmp_path / "both.toml", capsys, "key 'bound'", "exactly one of bound")
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00")
    _fails_in_one_line(tmp_path / "binary.toml", capsys, "not UTF-8")
    _fails_in_one_line(tmp_path / "absent.toml", capsys, "cannot be read")
    other = tmp_path / "other" / "p.toml"  # the same key from another file
    other.parent.mkdir()
    good = tmp_path / "good.toml"
    good.write_text(_render(BASE))
    shutil.copy(good, other)
    code = main(["list", "--paper", str(good), "--paper", str(other)])
    err = capsys.readouterr().err
    assert code == 2 and "paper key 'badpaper' is taken by" in err and str(other) in err


def test_a_missing_plugin_of_a_family_table(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text(_render(BASE).replace("[[theorem]]", '[[family]]\nplugin = "nowhere.py"\n\n[[theorem]]', 1))
    _fails_in_one_line(path, capsys, "[[family]] #1", "key 'plugin'", "cannot be imported")


# --- the example paper, end to end ---

def test_the_example_laplace_family_is_the_quadrature():
    sys.path.insert(0, str(EXAMPLE))
    try:
        import my_families
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.modules.pop("my_families", None)
    for a, b in [(1.5, 4.0), (2.0, 1.0), (10.0, 0.5)]:
        got = my_families.LAPLACE.truth("renyi", alpha=a, b=b).value
        assert got == pytest.approx(float(LAPLACE["reference"](a, b)), rel=1e-12)


def test_the_example_paper_list_run_check_and_exit_codes(tmp_path, capsys, monkeypatch):
    paper = str(EXAMPLE / "draft.verify.toml")
    assert main(["list", "--paper", paper]) == 0
    listed = capsys.readouterr().out
    ids = ["draft2026.thm3", "draft2026.cor4", "draft2026.prop5", "draft2026.prop5.halved", "draft2026.lemma6",
           "draft2026.thm8", "draft2026.thm8.quarter"]
    assert [line for line in listed.splitlines() if line.startswith("draft2026.")] == ids
    out = tmp_path / "results.json"
    assert main(["run", "--paper", paper, "--falsify", "5", "--workers", "2", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    assert [r["id"] for r in data["results"]] == ids  # only the paper's theorems
    verdicts = {r["id"]: r["verdict"] for r in data["results"]}
    assert [k for k, v in verdicts.items() if v == "VIOLATED"] == ["draft2026.cor4", "draft2026.prop5.halved",
                                                                   "draft2026.thm8.quarter"]
    capsys.readouterr()
    # the misprint at its certified counterexample: Laplace R_1.5 at b = 4 by quadrature is above alpha/(4 b^2)
    assert main(["check", "draft2026.thm8.quarter", "--paper", paper, "-p", "alpha=1.5", "-p", "b=4"]) == 1
    assert float(LAPLACE["reference"](1.5, 4.0)) > 1.5 / 64
    assert "VIOLATED" in capsys.readouterr().out
    # --only selects among the built-in and the paper's theorems; a wrong expectation is exit 1
    assert main(["run", "--paper", paper, "--only", "draft2026.lemma6", "abadi2016.lemma3", "--falsify", "0",
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "draft2026.lemma6" in printed and "abadi2016.lemma3.leading_term" in printed and "thm3" not in printed
    flipped = tmp_path / "flipped.verify.toml"
    flipped.write_text((EXAMPLE / "draft.verify.toml").read_text().replace(
        'plugin = "my_families.py"', f'plugin = "{EXAMPLE / "my_families.py"}"').replace(
        'grid = { sigma = [0.5, 1.0, 4.0] }\nexpect = "HOLDS"', 'grid = { sigma = [0.5, 1.0, 4.0] }\nexpect = '
        '"VIOLATED"'))
    with restored():  # the same key from another file: a fresh catalog
        catalog.USER_PAPERS.clear()
        assert main(["run", "--paper", str(flipped), "--only", "draft2026.lemma6", "--falsify", "0", "--quiet"]) == 1


def test_the_example_paper_report(tmp_path, capsys):
    out = tmp_path / "report"
    code = main(["report", "--paper", str(EXAMPLE / "draft.verify.toml"), "--only", "draft2026.thm8",
                 "draft2026.lemma6", "--falsify", "0", "--out", str(out), "--quiet"])
    assert code == 0, capsys.readouterr()
    md = (out / "report.md").read_text()
    assert "Noisy gradient descent, privately" in md and "`draft2026.thm8.quarter`" in md
    assert "later literature" not in md and "Theorem 8, remark — Noisy gradient descent" in md
    assert "alpha=1.5, b=4" in md  # the certified counterexample of the misprint
    html = (out / "index.html").read_text()
    assert "draft2026.lemma6" in html and "later literature" not in html
    assert (out / "plots" / "draft2026.thm8.quarter.svg").is_file()
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(catalog.__file__).parents[1] / "reporting" / "results.schema.json").read_text())
    jsonschema.validate(json.loads((out / "results.json").read_text()), schema)


# --- the Python module form (--plugin), and the catalog's refusals ---

MODULE = '''
import sympy as sp
from verify.model import Application, Direction, Quantity, Source, Theorem, Variant
from verify.results import Verdict
from verify.symbols import alpha, sigma

PAPER = {{"title": "A module paper", "reference": "tests"}}
THEOREMS = [Theorem(id="{key}.gauss", title="Gaussian mechanism", source=Source("", "A module paper", "Lemma 1"),
                    variant=Variant.PRINTED, direction=Direction.UPPER, quantity=Quantity.RENYI,
                    bound={factor} * alpha / (2 * sigma**2), assumptions=(), requires=frozenset(),
                    applications=(Application("sampled_gaussian", Verdict.{expect},
                                              {{"alpha": (2.0, 8.0), "sigma": (1.0,)}}, {{"q": sp.Integer(1)}}),))]
'''


def test_a_module_of_theorems_through_plugin(tmp_path, capsys):
    mod = tmp_path / "modpaper.py"
    mod.write_text(MODULE.format(key="modpaper", factor="sp.Rational(1, 2)", expect="VIOLATED"))
    assert main(["list", "--plugin", str(mod)]) == 0
    assert "modpaper.gauss" in capsys.readouterr().out
    assert main(["run", "--plugin", str(mod), "--falsify", "0", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "modpaper.gauss" in printed and "VIOLATED" in printed and "chourasia2021" not in printed
    built_in = tmp_path / "clash.py"
    built_in.write_text(MODULE.format(key="chourasia2021", factor="1", expect="HOLDS"))
    assert main(["list", "--plugin", str(built_in)]) == 2
    assert "built-in paper's" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    assert main(["list", "--plugin", str(empty)]) == 2
    assert "declares no families and no THEOREMS" in capsys.readouterr().err


def test_add_paper_refuses_foreign_ids_and_replaces_itself():
    t = catalog.theorem("abadi2016.lemma3.leading_term")
    with pytest.raises(catalog.ParameterError, match="does not start with the paper key"):
        catalog.add_paper(catalog.Paper("mine", "t", (t,), origin="here"))
    import dataclasses

    mine = dataclasses.replace(t, id="mine.a")
    catalog.add_paper(catalog.Paper("mine", "t", (mine,), origin="here"))
    catalog.add_paper(catalog.Paper("mine", "t", (dataclasses.replace(t, id="mine.b"),), origin="here"))
    assert "mine.b" in catalog.CATALOG and "mine.a" not in catalog.CATALOG
    assert [x.id for x in catalog.select(["mine"])] == ["mine.b"]
    with pytest.raises(catalog.ParameterError, match="taken by here"):
        catalog.add_paper(catalog.Paper("mine", "t", (mine,), origin="elsewhere"))


def test_dask_workers_load_the_paper(tmp_path, capsys):
    pytest.importorskip("distributed")
    path = tmp_path / "small.verify.toml"
    path.write_text(_paper("daskpaper", f'[[theorem]]\nid = "lap"\nresult = "T1"\nsympy = "({LAPLACE["sympy"]})/2"\n'
                                       'family = "laplace_mechanism"\ngrid = { alpha = [2], b = [1] }\n'
                                       'expect = "VIOLATED"\n\n[[theorem]]\nid = "gauss"\nresult = "T2"\n'
                                       'sympy = "alpha/sigma**2"\nfamily = "sampled_gaussian"\nwhere = { q = "1" }\n'
                                       'grid = { alpha = [2], sigma = [1] }\nexpect = "HOLDS"\n'))
    out = tmp_path / "r.json"
    paper_file._LOADED.clear()  # what earlier tests of this process loaded is theirs (the fixture restores it)
    code = main(["run", "--paper", str(path), "--executor", "dask", "--workers", "1", "--falsify", "0", "--quiet",
                 "--json", str(out)])
    assert code == 0, capsys.readouterr()
    assert {r["id"]: r["verdict"] for r in json.loads(out.read_text())["results"]} == {
        "daskpaper.lap": "VIOLATED", "daskpaper.gauss": "HOLDS"}


def test_the_example_noxfile_sessions_run_verify_on_the_paper(tmp_path, monkeypatch, capsys):
    """The sessions, with a stand-in for nox (not a test dependency): what they install and run; the report session's
    command then runs here (a cheap subset of it) on a copy of the example."""
    fake = types.ModuleType("nox")
    fake.options, fake.session, fake.Session = types.SimpleNamespace(), (lambda fn: fn), object
    monkeypatch.setitem(sys.modules, "nox", fake)
    spec = importlib.util.spec_from_file_location("example_noxfile", EXAMPLE / "noxfile.py")
    noxfile = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(noxfile)

    class Session:
        posargs: list[str] = []

        def __init__(self) -> None:
            self.installed, self.ran = [], []

        def install(self, *args: str) -> None:
            self.installed.append(args)

        def run(self, *args: str) -> None:
            self.ran.append(args)

    report, tests = Session(), Session()
    noxfile.paper(report)
    noxfile.paper_tests(tests)
    assert report.installed == [("dp-verify[report]",)] and tests.installed[0][0] == "dp-verify"
    (command,) = report.ran
    assert command[:4] == ("verify", "report", "--paper", "draft.verify.toml")
    assert tests.ran == [("pytest", "draft.verify.toml", "--verify-falsify", "100")]
    for name in ("draft.verify.toml", "my_families.py"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    assert main([*command[1:], "--only", "draft2026.lemma6", "--falsify", "0", "--quiet"]) == 0, capsys.readouterr()
    assert (tmp_path / "reports" / "draft" / "report.md").is_file()
