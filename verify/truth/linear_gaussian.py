"""Exact Rényi divergences of linear-Gaussian algorithms: one engine for every algorithm affine in its iterate.

An algorithm is a sequence of affine steps theta <- A_t theta + b_t + N(0, Sigma_t), run on two neighbouring data
sets that share A_t and Sigma_t and differ only in the offsets (b_t on D, b_t' on D'), from a start
N(m_0, Sigma_0) (m_0' on D'; Sigma_0 = 0 is a point mass). Noisy GD and PNSGD on quadratics, contractive affine
noisy iterations, and block coordinate descent on (bi)quadratics with a weight-decay prox (T(z) = tau z: compose
the step with `then`) and exactly minimised hidden blocks (rows with no noise) are all of this form.

Both runs are Gaussian with the same covariance, so for a released linear map P of the last iterate (a block, or
all of it) R_alpha = alpha/2 * d^T (P S P^T)^+ d with d = P(m - m'), the same in both orders; +inf where d leaves
the range of the covariance. `renyi_trajectory` releases P theta_1, ..., P theta_K jointly. Means and covariances
are propagated in the active number system (verify.truth.numbers: mpmath at 50 digits, or Arb balls for the
rigorous enclosure the checker asks for before it reports a violation). The gap is propagated itself, so identical
runs give exactly 0; a covariance that the propagation leaves ill-conditioned (large steps: S <- A S A^T cancels its
small directions) is re-propagated at doubled digits until the value settles (`_resolved`), and its Arb enclosure
takes more bits where the solve needs them.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import mpmath

from verify.errors import ParameterError, ResourceLimitError, check_renyi_order
from verify.results import Truth
from verify.truth.mixture_quad import renyi_mixture_quad_both
from verify.truth.numbers import ARB, Enclosure, NotEnclosable, arb_numbers, num

try:
    from flint import arb_mat, ctx
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb_mat = ctx = None

Matrix = tuple[tuple[float, ...], ...]
Vector = tuple[float, ...]
TRUTH_DPS = 50  # digits a truth starts at; an ill-conditioned covariance doubles them until two evaluations agree
MAX_DPS = 3200  # the most digits that doubling may reach
SINGULAR_DPS = 800  # a covariance eigenvalue still zero at this many digits (and the one before) is taken as a zero
_ILL = mpmath.mpf(10) ** -8  # smallest/largest eigenvalue below this: the covariance's small directions are checked
_AGREE = mpmath.mpf(10) ** -25  # relative agreement of two precisions that settles an ill-conditioned value


def _range_rtol() -> mpmath.mpf:
    """An eigenvalue below this (relative to the largest) is a zero of the covariance: 1e-30 up to 50 digits, then
    scaled with the working precision (a smaller one is rounding noise there)."""
    return mpmath.mpf(10) ** -max(30, int(0.6 * mpmath.mp.dps))


# Where a truth builder is listening, _quadratic_form reports the smallest relative eigenvalue it met (<= 0 for a
# zero or indefinite one): the builder re-evaluates at doubled precision while that is small (`_resolved`).
_conditioning: contextvars.ContextVar[list | None] = contextvars.ContextVar("linear_gaussian_conditioning",
                                                                          default=None)


class _Indefinite(ParameterError):
    """The released covariance has a negative eigenvalue at this precision (rounding noise of an ill-conditioned
    propagation disappears at a higher one; an indefinite input covariance does not)."""


def _entry(v: float | mpmath.mpf) -> float | mpmath.mpf:
    """A float, or an mpf kept at its own precision (an entry computed at 50 digits, e.g. 1 - eta*mu, is not
    rounded to float: the instance stays the one its parameters define, to 1e-50)."""
    return v if isinstance(v, mpmath.mpf) else float(v)


def _finite(v: float | mpmath.mpf) -> bool:
    return bool(mpmath.isfinite(v)) if isinstance(v, mpmath.mpf) else math.isfinite(v)


def _matrix(name: str, rows: Sequence[Sequence[float]], shape: tuple[int, int] | None = None) -> Matrix:
    out = tuple(tuple(_entry(v) for v in row) for row in rows)
    if not out or any(len(r) != len(out[0]) for r in out) or (shape is not None and (len(out), len(out[0])) != shape):
        raise ParameterError(f"{name} must be a {shape or 'rectangular'} matrix of numbers, got {rows!r}")
    if not all(_finite(v) for r in out for v in r):
        raise ParameterError(f"{name} must be finite, got {rows!r}")
    return out


def _vector(name: str, values: Sequence[float], size: int) -> Vector:
    out = tuple(_entry(v) for v in values)
    if len(out) != size or not all(_finite(v) for v in out):
        raise ParameterError(f"{name} must be {size} finite numbers, got {values!r}")
    return out


def _covariance(name: str, rows: Sequence[Sequence[float]], d: int) -> Matrix:
    cov = _matrix(name, rows, (d, d))
    if any(cov[i][j] != cov[j][i] for i in range(d) for j in range(i)) or any(cov[i][i] < 0 for i in range(d)):
        raise ParameterError(f"{name} must be a symmetric covariance matrix (non-negative diagonal), got {rows!r}")
    return cov


@dataclass(frozen=True)
class AffineStep:
    """theta <- M_k ... M_1 (A theta + b + N(0, cov)) on D, with b_prime in place of b on D' (`post` = (M_1, ...):
    linear maps applied after the noise, e.g. a weight-decay prox; evaluated at full precision, not in floats)."""

    A: Matrix
    b: Vector
    b_prime: Vector
    cov: Matrix
    post: tuple[Matrix, ...] = ()

    @classmethod
    def make(cls, A: Sequence[Sequence[float]], b: Sequence[float], cov: Sequence[Sequence[float]],
             b_prime: Sequence[float] | None = None) -> AffineStep:
        """A validated step (b_prime = b: the step does not touch the differing record)."""
        A = _matrix("A", A)
        d = len(A)
        if len(A[0]) != d:
            raise ParameterError(f"A must be square, got {d} x {len(A[0])}")
        b = _vector("b", b, d)
        return cls(A, b, b if b_prime is None else _vector("b_prime", b_prime, d), _covariance("cov", cov, d))

    @property
    def dim(self) -> int:
        return len(self.A)

    def then(self, M: Sequence[Sequence[float]]) -> AffineStep:
        """This step followed by the linear map M (e.g. a weight-decay prox T(z) = tau z)."""
        return replace(self, post=(*self.post, _matrix("M", M, (self.dim, self.dim))))


@dataclass(frozen=True)
class LinearGaussianPair:
    """The two runs of a linear-Gaussian algorithm on neighbouring data sets (see the module doc)."""

    steps: tuple[AffineStep, ...]
    start_mean: Vector
    start_mean_prime: Vector
    start_cov: Matrix

    @classmethod
    def make(cls, steps: Sequence[AffineStep], start_mean: Sequence[float] | None = None,
             start_cov: Sequence[Sequence[float]] | None = None,
             start_mean_prime: Sequence[float] | None = None) -> LinearGaussianPair:
        """Steps run in order; the start defaults to the point mass at 0, shared by both runs."""
        steps = tuple(steps)
        if not steps or any(not isinstance(s, AffineStep) for s in steps):
            raise ParameterError("steps must be a non-empty sequence of AffineStep")
        d = steps[0].dim
        if any(s.dim != d for s in steps):
            raise ParameterError(f"every step must act on the same dimension ({d})")
        mean = _vector("start_mean", start_mean if start_mean is not None else [0.0] * d, d)
        prime = mean if start_mean_prime is None else _vector("start_mean_prime", start_mean_prime, d)
        cov = _covariance("start_cov", start_cov if start_cov is not None else [[0.0] * d for _ in range(d)], d)
        return cls(steps, mean, prime, cov)

    @property
    def dim(self) -> int:
        return self.steps[0].dim


class _Linalg:
    """Matrices of the active number system: mpmath matrices, or flint arb_mat balls."""

    def __init__(self) -> None:
        self.N = num()
        self.rigorous = self.N.rigorous

    def matrix(self, rows: Sequence[Sequence]):
        if self.rigorous:
            return arb_mat([[self.N.mpf(v) for v in row] for row in rows])
        return mpmath.matrix([[mpmath.mpf(v) for v in row] for row in rows])

    def column(self, values: Sequence):
        return self.matrix([[v] for v in values])

    @staticmethod
    def T(M):
        return M.transpose() if hasattr(M, "transpose") else M.T

    def entries(self, M) -> list[list]:
        return [[M[i, j] for j in range(M.ncols() if self.rigorous else M.cols)]
                for i in range(M.nrows() if self.rigorous else M.rows)]

    def adopt(self, M):
        """An arb_mat as a matrix of this number system: itself in Arb, its exact midpoints in mpmath."""
        if self.rigorous:
            return M
        return mpmath.matrix([[mpmath.mpf(tuple(map(int, v.mid().man_exp()))) for v in row] for row in M.tolist()])


def _working_precision(la: _Linalg):
    """Arb's working precision for a propagation: the enclosure's own in Arb, mpmath's bits otherwise."""
    return contextlib.nullcontext() if la.rigorous else ctx.workprec(mpmath.mp.prec)


def _arb_matrix(rows: Sequence[Sequence], cache: dict) -> object:
    """rows (floats, mpf or Arb balls) as an exact arb_mat, converted once per distinct rows."""
    found = cache.get(rows)
    if found is None:
        found = cache[rows] = arb_mat([[ARB.mpf(v) for v in row] for row in rows])
    return found


def _chain(pairs: Sequence[LinearGaussianPair], keep: bool = False):
    """(G, S, track) in Arb at the working precision: the mean gaps m - m' of the last iterate as the columns of G
    (one per pair; the pairs share every map and noise, `_shared_chain`), the shared covariance S, and with `keep`
    every iterate's (transition matrix, G, S). The gaps are propagated themselves (G <- A G + (b - b')), never as a
    difference of two means, which would cancel."""
    first, cache = pairs[0], {}
    G = arb_mat([[ARB.mpf(p.start_mean[i]) - ARB.mpf(p.start_mean_prime[i]) for p in pairs]
                 for i in range(first.dim)])
    S = _arb_matrix(first.start_cov, cache)
    track = []
    for t, step in enumerate(first.steps):
        A = _arb_matrix(step.A, cache)
        offsets = tuple(zip(*(p.steps[t].b for p in pairs), strict=True))
        shift = cache.get((offsets, step.b_prime))
        if shift is None:
            shift = cache[(offsets, step.b_prime)] = arb_mat(
                [[ARB.mpf(v) - ARB.mpf(prime) for v in row] for row, prime in zip(offsets, step.b_prime, strict=True)])
        G = A * G + shift
        S = A * S * A.transpose() + _arb_matrix(step.cov, cache)
        for M in (_arb_matrix(M, cache) for M in step.post):
            A, G, S = M * A, M * G, M * S * M.transpose()
        if keep:
            track.append((A, G, S))
    return G, S, track


def _propagate(pair: LinearGaussianPair, la: _Linalg, keep: bool = False):
    """The mean gap m - m' (a column) and the shared covariance of the last iterate in the active number system
    (propagated in Arb at its working precision, `_chain`; mpmath takes the midpoints); with `keep`, every
    iterate's (transition matrix, mean gap, covariance), for the joint law of the trajectory."""
    with _working_precision(la):
        G, S, track = _chain([pair], keep)
    return la.adopt(G), la.adopt(S), [tuple(map(la.adopt, item)) for item in track]


def _quadratic_form(la: _Linalg, S, d) -> object:
    """d^T S^+ d: +inf where d leaves the range of S (mpmath, eigen-decomposition); Arb: S must be invertible."""
    if la.rigorous:
        try:
            x = S.solve(d)
        except ZeroDivisionError:
            raise NotEnclosable("the released covariance is singular or too close to singular for Arb") from None
        return (la.T(d) * x)[0, 0]
    return _range_form(S)(d)


def _range_form(S) -> Callable[[object], mpmath.mpf]:
    """d -> d^T S^+ d for an mpmath covariance S, from one eigen-decomposition: +inf where d leaves the range of S."""
    n = S.rows
    if n == 0:
        return lambda d: mpmath.mpf(0)
    sym = (S + S.T) / 2
    values, vectors = mpmath.eigsy(sym)
    scale = max(abs(v) for v in values) or mpmath.mpf(1)
    tol = _range_rtol()
    listening = _conditioning.get()
    if listening is not None:
        listening.append((min(values) / scale, sum(v <= tol * scale for v in values)))
    if min(values) < -tol * scale:
        raise _Indefinite(f"the released covariance is not positive semi-definite (eigenvalue "
                          f"{mpmath.nstr(min(values), 3)}); a coordinate that is a deterministic function of others "
                          "belongs in a post map (AffineStep.then), not in a rounded covariance")
    basis = vectors.T

    def form(d) -> mpmath.mpf:
        coords = basis * d
        size = max(abs(d[i, 0]) for i in range(n)) or mpmath.mpf(1)
        total = mpmath.mpf(0)
        for k in range(n):
            if values[k] <= tol * scale:
                if abs(coords[k, 0]) > tol * size * 1e5:
                    return mpmath.inf
                continue
            total += coords[k, 0] ** 2 / values[k]
        return total

    return form


def _release_rows(release: Sequence[Sequence[float]] | None, d: int) -> Matrix | None:
    if release is None:
        return None
    P = _matrix("release", release)
    if len(P[0]) != d:
        raise ParameterError(f"release must have {d} columns (the state dimension), got {len(P[0])}")
    return P


def _release(la: _Linalg, release: Sequence[Sequence[float]] | None, d: int):
    P = _release_rows(release, d)
    return None if P is None else la.matrix(P)


def _is_zero(la: _Linalg, v) -> bool:
    """Every entry of the column v is exactly 0 (identical runs: the divergence is 0, not a rounded quadratic form)."""
    return all(row[0].is_zero() if la.rigorous else row[0] == 0 for row in la.entries(v))


def renyi_linear_gaussian(pair: LinearGaussianPair, alpha: float,
                          release: Sequence[Sequence[float]] | None = None):
    """R_alpha of the released last iterate P theta_K (P = `release`, default the whole state), both orders (equal
    covariances make them equal), in the active number system."""
    check_renyi_order(alpha)
    la = _Linalg()
    gap, S, _ = _propagate(pair, la)
    P = _release(la, release, pair.dim)
    gap = gap if P is None else P * gap
    if _is_zero(la, gap):
        return la.N.mpf(0)
    cov = S if P is None else P * S * la.T(P)
    return la.N.mpf(alpha) / 2 * _quadratic_form(la, cov, gap)


def renyi_trajectory(pair: LinearGaussianPair, alpha: float, release: Sequence[Sequence[float]] | None = None):
    """R_alpha of the released trajectory (P theta_1, ..., P theta_K) as one joint Gaussian, both orders."""
    check_renyi_order(alpha)
    la = _Linalg()
    _, _, track = _propagate(pair, la, keep=True)
    P = _release(la, release, pair.dim)
    if all(_is_zero(la, gap if P is None else P * gap) for _, gap, _ in track):
        return la.N.mpf(0)
    K = len(track)
    # Cov(theta_t, theta_s) = A_t ... A_{s+1} S_s for t > s
    blocks: dict[tuple[int, int], object] = {}
    for s in range(K):
        C = track[s][2]
        blocks[(s, s)] = C
        for t in range(s + 1, K):
            C = track[t][0] * C
            blocks[(t, s)] = C
    proj = (lambda M: M) if P is None else (lambda M: P * M * la.T(P))
    gap_rows, cov_rows = [], []
    for t in range(K):
        g = track[t][1] if P is None else P * track[t][1]
        gap_rows.extend(row[0] for row in la.entries(g))
        row_blocks = [la.entries(proj(blocks[(t, s)] if t >= s else la.T(blocks[(s, t)]))) for s in range(K)]
        for i in range(len(row_blocks[0])):
            cov_rows.append([v for block in row_blocks for v in block[i]])
    return la.N.mpf(alpha) / 2 * _quadratic_form(la, la.matrix(cov_rows), la.column(gap_rows))


def _agree(a, b) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(_agree(x, y) for x, y in zip(a, b, strict=True))
    if mpmath.isinf(a) or mpmath.isinf(b):
        return a == b
    return abs(a - b) <= _AGREE * max(abs(a), abs(b))


def _resolved(compute: Callable[[], object], start: int = TRUTH_DPS):
    """compute() at `start` digits; where a released covariance is ill-conditioned (smallest/largest eigenvalue
    below 1e-8, or a zero one: the propagation S <- A S A^T + Sigma may have cancelled its small directions to
    rounding noise), again at doubled digits until two successive values agree to 1e-25 with the same zero
    eigenvalues, and a zero eigenvalue only counts as one once it has stayed zero up to SINGULAR_DPS digits (a small
    eigenvalue rounded to 0 at 50 digits gives a wrong finite value that a second precision repeats). An indefinite
    covariance is an error only if it stays indefinite."""
    dps, previous, zeros = start, None, None
    while True:
        seen: list = []
        token = _conditioning.set(seen)
        try:
            with mpmath.workdps(dps):
                value = compute()
        except _Indefinite:
            if dps >= 4 * start:
                raise
            value = None
        finally:
            _conditioning.reset(token)
        pattern = [z for _, z in seen]
        if value is not None and all(r >= _ILL for r, _ in seen):
            return value
        settled = value is not None and previous is not None and pattern == zeros and _agree(previous, value)
        if settled and (not any(pattern) or dps >= SINGULAR_DPS):
            return value
        if 2 * dps > MAX_DPS:
            raise ResourceLimitError(f"the released covariance is too ill-conditioned to resolve at {dps} digits")
        previous, zeros, dps = value, pattern, 2 * dps


def _enclose_escalating(compute: Callable[[], object], prec: int, method: str) -> Enclosure:
    """compute() in Arb balls at `prec` bits, and at up to 8x the bits where the released covariance is too close to
    singular for the solve (an ill-conditioned but regular covariance; a singular one stays NotEnclosable)."""
    bits = prec
    while True:
        try:
            with arb_numbers(bits):
                value = compute()
                wide = hasattr(value, "rel_accuracy_bits") and not value.is_zero() and (
                    value.rel_accuracy_bits() < min(30, prec // 2))
                if wide and bits < 8 * prec:
                    raise NotEnclosable("the ball is too wide (cancellation at this precision)")
                return Enclosure.of(value, method, bits)
        except NotEnclosable:
            if bits >= 8 * prec:
                raise
            bits *= 2


def enclose_linear_gaussian(pair: LinearGaussianPair, alpha: float, prec: int, *,
                            release: Sequence[Sequence[float]] | None = None, trajectory: bool = False) -> Enclosure:
    """A rigorous Arb enclosure of `renyi_linear_gaussian` (or `renyi_trajectory`) at `prec` bits (more where the
    covariance is too ill-conditioned for the solve at `prec`)."""
    fn = renyi_trajectory if trajectory else renyi_linear_gaussian
    return _enclose_escalating(lambda: fn(pair, alpha, release), prec, "linear-Gaussian engine, Arb matrices")


def linear_gaussian_truth(pair: LinearGaussianPair, alpha: float, *, release: Sequence[Sequence[float]] | None = None,
                          trajectory: bool = False, what: str = "linear-Gaussian algorithm") -> Truth:
    """The exact R_alpha of the released last iterate (or trajectory) as a Truth, with its Arb encloser."""
    fn = renyi_trajectory if trajectory else renyi_linear_gaussian
    value = _resolved(lambda: fn(pair, alpha, release))
    released = "trajectory" if trajectory else "last iterate"
    return Truth.exact(float(value), f"{what}: exact Gaussian law of the {released} ({len(pair.steps)} affine steps, "
                                     "mean and covariance propagated at 50 digits, more where ill-conditioned)",
                       enclose=lambda prec: enclose_linear_gaussian(pair, alpha, prec, release=release,
                                                                    trajectory=trajectory))


# ---- a mixture over batch assignments -------------------------------------------------------------------------
#
# With a secret random assignment (the batch j0 of the differing record, uniform), the law on D is the mixture
# P = sum_j w_j N(m_j, S) of the runs with the record in each position, and the law on D' is one Gaussian
# Q = N(m', S) when the other records are all equal (then D' does not depend on the assignment). In coordinates
# whitened by S only the span of the shifts g_j = P(m_j - m') matters: E_Q[(P/Q)^alpha] for an integer alpha is the
# positive-term sum over compositions n of alpha (|n| = alpha) of multinomial(alpha; n) prod w_j^n_j
# exp((n^T G n - sum_j n_j G_jj)/2), G_ij = g_i^T S^+ g_j; a one-dimensional span is integrated directly (both
# orders, verify.truth.mixture_quad).

SERIES_TERMS_CAP = 200_000  # compositions summed by the integer-order series


def _shared_chain(pairs: Sequence[LinearGaussianPair]) -> None:
    first = pairs[0]
    for p in pairs[1:]:
        same = (p.start_cov == first.start_cov and p.start_mean_prime == first.start_mean_prime
                and len(p.steps) == len(first.steps)
                and all((s.A, s.cov, s.post, s.b_prime) == (t.A, t.cov, t.post, t.b_prime)
                        for s, t in zip(p.steps, first.steps, strict=True)))
        if not same:
            raise ParameterError("every assignment must share the maps, the noise and the run on D' (only the offsets "
                                 "on D may depend on where the differing record sits)")


def assignment_gram(pairs: Sequence[LinearGaussianPair], release: Sequence[Sequence[float]] | None = None) -> list:
    """G_ij = g_i^T S^+ g_j for the released shifts g_j of the assignments, in the active number system (Arb: S must
    be invertible); +inf entries where a shift leaves the range of S."""
    if not pairs:
        raise ParameterError("a mixture needs at least one assignment")
    _shared_chain(pairs)
    la = _Linalg()
    with _working_precision(la):
        G, S, _ = _chain(pairs)
        rows = _release_rows(release, pairs[0].dim)
        if rows is not None:
            P = _arb_matrix(rows, {})
            G, S = P * G, P * S * P.transpose()
    m = len(pairs)
    if la.rigorous:
        return (G.transpose() * S.solve(G)).tolist()
    G, form = la.adopt(G), _range_form(la.adopt(S))
    gaps = [G[:, j] for j in range(m)]
    return [[_bilinear(form, gaps[i], gaps[j]) for j in range(m)] for i in range(m)]


def _bilinear(form: Callable[[object], mpmath.mpf], u, v):
    """u^T S^+ v by polarisation of the range-checked quadratic form of S."""
    if u is v:
        return form(u)
    plus, minus = form(u + v), form(u - v)
    if mpmath.isinf(plus) or mpmath.isinf(minus):
        return mpmath.inf
    return (plus - minus) / 4


def _mixture_excess(gram: Sequence[Sequence], weights: Sequence, alpha: int):
    """(E_Q[(P/Q)^alpha] - 1, the sum of the absolute values of its terms) for the series of `renyi_mixture_series`:
    with the weights normalised, the multinomial probabilities P_n sum to 1 exactly, so E_Q[(P/Q)^alpha] - 1 =
    sum_n P_n expm1(E_n) is summed as such (its log1p is R_alpha (alpha - 1) without the cancellation of log(1 + tiny)
    at small shifts); terms of both signs (E_n < 0 where shifts point apart) may still cancel, which the second
    number measures."""
    N = num()
    m = len(gram)
    if math.comb(alpha + m - 1, m - 1) > SERIES_TERMS_CAP:
        raise ResourceLimitError(f"the mixture series would sum C({alpha + m - 1}, {m - 1}) > {SERIES_TERMS_CAP} "
                                 "terms; use a one-dimensional release (quadrature) or a smaller alpha")
    total_w = sum((N.mpf(w) for w in weights), N.mpf(0))
    log_fact = [N.log(N.mpf(math.factorial(k))) for k in range(alpha + 1)]
    log_w = [N.log(N.mpf(w) / total_w) if w > 0 else None for w in weights]
    excess = size = N.mpf(0)
    zero = N.mpf(0)
    # the compositions walked component by component (counts n_0, n_1, ...), each prefix's partial sums shared by
    # every composition extending it: quad = n^T G n, diag = sum n_j G_jj, log of prod w_j^n_j / n_j!, and
    # lin_k = sum_j n_j G_jk for the components k still to come; a component of weight 0 takes no count
    stack = [(0, alpha, zero, zero, log_fact[alpha], [zero] * m)]
    while stack:
        i, left, quad, diag, log_p, lin = stack.pop()
        counts = [left] if i == m - 1 else range(left + 1)
        for c in counts:
            if c and log_w[i] is None:
                continue
            q, d, lp = quad, diag, log_p
            if c:
                q = quad + c * c * gram[i][i] + 2 * c * lin[i]
                d = diag + c * gram[i][i]
                lp = log_p + c * log_w[i] - log_fact[c]
            if c == left:  # every count placed: the later components take none
                term = N.exp(lp) * N.expm1((q - d) / 2)
                excess += term
                size += abs(term)
            elif i < m - 1:
                stack.append((i + 1, left - c, q, d, lp,
                              lin if not c else [lin[k] + c * gram[i][k] if k > i else lin[k] for k in range(m)]))
    return excess, size


def renyi_mixture_series(gram: Sequence[Sequence], weights: Sequence, alpha: int):
    """R_alpha(sum_j w_j N(g_j, S) || N(0, S)) for an integer alpha >= 2 from the Gram matrix of the shifts, in the
    active number system: log1p(sum_n P_n expm1(E_n))/(alpha - 1) over the compositions n of alpha (`_mixture_excess`;
    0 exactly for zero shifts; Arb-rigorous). The weights are normalised to sum to 1."""
    N = num()
    if int(alpha) != alpha or alpha < 2:
        raise ParameterError(f"the mixture series needs an integer alpha >= 2, got {alpha}")
    alpha = int(alpha)
    if any(mpmath.isinf(g) for row in gram for g in row if not N.rigorous):
        return N.inf
    excess, _ = _mixture_excess(gram, weights, alpha)
    return N.log1p(excess) / (alpha - 1)


def _series_resolved(gram: list, pairs: Sequence[LinearGaussianPair], weights: Sequence, alpha: int,
                     release: Sequence[Sequence[float]] | None):
    """The mixture series from `gram` (the Gram matrix `_resolved` gives at TRUTH_DPS digits), and again from one
    with the digits its terms of both signs cancelled (shifts pointing apart, R much smaller than each term) added."""
    dps = TRUTH_DPS
    while True:
        with mpmath.workdps(dps):
            if dps > TRUTH_DPS:
                gram = _resolved(lambda: assignment_gram(pairs, release), dps)
            if any(mpmath.isinf(g) for row in gram for g in row):
                return mpmath.inf
            excess, size = _mixture_excess(gram, weights, int(alpha))
            lost = 0 if size == 0 else int(mpmath.log10(size / abs(excess))) if excess else dps
            if lost <= 15 or dps >= MAX_DPS:
                return mpmath.log1p(excess) / (int(alpha) - 1)
        dps = min(MAX_DPS, dps + lost + 10)


def assignment_mixture_truth(pairs: Sequence[LinearGaussianPair], alpha: float, weights: Sequence[float] | None = None,
                             *, release: Sequence[Sequence[float]] | None = None,
                             what: str = "linear-Gaussian algorithm") -> Truth:
    """The exact R_alpha of the released last iterate when the differing record's assignment is secret and random
    (`weights`, default uniform over `pairs`, one pair per assignment).

    A one-dimensional release (every released shift on one line, e.g. a scalar block): both orders by double-precision
    Gauss-Legendre quadrature with an error bound and an Arb (acb.integral) enclosure of the pair whose whitened means
    are the 50-digit shifts rounded to float (a relative change ~1e-16 of the means, far inside the checker's 1e-9 tie
    band). Otherwise R(P_D || P_D') for an integer alpha by the series, exact, with an Arb enclosure of the whole
    chain."""
    check_renyi_order(alpha)
    m = len(pairs)
    weights = [1.0 / m] * m if weights is None else [float(w) for w in weights]
    if len(weights) != m or any(not (w >= 0) for w in weights) or abs(sum(weights) - 1) > 1e-12:
        raise ParameterError(f"weights must be {m} non-negative numbers summing to 1, got {weights!r}")
    gram = _resolved(lambda: assignment_gram(pairs, release))
    # collinear shifts (Cauchy-Schwarz with equality), relative to the shifts' own size: scale-free, so tiny shifts
    # pointing apart are not taken for one line
    one_dim = all(mpmath.isfinite(g) for row in gram for g in row) and all(
        abs(gram[i][j] ** 2 - gram[i][i] * gram[j][j]) <= mpmath.mpf(10) ** -30 * gram[i][i] * gram[j][j]
        for i in range(m) for j in range(i))
    if all(gram[i][j] == gram[0][0] for i in range(m) for j in range(m)):  # every assignment gives one law

        def enclose_one(prec: int) -> Enclosure:
            return _enclose_escalating(lambda: num().mpf(alpha) / 2 * assignment_gram(pairs[:1], release)[0][0], prec,
                                       "linear-Gaussian engine, Arb matrices")

        return Truth.exact(float(alpha * gram[0][0] / 2), f"{what}: every assignment gives the same Gaussian law "
                           "(alpha/2 times the squared Mahalanobis shift)", enclose=enclose_one)
    if one_dim:
        ref = max(range(m), key=lambda j: gram[j][j])
        sign = [1 if gram[j][ref] >= 0 else -1 for j in range(m)]
        means = [float(sign[j] * mpmath.sqrt(gram[j][j])) for j in range(m)]
        pq, qp = renyi_mixture_quad_both(weights, means, [1.0] * m, [1.0], [0.0], [1.0], alpha)
        return Truth.larger(pq, qp, f"{what}: mixture over {m} assignments, whitened 1-D")

    def enclose(prec: int) -> Enclosure:
        return _enclose_escalating(lambda: renyi_mixture_series(assignment_gram(pairs, release), weights, alpha), prec,
                                   "linear-Gaussian engine, Arb matrices, mixture series")

    if int(alpha) != alpha or alpha < 2:
        raise ParameterError(f"the mixture series needs an integer alpha >= 2, got {alpha}")
    value = _series_resolved(gram, pairs, weights, int(alpha), release)
    return Truth.exact(float(value), f"{what}: R(P_D || P_D') of the mixture over {m} assignments (integer-order "
                                     f"series over compositions, shifts from the exact chain at 50 digits or more)",
                       enclose=enclose)
