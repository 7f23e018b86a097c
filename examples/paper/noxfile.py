"""nox sessions of a paper's repository: `nox -s paper` checks every result of draft.verify.toml and writes the report
(fails when a verdict is not the one expected); `nox -s paper_tests` checks them as pytest tests (one per result, a
failure shows the certified counterexample). VERIFY_INSTALL names what to install (default: dp-verify from the index;
e.g. a path to a checkout of verify)."""

import os

import nox

nox.options.sessions = ["paper"]
nox.options.reuse_existing_virtualenvs = True
VERIFY = os.environ.get("VERIFY_INSTALL", "dp-verify")
PAPER = "draft.verify.toml"


@nox.session
def paper(session: nox.Session) -> None:
    """Every result over its grid and 100 falsifier points: reports/draft/index.html, report.md, results.json."""
    session.install(f"{VERIFY}[report]")
    session.run("verify", "report", "--paper", PAPER, "--out", "reports/draft", *session.posargs)


@nox.session
def paper_tests(session: nox.Session) -> None:
    """The same checks as pytest tests (verify's pytest plugin collects *.verify.toml files)."""
    session.install(VERIFY, "pytest")
    session.run("pytest", PAPER, "--verify-falsify", "100", *session.posargs)
