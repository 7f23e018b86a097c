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
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import ModuleType

import sympy as sp

from verify.errors import PluginError, UnknownIdError, did_you_mean
from verify.families._exact import exact as closed_form
from verify.families.basic import FAMILIES as BASIC_FAMILIES
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
from verify.families.pnsgd import (
    CNI_AFFINE,
    PNMSGD_QUADRATIC,
    PNSGD_CONCAVE_QUADRATIC,
    PNSGD_LINEAR,
    PNSGD_QUADRATIC,
)
from verify.families.pnsgd_dp import FAMILIES as PNSGD_DP_FAMILIES
from verify.families.psgd_box import FAMILIES as PSGD_BOX_FAMILIES
from verify.families.shifted import CONTRACTION_GAUSSIAN, SHIFT_REDUCTION_GAUSSIAN
from verify.families.smoothing import FAMILIES as SMOOTHING_FAMILIES
from verify.model import Assumption, Family, Parameter, Quantity, declare_built_in
from verify.truth.montecarlo import monte_carlo_renyi

FAMILIES: dict[str, Family] = {f.name: f for f in (
    NOISY_GD_QUADRATIC, NOISY_GD_SUM_QUADRATIC, PNSGD_QUADRATIC, PNSGD_CONCAVE_QUADRATIC, PNSGD_LINEAR,
    PNMSGD_QUADRATIC, CNI_AFFINE,
    SHIFT_REDUCTION_GAUSSIAN, CONTRACTION_GAUSSIAN, SAMPLED_GAUSSIAN, STOP_PNSGD_LINEAR_1D, SKIP_PNSGD_LINEAR_1D,
    MIXTURE_VS_GAUSSIAN, NOISY_GD_PROJECTED_1D, NOISY_GD_LOGISTIC_1D, PNSGD_PROJECTED_1D,
    SAMPLED_GAUSSIAN_COMPOSED,
    SAMPLED_GAUSSIAN_MC, SAMPLED_GAUSSIAN_NAIVE_MC, STOP_PNSGD_LINEAR_DATA_1D, SKIP_PNSGD_LINEAR_DATA_1D,
    *MBCD_FAMILIES, *NMF_FAMILIES, *DPSGD_FAMILIES, *NOISY_SGD_FAMILIES, *SMOOTHING_FAMILIES,
    *PNSGD_DP_FAMILIES, *PSGD_BOX_FAMILIES, *BASIC_FAMILIES,
)}


BUILT_IN = frozenset(FAMILIES)
declare_built_in(BUILT_IN)
ENTRY_POINT_GROUP = "verify.families"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")


def family(name: str) -> Family:
    """The instance family called `name` (installed plugins' families included)."""
    if name not in FAMILIES:
        load_entry_points()
    try:
        return FAMILIES[name]
    except KeyError:
        raise UnknownIdError(f"no family '{name}'{did_you_mean(name, FAMILIES)}; known: {', '.join(sorted(FAMILIES))} "
                             "(a family of your own: "
                             "--plugin MODULE)") from None


def register(*families: Family) -> tuple[Family, ...]:
    """Make user-declared families known by name to the checker, the falsifier and the CLI. A name is a stable id:
    registering another family under a taken name is an error (re-registering the same object is not)."""
    for fam in families:
        if not isinstance(fam, Family):
            raise PluginError(f"only verify.model.Family objects can be registered, got {type(fam).__name__}")
        problem = _family_problem(fam)
        if problem:
            raise PluginError(problem)
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
    """The families a plugin object declares: a Family, an iterable of them, or a module's FAMILIES (a module without
    one declares none). Each must be a well-formed verify.model.Family: a PluginError names the first that is not."""
    if isinstance(obj, ModuleType):
        try:
            obj = getattr(obj, "FAMILIES", ())
        except Exception as err:  # noqa: BLE001 - a module __getattr__ of the user's
            raise PluginError(f"{where}: reading FAMILIES raised {type(err).__name__}: {err}") from None
        where = f"{where}: FAMILIES"
    if isinstance(obj, Family):
        items: tuple = (obj,)
    elif isinstance(obj, Iterable) and not isinstance(obj, (str, bytes)):
        try:
            items = tuple(obj.values() if isinstance(obj, Mapping) else obj)
        except Exception as err:  # noqa: BLE001 - an iterable of the user's that fails
            raise PluginError(f"{where} cannot be iterated: {type(err).__name__}: {err}") from None
    else:
        raise PluginError(f"{where} is {_a(obj)}, not a Family, an iterable of families or a module")
    for i, item in enumerate(items):
        problem = _family_problem(item)
        if problem:
            raise PluginError(f"{where}, item {i}: {problem}")
    return items


def _a(obj: object) -> str:
    kind = type(obj).__name__
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind}"


def _family_problem(fam: object) -> str:
    """What makes `fam` not a usable Family ('' if nothing): the fields the checker, the falsifier and the CLI read."""
    if not isinstance(fam, Family):
        return f"{_a(fam)}, not a verify.model.Family"
    for name in ("name", "description", "method"):
        if not isinstance(getattr(fam, name), str):
            return f"its {name} is {_a(getattr(fam, name))}, not a str"
    if not isinstance(fam.parameters, (tuple, list)) or not all(isinstance(p, Parameter) and isinstance(
            p.symbol, sp.Symbol) and isinstance(p.description, str) for p in fam.parameters):
        return f"family '{fam.name}': parameters must be a tuple of verify.model.Parameter (a SymPy Symbol each)"
    if not isinstance(fam.truths, Mapping) or not all(callable(fn) for fn in fam.truths.values()):
        return f"family '{fam.name}': truths must map quantities (verify.model.Quantity) to functions"
    strays = [q for q in fam.truths if not isinstance(q, Quantity)]
    if strays:
        return (f"family '{fam.name}': truths are keyed by {strays[0]!r}, not a verify.model.Quantity: use "
                f"Quantity({strays[0]!r}) for a registered id, Quantity.register(id, description) for a new one")
    if isinstance(fam.facts, (str, bytes)) or not isinstance(fam.facts, Iterable) or not all(
            isinstance(f, str) for f in fam.facts):
        return f"family '{fam.name}': facts must be a set of str"
    if not isinstance(fam.constraints, (tuple, list)) or not all(isinstance(c, Assumption) for c in fam.constraints):
        return f"family '{fam.name}': constraints must be a tuple of verify.model.Assumption"
    return ""


_PLUGINS_LOADED: set[str] = set()  # modules load_plugin has registered (a second import adds nothing, rightly)


def import_plugin(module: str) -> ModuleType:
    """Import `module`: a path to a .py file, or a dotted name importable from sys.path or the current folder (the same
    module object on a second call). Any failure of the import (SystemExit included) is a PluginError naming it."""
    try:
        if module.endswith(".py") or os.sep in module:
            return _import_file(Path(module))
        if os.getcwd() not in sys.path and "" not in sys.path:  # `verify` as a console script: the folder you
            sys.path.append(os.getcwd())                         # run it in holds your module
        return importlib.import_module(module)
    except KeyboardInterrupt:  # the user's Ctrl-C, not the plugin's
        raise
    except BaseException as err:  # noqa: BLE001 - any failure inside a user's module (sys.exit too) is the plugin's
        raise PluginError(f"plugin '{module}' cannot be imported: {type(err).__name__}: {err}") from err


def load_plugin(module: str, *, require_families: bool = True) -> tuple[Family, ...]:
    """Import `module` (`import_plugin`) and register its families: those in its module-level FAMILIES, and any it
    registered itself on import. Returns the families it added. A module that declares and registers none is a
    PluginError unless `require_families` is False (a paper's module of theorems, verify.catalog.paper_file)."""
    before = set(FAMILIES)
    loaded = import_plugin(module)
    declared = _declared(loaded, f"plugin '{module}'")
    try:
        register(*declared)
    except PluginError as err:
        raise PluginError(f"plugin '{module}': {err}") from None
    added = tuple(FAMILIES[name] for name in FAMILIES if name not in before)
    if require_families and not declared and not added and module not in _PLUGINS_LOADED:
        raise PluginError(f"plugin '{module}' declares no families: give it a module-level FAMILIES (a Family or a "
                          "list of them), or call verify.families.register in it")
    _PLUGINS_LOADED.add(module)
    return added


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise FileNotFoundError(f"no file {path}")
    name = f"verify_plugin_{path.stem}"
    known = sys.modules.get(name)
    if known is not None and Path(getattr(known, "__file__", "")).resolve() == path.resolve():
        return known  # loaded before in this process: the same families
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python source file")
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(loaded)
    except BaseException:
        sys.modules.pop(name, None)  # a failed import leaves no half-made module to be found next time
        raise
    return loaded


_ENTRY_POINTS_LOADED = False


def load_entry_points() -> None:
    """Register the families of installed packages (entry-point group `verify.families`; each entry names a Family,
    an iterable of families or a module), once per process."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for entry, obj in entry_point_objects(ENTRY_POINT_GROUP):
        register(*_declared(obj, f"entry point '{entry.name}'"))


def entry_point_objects(group: str) -> Iterator[tuple[importlib.metadata.EntryPoint, object]]:
    """Each installed entry point of `group` with the object it names; one that cannot be loaded is a PluginError
    naming it (a broken installed plugin is named, not a crash)."""
    for entry in importlib.metadata.entry_points(group=group):
        try:
            obj = entry.load()
        except Exception as err:  # noqa: BLE001 - any failure inside an installed plugin is the plugin's
            raise PluginError(f"entry point '{entry.name}' ({entry.value}) of group {group} cannot be loaded: "
                              f"{type(err).__name__}: {err}") from err
        yield entry, obj


__all__ = ["BUILT_IN", "ENTRY_POINT_GROUP", "FAMILIES", "Family", "closed_form", "entry_point_objects", "family",
           "import_plugin", "load_entry_points", "load_plugin", "monte_carlo_renyi", "register"]
