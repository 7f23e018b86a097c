"""A deadline that lands while a block that holds process state opens or closes (the run memo, an isolation session)
never leaves that state behind (issue 47 §1: a truth belongs to its point). Before, an interrupt inside
`shared_truths`' exit (contextlib's generator machinery) left the memo set and the session open after the block:
the next check read an earlier truth (a monkeypatched plugin truth gave its old value) and kept an old worker.

Each example runs blocks in a loop under a real deadline (the main thread's timer signal) until it lands, so it lands
at a generated place among the blocks' own lines; the state is then checked against what it must be outside them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verify.errors import DeadlineExceeded
from verify.limits import deadline
from verify.pipeline import isolation
from verify.pipeline.memo import shared_truths
from verify.runmemo import MEMO
from verify.truth.numbers import MP, arb_numbers, ctx, num


def _spin(nested: bool) -> None:
    while True:
        with shared_truths() as memo:
            memo[("tag", "spin")] = 1
            if nested:
                with shared_truths(), isolation.session():
                    pass


@settings(max_examples=60, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(seconds=st.floats(1e-4, 2e-2), nested=st.booleans())
def test_a_deadline_anywhere_in_a_memo_block_leaves_no_memo_and_no_session(seconds, nested):
    with pytest.raises(DeadlineExceeded):
        with deadline(seconds, "spin"):
            _spin(nested)
    assert MEMO.get() is None, "the memo outlived its block"
    assert getattr(isolation._workers, "depth", 0) == 0, "the session outlived its block"


def _spin_arb(prec: int) -> None:
    while True:
        with arb_numbers(prec) as N:
            N.exp(N.mpf(0.5))


@settings(max_examples=60, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(seconds=st.floats(1e-4, 2e-2), prec=st.integers(20, 300))
def test_a_deadline_anywhere_in_an_arb_block_leaves_the_numbers_and_precision_as_they_were(seconds, prec):
    """`arb_numbers` sets the number system and Arb's precision: a deadline in its exit (as a generator-based context
    manager, inside contextlib) left every later closed form in Arb mode at the block's precision (a CI worker's 82
    later tests failed)."""
    saved = ctx.prec
    with pytest.raises(DeadlineExceeded):
        with deadline(seconds, "spin"):
            _spin_arb(prec)
    assert num() is MP, "the Arb number system outlived its block"
    assert ctx.prec == saved, "the block's precision outlived it"
