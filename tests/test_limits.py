"""Class 3 of the trust issue: every truth method has a memory cap and a deadline, and fails cleanly (a
ResourceLimitError naming what hit the cap), never by exhausting the machine."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify import check, family
from verify.errors import DeadlineExceeded, MemoryLimitExceeded, ResourceLimitError, VerifyError
from verify.limits import deadline, remaining, require_memory

SETTINGS = settings(max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def test_require_memory_names_what_and_honours_the_env(monkeypatch):
    require_memory(1e6, "a small array")
    monkeypatch.setenv("VERIFY_MEMORY_CAP", "1000")
    with pytest.raises(MemoryLimitExceeded, match="the thing"):
        require_memory(1e6, "the thing")
    with pytest.raises(MemoryLimitExceeded):
        require_memory(math.nan, "NaN bytes")


def test_deadlines_nest_and_interrupt_pure_python_and_mpmath():
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        with deadline(0.2):
            with deadline(30):
                while True:
                    pass
    assert time.monotonic() - start < 2
    with pytest.raises(DeadlineExceeded):
        with deadline(0.2), mpmath.workdps(3000):
            mpmath.quad(lambda x: mpmath.sin(x) ** 2, [0, 1000])
    assert remaining() == math.inf  # no deadline left behind
    with deadline(5):
        assert 0 < remaining() <= 5


@SETTINGS
@given(s=st.floats(1e-9, 1e-3), gap=st.floats(1e2, 1e9), alpha=st.floats(1.01, 50))
def test_mixture_quadrature_refuses_instead_of_allocating(s, gap, alpha, monkeypatch):
    """Lemma 25's family at a tiny width and a huge gap needed ~10^12 quadrature panels (the 6-22 GB runs)."""
    monkeypatch.setenv("VERIFY_MEMORY_CAP", str(64 * 2**20))
    fam = family("mixture_vs_gaussian")
    try:
        truth = fam.truth("renyi", alpha=alpha, w=0.5, gap1=0.0, gap2=gap, s=s)
    except ResourceLimitError as err:
        assert "memory cap" in str(err) and "mixture quadrature" in str(err)
    else:
        assert truth.lower <= truth.value <= truth.upper


@SETTINGS
@given(eta=st.floats(1e-4, 1e-2), sigma=st.floats(1e-4, 1e-2), K=st.integers(1, 50))
def test_grid_refuses_instead_of_allocating(eta, sigma, K, monkeypatch):
    """A tiny noise scale on a wide constraint set needs more cells than the cap allows."""
    monkeypatch.setenv("VERIFY_MEMORY_CAP", str(20 * 2**20))
    try:
        family("noisy_gd_projected_1d").truth("renyi", alpha=2, sigma=sigma, eta=eta, n=10, K=K, S=1, lam=1,
                                              start_var=0, R=100, center=0)
    except VerifyError as err:  # the cell cap (ParameterError) or the memory cap
        assert "cells" in str(err) or "memory cap" in str(err)


def test_point_deadline_is_a_clean_error(monkeypatch):
    monkeypatch.setenv("VERIFY_TRUTH_DEADLINE", "0.001")
    with pytest.raises(DeadlineExceeded, match="mixture_vs_gaussian truth"):
        check("feldman2018.lemma25.large_c", alpha=2, w=0.01, gap1=0, gap2=4, s=1)


def test_extreme_lemma25_point_stays_under_a_hard_memory_limit():
    """Run an extreme point in a child process limited to 3 GB of address space: it must end with exit 3 (a cap
    hit, one line) instead of being killed or exhausting memory."""
    code = ("import atexit, resource, sys; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30));"
            "atexit.register(lambda: print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss));"
            "from verify.cli import main; sys.exit(main(['check', 'feldman2018.lemma25', '-p', 'alpha=2', "
            "'-p', 'w=0.5', '-p', 'gap1=0', '-p', 'gap2=1e8', '-p', 's=1e-6']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode in (2, 3), out.stderr  # 3: memory cap; 2: outside the theorem's assumptions
    assert "Traceback" not in out.stderr and len(out.stderr.strip().splitlines()) == 1
    # the child's own peak (RUSAGE_CHILDREN would be the largest of every child this test process ever reaped)
    assert int(out.stdout.strip().splitlines()[-1]) < 3 << 20  # KiB: the child stayed under 3 GB
