"""Instance families, by name. Each binds named parameters to ground-truth methods in verify.truth.

Families of your own (README, "Your own family") are declared with `verify.model.Family` outside the package and
registered with `register`, by `--plugin MODULE` on the command line (`load_plugin`), or through the entry-point group
`verify.families` of an installed package (`load_entry_points`). `closed_form(fn, detail)` turns a formula written
with `verify.truth.numbers.num()` into an exact truth that also encloses itself in Arb balls: a VIOLATED verdict needs
such an enclosure (a truth without one can only be HOLDS or INCONCLUSIVE). `monte_carlo_renyi(simulate)` turns a
simulation of the algorithm's last noisy step into an estimated Rényi truth (mark the family estimated=True).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from verify.errors import PluginError, UnknownIdError
from verify.families._exact import exact as closed_form
from verify.families.dpsgd import FAMILIES as DPSGD_FAMILIES
from verify.families.grid import NOISY_GD_LOGISTIC_1D, NOISY_GD_PROJECTED_1D, PNSGD_PROJECTED_1D
from verify.families.mbcd import FAMILIES as MBCD_FAMILIES
from verify.families.mixtures import (
    MIXTURE_VS_GAUSSIAN,
    SAMPLED_GAUSSIAN,
    SAMPLED_GAUSSIAN_COMPOSED,
    SAMPLED_GAUSSIAN_MC,
    SAMPLED_GAUSSIAN_NAIVE_MC,
    SKIP_PNSGD_LINEAR_1D,
    SKIP_PNSGD_LINEAR_DATA_1D,
    STOP_PNSGD_LINEAR_1D,
    STOP_PNSGD_LINEAR_DATA_1D,
)
from verify.families.nmf import FAMILIES as NMF_FAMILIES
from verify.families.noisy_gd import NOISY_GD_QUADRATIC, NOISY_GD_SUM_QUADRATIC
from verify.families.noisy_sgd import FAMILIES as NOISY_SGD_FAMILIES
from verify.families.pnsgd import CNI_AFFINE, PNMSGD_QUADRATIC, PNSGD_LINEAR, PNSGD_QUADRATIC
from verify.families.pnsgd_dp import FAMILIES as PNSGD_DP_FAMILIES
from verify.families.psgd_box import FAMILIES as PSGD_BOX_FAMILIES
from verify.families.shifted import CONTRACTION_GAUSSIAN, SHIFT_REDUCTION_GAUSSIAN
from verify.families.smoothing import FAMILIES as SMOOTHING_FAMILIES
from verify.model import Family
from verify.truth.montecarlo import monte_carlo_renyi

FAMILIES: dict[str, Family] = {f.name: f for f in (
    NOISY_GD_QUADRATIC, NOISY_GD_SUM_QUADRATIC, PNSGD_QUADRATIC, PNSGD_LINEAR, PNMSGD_QUADRATIC, CNI_AFFINE,
    SHIFT_REDUCTION_GAUSSIAN, CONTRACTION_GAUSSIAN, SAMPLED_GAUSSIAN, STOP_PNSGD_LINEAR_1D, SKIP_PNSGD_LINEAR_1D,
    MIXTURE_VS_GAUSSIAN, NOISY_GD_PROJECTED_1D, NOISY_GD_LOGISTIC_1D, PNSGD_PROJECTED_1D,
    SAMPLED_GAUSSIAN_COMPOSED,
    SAMPLED_GAUSSIAN_MC, SAMPLED_GAUSSIAN_NAIVE_MC, STOP_PNSGD_LINEAR_DATA_1D, SKIP_PNSGD_LINEAR_DATA_1D,
    *MBCD_FAMILIES, *NMF_FAMILIES, *DPSGD_FAMILIES, *NOISY_SGD_FAMILIES, *SMOOTHING_FAMILIES,
    *PNSGD_DP_FAMILIES, *PSGD_BOX_FAMILIES,
)}


BUILT_IN = frozenset(FAMILIES)
ENTRY_POINT_GROUP = "verify.families"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def family(name: str) -> Family:
    """The instance family called `name` (installed plugins' families included)."""
    if name not in FAMILIES:
        load_entry_points()
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownIdError(f"no family '{name}'; known: {', '.join(sorted(FAMILIES))} (a family of your own: "
                             "--plugin MODULE)") from None


def register(*families: Family) -> tuple[Family, ...]:
    """Make user-declared families known by name to the checker, the falsifier and the CLI. A name is a stable id:
    registering another family under a taken name is an error (re-registering the same object is not)."""
    for fam in families:
        if not isinstance(fam, Family):
            raise PluginError(f"only verify.model.Family objects can be registered, got {type(fam).__name__}")
        if not _NAME.fullmatch(fam.name):
            raise PluginError(f"family name '{fam.name}' must start with a letter and use letters, digits, _ . -")
        taken = FAMILIES.get(fam.name)
        if taken is not None and taken is not fam:
            owner = "a built-in family" if fam.name in BUILT_IN else "another registered family"
            raise PluginError(f"family name '{fam.name}' is already {owner}; names are stable ids, choose another")
        if not fam.truths:
            raise PluginError(f"family '{fam.name}' declares no truth")
        FAMILIES[fam.name] = fam
    return families


def _declared(obj: object, where: str) -> tuple[Family, ...]:
    """The families a plugin object declares: a Family, an iterable of them, or a module's FAMILIES."""
    if isinstance(obj, ModuleType):
        obj = getattr(obj, "FAMILIES", ())
    if isinstance(obj, Family):
        return (obj,)
    if isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        if isinstance(obj, dict):
            obj = obj.values()
        return tuple(obj)
    raise PluginError(f"{where} is a {type(obj).__name__}, not a Family, an iterable of families or a module")


def load_plugin(module: str) -> tuple[Family, ...]:
    """Import `module` (a dotted name importable from sys.path or the current folder) and register its families: those
    in its module-level FAMILIES, and any it registered itself on import. Returns the families it added."""
    before = set(FAMILIES)
    try:
        if module.endswith(".py") or os.sep in module:
            loaded = _import_file(Path(module))
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:  # `verify` as a console script: the folder you
                sys.path.append(os.getcwd())                         # run it in holds your module
            loaded = importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - any failure inside a user's module is reported as the plugin's
        raise PluginError(f"plugin '{module}' cannot be imported: {type(err).__name__}: {err}") from err
    register(*_declared(loaded, f"plugin '{module}'"))
    return tuple(FAMILIES[name] for name in FAMILIES if name not in before)


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"no file {path}")
    name = f"verify_plugin_{path.stem}"
    known = sys.modules.get(name)
    if known is not None and Path(getattr(known, "__file__", "")).resolve() == path.resolve():
        return known  # loaded before in this process: the same families
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(loaded)
    return loaded


_ENTRY_POINTS_LOADED = False


def load_entry_points() -> None:
    """Register the families of installed packages (entry-point group `verify.families`; each entry names a Family,
    an iterable of families or a module), once per process."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = entry.load()
        except Exception as err:  # noqa: BLE001 - a broken installed plugin is named, not a crash
            raise PluginError(f"entry point '{entry.name}' ({entry.value}) of group {ENTRY_POINT_GROUP} cannot be "
                              f"loaded: {type(err).__name__}: {err}") from err
        register(*_declared(obj, f"entry point '{entry.name}'"))


__all__ = ["BUILT_IN", "ENTRY_POINT_GROUP", "FAMILIES", "Family", "closed_form", "family", "load_entry_points",
           "load_plugin", "monte_carlo_renyi", "register"]
