"""The certificate of a claim and the branch and bound that decides it (`certify`, `Certificate`)."""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mpmath
import sympy as sp

from verify.certify.boxes import BoxSpec, _Dim, _env, _known_symbols, _make_dims, _tighten
from verify.certify.intervals import (
    DEFAULT_PREC,
    Env,
    Interval,
    _add,
    _finite,
    _mul,
    _need_flint,
    _negative,
    _positive,
    arb,
    ctx,
)
from verify.certify.translate import Compiled, _compile_condition, _compiled, _fold
from verify.errors import DeadlineExceeded, ParameterError
from verify.limits import deadline
from verify.model import PRECISION_DPS, evaluate
from verify.parsing import parse_expression

# ---- the certificate ------------------------------------------------------------------------------------------

CERTIFIED, COUNTEREXAMPLE, INCONCLUSIVE = "CERTIFIED", "COUNTEREXAMPLE", "INCONCLUSIVE"
RELATIONS = ("<=", "<", ">=", ">")
DEFAULT_BUDGET_S = 60.0
BUDGET = "the certification's budget (budget_s)"  # what a DeadlineExceeded of the budget names


@dataclass(frozen=True)
class Certificate:
    """The outcome of a certification: CERTIFIED, COUNTEREXAMPLE or INCONCLUSIVE, with its evidence."""

    status: str
    relation: str  # e.g. "lhs <= rhs"
    lhs: str
    rhs: str
    box: dict[str, tuple[str, str]]
    assumptions: str | None = None
    claim: str | None = None
    boxes_examined: int = 0
    certified_boxes: int = 0
    discarded_boxes: int = 0  # the assumptions certainly fail there
    monotone_reductions: int = 0  # boxes replaced by a face by the monotonicity test
    counterexample: dict[str, float | int] | None = None
    counterexample_values: dict[str, str] | None = None  # lhs, rhs, rhs - lhs at 50 digits (mpmath)
    undecided: tuple[dict[str, tuple[float, float]], ...] = ()
    undecided_count: int = 0
    stopped_by: str | None = None  # max_boxes, budget_s or min_width when INCONCLUSIVE
    seconds: float = 0.0
    note: str = ""

    @property
    def certified(self) -> bool:
        return self.status == CERTIFIED

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "claim": self.claim, "relation": self.relation, "lhs": self.lhs,
            "rhs": self.rhs, "assumptions": self.assumptions,
            "box": {k: [lo, hi] for k, (lo, hi) in self.box.items()},
            "boxes_examined": self.boxes_examined, "certified_boxes": self.certified_boxes,
            "discarded_boxes": self.discarded_boxes, "monotone_reductions": self.monotone_reductions,
            "counterexample": dict(self.counterexample) if self.counterexample is not None else None,
            "counterexample_values": dict(self.counterexample_values) if self.counterexample_values else None,
            "undecided": [{k: [lo, hi] for k, (lo, hi) in b.items()} for b in self.undecided],
            "undecided_count": self.undecided_count, "stopped_by": self.stopped_by,
            "seconds": round(self.seconds, 6), "note": self.note,
        }

    def summary(self) -> str:
        """A few lines for a terminal."""
        head = f"{self.status}: {self.relation}" + (f" [{self.claim}]" if self.claim else "")
        lines = [head, f"  lhs = {self.lhs}", f"  rhs = {self.rhs}"]
        if self.assumptions:
            lines.append(f"  assuming {self.assumptions}")
        lines.append("  box: " + ", ".join(f"{k} in [{lo}, {hi}]" for k, (lo, hi) in self.box.items()))
        lines.append(f"  {self.boxes_examined} boxes examined, {self.certified_boxes} certified, "
                     f"{self.discarded_boxes} outside the assumptions, {self.monotone_reductions} reduced by "
                     f"monotonicity; {self.seconds:.3f} s")
        if self.counterexample is not None:
            point = ", ".join(f"{k}={v!r}" for k, v in self.counterexample.items())
            lines.append(f"  counterexample at {point}")
            for k, v in (self.counterexample_values or {}).items():
                lines.append(f"    {k} = {v}")
        if self.status == INCONCLUSIVE:
            lines.append(f"  stopped by {self.stopped_by}; {self.undecided_count} undecided boxes, e.g.")
            for b in self.undecided:
                lines.append("    " + ", ".join(f"{k} in [{lo!r}, {hi!r}]" for k, (lo, hi) in b.items()))
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


# ---- branch and bound -----------------------------------------------------------------------------------------

def _unify_symbols(exprs: Sequence[sp.Basic]) -> tuple[list[sp.Basic], dict[str, sp.Symbol]]:
    """One symbol per name (the first seen), so that differentiation and evaluation agree."""
    canon: dict[str, sp.Symbol] = {}
    for e in exprs:
        for s in sorted(e.free_symbols, key=lambda s: (s.name, str(s.assumptions0))):
            canon.setdefault(s.name, s)
    out = [e.xreplace({s: canon[s.name] for s in e.free_symbols}) for e in exprs]
    return out, canon


def _reduce(diff: sp.Expr, env: Env, prec: int) -> tuple[sp.Expr, list[str]]:
    """Pull out common factors of `diff` and drop those of certain sign over the whole box."""
    dropped: list[str] = []
    try:
        factored = sp.factor_terms(diff)
    except Exception:  # pragma: no cover - factor_terms is total on expressions
        return diff, dropped
    if not isinstance(factored, sp.Mul):
        return factored, dropped
    keep, sign = [], 1
    for a in factored.args:
        if a.is_Number:
            if a.is_zero:
                return sp.Integer(0), dropped
            sign *= 1 if a > 0 else -1
            continue
        try:
            with ctx.workprec(prec):
                iv = _compiled(a, prec)(env)
        except ParameterError:
            keep.append(a)
            continue
        if _finite(iv) and _positive(iv):
            dropped.append(sp.sstr(a))
        elif _finite(iv) and _negative(iv):
            sign = -sign
            dropped.append(sp.sstr(a))
        else:
            keep.append(a)
    reduced = sp.Mul(*keep)
    return (reduced if sign > 0 else -reduced), dropped


def _normalize_relation(relation: str) -> str:
    rel = relation.strip().replace("≤", "<=").replace("≥", ">=").replace("=<", "<=").replace("=>", ">=")
    if rel not in RELATIONS:
        raise ParameterError(f"relation must be one of {', '.join(RELATIONS)}, got {relation!r}")
    return rel


def _as_expr(x: Any, what: str) -> sp.Expr:
    try:
        e = sp.sympify(x, strict=True) if not isinstance(x, sp.Basic) else x
    except (sp.SympifyError, TypeError) as err:
        raise ParameterError(f"{what} is not an expression: {x!r} ({err})") from None
    if not isinstance(e, sp.Expr):
        raise ParameterError(f"{what} must be an expression, got {type(e).__name__} '{sp.sstr(e)}'")
    return e


def certify(lhs: Any, rhs: Any, box: BoxSpec, relation: str = "<=", *, assumptions: sp.Basic | None = None,
            min_width: float = 1e-10, max_boxes: int = 200_000, budget_s: float = DEFAULT_BUDGET_S,
            prec: int = DEFAULT_PREC,
            integers: Iterable[str] = (), log_form: bool = False, monotonicity: bool = True,
            split: str = "width", keep_undecided: int = 5, claim: str | None = None) -> Certificate:
    """Decide `lhs <relation> rhs` for every point of `box` where `assumptions` hold.

    `lhs`, `rhs` and `assumptions` are SymPy objects or text as the CLI takes it ("2*x**2", "eta*lam < 1"; parsed
    safely, over the symbols `box` names). `box` maps every symbol of lhs, rhs and assumptions to (lo, hi) (floats,
    ints, or exact strings such as "1e-9" or "1/3"; a single number fixes the symbol). Symbols declared integer in
    SymPy (or named in `integers`) range over the integers of their interval. `min_width` is the relative width (per
    dimension, in log scale for intervals spanning orders of magnitude) below which a box is not bisected further;
    `max_boxes` and `budget_s` cap the work; `budget_s` is a wall-clock cap on the whole certification (a
    verify.limits deadline: it stops a long evaluation of one box too, and the preparation of the claim), and a
    certification it stops is INCONCLUSIVE with what was decided so far. With `log_form` the logarithms of the two
    sides are compared (expanded), which removes the dependency between products and powers; it needs both sides
    positive (where a logarithm's argument is not certainly positive the box stays undecided). A CERTIFIED answer
    is rigorous (Arb interval arithmetic at `prec` bits); a COUNTEREXAMPLE is a point where the relation certainly
    fails, with both sides re-evaluated by mpmath at 50 digits; INCONCLUSIVE lists a few undecided boxes.
    """
    _need_flint()
    start = time.perf_counter()
    rel = _normalize_relation(relation)
    if any(isinstance(x, str) for x in (lhs, rhs, assumptions)):  # text as the CLI takes it, parsed safely
        known = _known_symbols()
        syms = {name: known.get(name, sp.Symbol(name, real=True)) for name in box}
        lhs, rhs = (parse_expression(x, syms, what=what) if isinstance(x, str) else x
                    for x, what in ((lhs, "lhs"), (rhs, "rhs")))
        if isinstance(assumptions, str):
            assumptions = parse_expression(assumptions, syms, condition=True, what="assumptions")
    lhs_e, rhs_e = _as_expr(lhs, "lhs"), _as_expr(rhs, "rhs")
    cond = sp.true if assumptions is None else sp.sympify(assumptions)
    if isinstance(cond, bool):
        cond = sp.true if cond else sp.false
    if not isinstance(cond, sp.logic.boolalg.Boolean) or isinstance(cond, sp.Symbol):
        raise ParameterError(f"assumptions must be a condition such as eta*lam < 1, got '{sp.sstr(cond)}'")
    declared_integer = {s.name for e in (lhs_e, rhs_e, cond) for s in e.free_symbols if s.is_integer}
    (lhs_e, rhs_e, cond), canon = _unify_symbols([lhs_e, rhs_e, cond])
    small, big = (lhs_e, rhs_e) if rel in ("<=", "<") else (rhs_e, lhs_e)
    if log_form:
        diff = sp.expand_log(sp.log(big), force=True) - sp.expand_log(sp.log(small), force=True)
    else:
        diff = big - small

    integer = declared_integer | set(integers)
    all_dims = _make_dims(_tighten(box, cond), sorted(canon), integer)
    by_name = {d.name: d for d in all_dims}
    end = start + budget_s
    search, dropped, interrupted = None, [], ""
    try:
        with deadline(end - time.perf_counter(), BUDGET):  # the budget's end, whatever came before
            reduced, dropped = _reduce(diff, _root_env(all_dims), prec)
            search = _Search(reduced, cond, [by_name[n] for n in sorted({s.name for s in reduced.free_symbols}
                                                                          | {s.name for s in cond.free_symbols})],
                             canon, strict=rel in ("<", ">"), prec=prec, min_width=min_width,
                             monotonicity=monotonicity, split=split)
            with ctx.workprec(prec):
                search.run(max_boxes, end)
    except DeadlineExceeded:
        if time.perf_counter() < end:  # an enclosing deadline's, not this budget's
            raise
        interrupted = f"the budget of {budget_s:g} s ran out " + ("while the claim was prepared" if search is None
                                                                  else "inside the evaluation of a box")
    if search is None:  # stopped before any box: the whole box is undecided
        search = _Search.unstarted(all_dims, cond)

    notes = [f"factors of certain sign dropped: {', '.join(dropped)}"] if dropped else []
    if log_form:
        notes.insert(0, "compared log(rhs) with log(lhs)")
    if search.witness is not None:
        status, stopped_by, undecided = COUNTEREXAMPLE, None, []
    elif search.heap or search.undecided or interrupted:
        status, stopped_by = INCONCLUSIVE, "budget_s" if interrupted else search.stopped_by or "min_width"
        undecided = search.undecided + [b for _, _, b in sorted(search.heap)]
        notes += [interrupted] if interrupted else []
    else:
        status, stopped_by, undecided = CERTIFIED, None, []
        if search.stats["certified"] == 0 and search.has_cond:
            notes.append("the assumptions exclude the whole box (vacuous)")
    point, values = None, None
    if search.witness is not None:
        point = {d.name: search.witness.get(d.name, d.sample(d.lo, d.hi)) for d in all_dims}
        values = _cross_check(lhs_e, rhs_e, point, end - time.perf_counter())
    rel_text = f"lhs {rel} rhs"
    return Certificate(
        status=status, relation=rel_text, lhs=sp.sstr(lhs_e), rhs=sp.sstr(rhs_e),
        box={d.name: (_show(box[d.name], 0), _show(box[d.name], 1)) for d in all_dims},
        assumptions=sp.sstr(cond) if search.has_cond else None, claim=claim,
        boxes_examined=search.stats["examined"], certified_boxes=search.stats["certified"],
        discarded_boxes=search.stats["discarded"], monotone_reductions=search.stats["monotone"],
        counterexample=point, counterexample_values=values,
        undecided=tuple({d.name: (lo, hi) for d, (lo, hi) in zip(search.dims, b, strict=True)}
                        for b in undecided[:keep_undecided]),
        undecided_count=len(undecided), stopped_by=stopped_by, seconds=time.perf_counter() - start,
        note="; ".join(notes))


def _cross_check(lhs: sp.Expr, rhs: sp.Expr, point: Mapping[str, float | int], seconds: float) -> dict[str, str]:
    """`_point_values` within what is left of the budget (the interval verdict stands without it)."""
    try:
        with deadline(seconds, BUDGET):
            return _point_values(lhs, rhs, point)
    except DeadlineExceeded:
        return {"error": "no time left in the budget for mpmath's cross-check at 50 digits"}


def _forms(expr: sp.Expr) -> list[sp.Expr]:
    """Equivalent forms of `expr` whose enclosures are intersected: itself and, for a rational function, the
    cancelled quotient (one occurrence of each variable less often, e.g. 1/n - 1/(n+1) -> 1/(n^2 + n))."""
    forms = [expr]
    try:
        if expr.is_rational_function() and not expr.is_polynomial():
            alt = sp.factor_terms(sp.cancel(expr))
            if alt != expr and sp.count_ops(alt) <= 3 * sp.count_ops(expr) + 20:
                forms.append(alt)
    except (sp.PolynomialError, TypeError, ValueError, RecursionError):
        pass
    return forms


def _multi(fns: list[Compiled]) -> Compiled:
    return fns[0] if len(fns) == 1 else _fold(_intersect, fns)


def _intersect(a: Interval, b: Interval) -> Interval:
    """Intersect two enclosures of one function; `a` decides where the function is defined."""
    if not (_finite(a) and _finite(b)):
        return a
    return (a[0].max(b[0]), a[1].min(b[1]))


CONFIRM_PRECS = (4, 16, 64)  # multiples of the working precision at which a point's non-finite enclosure is redone


class _Search:
    """Best-first interval branch and bound of `f >= 0` (or `f > 0`) over the feasible part of a box."""

    def __init__(self, f: sp.Expr, cond: sp.Basic, dims: list[_Dim], canon: Mapping[str, sp.Symbol], *,
                 strict: bool, prec: int, min_width: float, monotonicity: bool, split: str = "width"):
        if split not in ("width", "smear"):
            raise ParameterError(f"split must be 'width' or 'smear', got {split!r}")
        self.dims, self.strict, self.min_width, self.smear = dims, strict, min_width, split == "smear"
        self.names = [d.name for d in dims]
        self.f0 = _compiled(f, prec)  # the form itself: decides counterexamples
        self.form, self.prec, self._finer = f, prec, {}
        self.f = _multi([_compiled(form, prec) for form in _forms(f)])
        self.has_cond = cond is not sp.true
        self.test = _compile_condition(cond, prec)
        cond_names = {s.name for s in cond.free_symbols}
        self.in_cond = [d.name in cond_names for d in dims]
        f_names = {s.name for s in f.free_symbols}
        self.grads: dict[int, Compiled] = {}
        if monotonicity:
            for k, d in enumerate(dims):
                if d.name not in f_names or d.lo == d.hi:
                    continue
                try:
                    g = sp.factor_terms(sp.diff(f, canon[d.name]))
                    if g.has(sp.Derivative, sp.Subs, sp.Heaviside, sp.sign, sp.DiracDelta, sp.re, sp.im):
                        continue
                    self.grads[k] = _multi([_compiled(form, prec) for form in _forms(g)])
                except (ParameterError, TypeError, ValueError, NotImplementedError):
                    continue
        # the mean-value form needs the derivative in every variable of f
        self.f_dims = [k for k, d in enumerate(dims) if d.name in f_names and d.lo != d.hi]
        self.mean_value = monotonicity and len(self.grads) == len(self.f_dims)
        self.stats = {"examined": 0, "certified": 0, "discarded": 0, "monotone": 0}
        self.heap: list[tuple[float, int, tuple]] = [(-math.inf, 0, tuple((d.lo, d.hi) for d in dims))]
        self.counter = 1
        self.undecided: list[tuple] = []
        self.stopped_by: str | None = None
        self.witness: dict[str, float | int] | None = None

    @classmethod
    def unstarted(cls, dims: Sequence[_Dim], cond: sp.Basic) -> _Search:
        """A search stopped before its first box: the whole box undecided, nothing examined."""
        search = cls.__new__(cls)
        search.dims, search.has_cond, search.witness = list(dims), cond is not sp.true, None
        search.heap, search.undecided, search.stopped_by = [], [tuple((d.lo, d.hi) for d in dims)], "budget_s"
        search.stats = {"examined": 0, "certified": 0, "discarded": 0, "monotone": 0}
        return search

    def ok(self, iv: Interval) -> bool:  # the claim certainly holds on the enclosure (both ends finite)
        return _finite(iv) and (bool(iv[0] > 0) if self.strict else bool(iv[0] >= 0))

    def bad(self, iv: Interval) -> bool:  # the claim certainly fails on the enclosure, or a side is undefined there
        if iv[0].is_nan() or iv[1].is_nan():
            return True
        return bool(iv[1] <= 0) if self.strict else bool(iv[1] < 0)

    def fails_at(self, penv: Env, value: Interval | None = None) -> bool:
        """True if the claim certainly fails at a point (`penv`, a degenerate box; `value`: the form's enclosure
        there, if computed): its enclosure lies on the wrong side, or the form is no real number there. An enclosure
        that is not finite is evaluated again at up to CONFIRM_PRECS times the working precision first: a ball that
        lost its digits (2 - erfc(x) around 0 at 64 bits, whose erfcinv is undefined) is no counterexample; only
        one still undefined at the finest precision is."""
        iv = self.f0(penv) if value is None else value
        for factor in CONFIRM_PRECS:
            if _finite(iv):
                break
            prec = self.prec * factor
            if prec not in self._finer:
                self._finer[prec] = _compiled(self.form, prec)
            with ctx.workprec(prec):
                iv = self._finer[prec](penv)
        return self.bad(iv)

    def gradient(self, env: Env) -> dict[int, Interval]:
        return {k: g(env) for k, g in self.grads.items()}

    def collapse(self, bx: list, grad: dict[int, Interval], feasible: bool | None) -> bool:
        """Replace variables in which f is monotone by the end where f is smallest (the minimum's face)."""
        changed = False
        for k, gv in grad.items():
            lo, hi = bx[k]
            if lo == hi or (feasible is not True and self.in_cond[k]):
                continue
            if gv[0] >= 0:
                bx[k] = (lo, lo)
                changed = True
            elif gv[1] <= 0:
                bx[k] = (hi, hi)
                changed = True
        return changed

    def run(self, max_boxes: int, end: float) -> None:
        """Examine boxes, best first, until all are decided, a witness is found or a cap is hit (`end`: the
        time.perf_counter() of the budget's end, looked at between boxes; a deadline that stops a box's evaluation
        puts that box back among the undecided ones before it propagates)."""
        self.box: tuple | None = None  # the box being examined: undecided if its examination is stopped
        try:
            self._examine(max_boxes, end)
        except BaseException:
            if self.box is not None:
                self.undecided.append(self.box)
                self.stopped_by = "budget_s"
            raise

    def _examine(self, max_boxes: int, end: float) -> None:
        dims, stats = self.dims, self.stats
        while self.heap:
            self.box = None
            if stats["examined"] >= max_boxes:
                self.stopped_by = "max_boxes"
                return
            if time.perf_counter() > end:
                self.stopped_by = "budget_s"
                return
            self.box = self.heap[0][2]
            _, _, bx = heapq.heappop(self.heap)
            stats["examined"] += 1
            env = _env(dims, bx)
            feasible = self.test(env) if self.has_cond else True
            if feasible is False:
                stats["discarded"] += 1
                continue
            fv = self.f(env)
            if self.ok(fv):
                stats["certified"] += 1
                continue
            grad: dict[int, Interval] = {}
            if self.grads and _finite(fv):
                grad = self.gradient(env)
                work, reduced = list(bx), False
                for _ in range(len(dims)):
                    if not self.collapse(work, grad, feasible):
                        break
                    reduced = True
                    env = _env(dims, work)
                    grad = self.gradient(env)
                if reduced:
                    stats["monotone"] += 1
                    bx = tuple(work)
                    fv = self.f(env)
                    if self.ok(fv):
                        stats["certified"] += 1
                        continue
            point = tuple(d.sample(lo, hi) for d, (lo, hi) in zip(dims, bx, strict=True))  # inside bx
            penv = _env(dims, [(x, x) for x in point])
            fc = self.f0(penv)
            if self.mean_value and grad and _finite(fv):  # f(bx) in f(c) + sum_k df/dx_k(bx) (bx_k - c_k)
                mv = fc
                for k in self.f_dims:
                    lo, hi = bx[k]
                    if lo != hi:
                        c = arb(point[k])
                        mv = _add(mv, _mul(grad[k], (arb(lo) - c, arb(hi) - c)))
                fv = _intersect(fv, mv)
                if self.ok(fv):
                    stats["certified"] += 1
                    continue
            # a counterexample must lie in the declared box (the root box is rounded outward by an ulp)
            witness = tuple(d.clamp(x) for d, x in zip(dims, point, strict=True))
            if witness != point:
                penv = _env(dims, [(x, x) for x in witness])
                fc = self.f0(penv)
            if self.bad(fc) and self.fails_at(penv, fc) and (not self.has_cond or self.test(penv) is True):
                self.witness = dict(zip(self.names, witness, strict=True))
                return
            choice = self.choose(bx, grad, feasible)
            if choice is None:
                if self.corner_witness(dims, bx):  # a claim false only on the box's boundary (x < 1 at x = 1)
                    return
                self.undecided.append(bx)
                self.stopped_by = self.stopped_by or "min_width"
                continue
            k, halves = choice
            key = float(fv[0]) if fv[0].is_finite() else -math.inf
            for half in halves:
                heapq.heappush(self.heap, (key, self.counter, bx[:k] + (half,) + bx[k + 1:]))
                self.counter += 1
        self.box = None

    def corner_witness(self, dims: Sequence, bx: tuple) -> bool:
        """Try the corners of a box too small to split as counterexamples (at most 2^6 of them; the midpoint was
        tried): sets `witness` and returns True where one is certainly on the wrong side."""
        sides = [sorted({d.clamp(lo), d.clamp(hi)}) for d, (lo, hi) in zip(dims, bx, strict=True)]
        if math.prod(len(v) for v in sides) > 64:
            return False
        for corner in itertools.product(*sides):
            penv = _env(dims, [(x, x) for x in corner])
            if self.fails_at(penv) and (not self.has_cond or self.test(penv) is True):
                self.witness = dict(zip(self.names, corner, strict=True))
                return True
        return False

    def choose(self, bx: tuple, grad: Mapping[int, Interval], feasible: bool | None) -> tuple[int, tuple] | None:
        """The dimension to bisect, and its halves; None when no dimension may be split.

        Widths are relative to the root box, in log scale for intervals spanning orders of magnitude. Where the
        assumptions are undecided the widest variable of the assumptions is cut (nothing else can decide
        them); otherwise the widest variable, or with split="smear" and known derivatives, the variable with
        the largest |df/dx| * width (its contribution to the width of the enclosure).
        """
        candidates = [k for k, (d, (lo, hi)) in enumerate(zip(self.dims, bx, strict=True))
                      if lo != hi and (d.integer or d.width(lo, hi) >= self.min_width)]
        if feasible is None:
            in_cond = [k for k in candidates if self.in_cond[k]]
            candidates = in_cond or candidates
        best, best_key = None, (-1.0, -1.0)
        for k in candidates:
            d, (lo, hi) = self.dims[k], bx[k]
            w = d.width(lo, hi)
            key = (w, w)
            if self.smear and feasible is True and k in grad:
                g = grad[k]
                smear = max(abs(float(g[0])), abs(float(g[1]))) * (hi - lo) if _finite(g) else math.inf
                key = (smear if not math.isnan(smear) else math.inf, w)
            if key > best_key:
                halves = d.split(lo, hi)
                if halves is not None:
                    best, best_key = (k, halves), key
        return best


def _root_env(dims: Sequence[_Dim]) -> dict[str, Interval]:
    return _env(dims, [(d.lo, d.hi) for d in dims])


def _show(spec: Any, i: int) -> str:
    v = spec[i] if isinstance(spec, (tuple, list)) else spec
    return repr(v) if isinstance(v, float) else str(v)


def _point_values(lhs: sp.Expr, rhs: sp.Expr, point: Mapping[str, float | int]) -> dict[str, str]:
    values = {k: float(v) for k, v in point.items()}
    try:
        lv, rv = evaluate(lhs, values), evaluate(rhs, values)
    except Exception as err:  # the interval verdict stands; mpmath is only a cross-check
        return {"error": f"mpmath could not evaluate: {err}"}
    with mpmath.workdps(PRECISION_DPS):
        return {"lhs": mpmath.nstr(lv, 30), "rhs": mpmath.nstr(rv, 30), "rhs_minus_lhs": mpmath.nstr(rv - lv, 30)}
