"""Verification reports: a versioned JSON certificate (results.json), Markdown and HTML with plots.

Entry points: `build_report` (run the checks and write a report folder atomically) and `write_report`
(write the report of a finished run). Submodules import matplotlib and jinja2 lazily, so the JSON side
(`verify.reporting.schema`, `verify.reporting.latex`) works without them.
"""

from __future__ import annotations

from verify import submodule  # the package itself, already imported: verify.errors and verify._version only

__all__ = ["build_report", "write_report"]


def __getattr__(name: str) -> object:
    """`build_report` and `write_report` from verify.reporting.build, and each submodule, imported on first use."""
    if name in __all__:
        from verify.reporting import build

        return getattr(build, name)
    return submodule(__name__, name)
