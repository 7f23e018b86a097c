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
rigorous enclosure the checker asks for before it reports a violation).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import mpmath

from verify.errors import ParameterError, check_renyi_order
from verify.results import Truth
from verify.truth.numbers import Enclosure, NotEnclosable, arb_numbers, num

try:
    from flint import arb_mat
except ImportError:  # pragma: no cover - python-flint is a runtime dependency
    arb_mat = None

Matrix = tuple[tuple[float, ...], ...]
Vector = tuple[float, ...]
_RANGE_RTOL = mpmath.mpf(10) ** -30  # at 50 digits: an eigenvalue below this (relative) is a zero of the covariance


def _matrix(name: str, rows: Sequence[Sequence[float]], shape: tuple[int, int] | None = None) -> Matrix:
    out = tuple(tuple(float(v) for v in row) for row in rows)
    if not out or any(len(r) != len(out[0]) for r in out) or (shape is not None and (len(out), len(out[0])) != shape):
        raise ParameterError(f"{name} must be a {shape or 'rectangular'} matrix of numbers, got {rows!r}")
    if not all(math.isfinite(v) for r in out for v in r):
        raise ParameterError(f"{name} must be finite, got {rows!r}")
    return out


def _vector(name: str, values: Sequence[float], size: int) -> Vector:
    out = tuple(float(v) for v in values)
    if len(out) != size or not all(math.isfinite(v) for v in out):
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


def _propagate(pair: LinearGaussianPair, la: _Linalg, keep: bool = False):
    """The mean gap m - m' and the shared covariance of the last iterate; with `keep`, every iterate's (transition
    matrix, mean gap, covariance), for the joint law of the trajectory. The gap is propagated itself
    (gap <- A gap + (b - b')), never as a difference of the two means, which would cancel."""
    N = la.N
    gap = la.column([N.mpf(a) - N.mpf(b) for a, b in zip(pair.start_mean, pair.start_mean_prime, strict=True)])
    S = la.matrix(pair.start_cov)
    track = []
    for step in pair.steps:
        A = la.matrix(step.A)
        gap = A * gap + la.column([N.mpf(a) - N.mpf(b) for a, b in zip(step.b, step.b_prime, strict=True)])
        S = A * S * la.T(A) + la.matrix(step.cov)
        for M in map(la.matrix, step.post):
            A, gap, S = M * A, M * gap, M * S * la.T(M)
        if keep:
            track.append((A, gap, S))
    return gap, S, track


def _quadratic_form(la: _Linalg, S, d) -> object:
    """d^T S^+ d: +inf where d leaves the range of S (mpmath, eigen-decomposition); Arb: S must be invertible."""
    if la.rigorous:
        try:
            x = S.solve(d)
        except ZeroDivisionError:
            raise NotEnclosable("the released covariance is singular or too close to singular for Arb") from None
        return (la.T(d) * x)[0, 0]
    n = S.rows
    if n == 0:
        return mpmath.mpf(0)
    sym = (S + S.T) / 2
    values, vectors = mpmath.eigsy(sym)
    scale = max(abs(v) for v in values) or mpmath.mpf(1)
    if min(values) < -_RANGE_RTOL * scale:
        raise ParameterError(f"the released covariance is not positive semi-definite (eigenvalue "
                             f"{mpmath.nstr(min(values), 3)}); a coordinate that is a deterministic function of others "
                             "belongs in a post map (AffineStep.then), not in a rounded covariance")
    coords = vectors.T * d
    size = max(abs(d[i, 0]) for i in range(n)) or mpmath.mpf(1)
    total = mpmath.mpf(0)
    for k in range(n):
        if values[k] <= _RANGE_RTOL * scale:
            if abs(coords[k, 0]) > _RANGE_RTOL * size * 1e5:
                return mpmath.inf
            continue
        total += coords[k, 0] ** 2 / values[k]
    return total


def _release(la: _Linalg, release: Sequence[Sequence[float]] | None, d: int):
    if release is None:
        return None
    P = _matrix("release", release)
    if len(P[0]) != d:
        raise ParameterError(f"release must have {d} columns (the state dimension), got {len(P[0])}")
    return la.matrix(P)


def renyi_linear_gaussian(pair: LinearGaussianPair, alpha: float,
                          release: Sequence[Sequence[float]] | None = None):
    """R_alpha of the released last iterate P theta_K (P = `release`, default the whole state), both orders (equal
    covariances make them equal), in the active number system."""
    check_renyi_order(alpha)
    la = _Linalg()
    gap, S, _ = _propagate(pair, la)
    P = _release(la, release, pair.dim)
    gap = gap if P is None else P * gap
    cov = S if P is None else P * S * la.T(P)
    return la.N.mpf(alpha) / 2 * _quadratic_form(la, cov, gap)


def renyi_trajectory(pair: LinearGaussianPair, alpha: float, release: Sequence[Sequence[float]] | None = None):
    """R_alpha of the released trajectory (P theta_1, ..., P theta_K) as one joint Gaussian, both orders."""
    check_renyi_order(alpha)
    la = _Linalg()
    _, _, track = _propagate(pair, la, keep=True)
    P = _release(la, release, pair.dim)
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


def enclose_linear_gaussian(pair: LinearGaussianPair, alpha: float, prec: int, *,
                            release: Sequence[Sequence[float]] | None = None, trajectory: bool = False) -> Enclosure:
    """A rigorous Arb enclosure of `renyi_linear_gaussian` (or `renyi_trajectory`) at `prec` bits."""
    with arb_numbers(prec):
        fn = renyi_trajectory if trajectory else renyi_linear_gaussian
        value = fn(pair, alpha, release)
        return Enclosure.of(value, "linear-Gaussian engine, Arb matrices", prec)


def linear_gaussian_truth(pair: LinearGaussianPair, alpha: float, *, release: Sequence[Sequence[float]] | None = None,
                          trajectory: bool = False, what: str = "linear-Gaussian algorithm") -> Truth:
    """The exact R_alpha of the released last iterate (or trajectory) as a Truth, with its Arb encloser."""
    fn = renyi_trajectory if trajectory else renyi_linear_gaussian
    with mpmath.workdps(50):
        value = fn(pair, alpha, release)
    released = "trajectory" if trajectory else "last iterate"
    return Truth.exact(float(value), f"{what}: exact Gaussian law of the {released} ({len(pair.steps)} affine steps, "
                                     "mean and covariance propagated at 50 digits)",
                       enclose=lambda prec: enclose_linear_gaussian(pair, alpha, prec, release=release,
                                                                    trajectory=trajectory))
