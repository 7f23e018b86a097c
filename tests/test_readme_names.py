"""Every dotted name README and the documentation (docs/**/*.md) give under `verify` resolves after a plain
`import verify` (issue 47, section 4: README's `verify.accountant.epsilon(...)` raised AttributeError), while
`import verify` itself stays lazy: it loads none of the submodules, nor SymPy, until a name is used."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RESOLVE = """
import json, sys
import verify
lazy = sorted(m for m in sys.modules if m.startswith("verify.") and m not in ("verify._version", "verify.errors"))
heavy = sorted(m for m in ("sympy", "numpy", "scipy", "mpmath") if m in sys.modules)
failed = {}
for name in json.loads(sys.argv[1]):
    obj = verify
    try:
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
    except AttributeError as err:
        failed[name] = str(err)
print(json.dumps({"lazy": lazy, "heavy": heavy, "failed": failed}))
"""


NOT_NAMES = {"verify.toml", "verify.papers"}  # a paper file's suffix (*.verify.toml), an entry-point group


def _names() -> list[str]:
    """The dotted names under verify in README and the docs (calls and attributes; a trailing call's parentheses
    dropped)."""
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
    found = set(re.findall(r"(?<![\w./-])verify(?:\.[A-Za-z_][A-Za-z0-9_]*)+", text))  # not draft.verify.toml
    return sorted(found - NOT_NAMES)


def test_every_name_the_docs_give_under_verify_resolves_after_import_verify():
    names = _names()
    assert "verify.accountant.epsilon" in names and "verify.reporting.columns.point_rows" in names
    done = subprocess.run([sys.executable, "-c", RESOLVE, json.dumps(names)], capture_output=True, text=True,
                          check=True, timeout=600)
    out = json.loads(done.stdout)
    assert out["failed"] == {}
    assert out["lazy"] == [] and out["heavy"] == [], out  # `import verify` alone loaded none of them


def test_a_name_that_is_no_submodule_is_still_an_attribute_error():
    import verify

    for owner, name in ((verify, "no_such_module"), (verify, "_private"), (verify.reporting, "nothing_here"),
                        (verify.truth, "numbers_")):
        assert not hasattr(owner, name)
