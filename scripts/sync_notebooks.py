"""Make every notebook read the same in JupyterLab as in the book: numbers and hidden cells.

    python scripts/sync_notebooks.py [NOTEBOOK ...]     # default: notebooks/*.ipynb
    python scripts/sync_notebooks.py --check             # exit 1 if a notebook would change

Idempotent: a second run changes nothing. Run it after executing a notebook
(``jupyter-execute --inplace``), since it reads the glued values stored in the outputs.
When it adds the helper cell below to a notebook (the first time), execute the notebook
again and re-run the script (the new cell needs its execution count).

**Numbers in the prose.** The single source of a number is the code that glues it,
``glue("p_hat_03", round(x, 4), display=False)``, whose value the notebook stores in
its outputs (nbval keeps them current). Writers cite it as myst-nb does,
``{glue:text}`p_hat_03:.3f` ``. JupyterLab cannot draw a glue role (jupyterlab-myst
renders MyST, but knows no ``glue``; it does render the ``{eval}`` role, from the results
stored in the cell's ``user_expressions`` metadata when the notebook is opened, and by
asking the kernel again when the Markdown cell is run). So this script rewrites each
glue role of a Markdown cell into an eval role whose expression computes the number in
the reader's kernel::

    {glue:text}`p_hat_03:.3f`   ->   {eval}`glued("p_hat_03:.3f")`

``glued`` is defined by a hidden code cell that this script puts before the notebook's
first code cell (id ``glued-numbers``, tagged ``remove-cell``). That cell makes
``myst_nb.glue`` also keep each value it glues in the kernel, and ``glued("key:fmt")``
formats the value glued last as ``key`` exactly as the book's ``{glue:text}`key:fmt` ``
does (myst-nb formats the value's text/plain). So a reader who changes a parameter and
runs the page sees the new numbers in the prose. A number whose Markdown cell runs
before the cell that glues it (a fresh kernel, the cells run one by one) shows as
``⟨key⟩`` until that cell has run; run the Markdown cell again then.

The script also stores what the kernel answers for each expression in the cell's
``user_expressions`` (``[{"expression": 'glued("p_hat_03:.3f")', "result": {"status":
"ok", "data": {"text/plain": "'0.318'"}}}]``), so the notebook opened without running
shows the stored numbers. The book, built with execution off, never evaluates the
expression: ``_ext/glued_eval.py`` makes its ``{eval}`` role the glue role for the key in
``glued(...)``, so the book shows the glued value itself, and
``tests/test_notebook_metadata.py`` fails when a stored result differs from the value
glued (re-run this script). The older form ``{eval}`'0.318'  # glue p_hat_03:.3f` ``
(a literal) is read and rewritten too.

**Figures that references reach.** The book numbers a figure from its code cell's
metadata (``mystnb.figure``: caption and name) and resolves ``{numref}`fig-x` `` to it.
jupyterlab-myst reads only Markdown cells, so there a reference to ``fig-x`` showed as
"ⓘ fig-x" and the figure had no caption. After each such code cell this script keeps a
Markdown cell (id ``<name>-caption``, tagged ``remove-cell`` so the book skips it) holding
a MyST figure with that label and caption: in JupyterLab the caption appears under the
plot and every ``{numref}`` to the figure resolves to it. It is rewritten from the
metadata on every run (edit the caption there), and removed with its figure.

**Machinery out of the way.** A code cell the book hides (tags ``remove-cell``,
``remove-input``, ``hide-input``, ``remove-output``, ``hide-output``) gets JupyterLab's
own collapse flags, ``metadata.jupyter.source_hidden`` (its code) and
``metadata.jupyter.outputs_hidden`` (its outputs), set from the tags and removed from
cells whose tags no longer ask for them.
"""

from __future__ import annotations

import argparse
import re
import sys
from ast import literal_eval
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"

# {glue:text}`key` / {glue:text}`key:fmt` (myst-nb's text role; other glue roles are left)
GLUE_ROLE = re.compile(r"\{glue:text\}`([^`]+)`")
# {eval}`glued("key:fmt")` as this script writes it
EVAL_ROLE = re.compile(r"""\{eval\}`\s*glued\(\s*["']([^"'`]+)["']\s*\)\s*`""")
# {eval}`'0.318'  # glue key:fmt`, the form this script wrote before glued() (read only)
OLD_EVAL_ROLE = re.compile(r"\{eval\}`([^`]*?)\s*#\s*glue\s+([^`]+?)\s*`")
GLUE_OR_EVAL = re.compile(
    f"{GLUE_ROLE.pattern}|{EVAL_ROLE.pattern}|{OLD_EVAL_ROLE.pattern}")
# any {eval} role (tests: every one must be glued(...))
ANY_EVAL_ROLE = re.compile(r"\{eval\}`([^`]*)`")

SOURCE_HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input"}
OUTPUTS_HIDDEN_TAGS = {"remove-cell", "remove-output", "hide-output"}

CAPTION_MARK = ("% JupyterLab's copy of the figure's caption, written by "
                "scripts/sync_notebooks.py from the code cell's metadata (edit it there)")

HELPER_ID = "glued-numbers"
HELPER_TAGS = ["remove-cell"]
HELPER_SOURCE = """\
# The prose's numbers in JupyterLab (hidden in the book; scripts/sync_notebooks.py
# writes this cell). Each number in a Markdown cell is {eval}`glued("key:fmt")`:
# jupyterlab-myst asks the kernel for it when the cell runs, so it follows what the
# code below glued last, formatted as the book's {glue:text}`key:fmt` is.
from ast import literal_eval

import myst_nb
from IPython.core.formatters import format_display_data

GLUED = {}
_myst_glue = getattr(myst_nb.glue, "__wrapped__", myst_nb.glue)


def _glue_and_keep(name, variable, display=True):
    GLUED[name] = variable
    _myst_glue(name, variable, display)


_glue_and_keep.__wrapped__ = _myst_glue
myst_nb.glue = _glue_and_keep  # `from myst_nb import glue` below gets this one


def glued(key_fmt):
    \"\"\"The value glued as ``key``, formatted with ``fmt`` as myst-nb does.\"\"\"
    key, _, fmt = key_fmt.partition(":")
    if key not in GLUED:
        return f"\\u27e8{key}\\u27e9"  # ⟨key⟩: the cell that glues it has not run yet
    data, _ = format_display_data(GLUED[key])
    text = data["text/plain"]
    try:
        value = literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt[-1:] == "s":
        value = str(value)
    elif fmt[-1:] and fmt[-1] in "bcdoxX":
        value = int(value)
    elif fmt[-1:] and fmt[-1] in "eEfFgGn%":
        value = float(value)
    return format(value, fmt) if fmt else str(value)"""


class SyncError(ValueError):
    """A notebook whose prose cites a key that no cell glues, or cannot be written."""


def glued_values(nb) -> dict[str, str]:
    """Every glued key of ``nb`` and the text/plain that its glue output stored."""
    values: dict[str, str] = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            book = out.get("metadata", {}).get("scrapbook")
            if not book:
                continue
            plain = out.get("data", {}).get(book.get("mime_prefix", "") + "text/plain")
            if plain is not None:
                values[book["name"]] = plain if isinstance(plain, str) else "".join(plain)
    return values


def format_plain_text(text: str, fmt_spec: str) -> str:
    """myst-nb's ``{glue:text}`` formatting of a stored text/plain (myst_nb.core.variables)."""
    try:
        value = literal_eval(text)
    except (SyntaxError, ValueError):
        value = text
    if fmt_spec == "":
        return str(value)
    type_char = fmt_spec[-1]
    if type_char == "s":
        value = str(value)
    elif type_char in "bcdoxX":
        value = int(value)
    elif type_char in "eEfFgGn%":
        value = float(value)
    return format(value, fmt_spec)


def _split_key(key_fmt: str) -> tuple[str, str]:
    key, _, fmt = key_fmt.partition(":")
    return key.strip(), fmt.strip()


def eval_role(key_fmt: str, values: dict[str, str], where: str) -> tuple[str, str, str]:
    """``({eval} role, its expression, the text it shows)`` for a glued ``key[:fmt]``."""
    key, fmt = _split_key(key_fmt)
    if key not in values:
        raise SyncError(f"{where}: the prose cites {key!r}, which no code cell glues "
                        "(glue it, execute the notebook, then run this script)")
    text = format_plain_text(values[key], fmt)
    if "`" in text or "\n" in text:
        raise SyncError(f"{where}: the glued text of {key!r} ({text!r}) holds a backtick "
                        "or a line break, which a role cannot carry")
    expression = f'glued("{key}{":" + fmt if fmt else ""}")'
    return f"{{eval}}`{expression}`", expression, text


def eval_keys(source: str) -> list[str]:
    """The ``key[:fmt]`` of every glue or eval role of ``source``, in order."""
    found = []
    for match in GLUE_OR_EVAL.finditer(source):
        # group 1: glue role; group 2: glued(...) eval role; group 4: the older eval form
        found.append(next(g for g in (match.group(1), match.group(2), match.group(4)) if g))
    return found


def sync_markdown(cell, values: dict[str, str], where: str) -> None:
    """Glue roles to eval roles, and the cell's user_expressions, in place."""
    shown: dict[str, str] = {}

    def to_eval(match: re.Match) -> str:
        key_fmt = next(g for g in (match.group(1), match.group(2), match.group(4)) if g)
        role, expr, text = eval_role(key_fmt, values, where)
        shown.setdefault(expr, text)
        return role

    # one pass in source order over all forms, so expressions keep the prose's order
    cell.source = GLUE_OR_EVAL.sub(to_eval, cell.source)
    if shown:
        # what IPython answers for glued(...): the repr of the text (a str)
        cell.metadata["user_expressions"] = [
            {"expression": e,
             "result": {"status": "ok", "data": {"text/plain": repr(text)}, "metadata": {}}}
            for e, text in shown.items()
        ]
    else:
        cell.metadata.pop("user_expressions", None)


def sync_helper(nb) -> None:
    """The hidden cell that defines ``glued`` before the first code cell, in place.

    Added to a notebook whose prose has numbers (and removed from one without); its
    source and tags are kept as this script writes them.
    """
    cells = nb.cells
    at = next((i for i, c in enumerate(cells) if c.get("id") == HELPER_ID), None)
    wanted = any(c.cell_type == "markdown" and GLUE_OR_EVAL.search(c.source)
                 for c in cells)
    if at is not None and not wanted:
        del cells[at]
        return
    if not wanted:
        return
    if at is None:
        first_code = next((i for i, c in enumerate(cells) if c.cell_type == "code"),
                          len(cells))
        cell = nbformat.v4.new_code_cell(HELPER_SOURCE)
        cell["id"] = HELPER_ID
        cells.insert(first_code, cell)
        at = first_code
    cell = cells[at]
    if cell.source != HELPER_SOURCE:
        cell.source = HELPER_SOURCE
    cell.metadata["tags"] = list(HELPER_TAGS)


def sync_collapse(cell) -> None:
    """JupyterLab's collapse flags from the book's tags, in place."""
    tags = set(cell.metadata.get("tags", []))
    jupyter = dict(cell.metadata.get("jupyter", {}))
    for flag, wanted in (("source_hidden", SOURCE_HIDDEN_TAGS),
                         ("outputs_hidden", OUTPUTS_HIDDEN_TAGS)):
        if tags & wanted:
            jupyter[flag] = True
        else:
            jupyter.pop(flag, None)
    if jupyter:
        cell.metadata["jupyter"] = jupyter
    else:
        cell.metadata.pop("jupyter", None)


def _is_caption_cell(cell) -> bool:
    return cell.cell_type == "markdown" and cell.source.startswith(CAPTION_MARK)


def caption_source(name: str, caption: str) -> str:
    """The Markdown of the caption cell of figure ``name``."""
    return f"{CAPTION_MARK}\n:::{{figure}}\n:label: {name}\n{caption.strip()}\n:::"


def sync_captions(nb) -> None:
    """One caption cell after each figure's code cell, and no other, in place."""
    old = {c.get("id"): c for c in nb.cells if _is_caption_cell(c)}
    cells = [c for c in nb.cells if not _is_caption_cell(c)]
    out = []
    for cell in cells:
        out.append(cell)
        figure = cell.metadata.get("mystnb", {}).get("figure", {})
        if cell.cell_type != "code" or not figure.get("name") or not figure.get("caption"):
            continue
        cell_id = f"{figure['name']}-caption"
        caption = old.get(cell_id) or nbformat.v4.new_markdown_cell()
        caption["id"] = cell_id
        caption.source = caption_source(figure["name"], figure["caption"])
        caption.metadata["tags"] = ["remove-cell"]
        out.append(caption)
    nb.cells[:] = out


def sync(nb, name: str = "notebook"):
    """``nb`` with eval roles, user_expressions and collapse flags in step (in place)."""
    values = glued_values(nb)
    sync_helper(nb)
    sync_captions(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            sync_markdown(cell, values, f"{name}, cell {i}")
        elif cell.cell_type == "code":
            sync_collapse(cell)
    return nb


def sync_file(path: Path, *, check: bool = False) -> bool:
    """Sync one notebook file; return whether it changed (or, with check, would)."""
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    after = nbformat.writes(sync(nb, path.name)) + "\n"
    if after == before:
        return False
    if not check:
        path.write_text(after, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a notebook is out of step")
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    changed = []
    try:
        for path in paths:
            if sync_file(path, check=args.check):
                changed.append(path)
    except SyncError as exc:
        print(f"sync_notebooks: {exc}", file=sys.stderr)
        return 2
    verb = "out of step" if args.check else "updated"
    for path in changed:
        print(f"sync_notebooks: {verb}: {path}")
    if not changed:
        print(f"sync_notebooks: {'the notebook is' if len(paths) == 1 else f'all {len(paths)} notebooks are'} "
              "already in step")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
