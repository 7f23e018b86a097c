"""The example notebook (examples/tour.ipynb) runs top to bottom in a fresh kernel (nbclient), and shows what it
says: a catalog entry rendered as HTML, a certified counterexample, a search's counterexample, an accountant's
bracket and a figure."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).parents[1] / "examples" / "tour.ipynb"


def test_the_tour_runs_and_shows_its_results(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                            ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o["data"]["text/html"] for o in outputs if o.output_type == "execute_result" and "text/html" in o["data"]]
    assert any("chourasia2021.theorem3.cor1_start" in h for h in html)  # the entry, as HTML
    assert any("counterexample to user.bound" in h for h in html)  # the search's certified counterexample
    assert any("image/png" in o.get("data", {}) for o in outputs)  # the figure
    assert any("certified" in o["data"].get("text/plain", "") or "certified" in o["data"].get("text/html", "")
               for o in outputs if o.output_type == "execute_result")  # the accountant's bracket
