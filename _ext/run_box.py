"""A "Run this page" box under the title of every page of Part I, in both editions.

Each page of the chapter is a notebook a reader can run (``bash scripts/lab.sh`` opens
working copies in ``lab/``: ``NN_x.ipynb`` and the Chinese edition's ``NN_x.zh.ipynb``,
see ``scripts/lab_copy.py``). The box says so on the page itself, names the copy to open
and the page's own settings to change: the first three upper-case names its code assigns a
number to (``BAR = 0.7``), and ``SEED`` when the page draws runs, so the reader knows
what to move. The settings are read from the notebook when the page is built, so the box
follows the page. Nothing is written into the notebooks: the box is drawn at build time,
and only on pages of the toc's numbered part (Part II, the manual, runs nothing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from docutils import nodes

#: A setting: an upper-case name assigned a number on a line of its own.
SETTING = re.compile(r"(?m)^([A-Z][A-Z_0-9]*)\s*=\s*[-+]?\d[\d_.e]*\s*(?:#.*)?$")
PAGE = re.compile(r"^notebooks/\d\d_[a-z0-9_]+$")

TEXT = {
    "en": {
        "title": "Run this page",
        "open": "{lab} opens it in JupyterLab ({copy}; in Chinese, {other}). ",
        "change": "Change {names}{seed} and Run All: ",
        "seed": " (or {seed}, for other runs)",
        "plain": "Change a number in its code and Run All: ",
        "follow": "every figure and number in the prose follows.",
        "or": " or ",
        "comma": ", ",
    },
    "zh": {
        "title": "运行本页",
        "open": "{lab} 会在 JupyterLab 中打开本页（{copy}；英文版 {other}）。",
        "change": "改动 {names}{seed}后选 Run All，",
        "seed": "（或换一个 {seed}，得到另一批运行）",
        "plain": "改动代码里的一个数后选 Run All，",
        "follow": "图和正文里的数字都会随之更新。",
        "or": " 或 ",
        "comma": "、",
    },
}


def settings(notebook: dict[str, Any]) -> list[str]:
    """The upper-case names the notebook's code cells assign a number to, in order.

    >>> settings({"cells": [{"cell_type": "code", "source": ["SEED = 7\\nBAR = 0.7  # bar\\n",
    ...                                                       "CAP = 0.3\\nX = f(1)\\n"]}]})
    ['SEED', 'BAR', 'CAP']
    """
    names: list[str] = []
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            source = "".join(cell.get("source", []))
            names += [m.group(1) for m in SETTING.finditer(source) if m.group(1) not in names]
    return names


def _parts(text: str, literals: dict[str, str]) -> list[nodes.Node]:
    """``text`` with each ``{key}`` replaced by a code literal."""
    out: list[nodes.Node] = []
    for piece in re.split(r"(\{[a-z]+\})", text):
        if piece.startswith("{") and piece[1:-1] in literals:
            out.append(nodes.literal(text=literals[piece[1:-1]]))
        elif piece:
            out.append(nodes.Text(piece))
    return out


def box(stem: str, names: list[str], language: str) -> nodes.admonition:
    """The box for notebook ``stem`` with its settings ``names``, in ``language``."""
    words = TEXT["zh" if language.startswith("zh") else "en"]
    zh = language.startswith("zh")
    copy, other = f"lab/{stem}.zh.ipynb", f"lab/{stem}.ipynb"
    if not zh:
        copy, other = other, copy
    para = nodes.paragraph()
    para += _parts(words["open"], {"lab": "bash scripts/lab.sh", "copy": copy, "other": other})
    shown = [n for n in names if n != "SEED"][:3]
    if shown:
        seed = words["seed"] if "SEED" in names else ""
        change = words["change"].replace("{seed}", seed)
        literal = {"seed": "SEED"}
        pieces = _parts(change.split("{names}")[0], literal)
        for i, name in enumerate(shown):
            if i:
                pieces.append(nodes.Text(words["or"] if i == len(shown) - 1
                                         else words["comma"]))
            pieces.append(nodes.literal(text=name))
        pieces += _parts(change.split("{names}")[1], literal)
        para += pieces
    else:
        para += nodes.Text(words["plain"])
    para += nodes.Text(words["follow"])
    admonition = nodes.admonition(classes=["tip", "run-this-page"])
    admonition += nodes.title(text=words["title"])
    admonition += para
    return admonition


def add_box(app: Any, doctree: nodes.document) -> None:
    docname = app.env.docname
    if not PAGE.match(docname):
        return
    path = Path(app.env.doc2path(docname))
    if path.suffix != ".ipynb" or not path.exists():
        return
    names = settings(json.loads(path.read_text(encoding="utf-8")))
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None or not isinstance(section[0], nodes.title):
        return
    section.insert(1, box(path.stem, names, app.config.language or "en"))


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-read", add_box)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
