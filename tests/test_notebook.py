"""The example notebook (examples/tour.ipynb) runs top to bottom in a fresh kernel (nbclient), and shows what it
says: a catalog entry rendered as HTML, a certified counterexample, a search's counterexample, an accountant's
bracket and a figure; its committed outputs are those a run gives now."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).parents[1] / "examples" / "tour.ipynb"


def _texts(nb) -> list[list[str]]:
    """Each code cell's text outputs in order: what it printed and the plain text of what it showed."""
    shown = ("stream", "execute_result", "display_data")
    return [[o["text"] if o.output_type == "stream" else o["data"].get("text/plain", "")
             for o in c.get("outputs", []) if o.output_type in shown] for c in nb.cells if c.cell_type == "code"]


def test_the_tour_runs_and_shows_its_results(tmp_path):
    committed = nbformat.read(NOTEBOOK, as_version=4)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                            ).execute()
    # committed with its outputs (issue 48: a reader on GitHub sees them), and not stale: the same cells print and
    # show the same text when run now (every cell is deterministic: fixed seeds, no clocks in the plain text)
    assert all(c.get("outputs") for c in committed.cells if c.cell_type == "code")
    assert [c.source for c in committed.cells] == [c.source for c in nb.cells]
    assert _texts(committed) == _texts(nb)
    assert NOTEBOOK.stat().st_size < 100_000  # outputs kept small: one figure, short tables
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if o.output_type == "execute_result" and "text/html" in o["data"]]
    assert any("chourasia2021.theorem3.cor1_start" in h for h in html)  # the entry, as HTML
    assert any("counterexample to user.bound" in h for h in html)  # the search's certified counterexample
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the figure
    assert any("certified" in o["data"].get("text/plain", "") or "certified" in o["data"].get("text/html", "")
               for o in outputs if o.output_type == "execute_result")  # the accountant's bracket
