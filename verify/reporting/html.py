"""The HTML report (index.html) from a jinja2 template; its CSS, script and KaTeX are copied beside it, or inlined
with the plots into one self-contained file (`single_file`)."""

from __future__ import annotations

import base64
import html
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


NOT_INLINED = "a file of the report folder, not part of this single file"


def _links(page: str, folder: Path) -> str:
    """The page's links to files (before anything is inlined, so that only its own markup is read): a plot's sweep
    data (a few kB) inlined as a data URI saved under its name; any other file (results.json, report.md: megabytes
    for the catalog) dropped, its name kept in the text with a note that the file is not here."""
    def link(match: re.Match) -> str:
        target, text = folder / html.unescape(match.group(1)), match.group(2)
        if target.parent.name == "plots" and target.suffix == ".json" and target.is_file():
            return f'<a download="{html.escape(target.name)}" href="{_data_uri(target, "application/json")}">{text}</a>'
        return f"<code>{text}</code> ({NOT_INLINED})"
    return re.sub(r'<a href="(?![a-zA-Z][a-zA-Z0-9+.-]*:|#)([^"]+)">(.*?)</a>', link, page, flags=re.S)


def single_file(page: str, folder: Path) -> str:
    """`page` (index.html's text, its files under `folder`) with its style sheets, scripts and KaTeX's fonts inlined,
    every plot and its data as data URIs, and no link to a file left behind (`_links`): one file that opens
    anywhere, offline. Of a font, only the woff2 KaTeX lists first is inlined; its woff and ttf fallbacks, which
    this report does not ship, are dropped."""
    def style(match: re.Match) -> str:
        css_path = folder / match.group(1)
        css = css_path.read_text(encoding="utf-8")

        def font(m: re.Match) -> str:
            f = css_path.parent / m.group(1)
            return f"url({_data_uri(f, 'font/woff2')})" if f.suffix == ".woff2" and f.is_file() else m.group(0)
        css = re.sub(r"url\(([^)\"']+)\)", font, css)
        css = re.sub(r",\s*url\((?!data:)[^)]*\)\s*format\([^)]*\)", "", css)  # the fallbacks not shipped
        return "<style>\n" + css + "\n</style>"

    def script(match: re.Match) -> str:
        js = (folder / match.group(2)).read_text(encoding="utf-8").replace("</script", "<\\/script")
        return f"<script>\n{js}\n</script>"  # defer means nothing inline: KaTeX runs before DOMContentLoaded

    def image(match: re.Match) -> str:
        return f'<img src="{_data_uri(folder / match.group(1), "image/svg+xml")}"'

    page = _links(page, folder)
    page = re.sub(r'<link rel="stylesheet" href="([^"]+)">', style, page)
    page = re.sub(r'<script( defer)? src="([^"]+)"></script>', script, page)
    return re.sub(r'<img src="(plots/[^"]+\.svg)"', image, page)


def copy_static(out_dir: Path) -> None:
    """Copy the report's CSS, script and the vendored KaTeX (no network needed to view the report)."""
    shutil.copytree(STATIC_DIR, out_dir / "static", dirs_exist_ok=True)
