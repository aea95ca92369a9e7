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
        exec(helper.source, namespace)
        assert namespace["glued"]("p_hat:.3f") == "\u27e8p_hat\u27e9"  # not glued yet
        exec("from myst_nb import glue\nglue('p_hat', 0.31847, display=False)", namespace)
        for expr in nb.cells[0].metadata["user_expressions"]:
            answer = repr(eval(expr["expression"], namespace))
            assert answer == expr["result"]["data"]["text/plain"]
        # the reader changes a parameter and runs the page: the prose follows
        exec("glue('p_hat', 0.5, display=False)", namespace)
        assert eval('glued("p_hat:.3f")', namespace) == format(0.5, ".3f")
        exec(helper.source, namespace)  # running the helper again wraps glue once
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


# --------------------------------------------------------------- what JupyterLab can draw

def _book_only_macros() -> set[str]:
    """The TeX macros that _config.yml defines for the book's MathJax only."""
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    macros = config["sphinx"]["config"]["mathjax3_config"]["tex"]["macros"]
    return set(macros)


def _markdown_and_captions(path: Path):
    """``(where, text)`` for every Markdown cell and figure caption of ``path``."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            yield f"cell {i}", cell.source
        caption = cell.metadata.get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            yield f"cell {i} caption", caption


def test_the_book_defines_the_macros_this_test_looks_for():
    assert {"E", "Var", "Cov"} <= _book_only_macros()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_macro_that_jupyterlab_lacks(path):
    r"""jupyterlab-myst renders math with KaTeX and knows only the macros of a notebook's
    front matter, not _config.yml's: ``\E`` there is raw LaTeX in red. Write them out
    (``\mathbb{E}``, ``\operatorname{Var}``, ``\operatorname{Cov}``)."""
    macro = re.compile(r"\\(" + "|".join(sorted(_book_only_macros())) + r")(?![A-Za-z])")
    found = [f"{where}: \\{m.group(1)}" for where, text in _markdown_and_captions(path)
             for m in macro.finditer(text)]
    assert not found, (f"{path.name} uses macros defined for the book only (JupyterLab "
                       f"shows them raw): {found[:10]}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_reference_has_a_target_in_jupyterlab(path):
    """Each {numref} of a figure names a label that a Markdown cell defines (the caption
    cells sync_notebooks.py writes), so jupyterlab-myst resolves it."""
    nb = nbformat.read(path, as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    labels = set(re.findall(r"^:label: (\S+)$", markdown, flags=re.MULTILINE))
    labels |= set(re.findall(r"^\((\S+)\)=$", markdown, flags=re.MULTILINE))
    cited = set(re.findall(r"\{numref\}`(?:[^`<]*<)?([^`>]+)>?`", markdown))
    figures = {c.metadata.get("mystnb", {}).get("figure", {}).get("name")
               for c in nb.cells} - {None}
    missing = sorted((cited & figures) - labels)
    assert not missing, (f"{path.name}: figure references JupyterLab cannot resolve: "
                         f"{missing}; run `python scripts/sync_notebooks.py`")


def _glued_texts(path: Path):
    nb = nbformat.read(path, as_version=4)
    for key, text in sync_notebooks.glued_values(nb).items():
        yield key, sync_notebooks.format_plain_text(text, "")


IDENTIFIER = re.compile(r"[A-Za-z0-9_.@^/:+\-]+")


def _glue_zh(path: Path) -> dict[str, dict[str, str]]:
    """The ``glue_zh`` of the page's Chinese catalog (glue key -> {glued value: Chinese}):
    a sentence whose words depend on a result glues its phrase for each outcome, and the
    Chinese page shows the catalog's Chinese for it, not the English."""
    import yaml

    catalog = path.parents[1] / "locales" / "zh_CN" / "notebooks" / f"{path.stem}.yml"
    if not catalog.exists():
        return {}
    data = yaml.safe_load(catalog.read_text(encoding="utf-8")) or {}
    return {str(k): {str(w): str(z) for w, z in v.items()}
            for k, v in (data.get("glue_zh") or {}).items()}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_glued_values_are_numbers_or_identifiers(path):
    """The Chinese edition pastes every glued value into a Chinese sentence: a number
    or an identifier (a verdict key the catalog's ``glue_zh`` maps, a task id) reads
    there, and so does a phrase that ``glue_zh`` maps to its Chinese; any other English
    phrase does not ("674, 393, 309 and 275", "score interval
    (worst-case ...)"). Glue each number, or a key, and write the words in the prose."""
    said_in_chinese = _glue_zh(path)   # a branch's phrase the catalog says in Chinese
    glued = dict(_glued_texts(path))   # or a sentence glued in Chinese too, as KEY_zh
    phrases = [f"{key} = {text!r}" for key, text in glued.items()
               if re.search(r"[A-Za-z]", text) and not IDENTIFIER.fullmatch(text)
               and text not in said_in_chinese.get(key, {}) and f"{key}_zh" not in glued
               and not key.endswith("_zh")]
    assert not phrases, f"{path.name} glues English phrases: {phrases}"


def test_the_identifier_rule_flags_phrases():
    assert IDENTIFIER.fullmatch("BLOCKED") and IDENTIFIER.fullmatch("stable-pass")
    assert IDENTIFIER.fullmatch("0.318") and IDENTIFIER.fullmatch("12/12")
    assert not IDENTIFIER.fullmatch("674, 393, 309 and 275")
    assert not IDENTIFIER.fullmatch("both_pass5: measured 0.290, bar 0.500: not met")
