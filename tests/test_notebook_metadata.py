"""Every notebook is in step with ``scripts/sync_notebooks.py``: the same in JupyterLab as in
the book.

``test_notebook_is_in_step`` fails on a notebook that the script would change: a
``{glue:text}`` role left in the prose (JupyterLab cannot draw it), an ``{eval}`` literal
that differs from the value its key glues now (the notebook was re-executed and the
script not re-run), ``user_expressions`` missing or stale (JupyterLab would show
"Unexecuted inline expression"), or a machinery cell (``remove-cell``, ``hide-input``...)
that JupyterLab would show open. The fix is always ``python scripts/sync_notebooks.py``.

The script itself is checked on a small notebook built here: the rewrite, what it
stores, idempotence, the error for a key that nothing glues, and the collapse flags.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

_spec = importlib.util.spec_from_file_location("sync_notebooks",
                                               ROOT / "scripts" / "sync_notebooks.py")
sync_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sync_notebooks)


def _out_of_step(path: Path) -> list[str]:
    """What the script would change in ``path``, one line per cell."""
    nb = nbformat.read(path, as_version=4)
    before = [(c.source, dict(c.metadata)) for c in nb.cells]
    sync_notebooks.sync(nb, path.name)
    problems = []
    for i, (cell, (source, metadata)) in enumerate(zip(nb.cells, before)):
        if cell.source != source:
            roles = re.findall(r"\{glue:text\}`[^`]*`|\{eval\}`[^`]*`", source)
            new = re.findall(r"\{eval\}`[^`]*`", cell.source)
            stale = [f"{a} -> {b}" for a, b in zip(roles, new) if a != b]
            problems.append(f"cell {i}: prose out of step: {stale[:3]}")
        for key in ("user_expressions", "jupyter"):
            if cell.metadata.get(key) != metadata.get(key):
                problems.append(f"cell {i}: metadata.{key} is {metadata.get(key)!r:.80}, "
                                f"should be {cell.metadata.get(key)!r:.80}")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_in_step(path):
    try:
        problems = _out_of_step(path)
    except sync_notebooks.SyncError as exc:
        pytest.fail(str(exc), pytrace=False)
    assert not problems, (
        f"{path.name} is out of step with its glued values or its tags: run "
        "`python scripts/sync_notebooks.py` (after executing the notebook):\n  "
        + "\n  ".join(problems[:20])
    )


def _notebook(markdown: str, tags: list[str] | None = None, value: str = "0.31847"):
    glue_out = nbformat.v4.new_output(
        "display_data",
        data={"application/papermill.record/text/plain": value},
        metadata={"scrapbook": {"name": "p_hat", "mime_prefix":
                                "application/papermill.record/"}},
    )
    code = nbformat.v4.new_code_cell('glue("p_hat", 0.31847, display=False)',
                                     outputs=[glue_out], execution_count=1)
    code.metadata["tags"] = tags or []
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown), code])


def test_glue_role_becomes_an_eval_role_with_its_stored_result():
    nb = sync_notebooks.sync(_notebook("pass^5 is {glue:text}`p_hat:.3f`, "
                                       "or {glue:text}`p_hat`; again {glue:text}`p_hat:.3f`."))
    md = nb.cells[0]
    assert md.source == ('pass^5 is {eval}`glued("p_hat:.3f")`, or '
                         '{eval}`glued("p_hat")`; again '
                         '{eval}`glued("p_hat:.3f")`.')
    # what IPython answers for each expression (a str's repr), once per expression
    assert md.metadata["user_expressions"] == [
        {"expression": 'glued("p_hat:.3f")',
         "result": {"status": "ok", "data": {"text/plain": "'0.318'"}, "metadata": {}}},
        {"expression": 'glued("p_hat")',
         "result": {"status": "ok", "data": {"text/plain": "'0.31847'"}, "metadata": {}}},
    ]


def test_the_older_literal_form_is_rewritten():
    nb = sync_notebooks.sync(_notebook("p = {eval}`'0.32'  # glue p_hat:.2f`"))
    assert nb.cells[0].source == 'p = {eval}`glued("p_hat:.2f")`'


def test_the_kernel_answers_what_is_stored_and_follows_a_new_value():
    """The helper cell, run in a namespace as the kernel runs it, with myst-nb's glue."""
    pytest.importorskip("IPython")
    myst_nb = pytest.importorskip("myst_nb")
    original = myst_nb.glue
    nb = sync_notebooks.sync(_notebook("a {glue:text}`p_hat:.3f` b {glue:text}`p_hat`"))
    helper = nb.cells[1]
    assert helper.id == sync_notebooks.HELPER_ID and "remove-cell" in helper.metadata.tags
    assert nb.cells[2].source.startswith("glue(")  # the helper precedes every glue
    namespace: dict = {}
    try:
        exec(helper.source, namespace)  # noqa: S102 (the cell as the kernel runs it)
        assert namespace["glued"]("p_hat:.3f") == "\u27e8p_hat\u27e9"  # not glued yet
        exec("from myst_nb import glue\nglue('p_hat', 0.31847, display=False)", namespace)  # noqa: S102 (the cell as the kernel runs it)
        for expr in nb.cells[0].metadata["user_expressions"]:
            answer = repr(eval(expr["expression"], namespace))
            assert answer == expr["result"]["data"]["text/plain"]
        # the reader changes a parameter and runs the page: the prose follows
        exec("glue('p_hat', 0.5, display=False)", namespace)  # noqa: S102 (the cell as the kernel runs it)
        assert eval('glued("p_hat:.3f")', namespace) == format(0.5, ".3f")
        exec(helper.source, namespace)  # running the helper again wraps glue once  # noqa: S102 (the cell as the kernel runs it)
        assert namespace["_myst_glue"] is original
    finally:
        myst_nb.glue = original


def test_sync_is_idempotent_and_follows_a_new_value():
    nb = sync_notebooks.sync(_notebook("p = {glue:text}`p_hat:.2f`"))
    once = nbformat.writes(nb)
    assert nbformat.writes(sync_notebooks.sync(nb)) == once
    # re-executed: the code now glues another value; the stored result follows it
    nb.cells[2].outputs[0]["data"]["application/papermill.record/text/plain"] = "0.5"
    sync_notebooks.sync(nb)
    assert nb.cells[0].source == 'p = {eval}`glued("p_hat:.2f")`'
    assert nb.cells[0].metadata["user_expressions"][0]["result"]["data"] == {
        "text/plain": "'0.50'"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_prose_numbers_are_expressions_not_literals(path):
    """Every {eval} computes its number in the kernel: none is a bare literal."""
    import ast
    nb = nbformat.read(path, as_version=4)
    literals = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for expr in sync_notebooks.ANY_EVAL_ROLE.findall(cell.source):
            code = expr.split("#")[0].strip()
            try:
                ast.literal_eval(code)
            except (SyntaxError, ValueError):
                continue
            literals.append(f"cell {i}: {{eval}}`{expr}`")
    assert not literals, (f"{path.name}: a number stored as a literal does not follow a "
                          "re-run; run `python scripts/sync_notebooks.py`: " + "; ".join(literals[:5]))


def test_a_key_nothing_glues_is_an_error_naming_it():
    with pytest.raises(sync_notebooks.SyncError, match=r"nb\.ipynb, cell 0: .*'p_tilde'"):
        sync_notebooks.sync(_notebook("p = {glue:text}`p_tilde:.2f`"), "nb.ipynb")


@pytest.mark.parametrize(("tags", "expected"), [
    (["remove-cell"], {"source_hidden": True, "outputs_hidden": True}),
    (["hide-input"], {"source_hidden": True}),
    (["remove-input", "nbval-ignore-output"], {"source_hidden": True}),
    (["remove-output"], {"outputs_hidden": True}),
    ([], None),
])
def test_machinery_cells_collapse_from_the_books_tags(tags, expected):
    nb = _notebook("no numbers", tags)
    nb.cells[1].metadata["jupyter"] = {"source_hidden": True}  # stale: set, then untagged
    sync_notebooks.sync(nb)
    assert nb.cells[1].metadata.get("jupyter") == expected
    assert "user_expressions" not in nb.cells[0].metadata
