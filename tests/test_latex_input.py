r"""LaTeX input (issue 48): each notation a paper uses, read against an expression written by hand and compared in
mpmath at random points; generated expression trees rendered to LaTeX by SymPy and by a small renderer of our own
(implicit products, \left( \right), \cdot, \exp against e^{}) read back to the same values; bad, ambiguous and
hostile text a ParameterError (exit 2 at the command line), never another exception; and the command line end to
end."""

from __future__ import annotations

import json
import random

import mpmath
import pytest
import sympy as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

from verify.cli import main
from verify.errors import ParameterError
from verify.latex_input import latex_to_text, parse_latex_expression, reading
from verify.model import evaluate
from verify.testing.falsify import user_theorem

NAMES = ("a b x y n K T eps eps0 sigma sigma_0 eta eta_t L_max lam delta p alpha gamma steps q S").split()
SYMS = {n: sp.Symbol(n, positive=True) for n in NAMES}
INTEGER = {"n", "K", "T"}


def _point(rng: random.Random) -> dict[str, float]:
    """Values of every symbol: integers 1..8 for n, K, T, p in (0, 1), the others in (0.05, 3)."""
    return {n: (rng.randint(1, 8) if n in INTEGER else rng.uniform(0.02, 0.98) if n == "p" else rng.uniform(0.05, 3))
            for n in NAMES}


def _ncdf(x):
    return (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2


M = mpmath
NOTATION = [  # (LaTeX, the value it means, written by hand in mpmath)
    (r"e^{x} + e", lambda v: M.exp(v["x"]) + M.e),
    (r"\mathrm{e}^x - e^\epsilon", lambda v: M.exp(v["x"]) - M.exp(v["eps"])),
    (r"\exp(x) + \exp\left(\frac{y}{2}\right) + \exp x", lambda v: 2 * M.exp(v["x"]) + M.exp(v["y"] / 2)),
    (r"\log(x) + \ln y + \log\frac{1}{\delta}", lambda v: M.log(v["x"]) + M.log(v["y"]) - M.log(v["delta"])),
    (r"\log{\left(x \right)}^{2}", lambda v: M.log(v["x"]) ** 2),
    (r"\log n K + \log n \cdot K", lambda v: M.log(v["n"] * v["K"]) + M.log(v["n"]) * v["K"]),
    (r"\sqrt{x} + \sqrt[3]{y} + \sqrt2", lambda v: M.sqrt(v["x"]) + M.cbrt(v["y"]) + M.sqrt(2)),
    (r"\min\{a, b\} + \max(a,b) + \min\left\{x, y, 1\right\} + \operatorname*{max}(x, 2)",
     lambda v: min(v["a"], v["b"]) + max(v["a"], v["b"]) + min(v["x"], v["y"], 1) + max(v["x"], 2)),
    (r"\Phi(x) + \Phi\left(-y\right)", lambda v: _ncdf(v["x"]) + _ncdf(-v["y"])),
    (r"\Phi^{-1}(p) + \Phi^{-1}\left(1 - p\right)", lambda v: 0 * v["p"]),  # the quantile is odd about 1/2
    (r"\Phi^{-1}(p)", lambda v: M.sqrt(2) * M.erfinv(2 * M.mpf(v["p"]) - 1)),
    (r"\operatorname{erfc}(x) + \mathrm{erfc}(y) + \erf(a) + \text{erf}(b) + \tanh(x)",
     lambda v: M.erfc(v["x"]) + M.erfc(v["y"]) + M.erf(v["a"]) + M.erf(v["b"]) + M.tanh(v["x"])),
    (r"\sigma_0 + \eta_{t} + L_{\max} + L_\max", lambda v: v["sigma_0"] + v["eta_t"] + 2 * v["L_max"]),
    (r"\gamma\alpha + \mathrm{steps} + \text{lam}", lambda v: v["gamma"] * v["alpha"] + v["steps"] + v["lam"]),
    (r"\varepsilon + \epsilon_0 + \epsilon_{0}", lambda v: v["eps"] + 2 * v["eps0"]),
    (r"\lambda\eta", lambda v: v["lam"] * v["eta"]),
    (r"\left( x + y \right) \cdot a \times b", lambda v: (v["x"] + v["y"]) * v["a"] * v["b"]),
    (r"\frac{a}{b} + \tfrac{x}{y} + \dfrac{1}{2} + \frac12 x + \frac a2",
     lambda v: v["a"] / v["b"] + v["x"] / v["y"] + M.mpf(1) / 2 + v["x"] / 2 + v["a"] / 2),
    (r"x^{2} + 2^{x} + x^y + a^{-1} - x^{\frac{1}{2}}",
     lambda v: v["x"] ** 2 + 2 ** M.mpf(v["x"]) + M.mpf(v["x"]) ** v["y"] + 1 / M.mpf(v["a"]) - M.sqrt(v["x"])),
    (r"\lceil x \rceil + \lfloor y \rfloor + \left\lceil \frac{T}{2} \right\rceil",
     lambda v: M.ceil(v["x"]) + M.floor(v["y"]) + M.ceil(M.mpf(v["T"]) / 2)),
    (r"\sum_{k=1}^{T} \frac{1}{k^2}", lambda v: M.fsum(M.mpf(1) / k**2 for k in range(1, v["T"] + 1))),
    (r"\sum_{j=1}^T \eta j + 1", lambda v: M.fsum(v["eta"] * j for j in range(1, v["T"] + 1)) + 1),
    (r"\min_{1 \le j \le K} (j - 3)^2 \cdot a + a", lambda v: min((j - 3) ** 2 * v["a"] for j in range(1, v["K"] + 1))
     + v["a"]),
    (r"\min_{2 \leq t \leq K + 1} \frac{\eta}{t} + \sum_{k=1}^{K} \min_{1 \le j \le k} j k",
     lambda v: min(v["eta"] / t for t in range(2, v["K"] + 2))
     + sum(min(j * k for j in range(1, k + 1)) for k in range(1, v["K"] + 1))),
    # as printed in papers: amplification by subsampling, noisy GD's contracting bound
    (r"q^2 \binom{\alpha}{2} \min\left\{4(e^{\epsilon_0} - 1), 2e^{\epsilon_0}\right\}",
     lambda v: v["q"] ** 2 * v["alpha"] * (v["alpha"] - 1) / 2 * min(4 * (M.exp(v["eps0"]) - 1), 2 * M.exp(v["eps0"]))),
    (r"\frac{2 \alpha S^2}{n^2 \sigma^2 \lambda}\left(1 - e^{-\lambda\eta K/2}\right)",
     lambda v: 2 * v["alpha"] * v["S"] ** 2 / (v["n"] ** 2 * v["sigma"] ** 2 * v["lam"])
     * (1 - M.exp(-v["lam"] * v["eta"] * v["K"] / 2))),
    (r"T\epsilon(e^\epsilon - 1)", lambda v: v["T"] * v["eps"] * (M.exp(v["eps"]) - 1)),
    (r"2\sigma^2 + 2 \sigma^{2}", lambda v: 4 * v["sigma"] ** 2),
    (r"a\,b\;x\!y + a\quad b", lambda v: v["a"] * v["b"] * v["x"] * v["y"] + v["a"] * v["b"]),
    (r"nK + xe^{y} + x L_{\max}^{2}", lambda v: v["n"] * v["K"] + v["x"] * M.exp(v["y"]) + v["x"] * v["L_max"] ** 2),
    (r"\lvert x - y \rvert + \left| a - b \right|", lambda v: abs(v["x"] - v["y"]) + abs(v["a"] - v["b"])),
    (r"\binom{n}{2} + \pi x", lambda v: M.binomial(v["n"], 2) + M.pi * v["x"]),
    (r"$\frac{\alpha S}{n}$.".replace("S", "x"), lambda v: v["alpha"] * v["x"] / v["n"]),
    (r"\frac{\alpha \eta K}{4 n^2 \sigma^2}", lambda v: v["alpha"] * v["eta"] * v["K"] / (4 * v["n"] ** 2
                                                                                             * v["sigma"] ** 2)),
    # deep but legitimate nesting (each level read once: linear work)
    (r"\frac{1}{" * 24 + "x" + "}" * 24, lambda v: v["x"]),
    (r"\tanh^{" * 12 + "2" + "}(x)" * 12, lambda v: _tanh_tower(v["x"], 12)),
    # an implicit product binds tighter than /: a / b x is a/(b x)
    (r"-x^2 + -(y) - +a / b x", lambda v: -v["x"] ** 2 - v["y"] - v["a"] / (v["b"] * v["x"])),
]


def _tanh_tower(x, depth: int):
    """tanh(x)^(tanh(x)^(... tanh(x)^2)): \tanh^{p}(x) is tanh(x)**p."""
    power = 2
    for _ in range(depth):
        power = M.tanh(x) ** power
    return power


@pytest.mark.parametrize(("tex", "meaning"), NOTATION, ids=[t[:60] for t, _ in NOTATION])
def test_each_notation_means_what_the_paper_means(tex, meaning):
    expr = parse_latex_expression(tex, SYMS)
    rng = random.Random(tex)
    for _ in range(3):
        v = _point(rng)
        with mpmath.workdps(30):
            ref = meaning({k: x if isinstance(x, int) else mpmath.mpf(x) for k, x in v.items()})
            got = evaluate(expr, {s.name: v[s.name] for s in expr.free_symbols})
            assert abs(got - ref) <= 1e-12 * (1 + abs(ref)), (tex, v, got, ref)


CONDITIONS = [  # (LaTeX, the condition it means, in Python)
    (r"0 < \eta < 1, K \ge 2", lambda v: 0 < v["eta"] < 1 and v["K"] >= 2),
    (r"\eta\lambda \le 1 \wedge x > y", lambda v: v["eta"] * v["lam"] <= 1 and v["x"] > v["y"]),
    (r"a < b \text{ and } x \geq y", lambda v: v["a"] < v["b"] and v["x"] >= v["y"]),
    (r"a \leq b \land x < 1; y \geqslant a", lambda v: v["a"] <= v["b"] and v["x"] < 1 and v["y"] >= v["a"]),
    (r"a\leqslant b,\quad x > \frac{y}{2}.", lambda v: v["a"] <= v["b"] and v["x"] > v["y"] / 2),
]


@pytest.mark.parametrize(("tex", "meaning"), CONDITIONS, ids=[t for t, _ in CONDITIONS])
def test_each_condition_means_what_the_paper_means(tex, meaning):
    cond = parse_latex_expression(tex, SYMS, condition=True, what="--assume")
    rng = random.Random(tex)
    seen = set()
    for _ in range(40):
        v = _point(rng)
        truth = meaning(v)
        seen.add(truth)
        assert bool(cond.subs({SYMS[k]: sp.Float(x, 30) for k, x in v.items()})) is truth, (tex, v)
    assert seen == {True, False}  # the points tell the readings apart


@pytest.mark.parametrize(("tex", "symbols", "message"), [
    (r"\epsilon", ["eps0", "x"], r"\\epsilon is not a symbol of this bound \(read as epsilon or eps\) "
                                 r"\(did you mean 'eps0'\?\); known: eps0, x"),
    (r"f(x)", ["x"], r"f\(...\): f is neither a known symbol nor a function"),
    (r"eps", ["x"], "eps is not a symbol of this bound"),
    (r"2eps", ["x", "p"], "eps is not a symbol of this bound"),  # no s: not e*p*s
    (r"ab", ["a", "b", "ab"], "ab is ambiguous: it reads as ab or as a \\* b"),
    (r"e^{x}", ["e", "x"], "ambiguous.*Euler"),
    (r"\sigma_0", ["sigma_0", "sigma0"], "ambiguous: it reads as sigma_0 or sigma0"),
    (r"\pi x", ["pi", "x"], "the number pi and a symbol"),
    (r"\foo x", ["x"], r"the LaTeX command \\foo is not supported"),
    (r"\text{for all } x", ["x"], r"\\text\{...\} may hold a name"),
    (r"\frac{1}{", ["x"], "ends too early"),
    (r"x_{t+1}", ["x", "t"], "cannot read the LaTeX"),
    (r"x < 1", ["x"], "only allowed in conditions"),
    (r"\varepsilon(\delta) = x", ["x", "delta"], "paste the right-hand side of '=' only"),
    (r"x, 1", ["x"], "only allowed in conditions"),
    (r"\Phi^{2}(x)", ["x"], r"only \\Phi\^\{-1\}"),
    (r"x 2", ["x"], "the number 2 follows a factor"),
    (r"\frac{1}xx", ["x"], "one character"),
    (r"2^{2^{2^{100}}}", ["x"], "constant exponent"),
    (r"10^{10^{10}} x", ["x"], "constant exponent"),
    (r"(x + 1)^{100000}", ["x"], "constant exponent"),
    (r"(x + 1)^{1000}", ["x"], "degree"),
    (r"\sum_{x=1}^{3} x", ["x"], "already a symbol"),
    (r"\max_{1 \le t \le K} t", ["K"], "no maximum over a range"),
    (r"\min_{1 \le t \le K} \frac{1}{t} + t", ["K"], "t is not a symbol"),  # the index is the body's only
    ("{" * 300 + "x" + "}" * 300, ["x"], "nested too deeply"),
    ("x+" * 1500 + "x", ["x"], "longer than"),
    ("a" * 41, ["a"], "a run of 41 letters"),
    ("", ["x"], "empty"),
])
def test_bad_ambiguous_and_hostile_text_is_one_clear_error(tex, symbols, message):
    with pytest.raises(ParameterError, match=message) as err:
        parse_latex_expression(tex, {n: sp.Symbol(n) for n in symbols})
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(("tex", "message"), [
    (r"x", "not a condition"), (r"x = 1", "relation '=' is not allowed"), (r"x \ne 1", "not allowed"),
    (r"x < 1 \wedge", "ends too early"), (r"x < 1, \wedge", r"unexpected '\\wedge' at character 8 \(after 'x < 1,'\)"),
    (r"x < 1,\;2x", "not a condition"),
])
def test_bad_conditions_are_named(tex, message):
    with pytest.raises(ParameterError, match=message):
        parse_latex_expression(tex, {"x": sp.Symbol("x")}, condition=True)


FRAGMENTS = [r"\frac", "{", "}", "(", ")", "^", "_", "x", "y", "e", "2", "10", ".", r"\sigma", r"\left(", r"\right)",
             r"\sum_{k=1}^{T}", r"\sqrt", "[", "]", r"\max", r"\min", r"\{", r"\}", ",", "<", r"\le", "=", "-", "+",
             r"\cdot", r"\exp", r"\log", r"\Phi^{-1}", r"\Phi", r"\mathrm{e}", r"\text{and}", r"\text{x}", "$", "\\\\",
             "%", "99999999999999999999", " ", r"\foo", "&", r"\land", r"\lceil", r"\rceil", r"\lvert", "|", r"\,",
             r"\operatorname{erfc}", "k", r"\eta_{t}", "L_{\\max}", "^{2^{2^{99}}}", "\\", "'", "!", "\x00", "é"]


@settings(max_examples=examples(300, 3000), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.sampled_from(FRAGMENTS), max_size=30) | st.text(max_size=60).map(lambda t: [t]),
       condition=st.booleans())
def test_any_text_is_read_or_refused_in_one_line(parts, condition):
    symbols = {n: sp.Symbol(n, positive=True) for n in ("x", "y", "T", "sigma", "eta_t", "L_max")}
    try:
        out = parse_latex_expression("".join(parts), symbols, condition=condition)
    except ParameterError as err:
        assert str(err) and "\n" not in str(err)
        return
    assert out.free_symbols <= set(symbols.values()) | {sp.Symbol("k", integer=True)}
    str(reading(out))  # and it reads back


# ---- generated expressions: rendered by SymPy and by hand, read back -------------------------------------------

LEAVES = {"x": "x", "y": "y", "sigma": r"\sigma", "eta_t": r"\eta_{t}", "L_max": r"L_{\max}", "eps": r"\varepsilon"}
TREE_SYMS = {n: sp.Symbol(n, positive=True) for n in LEAVES}
UNARY = ("neg", "exp", "log", "sqrt")
BINARY = ("add", "sub", "mul", "div", "max", "min")

trees = st.recursive(
    st.sampled_from(sorted(LEAVES)).map(lambda n: ("sym", n)) | st.integers(1, 9).map(lambda k: ("num", k)),
    lambda inner: (st.tuples(st.sampled_from(UNARY), inner)
                   | st.tuples(st.sampled_from(BINARY), inner, inner)
                   | st.tuples(st.just("pow"), inner, st.sampled_from([2, 3, -1]))),
    max_leaves=8)


class _NotReal(Exception):
    pass


def _value(t, v):
    """The tree's value in mpmath (the independent reference); _NotReal where a step leaves the real numbers or a
    value is too large to compare."""
    kind = t[0]
    if kind == "sym":
        return mpmath.mpf(v[t[1]])
    if kind == "num":
        return mpmath.mpf(t[1])
    if kind == "pow":
        base = _value(t[1], v)
        if base == 0 and t[2] < 0:
            raise _NotReal
        out = base ** t[2]
    elif kind in UNARY:
        a = _value(t[1], v)
        if (kind == "log" and a <= 0) or (kind == "sqrt" and a < 0) or (kind == "exp" and a > 50):
            raise _NotReal
        out = {"neg": lambda: -a, "exp": lambda: mpmath.exp(a), "log": lambda: mpmath.log(a),
               "sqrt": lambda: mpmath.sqrt(a)}[kind]()
    else:
        a, b = _value(t[1], v), _value(t[2], v)
        if kind == "div" and b == 0:
            raise _NotReal
        out = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
               "max": lambda: max(a, b), "min": lambda: min(a, b)}[kind]()
    if abs(out) > 1e30:
        raise _NotReal
    return out


def _sympy(t):
    kind = t[0]
    if kind == "sym":
        return TREE_SYMS[t[1]]
    if kind == "num":
        return sp.Integer(t[1])
    if kind == "pow":
        return _sympy(t[1]) ** t[2]
    if kind in UNARY:
        a = _sympy(t[1])
        return {"neg": lambda: -a, "exp": lambda: sp.exp(a), "log": lambda: sp.log(a),
                "sqrt": lambda: sp.sqrt(a)}[kind]()
    a, b = _sympy(t[1]), _sympy(t[2])
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
            "max": lambda: sp.Max(a, b), "min": lambda: sp.Min(a, b)}[kind]()


def _precedence(t) -> int:
    """1 a sum or a negation, 2 a product or quotient, 3 an atom (safe as a factor, a base or after a function)."""
    return {"add": 1, "sub": 1, "neg": 1, "mul": 2, "div": 2}.get(t[0], 3)


def _render(t, draw) -> str:
    """Our own LaTeX for the tree, in styles drawn by hypothesis (independent of SymPy's printer)."""
    kind = t[0]

    def paren(x: str) -> str:
        return draw(st.sampled_from([f"({x})", rf"\left({x}\right)", rf"\left( {x} \right)"]))

    def sub(u, least: int) -> str:
        text = _render(u, draw)
        return text if _precedence(u) >= least else paren(text)

    if kind == "sym":
        return LEAVES[t[1]]
    if kind == "num":
        return str(t[1])
    if kind == "neg":
        return "-" + sub(t[1], 2)
    if kind == "add":
        return f"{sub(t[1], 1)} + {sub(t[2], 2)}"
    if kind == "sub":
        return f"{sub(t[1], 1)} - {sub(t[2], 2)}"
    if kind == "mul":
        left, right = sub(t[1], 2), sub(t[2], 3)
        style = draw(st.sampled_from([r" \cdot ", r" \times ", "*", "implicit", "implicit_space"]))
        if style.startswith("implicit") and not right[0].isdigit() and _precedence(t[1]) >= 2:
            gap = " " if style == "implicit_space" or (left[-1].isalpha() and "\\" in left.rsplit(" ", 1)[-1]) \
                else ""
            return f"{left}{gap}{right}"
        return left + (r" \cdot " if style.startswith("implicit") else style) + right
    if kind == "div":
        style = draw(st.sampled_from([r"\frac", r"\tfrac", r"\dfrac", "/"]))
        if style == "/":
            return f"{sub(t[1], 2)} / {sub(t[2], 3)}"
        return f"{style}{{{_render(t[1], draw)}}}{{{_render(t[2], draw)}}}"
    if kind == "pow":
        base = _render(t[1], draw) if t[1][0] in ("sym", "num") else paren(_render(t[1], draw))
        exponent = draw(st.sampled_from([f"^{{{t[2]}}}", f"^{t[2]}"])) if t[2] > 0 else f"^{{{t[2]}}}"
        return base + exponent
    if kind == "exp":
        inner = _render(t[1], draw)
        return draw(st.sampled_from([rf"\exp({inner})", rf"\exp\left({inner}\right)", f"e^{{{inner}}}",
                                     rf"\mathrm{{e}}^{{{inner}}}", rf"\exp{{{inner}}}"]))
    if kind == "log":
        inner = _render(t[1], draw)
        return draw(st.sampled_from([rf"\log({inner})", rf"\ln({inner})", rf"\ln\left({inner}\right)",
                                     rf"\log{{{inner}}}"]))
    if kind == "sqrt":
        inner = _render(t[1], draw)
        return draw(st.sampled_from([rf"\sqrt{{{inner}}}", rf"\sqrt[2]{{{inner}}}"]))
    a, b = _render(t[1], draw), _render(t[2], draw)
    cmd = rf"\{kind}"
    return draw(st.sampled_from([f"{cmd}({a}, {b})", rf"{cmd}\{{{a}, {b}\}}", rf"{cmd}\left\{{{a},{b}\right\}}",
                                 rf"\operatorname{{{kind}}}({a}, {b})"]))


def _read_back(tex: str, v: dict[str, float], ref) -> None:
    try:
        expr = parse_latex_expression(tex, TREE_SYMS)
    except ParameterError as err:  # a legitimate refusal of a generated tree: a degree above parsing's cap
        assume("degree" not in str(err))
        raise
    with mpmath.workdps(30):
        got = evaluate(expr, v) if expr.free_symbols else mpmath.mpf(sp.N(expr, 30))
        assert abs(got - ref) <= 1e-15 * (1 + abs(ref)), (tex, latex_to_text(tex, TREE_SYMS), v, got, ref)


POINT = st.fixed_dictionaries({n: st.floats(0.05, 3.0) for n in LEAVES})


@settings(max_examples=examples(150, 1500), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(tree=trees, v=POINT, data=st.data())
def test_generated_expressions_read_back_from_both_renderers(tree, v, data):
    try:
        with mpmath.workdps(30):
            ref = _value(tree, v)
    except _NotReal:
        assume(False)
    _read_back(sp.latex(_sympy(tree)), v, ref)
    _read_back(_render(tree, data.draw), v, ref)


# ---- entry points ----------------------------------------------------------------------------------------------

def test_user_theorem_reads_latex_as_its_sympy_text():
    tex = user_theorem(r"\frac{\alpha S^2 \eta K}{4 n^2 \sigma^2}", "noisy_gd_quadratic", latex=True,
                       extra_assumptions=[r"\eta\lambda < 1, K \le 50"])
    text = user_theorem("alpha*S**2*eta*K/(4*n**2*sigma**2)", "noisy_gd_quadratic",
                        extra_assumptions=["(eta*lam < 1) & (K <= 50)"])
    assert tex.bound == text.bound
    assert [a.condition for a in tex.assumptions] == [a.condition for a in text.assumptions]


FAMILY = ["--family", "noisy_gd_quadratic", "--latex", "--budget", "60"]


def test_cli_falsify_latex_finds_a_bound_ten_times_too_small(capsys):
    code = main(["falsify", r"\frac{\alpha S^2 \eta K}{40 n^2 \sigma^2}", *FAMILY, "--max-examples", "50",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["counterexample"] is not None
    assert out["reading"]["bound"]["sympy"] == "K*S**2*alpha*eta/(40*n**2*sigma**2)"
    assert out["reading"]["bound"]["latex"].startswith(r"\frac{")


def test_cli_falsify_latex_holds_for_the_composition_bound(capsys):
    """Per step the Gaussian pair's Rényi divergence is alpha (eta S/n)^2 / (2 * 2 eta sigma^2); K steps compose."""
    code = main(["falsify", r"\frac{\alpha S^2 \eta K}{4 n^2 \sigma^2}", *FAMILY, "--max-examples", "40",
                 "--assume", r"\eta\lambda < 1, K \le 50"])
    out = capsys.readouterr().out
    assert code == 0 and "read bound as K*S**2*alpha*eta/(4*n**2*sigma**2)" in out
    assert "read assume 1 as (K <= 50) & (eta*lam < 1)" in out


@pytest.mark.parametrize("bound", [r"\frac{\epsilon}{n}", r"\alpha(", r"f(\alpha)", r"\foo"])
def test_cli_falsify_latex_refuses_bad_text_with_exit_2(bound, capsys):
    assert main(["falsify", bound, *FAMILY]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(("error:", "verify falsify: error:"))


def test_cli_certify_latex(capsys):
    box = ["--box", "x=1:4", "--latex"]
    assert main(["certify", "--lhs", r"\frac{x}{4}", "--rhs", r"\sqrt{x}", *box, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reading"]["lhs"]["sympy"] == "x/4" and out["reading"]["rhs"]["latex"] == r"\sqrt{x}"
    assert main(["certify", "--lhs", r"2x", "--rhs", r"\sqrt{x}", *box, "--assume", r"x \ge 2"]) == 1
    assert "read assume as x >= 2" in capsys.readouterr().out
    assert main(["certify", "--lhs", r"\frac{x}{4", "--rhs", "1", *box]) == 2
