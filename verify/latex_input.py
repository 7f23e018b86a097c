r"""Bounds and conditions pasted from a paper's LaTeX source, read into SymPy safely.

The text is tidied (spacing, \left \right, \mathrm{..} wrappers), parsed by a small LALR grammar (lark: linear
time, no ambiguity left to chance), translated to the bound language's SymPy text, and that text goes through
`verify.parsing.parse_expression`: the same whitelist, size, degree and deadline checks as typed SymPy input, so a
pasted `2^{2^{2^{100}}}` is refused at once.

How names are read (every reading that is not unique is an error listing the candidates, never a guess):
  * a symbol is a name of the mapping given, e.g. a family's parameters: `\alpha` reads as alpha, `\sigma_0` as
    sigma_0 or sigma0, `\eta_{t}` as eta_t or etat, `L_{\max}` as L_max or Lmax, `\mathrm{steps}` as steps;
    `\epsilon` and `\varepsilon` read as epsilon or eps, `\lambda` as lam (Python's keyword is no name), `\varphi`,
    `\vartheta`, `\varrho`, `\varsigma` as phi, theta, rho, sigma;
  * a run of letters is one symbol or a product of symbols (`nK` = n*K), whichever of these exists; a run with no
    reading (`eps` in a bound without eps, not e*p*s) or with two (`ab` where a, b and ab are all symbols) is an error;
  * `e` and `\mathrm{e}` are Euler's number (`e^{x}` = exp(x)); where e is also a symbol of the bound, a bare `e` is
    ambiguous (an error): write `\mathrm{e}` or `\exp` for the number. `\pi` is pi;
  * a function's argument is what follows in ( ), in { } (SymPy's `\log{\left(x \right)}^{2}` is log(x)**2),
    or else the product that follows (`\log nK` = log(n*K), `\log n \cdot K` = log(n)*K);
  * a symbol before a parenthesis multiplies it (`T\epsilon(e^\epsilon - 1)`); a function is one of \exp, \log,
    \ln (natural logarithms both), \sqrt{..}, \sqrt[n]{..}, \min, \max (with ( ) or \{ \}), \Phi (the standard normal
    CDF), \Phi^{-1}, \erf, \erfc, \tanh (also as \operatorname{erfc} or \mathrm{erfc}), \lfloor\rfloor, \lceil\rceil,
    \lvert\rvert, \binom; any other name before a parenthesis is an error;
  * `\sum_{k=1}^{T} body` is a finite sum (verify.bounds.FiniteSum) and `\min_{1 \le k \le K} body` a minimum
    over the integers of the range (verify.bounds.RangeMin), of the product that follows (\cdot and / included);
  * a product written without an operator binds tighter than / (`a / b x` is a/(b x)), \cdot and \times as *;
  * a condition is comparisons (<, >, \le, \leq, \leqslant, \ge, \geq, \geqslant; chains such as 0 < \eta < 1)
    joined by `,`, `;`, \wedge, \land or \text{ and }.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import lark
import sympy as sp

from verify.errors import ParameterError, did_you_mean
from verify.parsing import _MAX_DEPTH, _MAX_TEXT, parse_expression

GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "zeta", "eta", "theta", "vartheta", "iota",
         "kappa", "lambda", "mu", "nu", "xi", "pi", "rho", "varrho", "sigma", "varsigma", "tau", "upsilon", "phi",
         "varphi", "chi", "psi", "omega", "Gamma", "Delta", "Theta", "Lambda", "Xi", "Pi", "Sigma", "Upsilon", "Psi",
         "Omega")
GREEK_NAMES: dict[str, tuple[str, ...]] = {  # the names a Greek letter reads as (the first that is a symbol)
    **{g: (g,) for g in GREEK}, "epsilon": ("epsilon", "eps"), "varepsilon": ("epsilon", "eps"),
    "lambda": ("lam",), "Lambda": ("Lam", "Lambda"), "vartheta": ("theta",), "varrho": ("rho",),
    "varsigma": ("sigma",), "varphi": ("phi",)}
FUNCTIONS = {"exp": "exp", "log": "log", "ln": "log", "erf": "erf", "erfc": "erfc", "tanh": "tanh", "Phi": "Phi"}
_WRAPPERS = r"mathrm|text|textrm|operatorname\*?|mathit|mathsf|mathnormal|textit|mathbf|bm|boldsymbol"
_MAX_RUN = 40  # letters in one run (each is read as one symbol or a product of symbols)

_GRAMMAR = r"""
start: relation (_sep relation)*
_sep: "," | ";" | _LAND
relation: expr (REL expr)*
expr: term (ADDOP term)*
term: signed (MULOP signed)*
?signed: "-" signed -> neg
       | "+" signed
       | bigsum
       | rangemin
       | product
product: power+
bigsum: SUM "_" "{" index "=" expr "}" "^" "{" expr "}" term
rangemin: MINMAX "_" "{" expr REL expr REL expr "}" term
index: WORD | GREEK
?power: atom | atom "^" "{" expr "}" -> pow
?atom: NUMBER -> number
     | name
     | "(" expr ")" -> paren
     | "[" expr "]" -> paren
     | "{" expr "}" -> group
     | FRAC arg arg -> frac
     | BINOM arg arg -> binom
     | SQRT "{" expr "}" -> sqrt
     | SQRT "[" expr "]" "{" expr "}" -> root
     | FUNC fargs -> call
     | FUNC "^" "{" expr "}" fargs -> powered_call
     | MINMAX "(" expr ("," expr)* ")" -> minmax
     | MINMAX "\\{" expr ("," expr)* "\\}" -> minmax
     | "\\lfloor" expr "\\rfloor" -> floor
     | "\\lceil" expr "\\rceil" -> ceiling
     | "\\lvert" expr "\\rvert" -> abs
name: (WORD | GREEK | WRAPPED) sub?
sub: "_" "{" subpart+ "}"
?subpart: WORD | NUMBER | GREEK | WRAPPED | MINMAX
arg: "{" expr "}" | NUMBER | WORD | GREEK
?fargs: "(" expr ")" -> paren
      | "{" expr "}" -> group
      | nparg
nparg: npower power*
?npower: npatom | npatom "^" "{" expr "}" -> pow
?npatom: NUMBER -> number
       | name
       | FRAC arg arg -> frac
       | SQRT "{" expr "}" -> sqrt
       | FUNC fargs -> call

_LAND: /\\(wedge|land)(?![A-Za-z])/
REL: "<" | ">" | "=" | /\\(leqslant|leq|le|geqslant|geq|ge|neq|ne|lt|gt)(?![A-Za-z])/
ADDOP: "+" | "-"
MULOP: "*" | "/" | /\\(cdot|times|div)(?![A-Za-z])/
NUMBER: /\d+(\.\d*)?|\.\d+/
WORD: /[A-Za-z]+/
GREEK: /\\(GREEKS)(?![A-Za-z])/
WRAPPED: /\\mathrm\{[A-Za-z][A-Za-z0-9]*\}/
FUNC: /\\(FUNCS)(?![A-Za-z])/
MINMAX: /\\(min|max)(?![A-Za-z])/
FRAC: /\\[dt]?frac(?![A-Za-z])/
BINOM: /\\[dt]?binom(?![A-Za-z])/
SQRT: /\\sqrt(?![A-Za-z])/
SUM: /\\sum(?![A-Za-z])/
%ignore /\s+/
""".replace("GREEKS", "|".join(sorted(GREEK, key=len, reverse=True))).replace(
    "FUNCS", "|".join(sorted(FUNCTIONS, key=len, reverse=True)))


@cache
def _parser() -> lark.Lark:
    """The LALR parser, built on first use (its tables take about half a second: importing this module stays light)."""
    return lark.Lark(_GRAMMAR, parser="lalr", maybe_placeholders=False)


_COMMANDS = frozenset({*GREEK, *FUNCTIONS, "min", "max", "frac", "dfrac", "tfrac", "binom", "dbinom", "tbinom",
                       "sqrt", "sum", "lfloor", "rfloor", "lceil", "rceil", "lvert", "rvert", "mathrm", "cdot",
                       "times", "div", "le", "leq", "leqslant", "ge", "geq", "geqslant", "lt", "gt", "neq", "ne",
                       "wedge", "land"})
_TIDY = (  # (pattern, replacement), in order
    (r"(?<!\\)%[^\n]*", " "),  # a comment
    (r"\\(?:text|textrm|mbox|mathrm)\s*\{\s*and\s*\}", r" \\land "),
    (r"\\left\s*\|", r"\\lvert "), (r"\\right\s*\|", r"\\rvert "),
    (r"\\(?:left|right)\s*\.", " "), (r"\\(?:left|right|[bB]igg?[lrm]?)(?![A-Za-z])", " "),
    (r"\\(?:quad|qquad|displaystyle|textstyle|nonumber|notag|limits|nolimits)(?![A-Za-z])", " "),
    (r"\\[,;:! ]|~|&|\\\\", " "),
)


@dataclass(frozen=True)
class Reading:
    """What a text was read as: SymPy's text of the expression and its LaTeX re-typeset by SymPy."""

    sympy: str
    latex: str

    def __str__(self) -> str:
        return f"{self.sympy}   [LaTeX: {self.latex}]"

    def to_dict(self) -> dict[str, str]:
        return {"sympy": self.sympy, "latex": self.latex}


def reading(expr: sp.Basic) -> Reading:
    """How `expr` reads back: SymPy text and LaTeX (print it where a user's text was parsed)."""
    return Reading(sp.sstr(expr), sp.latex(expr))


def parse_latex_expression(text: str, symbols: Mapping[str, sp.Symbol], *, condition: bool = False,
                           what: str = "bound") -> sp.Basic:
    r"""Read LaTeX `text` (a bound, or with `condition` comparisons joined by `,` or \wedge) over `symbols`: the
    contract of verify.parsing.parse_expression (a one-line ParameterError naming `what` for any text it cannot read
    in exactly one way)."""
    return parse_expression(latex_to_text(text, symbols, condition=condition, what=what), symbols,
                            condition=condition, what=what)


def latex_to_text(text: str, symbols: Mapping[str, sp.Symbol], *, condition: bool = False,
                  what: str = "bound") -> str:
    """The bound language's SymPy text for LaTeX `text` (see the module's docstring for the reading)."""
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(f"{what}: empty")
    if len(text) > _MAX_TEXT:
        raise ParameterError(f"{what}: longer than {_MAX_TEXT} characters ({len(text)})")
    tidy = _tidy(text, what)
    try:
        tree = _parser().parse(tidy)
    except lark.exceptions.UnexpectedInput as err:
        raise ParameterError(f"{what}: cannot read the LaTeX '{_short(tidy)}': {_syntax(err, tidy)}") from None
    _check_depth(tree, what)
    out = _Emitter(symbols, what).start(tree, condition)
    if len(out) > _MAX_TEXT:
        raise ParameterError(f"{what}: longer than {_MAX_TEXT} characters once read as SymPy text ({len(out)})")
    return out


def _short(text: str) -> str:
    """`text` on one line, at most 60 characters (backslashes as typed: no repr)."""
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _syntax(err: lark.exceptions.UnexpectedInput, text: str) -> str:
    pos = getattr(err, "pos_in_stream", None)
    token = getattr(err, "token", None)
    if (isinstance(err, lark.exceptions.UnexpectedEOF) or pos is None or pos >= len(text)
            or getattr(token, "type", "") == "$END"):
        return "it ends too early (an unclosed brace or parenthesis, or a missing operand)"
    shown = str(token) if token is not None and str(token) else text[pos]
    return f"unexpected '{_short(shown)}' at character {pos + 1} (after '{_short(text[:pos].strip()[-30:])}')"


def _tidy(text: str, what: str) -> str:
    """Spacing, \\left \\right, $ delimiters and wrappers out; unbraced super- and subscripts braced; every command
    left a known one."""
    t = text.strip()
    for _ in range(2):  # `$x$.`: the punctuation, then the delimiters
        t = re.sub(r"[.,;]$", "", t).strip()
        t = re.sub(r"^(\$\$?|\\\(|\\\[)|(\$\$?|\\\)|\\\])$", "", t).strip()
    for pattern, repl in _TIDY:
        t = re.sub(pattern, repl, t)

    def wrapped(m: re.Match) -> str:
        inner = m.group(1)
        return f"\\{inner} " if inner in FUNCTIONS or inner in ("min", "max") else f"\\mathrm{{{inner}}}"

    t = re.sub(rf"\\(?:{_WRAPPERS})\s*\{{\s*([A-Za-z][A-Za-z0-9]*)\s*\}}", wrapped, t)
    t = re.sub(r"([\^_])\s*(\\[A-Za-z]+|[A-Za-z0-9])", r"\1{\2}", t)
    t = re.sub(r"(\\[dt]?frac|\\[dt]?binom)\s*([0-9A-Za-z])\s*([0-9A-Za-z])", r"\1{\2}{\3}", t)
    t = re.sub(r"(\\[dt]?frac|\\[dt]?binom|\\sqrt)\s*([0-9A-Za-z])", r"\1{\2}", t)
    for m in re.finditer(r"\\([A-Za-z]+|.?)", t):
        name = m.group(1)
        if name in ("{", "}"):
            continue
        if name == "mathrm" and re.match(r"\\mathrm\{[A-Za-z][A-Za-z0-9]*\}", t[m.start():]):
            continue
        if name in ("mathrm", *re.sub(r"\\\*\?", "", _WRAPPERS).split("|")):
            raise ParameterError(f"{what}: \\{name}{{...}} may hold a name (letters and digits), a function name or "
                                 "'and' only")
        if name not in _COMMANDS:
            raise ParameterError(f"{what}: the LaTeX command \\{name} is not supported here; supported: "
                                 f"{', '.join(chr(92) + c for c in sorted(_COMMANDS - set(GREEK) - {'mathrm'}))}, "
                                 "Greek letters, \\mathrm{name}, \\text{ and }")
    return t


def _check_depth(tree: lark.Tree, what: str) -> None:
    """At most four times parsing's nesting depth (a group of TeX adds several levels here), checked iteratively:
    the translation recurses along it, and parse_expression then checks the depth of the SymPy text."""
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > 4 * _MAX_DEPTH:
            raise ParameterError(f"{what}: nested too deeply (more than {4 * _MAX_DEPTH} levels of its syntax tree)")
        stack.extend((c, depth + 1) for c in node.children if isinstance(c, lark.Tree))


_ATOM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(\.\d*)?|\.\d+")
_OPS = {"<": "<", ">": ">", r"\lt": "<", r"\gt": ">", r"\le": "<=", r"\leq": "<=", r"\leqslant": "<=",
        r"\ge": ">=", r"\geq": ">=", r"\geqslant": ">="}


def _plain_token(tree: Any) -> lark.Token | None:
    """The WORD or GREEK token an expression consists of (no subscript, no operator), or None."""
    while isinstance(tree, lark.Tree) and tree.data in ("expr", "term", "product", "name") and len(tree.children) == 1:
        tree = tree.children[0]
    return tree if isinstance(tree, lark.Token) and tree.type in ("WORD", "GREEK") else None


def _wrap(text: str) -> str:
    """`text` in parentheses unless it is a name, a number or already in parentheses (the SymPy text stays short)."""
    return text if _ATOM.fullmatch(text) or _enclosed(text) else f"({text})"


def _enclosed(text: str) -> bool:
    """`text` is one parenthesised group: its first '(' closes at its last character."""
    if not text.startswith("("):
        return False
    depth = 0
    for k, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0:
            return k == len(text) - 1
    return False


class _Emitter:
    """The lark tree to SymPy text, names resolved against the symbols (and the indices of enclosing sums)."""

    def __init__(self, symbols: Mapping[str, sp.Symbol], what: str) -> None:
        self.symbols = symbols
        self.what = what
        self.scope: tuple[str, ...] = ()  # indices of the enclosing sums

    def fail(self, msg: str) -> None:
        raise ParameterError(f"{self.what}: {msg}")

    @property
    def known(self) -> set[str]:
        return set(self.symbols) | set(self.scope)

    def start(self, tree: lark.Tree, condition: bool) -> str:
        relations = tree.children
        if not condition:
            if len(relations) > 1 or len(relations[0].children) > 1:
                equation = len(relations) == 1 and str(relations[0].children[1]) == "="
                self.fail("comparisons and lists are only allowed in conditions (--assume); a bound is one "
                          "expression" + ("; paste the right-hand side of '=' only" if equation else ""))
            return self.emit(relations[0].children[0])
        parts = []
        for rel in relations:
            items = rel.children
            if len(items) == 1:
                self.fail(f"not a condition: {self.emit(items[0])} is an expression; write comparisons "
                          r"(<, \le, >, \ge) joined by ',' or \wedge, e.g. \eta\lambda < 1, K \ge 2")
            sides = [self.emit(x) for x in items[0::2]]
            for k, op in enumerate(items[1::2]):
                if str(op) not in _OPS:
                    self.fail(f"the relation '{op}' is not allowed; use <, \\le, >, \\ge")
                parts.append(f"({sides[k]} {_OPS[str(op)]} {sides[k + 1]})")
        return " & ".join(parts)

    def emit(self, node: Any) -> str:
        if isinstance(node, lark.Token):
            self.fail(f"unexpected '{node}'")
        method = getattr(self, f"_{node.data}", None)
        if method is None:
            self.fail(f"cannot read the construct '{node.data}'")
        return method(node, *node.children)

    def _expr(self, node: lark.Tree, *children: Any) -> str:
        out = self.emit(children[0])
        for op, term in zip(children[1::2], children[2::2], strict=True):
            out += f"{op}{self.emit(term)}"
        return out

    def _term(self, node: lark.Tree, *children: Any) -> str:
        first = self.emit(children[0])
        if len(children) == 1:
            return first
        out = _wrap(first)
        for op, factor in zip(children[1::2], children[2::2], strict=True):
            out += f"{'/' if str(op) in ('/', chr(92) + 'div') else '*'}{_wrap(self.emit(factor))}"
        return out

    def _neg(self, node: lark.Tree, x: Any) -> str:
        return f"-{_wrap(self.emit(x))}"

    def _product(self, node: lark.Tree, *factors: Any) -> str:
        parts = []
        for k, f in enumerate(factors):
            if k and isinstance(f, lark.Tree) and f.data == "number":
                self.fail(f"the number {f.children[0]} follows a factor with no operator between; write it first "
                          r"(2x) or with \cdot")
            follows = factors[k + 1] if k + 1 < len(factors) else None
            if isinstance(f, lark.Tree) and f.data == "name" and isinstance(follows, lark.Tree) \
                    and follows.data == "paren":
                parts.append(self._name(f, *f.children, call=True))
            else:
                parts.append(self.emit(f))
        return "*".join(_wrap(p) for p in parts) if len(parts) > 1 else parts[0]

    _nparg = _product

    def _number(self, node: lark.Tree, token: lark.Token) -> str:
        return str(token)

    def _paren(self, node: lark.Tree, x: Any) -> str:
        return _wrap(self.emit(x))

    _group = _paren

    def _pow(self, node: lark.Tree, base: Any, exponent: Any) -> str:
        """base^{exponent}; on a run of letters read as a product (`xe^{y}`) the power is the last factor's, as
        TeX sets it."""
        power, below = _wrap(self.emit(exponent)), self.emit(base)
        factors = below.split("*") if isinstance(base, lark.Tree) and base.data == "name" else []
        if len(factors) > 1:
            return "*".join([*factors[:-1], f"{factors[-1]}**{power}"])
        return f"{_wrap(below)}**{power}"

    def _arg(self, node: lark.Tree, x: Any) -> str:
        if isinstance(x, lark.Token):
            if x.type in ("NUMBER", "WORD") and len(str(x)) > 1:
                self.fail(f"an argument of \\frac or \\binom without braces is one character; write {{{x}}}")
            return self._name(node, x) if x.type != "NUMBER" else str(x)
        return self.emit(x)

    def _frac(self, node: lark.Tree, cmd: Any, num: Any, den: Any) -> str:
        return f"{_wrap(self.emit(num))}/{_wrap(self.emit(den))}"

    def _binom(self, node: lark.Tree, cmd: Any, n: Any, k: Any) -> str:
        return f"binomial({self.emit(n)}, {self.emit(k)})"

    def _sqrt(self, node: lark.Tree, cmd: Any, x: Any) -> str:
        return f"sqrt({self.emit(x)})"

    def _root(self, node: lark.Tree, cmd: Any, n: Any, x: Any) -> str:
        return f"{_wrap(self.emit(x))}**(1/{_wrap(self.emit(n))})"

    def _inner(self, node: Any) -> str:
        """A function's argument, without the parentheses or braces it came in."""
        grouped = isinstance(node, lark.Tree) and node.data in ("paren", "group")
        return self.emit(node.children[0] if grouped else node)

    def _call(self, node: lark.Tree, func: lark.Token, args: Any) -> str:
        return f"{FUNCTIONS[str(func)[1:]]}({self._inner(args)})"

    def _powered_call(self, node: lark.Tree, func: lark.Token, exponent: Any, args: Any) -> str:
        raw = self.emit(exponent)
        power = raw.replace(" ", "")
        if str(func) == r"\Phi" and power in ("-1", "-(1)"):
            return f"Phi_inv({self._inner(args)})"
        if str(func) == r"\Phi":
            self.fail(f"\\Phi^{{{power}}}: only \\Phi^{{-1}} (the normal quantile) is read")
        return f"{FUNCTIONS[str(func)[1:]]}({self._inner(args)})**{_wrap(raw)}"

    def _minmax(self, node: lark.Tree, func: lark.Token, *args: Any) -> str:
        return f"{'Max' if str(func) == chr(92) + 'max' else 'Min'}({', '.join(self.emit(a) for a in args)})"

    def _floor(self, node: lark.Tree, x: Any) -> str:
        return f"floor({self.emit(x)})"

    def _ceiling(self, node: lark.Tree, x: Any) -> str:
        return f"ceiling({self.emit(x)})"

    def _abs(self, node: lark.Tree, x: Any) -> str:
        return f"Abs({self.emit(x)})"

    def _bigsum(self, node: lark.Tree, cmd: Any, index: lark.Tree, lo: Any, hi: Any, body: Any) -> str:
        return self._over_range("Sum", r"\sum", index.children[0], lo, hi, body)

    def _rangemin(self, node: lark.Tree, cmd: Any, lo: Any, rel1: Any, index: Any, rel2: Any, hi: Any,
                  body: Any) -> str:
        r"""\min_{lo \le k \le hi} body: the least value over the integers k in [lo, hi] (bounds.RangeMin)."""
        token = _plain_token(index)
        if str(cmd) != r"\min" or token is None or {_OPS.get(str(rel1)), _OPS.get(str(rel2))} != {"<="}:
            self.fail(r"a minimum over a range is written \min_{1 \le k \le K} followed by its body, k a new "
                      "letter (no maximum over a range)")
        return self._over_range("MinOver", r"\min", token, lo, hi, body)

    def _over_range(self, function: str, shown: str, token: lark.Token, lo: Any, hi: Any, body: Any) -> str:
        """Sum / MinOver(body, k, lo, hi): k a new name, known in the body only."""
        name = GREEK_NAMES[str(token)[1:]][0] if token.type == "GREEK" else str(token)
        if name in self.known:
            self.fail(f"the index {name} of {shown} is already a symbol of this bound; use another letter")
        low, high = self.emit(lo), self.emit(hi)
        self.scope += (name,)
        try:
            inner = self.emit(body)
        finally:
            self.scope = self.scope[:-1]
        return f"{function}({inner}, {name}, {low}, {high})"

    # ---- names -----------------------------------------------------------------------------------------------

    def _name(self, node: lark.Tree, token: lark.Token, sub: lark.Tree | None = None, call: bool = False) -> str:
        suffix = "".join(self._subpart(p) for p in sub.children) if sub is not None else ""
        shown = str(token) + (f"_{{{''.join(str(p) for p in sub.children)}}}" if sub is not None else "")
        if token.type == "GREEK":
            base = str(token)[1:]
            if base == "pi" and not suffix:
                if "pi" in self.known:
                    self.fail(r"\pi is the number pi and a symbol of this bound; rename the symbol")
                return "pi"
            return self._one(shown, GREEK_NAMES[base], suffix, call)
        if token.type == "WRAPPED":
            inner = str(token)[len("\\mathrm{"):-1]
            if inner == "e" and not suffix:
                return "E"
            return self._one(shown, (inner,), suffix, call)
        return self._run(shown, str(token), suffix, call)

    def _subpart(self, part: lark.Token) -> str:
        text = str(part)
        if text.startswith("\\mathrm{"):
            return text[len("\\mathrm{"):-1]
        if text.startswith("\\"):
            return GREEK_NAMES.get(text[1:], (text[1:],))[0]
        return text

    def _candidates(self, bases: tuple[str, ...], suffix: str) -> list[str]:
        names = [f"{b}_{suffix}" for b in bases] + [f"{b}{suffix}" for b in bases] if suffix else list(bases)
        return list(dict.fromkeys(names))

    def _unknown(self, shown: str, names: list[str], call: bool) -> None:
        known = sorted(self.known)
        hint = "".join(dict.fromkeys(did_you_mean(n, known) for n in names))
        if call:
            self.fail(f"{shown}(...): {shown} is neither a known symbol nor a function{hint}; known symbols: "
                      f"{', '.join(known)}; functions: \\exp, \\log, \\ln, \\sqrt, \\min, \\max, \\Phi, \\Phi^{{-1}}, "
                      r"\erf, \erfc, \tanh")
        read = f" (read as {' or '.join(names)})" if names != [shown] else ""
        self.fail(f"{shown} is not a symbol of this bound{read}{hint}; known: {', '.join(known)}")

    def _one(self, shown: str, bases: tuple[str, ...], suffix: str, call: bool) -> str:
        names = self._candidates(bases, suffix)
        found = [n for n in names if n in self.known]
        if not found:
            self._unknown(shown, names, call)
        if len(found) > 1:
            self.fail(f"{shown} is ambiguous: it reads as {' or '.join(found)}, both symbols of this bound")
        return found[0]

    def _run(self, shown: str, letters: str, suffix: str, call: bool) -> str:
        """A run of letters (with a subscript on its last letter): one symbol, or a product of symbols and Euler's
        e, in exactly one way."""
        if len(letters) > _MAX_RUN:
            self.fail(f"a run of {len(letters)} letters ({letters[:20]}...); at most {_MAX_RUN}")
        known = self.known
        ways: list[list[list[str]]] = [[[]]] + [[] for _ in letters]  # ways[i]: up to 3 readings of letters[:i]
        for end in range(1, len(letters) + 1):
            for begin in range(end):
                piece = letters[begin:end]
                last = end == len(letters)
                names = [n for n in self._candidates((piece,), suffix if last else "") if n in known]
                if piece == "e" and not (last and suffix):
                    names.append("E")
                for n in names:
                    for way in ways[begin]:
                        if len(ways[end]) < 3:
                            ways[end].append([*way, n])
        readings = ways[len(letters)]
        if not readings:
            self._unknown(shown, self._candidates((letters,), suffix), call)
        if len(readings) > 1:
            shown_ways = [" * ".join("e (Euler's number)" if p == "E" else p for p in r) for r in readings]
            extra = " (write \\mathrm{e} or \\exp for Euler's number)" if any("E" in r for r in readings) else ""
            self.fail(f"{shown} is ambiguous: it reads as {' or as '.join(shown_ways)}{extra}; separate the "
                      "factors with spaces or \\cdot, or write one symbol as \\mathrm{name}")
        return "*".join(readings[0])
