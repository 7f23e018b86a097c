"""The bounds of Chen & Liu (seed 003) that are algorithms over a noise schedule: Lemma C.3's LSI recursion and its
closed form, Theorem 4.6's recursion (Corollary 4.5 applied step by step) in its printed, proof-text and corrected
forms, eq. (9) as printed, the corrected closed form, and the composition baseline. Each is a `RecursiveBound`, so the
catalog composes it like a closed form and the checker encloses it in Arb.

Indices (see shared/research/seed-003.md): step t = k m + j (epoch k, batch j), V_t = 1/c^(t) the inverse LSI
constant of the law of theta^(t) (V_0 = 0: the point-mass start), o_t = o(k, j) = o_rate^k (o_last if j = m - 1
else o). The differing record sits in batch j0 of every epoch; x_j0 bounds R_alpha/alpha of the last iterate given
j0, and the mixture over a uniform j0 is eq. (39): 1/(alpha - 1) log mean_j0 exp((alpha - 1) alpha x_j0).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import mpmath

from verify.errors import ResourceLimitError, count_text
from verify.recursion import RecursiveBound
from verify.truth.numbers import MP

MAX_STEPS = 30_000  # steps of a recursion (summed over the batch positions) one bound evaluation may run (~0.3 s)


def _affordable(steps: int) -> None:
    if steps > MAX_STEPS:
        raise ResourceLimitError(f"the recursion would run {count_text(steps)} steps (cap {MAX_STEPS})")


class _Schedule:
    """The numbers every batch position of one bound shares, each computed once: the noise o_t = o(k, j), and the
    inverse LSI constants V_t of Lemma C.3 by its recursion and by its closed form."""

    def __init__(self, N: Any, m: int, eta: Any, LF: Any, LT: Any, o: Any, o_last: Any, o_rate: Any) -> None:
        self.N, self.m, self.eta, self.LF, self.LT = N, m, eta, LF, LT
        self.o, self.o_last, self.o_rate = o, o_last, o_rate
        self._rates: dict[int, Any] = {}  # k -> o_rate^k
        self._powers: dict[int, Any] = {}  # p -> (L_F L_T)^(2 p)
        self._recursion: list = [N.mpf(0)]
        self._closed: dict[int, Any] = {}

    def noise(self, t: int) -> Any:
        k, j = divmod(t, self.m)
        if k not in self._rates:
            self._rates[k] = self.N.mpf(self.o_rate) ** k
        return (self.o_last if j == self.m - 1 else self.o) * self._rates[k]

    def inverse_lsi(self, total: int) -> list:
        """V_0 .. V_total of Lemma C.3: V_{t+1} = L_T^2 (L_F^2 V_t + 2 eta o_t), V_0 = 0."""
        _affordable(total)
        V, LF, LT = self._recursion, self.LF, self.LT
        if len(V) <= total:  # extended in a copy, then published whole: a schedule may be shared across threads
            V = list(V)
            for t in range(len(V) - 1, total):
                V.append(LT**2 * (LF**2 * V[-1] + 2 * self.eta * self.noise(t)))
            self._recursion = V
        return V[:total + 1]

    def inverse_lsi_closed(self, t: int) -> Any:
        """Lemma C.3's closed form: V_t = 2 eta L_T^2 sum_{t' < t} o_t' (L_F L_T)^(2 (t - t' - 1))."""
        if t not in self._closed:
            N = self.N
            self._closed[t] = 2 * self.eta * self.LT**2 * sum(
                (self.noise(s) * self._power(t - s - 1) for s in range(t)), N.mpf(0))
        return self._closed[t]

    def case_steps(self, K: int, b: Any, S: Any, lt_exponent: bool, output_c: bool,
                   batches: Sequence[int]) -> list[tuple[Any, Any]]:
        """Per step t < K m of Corollary 4.5, the same for every j0: (case 2's increment eta S^2/(4 b^2 o_t),
        case 1's factor (1 + 2 eta o_t/(L_F^2 V_t'))^(-exponent)), t' = t + 1 with `output_c`, else t; each only
        where a j0 in `batches` takes that case (else None; no factor at t = 0 without `output_c`: the input is the
        point mass); exponent 1/L_T^2 with `lt_exponent`, else 1. At L_F = 0 (a map that forgets its input, e.g. the
        step 1 - eta mu_c = 0) the factor is its limit as L_F -> 0+, which is 0: the bound holds for every L_F > 0,
        hence in the limit (before, the division by L_F^2 V_t left the bound undefined there)."""
        N, m = self.N, self.m
        power = None  # -(1/L_T^2 or 1), computed where a case-1 factor needs it (mpmath and Arb fail alike)
        V = self.inverse_lsi(K * m)
        two_eta, LF2, numer, denom = 2 * self.eta, self.LF**2, self.eta * S**2, 4 * b**2
        rows = []
        for t in range(K * m):
            o_t = self.noise(t)
            case1 = (t > 0 or output_c) and any(j0 != t % m for j0 in batches)
            factor = None
            if case1:
                scale = LF2 * V[t + 1 if output_c else t]
                if scale == 0 and self.LF == 0:
                    factor = N.mpf(0)
                else:
                    if power is None:
                        power = -(1 / self.LT**2 if lt_exponent else N.mpf(1))
                    factor = (1 + two_eta * o_t / scale) ** power
            rows.append((numer / (denom * o_t) if t % m in batches else None, factor))
        return rows

    def _power(self, p: int) -> Any:
        if p not in self._powers:
            self._powers[p] = ((self.LF * self.LT) ** 2) ** p
        return self._powers[p]


@functools.lru_cache(maxsize=32)
def _mp_schedule(m: int, eta: Any, LF: Any, LT: Any, o: Any, o_last: Any, o_rate: Any, prec: int) -> _Schedule:
    return _Schedule(MP, m, eta, LF, LT, o, o_last, o_rate)


def _schedule(N: Any, m: int, eta: Any, LF: Any, LT: Any, o: Any, o_last: Any, o_rate: Any) -> _Schedule:
    """The _Schedule of these arguments: in mpmath one per schedule and working precision, shared by the bounds
    evaluated at it (grid points differ in alpha, b, S more often than in the schedule); in Arb a fresh one."""
    if N.rigorous:
        return _Schedule(N, m, eta, LF, LT, o, o_last, o_rate)
    return _mp_schedule(m, eta, LF, LT, o, o_last, o_rate, mpmath.mp.prec)


def _per_batch(steps: list[tuple[Any, Any]], N: Any, m: int, j0: int) -> Any:
    """x_j0 by Corollary 4.5 step by step (`_Schedule.case_steps`): + the increment at the record's steps (case 2),
    times the factor at the others (case 1)."""
    x = N.mpf(0)
    for t, (added, factor) in enumerate(steps):
        if t % m == j0:
            x = x + added
        elif factor is not None:
            x = x * factor
    return x


def _mixture(N: Any, alpha: Any, xs: list) -> Any:
    """eq. (39): 1/(alpha - 1) log mean_j exp((alpha - 1) alpha x_j), shifted by the largest term and taken as
    log1p(mean_j expm1(z_j - top)), which keeps the working precision's relative accuracy when the terms are close
    (log of a mean near 1 lost digits: a bound of 2.5e-43 came out 2e-9 off in 50 digits)."""
    if any(x == N.inf for x in xs):
        return N.inf
    zs = [(alpha - 1) * alpha * x for x in xs]
    top = N.maximum(*zs)
    return (top + N.log1p(sum((N.expm1(z - top) for z in zs), N.mpf(0)) / len(zs))) / (alpha - 1)


class LSIRecursion(RecursiveBound):
    """Lemma C.3: c^(steps) = 1/V_steps of the recursion V_{t+1} = L_T^2 (L_F^2 V_t + 2 eta o_t) (+inf at 0)."""

    nargs = 8
    integer_args = (0, 1)  # steps, m
    evaluate_in_arb = True  # audited: branches on exact inputs, no value computed and then discarded

    @classmethod
    def compute(cls, N, steps, m, eta, LF, LT, o, o_last, o_rate):
        if steps == 0:
            return N.inf
        return 1 / _schedule(N, m, eta, LF, LT, o, o_last, o_rate).inverse_lsi(steps)[-1]


class LSIClosedForm(RecursiveBound):
    """Lemma C.3, the closed form printed in its proof (a sum over the schedule)."""

    nargs = 8
    integer_args = (0, 1)
    evaluate_in_arb = True  # audited: branches on exact inputs, no value computed and then discarded

    @classmethod
    def compute(cls, N, steps, m, eta, LF, LT, o, o_last, o_rate):
        if steps == 0:
            return N.inf
        return 1 / _schedule(N, m, eta, LF, LT, o, o_last, o_rate).inverse_lsi_closed(steps)


class _Theorem46(RecursiveBound):
    """Theorem 4.6 (mixture over j0) by the recursion; subclasses fix the exponent and the LSI index."""

    nargs = 11  # alpha, K, m, b, eta, S, L_F, L_T, o, o_last, o_rate
    integer_args = (1, 2)
    evaluate_in_arb = True  # audited: branches on exact inputs, no value computed and then discarded
    lt_exponent = False  # True: (1 + ...)^(-1/L_T^2) as printed in Corollary 4.5; False: ^(-1)
    output_c = False

    @classmethod
    def per_batches(cls, run: _Schedule, K: int, b: Any, S: Any, batches: Sequence[int]) -> list:
        """x_j0 for each j0 in `batches` (the bound on R_alpha/alpha given the record's batch)."""
        steps = run.case_steps(K, b, S, cls.lt_exponent, cls.output_c, batches)
        return [_per_batch(steps, run.N, run.m, j0) for j0 in batches]

    @classmethod
    def compute(cls, N, alpha, K, m, b, eta, S, LF, LT, o, o_last, o_rate):
        _affordable(K * m * m)
        run = _schedule(N, m, eta, LF, LT, o, o_last, o_rate)
        return _mixture(N, alpha, cls.per_batches(run, K, b, S, range(m)))


class Theorem46Corrected(_Theorem46):
    """Theorem 4.6 with the case-1 exponent -1 (L_T only in the LSI recursion) and the input's LSI constant."""


class Theorem46Proof(_Theorem46):
    """Theorem 4.6 as its proof computes it (eqs. 33-38) with Corollary 4.5's printed exponent -1/L_T^2."""

    lt_exponent = True


class Theorem46OutputLSI(_Theorem46):
    """Theorem 4.6 with the proof text's indices read literally: the case-1 factor takes the LSI constant of the
    step's output, c_0^j for the update producing theta^j (eqs. 33-34), and the printed exponent."""

    lt_exponent = True
    output_c = True


class _PerBatch(RecursiveBound):
    """alpha x_j0: the bound on R_alpha of the last iterate for the differing record in batch j0 (fixed batches)."""

    nargs = 12  # alpha, K, m, b, eta, S, L_F, L_T, o, o_last, o_rate, j0
    integer_args = (1, 2, 11)
    evaluate_in_arb = True  # audited: branches on exact inputs, no value computed and then discarded
    theorem: type[_Theorem46] = Theorem46Corrected

    @classmethod
    def compute(cls, N, alpha, K, m, b, eta, S, LF, LT, o, o_last, o_rate, j0):
        return alpha * cls.theorem.per_batches(_schedule(N, m, eta, LF, LT, o, o_last, o_rate), K, b, S, [j0])[0]


class PerBatchCorrected(_PerBatch):
    """eq. (38) per j0, corrected exponent -1."""


class PerBatchProof(_PerBatch):
    """eq. (38) per j0 with the printed exponent -1/L_T^2."""

    theorem = Theorem46Proof


class PerBatchOutputLSI(_PerBatch):
    """eq. (38) per j0 with the output's LSI constant (the proof text's index) and the printed exponent."""

    theorem = Theorem46OutputLSI


def _closed_terms(run: _Schedule, K: int, b: Any, S: Any, j0: int, printed: bool) -> Any:
    """sum_k eps_K(alpha, j0, k)/alpha of eq. (9) as printed (`printed`) or corrected, c from Lemma C.3's closed
    form. Corrected: (c_k^{j0+1}/c_K^0 (L_F L_T)^(-2 n1) prod_{l=k+1}^{K-1} c_l^{j0+1}/c_l^{j0})^(-1), n1 =
    (m - 1)(K - k) - j0 case-1 steps; printed: c_K^{m-1} for c_K^0, l = k..K, exponent -1/L_T^2. An index past the
    run extends the recursion; c_l^m is c_{l+1}^0."""
    N, m, eta, LF, LT, V = run.N, run.m, run.eta, run.LF, run.LT, run.inverse_lsi_closed
    _affordable((2 * K + 3) * (K + 2) * m)  # at most 2K + 3 distinct V_t, each a sum of <= (K + 2) m terms

    end = K * m + m - 1 if printed else K * m
    exponent = None  # 1/L_T^2 or 1, computed where a term needs it (mpmath and Arb fail alike: see case_steps)
    total = N.mpf(0)
    for k in range(K):
        epochs = range(k, K + 1) if printed else range(k + 1, K)
        numer = [k * m + j0 + 1] + [e * m + j0 + 1 for e in epochs]  # the c's in numerators ...
        denom = [end] + [e * m + j0 for e in epochs]  # ... and in denominators; c_a/c_b = V_b/V_a
        if 0 in denom:  # c^(0) = +inf in a denominator: the product is 0 and its negative power +inf
            return N.inf
        count = (m - 1) * (K - k) - j0
        if count > 0 and LF == 0:  # (L_F L_T)^(-2 count) -> +inf as L_F -> 0+: the term's limit is 0 (as in
            continue  # `_Schedule.case_steps`: the bound holds for every L_F > 0, hence at the limit)
        ratio = N.mpf(1)  # after the skip: a ratio computed and then skipped could fail in mpmath alone
        for top, bottom in zip(denom, numer, strict=True):
            ratio = ratio * V(top) / V(bottom)
        term = ratio * (LF * LT) ** (-2 * count)
        if exponent is None:
            exponent = 1 / LT**2 if printed else N.mpf(1)
        total = total + eta * S**2 / (4 * b**2 * run.noise(k * m + j0)) * term ** (-exponent)
    return total


class Theorem46Printed(_Theorem46):
    """Theorem 4.6 as printed: eq. (9) per (j0, k), summed over k, mixed over j0 (+inf: the j0 = k = 0 term has
    c_0^1/c_0^0 = 0 under the paper's point-mass start)."""

    @classmethod
    def per_batches(cls, run: _Schedule, K: int, b: Any, S: Any, batches: Sequence[int]) -> list:
        return [_closed_terms(run, K, b, S, j0, True) for j0 in batches]


class Theorem46ClosedForm(_Theorem46):
    """Theorem 4.6 corrected, in closed form (eq. 9 with c_K^0, l = k+1..K-1, exponent -1)."""

    @classmethod
    def per_batches(cls, run: _Schedule, K: int, b: Any, S: Any, batches: Sequence[int]) -> list:
        return [_closed_terms(run, K, b, S, j0, False) for j0 in batches]


class PerBatchPrinted(_PerBatch):
    """eq. (9) as printed for one j0 (fixed batches): alpha sum_k eps_K(alpha, j0, k)/alpha."""

    theorem = Theorem46Printed


class CompositionBaseline(RecursiveBound):
    """All states revealed (Section 4.4 baseline): alpha eta S^2/(4 b^2) sum_k 1/o(k, j0), worst j0 (j0 = -1) or a
    given one."""

    nargs = 10  # alpha, K, m, b, eta, S, o, o_last, o_rate, j0
    integer_args = (1, 2)
    evaluate_in_arb = True  # audited: branches on exact inputs, no value computed and then discarded

    @classmethod
    def compute(cls, N, alpha, K, m, b, eta, S, o, o_last, o_rate, j0):
        batches = range(m) if j0 < 0 else (int(j0),)
        run = _Schedule(N, m, None, None, None, o, o_last, o_rate)
        sums = [sum((1 / run.noise(k * m + j) for k in range(K)), N.mpf(0)) for j in batches]
        return alpha * eta * S**2 / (4 * b**2) * N.maximum(*sums)
