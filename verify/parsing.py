"""Safe parsing of user-supplied expressions and conditions (never eval of arbitrary code).

The text is checked with Python's `ast` against a whitelist (numbers, known names, arithmetic, calls of allowed
functions, and in conditions comparisons joined by & and |), then parsed by SymPy with restricted namespaces.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import sympy as sp

from verify.bounds import FiniteSum, RangeMin, index_symbol
from verify.errors import ParameterError

ALLOWED_FUNCTIONS: dict[str, Any] = {
    "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "erf": sp.erf, "erfc": sp.erfc, "Abs": sp.Abs, "Max": sp.Max,
    "Min": sp.Min, "binomial": sp.binomial, "harmonic": sp.harmonic, "tanh": sp.tanh, "floor": sp.floor,
    "ceiling": sp.ceiling,
    "Sum": lambda body, k, lo, hi: FiniteSum(body, (k, lo, hi)),
    "MinOver": lambda body, k, lo, hi: RangeMin(body, (k, lo, hi)),
}
RANGE_FUNCTIONS = ("Sum", "MinOver")  # f(body, k, lo, hi): k is an integer index bound by the call
ALLOWED_CONSTANTS: dict[str, Any] = {"pi": sp.pi, "E": sp.E}
PARSER_NAMES: dict[str, Any] = {"Rational": sp.Rational, "Integer": sp.Integer, "Float": sp.Float,
                                 "Symbol": sp.Symbol}
_MAX_TEXT = 2000
_MAX_LITERAL_EXPONENT = 10_000


_BIN_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.BitXor)
_BOOL_OPS = (ast.BitAnd, ast.BitOr)
_CMP_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _literal_number(node: ast.AST) -> float | None:
    """The value of a plain numeric literal, -literal or literal/literal; None for anything else."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _literal_number(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        a, b = _literal_number(node.left), _literal_number(node.right)
        return None if a is None or b is None or b == 0 else a / b
    return None


def _has_name(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) for n in ast.walk(node))


def _check_ast(node: ast.AST, names: set[str], condition: bool, what: str) -> None:
    """Whitelist the syntax of an expression: numbers, known names, arithmetic, allowed calls."""
    def fail(msg: str) -> None:
        raise ParameterError(f"{what}: {msg}")

    if isinstance(node, ast.Expression):
        return _check_ast(node.body, names, condition, what)
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float):
            fail(f"only numbers are allowed as literals, got {node.value!r}")
        return None
    if isinstance(node, ast.Name):
        if node.id not in names:
            known = sorted(n for n in names if n not in ALLOWED_FUNCTIONS and n not in ALLOWED_CONSTANTS)
            fail(f"unknown symbol '{node.id}'; allowed: {', '.join(known)} (functions: "
                 f"{', '.join(sorted(ALLOWED_FUNCTIONS))}; constants: pi, E)")
        return None
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, (ast.USub, ast.UAdd)) or (condition and isinstance(node.op, ast.Invert)):
            return _check_ast(node.operand, names, condition, what)
        fail(f"operator {type(node.op).__name__} is not allowed")
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, (ast.Pow, ast.BitXor)) and not _has_name(node.right):
            v = _literal_number(node.right)
            if v is None or abs(v) > _MAX_LITERAL_EXPONENT:
                fail(f"a constant exponent must be a plain number of magnitude <= {_MAX_LITERAL_EXPONENT}")
        if isinstance(node.op, _BIN_OPS) or (condition and isinstance(node.op, _BOOL_OPS)):
            _check_ast(node.left, names, condition, what)
            return _check_ast(node.right, names, condition, what)
        fail(f"operator {type(node.op).__name__} is not allowed")
    if isinstance(node, ast.Compare):
        if not condition:
            fail("comparisons are only allowed in --assume")
        if len(node.ops) != 1 or not isinstance(node.ops[0], _CMP_OPS):
            fail("use one of <, <=, >, >= per comparison, no chains and no ==; join comparisons with & or |, "
                 "in parentheses: (eta*K >= 3) & (K < 10)")
        _check_ast(node.left, names, condition, what)
        return _check_ast(node.comparators[0], names, condition, what)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in ALLOWED_FUNCTIONS:
            shown = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            fail(f"call of '{shown}' is not allowed; functions: {', '.join(sorted(ALLOWED_FUNCTIONS))}")
        if node.keywords:
            fail("keyword arguments are not allowed")
        if node.func.id in RANGE_FUNCTIONS:
            return _check_range_call(node, names, condition, what)
        for a in node.args:
            if isinstance(a, ast.Starred):
                fail("starred arguments are not allowed")
            _check_ast(a, names, condition, what)
        return None
    fail(f"{type(node).__name__} is not allowed (only arithmetic on numbers, symbols and "
         f"{', '.join(sorted(ALLOWED_FUNCTIONS))})")
    return None


def _check_range_call(node: ast.Call, names: set[str], condition: bool, what: str) -> None:
    """Sum(body, k, lo, hi) / MinOver(body, k, lo, hi): k a fresh index name, bound in the body only."""
    fn = node.func.id
    if len(node.args) != 4 or not isinstance(node.args[1], ast.Name):
        raise ParameterError(f"{what}: {fn} takes (body, k, lo, hi) with k a new index name, e.g. "
                             f"{fn}(1/k**2, k, 1, K)")
    index = node.args[1].id
    if index in names:
        raise ParameterError(f"{what}: the index '{index}' of {fn} is already a symbol or a function; use another "
                             "name")
    _check_ast(node.args[0], names | {index}, condition, what)
    _check_ast(node.args[2], names, condition, what)
    return _check_ast(node.args[3], names, condition, what)


def _range_indices(tree: ast.AST) -> dict[str, sp.Symbol]:
    return {n.args[1].id: index_symbol(n.args[1].id) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in RANGE_FUNCTIONS
            and len(n.args) == 4 and isinstance(n.args[1], ast.Name)}


def parse_expression(text: str, symbols: Mapping[str, sp.Symbol], *, condition: bool = False,
                     what: str = "expression") -> sp.Basic:
    """Parse user text into SymPy safely: a syntax whitelist, then parse_expr with restricted namespaces."""
    from sympy.parsing.sympy_parser import auto_number, convert_xor, parse_expr

    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"{what}: empty")
    if len(text) > _MAX_TEXT:
        raise ParameterError(f"{what}: longer than {_MAX_TEXT} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as err:
        raise ParameterError(f"{what}: syntax error in {text!r}: {err.msg}") from None
    allowed = set(symbols) | set(ALLOWED_FUNCTIONS) | set(ALLOWED_CONSTANTS)
    _check_ast(tree, allowed, condition, what)
    global_dict = {"__builtins__": {}, **ALLOWED_FUNCTIONS, **ALLOWED_CONSTANTS, **PARSER_NAMES}
    local_dict = {**_range_indices(tree), **symbols}
    try:
        out = parse_expr(text.strip(), local_dict=local_dict, global_dict=global_dict,
                         transformations=(auto_number, convert_xor), evaluate=True)
    except Exception as err:  # a whitelisted text that SymPy still rejects (e.g. wrong argument count)
        raise ParameterError(f"{what}: cannot parse {text!r}: {err}") from None
    if condition:
        if isinstance(out, bool):
            out = sp.true if out else sp.false
        if not isinstance(out, sp.logic.boolalg.Boolean):
            raise ParameterError(f"{what}: expected a condition such as 'eta*lam < 1', got {sp.sstr(out)}")
    elif not isinstance(out, sp.Expr):
        raise ParameterError(f"{what}: expected an expression, got {sp.sstr(out)}")
    return out
