"""Run-wide memo of ground truths.

A truth is a deterministic function of (family, quantity, validated parameters): sampling families take their seed
as a parameter. Inside `shared_truths()` each is computed once, however many catalog entries, companions,
bindings and falsifier examples ask for it (many entries share a family and its grid points). Failures are not
memoised: a point that raised is recomputed (and raises again) where it is asked for. A family that is not built in
computes its truths in a worker process that the deadline stops (verify.isolation). With an on-disk cache in use
(verify.truth_cache), a truth not in the memo is looked up there first, and what was computed is added to it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from verify import isolation, truth_cache
from verify.model import Family, Quantity
from verify.results import Truth

T = TypeVar("T")

_MEMO: ContextVar[dict | None] = ContextVar("verify_truth_memo", default=None)


@contextmanager
def shared_truths(known: Mapping[tuple, Truth] | None = None) -> Iterator[dict]:
    """Memoise truths until the block ends (nested blocks share the outer memo); an outermost block starts from the
    `known` truths (`truths_in` of another memo, e.g. a run's, whose sweeps then reuse them). It is an isolation
    session too: a plugin family's truths are computed by code as it is when the block starts."""
    memo = _MEMO.get()
    if memo is not None:
        yield memo
        return
    token = _MEMO.set(dict(known or {}))
    try:
        with isolation.session():  # isolated truths share one worker, forked afresh for this block
            yield _MEMO.get()
    finally:
        _MEMO.reset(token)
        truth_cache.flush()  # what this block computed joins the on-disk cache, where one is in use


def truth_of(family: Family, quantity: Quantity, params: Mapping[str, float]) -> Truth:
    """`family`'s truth of `quantity` at already validated `params`, from the memo where one is active."""
    memo = _MEMO.get()
    if memo is None:
        return isolation.truth(family, quantity, params)
    key = (family.name, quantity, tuple(sorted(params.items())))
    truth = memo.get(key)
    if truth is None:
        truth = truth_cache.lookup(family, quantity, params, key)
        if truth is None:
            truth = isolation.truth(family, quantity, params)
            truth_cache.store(family, key, truth)
        memo[key] = truth
    return truth


def truths_in(memo: Mapping) -> dict[tuple, Truth]:
    """The truths of a memo (what `truth_of` stored, without `remembered`'s other work): small, and picklable."""
    return {k: v for k, v in memo.items() if isinstance(v, Truth) and len(k) == 3 and isinstance(k[1], Quantity)}


def remembered(key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    """`compute()` once per `key` while a memo is active (exceptions are not remembered): for other deterministic
    per-point work that entries on one family repeat, e.g. a companion bound at a shared grid point. Keys start with
    a tag naming the kind of work, so they never meet truth_of's (family, quantity, parameters) keys."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    if key in memo:
        return memo[key]
    value = memo[key] = compute()
    return value
