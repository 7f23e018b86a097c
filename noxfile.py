"""nox sessions: tests, theorems (every catalog check), report (the HTML/Markdown report), lint, bench; gpu runs
the kernels under CuPy."""

import nox

nox.options.sessions = ["lint", "tests", "theorems"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test,report]")
    session.run("pytest", *session.posargs)


@nox.session
def theorems(session: nox.Session) -> None:
    """Check every catalog entry over its default grid; fails on any unexpected verdict."""
    session.install("-e", ".")
    session.run("verify", "run", "--json", "reports/theorems.json", *session.posargs)


@nox.session
def report(session: nox.Session) -> None:
    """Check the whole catalog and write reports/<run-id>/ (results.json, report.md, index.html, plots)."""
    session.install("-e", ".[report]")
    session.run("verify", "report", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks (pytest-benchmark), never part of the test suite's pass/fail: the whole catalog's run and report
    (wall time, memory, output sizes), time to a first counterexample, SGM RDP against dp_accounting, kernels."""
    session.install("-e", ".[test,report]")
    session.run("pytest", "benchmarks", "--benchmark-enable", "--benchmark-only", *session.posargs)


@nox.session
def gpu(session: nox.Session) -> None:
    """The array-API kernel tests under CuPy (needs a CUDA GPU; not a default session)."""
    session.install("-e", ".[test,gpu]")
    session.run("pytest", "tests/truth", "-k", "backend or kernel or montecarlo", env={"VERIFY_BACKEND": "cupy"})
