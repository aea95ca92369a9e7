"""Write the lab's working copy of a notebook, numbered as the book numbers it.

    python scripts/lab_copy.py notebooks/05_the_gate.ipynb lab/05_the_gate.ipynb

scripts/lab.sh calls this for each notebook it copies into lab/. The copy is the notebook
with one change: its first Markdown cell starts with a MyST front matter block that makes
jupyterlab-myst number the page's figures, exercises and equations as the book does. The
book (Sphinx, ``numfig`` with the toc's numbered pages) numbers them within the page:
page 5's first figure is "Figure 5.1" and its first exercise "Exercise 5.1".
jupyterlab-myst numbers each notebook on its own, "Figure 1" and "Exercise 1", unless
MyST's ``numbering`` front matter sets an ``enumerator``, the template of every number::

    ---
    numbering:
      enumerator: '5.%s'
    ---

jupyterlab-myst names a caption by its kind ("Figure", "Exercise", hard-coded in its
renderer); the book's _config.yml (``numfig_format``) says "Figure" too, so that the two
read alike. The page's number is the one the book's toc (_toc.yml, ``numbered: true``)
gives it: its place among the chapters. The tracked notebook is never written, and
jupyter-book never reads the copy (lab/ is outside its toc and in ``exclude_patterns``).

The Chinese edition's copy (``--zh``, ``lab/NN_x.zh.ipynb`` beside the English one, so that
the notebook's relative paths resolve the same) is the notebook as the Chinese book shows
it (``scripts/zh_book.py``'s ``chinese_notebook``: the prose, captions and glued words in
Chinese, the figures drawn in Chinese when the book's build has left them current), with
one code cell first that draws every figure of the session in Chinese
(``passk.book.plots.use_language``), so that a changed parameter redraws them in Chinese
too::

    python scripts/lab_copy.py --zh notebooks/05_the_gate.ipynb lab/05_the_gate.zh.ipynb
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def numbered_chapters(toc: dict) -> list[dict]:
    """The toc's numbered chapters, in order: Part I's (a part with ``numbered: true``), or
    the chapters of a toc without parts. Part II, the manual, is not numbered.

    >>> numbered_chapters({"parts": [{"numbered": True, "chapters": [{"file": "a"}]},
    ...                              {"numbered": False, "chapters": [{"file": "b"}]}]})
    [{'file': 'a'}]
    """
    if "parts" in toc:
        return [c for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]
    return list(toc.get("chapters", []))


def page_number(notebook: Path, root: Path = ROOT) -> int:
    """The book's number for ``notebook``: its place among the toc's chapters, from 1."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [Path(str(c["file"])).with_suffix("").as_posix() for c in numbered_chapters(toc)]
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
    ---
    """
    return f"---\nnumbering:\n  enumerator: '{number}.%s'\n---\n"


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


#: The first cell of a Chinese copy: every figure from here on drawn in Chinese.
ZH_SETUP = ("# 中文版：本会话的图以中文绘制（passk.book.plots.use_language）\n"
            "import passk.book.plots as _passk_plots\n"
            '_passk_plots.use_language("zh_CN", "../locales/zh_CN/_figures.yml")\n')


#: Then, when the page's catalog maps glued words to Chinese (``glue_zh``: a verdict, a
#: task's class), each word the session glues is said in Chinese as the book says it: the
#: prose's {eval} roles read ``GLUED`` (the page's own numbers cell), so after every cell
#: the words it glued are replaced there.
ZH_GLUE = ("_GLUE_ZH = {table!r}\n\n\n"
           "def _glued_in_chinese(result):\n"
           '    glued = get_ipython().user_ns.get("GLUED", {{}})\n'
           "    for key, words in _GLUE_ZH.items():\n"
           "        if key in glued and str(glued[key]) in words:\n"
           "            glued[key] = words[str(glued[key])]\n\n\n"
           'get_ipython().events.register("post_run_cell", _glued_in_chinese)\n')


def chinese_copy(src: Path) -> dict:
    """The Chinese edition of notebook ``src`` for the lab: :data:`ZH_SETUP` first (and
    :data:`ZH_GLUE` when the page maps glued words)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import zh_book

    page = Path(src).resolve().relative_to(ROOT).as_posix()
    notebook = zh_book.chinese_notebook(page, ROOT, figures="cached")
    table = zh_book.glue_map(page)
    setup = ZH_SETUP + ("\n" + ZH_GLUE.format(table=table) if table else "")
    notebook["cells"].insert(0, {"cell_type": "code", "id": "zh-setup", "metadata": {},
                                 "execution_count": None, "outputs": [],
                                 "source": setup.splitlines(keepends=True)})
    return notebook


def main(argv: list[str]) -> int:
    zh = bool(argv) and argv[0] == "--zh"
    if zh:
        argv = argv[1:]
    if len(argv) != 2:
        print("usage: python scripts/lab_copy.py [--zh] NOTEBOOK COPY", file=sys.stderr)
        return 2
    src, dest = Path(argv[0]), Path(argv[1])
    try:
        notebook = (chinese_copy(src) if zh
                    else json.loads(src.read_text(encoding="utf-8")))
        copy = lab_copy(notebook, page_number(src))
    except (OSError, ValueError, KeyError) as exc:
        print(f"lab: {src}: {exc}", file=sys.stderr)
        return 2
    dest.write_text(json.dumps(copy, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
