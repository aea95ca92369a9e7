"""Every exercise's solution runs in the notebook's kernel after Run All.

A reader opens the notebook in JupyterLab, runs all cells, then pastes a solution's
code into a new cell. That fails when a later cell deleted the files the solution
reads (a clean-up cell removing a temporary directory did, on pages 5, 7 and 8), or
when the solution uses a name no cell defines. Both are checked from the source, with
no kernel: executing the notebooks is nbval's job.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SOLUTION = re.compile(r"(?m)^([`:~]{3,})\{solution\}\s*(\S+)(.*?)\n\1\s*$", re.DOTALL)
PYTHON = re.compile(r"(?ms)^(```|~~~)python\n(.*?)\n\1\s*$")
DELETES = re.compile(r"\.cleanup\(\)|rmtree\(|os\.remove\(|\.unlink\(|os\.rmdir\(")


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def code_of(cell: dict) -> str:
    # IPython magics and shell escapes are not Python
    return "\n".join(line for line in "".join(cell["source"]).split("\n")
                     if not line.lstrip().startswith(("%", "!")))


def solutions(path: Path) -> list[tuple[str, str]]:
    """(label, code) for every python block in every solution of the notebook."""
    out = []
    for cell in cells(path):
        if cell["cell_type"] == "markdown":
            for m in SOLUTION.finditer("".join(cell["source"])):
                out += [(m.group(2), code.group(2)) for code in PYTHON.finditer(m.group(3))]
    return out


def defined(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):      # a function's or a lambda's parameters
            names.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def used(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


WITH_SOLUTIONS = [p for p in NOTEBOOKS if solutions(p)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_cell_deletes_files_after_the_fact(path):
    deleting = [i for i, c in enumerate(cells(path))
                if c["cell_type"] == "code" and DELETES.search(code_of(c))]
    assert not deleting, (f"code cells {deleting} delete files; a temporary directory "
                          "goes when the kernel stops, so the solutions can still read it")


@pytest.mark.parametrize("path", WITH_SOLUTIONS, ids=lambda p: p.name)
def test_every_name_a_solution_uses_is_defined_by_the_notebook(path):
    known = set(dir(builtins)) | {"display", "get_ipython"}
    for cell in cells(path):
        if cell["cell_type"] == "code":
            known |= defined(ast.parse(code_of(cell)))
    missing = {}
    for label, code in solutions(path):
        tree = ast.parse(code)
        unknown = used(tree) - known - defined(tree)
        if unknown:
            missing[label] = sorted(unknown)
    assert not missing, f"solutions use names no cell defines: {missing}"


def test_the_checks_see_what_they_are_for():
    assert DELETES.search("workdir.cleanup()") and not DELETES.search("# no clean-up")
    tree = ast.parse("x = f(y)\nfor i in range(3):\n    print(i, x)")
    assert used(tree) - defined(tree) - set(dir(builtins)) == {"f", "y"}
    assert len(WITH_SOLUTIONS) >= 4     # pages 5 to 8 have solutions with code, at least
