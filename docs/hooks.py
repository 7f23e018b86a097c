"""Pages the documentation site generates at build time (an MkDocs hook, mkdocs.yml's `hooks`; nothing here is
copied by hand):

- catalog/index.md and catalog/<paper>.md: every catalog entry from `verify.catalog` (id, result, statement,
  assumptions, the families it is checked on with the expected verdict, note);
- api/index.md and api/<module>.md: the API reference, one page per public module, filled by mkdocstrings from the
  docstrings;
- assets/katex/: the KaTeX that verify's reports ship (verify/reporting/static/katex), so the statements' LaTeX
  renders without a network.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

from verify.catalog import PAPERS
from verify.catalog_index import summaries
from verify.model import Theorem
from verify.reporting.results_json import printed_summary

ROOT = Path(__file__).resolve().parents[1]
API_MODULES = {
    "verify": "the package: check, family, theorem, results_frame, the result and error types",
    "verify.api": "check one catalog entry at one point",
    "verify.model": "the data model: Family, Parameter, Theorem, Assumption, Application, Quantity",
    "verify.families": "instance families: register, load_plugin, closed_form, monte_carlo_renyi",
    "verify.truth.numbers": "the number system of closed forms: num(), arb_numbers",
    "verify.results": "Truth, PointResult, Verdict and the results of a run",
    "verify.parsing": "the bound language's parser",
    "verify.latex_input": "LaTeX input: parse_latex_expression, reading",
    "verify.catalog.paper_file": "paper files: load_paper_file, load_module",
    "verify.accountant": "the DP-SGD accountant: epsilon, delta",
    "verify.accountant_calibrate": "calibration on the accountant: calibrate",
    "verify.accountant_events": "other mechanisms and samplers as phases: Laplace, RandomizedResponse, ...",
    "verify.audit": "audit an implementation: audit, audit_scores, AuditResult",
    "verify.adapters.dp_accounting": "the accountant as a dp_accounting PrivacyAccountant: VerifyAccountant",
    "verify.adapters.opacus": "the accountant as an opacus accountant: VerifyOpacusAccountant, register",
    "verify.testing": "assert_bound_holds, falsify",
    "verify.testing.falsify": "the falsifier: falsify, falsify_outcome, SearchOutcome, Counterexample",
    "verify.certify": "bound-vs-bound certification by interval branch and bound",
    "verify.runner": "whole runs of the catalog",
    "verify.executors": "local and Dask executors",
    "verify.errors": "the errors verify raises",
    "verify.exitcodes": "the command line's exit codes",
}
_SPECIAL = re.compile(r"([\\`*_\[\]#])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;"}


def esc(text: str) -> str:
    """Prose for Markdown: the characters Markdown or HTML would read as markup, escaped (a table's | too)."""
    return "".join(_HTML.get(c, c) for c in _SPECIAL.sub(r"\\\1", " ".join(text.split())))


def entry(t: Theorem, summary: dict) -> list[str]:
    src = t.source
    lines = [f"## {t.id}", "", f"**{esc(t.title)}**", "",
             f"- result: {esc(src.result)}" + (f" ({esc(src.equation)})" if src.equation else ""),
             f"- {t.direction.value} bound on `{t.quantity.value}`, variant `{t.variant.value}`", ""]
    lines += ["Statement:", "", f"\\[ {summary['statement_latex']} \\]", "",
              "```text", str(t.bound), "```", ""]
    if t.assumptions:
        lines += ["Assumptions:", ""]
        lines += [f"- `{a.name}`: \\( {c['condition_latex']} \\) — {esc(a.description)}"
                  for a, c in zip(t.assumptions, summary["assumptions"], strict=True)]
        lines.append("")
    lines += ["| checked on | expected verdict | note |", "|---|---|---|"]
    lines += [f"| `{a.family}` | **{a.expected.value}** | {esc(a.note) or '-'} |" for a in t.applications]
    lines.append("")
    if t.note:
        lines += [f"Note: {esc(t.note)}", ""]
    return lines


def catalog() -> dict[str, str]:
    pages: dict[str, str] = {}
    shipped = summaries()  # the shipped listing's LaTeX where it is current; else printed now
    index = ["# The catalog", "",
             "Every encoded result, by paper, generated from `verify.catalog` when this site was built. "
             "`verify list` prints the same entries; `verify run --only PAPER` checks one paper's.", "",
             "| paper | source | entries | expected VIOLATED |", "|---|---|---|---|"]
    for key, module in sorted(PAPERS.items()):
        theorems = list(module.THEOREMS)
        violated = sum(a.expected.value == "VIOLATED" for t in theorems for a in t.applications)
        paper = theorems[0].source.paper if theorems else key
        index.append(f"| [{key}]({key}.md) | {esc(paper)} | {len(theorems)} | {violated} |")
        page = [f"# {key}", "", esc(paper), "", f"{len(theorems)} entries. Run them: `verify run --only {key}`.", ""]
        for t in theorems:
            page += entry(t, shipped.get(t.id) or printed_summary(t))
        pages[f"catalog/{key}.md"] = "\n".join(page)
    pages["catalog/index.md"] = "\n".join(index) + "\n"
    return pages


def api() -> dict[str, str]:
    pages: dict[str, str] = {}
    index = ["# API reference", "", "Generated from the docstrings (mkdocstrings).", ""]
    for module, what in API_MODULES.items():
        index.append(f"- [`{module}`]({module}.md): {what}")
        pages[f"api/{module}.md"] = f"# `{module}`\n\n::: {module}\n"
    pages["api/index.md"] = "\n".join(index) + "\n"
    return pages


def katex() -> dict[str, bytes]:
    static = ROOT / "verify" / "reporting" / "static" / "katex"
    return {f"assets/katex/{p.relative_to(static).as_posix()}": p.read_bytes()
            for p in sorted(static.rglob("*")) if p.is_file() and p.name != "LICENSE"}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """The generated pages in the navigation: every paper under Catalog, every module under API."""
    for section in config.nav:
        if isinstance(section, dict) and "Catalog" in section:
            section["Catalog"] = ["catalog/index.md", *(f"catalog/{key}.md" for key in sorted(PAPERS))]
        if isinstance(section, dict) and "API" in section:
            section["API"] = ["api/index.md", *(f"api/{module}.md" for module in API_MODULES)]
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages and KaTeX to the site's files."""
    for path, content in {**catalog(), **api(), **katex()}.items():
        files.append(File.generated(config, path, content=content))
    return files
