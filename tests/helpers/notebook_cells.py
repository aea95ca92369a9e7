"""What a notebook shows a reader, read from its cells and tags (no build, no browser).

Shared by ``tests/test_page_standards.py`` (which asserts on it) and
``scripts/page_metrics.py`` (which prints the longest visible code cell per page).

*Visible* code: a code cell whose source the book shows unfolded, i.e. one without a
tag that removes or folds its input (``remove-cell``, ``remove-input``, ``hide-input``,
``hide-cell``). A cell tagged only ``remove-output`` or ``hide-output`` still shows its
source. Its length is the number of lines of its source.

*Glued values*: ``glue(key, value, display=False)`` stores ``value``'s text under
``application/papermill.record/text/plain`` in an output whose ``scrapbook`` metadata
names the key; a string value is stored with its quotes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

FOLDING_TAGS = frozenset({"remove-cell", "remove-input", "hide-input", "hide-cell"})
GLUE_MIME = "application/papermill.record/text/plain"


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def tags(cell: dict) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def visible_code_cells(nb: dict) -> list[tuple[int, int]]:
    """(cell index, source lines) of every code cell whose source the book shows."""
    return [(i, len(source(c).splitlines())) for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "code" and not tags(c) & FOLDING_TAGS]


def longest_visible_code(nb: dict) -> tuple[int, int | None]:
    """(lines, cell index) of the longest visible code cell; (0, None) if there is none."""
    cells = visible_code_cells(nb)
    if not cells:
        return 0, None
    index, lines = max(cells, key=lambda il: (il[1], -il[0]))
    return lines, index


def glued_values(nb: dict) -> dict[str, str]:
    """Every glued key of the notebook and the text stored for its value."""
    found = {}
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is not None and GLUE_MIME in out.get("data", {}):
                text = out["data"][GLUE_MIME]
                found[name] = "".join(text) if isinstance(text, list) else text
    return found


def markdown_text(nb: dict) -> str:
    """All markdown cells, and the figure captions in code cells' metadata."""
    parts = [source(c) for c in nb["cells"] if c["cell_type"] == "markdown"]
    for c in nb["cells"]:
        caption = c.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            parts.append(caption)
    return "\n\n".join(parts)


# a glued value referred to in prose: {glue:text}`key:fmt`, {eval}`'1'  # glue key:fmt`,
# or {eval}`glued("key:fmt")` (the live form written by scripts/sync_notebooks.py)
GLUE_REFERENCE = re.compile(
    r"\{glue(?::\w+)?\}`(?P<a>[\w-]+)|# glue (?P<b>[\w-]+)|glued\(\\?[\"'](?P<c>[\w-]+)")


def keys_in_prose(nb: dict) -> set[str]:
    """The glue keys that the prose (markdown and captions) shows."""
    return {next(g for g in m.groups() if g)
            for m in GLUE_REFERENCE.finditer(markdown_text(nb))}
