"""Make every notebook read the same in JupyterLab as in the book: numbers and hidden cells.

    python scripts/sync_notebooks.py [NOTEBOOK ...]     # default: notebooks/*.ipynb
    python scripts/sync_notebooks.py --check             # exit 1 if a notebook would change

Idempotent: a second run changes nothing. Run it after executing a notebook
(``jupyter-execute --inplace``), since it reads the glued values stored in the outputs.

**Numbers in the prose.** The single source of a number is the code that glues it,
``glue("p_hat_03", round(x, 4), display=False)``, whose value the notebook stores in
its outputs (nbval keeps them current). Writers cite it as myst-nb does,
``{glue:text}`p_hat_03:.3f` ``. JupyterLab cannot draw a glue role (jupyterlab-myst
renders MyST, but knows no ``glue``; it does render the ``{eval}`` role, from the results
stored in the cell's ``user_expressions`` metadata when the notebook is opened, and by
asking the kernel again when the Markdown cell is run). So this script rewrites each
glue role of a Markdown cell into an eval role that carries both the text and its key::

    {glue:text}`p_hat_03:.3f`   ->   {eval}`'0.318'  # glue p_hat_03:.3f`

and stores the result jupyterlab-myst expects in the cell's ``user_expressions``
(``[{"expression": ..., "result": {"status": "ok", "data": {"text/plain": "'0.318'"}}}]``,
what IPython answers for that expression). The expression is a string literal, so the
kernel gives the same answer whenever the cell is run, even before the cell that glues
the value (Run All runs the cells in order, and a page often glues at its end). The book
never reads the literal: ``_ext/glued_eval.py`` makes its ``{eval}`` role the glue role
for the key after ``#``, so the book shows the glued value itself, and
``tests/test_notebook_metadata.py`` fails when a literal differs from the value glued
(re-run this script). Running the script again re-formats each role from the glued
value; a role already in eval form is kept in step the same way.

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
# {eval}`'0.318'  # glue key:fmt` as this script writes it
EVAL_ROLE = re.compile(r"\{eval\}`([^`]*?)\s*#\s*glue\s+([^`]+?)\s*`")
GLUE_OR_EVAL = re.compile(f"{GLUE_ROLE.pattern}|{EVAL_ROLE.pattern}")

SOURCE_HIDDEN_TAGS = {"remove-cell", "remove-input", "hide-input"}
OUTPUTS_HIDDEN_TAGS = {"remove-cell", "remove-output", "hide-output"}


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


def eval_role(key_fmt: str, values: dict[str, str], where: str) -> tuple[str, str]:
    """``({eval} role, its expression)`` for a glued ``key[:fmt]``."""
    key, fmt = _split_key(key_fmt)
    if key not in values:
        raise SyncError(f"{where}: the prose cites {key!r}, which no code cell glues "
                        "(glue it, execute the notebook, then run this script)")
    text = format_plain_text(values[key], fmt)
    if "`" in text or "\n" in text:
        raise SyncError(f"{where}: the glued text of {key!r} ({text!r}) holds a backtick "
                        "or a line break, which a role cannot carry")
    expression = f"{text!r}  # glue {key}{':' + fmt if fmt else ''}"
    return f"{{eval}}`{expression}`", expression


def sync_markdown(cell, values: dict[str, str], where: str) -> None:
    """Glue roles to eval roles, and the cell's user_expressions, in place."""
    source = cell.source
    expressions: list[str] = []

    def to_eval(match: re.Match) -> str:
        # group 1: the key of a glue role; group 3: the key of an eval role
        key_fmt = match.group(1) if match.group(1) is not None else match.group(3)
        role, expr = eval_role(key_fmt, values, where)
        expressions.append(expr)
        return role

    # one pass in source order over both forms, so expressions keep the prose's order
    source = GLUE_OR_EVAL.sub(to_eval, source)
    cell.source = source
    unique = list(dict.fromkeys(expressions))
    if unique:
        cell.metadata["user_expressions"] = [
            {"expression": e,
             "result": {"status": "ok", "data": {"text/plain": repr(literal_eval(e))},
                        "metadata": {}}}
            for e in unique
        ]
    else:
        cell.metadata.pop("user_expressions", None)


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


def sync(nb, name: str = "notebook"):
    """``nb`` with eval roles, user_expressions and collapse flags in step (in place)."""
    values = glued_values(nb)
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
        print(f"sync_notebooks: {len(paths)} notebook(s) already in step")
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
