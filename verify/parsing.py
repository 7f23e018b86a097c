"""Safe parsing of user-supplied expressions and conditions (never eval of arbitrary code).

The text is checked with Python's `ast` against a whitelist (numbers, known names, arithmetic, calls of allowed
functions, and in conditions comparisons joined by & and |), then parsed by SymPy with restricted namespaces.
Before SymPy sees it, the work it can cause is bounded: at most _MAX_TEXT characters, _MAX_DEPTH levels of nesting,
constant exponents of magnitude <= _MAX_LITERAL_EXPONENT, finite float literals, no constant SymPy would compute
exactly (powers of literals, products, harmonic numbers, binomials) above _MAX_CONSTANT_BITS bits, a polynomial
degree in the symbols of at most _MAX_DEGREE (upper estimates from the syntax tree, so `9**9**9**9`,
`(10**1000)**1000`, `harmonic(10**8)` or `(x + y)**10000` are refused at once, never computed), at most
_MAX_MINMAX_ARGS arguments of Max and Min, and what SymPy still spends is capped by _PARSE_DEADLINE_S.
"""

from __future__ import annotations

import ast
import builtins
import math
import re
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

import mpmath
import sympy as sp

from verify.bounds import FiniteSum, RangeMin, binomial, harmonic, index_symbol
from verify.errors import DeadlineExceeded, ParameterError, did_you_mean
from verify.limits import deadline
from verify.model import Family, FromFamily, is_condition
from verify.quantities import Quantity

ALLOWED_FUNCTIONS: dict[str, Any] = {
    "exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "erf": sp.erf, "erfc": sp.erfc, "Abs": sp.Abs, "Max": sp.Max,
    "Min": sp.Min, "binomial": sp.binomial, "harmonic": sp.harmonic, "tanh": sp.tanh, "floor": sp.floor,
    "ceiling": sp.ceiling, "erfinv": sp.erfinv, "erfcinv": sp.erfcinv,
    "Phi": lambda x: sp.erfc(-x / sp.sqrt(2)) / 2,  # the standard normal CDF
    "Phi_inv": lambda p: -sp.sqrt(2) * sp.erfcinv(2 * p),  # its inverse, without 1 - p (exact in the tail)
    "Sum": lambda body, k, lo, hi: FiniteSum(body, (k, lo, hi)),
    "MinOver": lambda body, k, lo, hi: RangeMin(body, (k, lo, hi)),
}
RANGE_FUNCTIONS = ("Sum", "MinOver")  # f(body, k, lo, hi): k is an integer index bound by the call
ALLOWED_CONSTANTS: dict[str, Any] = {"pi": sp.pi, "E": sp.E}
PARSER_NAMES: dict[str, Any] = {"Rational": sp.Rational, "Integer": sp.Integer, "Float": sp.Float,
                                 "Symbol": sp.Symbol}
_MAX_TEXT = 2000
_MAX_LITERAL_EXPONENT = 10_000
_MAX_DEPTH = 50  # nesting levels of the syntax tree (a chain a + b + c ... counts once)
_MAX_CONSTANT_BITS = 14_000  # about 4200 decimal digits: below Python's int-to-text limit (4300 digits)
_MAX_DEGREE = 64  # polynomial degree in the symbols (estimated from the syntax tree)
_MAX_MINMAX_ARGS = 32  # arguments of all Max and Min calls together (SymPy compares them pairwise)
_PARSE_DEADLINE_S = 10.0  # what SymPy may spend on a text that passed the checks above (a safety net)
_RESERVED_INDEX_NAMES = frozenset(  # SymPy's names, and the evaluators' (lambdify puts every symbol's name in the
    n for module in (sp, math, mpmath, builtins) for n in dir(module) if not n.startswith("_")  # namespace of its
) - {"j"}  # code: an index `e` would shadow mpmath's e, `max` the builtin); j is only ever printed as the literal 1j


_BIN_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.BitXor)
_BOOL_OPS = (ast.BitAnd, ast.BitOr)
_CMP_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _has_symbol(node: ast.AST) -> bool:
    """A name other than a called function's or a constant's (pi, E): a symbol."""
    called = {id(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}
    return any(isinstance(n, ast.Name) and id(n) not in called and n.id not in ALLOWED_CONSTANTS
               for n in ast.walk(node))


_CHAINS = ((ast.Add, ast.Sub), (ast.Mult, ast.Div), (ast.BitAnd,), (ast.BitOr,))


def _same_chain(parent: ast.AST, child: ast.AST) -> bool:
    """`child` continues the left-associative chain of `parent` (a + b + c, a*b/c, c1 & c2 & c3)."""
    return (isinstance(parent, ast.BinOp) and isinstance(child, ast.BinOp)
            and any(isinstance(parent.op, g) and isinstance(child.op, g) for g in _CHAINS))


def _spine(node: ast.BinOp) -> list[ast.BinOp]:
    """`node` and the left operands that continue its chain, outermost first (a + b + c: [(a + b) + c, a + b])."""
    links = [node]
    while _same_chain(links[-1], links[-1].left):
        links.append(links[-1].left)
    return links


def _check_depth(tree: ast.AST, what: str) -> None:
    """At most _MAX_DEPTH levels of nesting, a chain a + b + c ... counting once (iteratively: a deep tree must not
    exhaust the stack here, and SymPy's recursive printers and evaluators must not meet one later)."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > _MAX_DEPTH:
            raise ParameterError(f"{what}: nested more than {_MAX_DEPTH} levels deep")
        stack.extend((child, depth if _same_chain(node, child) else depth + 1) for child in ast.iter_child_nodes(node))


def _shown(node: ast.AST, text: str) -> str:
    shown = ast.get_source_segment(text, node) or ast.unparse(node)
    return shown if len(shown) <= 60 else shown[:57] + "..."


_FLOAT_FUNCTIONS: dict[str, Any] = {
    "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "erf": math.erf, "erfc": math.erfc, "Abs": abs,
    "Max": max, "Min": min, "tanh": math.tanh, "floor": math.floor, "ceiling": math.ceil,
    "binomial": binomial, "harmonic": harmonic,  # SymPy's values (0 at binomial(3, -1)), as the evaluators'
    "erfinv": lambda y: statistics.NormalDist().inv_cdf((y + 1) / 2) / math.sqrt(2),
    "erfcinv": lambda y: -statistics.NormalDist().inv_cdf(y / 2) / math.sqrt(2),
    "Phi": lambda x: math.erfc(-x / math.sqrt(2)) / 2, "Phi_inv": lambda p: statistics.NormalDist().inv_cdf(p),
}
_FLOAT_CONSTANTS = {"pi": math.pi, "E": math.e}


def _float_value(node: ast.AST) -> float | None:
    """A float estimate of a constant node's value, never an exact computation (so always cheap): inf where it
    overflows, nan where it is undefined, None where the node is not a constant (a symbol, a range function)."""
    if isinstance(node, ast.Constant):
        return _float_call(lambda: float(node.value)) if type(node.value) in (int, float) else None
    if isinstance(node, ast.Name):
        return _FLOAT_CONSTANTS.get(node.id)
    if isinstance(node, ast.UnaryOp):
        v = _float_value(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    if isinstance(node, ast.BinOp):
        a, b = _float_value(node.left), _float_value(node.right)
        if a is None or b is None:
            return None
        op = type(node.op)
        calc = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b, ast.Div: lambda: a / b,
                ast.Pow: lambda: a ** b, ast.BitXor: lambda: a ** b}.get(op)
        return _float_call(calc) if calc is not None else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FLOAT_FUNCTIONS:
        args = [_float_value(a) for a in node.args]
        if not args or any(v is None for v in args):
            return None
        return _float_call(lambda: _FLOAT_FUNCTIONS[node.func.id](*args))
    return None


def _float_call(calc: Any) -> float:
    try:
        v = calc()
    except OverflowError:
        return math.inf
    except (ValueError, ZeroDivisionError, TypeError):
        return math.nan
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan


def _constant_bits(node: ast.AST, text: str, what: str) -> float:
    """An upper estimate of the bits of the exact numbers SymPy computes for `node` while it parses it
    (evaluate=True): literals, their sums, products, quotients and powers, and floor, ceiling, harmonic numbers and
    binomials of constants. Symbols count 0; a sum with a symbol, a power with a symbolic exponent and a function of
    symbols stay symbolic in SymPy (0), while a product keeps its numeric coefficient (so that (2*K)**10000 counts
    2**10000). A ParameterError naming the part of the input where a node would exceed _MAX_CONSTANT_BITS."""
    bits = _node_bits(node, text, what)
    if not bits <= _MAX_CONSTANT_BITS:
        size = f"about {bits * math.log10(2):.3g} digits" if math.isfinite(bits) else "beyond any float"
        raise ParameterError(f"{what}: the constant {_shown(node, text)} is too large to compute exactly ({size}; "
                             f"at most {_MAX_CONSTANT_BITS * math.log10(2):.0f} digits)")
    return bits


def _magnitude_bits(v: float | None) -> float:
    """Bits of the integer part of |v| (inf for inf and nan: a value that cannot be estimated is not bounded)."""
    if v is None:
        return 0.0
    if not math.isfinite(v):
        return math.inf
    return math.log2(abs(v)) + 1 if abs(v) >= 1 else 1.0


def _node_bits(node: ast.AST, text: str, what: str) -> float:
    if isinstance(node, ast.Expression):
        return _constant_bits(node.body, text, what)
    if isinstance(node, ast.Constant):
        v = node.value
        if type(v) not in (int, float):
            return 0.0
        if isinstance(v, int):  # of any length (math.log2 takes it exactly; float() of it may overflow)
            return math.log2(abs(v)) if v else 0.0
        if not math.isfinite(v):
            raise ParameterError(f"{what}: the number {_shown(node, text)} is beyond the range of a double "
                                 "(about 1.8e308)")
        if v == 0 and any(c in "123456789" for c in _shown(node, text).lower().partition("e")[0]):
            raise ParameterError(f"{what}: the number {_shown(node, text)} is below the range of a double "
                                 "(about 5e-324)")
        return math.log2(abs(v)) if abs(v) >= 1 else float(abs(math.frexp(v)[1]))
    if isinstance(node, ast.Name):
        return 0.0
    if isinstance(node, ast.UnaryOp):
        return _constant_bits(node.operand, text, what)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        links = _spine(node)
        operands = [links[-1].left, *(link.right for link in reversed(links))]
        additive = isinstance(node.op, (ast.Add, ast.Sub))  # p/q + r/s = (ps + rq)/(qs): the sizes add up
        combined = sum(_constant_bits(o, text, what) + additive for o in operands)
        if not combined <= _MAX_CONSTANT_BITS:
            return combined
        return 0.0 if additive and _has_symbol(node) else combined
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.BitXor)):
        base = _constant_bits(node.left, text, what)
        _constant_bits(node.right, text, what)
        exponent = None if _has_symbol(node.right) else _float_value(node.right)
        if exponent is None:
            return 0.0 if _has_symbol(node.left) else base
        return base * max(1.0, abs(exponent)) if base else 0.0
    if isinstance(node, ast.BinOp):
        return max(_constant_bits(node.left, text, what), _constant_bits(node.right, text, what))
    if isinstance(node, ast.Call):
        args = [_constant_bits(a, text, what) for a in node.args]
        name = node.func.id if isinstance(node.func, ast.Name) else ""
        if _has_symbol(node) or not args:
            return 0.0
        values = [_float_value(a) for a in node.args]
        if name in ("floor", "ceiling"):  # SymPy computes the integer, from a float estimate of the argument
            return max(args[0], _magnitude_bits(values[0]))
        if name == "harmonic" and values[0] is not None:  # an exact rational of about 3 n bits
            n = values[0]
            return 3.0 * n if math.isfinite(n) and n > 0 else (math.inf if not math.isfinite(n) else 0.0)
        if name == "binomial" and len(values) == 2 and None not in values:  # at most min(k, n - k) log2(n) bits
            n, k = values
            if not (math.isfinite(n) and math.isfinite(k)):
                return math.inf
            return max(1.0, min(abs(k), abs(n - k))) * max(1.0, math.log2(abs(n) + 1)) + max(args)
        return max(args)
    return max((_constant_bits(c, text, what) for c in ast.iter_child_nodes(node)), default=0.0)


def _degree(node: ast.AST, text: str, what: str) -> float:
    """An upper estimate of the polynomial degree of `node` in its symbols (a function of symbols counts as one new
    symbol), checked at every node against _MAX_DEGREE: SymPy's factorisation and expansion, which the evaluators
    apply to a bound (log(1 + x) rewriting, interval forms), grow steeply with it, partly in C that no deadline
    stops."""
    deg = _node_degree(node, text, what)
    if not deg <= _MAX_DEGREE:
        raise ParameterError(f"{what}: {_shown(node, text)} is a polynomial of degree about {deg:.3g} in its symbols, "
                             f"above {_MAX_DEGREE}; write a large power with a symbolic exponent (x**K, exp(K*log(x)))")
    return deg


def _node_degree(node: ast.AST, text: str, what: str) -> float:
    if isinstance(node, ast.Expression):
        return _degree(node.body, text, what)
    if isinstance(node, ast.Name):
        return 0.0 if node.id in ALLOWED_CONSTANTS else 1.0
    if isinstance(node, ast.UnaryOp):
        return _degree(node.operand, text, what)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        links = _spine(node)
        degrees = [_degree(o, text, what) for o in [links[-1].left, *(link.right for link in reversed(links))]]
        return max(degrees) if isinstance(node.op, (ast.Add, ast.Sub)) else sum(degrees)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Pow, ast.BitXor)):
        base, exponent = _degree(node.left, text, what), _degree(node.right, text, what)
        v = None if _has_symbol(node.right) else _float_value(node.right)
        if v is None or not math.isfinite(v):
            return base + exponent
        return base * max(1.0, abs(v))
    if isinstance(node, ast.Call):
        for a in node.args:
            _degree(a, text, what)
        return 1.0 if _has_symbol(node) else 0.0
    return max((_degree(c, text, what) for c in ast.iter_child_nodes(node)), default=0.0)


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
            fail(f"unknown symbol '{node.id}'{did_you_mean(node.id, names)}; allowed: {', '.join(known)} (functions: "
                 f"{', '.join(sorted(ALLOWED_FUNCTIONS))}; constants: pi, E)")
        return None
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, (ast.USub, ast.UAdd)) or (condition and isinstance(node.op, ast.Invert)):
            return _check_ast(node.operand, names, condition, what)
        fail(f"operator {type(node.op).__name__} is not allowed")
    if isinstance(node, ast.BinOp):
        links = _spine(node)  # a chain a + b + c ... is checked link by link, not by recursion on its left side
        for link in links:
            if isinstance(link.op, (ast.Pow, ast.BitXor)) and not _has_symbol(link.right):
                v = _float_value(link.right)  # None: a range function (SymPy leaves such a power unevaluated)
                if v is not None and not (math.isnan(v) or abs(v) <= _MAX_LITERAL_EXPONENT):
                    fail(f"a constant exponent must have magnitude <= {_MAX_LITERAL_EXPONENT}")
            if not (isinstance(link.op, _BIN_OPS) or (condition and isinstance(link.op, _BOOL_OPS))):
                fail(f"operator {type(link.op).__name__} is not allowed")
            _check_ast(link.right, names, condition, what)
        return _check_ast(links[-1].left, names, condition, what)
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
    if index.startswith("_") or index in PARSER_NAMES or index in _RESERVED_INDEX_NAMES:
        raise ParameterError(f"{what}: the index '{index}' of {fn} is a reserved name (SymPy's, Python's or mpmath's); "
                             "use another name, e.g. k or j")
    _check_ast(node.args[0], names | {index}, condition, what)
    _check_ast(node.args[2], names, condition, what)
    return _check_ast(node.args[3], names, condition, what)


def _not_condition(tree: ast.AST) -> ast.AST | None:
    """The first part of a condition's syntax tree that is neither a comparison nor conditions joined by & | ~, or
    None: a bare symbol (`alpha`) or number is an expression, which SymPy would still accept as a Boolean (a Symbol
    is one). Iterative: a long chain c1 & c2 & ... must not exhaust the stack."""
    stack = [tree.body if isinstance(tree, ast.Expression) else tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.BinOp) and isinstance(node.op, _BOOL_OPS):
            stack.extend((node.right, node.left))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            stack.append(node.operand)
        elif not isinstance(node, ast.Compare):
            return node
    return None


def _refuse_non_condition(tree: ast.AST, text: str, what: str) -> None:
    part = _not_condition(tree)
    if part is not None:
        raise ParameterError(f"{what}: not a condition: {_shown(part, text)!r} is an expression; write comparisons "
                             "(<, <=, >, >=) joined by & and |, e.g. (eta*lam < 1) & (K >= 2)")


def check_condition_syntax(text: str, what: str) -> None:
    """A one-line ParameterError naming `what` where `text` is not shaped as a condition (comparisons joined by
    & | ~), found before any symbol is known (a command line names its option: `--assume alpha`). Text that does not
    parse is left to `parse_expression`, which says why."""
    if not isinstance(text, str) or len(text) > _MAX_TEXT:
        return
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    _refuse_non_condition(tree, text.strip(), what)


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
        raise ParameterError(f"{what}: longer than {_MAX_TEXT} characters ({len(text)})")
    text = text.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as err:  # ValueError: e.g. an int too long
        reason = err.msg if isinstance(err, SyntaxError) else (str(err) or type(err).__name__)
        raise ParameterError(f"{what}: syntax error in {text!r}: {reason}") from None
    clash = sorted(set(symbols) & set(PARSER_NAMES))
    if clash:
        raise ParameterError(f"{what}: the symbol name {clash[0]} is reserved by the parser; rename it")
    _check_depth(tree, what)
    allowed = set(symbols) | set(ALLOWED_FUNCTIONS) | set(ALLOWED_CONSTANTS)
    if condition:  # first: `alpha**exp(10)` is no condition, whatever else is wrong with it
        _refuse_non_condition(tree, text, what)
    _check_ast(tree, allowed, condition, what)
    _constant_bits(tree, text, what)
    _degree(tree, text, what)
    minmax = sum(len(n.args) for n in ast.walk(tree)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("Max", "Min"))
    if minmax > _MAX_MINMAX_ARGS:
        raise ParameterError(f"{what}: Max and Min take at most {_MAX_MINMAX_ARGS} arguments in all, got {minmax}")
    global_dict = {"__builtins__": {}, **ALLOWED_FUNCTIONS, **ALLOWED_CONSTANTS, **PARSER_NAMES}
    local_dict = {**_range_indices(tree), **symbols}
    end = time.monotonic() + _PARSE_DEADLINE_S
    try:
        with deadline(_PARSE_DEADLINE_S, f"parsing {what}"):
            out = parse_expr(text, local_dict=local_dict, global_dict=global_dict,
                             transformations=(auto_number, convert_xor), evaluate=True)
    except DeadlineExceeded:
        if time.monotonic() < end:  # an outer deadline: not this parse's
            raise
        raise ParameterError(f"{what}: SymPy took more than {_PARSE_DEADLINE_S:g} s to parse {text!r}") from None
    except Exception as err:  # a whitelisted text that SymPy still rejects (e.g. wrong argument count)
        raise ParameterError(f"{what}: cannot parse {text!r}: {type(err).__name__}: {err}") from None
    if condition:
        if isinstance(out, bool):
            out = sp.true if out else sp.false
        if not is_condition(out):
            raise ParameterError(f"{what}: expected a condition such as 'eta*lam < 1', got {sp.sstr(out)}")
    elif not isinstance(out, sp.Expr):
        raise ParameterError(f"{what}: expected an expression, got {sp.sstr(out)}")
    return out


_QUANTITY_CALL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$", re.S)


def quantity_bind(text: str, fam: Family, parse: Callable[[str], sp.Basic],
                  what: str = "--bind") -> FromFamily | None:
    """`renyi(alpha=a)`: the family's own quantity at other arguments (keywords are its parameters, values expressions
    that `parse` reads), for `--bind NAME=...` and a paper file's `where`; None where the text is not such a call.
    Errors are ParameterErrors naming `what` and the text."""
    match = _QUANTITY_CALL.match(text)
    if match is None or match.group(1) not in {q.value for q in fam.truths}:
        return None
    quantity = Quantity(match.group(1))
    try:
        call = ast.parse(f"f({match.group(2)})", mode="eval").body
    except SyntaxError:
        raise ParameterError(f"{what} {text}: write the arguments as {quantity.value}(name=expr, ...)") from None
    if call.args:
        raise ParameterError(f"{what} {text}: give {quantity.value}'s arguments by name, e.g. "
                             f"{quantity.value}({fam.parameter_names(quantity)[0]}=...)")
    allowed = set(fam.parameter_names(quantity))
    at = {}
    for kw in call.keywords:
        if kw.arg not in allowed:
            raise ParameterError(f"{what} {text}: '{kw.arg}' is not a parameter of {fam.name}'s {quantity.value} "
                                 f"({', '.join(sorted(allowed))})")
        at[kw.arg] = parse(ast.unparse(kw.value))
    return FromFamily(quantity, at)
