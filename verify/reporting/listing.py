"""The builder of the shipped catalog listing (verify/catalog_index.json, read by verify.catalog_index): it prints
every catalog entry as `verify list` shows it and as a results file describes it, and names the sources that text
depends on. `python -m verify.catalog_index` (or `python -m verify.reporting.listing`) rewrites the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from verify.catalog import CATALOG
from verify.catalog_index import HERE, INDEX, digest, entry_text, sympy_version
from verify.reporting.results_json import printed_summary

_LOADED = ("import json, sys, verify.reporting.listing as listing; listing.build_entries(); print(json.dumps(sorted("
           "m.__file__ for n, m in list(sys.modules.items()) if n.split('.')[0] == 'verify' and "
           "getattr(m, '__file__', None))))")


def sources() -> list[str]:
    """The verify modules (paths relative to the package, '/'-separated) that a fresh interpreter loads while it
    builds the listing: its text depends on these, and on nothing else of verify's."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(HERE.parent),
                                                                     os.environ.get("PYTHONPATH"))))}
    done = subprocess.run([sys.executable, "-c", _LOADED], capture_output=True, text=True, env=env, check=True,
                          cwd=HERE.parent, timeout=600)
    return sorted(Path(f).resolve().relative_to(HERE.resolve()).as_posix() for f in json.loads(done.stdout))


def build_entries() -> list[dict]:
    """The listing's entries, printed from the installed catalog."""
    return [{"id": t.id, "text": entry_text(t), "summary": printed_summary(t)} for t in CATALOG.values()]


def build() -> dict:
    """The listing of the installed catalog, with its sources and their digest."""
    names = sources()
    return {"digest": digest(names), "sympy": sympy_version(), "sources": names, "entries": build_entries()}


if __name__ == "__main__":  # pragma: no cover - a developer command
    INDEX.write_text(json.dumps(build(), indent=0, ensure_ascii=False) + "\n")
    print(f"wrote {INDEX}")
