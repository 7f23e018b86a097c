"""Interval certification of bound-vs-bound claims (verify.certify): enclosures, verdicts, claims, CLI."""

import json
import random

import mpmath
import pytest
import sympy as sp

pytest.importorskip("flint")

from verify.certify import (  # noqa: E402 - after the importorskip
    CERTIFIED,
    CLAIMS,
    COUNTEREXAMPLE,
    INCONCLUSIVE,
    arb_bounds,
    arb_eval,
    certify,
    parse_expression,
    run_claim,
)
from verify.cli import main  # noqa: E402 - after the importorskip
from verify.errors import ParameterError  # noqa: E402
from verify.symbols import K, alpha, eta  # noqa: E402

x, y = sp.symbols("x y", real=True)  # any sign
p, q = sp.symbols("p q", positive=True)  # boxes inside (0, oo)

ENCLOSED = [
    x**3 - 2 * x * y + y**2,
    (x - y) ** 2 * sp.exp(-(x**2)),
    (x - 1) ** 4 - (y + 1) ** 5 + (x - y) ** 3,  # negative bases, integer exponents
    x**-2 + y**-3,  # NaN where the box reaches 0, else enclosed
    sp.log(p) * sp.sqrt(q) - sp.exp(x / 3),
    sp.erf(x) - sp.erfc(y) + sp.erf(x * y),
    sp.Max(x, y, p) - sp.Min(x**2, q),
    sp.Abs(x - y) * sp.sqrt(p + q),
    p**q - q ** sp.Rational(3, 2) + p ** sp.Rational(-1, 2) + p ** sp.Rational(1, 3),
    sp.binomial(p + 5, 3) + sp.gamma(q + 1) - sp.loggamma(p + 2),
    sp.sin(x) * sp.cos(y) + sp.atan(x) - sp.tanh(y),
    sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi) - sp.E ** (-p),
    sp.Float("0.1") * x + sp.Float("3.7e-5") * y**2 - sp.Rational(1, 3),
    1 / (1 + x**2) - 1 / (p + q) + sp.LambertW(p),
    sp.floor(3 * x) + sp.ceiling(y),
]


def _endpoints(ball):
    lo, hi = ball.lower(), ball.upper()
    return (mpmath.mpf(tuple(int(v) for v in lo.man_exp())), mpmath.mpf(tuple(int(v) for v in hi.man_exp())))


def _random_box(rng, names):
    box = {}
    for name in names:
        if name in ("p", "q"):
            lo = rng.choice([0.01, 0.5, 2.0]) * rng.uniform(1, 3)
            hi = lo * rng.choice([1.0, 1.01, 2.0, 30.0])
        else:
            lo = rng.uniform(-4, 3)
            hi = lo + rng.choice([0.0, 0.001, 0.5, 3.0])
        box[name] = (lo, hi)
    return box


@pytest.mark.parametrize("expr", ENCLOSED, ids=[sp.sstr(e)[:40] for e in ENCLOSED])
def test_interval_evaluation_encloses_mpmath_values(expr):
    rng = random.Random(sp.sstr(expr))
    names = sorted(s.name for s in expr.free_symbols)
    fn = sp.lambdify([sp.Symbol(n) for n in names], expr.xreplace({s: sp.Symbol(s.name) for s in expr.free_symbols}),
                     modules="mpmath")
    checked = 0
    for _ in range(12):
        box = _random_box(rng, names)
        ball = arb_eval(expr, box)
        if not ball.is_finite():
            continue  # undefined somewhere on the box (e.g. 1/x over an interval reaching 0)
        lo, hi = _endpoints(ball)
        for _ in range(25):
            point = [rng.uniform(*box[n]) for n in names]
            with mpmath.workdps(50):
                value = fn(*(mpmath.mpf(v) for v in point))
                assert lo - mpmath.mpf(10) ** -40 <= value <= hi + mpmath.mpf(10) ** -40, (box, point, ball)
            checked += 1
    assert checked >= 100


def test_enclosures_are_tight_where_arithmetic_allows():
    # even powers and monotone functions are evaluated at the endpoints, not on the midpoint-radius ball
    lo, hi = arb_bounds(x**2, {"x": (-1, 2)})
    assert lo >= 0 and hi < 4.001
    lo, hi = arb_bounds(sp.erfc(x), {"x": (1, 2)})
    assert lo > 0.0046 and hi < 0.1573
    assert lo > arb_eval(sp.erfc(x), {"x": (1, 2)}).lower() - 1e-9  # the ball's radius has 30 bits
    assert not arb_eval(sp.log(x), {"x": (-1, 1)}).is_finite()
    assert arb_bounds(K**2, {"K": (1.5, 2.5)})[0] >= 2.25  # integer symbols evaluate as real intervals


def test_untranslatable_expression_names_the_construct():
    f = sp.Function("f")
    with pytest.raises(ParameterError, match="f"):
        arb_eval(f(x) + 1, {"x": (0, 1)})
    with pytest.raises(ParameterError, match="zeta"):
        arb_eval(sp.zeta(x + 2), {"x": (0, 1)})
    with pytest.raises(ParameterError, match="Piecewise"):
        arb_eval(sp.Piecewise((x, x > 0), (0, True)), {"x": (0, 1)})
    with pytest.raises(ParameterError, match="imaginary"):
        arb_eval(sp.I * x, {"x": (0, 1)})
    with pytest.raises(ParameterError, match="no interval"):
        arb_eval(x + y, {"x": (0, 1)})
    with pytest.raises(ParameterError, match="exceeds"):
        certify(x, 1, {"x": (2, 1)})


@pytest.mark.parametrize(("lhs", "rhs", "relation", "box"), [
    (sp.log(1 + x), x, "<=", {"x": ("1e-3", "100")}),
    (x * sp.exp(-x), sp.Rational(37, 100), "<", {"x": (0, 20)}),
    (sp.erf(x), 2 * x / sp.sqrt(sp.pi), "<=", {"x": ("1e-4", "5")}),
    (sp.binomial(K, 2), K**2 / 2, "<", {"K": (1, 1000)}),
    (sp.exp(x) - 1, x, ">=", {"x": (-1, 1)}),  # equality at 0, reached exactly by the bisection
    (sp.Max(x, y), sp.Abs(x) + sp.Abs(y) + sp.Rational(1, 10), "<", {"x": (-2, 3), "y": (-1, 1)}),
])
def test_true_inequality_is_certified(lhs, rhs, relation, box):
    cert = certify(lhs, rhs, box, relation, budget_s=10)
    assert cert.status == CERTIFIED, cert.summary()
    assert cert.certified_boxes >= 1 and cert.counterexample is None


def _violated(lhs, rhs, relation, point):
    values = {s: point[s.name] for s in (lhs - rhs).free_symbols}
    with mpmath.workdps(50):
        lv = sp.lambdify(list(values), lhs, modules="mpmath")(*(mpmath.mpf(v) for v in values.values()))
        rv = sp.lambdify(list(values), rhs, modules="mpmath")(*(mpmath.mpf(v) for v in values.values()))
        return {"<=": lv > rv, "<": lv >= rv, ">=": lv < rv, ">": lv <= rv}[relation]


COR2 = alpha / (2 - eta) * (1 - sp.exp(-(2 - eta) * eta * K / 2))


@pytest.mark.parametrize(("lhs", "rhs", "relation", "box", "assume"), [
    (sp.sqrt(x), x, "<=", {"x": (0, 4)}, None),
    (sp.erf(x), x, ">=", {"x": (0, 2)}, None),
    (COR2, alpha * eta * K / 4, "<=", {"alpha": (1, 10), "eta": ("1e-6", "0.9"), "K": (1, 10**6)}, None),
    ((x - 1) * (x - 2), 0, ">=", {"x": (1, 10)}, None),
    (x, 1, "<", {"x": (0, 2)}, x**2 <= 1),  # the point x = 1 itself
])
def test_false_inequality_gives_a_real_counterexample(lhs, rhs, relation, box, assume):
    cert = certify(lhs, rhs, box, relation, assumptions=assume, budget_s=10)
    assert cert.status == COUNTEREXAMPLE, cert.summary()
    point = cert.counterexample
    for name, (lo, hi) in box.items():
        assert float(lo) <= point[name] <= float(hi)
    assert _violated(sp.sympify(lhs), sp.sympify(rhs), relation, point)
    if assume is not None:
        assert bool(assume.subs({s: point[s.name] for s in assume.free_symbols}))
    assert set(cert.counterexample_values) == {"lhs", "rhs", "rhs_minus_lhs"}


def test_assumptions_restrict_the_box():
    assert certify(x, sp.Rational(11, 10), {"x": (0, 2)}, assumptions=x**2 <= 1).status == CERTIFIED
    assert certify(x, 1, {"x": (0, 2)}).status == COUNTEREXAMPLE
    # touching the boundary of an assumption: plain bounds cut the box, other conditions leave it undecided
    assert certify(x, 1, {"x": (0, 2), "y": (-1, 1)}, assumptions=sp.And(x <= 1, y > 0)).status == CERTIFIED
    assert certify(x, 1, {"x": (0, 2)}, assumptions=x**2 <= 1, max_boxes=500).status == INCONCLUSIVE
    vacuous = certify(x, 0, {"x": (1, 2)}, assumptions=x < 0)
    assert vacuous.status == CERTIFIED and "vacuous" in vacuous.note and vacuous.discarded_boxes >= 1


def test_integer_symbols_are_split_at_integers():
    # (K-1)(K-2) >= 0 holds at every integer and fails at 3/2: only integer splits can certify it
    assert certify((K - 1) * (K - 2), 0, {"K": (1, 10)}, ">=").status == CERTIFIED
    assert certify((x - 1) * (x - 2), 0, {"x": (1, 10)}, ">=", integers=["x"]).status == CERTIFIED
    real = certify((x - 1) * (x - 2), 0, {"x": (1, 10)}, ">=")
    assert real.status == COUNTEREXAMPLE and 1 < real.counterexample["x"] < 2
    # the box of an integer symbol is its integers; undecided boxes keep integer ends
    stuck = run_claim("chourasia2021.cor2_below_cor1", max_boxes=6)
    assert stuck.status == INCONCLUSIVE and stuck.stopped_by == "max_boxes" and stuck.undecided
    for b in stuck.undecided:
        assert all(isinstance(v, int) for v in b["K"]) and not all(isinstance(v, int) for v in b["eta"])
    bad = certify(K, 0, {"K": (1, 50)}, "<=")
    assert bad.status == COUNTEREXAMPLE and isinstance(bad.counterexample["K"], int)


def test_limits_give_inconclusive():
    cert = run_claim("chourasia2021.cor2_below_cor1", max_boxes=3)
    assert cert.status == INCONCLUSIVE and cert.stopped_by == "max_boxes"
    assert cert.undecided_count >= 1 and len(cert.undecided) <= 5
    json.dumps(cert.to_dict())


@pytest.mark.parametrize("claim_id", sorted(CLAIMS))
def test_named_claims_have_their_established_status(claim_id):
    cert = run_claim(claim_id, budget_s=20)
    assert cert.status == CLAIMS[claim_id].expected, cert.summary()
    data = json.loads(json.dumps(cert.to_dict()))
    assert data["status"] == cert.status and data["claim"] == claim_id
    if cert.status == COUNTEREXAMPLE:
        c = CLAIMS[claim_id]
        assert _violated(c.lhs, c.rhs, c.relation, cert.counterexample)


def test_crossing_with_composition_is_sharp():
    cert = run_claim("chourasia2021.cor2_below_composition_below_threshold")
    point = cert.counterexample
    assert point["K"] == 3 and point["eta"] * point["K"] >= 2.9
    y_star = 2 + mpmath.lambertw(-2 * mpmath.exp(-2)).real
    assert point["eta"] * point["K"] * (2 - point["eta"]) < 2 * y_star  # below the exact crossing
    assert abs(2 * y_star / ((2 - 0.02) * 0.02) - 80.49) < 0.01  # K0 at eta = 0.02


# ---- command line ----------------------------------------------------------------------------------------------

def test_cli_exit_codes(capsys):
    assert main(["certify", "feldman2018.theorem35_proof_below_printed"]) == 0
    assert "CERTIFIED" in capsys.readouterr().out
    assert main(["certify", "chourasia2021.cor2_below_composition_below_threshold", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == COUNTEREXAMPLE and data["counterexample"]["K"] == 3
    assert main(["certify", "chourasia2021.cor2_below_cor1", "--max-boxes", "2"]) == 3
    assert main(["certify", "--lhs", "(K-1)*(K-2)", "--rhs", "0", "--relation", ">=", "--box", "K=1:10"]) == 0
    assert main(["certify", "--lhs", "sqrt(x)", "--rhs", "x", "--box", "x=0:4"]) == 1
    assert main(["certify", "--lhs", "x", "--rhs", "3/2", "--box", "x=0:2", "--assume", "(x**2 <= 1) & (x >= 0)"]) == 0
    assert main(["certify", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(claim_id in out for claim_id in CLAIMS)


@pytest.mark.parametrize(("argv", "message"), [
    (["--lhs", "__import__('os').system('echo hacked')", "--rhs", "1", "--box", "x=0:1"], "not allowed"),
    (["--lhs", "__import__('os')", "--rhs", "1", "--box", "x=0:1"], "__import__"),
    (["--lhs", "x.__class__", "--rhs", "1", "--box", "x=0:1"], "Attribute"),
    (["--lhs", "().__class__.__bases__", "--rhs", "1", "--box", "x=0:1"], "not allowed"),
    (["--lhs", "(lambda: 1)()", "--rhs", "1", "--box", "x=0:1"], "not allowed"),
    (["--lhs", "eval('1')", "--rhs", "1", "--box", "x=0:1"], "eval"),
    (["--lhs", "y", "--rhs", "1", "--box", "x=0:1"], "unknown symbol 'y'"),
    (["--lhs", "2**2**2**100", "--rhs", "1", "--box", "x=0:1"], "exponent"),
    (["--lhs", "x", "--rhs", "1", "--box", "x=2:1"], "exceeds"),
    (["--lhs", "x", "--rhs", "1", "--box", "x=0:nan"], "finite number"),
    (["--lhs", "x", "--rhs", "1", "--box", "x=0:1", "--relation", "=="], "relation"),
    (["--lhs", "x", "--rhs", "1", "--box", "x=0:1", "--assume", "0 < x < 1"], "no chains"),
    (["--lhs", "x"], "--rhs"),
    (["no.such.claim"], "no claim"),
    (["--bogus"], "unrecognized"),
])
def test_cli_bad_input_exits_2_with_a_message(argv, message, capsys):
    assert main(["certify", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_parser_rejects_attribute_access_and_builtins():
    syms = {"x": x}
    assert parse_expression("exp(x) + x^2", syms) == sp.exp(x) + x**2
    for text in ["__import__('os')", "x.__class__", "open('f')", "globals()", "'a'", "x if x else 1", "[x]"]:
        with pytest.raises(ParameterError):
            parse_expression(text, syms)


@pytest.mark.parametrize(("lhs", "rhs", "box", "assume", "status"), [
    ("x**2", "x", {"x": (0, 1)}, None, "CERTIFIED"),
    ("x**2", "x", {"x": (0, 2)}, None, "COUNTEREXAMPLE"),
    ("x**2", "x", {"x": (0, 2)}, "x < 1", "CERTIFIED"),
    ("exp(-eta*lam*K)", "1/(1 + eta*lam*K)", {"eta": (0.01, 1), "lam": (0.1, 1), "K": (1, 100)}, None, "CERTIFIED"),
])
def test_certify_takes_text_as_the_cli_does(lhs, rhs, box, assume, status):
    """Strings are parsed like `verify certify --lhs/--rhs/--assume` (issue 25: the Python API rejected them), and
    give the same answer as the SymPy objects (the reference: sympify of the same text)."""
    from_text = certify(lhs, rhs, box, assumptions=assume, budget_s=20)
    names = {n: sp.Symbol(n, real=True) for n in box}
    objects = certify(sp.sympify(lhs, locals=names), sp.sympify(rhs, locals=names), box,
                      assumptions=None if assume is None else sp.sympify(assume, locals=names), budget_s=20)
    assert from_text.status == objects.status == status


@pytest.mark.parametrize(("option", "value", "message"), [("--prec", "0", "--prec must lie in [16, 4096], got 0"),
                                                          ("--max-boxes", "0", "--max-boxes must be > 0, got 0")])
def test_a_bad_limit_names_itself(option, value, message, capsys):
    assert main(["certify", "--lhs", "x", "--rhs", "1", "--box", "x=0:1", option, value]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("lhs", "rhs", "box", "at"), [
    ("Abs(x - 1/2)", "1/2", {"x": (0, 1)}, [{"x": 0}, {"x": 1}]),
    ("x*y", "1", {"x": (0, 1), "y": (0, 1)}, [{"x": 1, "y": 1}]),
    ("x**2 + y**2", "2", {"x": (-1, 1), "y": (-1, 1)}, [{"x": sx, "y": sy} for sx in (-1, 1) for sy in (-1, 1)]),
])
def test_a_strict_claim_false_only_on_the_boundary_has_its_counterexample(lhs, rhs, box, at):
    """lhs < rhs holds inside the box and fails only at corners (equality there): the tiny boxes at a corner cannot be
    certified, and their corners are tried as counterexamples (it was INCONCLUSIVE)."""
    cert = certify(lhs, rhs, box, "<")
    assert cert.status == COUNTEREXAMPLE
    assert {k: float(v) for k, v in cert.counterexample.items()} in [{k: float(v) for k, v in p.items()} for p in at]


@pytest.mark.parametrize(("lhs", "rhs", "box"), [
    ("Phi_inv(Phi(x))", "x + 1", {"x": ("-30", "30")}),
    ("Phi(Phi_inv(1 - x) - mu)", "1 - x", {"x": ("1e-60", "0.5"), "mu": ("0", "5")}),
    ("Phi_inv(Phi(x))", "x + 1/10", {"x": ("20", "40")})])
def test_a_point_whose_enclosure_lost_its_digits_is_no_counterexample(lhs, rhs, box):
    """True claims (Phi_inv(Phi(x)) = x; G_mu(x) <= 1 - x) were certified COUNTEREXAMPLEs: at a point, 2 - erfc(..)
    rounds to a ball around 0 at 64 bits, whose erfcinv is NaN, read as 'undefined, so false' (a probe). A point's
    non-finite enclosure is evaluated again at finer precisions; only one undefined at all of them is a
    counterexample."""
    cert = certify(lhs, rhs, box, budget_s=1.5)
    assert cert.status != COUNTEREXAMPLE, cert.counterexample
