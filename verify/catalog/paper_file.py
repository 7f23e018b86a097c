"""A paper of your own as a catalog: a TOML *paper file* (`*.verify.toml`) or a Python module of THEOREMS.

A paper file declares the paper (`[paper]`: key, title, reference), the plugins whose families it needs
(`[[family]]`: plugin) and its results (`[[theorem]]`), each a bound in LaTeX (`bound`) or SymPy text (`sympy`) on one
family, with a grid and the verdict expected; docs/guides/paper-files.md gives the schema. `load_paper_file`
builds real `verify.model.Theorem`s (one Application each) with ids `<key>.<id>` and puts them into the catalog
(`verify.catalog.add_paper`), so that the checker, the falsifier, the runner and the reports treat them exactly like
the built-in ones. A module form (`load_module`, `--plugin MODULE`, entry-point group `verify.papers`) exports THEOREMS
(ids `<key>.*`, one key), optionally FAMILIES and PAPER ({"title": ..., "reference": ...}).

Rules the loader keeps: every error is one ParameterError line naming the file, the theorem (or table) and the key;
an unknown key is an error with the closest known one; every parameter the check needs has grid values or is pinned
by `where` (a missing one is named: the grid is the claim's evidence and is never guessed); `variant` defaults to
"printed", `side` to "upper", `quantity` to the family's Rényi divergence (or its only quantity).
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

import sympy as sp

from verify.catalog import BUILT_IN_KEYS, Paper, add_paper
from verify.errors import ParameterError, PluginError, VerifyError, did_you_mean
from verify.families import FAMILIES, entry_point_objects, import_plugin, load_plugin
from verify.families import family as get_family
from verify.latex_input import parse_latex_expression
from verify.model import (
    Application,
    Assumption,
    Direction,
    Family,
    FromFamily,
    Source,
    Theorem,
    Variant,
    breaks_facts,
    declared_facts,
)
from verify.parsing import ALLOWED_FUNCTIONS, PARSER_NAMES, parse_expression, quantity_bind
from verify.quantities import Quantity
from verify.results import Verdict

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SUFFIX = ".verify.toml"  # pytest collects files so named; `--paper` takes any name
ENTRY_POINT_GROUP = "verify.papers"
_KEY = re.compile(r"[a-z][a-z0-9_]*")
_ID = re.compile(r"[a-z0-9_]+(\.[a-z0-9_]+)*")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
SIDES = {"upper": Direction.UPPER, "lower": Direction.LOWER, "exact": Direction.EXACT}
EXPECTED = {"HOLDS": Verdict.HOLDS, "VIOLATED": Verdict.VIOLATED}
# each table's keys: required (True) or optional (False)
PAPER_KEYS = {"key": True, "title": True, "reference": False}
FAMILY_KEYS = {"plugin": True}
THEOREM_KEYS = {"id": True, "result": True, "title": False, "bound": False, "sympy": False, "quantity": False,
                "side": False, "family": True, "where": False, "assume": False, "grid": True, "expect": True,
                "note": False, "variant": False, "equation": False}
TOP_KEYS = {"paper": True, "family": False, "theorem": True}

# what this process loaded, in order: ("paper", absolute path) or ("module", name or absolute path); a Dask task
# carries it and a worker loads what it lacks (`load_sources`)
_LOADED: list[tuple[str, str]] = []


class _Where:
    """Where an error is: the file, then the table or theorem, then the key, as one line's prefix."""

    def __init__(self, path: str, table: str = "", key: str = ""):
        self.path, self.table, self.key = path, table, key

    def at(self, table: str = "", key: str = "") -> _Where:
        return _Where(self.path, table or self.table, key)

    def error(self, message: str) -> ParameterError:
        where = ", ".join(p for p in (self.table, f"key '{self.key}'" if self.key else "") if p)
        return ParameterError(f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}")


def _keys(table: object, allowed: Mapping[str, bool], where: _Where) -> dict:
    """`table` as a dict with no unknown key (did-you-mean) and every required key present."""
    if not isinstance(table, dict):
        raise where.error(f"must be a table, got {_kind(table)}")
    for k in table:
        if k not in allowed:
            raise where.at(key=k).error(f"unknown key{did_you_mean(k, allowed)}; known: {', '.join(allowed)}")
    for k, required in allowed.items():
        if required and k not in table:
            raise where.at(key=k).error("missing (required)")
    return table


def _kind(value: object) -> str:
    return {str: "a string", bool: "a boolean", int: "an integer", float: "a number", list: "an array",
            dict: "a table"}.get(type(value), type(value).__name__)


def _text(table: Mapping, key: str, where: _Where, default: str | None = None) -> str:
    value = table.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise where.at(key=key).error(f"must be a non-empty string, got {_kind(value)}" if not isinstance(value, str)
                                      else "must not be empty")
    return value.strip()


def read_paper_file(path: Path | str) -> Paper:
    """The paper a paper file declares (its families' plugins loaded), not yet in the catalog."""
    path = Path(path)
    where = _Where(str(path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise where.error(f"cannot be read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise where.error(f"is not UTF-8 text: {err.reason} at byte {err.start}") from None
    except tomllib.TOMLDecodeError as err:
        raise where.error(f"not valid TOML: {' '.join(str(err).split())}") from None
    _keys(data, TOP_KEYS, where.at("top level"))
    head = _keys(data["paper"], PAPER_KEYS, where.at("[paper]"))
    key = _text(head, "key", where.at("[paper]"))
    if not _KEY.fullmatch(key):
        raise where.at("[paper]", "key").error(f"'{key}' must match [a-z][a-z0-9_]* (it begins every id)")
    if key in BUILT_IN_KEYS:
        raise where.at("[paper]", "key").error(f"'{key}' is a built-in paper's key; choose another")
    title = _text(head, "title", where.at("[paper]"))
    reference = _text(head, "reference", where.at("[paper]")) if "reference" in head else ""
    plugins = data.get("family", [])
    if not isinstance(plugins, list):
        raise where.at("[[family]]").error(f"must be an array of tables ([[family]]), got {_kind(plugins)}")
    for k, entry in enumerate(plugins, 1):
        at = where.at(f"[[family]] #{k}")
        plugin = _text(_keys(entry, FAMILY_KEYS, at), "plugin", at)
        local = path.parent / plugin
        module = str(local.resolve()) if plugin.endswith(".py") else plugin
        try:
            load_module(module)
        except VerifyError as err:
            raise at.at(key="plugin").error(" ".join(str(err).split())) from None
    entries = data["theorem"]
    if not isinstance(entries, list) or not entries:
        raise where.at("[[theorem]]").error("give at least one [[theorem]] table")
    paper = f"{title} ({reference})" if reference else title
    theorems: list[Theorem] = []
    for k, entry in enumerate(entries, 1):
        at = where.at(f"theorem #{k}")
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            at = where.at(f"theorem '{entry['id']}'")
        theorems.append(_theorem(entry, key, paper, at))
        if theorems[-1].id in [t.id for t in theorems[:-1]]:
            raise at.at(key="id").error("declared twice in this file (ids are unique)")
    return Paper(key, title, tuple(theorems), reference, str(path))


def load_paper_file(path: Path | str) -> Paper:
    """Read a paper file (`read_paper_file`) and add its theorems to the catalog (`verify.catalog.add_paper`)."""
    paper = add_paper(read_paper_file(path))
    _remember("paper", str(Path(path).resolve()))
    return paper


def _theorem(entry: object, key: str, paper: str, where: _Where) -> Theorem:
    """One [[theorem]] table as a Theorem with one Application."""
    entry = _keys(entry, THEOREM_KEYS, where)
    local = _text(entry, "id", where)
    if not _ID.fullmatch(local):
        raise where.at(key="id").error(f"'{local}' must match [a-z0-9_.]+ (dot-separated parts)")
    result = _text(entry, "result", where)
    fam = _family(_text(entry, "family", where), where.at(key="family"))
    quantity = _quantity(entry, fam, where.at(key="quantity"))
    side = _text(entry, "side", where, "upper")
    if side not in SIDES:
        raise where.at(key="side").error(f"'{side}' is not one of {', '.join(SIDES)}{did_you_mean(side, SIDES)}")
    expect = _text(entry, "expect", where)
    if expect not in EXPECTED:
        raise where.at(key="expect").error(f"'{expect}' is not one of {', '.join(EXPECTED)}"
                                           f"{did_you_mean(expect, EXPECTED)}")
    variants = [v.value for v in Variant]
    variant = _text(entry, "variant", where, Variant.PRINTED.value)
    if variant not in variants:
        raise where.at(key="variant").error(f"'{variant}' is not one of {', '.join(variants)}"
                                            f"{did_you_mean(variant, variants)}")
    if ("bound" in entry) == ("sympy" in entry):
        raise where.at(key="bound").error("give exactly one of bound (LaTeX) and sympy (SymPy text)")
    language = "bound" if "bound" in entry else "sympy"
    params = {p.name: p.symbol for p in fam.parameters}
    defaults, bind = _where(entry.get("where", {}), fam, params, where.at(key="where"))
    table = {**params, **{k: sp.Symbol(k, real=True) for k in bind}}
    bound = _parse(_text(entry, language, where), table, language, where.at(key=language))
    if bound.has(sp.zoo, sp.nan):
        raise where.at(key=language).error(f"{sp.sstr(bound)} is undefined everywhere (a division by zero)")
    assume = entry.get("assume", [])
    if isinstance(assume, str):
        assume = [assume]
    if not isinstance(assume, list) or not all(isinstance(a, str) for a in assume):
        raise where.at(key="assume").error(f"must be an array of strings (conditions), got {_kind(assume)}")
    assumptions = tuple(Assumption(f"assume_{k}", _parse(text, table, language, where.at(key="assume"), True), text)
                        for k, text in enumerate(assume, 1))
    grid = _grid(entry["grid"], fam, where.at(key="grid"))
    used = set(fam.parameter_names(quantity)) | {s.name for s in bound.free_symbols}
    used |= {s.name for a in assumptions for s in a.condition.free_symbols}
    for target in bind.values():
        values = target.at.values() if isinstance(target, FromFamily) else (target,)
        used |= {s.name for v in values for s in sp.sympify(v).free_symbols}
    if any(isinstance(t, FromFamily) for t in bind.values()):
        used |= {n for t in bind.values() if isinstance(t, FromFamily) for n in fam.parameter_names(t.quantity)
                 if n not in t.at}
    used -= set(bind) | set(defaults)
    missing = sorted(used - set(grid))
    if missing:
        raise where.at(key="grid").error(f"no values for {', '.join(missing)} (parameters of {fam.name} the check "
                                         "needs); give each a list of values in grid, or pin it in where")
    stray = sorted(set(grid) - used)
    if stray:
        raise where.at(key="grid").error(f"{', '.join(stray)} is not used by this check (pinned by where, or not "
                                         f"needed for {quantity.value})")
    title = _text(entry, "title", where, result)
    note = _text(entry, "note", where) if "note" in entry else ""
    equation = _text(entry, "equation", where) if "equation" in entry else ""
    app = Application(fam.name, EXPECTED[expect], grid, defaults, bind)
    try:
        return Theorem(f"{key}.{local}", title, Source("", paper, result, equation), Variant(variant), SIDES[side],
                       quantity, bound, assumptions, frozenset(), (app,), note)
    except VerifyError as err:  # pragma: no cover - the parts are checked above
        raise where.error(" ".join(str(err).split())) from None


def _family(name: str, where: _Where) -> Family:
    try:
        return get_family(name)
    except VerifyError:
        raise where.error(f"no family '{name}'{did_you_mean(name, FAMILIES)} (`verify families` lists them; one of "
                          "your own: a [[family]] plugin)") from None


def _quantity(entry: Mapping, fam: Family, where: _Where) -> Quantity:
    have = [q.value for q in fam.truths]
    if "quantity" not in entry:
        return Quantity.RENYI if Quantity.RENYI in fam.truths else next(iter(fam.truths))
    name = _text(entry, "quantity", where)
    if name not in have:
        raise where.error(f"family {fam.name} has no truth '{name}'{did_you_mean(name, have)}; it has "
                          f"{', '.join(have)}")
    return Quantity(name)


def _parse(text: str, table: Mapping[str, sp.Symbol], language: str, where: _Where,
           condition: bool = False) -> sp.Basic:
    """`text` in the theorem's language (LaTeX for `bound`, SymPy for `sympy`) over `table`'s symbols."""
    what = "condition" if condition else "bound"
    try:
        if language == "sympy":
            return parse_expression(text, table, condition=condition, what=what)
        return parse_latex_expression(text, table, condition=condition, what=what)
    except VerifyError as err:
        raise where.error(" ".join(str(err).split())) from None


def _where(given: object, fam: Family, params: Mapping[str, sp.Symbol],
           where: _Where) -> tuple[dict[str, sp.Expr], dict[str, sp.Expr | FromFamily]]:
    """The `where` table: a paper symbol as an expression of the family's parameters (a bind), or as the family's
    quantity at other arguments ("renyi(alpha=2*alpha)"); a key that is a family parameter pins it (a default)."""
    if not isinstance(given, dict):
        raise where.error(f"must be a table (symbol = \"expression\"), got {_kind(given)}")
    defaults: dict[str, sp.Expr] = {}
    bind: dict[str, sp.Expr | FromFamily] = {}
    for name, value in given.items():
        at = _Where(where.path, where.table, f"where.{name}")
        if not _NAME.fullmatch(name) or name in ALLOWED_FUNCTIONS or name in PARSER_NAMES:
            raise at.error(f"'{name}' cannot name a symbol (a letter, then letters, digits and _; not a function)")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise at.error(f"must be an expression (a string) or a number, got {_kind(value)}")
        text = str(value)

        def parse(x: str, name: str = name) -> sp.Basic:
            return parse_expression(x, params, what=f"where.{name}")

        try:
            target = (quantity_bind(text, fam, parse, f"where.{name} =") if isinstance(value, str) else None) \
                or parse(text)
        except VerifyError as err:
            raise at.error(" ".join(str(err).split())) from None
        if isinstance(target, sp.Expr) and target.has(sp.zoo, sp.nan, sp.oo, -sp.oo):
            raise at.error(f"{sp.sstr(target)} is not a finite number anywhere")
        if isinstance(target, sp.Expr) and name in {s.name for s in target.free_symbols}:
            raise at.error(f"{name} = {sp.sstr(target)} defines {name} by itself")
        if name in params:
            if isinstance(target, FromFamily):
                raise at.error(f"{name} is a parameter of {fam.name}: pin it to an expression, not a quantity")
            defaults[name] = target
        else:
            bind[name] = target
    return defaults, bind


def _grid(given: object, fam: Family, where: _Where) -> dict[str, tuple[float, ...]]:
    """The grid: each family parameter (or theorem symbol) with a non-empty list of numbers in its declared domain."""
    if not isinstance(given, dict) or not given:
        raise where.error(f"must be a non-empty table (parameter = [values]), got {_kind(given)}")
    by_name = {p.name: p for p in fam.parameters}
    out: dict[str, tuple[float, ...]] = {}
    for name, values in given.items():
        at = _Where(where.path, where.table, f"grid.{name}")
        if name not in by_name:
            raise at.error(f"'{name}' is not a parameter of {fam.name}{did_you_mean(name, by_name)}; its parameters: "
                           f"{', '.join(by_name)}")
        values = values if isinstance(values, list) else [values]
        if not values or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
            raise at.error("must be a number or a non-empty array of numbers")
        p = by_name[name]
        for v in values:
            if not math.isfinite(v) or abs(v) > sys.float_info.max:
                raise at.error(f"{v} is not a finite number")
            if p.integer and not float(v).is_integer():
                raise at.error(f"{v:g} is not an integer ({name}: {p.description})")
            if p.domain.subs(p.symbol, v) is sp.false or breaks_facts(declared_facts(p.symbol), float(v)):
                raise at.error(f"{v:g} is outside {fam.name}'s domain {sp.sstr(p.domain)} ({p.description})")
        out[name] = tuple(float(v) for v in values)
    return out


def load_module(module: str) -> Paper | None:
    """`--plugin MODULE`: import it, register its families (FAMILIES, or registered on import) and add its THEOREMS
    (ids `<key>.*` of one key; PAPER {"title", "reference"} optional) as a paper. A module with neither is a
    PluginError."""
    name = str(Path(module).resolve()) if module.endswith(".py") or os.sep in module else module
    again = ("module", name) in _LOADED
    added = load_plugin(module, require_families=False)
    loaded = import_plugin(module)
    theorems = getattr(loaded, "THEOREMS", None)
    if theorems is None and not again and not added and getattr(loaded, "FAMILIES", None) is None:
        raise PluginError(f"plugin '{module}' declares no families and no THEOREMS: give it a module-level FAMILIES "
                          "(a Family or a list of them) or THEOREMS (verify.model.Theorem objects)")
    paper = None if theorems is None else add_paper(paper_of_module(loaded, module))
    _remember("module", name)
    return paper


def paper_of_module(loaded: ModuleType, where: str) -> Paper:
    """The paper a module's THEOREMS (and PAPER) declare, checked: Theorems whose ids share one key."""
    theorems = loaded.THEOREMS
    if isinstance(theorems, Theorem):
        theorems = (theorems,)
    if not isinstance(theorems, (list, tuple)) or not theorems or not all(isinstance(t, Theorem) for t in theorems):
        raise PluginError(f"plugin '{where}': THEOREMS must be a non-empty list of verify.model.Theorem")
    keys = sorted({t.id.split(".", 1)[0] for t in theorems})
    if len(keys) != 1 or any("." not in t.id for t in theorems):
        raise PluginError(f"plugin '{where}': THEOREMS' ids must all be <key>.<result> with one key, got "
                          f"{', '.join(keys)}")
    if not _KEY.fullmatch(keys[0]):
        raise PluginError(f"plugin '{where}': paper key '{keys[0]}' must match [a-z][a-z0-9_]*")
    head = getattr(loaded, "PAPER", {})
    head = {"title": head} if isinstance(head, str) else head
    if not isinstance(head, Mapping) or set(head) - {"title", "reference"}:
        raise PluginError(f"plugin '{where}': PAPER must be a title or a dict with title and reference")
    title = str(head.get("title") or theorems[0].source.paper or keys[0])
    try:
        return Paper(keys[0], title, tuple(theorems), str(head.get("reference", "")), where)
    except VerifyError as err:  # pragma: no cover
        raise PluginError(f"plugin '{where}': {err}") from None


def load_entry_points() -> None:
    """Add the papers of installed packages (entry-point group `verify.papers`: each names a module with THEOREMS),
    once per process."""
    if ("entry_points", ENTRY_POINT_GROUP) in _LOADED:
        return
    _LOADED.append(("entry_points", ENTRY_POINT_GROUP))
    for entry, obj in entry_point_objects(ENTRY_POINT_GROUP):
        if not isinstance(obj, ModuleType):
            raise PluginError(f"entry point '{entry.name}' of group {ENTRY_POINT_GROUP} names {_kind(obj)}, not a "
                              "module with THEOREMS")
        load_plugin(obj.__name__, require_families=False)
        add_paper(paper_of_module(obj, entry.value))


def _remember(kind: str, name: str) -> None:
    if (kind, name) not in _LOADED:
        _LOADED.append((kind, name))


def loaded_sources() -> tuple[tuple[str, str], ...]:
    """What this process loaded (paper files, plugin modules), for a worker that starts without it."""
    return tuple(_LOADED)


def load_sources(sources: Sequence[tuple[str, str]]) -> None:
    """Load the paper files and modules `loaded_sources` named in another process, those not loaded here yet."""
    for kind, name in sources:
        if (kind, name) in _LOADED:
            continue
        if kind == "paper":
            load_paper_file(name)
        elif kind == "module":
            load_module(name)
        else:
            load_entry_points()
