"""nox sessions: tests, theorems (every catalog check), report (the HTML/Markdown report), lint, docs (the
documentation site), bench; gpu runs the kernels under CuPy; adapters tests verify.adapters against dp_accounting and
a real opacus training loop."""

import nox

nox.options.sessions = ["lint", "tests", "theorems"]
nox.options.reuse_existing_virtualenvs = True


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-e", ".[test,report]")
    session.run("pytest", *(session.posargs or ["-n", "auto"]))


@nox.session
def theorems(session: nox.Session) -> None:
    """Check every catalog entry over its default grid; fails on any unexpected verdict."""
    session.install("-e", ".")
    session.run("verify", "run", "--json", "reports/theorems.json", *session.posargs)


# The lowest versions pyproject.toml allows, installed exactly: `nox -s minimums` runs the suite against them.
MINIMUMS = ("sympy==1.12", "numpy==1.26.0", "scipy==1.11.1", "mpmath==1.3.0", "array-api-compat==1.9",
            "hypothesis==6.100.0", "python-flint==0.7.0", "pytest==8.2.0", "pytest-xdist==3.5.0",
            "array-api-strict==2.0", "pytest-benchmark==4.0.0", "jsonschema==4.18.0", "matplotlib==3.8.0",
            "jinja2==3.1.2", "dp-accounting==0.6.0", "prv-accountant==0.2.0",
            "dask[distributed]==2024.1.0", "tqdm==4.66.0", "psutil==5.9.5",
            "pebble==5.0.2", "build==1.0.3", "twine==5.0.0", "mkdocs==1.6.0", "mkdocstrings[python]==0.28.0",
            "pymdown-extensions==10.0", "lark==1.0.0", "tomli==2.0.1; python_version < '3.11'")


@nox.session
def minimums(session: nox.Session) -> None:
    """The tests (not the slow cross-checks) at the lowest dependency versions pyproject.toml states."""
    session.install(*MINIMUMS)
    session.install("--no-deps", "-e", ".")
    session.run("pytest", "-m", "not slow", "-p", "no:cacheprovider", *session.posargs)


@nox.session
def report(session: nox.Session) -> None:
    """Check the whole catalog and write reports/<run-id>/ (results.json, report.md, index.html, plots)."""
    session.install("-e", ".[report]")
    session.run("verify", "report", *session.posargs)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site into site/ with warnings as errors (mkdocs.yml; the catalog and API pages are
    generated from the code). tests/test_docs_snippets.py runs the pages' code blocks."""
    session.install("-e", ".[docs]")
    session.run("mkdocs", "build", "--strict", *session.posargs, env={"DISABLE_MKDOCS_2_WARNING": "true"})


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", ".")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks (pytest-benchmark), never part of the test suite's pass/fail: the whole catalog's run and report
    (wall time, memory, output sizes), time to a first counterexample, SGM RDP against dp_accounting, kernels."""
    session.install("-e", ".[test,report]")
    session.run("pytest", "benchmarks", "-n", "0", "--benchmark-enable", "--benchmark-only", *session.posargs)


@nox.session
def adapters(session: nox.Session) -> None:
    """verify.adapters against the libraries themselves: dp_accounting's PrivacyAccountant and an opacus training
    loop on CPU torch (not in the default sessions: torch is large)."""
    session.install("torch", "--index-url", "https://download.pytorch.org/whl/cpu")
    session.install("-e", ".[test,adapters]")
    session.run("pytest", "tests/test_adapters_dp_accounting.py", "tests/test_adapters_opacus.py", "-n", "0",
                *session.posargs)


@nox.session
def gpu(session: nox.Session) -> None:
    """The array-API kernels and estimators under CuPy (needs a CUDA GPU; not a default session), then CuPy beside
    NumPy on one seed: the catalog's Monte-Carlo entries and the raw kernels (benchmarks/gpu_compare.py)."""
    session.install("-e", ".[test,gpu]")
    session.run("pytest", "tests/truth/test_cupy_backend.py", "tests/truth/test_renyi_estimator.py",
                "tests/truth/test_nmf.py", "tests/truth/test_monte_carlo_family.py", env={"VERIFY_BACKEND": "cupy"})
    session.run("python", "benchmarks/gpu_compare.py", "numpy", "cupy")
