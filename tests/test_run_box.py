"""Every page of Part I says how to run it: the "Run this page" box (``_ext/run_box.py``).

In both built editions, each numbered page has the box under its title, naming the
working copy ``scripts/lab.sh`` writes for it (``lab/NN_x.ipynb`` and ``lab/NN_x.zh.ipynb``,
checked against ``scripts/lab_copy.py``'s names) and the settings its code really assigns
(read here from the notebook with ``ast``, not with the extension's pattern); no page of
Part II has one. The built pages come from ``scripts/book.sh`` (the test command builds
both editions first).
"""

from __future__ import annotations

import ast
import html
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "_ext")]
import lab_copy
import run_box
import yaml

TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
PART_I = [Path(c["file"]).stem for c in lab_copy.numbered_chapters(TOC)]
PART_II = [Path(c["file"]).with_suffix("").as_posix() for part in TOC["parts"]
           if not part.get("numbered") for c in part["chapters"]]


def _numbers_assigned(notebook: Path) -> list[str]:
    """Upper-case names a code cell assigns a number literal to, by the Python parser."""
    names: list[str] = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        try:
            tree = ast.parse("\n".join(line for line in source.splitlines()
                                       if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], ast.Name)
                    and node.targets[0].id.isupper()):
                value = node.value
                if isinstance(value, ast.UnaryOp):
                    value = value.operand
                if (isinstance(value, ast.Constant) and type(value.value) in (int, float)
                        and node.targets[0].id not in names):
                    names.append(node.targets[0].id)
    return names


def _box_text(page: Path) -> str | None:
    text = page.read_text(encoding="utf-8")
    found = re.search(r'<div class="[^"]*run-this-page[^"]*">(.*?)</div>', text, re.DOTALL)
    if not found:
        return None
    return html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_the_extension_reads_the_settings_the_code_assigns():
    for stem in PART_I:
        notebook = ROOT / "notebooks" / f"{stem}.ipynb"
        got = run_box.settings(json.loads(notebook.read_text(encoding="utf-8")))
        assert got == _numbers_assigned(notebook), stem


@pytest.mark.parametrize("edition", ["", "zh/"])
@pytest.mark.parametrize("stem", PART_I)
def test_each_page_of_part_one_says_how_to_run_it(stem, edition):
    page = HTML / edition / "notebooks" / f"{stem}.html"
    if not page.exists():
        pytest.fail(f"{page} not built: run bash scripts/book.sh")
    box = _box_text(page)
    assert box, f"{page}: no 'Run this page' box"
    assert ("运行本页" if edition else "Run this page") in box
    assert "bash scripts/lab.sh" in box
    assert f"lab/{stem}.ipynb" in box and f"lab/{stem}.zh.ipynb" in box, box
    names = [n for n in _numbers_assigned(ROOT / "notebooks" / f"{stem}.ipynb")
             if n != "SEED"][:3]
    for name in names:
        assert name in box, (stem, name, box)


@pytest.mark.parametrize("doc", PART_II)
def test_no_page_of_part_two_has_one(doc):
    page = HTML / f"{doc}.html"
    if not page.exists():
        pytest.fail(f"{page} not built: run bash scripts/book.sh")
    assert _box_text(page) is None, doc
