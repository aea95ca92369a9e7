"""Write the lab's working copy of a notebook, numbered as the book numbers it.

    python scripts/lab_copy.py notebooks/05_the_gate.ipynb lab/05_the_gate.ipynb

scripts/lab.sh calls this for each notebook it copies into lab/. The copy is the notebook
with one change: its first Markdown cell starts with a MyST front matter block that makes
jupyterlab-myst number the page's figures and exercises as the book does. The book
(Sphinx, ``numfig`` with the toc's numbered pages) calls the first figure of page 5
"Fig. 5.1" and its first exercise "Exercise 5.1"; jupyterlab-myst, which numbers each
notebook on its own, would call them "Figure 1" and "Exercise 1". MyST's ``numbering``
front matter sets both: ``enumerator`` puts the page's number before each count
(``5.%s``), and an item's ``template`` is the name it is shown with (``Fig. %s``)::

    ---
    numbering:
      enumerator: 5.%s
      figure: {template: Fig. %s}
      exercise: {template: Exercise %s}
    ---

The page's number is the one the book's toc (_toc.yml, ``numbered: true``) gives it: its
place among the chapters. The tracked notebook is never written, and jupyter-book never
reads the copy (lab/ is outside its toc and in ``exclude_patterns``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def page_number(notebook: Path, root: Path = ROOT) -> int:
    """The book's number for ``notebook``: its place among the toc's chapters, from 1."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [Path(str(c["file"])).with_suffix("").as_posix() for c in toc.get("chapters", [])]
    name = f"notebooks/{Path(notebook).stem}"
    if name not in files:
        raise ValueError(f"{notebook}: not a chapter of {root / '_toc.yml'} "
                         f"(its chapters: {files})")
    return files.index(name) + 1


def front_matter(number: int) -> str:
    """The MyST front matter that numbers a page's figures and exercises ``number.i``.

    >>> print(front_matter(5), end="")
    ---
    numbering:
      enumerator: '5.%s'
      figure: {template: 'Fig. %s'}
      exercise: {template: 'Exercise %s'}
    ---
    """
    return ("---\nnumbering:\n"
            f"  enumerator: '{number}.%s'\n"
            "  figure: {template: 'Fig. %s'}\n"
            "  exercise: {template: 'Exercise %s'}\n"
            "---\n")


def lab_copy(notebook: dict, number: int) -> dict:
    """``notebook`` (nbformat JSON) with :func:`front_matter` atop its first Markdown cell.

    A first Markdown cell that already starts with front matter (``---``) is left as it
    is, so that a page that declares its own is not given two blocks.
    """
    copy = json.loads(json.dumps(notebook))
    first = next((c for c in copy["cells"] if c["cell_type"] == "markdown"), None)
    if first is None:
        raise ValueError("the notebook has no Markdown cell to number it from")
    source = "".join(first["source"])
    if not source.lstrip().startswith("---"):
        first["source"] = (front_matter(number) + source).splitlines(keepends=True)
    return copy


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/lab_copy.py NOTEBOOK COPY", file=sys.stderr)
        return 2
    src, dest = Path(argv[0]), Path(argv[1])
    try:
        notebook = json.loads(src.read_text(encoding="utf-8"))
        copy = lab_copy(notebook, page_number(src))
    except (OSError, ValueError) as exc:
        print(f"lab: {src}: {exc}", file=sys.stderr)
        return 2
    dest.write_text(json.dumps(copy, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
