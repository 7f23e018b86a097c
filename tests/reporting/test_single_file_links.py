"""`verify report --single-file` (report.html): one file that travels alone, so no relative link may point to a file
it did not take in (issue 47, section 4: the plots' data, results.json and report.md were linked, and KaTeX's woff
and ttf fallbacks). A plot's sweep data is inlined (a data URI saved under its name); any other file is named in the
text with a note that it is not part of the file. Checked by parsing the HTML's href and src attributes and the
url() references of its style sheets."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import needs_report_extra

needs_report_extra()

from verify.reporting.html import NOT_INLINED, single_file  # noqa: E402 - after the report extra's check


class _Links(HTMLParser):
    """Every href and src attribute, and the text of every <style> element (script text is not markup)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[tuple[str, str, str]] = []
        self.styles: list[str] = []
        self._style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [(tag, k, v) for k, v in attrs if k in ("href", "src") and v is not None]
        self._style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._style = self._style and tag != "style"

    def handle_data(self, data: str) -> None:
        if self._style:
            self.styles.append(data)


def _relative(url: str) -> bool:
    """A link to a file beside the page: not a fragment, not a data URI, not an address with a scheme."""
    return not (url.startswith(("#", "data:")) or re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*:", url))


def _parsed(page: str) -> _Links:
    parser = _Links()
    parser.feed(page)
    parser.close()
    return parser


def _data(uri: str) -> bytes:
    head, _, body = uri.partition(",")
    return base64.b64decode(body) if head.endswith(";base64") else unquote(body).encode()


def test_the_single_file_report_links_no_file_it_left_behind(small_report):
    page = single_file((small_report / "index.html").read_text(encoding="utf-8"), small_report)
    parsed = _parsed(page)
    assert [link for link in parsed.links if _relative(link[2])] == []
    urls = [u.strip("'\"") for css in parsed.styles for u in re.findall(r"url\(([^)]*)\)", css)]
    assert urls and [u for u in urls if _relative(u)] == []
    data = [(tag, v) for tag, k, v in parsed.links if tag == "a" and v.startswith("data:application/json")]
    figures = sorted((small_report / "plots").glob("*.json"))
    assert len(data) == len(figures) > 0
    assert sorted(_data(v) for _, v in data) == sorted(f.read_bytes() for f in figures)  # each one, exactly
    for name in ("results.json", "report.md"):  # named, and said not to be here
        assert f"<code>{name}</code> ({NOT_INLINED})" in page


NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}(\.[a-z0-9_]{1,6}){0,2}", fullmatch=True)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(links=st.lists(st.tuples(st.sampled_from(["plots/", "", "static/", "other/"]), NAMES,
                                st.sampled_from([".json", ".svg", ".md", ""]), st.booleans(),
                                st.text(alphabet="abc xyz", min_size=1, max_size=8)), max_size=6),
       absolute=st.lists(st.sampled_from(["https://example.org/x", "#summary", "mailto:a@b.c", "data:,x"]),
                         max_size=3))
def test_every_relative_link_of_a_page_is_inlined_or_dropped(links, absolute, tmp_path_factory):
    """Pages with links to files that exist or not, in plots/ and elsewhere: afterwards no relative link is left, a
    plot's JSON data that exists is inlined byte for byte, every other link's text stays with the note, and links
    that are not to files (addresses, fragments, data) are kept as they were."""
    folder = tmp_path_factory.mktemp("page")
    (folder / "plots").mkdir()
    anchors, expected = [], []
    for i, (where, name, suffix, exists, text) in enumerate(links):
        target = f"{where}{name}{i}{suffix}"
        if exists:
            (folder / target).parent.mkdir(parents=True, exist_ok=True)
            (folder / target).write_bytes(f'{{"x": [{i}], "name": "{target}"}}'.encode())
        anchors.append(f'<a href="{target}">{text}</a>')
        expected.append((folder / target, exists and where == "plots/" and suffix == ".json", text))
    anchors += [f'<a href="{url}">kept</a>' for url in absolute]
    page = single_file("<html><body>" + " | ".join(anchors) + "</body></html>", Path(folder))
    parsed = _parsed(page)
    assert [link for link in parsed.links if _relative(link[2])] == []
    inlined = [_data(v) for tag, k, v in parsed.links if v.startswith("data:application/json")]
    assert sorted(inlined) == sorted(path.read_bytes() for path, kept, _ in expected if kept)
    assert page.count(f"({NOT_INLINED})") == sum(not kept for _, kept, _ in expected)
    assert [v for _, _, v in parsed.links if not v.startswith("data:application/json")] == absolute
