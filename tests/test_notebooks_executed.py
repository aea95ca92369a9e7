"""The book renders the notebooks' stored outputs, so every notebook must be stored executed.

nbval re-executes each notebook and compares only the cells that carry an execution count;
a cell stored without one would be rendered with no output and never checked. These tests
make sure that every code cell was executed, in order, from a fresh kernel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_is_stored_executed_in_order(path):
    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    counts = [c.get("execution_count") for c in cells]
    assert None not in counts, f"{path.name}: code cells stored without execution: re-execute it"
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: cells executed out of order or in an old kernel ({counts}): re-execute it "
        "from the top (jupyter nbconvert --to notebook --execute --inplace)")


def test_every_notebook_is_in_the_book():
    toc = (Path(__file__).resolve().parents[1] / "_toc.yml").read_text()
    assert all(f"notebooks/{p.stem}" in toc for p in NOTEBOOKS)
