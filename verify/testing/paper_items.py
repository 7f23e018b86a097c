"""pytest items for a paper file (verify.testing.pytest_plugin collects them): one test per theorem, checked as `verify
run` checks it, passing when its verdict is the one it expects; a failure shows the certified counterexample, or the
verdict and its worst point."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from verify.catalog.paper_file import load_paper_file
from verify.checker import ApplicationResult
from verify.errors import VerifyError
from verify.model import Theorem
from verify.pipeline.memo import shared_truths
from verify.results import params_text
from verify.runner import check_entry


class PaperFile(pytest.File):
    """A paper file: one test per theorem (reading it adds them to verify's catalog)."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            paper = load_paper_file(self.path)
        except VerifyError as err:  # a bad paper file: its one line, not a traceback
            raise self.CollectError(str(err)) from None
        for theorem in paper.theorems:
            yield PaperTheorem.from_parent(self, name=theorem.id, theorem=theorem)


class UnexpectedVerdict(AssertionError):
    """A paper file's theorem whose verdict is not the one it expects: carries the result."""

    def __init__(self, result: ApplicationResult):
        super().__init__(f"{result.theorem} on {result.family}: {result.status}, expected {result.expected.value}")
        self.result = result


class PaperTheorem(pytest.Item):
    """One theorem of a paper file, checked over its grid and by the falsifier."""

    def __init__(self, *, theorem: Theorem, **kwargs) -> None:
        super().__init__(**kwargs)
        self.theorem = theorem

    def runtest(self) -> None:
        with shared_truths():
            result = check_entry(self.theorem, self.theorem.applications[0],
                                 self.config.getoption("verify_falsify"), self.config.getoption("verify_seed"))
        if not result.as_expected:
            raise UnexpectedVerdict(result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None) -> str:
        if not isinstance(excinfo.value, UnexpectedVerdict):
            return str(super().repr_failure(excinfo, style))
        return _verdict_text(excinfo.value.result)

    def reportinfo(self) -> tuple[Path, None, str]:
        return self.path, None, f"{self.theorem.id} ({self.theorem.source.result})"


def _verdict_text(r: ApplicationResult) -> str:
    """An unexpected verdict in a few lines: the counterexample (certified) or the worst point, and the errors."""
    lines = [f"{r.theorem} on {r.family}: {r.status}, expected {r.expected.value} "
             f"({len(r.points)} points, {r.skipped} skipped)"]
    point = r.counterexample if r.counterexample is not None else r.worst
    if point is not None:
        what = "certified counterexample" if r.counterexample is not None else "worst point"
        lines.append(f"  {what}: {params_text(point.params)}")
        lines.append(f"    bound = {point.bound:.10g}, truth = {point.truth.value:.10g} [{point.truth.lower:.10g}, "
                     f"{point.truth.upper:.10g}] ({point.truth.method.value})"
                     + (f", ratio bound/truth = {point.ratio:.4g}" if point.ratio is not None else ""))
        cert = point.certificate
        if cert is not None and cert.truth_lower is not None:
            lines.append(f"    certified {cert.verdict.value}: truth in [{cert.truth_lower}, {cert.truth_upper}] "
                         f"({cert.method}), bound in [{cert.bound_lower}, {cert.bound_upper}], "
                         f"{cert.precision_bits}-bit Arb")
    lines += [f"  error: {e}" for e in r.errors[:3]]
    return "\n".join(lines)
