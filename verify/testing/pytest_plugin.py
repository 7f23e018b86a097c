"""A pytest plugin (entry point `pytest11`): a researcher's own test suite gets verify's falsifier and catalog as
fixtures, and a bound that fails shows its shrunk, certified counterexample in pytest's report.

    def test_my_bound(assert_bound_holds):
        assert_bound_holds("alpha*S**2*eta*K/(2*n**2*sigma**2)", "noisy_gd_quadratic")

    def test_my_family(verify_register, assert_bound_holds):
        verify_register(MY_FAMILY)            # registered for this test only
        assert_bound_holds("...", MY_FAMILY.name)

Options: --verify-seed N (default 0), --verify-max-examples N (default 2000), --verify-budget SECONDS (default 60),
--verify-recheck SECONDS (a point's rigorous re-check; default budget / 4, at most 20). A search that ends undecided
(NothingChecked) lists the points that look violated, uncertified, in the report.

A paper file (verify.catalog.paper_file) is a test module: each of its theorems is one test, checked as `verify run`
checks it (its grid, then --verify-falsify N falsifier points, default 100), which passes when the verdict is the one
it expects; a failure shows the certified counterexample, or the verdict and its worst point. Files named
`*.verify.toml` are collected where pytest looks (its arguments, testpaths); `--verify-paper FILE` (repeatable) adds
one of any name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:  # pytest loads the plugin in every session: the fixtures import verify's modules when used
    from verify.model import Family, Theorem
    from verify.testing.falsify import Counterexample

PAPER_SUFFIX = ".verify.toml"  # verify.catalog.paper_file.SUFFIX (not imported: the plugin loads in every session)


class BoundViolated(AssertionError):
    """A bound refuted by the falsifier: carries the certified counterexample."""

    def __init__(self, counterexample: Counterexample):
        super().__init__(str(counterexample))
        self.counterexample = counterexample


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("verify", "verify: falsify DP bounds")
    group.addoption("--verify-seed", type=int, default=0, help="seed of every search (default 0)")
    group.addoption("--verify-max-examples", type=int, default=2000, help="points per search (default 2000)")
    group.addoption("--verify-budget", type=float, default=60.0, help="seconds per search (default 60)")
    group.addoption("--verify-recheck", type=float, default=None,
                    help="seconds per point's rigorous re-check (default: budget / 4, at most 20)")
    group.addoption("--verify-paper", action="append", default=[], metavar="FILE",
                    help="a paper file whose theorems are tests (repeatable; *.verify.toml files are collected "
                         "anyway)")
    group.addoption("--verify-falsify", type=int, default=100, metavar="N",
                    help="falsifier points per theorem of a paper file, beside its grid (default 100; 0: grid only)")


def pytest_configure(config: pytest.Config) -> None:
    papers = [str(Path(p).resolve()) for p in config.getoption("verify_paper")]
    config.stash[_PAPERS] = frozenset(papers)
    config.args.extend(p for p in papers if p not in config.args)


_PAPERS = pytest.StashKey[frozenset]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name.endswith(PAPER_SUFFIX) or str(file_path.resolve()) in parent.config.stash.get(_PAPERS, ()):
        from verify.testing.paper_items import PaperFile

        return PaperFile.from_parent(parent, path=file_path)
    return None


@pytest.fixture
def assert_bound_holds(request: pytest.FixtureRequest) -> Callable[..., None]:
    """assert_bound_holds(bound, family, side="upper", **falsify_options): raises BoundViolated (an AssertionError)
    with the certified counterexample, or NothingChecked when too few points could be checked."""
    config = request.config
    defaults = {"seed": config.getoption("verify_seed"), "max_examples": config.getoption("verify_max_examples"),
                "budget_s": config.getoption("verify_budget"), "recheck_s": config.getoption("verify_recheck")}

    def check(bound, family: str, side: str = "upper", **options) -> None:
        from verify.testing.falsify import falsify

        found = falsify(bound, family, side, **{**defaults, **options})
        if found is not None:
            raise BoundViolated(found)

    return check


@pytest.fixture(scope="session")
def verify_catalog() -> dict[str, Theorem]:
    """Every catalog entry by id."""
    from verify.catalog import CATALOG

    return dict(CATALOG)


@pytest.fixture
def verify_register() -> Iterator[Callable[..., tuple[Family, ...]]]:
    """verify_register(*families): make families known for the duration of one test."""
    import verify.families as families

    added: list[str] = []

    def register(*fams: Family) -> tuple[Family, ...]:
        new = [f.name for f in fams if f.name not in families.FAMILIES]
        families.register(*fams)
        added.extend(new)
        return fams

    yield register
    for name in added:
        families.FAMILIES.pop(name, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is not None and isinstance(call.excinfo.value, BoundViolated):
        found = call.excinfo.value.counterexample
        cert = found.result.certificate
        lines = [str(found)]
        if cert is not None:
            lines.append(f"  certified {cert.verdict.value}: truth in [{cert.truth_lower}, {cert.truth_upper}] "
                         f"({cert.method}), bound in [{cert.bound_lower}, {cert.bound_upper}], "
                         f"{cert.precision_bits}-bit Arb")
        report.sections.append(("verify counterexample", "\n".join(lines)))
    outcome_of = getattr(call.excinfo.value, "outcome", None) if call.excinfo is not None else None
    if outcome_of is not None and outcome_of.suspects:  # NothingChecked: the evidence that left it undecided
        report.sections.append(("verify uncertified points", outcome_of.suspects_text()))
