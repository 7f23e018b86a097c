"""Safe parsing of user-supplied bound expressions (never eval of arbitrary code).

The text is first checked with Python's `ast`: only numbers, names, arithmetic operators and calls of
whitelisted functions are allowed. It is then parsed by SymPy with a restricted namespace, and every free
symbol must be one of the allowed names.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

import sympy as sp
from sympy.parsing.sympy_parser import convert_xor, parse_expr, standard_transformations

from verify.errors import ParameterError

FUNCTIONS: dict[str, object] = {
    "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "erf": sp.erf, "erfc": sp.erfc, "Abs": sp.Abs, "abs": sp.Abs,
    "Max": sp.Max, "Min": sp.Min, "max": sp.Max, "min": sp.Min, "harmonic": sp.harmonic, "binomial": sp.binomial,
    "tanh": sp.tanh, "pi": sp.pi, "E": sp.E,
}
_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Call, ast.Name, ast.Constant, ast.Load, ast.Add, ast.Sub,
          ast.Mult, ast.Div, ast.Pow, ast.BitXor, ast.USub, ast.UAdd, ast.Compare, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _check_syntax(text: str, names: set[str]) -> None:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise ParameterError(f"cannot parse '{text}': {err.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _NODES):
            raise ParameterError(f"'{text}': {type(node).__name__} is not allowed in a bound expression")
        if isinstance(node, ast.Constant) and not isinstance(node.value, (int, float)):
            raise ParameterError(f"'{text}': only numeric constants are allowed")
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS or node.keywords:
                raise ParameterError(f"'{text}': only calls of {', '.join(sorted(FUNCTIONS))} are allowed")
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS and node.id not in names:
            raise ParameterError(f"'{text}': unknown symbol '{node.id}'; allowed: {', '.join(sorted(names))}")


def parse_expression(text: str, symbols: Mapping[str, sp.Symbol]) -> sp.Basic:
    """Parse `text` into a SymPy expression (or relation) over `symbols` only."""
    _check_syntax(text, set(symbols))
    namespace = {"Integer": sp.Integer, "Float": sp.Float, "Rational": sp.Rational, **FUNCTIONS}
    try:
        expr = parse_expr(text, local_dict=dict(symbols), global_dict=namespace,
                          transformations=(*standard_transformations, convert_xor))
    except (TypeError, ValueError, SyntaxError) as err:
        raise ParameterError(f"cannot parse '{text}': {err}") from None
    unknown = {s.name for s in expr.free_symbols} - set(symbols)
    if unknown:
        raise ParameterError(f"'{text}': unknown symbol(s) {', '.join(sorted(unknown))}")
    return expr
