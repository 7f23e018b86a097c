"""A precomputed listing of the catalog, so that `verify list` answers without importing SymPy or building the
catalog's expressions (issue 22: ~0.15 s instead of ~1.3 s).

The listing (catalog_index.json, shipped with the package) names the sources its text depends on, derived rather than
listed by hand: every verify module a fresh interpreter loads while it builds the listing (the catalog, the classes
it prints, verify's version, the printers of its summaries: `sources`). It carries their digest and the SymPy
version that printed it. `entries()` returns it only where both match what is installed; otherwise None, and the CLI
builds the catalog as before, so the listing is never stale. `python -m verify.catalog_index` rewrites it
(tests/test_catalog_index.py fails, naming that command, when it is out of date); the builder is
verify.reporting.listing, which prints the catalog: this module, which `verify list` reads, imports neither."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cache
from importlib import metadata
from pathlib import Path

from verify.errors import did_you_mean

HERE = Path(__file__).parent
INDEX = HERE / "catalog_index.json"
def digest(names: Sequence[str], root: Path = HERE) -> str | None:
    """sha256 of the named sources under `root` (names and bytes), or None where one cannot be read."""
    h = hashlib.sha256()
    for name in sorted(names):
        try:
            text = (root / name).read_bytes()
        except OSError:
            return None
        h.update(name.encode() + b"\0" + text + b"\0")
    return h.hexdigest()


def sympy_version() -> str:
    """The installed SymPy's version: it prints the bounds, so a listing printed by another one is not used."""
    try:
        return metadata.version("sympy")
    except metadata.PackageNotFoundError:  # pragma: no cover - SymPy is a dependency
        return ""


def no_match(selectors, known) -> str:
    """The message for selectors that match no catalog entry, with the closest ids or paper keys."""
    hints = "".join(did_you_mean(s, known) for s in selectors)
    return f"nothing in the catalog matches {', '.join(selectors)}{hints}; see `verify list`"


def entries() -> list[dict] | None:
    """[{"id", "text", "summary"}] in catalog order, or None where the shipped listing does not match the installed
    sources and SymPy."""
    try:
        data = json.loads(INDEX.read_text())
    except (OSError, ValueError):
        return None
    current = data.get("digest") == digest(data.get("sources", ())) and data.get("sympy") == sympy_version()
    return data["entries"] if current else None


@cache
def summaries() -> dict[str, dict]:
    """The shipped `theorem_summary` of each catalog entry by id (its text and LaTeX, printed once by SymPy when the
    listing was written: ~0.5 s of every results file), or {} where the listing is not current."""
    return {e["id"]: e["summary"] for e in entries() or () if "summary" in e}


def entry_text(t) -> str:
    """How `verify list` shows one catalog entry (a verify.model.Theorem)."""
    fams = ", ".join(f"{a.family} (expect {a.expected.value})" for a in t.applications)
    where = t.source.seed or t.source.paper
    return (f"{t.id}\n  {t.title}\n  source: {t.source.result} {t.source.equation} [{where}]"
            f"\n  {t.direction.value} bound on {t.quantity.value} ({t.variant.value}): {t.bound}"
            f"\n  assumptions: {'; '.join(f'{a.name}: {a.condition}' for a in t.assumptions) or '-'}"
            f"\n  checked on: {fams}\n")


if __name__ == "__main__":  # pragma: no cover - a developer command, kept under its documented name
    import runpy

    runpy.run_module("verify.reporting.listing", run_name="__main__", alter_sys=True)
