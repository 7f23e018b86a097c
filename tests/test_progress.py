"""Progress from the first second (issue 25): a parallel run names the entry each worker starts before any finishes,
the count reaches the total, and the one display (verify.progress) draws a count, the clock and the item."""

from __future__ import annotations

import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples  # tests/ is on the path (pytest's rootdir-based imports)

from verify.progress import MIN_DONE, ProgressBar, clock_text, timing_text
from verify.runner import run


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_parallel_run_announces_entries_as_they_start_and_counts_them_as_they_finish():
    events: list[tuple[str, int, int]] = []
    outcome = run(["chourasia2021.theorem3", "wang2021.zcdp_to_dp"], lambda t, i, n: events.append((t.id, i, n)),
                  workers=2, falsify=0)
    total = len(outcome.results)
    assert events[0][1] == 0  # the first thing shown is an entry being started, before any has finished
    assert {tid for tid, _, _ in events} == {r.theorem for r in outcome.results}
    assert max(i for _, i, _ in events) == total and all(n == total for _, _, n in events)


def test_the_bar_shows_count_clock_and_item_on_a_terminal_only():
    tty, pipe = _Tty(), io.StringIO()
    for stream in (tty, pipe):
        bar = ProgressBar(stream)
        bar("search", "3 checked", 5, 40)
        bar("search", "4 checked", 4, 40)  # reported out of order: the count stays at 5
        bar.close()
    shown = tty.getvalue()
    assert "search" in shown and "5/40" in shown and "4 checked" in shown and "0:00 elapsed" in shown
    assert "4/40" not in shown
    assert pipe.getvalue() == ""


def _seconds(text: str) -> int:
    """m:ss or h:mm:ss, read back (the reference: arithmetic on the fields)."""
    fields = [int(f) for f in text.split(":")]
    return sum(f * 60**i for i, f in enumerate(reversed(fields)))


@settings(max_examples=examples(200, 2000), database=None)
@given(st.floats(0, 10**6))
def test_clock_text_reads_back(seconds):
    assert _seconds(clock_text(seconds)) == int(seconds)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@settings(max_examples=examples(60, 500), database=None)
@given(budget=st.floats(1, 3600), at=st.floats(0, 1), done=st.integers(0, 2000))
def test_a_budgeted_search_shows_the_budget_left_never_an_estimate(budget, at, done):
    """Issue 48: a 60 s search drew "1:33:37" left (its 2000 points at the early rate). With a budget the bar shows
    what is left of it, from the bar's creation, whatever the rate (a fake clock: no wall time)."""
    clock, tty = _Clock(), _Tty()
    bar = ProgressBar(tty, budget_s=budget, clock=clock)
    clock.now += at * budget
    bar("search", "x", done, 2000)
    bar.close()
    shown = tty.getvalue()
    left = re.search(r"(\d+:\d\d(?::\d\d)?) of the budget left", shown)
    assert left and abs(_seconds(left.group(1)) - (budget - at * budget)) <= 1
    assert "~" not in shown


def test_an_estimate_waits_for_finished_items_and_follows_their_rate():
    clock, tty = _Clock(), _Tty()
    bar = ProgressBar(tty, clock=clock)
    clock.now += 5000  # one slow first item: no estimate from it
    bar("checks", "a", 1, 100)
    assert "left" not in tty.getvalue()
    clock.now += 1000  # 10 of 100 in 6000 s: 90 more at 600 s each
    bar("checks", "b", 10, 100)
    bar.close()
    assert "1:40:00 elapsed, ~15:00:00 left" in tty.getvalue()


@settings(max_examples=examples(200, 2000), database=None)
@given(elapsed=st.floats(0, 10**5), total=st.integers(1, 1000), data=st.data())
def test_timing_text_estimates_only_from_enough_items(elapsed, total, data):
    done = data.draw(st.integers(0, total))
    text = timing_text(elapsed, done, total)
    if done < MIN_DONE or done == total:
        assert "left" not in text
    else:
        left = re.search(r"~(\S+) left", text).group(1)
        assert abs(_seconds(left) - elapsed * (total - done) / done) <= 1
