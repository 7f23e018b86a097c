"""The columnar layout of a result's points in results.json (schema 3), and the readers that expand it.

Schema 2 wrote every point as an object repeating its keys, theorem, family and truth description: 28 MB for the
catalog. Schema 3 writes one array per field (`n` entries each), strings as `{"levels": [...], "codes": [...]}`
(codes index levels; null where absent), a column of numbers the same way where that is shorter (schema 3.4:
grid parameters, bounds and pads repeat a few values), a column that is null throughout as null, certificates for
the points that have one (with each point's index), an exact truth's interval value -+ |value| rel_pad as its pad
where that gives both ends bit for bit, and leaves out what a point repeats from its result (theorem, family) or
derives from its own fields (`lower`, the largest companion lower bound). `point_rows` gives back exactly the schema-2
point objects; `load_results` reads a results file and tells a reader of another schema what it has.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verify.errors import ParameterError
from verify.results import EXACT_REL, PointResult, Truth

if TYPE_CHECKING:  # annotations only (results_json, which the catalog listing's text depends on, imports this)
    from verify.checker import SkippedPoint

SCHEMA_MAJOR = "3"
SAME_AS_PARAMS = "=params"  # a theorem_values column equal to the params column of the same name


def _coded(values: Iterable[str | None]) -> dict:
    levels: dict[str, int] = {}
    codes = [None if v is None else levels.setdefault(v, len(levels)) for v in values]
    return {"levels": list(levels), "codes": codes}


def _decoded(column: Mapping) -> list[str | None]:
    levels = column["levels"]
    return [None if c is None else levels[c] for c in column["codes"]]


def _identity(v: Any) -> tuple[type, str]:
    """What tells two written values apart: equal values of another type or sign (1 and 1.0, -0.0 and 0.0) differ."""
    return type(v), repr(v)


def _packed(values: list) -> list | dict:
    """A column of numbers (or of decimal strings) as written: coded like a column of strings where that is shorter
    (grid parameters, bounds and pads repeat a few values), else as it is. Levels are told apart by type and repr,
    so -0.0 and 0.0, 1 and 1.0, or two NaNs stay what they were."""
    levels: dict[tuple[type, str], int] = {}
    firsts: list = []
    codes: list[int | None] = []
    plain = nulls = 0
    for v in values:
        if v is None:
            codes.append(None)
            nulls += 1
            continue
        key = _identity(v)
        plain += len(key[1]) + 1
        code = levels.setdefault(key, len(levels))
        if code == len(firsts):
            firsts.append(v)
        codes.append(code)
    coded = sum(len(t) + 1 for _, t in levels) + (len(codes) - nulls) * (len(str(len(levels))) + 1) + 24
    return {"levels": firsts, "codes": codes} if coded < plain else values


def _unpacked(column: list | Mapping | None) -> list | None:
    """A numeric column as `_packed` wrote it (or a results file of schema 3.3 and earlier: a list), as a list."""
    return _decoded(column) if isinstance(column, Mapping) else column


def _table(dicts: Sequence[Mapping[str, Any]]) -> dict[str, list]:
    names: dict[str, None] = {}
    for d in dicts:
        names.update(dict.fromkeys(d))
    return {k: [d.get(k) for d in dicts] for k in names}


def _untable(columns: Mapping[str, list | Mapping], n: int) -> list[dict]:
    columns = {k: _unpacked(col) for k, col in columns.items()}
    return [{k: col[i] for k, col in columns.items() if col[i] is not None} for i in range(n)]


def point_columns(points: Sequence[PointResult], companion_order: Sequence[str] = ()) -> dict:
    """The points of one result as columns (see the module doc); `companion_order` fixes the order of companion
    columns (the application's), companions not in it follow in first-seen order."""
    params = _table([p.params for p in points])
    values = _table([p.theorem_values for p in points])
    theorem_values = {}
    for name, col in values.items():
        same = name in params and all(_identity(v) == _identity(w) for v, w in zip(col, params[name], strict=True))
        theorem_values[name] = SAME_AS_PARAMS if same else _packed(col)
    seen = dict.fromkeys(companion_order)
    for p in points:
        seen.update(dict.fromkeys(c.theorem for c in p.companions))
    companions = []
    for cid in seen:
        at = [next((c for c in p.companions if c.theorem == cid), None) for p in points]
        present = [c for c in at if c is not None]
        if present:
            companions.append({"theorem": cid, "direction": present[0].direction,
                               "value": _packed([None if c is None else c.value for c in at]),
                               "verdict": _coded(None if c is None else c.verdict.value for c in at)})
    truths = [p.truth for p in points]
    return {
        "layout": "columns",
        "n": len(points),
        "params": {name: _packed(col) for name, col in params.items()},
        "theorem_values": theorem_values,
        "bound": _packed([p.bound for p in points]),
        "truth": _truth_columns(truths),
        "verdict": _coded(p.verdict.value for p in points),
        "margin": _packed([p.margin for p in points]),
        "ratio": _packed([p.ratio for p in points]),
        "origin": _coded(p.origin for p in points),
        "companions": companions,
        "certificates": _certificate_columns(points),
    }


def _rel_pad(t: Truth) -> float | None:
    """EXACT_REL where the interval is value -+ |value| EXACT_REL (Truth.exact) bit for bit, so that the reader can
    recompute both ends; None otherwise."""
    pad = abs(t.value) * EXACT_REL
    exact = math.isfinite(pad) and t.lower == t.value - pad and t.upper == t.value + pad
    return EXACT_REL if exact else None


def _nullable(column: list) -> list | dict | None:
    """A column (`_packed`), or null where every entry is null."""
    return None if all(v is None for v in column) else _packed(column)


def _truth_columns(truths: Sequence[Truth]) -> dict:
    pads = [_rel_pad(t) for t in truths]
    return {"value": _packed([t.value for t in truths]),
            "rel_pad": _nullable(pads),
            "lower": _nullable([t.lower if r is None else None for t, r in zip(truths, pads, strict=True)]),
            "upper": _nullable([t.upper if r is None else None for t, r in zip(truths, pads, strict=True)]),
            "method": _coded(t.method.value for t in truths), "detail": _coded(t.detail for t in truths),
            "confidence": _nullable([t.confidence for t in truths]), "ess": _nullable([t.ess for t in truths])}


def _certificate_columns(points: Sequence[PointResult]) -> dict:
    """The certificates of the points that have one, as columns, with the index of each point."""
    at = [(i, p.certificate) for i, p in enumerate(points) if p.certificate is not None]
    certs = [c for _, c in at]
    return {"index": [i for i, _ in at], "verdict": _coded(c.verdict.value for c in certs),
            "filter_verdict": _coded(c.filter_verdict.value for c in certs),
            **{k: _packed([getattr(c, k) for c in certs]) for k in ("truth_lower", "truth_upper", "bound_lower",
                                                                     "bound_upper")},
            "method": _coded(c.method for c in certs), "precision_bits": _packed([c.precision_bits for c in certs]),
            "reason": _coded(c.reason for c in certs), "seconds": [c.seconds for c in certs]}


def _certificate_rows(columns: Mapping) -> dict[int, dict]:
    coded = {k: _decoded(columns[k]) for k in ("verdict", "filter_verdict", "method", "reason")}
    ends = {k: _unpacked(columns[k]) for k in ("truth_lower", "truth_upper", "bound_lower", "bound_upper",
                                               "precision_bits", "seconds")}
    return {i: {"verdict": coded["verdict"][k], "filter_verdict": coded["filter_verdict"][k],
                "truth": [ends["truth_lower"][k], ends["truth_upper"][k]],
                "bound": [ends["bound_lower"][k], ends["bound_upper"][k]], "method": coded["method"][k],
                "precision_bits": ends["precision_bits"][k], "reason": coded["reason"][k],
                "seconds": ends["seconds"][k]}
            for k, i in enumerate(columns["index"])}


def _column(column: list | Mapping | None, n: int) -> list:
    return [None] * n if column is None else _unpacked(column)


def _interval(value, rel, lower, upper) -> tuple:
    if rel is None:
        return lower, upper
    pad = abs(value) * rel
    return value - pad, value + pad


def point_rows(columns: Mapping, theorem: str, family: str) -> list[dict]:
    """The schema-2 point objects (PointResult.to_dict() plus `lower`) of a result's point columns."""
    n = columns["n"]
    params = _untable(columns["params"], n)
    names = {k: col if col == SAME_AS_PARAMS else _unpacked(col) for k, col in columns["theorem_values"].items()}
    truth = columns["truth"]
    truth_value, bound, margin, ratio = (_unpacked(c) for c in (truth["value"], columns["bound"], columns["margin"],
                                                                 columns["ratio"]))
    method, detail = _decoded(truth["method"]), _decoded(truth["detail"])
    verdict, origin = _decoded(columns["verdict"]), _decoded(columns["origin"])
    companions = [(dict(c, value=_unpacked(c["value"])), _decoded(c["verdict"])) for c in columns["companions"]]
    certificates = _certificate_rows(columns["certificates"])
    rel, lower, upper, confidence, ess = (_column(truth[k], n) for k in ("rel_pad", "lower", "upper", "confidence",
                                                                          "ess"))
    rows = []
    for i in range(n):
        values = {}
        for name, col in names.items():
            value = params[i].get(name) if col == SAME_AS_PARAMS else col[i]
            if value is not None:
                values[name] = value
        comps = [{"theorem": c["theorem"], "direction": c["direction"], "value": c["value"][i], "verdict": v[i]}
                 for c, v in companions if v[i] is not None]
        lowers = [c for c in comps if c["direction"] == "lower"]
        rows.append({
            "theorem": theorem, "family": family, "params": params[i], "theorem_values": values,
            "bound": bound[i],
            "truth": dict(zip(("value", "lower", "upper"), (truth_value[i], *_interval(
                truth_value[i], rel[i], lower[i], upper[i])), strict=True),
                method=method[i], detail=detail[i], confidence=confidence[i], ess=ess[i]),
            "verdict": verdict[i], "margin": margin[i], "ratio": ratio[i], "companions": comps,
            "origin": origin[i], "certificate": certificates.get(i),
            "lower": max(lowers, key=lambda c: _as_float(c["value"])) if lowers else None,
        })
    return rows


def skipped_columns(skipped: Sequence[SkippedPoint]) -> dict:
    """Grid points outside the assumptions, as columns: params, and the assumption that excluded each."""
    params = _table([s.params for s in skipped])
    return {"layout": "columns", "n": len(skipped), "params": {name: _packed(col) for name, col in params.items()},
            "assumption": _coded(s.assumption for s in skipped)}


def skipped_rows(columns: Mapping) -> list[dict]:
    """The schema-2 skipped-point objects ({"params", "assumption"}) of skipped-point columns."""
    params = _untable(columns["params"], columns["n"])
    return [{"params": p, "assumption": a} for p, a in zip(params, _decoded(columns["assumption"]), strict=True)]


def dump_results(data: Mapping) -> str:
    """The text of a results file: compact JSON (no indentation: the columns are long), strict (no NaN literals)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"


def load_results(path: str | Path) -> dict:
    """A results file (`verify run --json`, a report's results.json) of schema 3, whose every result the readers here
    (point_rows, skipped_rows) can expand; a one-line ParameterError naming the file for anything else: a file that
    cannot be read, text that is not UTF-8 or not strict JSON, another schema (schema 2 listed points as objects:
    re-run `verify run --json` to get columns), or a document of the wrong shape (a missing key, a wrong type, columns
    of the wrong length, a code outside its levels)."""
    try:
        raw = Path(path).read_bytes()
    except (OSError, ValueError) as err:  # ValueError: a path with a NUL byte
        raise ParameterError(f"{path}: cannot read the results file: {getattr(err, 'strerror', None) or err}") from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as err:
        raise ParameterError(f"{path}: not a results file: not UTF-8 text (byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise ParameterError(f"{path}: not a results file: not JSON (line {err.lineno}, column {err.colno}: "
                             f"{err.msg})") from None
    except (ValueError, RecursionError) as err:  # NaN/Infinity tokens, an integer too long, nesting too deep
        raise ParameterError(f"{path}: not a results file: {type(err).__name__}: {err}") from None
    version = data.get("schema_version", "") if isinstance(data, dict) else ""
    version = version if isinstance(version, str) else ""
    if version.split(".")[0] != SCHEMA_MAJOR:
        raise ParameterError(f"{path}: results schema {version or 'unknown'}; this verify reads schema "
                             f"{SCHEMA_MAJOR}.x, whose points are columns (verify.reporting.columns). "
                             "Schema 2 files list points as objects: re-run `verify run --json` to convert.")
    problem = _results_problem(data)
    if problem:
        raise ParameterError(f"{path}: not a results file verify wrote (edited or damaged?): {problem}")
    return data


def _no_constant(token: str) -> None:
    raise ValueError(f"{token} is not strict JSON (results files write non-finite numbers as strings)")


_NON_FINITE = ("Infinity", "-Infinity", "NaN")  # how results files write non-finite numbers


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v: Any) -> bool:
    """A number that is a finite float (a JSON integer of 400 digits is a number, but no float)."""
    try:
        return _number(v) and math.isfinite(float(v))
    except OverflowError:
        return False


def _count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _list_problem(v: Any, n: int, where: str, nullable: bool = False) -> str:
    if v is None and nullable:
        return ""
    if isinstance(v, dict):  # a coded column of numbers (`_packed`)
        return _coded_problem(v, n, where)
    return "" if isinstance(v, list) and len(v) == n else f"{where} is not a list of {n} entries"


def _coded_problem(c: Any, n: int, where: str) -> str:
    if not isinstance(c, dict) or not isinstance(c.get("levels"), list) or not isinstance(c.get("codes"), list):
        return f"{where} is not a coded column ({{\"levels\": [...], \"codes\": [...]}})"
    if len(c["codes"]) != n:
        return f"{where} has {len(c['codes'])} codes, not {n}"
    if not all(x is None or (_count(x) and x < len(c["levels"])) for x in c["codes"]):
        return f"{where} has a code outside its {len(c['levels'])} levels"
    return ""


def _table_problem(t: Any, n: int, where: str) -> str:
    if not isinstance(t, dict):
        return f"{where} is not an object of columns"
    return next((p for k, col in t.items() if (p := _list_problem(col, n, f"{where}.{k}"))), "")


def _first(*problems: str) -> str:
    return next((p for p in problems if p), "")


def _results_problem(data: dict) -> str:
    results = data.get("results")
    if not isinstance(results, list):
        return "results is not a list"
    for i, entry in enumerate(results):
        where = f"results[{i}]"
        if not isinstance(entry, dict):
            return f"{where} is not an object"
        problem = _first(*(f"{where}.{k} is not a string" for k in ("theorem", "family")
                           if not isinstance(entry.get(k), str)),
                         *(f"{where}.{k} is {what if k in entry else 'missing'}"
                           for k, (ok, what) in _RESULT_FIELDS.items() if not ok(entry.get(k, _ABSENT))),
                         _points_problem(entry.get("points"), f"{where}.points"),
                         _skipped_problem(entry.get("skipped_points"), f"{where}.skipped_points"))
        if problem:
            return problem
    return ""


_ABSENT = object()  # a field a result does not have


def _real_or_null(v: Any) -> bool:
    return v is None or _number(v) or v in _NON_FINITE


def _point_or_null(v: Any) -> bool:
    """A counterexample: null, or a point whose params are numbers a float holds (they are shown as `K=1, m=251`)."""
    return v is None or isinstance(v, dict) and isinstance(v.get("params"), dict) and all(
        _finite(x) or x in _NON_FINITE for x in v["params"].values())


_RESULT_FIELDS: dict[str, tuple[Any, str]] = {  # a result's fields its readers use (verify.results_frame)
    **dict.fromkeys(("id", "variant", "direction", "quantity", "expected", "verdict"),
                    (lambda v: isinstance(v, str), "not a string")),
    "as_expected": (lambda v: isinstance(v, bool), "not true or false"),
    "vacuous": (lambda v: v is _ABSENT or isinstance(v, bool), "neither true nor false"),  # absent: false
    **dict.fromkeys(("n_points", "n_skipped", "n_errors"), (_count, "not a count")),
    **dict.fromkeys(("ratio_min", "ratio_max"), (_real_or_null, "neither a number nor null")),
    "counterexample": (_point_or_null, "neither null nor a point with numeric params"),
}


def _skipped_problem(s: Any, where: str) -> str:
    if not isinstance(s, dict) or not _count(s.get("n")):
        return f"{where} is not a column layout with a count n"
    return _first(_table_problem(s.get("params"), s["n"], f"{where}.params"),
                  _coded_problem(s.get("assumption"), s["n"], f"{where}.assumption"))


def _points_problem(p: Any, where: str) -> str:
    if not isinstance(p, dict) or not _count(p.get("n")):
        return f"{where} is not a column layout with a count n"
    n = p["n"]
    names = p.get("theorem_values")
    truth = p.get("truth")
    problem = _first(
        _table_problem(p.get("params"), n, f"{where}.params"),
        "" if isinstance(names, dict) else f"{where}.theorem_values is not an object",
        *(_list_problem(p.get(k), n, f"{where}.{k}") for k in ("bound", "margin", "ratio")),
        *(_coded_problem(p.get(k), n, f"{where}.{k}") for k in ("verdict", "origin")),
        "" if isinstance(truth, dict) else f"{where}.truth is not an object",
        "" if isinstance(p.get("companions"), list) else f"{where}.companions is not a list",
        "" if isinstance(p.get("certificates"), dict) else f"{where}.certificates is not an object")
    if problem:
        return problem
    problem = _first(
        *(f"{where}.theorem_values.{k} is neither {SAME_AS_PARAMS!r} nor a list of {n} entries"
          for k, col in names.items() if col != SAME_AS_PARAMS and _list_problem(col, n, "")),
        _list_problem(truth.get("value"), n, f"{where}.truth.value"),
        *(f"{where}.truth.{k} is missing (null where no point has one)" if k not in truth else
          _list_problem(truth[k], n, f"{where}.truth.{k}", nullable=True)
          for k in ("rel_pad", "lower", "upper", "confidence", "ess")),
        *(_coded_problem(truth.get(k), n, f"{where}.truth.{k}") for k in ("method", "detail")))
    if problem:
        return problem
    rel = _column(truth.get("rel_pad"), n)
    if any(r is not None and not (_finite(r) and _finite(v)) for r, v in zip(rel, _unpacked(truth["value"]),
                                                                            strict=True)):
        return f"{where}.truth: a rel_pad beside a value that is not a finite number"
    for j, c in enumerate(p["companions"]):
        cw = f"{where}.companions[{j}]"
        if not isinstance(c, dict) or not all(isinstance(c.get(k), str) for k in ("theorem", "direction")):
            return f"{cw} is not an object with strings theorem and direction"
        if _list_problem(c.get("value"), n, "") or not all(
                v is None or _finite(v) or v in _NON_FINITE for v in _unpacked(c["value"])):
            return f"{cw}.value is not a list of {n} numbers or nulls"
        problem = _coded_problem(c.get("verdict"), n, f"{cw}.verdict")
        if problem:
            return problem
        if any((v is None) != (code is None) for v, code in zip(_unpacked(c["value"]), c["verdict"]["codes"],
                                                                 strict=True)):
            return f"{cw}: a value without a verdict, or a verdict without a value"
    return _certificates_problem(p["certificates"], n, f"{where}.certificates")


def _certificates_problem(c: dict, n: int, where: str) -> str:
    index = c.get("index")
    if not isinstance(index, list) or not all(_count(i) and i < n for i in index):
        return f"{where}.index is not a list of point indices below {n}"
    m = len(index)
    return _first(*(_coded_problem(c.get(k), m, f"{where}.{k}") for k in ("verdict", "filter_verdict", "method",
                                                                          "reason")),
                  *(_list_problem(c.get(k), m, f"{where}.{k}") for k in ("truth_lower", "truth_upper", "bound_lower",
                                                                          "bound_upper", "precision_bits", "seconds")))


def _as_float(v: Any) -> float:
    """A results-file number as a float ("Infinity", "-Infinity", "NaN" strings included), for ordering only."""
    return float(v.replace("Infinity", "inf")) if isinstance(v, str) else float(v)
