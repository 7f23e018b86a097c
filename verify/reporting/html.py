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
from markupsafe import Markup

PACKAGE_DIR = Path(__file__).parent
STATIC_DIR = PACKAGE_DIR / "static"
TEMPLATE = "report.html.j2"


THEOREM_ID = re.compile(r"(?<![\w.-])[A-Za-z][\w-]*\d{4}[a-z]?(?:\.\w+)+")  # e.g. chen2024.theorem4_6.lemma4_1


def linked(text: str, ids: frozenset[str]) -> Markup:
    """`text` escaped, with each theorem id in `ids` (the longest a dotted word starts with) a link to its anchor."""
    def link(match: re.Match) -> str:
        word, rest = match.group(), ""
        while word not in ids and "." in word:
            word, tail = word.rsplit(".", 1)
            rest = f".{tail}{rest}"
        if word not in ids:
            return html.escape(match.group(), quote=False)
        return f'<a href="#{html.escape(word)}"><code>{html.escape(word, quote=False)}</code></a>' + html.escape(rest)
    out, end = [], 0
    for match in THEOREM_ID.finditer(text):
        out += [html.escape(text[end:match.start()], quote=False), link(match)]
        end = match.end()
    return Markup("".join([*out, html.escape(text[end:], quote=False)]))


SVG_SIZE = re.compile(r'<svg\b[^>]*?\swidth="([\d.]+)pt"[^>]*?\sheight="([\d.]+)pt"')


def svg_size(svg: Path) -> tuple[int, int] | None:
    """An SVG's width and height in CSS pixels (from matplotlib's width="...pt"), or None when it has none."""
    with svg.open(encoding="utf-8") as f:
        match = SVG_SIZE.search(f.read(4096))
    return (round(float(match.group(1)) * 4 / 3), round(float(match.group(2)) * 4 / 3)) if match else None


def render_html(view: Mapping, schema_version: str, folder: Path | None = None) -> str:
    """index.html from `verify.reporting.view.build_view`'s output; each figure under `folder` (the report's) gets
    its natural size as its width and height (drawn at that size, never wider: no layout shift while it loads)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(PACKAGE_DIR / "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    ids = frozenset(view["result_ids"])
    env.filters["linked"] = lambda text: linked(str(text), ids)

    def size_attributes(src: str) -> Markup:
        size = svg_size(folder / src) if folder is not None and (folder / src).is_file() else None
        return Markup(f' width="{size[0]}" height="{size[1]}"' if size else "")
    return env.get_template(TEMPLATE).render(**view, schema_version=schema_version, size_attributes=size_attributes)


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
