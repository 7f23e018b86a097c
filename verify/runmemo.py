"""The run-wide memo's store and `remembered`: below the truth engines, so that an engine may share deterministic
per-point work (a closed form that grid points share) across a run without importing the evaluation pipeline.

verify.pipeline.memo opens the memo (`shared_truths`) and keeps the truths in it; this module only holds the context
variable and remembers other work while a memo is active."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

MEMO: ContextVar[dict | None] = ContextVar("verify_truth_memo", default=None)


def remembered(key: tuple[Hashable, ...], compute: Callable[[], T]) -> T:
    """`compute()` once per `key` while a memo is active (exceptions are not remembered): for other deterministic
    per-point work that entries on one family repeat, e.g. a companion bound at a shared grid point. Keys start with
    a tag naming the kind of work, so they never meet pipeline.memo.truth_of's (family, quantity, parameters) keys."""
    memo = MEMO.get()
    if memo is None:
        return compute()
    if key in memo:
        return memo[key]
    value = memo[key] = compute()
    return value
