"""The HTML report (index.html) from a jinja2 template; its CSS, script and KaTeX are copied beside it, or inlined
with the plots into one self-contained file (`single_file`)."""

from __future__ import annotations

import base64
import re
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


def _data_uri(path: Path, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def single_file(page: str, folder: Path) -> str:
    """`page` (index.html's text, its files under `folder`) with its style sheets, scripts and KaTeX's fonts inlined
    and every plot as a data URI: one file that opens anywhere, offline. A font format KaTeX lists but this report
    does not ship (woff, ttf: browsers take the woff2 first) keeps its relative address."""
    def style(match: re.Match) -> str:
        css_path = folder / match.group(1)
        css = css_path.read_text(encoding="utf-8")

        def font(m: re.Match) -> str:
            f = css_path.parent / m.group(1)
            return f"url({_data_uri(f, 'font/woff2')})" if f.suffix == ".woff2" and f.is_file() else m.group(0)
        return "<style>\n" + re.sub(r"url\(([^)\"']+)\)", font, css) + "\n</style>"

    def script(match: re.Match) -> str:
        js = (folder / match.group(2)).read_text(encoding="utf-8").replace("</script", "<\\/script")
        return f"<script>\n{js}\n</script>"  # defer means nothing inline: KaTeX runs before DOMContentLoaded

    def image(match: re.Match) -> str:
        return f'<img src="{_data_uri(folder / match.group(1), "image/svg+xml")}"'

    page = re.sub(r'<link rel="stylesheet" href="([^"]+)">', style, page)
    page = re.sub(r'<script( defer)? src="([^"]+)"></script>', script, page)
    return re.sub(r'<img src="(plots/[^"]+\.svg)"', image, page)


def copy_static(out_dir: Path) -> None:
    """Copy the report's CSS, script and the vendored KaTeX (no network needed to view the report)."""
    shutil.copytree(STATIC_DIR, out_dir / "static", dirs_exist_ok=True)
