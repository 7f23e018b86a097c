"""Array-API backends for the Monte-Carlo kernels, and seeded random draws on them.

get_namespace picks numpy (default), cupy (name "cupy" or env VERIFY_BACKEND=cupy) or array_api_strict (tests).
ArrayRandom draws normals and uniforms on the host with numpy's PCG64 and converts them with xp.asarray, so
numpy and array_api_strict runs with one seed are bit-for-bit identical; under cupy it uses cupy's own
generator on the device (reproducible on one GPU, but a different stream from the host one).
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import array_api_compat
import numpy as np

from verify.errors import ParameterError

BACKENDS = ("numpy", "cupy", "array_api_strict")
ENV_VAR = "VERIFY_BACKEND"


def backend_name(name: str | None = None) -> str:
    """The backend a run uses: `name`, else $VERIFY_BACKEND, else numpy."""
    return name if name is not None else os.environ.get(ENV_VAR, "numpy")


def get_namespace(name: str | None = None) -> ModuleType:
    """Array namespace for backend `name` (None: env VERIFY_BACKEND, else numpy)."""
    name = backend_name(name)
    if name == "numpy":
        return array_api_compat.array_namespace(np.empty(0))
    if name == "array_api_strict":
        import array_api_strict

        return array_api_strict
    if name == "cupy":
        try:
            import cupy
        except ImportError as exc:
            raise ParameterError(f"backend 'cupy' requested (argument or {ENV_VAR}) but cupy is not importable: "
                                 f"{exc}") from exc
        try:
            n_gpu = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # cupy raises its own CUDA runtime errors when no driver is present
            raise ParameterError(f"backend 'cupy' requested but no usable GPU was found: {exc}") from exc
        if n_gpu < 1:
            raise ParameterError("backend 'cupy' requested but no GPU is visible")
        return array_api_compat.array_namespace(cupy.empty(0))
    raise ParameterError(f"backend must be one of {BACKENDS} (argument or {ENV_VAR}), got {name!r}")


def check_seed(seed: int) -> int:
    """A seed must be a non-negative int (bool excluded)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def to_host(x: Any) -> np.ndarray:
    """A float64 numpy copy of an array from any supported namespace."""
    if array_api_compat.is_cupy_array(x):
        return x.get()
    return np.asarray(np.from_dlpack(x) if not isinstance(x, np.ndarray) else x, dtype=float)


class ArrayRandom:
    """Seeded float64 standard normals and uniforms [0, 1) as arrays of namespace xp (stateful stream)."""

    def __init__(self, xp: ModuleType, seed: int):
        self.xp = xp
        self.seed = check_seed(seed)
        if array_api_compat.is_cupy_namespace(xp):
            import cupy

            self._device = cupy.random.default_rng(self.seed)
            self._host = None
        else:
            self._device = None
            self._host = np.random.Generator(np.random.PCG64(self.seed))

    def normal(self, shape: tuple[int, ...]) -> Any:
        if self._host is None:
            return self._device.standard_normal(shape, dtype=np.float64)
        return self.xp.asarray(self._host.standard_normal(shape), dtype=self.xp.float64)

    def uniform(self, shape: tuple[int, ...]) -> Any:
        if self._host is None:
            return self._device.random(shape, dtype=np.float64)
        return self.xp.asarray(self._host.random(shape), dtype=self.xp.float64)


def log_sum_exp(x: Any, axis: int, xp: ModuleType = np) -> Any:
    """log sum exp(x) along `axis` in the array namespace `xp`, shifted by the largest term (-inf where every term is
    -inf). For n exact terms its float error is below 2^-53 (2 n + 2 + |value|): the shifted sum lies in [1, n]."""
    if xp is np:  # numpy's reductions directly, the shifted terms exponentiated in place: the same float
        top = np.maximum.reduce(x, axis=axis, keepdims=True)  # operations without the wrappers' Python-level cost
        top = np.where(np.isfinite(top), top, 0.0)
        shifted = x - top
        with np.errstate(divide="ignore"):
            return top.squeeze(axis) + np.log(np.add.reduce(np.exp(shifted, out=shifted), axis=axis))
    top = xp.max(x, axis=axis, keepdims=True)
    top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
    with np.errstate(divide="ignore"):
        return xp.squeeze(top, axis=axis) + xp.log(xp.sum(xp.exp(x - top), axis=axis))
