"""The HTML report (index.html) from a jinja2 template; its CSS, script and KaTeX are copied beside it."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

import jinja2

PACKAGE_DIR = Path(__file__).parent
STATIC_DIR = PACKAGE_DIR / "static"
TEMPLATE = "report.html.j2"


def render_html(view: Mapping, schema_version: str) -> str:
    """index.html from `verify.reporting.view.build_view`'s output."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(PACKAGE_DIR / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template(TEMPLATE).render(**view, schema_version=schema_version)


def copy_static(out_dir: Path) -> None:
    """Copy the report's CSS, script and the vendored KaTeX (no network needed to view the report)."""
    shutil.copytree(STATIC_DIR, out_dir / "static", dirs_exist_ok=True)
