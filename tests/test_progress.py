"""Progress from the first second (issue 25): a parallel run names the entry each worker starts before any finishes,
the count reaches the total, and the one display (verify.progress) draws a count, the clock and the item."""

from __future__ import annotations

import io

from verify.progress import ProgressBar
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
    assert "search" in shown and "5/40" in shown and "4 checked" in shown and "00:00<" in shown
    assert "4/40" not in shown
    assert pipe.getvalue() == ""
