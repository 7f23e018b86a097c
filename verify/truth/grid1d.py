"""1-D transfer-matrix ("density grid") propagation of noisy GD and one-pass projected noisy SGD.

A `Process` is a chain theta_k = Proj(T_k(theta_{k-1}) + N(0, s^2)), k = 1..K, theta_0 ~ Proj(N(m0, s0^2)),
with Proj the projection onto [-R, R] or the identity. Its law is a vector of cell masses on a uniform grid
plus, when projected, two atoms at -R and +R (method of Chourasia et al. 2021 reports, seed-000 Sec. 3.3):
- unconstrained: cell mass = pdf(midpoint) * h (trapezoid rule: relative precision in both tails and spectral
  accuracy for smooth drifts); the window covers every iterate's law and the Rényi tilt and is widened until
  the edges carry negligible mass and tilt;
- projected: cell masses are differences of the normal cdf (or of the sf above the mean, for precision), atom
  masses are Phi((-R - T)/s) and Phi((T - R)/s), so mass is conserved exactly.
Each step is one sparse matrix-vector product (kernels are banded at 38.5 s, beyond which the normal density
underflows). A process whose steps carry keys (a hashable description of the drift, e.g. ("quadratic", lam, m))
shares its transfer matrices with every later process on the same grid: the projected grid does not depend on K or
alpha, so a family's grid of K and alpha values builds each matrix once (`_KERNELS`, bounded by _KERNEL_CACHE_NNZ),
and a keyed law starts from the state a kept law with the same first keys reached (`_KEPT_STATES`: K = 1, 20, 200
run 200 steps, not 221).
Results are computed at h and h/2 (unconstrained, first at 2h and h: `grid_renyi`); |difference| is the error
estimate (Richardson-style) and the interval is value(h/2) +- safety * error (plus a float-rounding floor).
Limit: densities are float64, so an unconstrained run whose Rényi tilt sits where the second law is below
~1e-308 (roughly alpha * R_alpha > 700) raises ParameterError instead of returning a wrong value.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import logsumexp, ndtr

from verify.errors import ParameterError, check_renyi_order
from verify.limits import require_memory
from verify.results import Method, Truth
from verify.truth.mixture_quad import log_excess_terms
from verify.truth.numbers import Enclosure, arb

Drift = Callable[[np.ndarray], np.ndarray]

_BAND = 38.5  # kernel half-width in noise sds: exp(-38.5^2/2) underflows float64
_START_SDS = 38.5  # Gaussian start truncated here (same reason)
_COVER = 14.0  # initial window: every mean (and tilt centre) +- _COVER sds
_NEGLIGIBLE_LOG = -34.0  # edge contributions below exp(-34) ~ 1.7e-15 of the total are negligible
_EDGE_MASS = 1e-14
_REL_FLOOR, _ABS_FLOOR = 1e-10, 1e-13  # float accumulation over K sparse products
_MAX_CELLS = 40_000  # x the kernel band (<= 770 cells) bounds the sparse matrix to ~3e7 entries
_BLOCK = 1_000_000  # kernel entries built at a time
_KERNEL_CACHE_NNZ = 12_000_000  # shared transfer matrices kept (~100-150 MB), least recently used dropped first: a
# family's grid revisits its (drift, grid) pairs across alpha and K at up to 12M entries (noisy_gd_projected_1d)
_DENSE_MAX = 4_000_000  # entries of a transfer matrix that may be kept dense (32 MB)


@dataclass(frozen=True)
class Process:
    """theta_k = Proj(T_k(theta_{k-1}) + N(0, noise_sd^2)) for k = 1..K; theta_0 ~ Proj(N(start_mean, start_sd^2)).

    R is the half-width of the constraint interval [-R, R], or None for no projection. start_sd = 0 is a
    point-mass start. `keys[k]`, where given, identifies drift k exactly (equal keys = equal maps): transfer
    matrices are then shared across processes.
    """

    drifts: tuple[Drift, ...]
    noise_sd: float
    R: float | None
    start_mean: float
    start_sd: float
    keys: tuple[Hashable, ...] | None = None


def _finite(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ParameterError(f"{name} must be finite, got {value}")
    return value


def _check_common(eta: float, sigma: float, R: float | None, start_mean: float, start_sd: float) -> None:
    for name, v in (("eta", eta), ("sigma", sigma), ("start_mean", start_mean), ("start_sd", start_sd)):
        _finite(name, v)
    if not eta > 0:
        raise ParameterError(f"step size eta must be > 0, got {eta}")
    if not sigma > 0:
        raise ParameterError(f"noise scale sigma must be > 0, got {sigma}")
    if not start_sd >= 0:
        raise ParameterError(f"start_sd must be >= 0, got {start_sd}")
    if R is not None and not (math.isfinite(R) and R > 0):
        raise ParameterError(f"constraint radius R must be a finite number > 0 (or None), got {R}")


def _gd_drift(grad: Callable[[np.ndarray], np.ndarray], eta: float) -> Drift:
    def drift(theta: np.ndarray) -> np.ndarray:
        return theta - eta * np.asarray(grad(theta), dtype=float)

    return drift


def noisy_gd_process(grad: Callable[[np.ndarray], np.ndarray], *, eta: float, sigma: float, K: int,
                     R: float | None = None, start_mean: float = 0.0, start_sd: float = 0.0,
                     key: Hashable | None = None) -> Process:
    """Noisy GD (Chourasia et al. 2021, Alg. 1): theta <- Proj(theta - eta grad L_D(theta) + sqrt(2 eta) N(0, sigma^2)).

    grad is the vectorised gradient of the averaged loss L_D; the start is Proj(N(start_mean, start_sd^2)).
    `key` identifies grad exactly (see Process.keys).
    """
    _check_common(eta, sigma, R, start_mean, start_sd)
    if int(K) != K or K < 1:
        raise ParameterError(f"number of iterations K must be an integer >= 1, got {K}")
    drift = _gd_drift(grad, eta)
    keys = None if key is None else ((key, float(eta)),) * int(K)
    return Process((drift,) * int(K), math.sqrt(2 * eta) * sigma, R, float(start_mean), float(start_sd), keys)


def pnsgd_process(grads: Sequence[Callable[[np.ndarray], np.ndarray]], *, eta: float, sigma: float,
                  R: float | None = None, start_mean: float = 0.0, start_sd: float = 0.0,
                  keys: Sequence[Hashable] | None = None) -> Process:
    """One-pass projected noisy SGD (Feldman et al. 2018, PNSGD): x <- Proj(x - eta (grad f(x; z_t) + N(0, sigma^2))).

    grads[t] is the vectorised gradient of the record used at step t + 1 (one record per step); a neighbouring
    run replaces one entry. Repeated gradient callables share one transfer matrix; `keys[t]`, where given,
    identifies grads[t] exactly (see Process.keys).
    """
    _check_common(eta, sigma, R, start_mean, start_sd)
    if len(grads) < 1:
        raise ParameterError("grads must hold at least one per-step gradient")
    if keys is not None and len(keys) != len(grads):
        raise ParameterError(f"keys must give one key per gradient ({len(grads)}), got {len(keys)}")
    drifts: dict[int, Drift] = {}
    steps = tuple(drifts.setdefault(id(g), _gd_drift(g, eta)) for g in grads)
    step_keys = None if keys is None else tuple((k, float(eta)) for k in keys)
    return Process(steps, eta * sigma, R, float(start_mean), float(start_sd), step_keys)


@dataclass(frozen=True)
class _Grid:
    lo: float
    h: float
    n: int
    R: float | None

    @property
    def edges(self) -> np.ndarray:
        return self.lo + self.h * np.arange(self.n + 1)

    @property
    def mids(self) -> np.ndarray:
        return self.lo + self.h * (np.arange(self.n) + 0.5)

    @property
    def points(self) -> np.ndarray:
        """Support points of the state: cell midpoints, then the atoms -R, +R when projected."""
        return self.mids if self.R is None else np.concatenate([self.mids, [-self.R, self.R]])

    @classmethod
    def make(cls, lo: float, hi: float, h: float, R: float | None) -> _Grid:
        n = math.ceil((hi - lo) / h - 1e-9)
        if n > _MAX_CELLS:
            raise ParameterError(f"grid step h={h:g} needs {n} cells on [{lo:g}, {hi:g}]; use a larger h")
        require_memory(40.0 * max(n, 1) * (2 * _BAND * 4 + 6), "the 1-D transfer-matrix grid")
        return cls(lo, (hi - lo) / n if R is not None else h, max(n, 1), R)


def _drift(T: Drift, x: np.ndarray) -> np.ndarray:
    y = np.asarray(T(x), dtype=float)
    if y.shape != x.shape or not np.all(np.isfinite(y)):
        raise ParameterError("the loss gradient must be vectorised and return finite values of its input's shape")
    return y


def _kernel(grid: _Grid, src: np.ndarray, T: Drift, s: float) -> sparse.csc_array | _DenseKernel:
    """Transfer matrix (state size x len(src)) of x -> Proj(T(x) + N(0, s^2)) from the source points src.

    Column i holds the cells within _BAND noise sds of T(src[i]) (a contiguous row range), then the atoms. Every
    column stores the same number of cells, a window that holds that range (its other cells are exact zeros), so the
    sparse arrays are dense blocks; a matrix whose windows cover half its rows or more is kept dense. Built in blocks
    of about _BLOCK entries, so that the temporaries stay small beside the matrix itself.
    """
    mean = _drift(T, src)
    band = math.ceil(_BAND * s / grid.h) + 1
    centre = np.floor((mean - grid.lo) / grid.h)
    first = np.clip(centre - band, 0, grid.n).astype(np.int64)
    last = np.clip(centre + band + 1, 0, grid.n).astype(np.int64)
    width = min(2 * band + 1, grid.n)
    start = np.clip(centre - band, 0, grid.n - width).astype(np.int64)  # start <= first, start + width >= last
    n_atoms = 0 if grid.R is None else 2
    per_column = width + n_atoms
    # the matrix itself (a value and a row index per entry), and scipy's copy of it when it is built
    require_memory(2 * 16.0 * per_column * src.size, "the 1-D transfer matrix")
    rows = np.empty((src.size, per_column), dtype=np.int32 if grid.n + n_atoms < 2**31 else np.int64)
    vals = np.empty((src.size, per_column))
    per_block = max(1, _BLOCK // per_column)
    for begin in range(0, src.size, per_block):
        cols = slice(begin, min(src.size, begin + per_block))
        rows[cols], vals[cols] = _kernel_block(grid, mean[cols], start[cols], first[cols], last[cols], width, s)
    size = grid.n + n_atoms
    if width == grid.n and size * src.size <= _DENSE_MAX:  # every window is the whole grid: vals is the dense matrix
        return _DenseKernel(vals)
    if 2 * per_column >= size and size * src.size <= _DENSE_MAX:
        columns = np.zeros((src.size, size))
        np.put_along_axis(columns, rows, vals, axis=1)
        return _DenseKernel(columns)
    indptr = np.arange(src.size + 1, dtype=np.int64) * per_column
    return sparse.csc_array((vals.ravel(), rows.ravel(), indptr), shape=(size, src.size))


@dataclass(frozen=True)
class _DenseKernel:
    """A transfer matrix most of whose entries are stored anyway, kept dense (one row per source point) and applied
    by a single-threaded product: twice as fast as the sparse one, where a multi-threaded BLAS call on a loaded
    machine is ten times slower."""

    columns: np.ndarray

    @property
    def nnz(self) -> int:
        return self.columns.size

    def __matmul__(self, state: np.ndarray) -> np.ndarray:
        return np.einsum("ji,j->i", self.columns, state)


def _standardised(x: np.ndarray, start: np.ndarray, width: int, mean: np.ndarray, s: float) -> np.ndarray:
    """(x[start_i + k] - mean_i)/s for k < width, one row per column i."""
    z = np.lib.stride_tricks.sliding_window_view(x, width)[start]
    z -= mean[:, None]
    z /= s
    return z


def _kernel_block(grid: _Grid, mean: np.ndarray, start: np.ndarray, first: np.ndarray, last: np.ndarray, width: int,
                  s: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows and values (one row of `width` cells from `start`, then the atoms, per column) of a block of consecutive
    kernel columns (see `_kernel`); cells outside a column's [first, last) hold exact zeros."""
    n_atoms = 0 if grid.R is None else 2
    rows = np.empty((mean.size, width + n_atoms), dtype=np.int64)
    rows[:, :width] = start[:, None] + np.arange(width)[None, :]
    out = np.empty((mean.size, width + n_atoms))
    cells = out[:, :width]
    if grid.R is None:
        z = _standardised(grid.mids, start, width, mean, s)
        np.multiply(z, z, out=z)
        z *= -0.5
        np.multiply(np.exp(z, out=z), grid.h / (s * math.sqrt(2 * math.pi)), out=cells)
    else:
        # one normal tail per cell edge, c = Phi(-|z|): a cell's mass is a difference of the two tails on its side of
        # the mean (no cancellation in either tail), or 1 minus both tails for the cell that holds the mean
        z = _standardised(grid.edges, start, width + 1, mean, s)
        tail = np.abs(z)
        ndtr(np.negative(tail, out=tail), out=tail)
        z1, z2, c1, c2 = z[:, :-1], z[:, 1:], tail[:, :-1], tail[:, 1:]
        np.subtract(c1, c2, out=cells)  # above the mean (z1 >= 0)
        np.subtract(c2, c1, out=cells, where=z1 < 0)  # below it (z2 <= 0), and the mean's cell, overwritten next
        holds = np.nonzero((z1 < 0) & (z2 > 0))
        cells[holds] = (1 - c1[holds]) - c2[holds]
        rows[:, width], rows[:, width + 1] = grid.n, grid.n + 1
        out[:, width], out[:, width + 1] = ndtr((-grid.R - mean) / s), ndtr((mean - grid.R) / s)
    clipped = np.flatnonzero((first > start) | (last < start + width))  # windows wider than their column's range
    outside = (rows[clipped, :width] < first[clipped, None]) | (rows[clipped, :width] >= last[clipped, None])
    cells[clipped] = np.where(outside, 0.0, cells[clipped])
    return rows, out


def _start(proc: Process, grid: _Grid) -> tuple[np.ndarray, np.ndarray, bool]:
    """Source points and masses of theta_0 ~ Proj(N(m0, s0^2)) (sub-grid of step min(h, s0/8)), and whether that
    sub-grid is the grid's own cells (then the points are grid.points, and step 1 is the grid's transfer)."""
    m, s0, R = proc.start_mean, proc.start_sd, grid.R
    if s0 == 0:
        return np.array([m if R is None else min(max(m, -R), R)]), np.ones(1), False
    lo, hi = m - _START_SDS * s0, m + _START_SDS * s0
    top = grid.lo + grid.n * grid.h
    if R is None:
        lo, hi = max(lo, grid.lo), min(hi, top)
        n = max(1, math.ceil((hi - lo) / min(grid.h, s0 / 8)))
        on_grid = (lo, hi, n) == (grid.lo, top, grid.n)
        step = grid.h if on_grid else (hi - lo) / n
        x = grid.mids if on_grid else lo + step * (np.arange(n) + 0.5)
        return x, np.exp(-0.5 * ((x - m) / s0) ** 2) * (step / (s0 * math.sqrt(2 * math.pi))), on_grid
    atoms = np.array([ndtr((-R - m) / s0), ndtr((m - R) / s0)])
    lo, hi = max(lo, -R), min(hi, R)
    if hi <= lo:
        return np.array([-R, R]), atoms, False
    n = max(1, math.ceil((hi - lo) / min(grid.h, s0 / 8)))
    on_grid = (lo, hi, n) == (-R, R, grid.n)
    e = grid.edges if on_grid else np.linspace(lo, hi, n + 1)
    z1, z2 = (e[:-1] - m) / s0, (e[1:] - m) / s0
    w = np.where(z1 >= 0, ndtr(-z1) - ndtr(-z2), ndtr(z2) - ndtr(z1))
    points = grid.points if on_grid else np.concatenate([(e[:-1] + e[1:]) / 2, [-R, R]])
    return points, np.concatenate([w, atoms]), on_grid


class _Kernels:
    """Shared transfer matrices by (key, noise sd, grid), the least recently used dropped first while their entries
    exceed _KERNEL_CACHE_NNZ (a running total, not a sum over the kept matrices at every insertion)."""

    def __init__(self) -> None:
        self.kept: OrderedDict[tuple, sparse.csc_array | _DenseKernel] = OrderedDict()
        self.nnz = 0

    def get(self, full: tuple) -> sparse.csc_array | _DenseKernel | None:
        kernel = self.kept.get(full)
        if kernel is not None:
            self.kept.move_to_end(full)
        return kernel

    def keep(self, full: tuple, kernel: sparse.csc_array | _DenseKernel) -> None:
        if kernel.nnz > _KERNEL_CACHE_NNZ:
            return
        self.kept[full] = kernel
        self.nnz += kernel.nnz
        while self.nnz > _KERNEL_CACHE_NNZ:
            self.nnz -= self.kept.popitem(last=False)[1].nnz


_KERNELS = _Kernels()


def _shared_kernel(grid: _Grid, T: Drift, key: Hashable, s: float) -> sparse.csc_array | _DenseKernel:
    """The transfer matrix of drift `key` on `grid`, built once and kept while the cache has room."""
    full = (key, s, grid)
    kernel = _KERNELS.get(full)
    if kernel is None:
        kernel = _kernel(grid, grid.points, T, s)
        _KERNELS.keep(full, kernel)
    return kernel


_STATES_BYTES = 64 << 20  # keyed laws' states after every step, kept for their prefixes


@dataclass
class _LawsAt:
    """The kept laws at one (noise sd, start, grid): its numbering of keys, each law's rows (the state after step
    k + 1 in row k, read-only) and its keys as numbers in a matrix, one law per row, padded with -1."""

    numbers: dict[Hashable, int]
    rows: list[np.ndarray]
    ids: np.ndarray


class _KeptStates:
    """The states after each step of keyed laws by (noise sd, start, grid) (`_LawsAt`). A law whose first k keys a
    kept law shares takes that law's rows up to step k (equal keys are equal maps, so the same products give the same
    states bit for bit) and runs only its remaining steps. The least recently used (noise sd, start, grid), with its
    key numbering, is dropped first while all rows exceed _STATES_BYTES."""

    def __init__(self) -> None:
        self.laws: OrderedDict[tuple, _LawsAt] = OrderedDict()
        self.bytes = 0

    def prefix(self, where: tuple, keys: Sequence[Hashable]) -> tuple[np.ndarray, int, np.ndarray | None]:
        """`keys` as numbers at `where`, the longest prefix of them that a kept law there has run, and that law's
        rows (None if none): one comparison with all kept laws' numbers."""
        at = self.laws.setdefault(where, _LawsAt({}, [], np.empty((0, 0), dtype=np.int64)))
        self.laws.move_to_end(where)
        ids = np.array([at.numbers.setdefault(k, len(at.numbers)) for k in keys], dtype=np.int64)
        if not at.rows:
            return ids, 0, None
        m = min(at.ids.shape[1], len(ids))
        same = at.ids[:, :m] == ids[:m]  # padding (-1) never equals a number
        common = np.where(same.all(axis=1), m, same.argmin(axis=1))
        best = int(common.argmax())
        return ids, int(common[best]), at.rows[best]

    def keep(self, where: tuple, ids: np.ndarray, rows: np.ndarray) -> None:
        """Keep a law's rows at `where` (the most recently used, from `prefix`) if they fit."""
        at = self.laws[where]
        if rows.nbytes > _STATES_BYTES:
            if not at.rows:
                del self.laws[where]
            return
        rows.flags.writeable = False
        grown = np.full((len(at.rows) + 1, max(at.ids.shape[1], len(ids))), -1, dtype=np.int64)
        grown[:-1, :at.ids.shape[1]] = at.ids
        grown[-1, :len(ids)] = ids
        at.rows.append(rows)
        at.ids = grown
        self.bytes += rows.nbytes
        while self.bytes > _STATES_BYTES:
            _, dropped = self.laws.popitem(last=False)
            self.bytes -= sum(r.nbytes for r in dropped.rows)


_KEPT_STATES = _KeptStates()


def _first_step(proc: Process, grid: _Grid, transfer: Callable[[int], sparse.csc_array | _DenseKernel]
                ) -> np.ndarray:
    """The state after step 1 (start law through the first transfer: `transfer(0)` where the start's sub-grid is the
    grid's cells)."""
    src, w, on_grid = _start(proc, grid)
    return (transfer(0) if on_grid else _kernel(grid, src, proc.drifts[0], proc.noise_sd)) @ w


def _law(proc: Process, grid: _Grid) -> np.ndarray:
    """State vector (cell masses, then the atoms at -R, +R if projected) of theta_K. A keyed law starts from the
    state after the longest prefix of its keys that a kept law has run (`_KEPT_STATES`)."""
    cache: dict[int, sparse.csc_array | _DenseKernel] = {}
    latest: dict[Hashable, sparse.csc_array | _DenseKernel] = {}  # the last keyed kernel (one too large for the
    # shared cache was rebuilt at every step); one entry, so a law with many keys holds one kernel at a time

    def transfer(k: int) -> sparse.csc_array | _DenseKernel:
        """Step k's transfer matrix on the grid: shared by key (and reused while consecutive steps keep the key), else
        built once per drift in this law."""
        T = proc.drifts[k]
        if proc.keys is not None:
            key = proc.keys[k]
            if key not in latest:
                latest.clear()
                latest[key] = _shared_kernel(grid, T, key, proc.noise_sd)
            return latest[key]
        if id(T) not in cache:
            cache[id(T)] = _kernel(grid, grid.points, T, proc.noise_sd)
        return cache[id(T)]

    if proc.keys is None:
        state = _first_step(proc, grid, transfer)
        for k in range(1, len(proc.drifts)):
            state = transfer(k) @ state
        return state
    where = (proc.noise_sd, proc.start_mean, proc.start_sd, grid)
    ids, done, kept = _KEPT_STATES.prefix(where, proc.keys)
    if done == len(proc.drifts):
        return kept[done - 1]
    rows = np.empty((len(proc.drifts), grid.n + (0 if grid.R is None else 2)))
    state = None
    if done:
        rows[:done], state = kept[:done], kept[done - 1]
    for k in range(done, len(proc.drifts)):
        state = _first_step(proc, grid, transfer) if k == 0 else transfer(k) @ state
        rows[k] = state
    _KEPT_STATES.keep(where, ids, rows)
    return state


def _moment_window(procs: Sequence[Process], alpha: float | None, both: bool = False) -> tuple[float, float]:
    """Initial window: mean +- _COVER sd of every iterate (linearised moments), and of the Rényi tilt centres (of
    both orders of the pair if `both`)."""
    tracks = []
    for p in procs:
        m, v, track = p.start_mean, p.start_sd**2, [(p.start_mean, p.start_sd)]
        for T in p.drifts:
            d = 1e-5 * (1 + abs(m))
            x = np.array([m - d, m, m + d])
            y = _drift(T, x)
            m, v = float(y[1]), float(((y[2] - y[0]) / (2 * d)) ** 2 * v + p.noise_sd**2)
            track.append((m, math.sqrt(v)))
        tracks.append(track)
    if not all(math.isfinite(m) and math.isfinite(s) for tr in tracks for m, s in tr):
        raise ParameterError("the iterates' spread overflows: the drift is not stable at these parameters")
    spans = [(m - _COVER * s, m + _COVER * s) for tr in tracks for m, s in tr]
    if alpha is not None:
        for (m1, s1), (m2, s2) in zip(tracks[0], tracks[1], strict=False):
            s = max(s1, s2)
            centres = (alpha * m1 + (1 - alpha) * m2,) + ((alpha * m2 + (1 - alpha) * m1,) if both else ())
            spans.extend((c - _COVER * s, c + _COVER * s) for c in centres)
    return min(a for a, _ in spans), max(b for _, b in spans)


def _log_terms(w1: np.ndarray, w2: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """log(w1^a w2^(1-a)) entrywise (-inf where w1 = 0), and the mask where w2 underflowed under w1 > 0."""
    bad = (w1 > 0) & (w2 <= 0)
    ok = (w1 > 0) & (w2 > 0)
    t = np.full(w1.shape, -np.inf)
    t[ok] = alpha * np.log(w1[ok]) + (1 - alpha) * np.log(w2[ok])
    return t, bad


def _renyi_value(w1: np.ndarray, w2: np.ndarray, alpha: float, n_cells: int) -> float:
    """Discrete R_alpha of the two laws (cells and atoms, each normalised to mass 1), without cancellation.

    With l = log(w1/w2) it sums J = sum w2 f(l), f(l) = e^(a l) - a e^l + a - 1 >= 0 (= sum w1^a w2^(1-a) - 1 for
    normalised laws; verify.truth.mixture_quad), and returns log1p(J)/(a - 1): identical laws give exactly 0.
    Where w2 underflowed below w1 > 0 the term is unknown: it is dropped only if the tilt terms next to such
    cells are negligible (tilt decaying outwards), else a ParameterError is raised.
    """
    w1, w2 = w1 / w1.sum(), w2 / w2.sum()
    t, bad = _log_terms(w1, w2, alpha)
    if bad[n_cells:].any():
        raise ParameterError(f"alpha={alpha:g}: an atom of the second law underflowed; the grid cannot resolve it")
    if bad.any():
        total = float(logsumexp(t))
        cells = t[:n_cells]
        near = np.zeros(n_cells, dtype=bool)
        near[:-1] |= bad[1:n_cells]
        near[1:] |= bad[:n_cells - 1]
        if np.any(cells[near] > total + _NEGLIGIBLE_LOG):
            raise ParameterError(f"alpha={alpha:g} is too large for the float64 grid: the second law underflows "
                                 "where the Rényi tilt is not negligible")
    both = (w1 > 0) & (w2 > 0)
    only_q = (w1 <= 0) & (w2 > 0)  # f(-inf) = a - 1
    ell = np.log(w1[both]) - np.log(w2[both])
    log_f, _ = log_excess_terms(ell, alpha, np.ones_like(ell))
    logs = np.concatenate([np.log(w2[both]) + log_f, np.log(w2[only_q]) + math.log(alpha - 1)])
    if logs.size == 0 or np.all(logs == -np.inf):
        return 0.0
    log_j = float(logsumexp(logs))
    return float(np.logaddexp(0.0, log_j)) / (alpha - 1)


def _edges_ok(grid: _Grid, laws: Sequence[np.ndarray], alpha: float | None, s: float,
              both: bool = False) -> tuple[bool, bool]:
    """Whether the lower / upper window edge (4 noise sds) carries negligible mass and Rényi tilt (of both orders of
    the pair if `both`)."""
    k = min(grid.n, math.ceil(4 * s / grid.h))
    pairs = [] if alpha is None else [(laws[0], laws[1])] + ([(laws[1], laws[0])] if both else [])
    sides = []
    for sl in (slice(0, k), slice(grid.n - k, grid.n)):
        ok = all(float(np.sum(w[sl])) <= _EDGE_MASS for w in laws)
        for w1, w2 in pairs:
            t, _ = _log_terms(w1, w2, alpha)
            ok = ok and float(logsumexp(t[sl])) <= float(logsumexp(t)) + _NEGLIGIBLE_LOG
        sides.append(ok)
    return sides[0], sides[1]


def _grids(procs: Sequence[Process], alpha: float | None, h: float | None,
           both: bool = False) -> tuple[_Grid, list[np.ndarray], _Grid]:
    """The coarse grid (window widened until its edges are negligible), the laws on it, and its h/2 refinement."""
    R = procs[0].R
    if any(p.R != R for p in procs):
        raise ParameterError("both processes must use the same constraint radius R")
    s = min(p.noise_sd for p in procs)
    if h is None:
        h = _default_h(procs)
    elif not (math.isfinite(h) and h > 0):
        raise ParameterError(f"grid step h must be a finite number > 0, got {h}")
    if R is not None:
        grid = _Grid.make(-R, R, h, R)
        return grid, [_law(p, grid) for p in procs], _Grid.make(-R, R, h / 2, R)
    lo, hi = _moment_window(procs, alpha, both)
    for _ in range(8):
        grid = _Grid.make(lo, hi, h, None)
        laws = [_law(p, grid) for p in procs]
        low_ok, high_ok = _edges_ok(grid, laws, alpha, s, both)
        if low_ok and high_ok:
            return grid, laws, _Grid.make(lo, hi, h / 2, None)
        width = hi - lo
        lo, hi = lo - (0 if low_ok else width / 2), hi + (0 if high_ok else width / 2)
    raise ParameterError("could not find a grid window with negligible edges (the laws may not be tight)")


def _truth(coarse: float, fine: float, safety: float, detail: str) -> Truth:
    err = abs(fine - coarse)
    pad = safety * err + _REL_FLOOR * abs(fine) + _ABS_FLOOR
    return Truth(fine, fine - pad, fine + pad, Method.GRID, f"{detail}; |v(h) - v(h/2)| = {err:.2e}, "
                                                            f"interval = {safety:g} x that + float floor")


def _check_safety(safety: float) -> None:
    if not (math.isfinite(safety) and safety >= 1):
        raise ParameterError(f"safety multiple must be a finite number >= 1, got {safety}")


def _same_law(p: Process, p_prime: Process) -> bool:
    """True where both processes are provably one process: keyed drifts with equal keys (the contract of `keys`:
    equal keys are equal maps), the same noise, start and constraint."""
    return (p.keys is not None and p.keys == p_prime.keys and len(p.drifts) == len(p_prime.drifts)
            and (p.noise_sd, p.R, p.start_mean, p.start_sd) == (p_prime.noise_sd, p_prime.R, p_prime.start_mean,
                                                                 p_prime.start_sd))


def grid_renyi(p: Process, p_prime: Process, alpha: float, h: float | None = None, safety: float = 4.0) -> Truth:
    """R_alpha(law of theta_K under p || under p_prime) by transfer-matrix propagation (method GRID).

    Default h: s/4 unconstrained (spectrally accurate for smooth drifts), min(s/10, R/20) projected (second
    order); s = per-step noise sd. Value at h/2, error |v(h) - v(h/2)|, interval value +- safety x error.
    Unconstrained with the default h, the pair (s/2, s/4) is tried first and kept where its error estimate, and the
    gap to the s/4 grid shifted by s/16 (`_unaliased`), are already within the float floor (smooth drifts: about 2x
    cheaper, the same interval); else (s/4, s/8) as above.
    """
    return _grid_renyi(p, p_prime, alpha, h, safety, both=False)[0]


def _grid_renyi(p: Process, p_prime: Process, alpha: float, h: float | None, safety: float,
                both: bool) -> tuple[Truth, ...]:
    """R_alpha(p || p_prime), and R_alpha(p_prime || p) if `both`, from one pair of laws."""
    check_renyi_order(alpha)
    _check_safety(safety)
    if _same_law(p, p_prime):  # the quadrature of two equal laws leaves rounding noise and costs the full grid
        zero = Truth.exact(0.0, f"R_alpha, alpha={alpha:g}: the two processes are the same (equal drift keys, noise, "
                           "start and constraint), so their laws are equal and R_alpha = 0 exactly",
                           enclose=lambda prec: Enclosure(arb(0), arb(0), "identical laws", prec))
        return (zero, zero) if both else (zero,)
    orders = ((0, 1), (1, 0))[:2 if both else 1]
    cheap = h is None and p.R is None  # try the pair (s/2, s/4) first
    with np.errstate(all="ignore"):  # an overflowing drift is caught as a non-finite value, not printed
        coarse, laws, fine = _grids([p, p_prime], alpha, 2 * _default_h([p, p_prime]) if cheap else h, both)
        # the coarse values first: a pair the float64 grid cannot resolve fails here, before the finer laws are made
        coarse_values = [_renyi_value(laws[a], laws[b], alpha, coarse.n) for a, b in orders]
        fine_laws = [_law(p, fine), _law(p_prime, fine)]
        values = [(c, _renyi_value(fine_laws[a], fine_laws[b], alpha, fine.n))
                  for c, (a, b) in zip(coarse_values, orders, strict=True)]
        if cheap and all(_at_floor(c, f, safety) for c, f in values):
            values = _unaliased(p, p_prime, fine, alpha, orders, values)
        if cheap and not all(_at_floor(c, f, safety) for c, f in values):  # refine once: h = s/4, s/8
            coarse, laws, fine = fine, fine_laws, _Grid.make(fine.lo, fine.lo + fine.n * fine.h, fine.h / 2, None)
            fine_laws = [_law(p, fine), _law(p_prime, fine)]
            values = [(c_f[1], _renyi_value(fine_laws[a], fine_laws[b], alpha, fine.n))
                      for c_f, (a, b) in zip(values, orders, strict=True)]
        kind = f"R = {fine.R:g}, two atoms" if fine.R is not None else "unconstrained"
        detail = (f"1-D transfer matrix, {kind}, window [{fine.lo:.4g}, {fine.lo + fine.n * fine.h:.4g}], "
                  f"{fine.n} cells at h/2 = {fine.h:.3g}")
        return tuple(_truth(c, f, safety, f"R_alpha, alpha={alpha:g}: {detail}") for c, f in values)


def _unaliased(p: Process, p_prime: Process, fine: _Grid, alpha: float, orders: Sequence[tuple[int, int]],
               values: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The pair (v(s/2), v(s/4)) checked once more on the s/4 grid shifted by s/16 (a quarter cell): cell midpoints
    of the s/2 and s/4 grids see a drift component of period s/8 at one phase, so both can agree on one wrong law;
    the shifted grid sees the opposite phase (the blind spot of (s/4, s/8) is period s/16, that of this triple too).
    Returns the pairs with the shifted value as the coarse one where it differs more."""
    shift = fine.h / 4
    moved = _Grid.make(fine.lo - shift, fine.lo + fine.n * fine.h - shift, fine.h, None)
    laws = [_law(p, moved), _law(p_prime, moved)]
    out = []
    for (c, f), (a, b) in zip(values, orders, strict=True):
        other = _renyi_value(laws[a], laws[b], alpha, moved.n)
        out.append((other, f) if abs(other - f) > abs(c - f) else (c, f))
    return out


def _default_h(procs: Sequence[Process]) -> float:
    """The default grid step: s/4 unconstrained, min(s/10, R/20) projected; s the smallest per-step noise sd."""
    s, R = min(p.noise_sd for p in procs), procs[0].R
    return s / 4 if R is None else min(s / 10, R / 20)


def _at_floor(coarse: float, fine: float, safety: float) -> bool:
    """True where the error estimate of a pair of grid values is within the float-rounding floor of `_truth`: the
    interval would be no narrower at a finer grid."""
    return safety * abs(fine - coarse) <= _REL_FLOOR * abs(fine) + _ABS_FLOOR


def grid_renyi_both(p: Process, p_prime: Process, alpha: float, h: float | None = None,
                    safety: float = 4.0) -> tuple[Truth, Truth]:
    """(R_alpha(p || p_prime), R_alpha(p_prime || p)) as `grid_renyi` gives them, from one pair of laws on a window
    that covers the Rényi tilts of both orders."""
    return _grid_renyi(p, p_prime, alpha, h, safety, both=True)


def grid_expectation(p: Process, f: Callable[[np.ndarray], np.ndarray], h: float | None = None,
                     safety: float = 4.0) -> Truth:
    """E[f(theta_K)] for a vectorised f (e.g. the loss, for excess risk) by transfer-matrix propagation (GRID)."""
    _check_safety(safety)
    with np.errstate(all="ignore"):  # an overflowing drift is caught as a non-finite value, not printed
        return _grid_expectation(p, f, h, safety)


def _grid_expectation(p: Process, f: Callable[[np.ndarray], np.ndarray], h: float | None, safety: float) -> Truth:
    coarse, (law,), fine = _grids([p], None, h)
    values = []
    for grid, w in ((coarse, law), (fine, _law(p, fine))):
        fx = np.asarray(f(grid.points), dtype=float)
        if fx.shape != grid.points.shape or not np.all(np.isfinite(fx)):
            raise ParameterError("f must be vectorised and finite on the grid")
        values.append(float(w @ fx))
    detail = f"1-D transfer matrix, {fine.n} cells at h/2 = {fine.h:.3g}"
    return _truth(values[0], values[1], safety, f"E f(theta_K): {detail}")
