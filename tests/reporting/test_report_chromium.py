"""The HTML report renders in headless Chromium: formulas typeset, every plot loaded, no console errors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _browser() -> str | None:
    explicit = os.environ.get("VERIFY_CHROMIUM")
    if explicit:
        return explicit
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def _render(html) -> tuple[str, str]:
    """(the data-render status the page's script set, Chromium's stderr)."""
    browser = _browser()
    if browser is None:
        pytest.skip("no chromium/chrome binary on PATH (set VERIFY_CHROMIUM to one) to render the HTML report")
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--virtual-time-budget=15000", "--dump-dom", html.resolve().as_uri()],
                          capture_output=True, text=True, timeout=180)
    match = re.search(r'<html[^>]*\bdata-render="([^"]*)"', proc.stdout)
    assert match, f"no rendered DOM (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return match.group(1), proc.stderr


def test_report_renders_with_every_plot_and_no_console_errors(small_report):
    status, log = _render(small_report / "index.html")
    assert status == "ok"
    console = [line for line in log.splitlines() if ":CONSOLE" in line]
    assert console == []


def test_a_missing_plot_is_detected(small_report, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(small_report, copy)
    victim = next((copy / "plots").glob("*.svg"))
    victim.unlink()
    status, _ = _render(copy / "index.html")
    assert status.startswith("error:") and victim.name in status
