"""The package's layers (issue 49): every import of verify's own modules, at module level or inside a function, goes
down the layer order below or stays in its layer; no import cycle exists counting imports inside functions; and few
imports sit inside functions outside the CLI (each one defers a heavy dependency). Read from the source with `ast`,
not from what an interpreter happens to load."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "verify"

# the layers, lowest first; a module belongs to the longest prefix listed (a package's entry covers its submodules)
LAYERS: dict[str, int] = {
    # 0 foundation: errors, caps and deadlines, symbols, numbers, display, the shipped listing's reader
    "verify": 0, "verify._version": 0, "verify.errors": 0, "verify.exitcodes": 0, "verify.quantities": 0,
    "verify.symbols": 0, "verify.progress": 0, "verify.stopping": 0, "verify.limits": 0, "verify.backend": 0,
    "verify.executors": 0, "verify.conventions": 0, "verify.catalog_index": 0, "verify.runmemo": 0,
    "verify.display": 0, "verify.truth.numbers": 0, "verify.recursion": 0, "verify.stable_powers": 0,
    # 1 data model: results, theorems and families as plain data, bounds and their parser
    "verify.results": 1, "verify.model": 1, "verify.bounds": 1, "verify.parsing": 1,
    "verify.latex_input": 1,
    # 2 engines: ground truths, the bounds' interval certification, the accountant
    "verify.truth": 2, "verify.certify": 2, "verify.accountant": 2, "verify.accountant_calibrate": 2,
    "verify.accountant_events": 2,
    # 3 declarations: the built-in families and the catalog of theorems
    "verify.families": 3, "verify.catalog": 3,
    # 4 the evaluation pipeline: memo, on-disk cache, isolation (and the contract check it runs), the rigorous path
    "verify.pipeline": 4,
    # 5 checker and the falsifier's search; the audit of a mechanism's samples (issue 51)
    "verify.checker": 5, "verify.testing.falsify": 5, "verify.testing.strategies": 5, "verify.testing.routes": 5,
    "verify.audit": 5,
    # 6 runner and the public entry points built on it
    "verify.runner": 6, "verify.api": 6, "verify.accountant_compare": 6, "verify.testing": 6,
    "verify.testing.pytest_plugin": 6, "verify.adapters": 6,
    "verify.accountant_curve": 6,  # curves, per-step accounting and other accountants' values at their points
    # 7 reporting and the CLI
    "verify.reporting": 7, "verify.cli": 7, "verify.__main__": 7,
}
NAMES = ["foundation", "data model", "engines", "declarations", "pipeline", "checker", "runner", "reporting/CLI"]
MAX_FUNCTION_LEVEL = 15  # imports of verify's modules inside functions, outside verify/cli.py


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def layer(module: str) -> int:
    name = module
    while name not in LAYERS:
        assert "." in name, f"{module} has no layer in tests/test_layers.py's LAYERS: give it one"
        name = name.rpartition(".")[0]
    return LAYERS[name]


def _type_checking(tree: ast.AST) -> set[int]:
    """ids of the import nodes under `if TYPE_CHECKING:` (annotations only: never run)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", None)) == "TYPE_CHECKING":
            out |= {id(n) for sub in node.body for n in ast.walk(sub)}
    return out


def imports() -> list[tuple[str, str, int, bool]]:
    """(importer, imported verify module, line, inside a function) for every import of one of verify's modules, one
    per imported name (`from verify.x import a, b` is two, as ../shared/tools/importgraph.py counts them)."""
    known = modules()

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    out = []
    for mod, path in sorted(known.items()):
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking(tree)
        inner = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                 for n in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:  # a relative import, resolved against the importing module's package
                    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        package = package.rpartition(".")[0]
                    base = f"{package}.{base}" if base else package
                targets = [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target != "verify" and not target.startswith("verify."):
                    continue
                found = resolve(target)
                if found and found != mod:
                    out.append((mod, found, node.lineno, id(node) in inner))
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_counting_imports_inside_functions():
    edges: dict[str, set[str]] = {m: set() for m in modules()}
    for importer, imported, _, _ in imports():
        if not imported.startswith(importer + "."):  # a package naming its own submodules is its face, not a cycle
            edges[importer].add(imported)
    assert cycles(edges) == []


def test_every_import_goes_down_the_layers_or_stays_in_its_layer():
    upward = sorted({f"{a} ({NAMES[layer(a)]}) imports {b} ({NAMES[layer(b)]}), line {line}"
                     for a, b, line, _ in imports() if layer(b) > layer(a)})
    assert upward == []


def test_few_imports_of_verify_modules_sit_inside_functions_outside_the_cli():
    inside = [f"{a}:{line} -> {b}" for a, b, line, in_function in imports() if in_function and a != "verify.cli"]
    assert len(inside) <= MAX_FUNCTION_LEVEL, "\n".join(inside)


def test_every_module_has_a_layer():
    for module in modules():
        assert 0 <= layer(module) < len(NAMES)
