"""Translation of SymPy trees (bounds, conditions) into interval functions over boxes (verify.certify)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from functools import lru_cache
from typing import Any

import sympy as sp

from verify.bounds import FiniteSum, RangeMin, integer_range
from verify.certify.intervals import (
    Env,
    Interval,
    _abs,
    _add,
    _ball,
    _decreasing,
    _digamma,
    _gamma_like,
    _increasing,
    _ipow,
    _is_point,
    _max,
    _min,
    _mul,
    _need_flint,
    _neg,
    _point,
    arb,
    ctx,
)
from verify.errors import ParameterError
from verify.recursion import RecursiveBound
from verify.stable_powers import expm1, log1p

# ---- translation of SymPy trees into interval functions -------------------------------------------------------

Compiled = Callable[[Env], Interval]


def _const_of(e: sp.Expr) -> Any:
    if e.is_Integer:
        return arb(int(e))
    if e.is_Rational:
        return arb(int(e.p)) / int(e.q)
    if e.is_Float:
        sign, man, exp, _ = e._mpf_
        return arb((-man if sign else man, exp))
    named = {sp.pi: arb.pi, sp.E: arb.const_e, sp.EulerGamma: arb.const_euler, sp.Catalan: arb.const_catalan}
    if e in named:
        return named[e]()
    return None


def _fold(fn: Callable[[Interval, Interval], Interval], parts: Sequence[Compiled]) -> Compiled:
    def run(env: Env) -> Interval:
        acc = parts[0](env)
        for p in parts[1:]:
            acc = fn(acc, p(env))
        return acc
    return run


def _unary(op: Callable[[Interval], Interval], inner: Compiled) -> Compiled:
    return lambda env: op(inner(env))


def _pow(base: Compiled, exponent: sp.Expr, exp_fn: Compiled | None) -> Compiled:
    if exponent.is_Number and exponent.is_finite:
        if exponent.is_Rational:
            value = Fraction(int(exponent.p), int(exponent.q))
        else:  # a Float: its exact binary value
            sign, man, exp, _ = exponent._mpf_
            value = Fraction(-man if sign else man) * Fraction(2) ** exp
        if value.denominator == 1:
            k = int(value)
            return lambda env: _ipow(base(env), k)
        if value == Fraction(1, 2):
            return _unary(_increasing(arb.sqrt), base)
        e = arb(value.numerator) / value.denominator

        def real_power(x: Any) -> Any:
            if x.is_zero():
                return arb(0) if value > 0 else arb.nan()
            return x ** e
        return _unary((_increasing if value > 0 else _decreasing)(real_power), base)
    assert exp_fn is not None

    def general(env: Env) -> Interval:  # b**e = exp(e log b), b > 0; an exact integer e (K, n) by repeated products
        ex = exp_fn(env)
        if _is_point(ex) and ex[0].is_exact() and ex[0].unique_fmpz() is not None:
            return _ipow(base(env), int(ex[0].unique_fmpz()))  # 0**K = 0 and (-x)**K have no log form
        return _increasing(arb.exp)(_mul(ex, _increasing(arb.log)(base(env))))
    return general


_INCREASING = {}
_DECREASING = {}
_BALL = {}


def _tables() -> None:
    _INCREASING.update({sp.exp: arb.exp, sp.log: arb.log, sp.erf: arb.erf, sp.atan: arb.atan, sp.sinh: arb.sinh,
                        sp.tanh: arb.tanh, sp.asinh: arb.asinh, sp.floor: arb.floor, sp.ceiling: arb.ceil,
                        sp.LambertW: arb.lambertw, sp.erfinv: arb.erfinv, expm1: arb.expm1, log1p: arb.log1p})
    _DECREASING.update({sp.erfc: arb.erfc, sp.erfcinv: arb.erfcinv})
    _BALL.update({sp.sin: arb.sin, sp.cos: arb.cos, sp.tan: arb.tan, sp.cosh: arb.cosh})


def _translate(e: sp.Basic) -> Compiled:
    if not isinstance(e, sp.Expr):
        raise ParameterError(f"cannot evaluate {type(e).__name__} '{sp.sstr(e)}' as a real number")
    if e is sp.I:
        raise ParameterError("cannot evaluate the imaginary unit I with real interval arithmetic")
    if e.is_Symbol:
        name = e.name
        return lambda env: env[name]
    if e.is_Number or isinstance(e, sp.NumberSymbol):
        if e.has(sp.zoo, sp.oo, -sp.oo, sp.nan) or e.is_real is False:
            raise ParameterError(f"cannot evaluate the non-finite or complex constant '{e}' with interval arithmetic")
        c = _const_of(e)
        if c is None:
            raise ParameterError(f"cannot evaluate the constant {type(e).__name__} '{e}' with interval arithmetic")
        value = _point(c)
        return lambda env: value
    if not e.free_symbols:  # constant subtree: fold once
        value = _translate_node(e)({})
        return lambda env: value
    return _translate_node(e)


def _translate_node(e: sp.Expr) -> Compiled:
    if isinstance(e, sp.Add):
        return _fold(_add, [_translate(a) for a in e.args])
    if isinstance(e, sp.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff == -1:
            return _unary(_neg, _translate(rest))
        return _fold(_mul, [_translate(a) for a in e.args])
    if isinstance(e, sp.Pow):
        base, ex = e.args
        if ex == sp.Rational(-1, 2):
            return _unary(_decreasing(arb.rsqrt), _translate(base))
        return _pow(_translate(base), ex, None if ex.is_Number else _translate(ex))
    f = type(e)
    if isinstance(e, RecursiveBound):
        parts = [_translate(a) for a in e.args]
        return lambda env: f.enclose(*(p(env) for p in parts))
    if f in _INCREASING and len(e.args) == 1:
        return _unary(_increasing(_INCREASING[f]), _translate(e.args[0]))
    if f in _DECREASING and len(e.args) == 1:
        return _unary(_decreasing(_DECREASING[f]), _translate(e.args[0]))
    if f in _BALL and len(e.args) == 1:
        return _unary(_ball(_BALL[f]), _translate(e.args[0]))
    if isinstance(e, (FiniteSum, RangeMin)):
        return _over_range(e)
    if f is sp.Abs:
        return _unary(_abs, _translate(e.args[0]))
    if f is sp.Max:
        return _fold(_max, [_translate(a) for a in e.args])
    if f is sp.Min:
        return _fold(_min, [_translate(a) for a in e.args])
    if f is sp.gamma:
        return _unary(_gamma_like(arb.gamma), _translate(e.args[0]))
    if f is sp.loggamma:
        return _unary(_gamma_like(arb.lgamma), _translate(e.args[0]))
    if f is sp.factorial:
        return _unary(_gamma_like(arb.gamma), _translate(e.args[0] + 1))
    if f is sp.polygamma and e.args[0] == 0:
        return _unary(_digamma, _translate(e.args[1]))
    if f is sp.harmonic and len(e.args) == 1:  # H_x = digamma(x + 1) + Euler's gamma
        inner = _translate(e.args[0] + 1)
        return lambda env: _add(_digamma(inner(env)), _point(arb.const_euler()))
    if f is sp.binomial:
        top, k = e.args
        if k.is_Integer and k >= 0:
            kk = int(k)
            return _unary(_ball(lambda x: arb.bin(x, kk)), _translate(top))
        parts = [_translate(top), _translate(k)]
        return lambda env: _binomial(*(p(env) for p in parts))
    raise ParameterError(f"cannot evaluate {f.__name__} ('{sp.sstr(e)}') with interval arithmetic; supported: "
                         "+ - * /, powers, exp, log, sqrt, erf, erfc, erfinv, erfcinv, Abs, Max, Min, gamma, "
                         "loggamma, factorial, binomial, harmonic, digamma, LambertW, sin, cos, tan, atan, sinh, "
                         "cosh, tanh, asinh, floor, ceiling, pi, E")


_BIN_MAX_K = 2**62  # arb.bin takes k as a machine word


def _binomial(n: Interval, k: Interval) -> Interval:
    """binomial(n, k) over intervals as SymPy defines it at numbers (verify.bounds.binomial): at an exact integer k,
    0 for k < 0 and the polynomial n (n - 1) ... (n - k + 1)/k! for k >= 0 (0 at integers 0 <= n < k, signed at a
    negative integer n); elsewhere Gamma(n + 1) rgamma(k + 1) rgamma(n - k + 1), continuous in k where n is not a
    negative integer, and NaN (no enclosure) where n may be one."""
    if _is_point(k) and k[0].is_exact() and k[0].is_integer():
        kk = int(k[0].unique_fmpz())
        if kk < 0:
            return _point(arb(0))
        if kk < _BIN_MAX_K:
            return _ball(lambda x: arb.bin(x, kk))(n)
    return _ball(lambda x, y: (x + 1).gamma() * (y + 1).rgamma() * (x - y + 1).rgamma())(n, k)


def _over_range(e: FiniteSum | RangeMin) -> Compiled:
    """A finite sum or a min over an integer range whose ends are fixed (point intervals) where it is evaluated.
    SymPy merges a sum of a sum (a min of a min) into one object with several limits, innermost first: each limit
    reduces the one inside it."""
    compiled = _translate(e.function)
    for k, lo, hi in e.limits:
        compiled = _one_range(e, compiled, k, _translate(lo), _translate(hi))
    return compiled


def _one_range(e: FiniteSum | RangeMin, body: Compiled, k: sp.Symbol, lo_c: Compiled, hi_c: Compiled) -> Compiled:
    reduce = _add if isinstance(e, FiniteSum) else _min

    def end(x: Interval) -> int:
        if not (_is_point(x) and x[0].is_exact() and x[0].is_integer()):
            raise ParameterError(f"the range of '{sp.sstr(e)}' must be fixed integers where it is evaluated")
        return int(x[0].unique_fmpz())

    def run(env: Env) -> Interval:
        terms = integer_range(end(lo_c(env)), end(hi_c(env)))
        if not terms:
            if isinstance(e, FiniteSum):
                return _point(arb(0))
            raise ParameterError(f"'{sp.sstr(e)}' is a min over an empty range")
        acc = None
        for j in terms:
            term = body({**env, k.name: _point(arb(j))})
            acc = term if acc is None else reduce(acc, term)
        return acc
    return run


@lru_cache(maxsize=512)
def _compiled(expr: sp.Expr, prec: int) -> Compiled:
    _need_flint()
    if not _INCREASING:
        _tables()
    with ctx.workprec(prec):
        return _translate(expr)


Condition = Callable[[Env], "bool | None"]


def _compile_condition(cond: sp.Basic, prec: int) -> Condition:
    """A three-valued test of a SymPy condition over a box: True (everywhere), False (nowhere), None."""
    if cond is sp.true or cond is True:
        return lambda env: True
    if cond is sp.false or cond is False:
        return lambda env: False
    if isinstance(cond, (sp.And, sp.Or)):
        parts = [_compile_condition(a, prec) for a in cond.args]
        want = isinstance(cond, sp.And)

        def junction(env: Env) -> bool | None:
            seen_none = False
            for p in parts:
                v = p(env)
                if v is None:
                    seen_none = True
                elif v is not want:
                    return not want
            return None if seen_none else want
        return junction
    if isinstance(cond, sp.Not):
        inner = _compile_condition(cond.args[0], prec)
        return lambda env: (lambda v: None if v is None else not v)(inner(env))
    if isinstance(cond, (sp.Equality, sp.Unequality)):
        d = _compiled(sp.sympify(cond.lhs - cond.rhs), prec)
        ne = isinstance(cond, sp.Unequality)

        def equal(env: Env) -> bool | None:
            lo, hi = d(env)
            if lo.is_zero() and hi.is_zero():
                return not ne
            if lo > 0 or hi < 0:
                return ne
            return None
        return equal
    if isinstance(cond, sp.Rel):
        if isinstance(cond, (sp.LessThan, sp.StrictLessThan)):
            d = _compiled(sp.sympify(cond.rhs - cond.lhs), prec)
        elif isinstance(cond, (sp.GreaterThan, sp.StrictGreaterThan)):
            d = _compiled(sp.sympify(cond.lhs - cond.rhs), prec)
        else:  # pragma: no cover
            raise ParameterError(f"unsupported relation in '{cond}'")
        strict = isinstance(cond, (sp.StrictLessThan, sp.StrictGreaterThan))

        def rel(env: Env) -> bool | None:
            lo, hi = d(env)
            if (lo > 0) if strict else (lo >= 0):
                return True
            if (hi <= 0) if strict else (hi < 0):
                return False
            return None
        return rel
    raise ParameterError(f"not a condition: '{sp.sstr(cond)}' (use relations joined by &, |, ~)")
