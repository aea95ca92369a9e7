"""Figures and exercises in JupyterLab numbered as the book numbers them.

The book (Sphinx: ``numfig`` and the toc's numbered pages) calls page 5's first figure
"Figure 5.1" (``numfig_format`` in _config.yml) and its first exercise "Exercise 5.1".
jupyterlab-myst numbers each notebook on its own ("Figure 1", "Exercise 1") unless MyST
front matter says otherwise, so
``scripts/lab.sh`` writes the working copies with ``scripts/lab_copy.py``, which puts a
``numbering`` block atop each copy's first cell (the tracked notebooks keep none).

* ``test_lab_copy_*``: the copy is the notebook plus that block, nothing else; the page
  numbers are the toc's; a bad path is a one-line error with exit 2.
* ``test_figures_and_exercises_numbered_as_in_the_book``: every notebook with figures or
  exercises, copied as lab.sh copies it, opened in a real JupyterLab (headless Chromium,
  stored outputs, nothing run): the label jupyterlab-myst draws for each figure caption
  and each exercise, in order, is "Figure P.i" / "Exercise P.i" for page P, which is
  what the book shows (its figures and exercises in the order of the notebook's cells;
  tests/test_book_browser.py checks the book's exercises). Pages 2 and 5 run in the
  test command; the other pages are marked slow.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from offline_browser import close_lab_page, watch
from patience import CEILING_S

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
sys.path[:0] = [str(ROOT / "scripts"), str(ROOT / "tests")]
import lab_copy
import test_jupyterlab_widgets as jupyterlab


def _labels(notebook: dict) -> tuple[list[str], list[str]]:
    """The figure and exercise labels of a notebook, in the order of its cells."""
    figures, exercises = [], []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        source = "".join(cell["source"])
        for kind, label in re.findall(r"[:`]{3,}\s*\{(figure|exercise)\}[^\n]*\n"
                                      r"(?:\s*:[a-z-]+:.*\n)*?\s*:label:\s*(\S+)", source):
            (figures if kind == "figure" else exercises).append(label)
    return figures, exercises


def test_lab_copy_adds_only_the_front_matter(tmp_path):
    src = NOTEBOOKS / "05_the_gate.ipynb"
    dest = tmp_path / src.name
    subprocess.run([sys.executable, str(ROOT / "scripts" / "lab_copy.py"), str(src),
                    str(dest)], check=True)
    original = json.loads(src.read_text(encoding="utf-8"))
    copy = json.loads(dest.read_text(encoding="utf-8"))
    first = next(i for i, c in enumerate(copy["cells"]) if c["cell_type"] == "markdown")
    head = "".join(copy["cells"][first]["source"])
    assert head.startswith("---\nnumbering:\n  enumerator: '5.%s'\n")
    assert head == lab_copy.front_matter(5) + "".join(original["cells"][first]["source"])
    copy["cells"][first]["source"] = original["cells"][first]["source"]
    assert copy == original
    # a copy of a copy gets no second block
    assert lab_copy.lab_copy(json.loads(dest.read_text(encoding="utf-8")), 5)["cells"][
        first]["source"] == json.loads(dest.read_text(encoding="utf-8"))["cells"][first]["source"]


class _FakeShell:
    """IPython's ``get_ipython()`` as the copy's first cell uses it."""

    def __init__(self, namespace: dict) -> None:
        self.user_ns = namespace
        namespace.setdefault("_hooks", [])
        self.events = self

    def register(self, event: str, hook) -> None:
        assert event == "post_run_cell"
        self.user_ns["_hooks"].append(hook)


def test_lab_copy_zh_is_the_chinese_edition_with_its_figures_in_chinese(tmp_path):
    """``lab_copy.py --zh``: the Chinese book's prose (every Markdown cell as the Chinese
    edition shows it), the same code cells, numbered as the book, and one first code cell
    that makes the session draw its figures in Chinese."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import zh_book

    for src in sorted(NOTEBOOKS.glob("*.ipynb")):
        dest = tmp_path / f"{src.stem}.zh.ipynb"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "lab_copy.py"), "--zh",
                        str(src), str(dest)], check=True)
        copy = json.loads(dest.read_text(encoding="utf-8"))
        english = json.loads(src.read_text(encoding="utf-8"))
        shown = zh_book.chinese_notebook(f"notebooks/{src.name}", ROOT, figures=False)
        table = zh_book.glue_map(f"notebooks/{src.name}")
        setup = "".join(copy["cells"][0]["source"])
        assert setup.startswith(lab_copy.ZH_SETUP)
        if table:   # the words the session glues are said in Chinese, by the catalog's map
            namespace: dict = {}
            shell = _FakeShell(namespace)
            namespace["get_ipython"] = lambda shell=shell: shell
            exec(setup.replace(lab_copy.ZH_SETUP, ""), namespace)
            key, words = next(iter(table.items()))
            word, chinese = next(iter(words.items()))
            namespace["GLUED"] = {key: word, "other": word}
            namespace["_hooks"][0](None)
            assert namespace["GLUED"] == {key: chinese, "other": word}
        else:
            assert setup == lab_copy.ZH_SETUP
        cells = copy["cells"][1:]
        assert [c["id"] for c in cells] == [c["id"] for c in english["cells"]]
        assert [c["source"] for c in cells if c["cell_type"] == "code"] == [
            c["source"] for c in english["cells"] if c["cell_type"] == "code"]
        markdown = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        expected = ["".join(c["source"]) for c in shown["cells"]
                    if c["cell_type"] == "markdown"]
        number = lab_copy.page_number(src)
        assert markdown[0] == lab_copy.front_matter(number) + expected[0]
        assert markdown[1:] == expected[1:]
        assert re.search(r"[\u4e00-\u9fff]", markdown[0]), f"{src.name}: no Chinese"


def test_lab_copy_page_numbers_are_the_tocs():
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    parts = [part for part in toc["parts"] if part.get("numbered")]
    assert len(parts) == 1 and parts[0]["caption"].startswith("Part I"), toc["parts"]
    chapters = [Path(c["file"]).name for c in parts[0]["chapters"]]
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        assert lab_copy.page_number(path) == chapters.index(path.stem) + 1
    assert lab_copy.page_number(NOTEBOOKS / "05_the_gate.ipynb") == 5


def test_lab_copy_bad_input_is_one_line_exit_2(tmp_path):
    stray = tmp_path / "99_not_in_the_toc.ipynb"
    stray.write_text(json.dumps({"cells": []}), encoding="utf-8")
    for args in ([str(tmp_path / "missing.ipynb"), str(tmp_path / "out.ipynb")],
                 [str(stray), str(tmp_path / "out.ipynb")], []):
        proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "lab_copy.py"), *args],
                              check=False, capture_output=True, text=True)
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not (tmp_path / "out.ipynb").exists()


# jupyterlab-myst's label of each figure caption and exercise in the current notebook, in
# document order: the caption's number ("Figure 5.1") and the exercise's title line.
_NUMBERS = r"""
() => {
  const w = window.jupyterapp.shell.currentWidget;
  const out = {figures: [], exercises: [], rendered: true};
  w.content.widgets.forEach(cell => {
    if (cell.model.type !== 'markdown') return;
    if (!cell.node.querySelector('.myst')) out.rendered = false;
    cell.node.querySelectorAll('.myst figure figcaption').forEach(el => {
      const m = (el.innerText || '').trim().match(/^Figure\s+[^\s:]+/);
      if (m) out.figures.push(m[0].replace(/\u00a0/g, ' ').replace(/[.:]$/, ''));
    });
    cell.node.querySelectorAll('.myst .myst-proof, .myst aside, .myst details')
      .forEach(el => {
        const line = (el.innerText || '').trim().split('\n')[0];
        const m = line.match(/^Exercise\s+\S+/);
        if (m) out.exercises.push(m[0].replace(/\u00a0/g, ' ').replace(/[.:]$/, ''));
      });
  });
  return out;
}
"""

# The book's numbers: Sphinx numbers figures and exercises within the page, in order.
FAST_PAGES = {"02_pass_at_k_vs_pass_hat_k", "05_the_gate"}


def _numbered_pages() -> list:
    pages = [p for p in sorted(NOTEBOOKS.glob("*.ipynb"))
             if any(_labels(json.loads(p.read_text(encoding="utf-8"))))]
    return [pytest.param(p, id=p.stem[:2], marks=() if p.stem in FAST_PAGES
                         else pytest.mark.slow) for p in pages]


@pytest.mark.parametrize("path", _numbered_pages())
def test_figures_and_exercises_numbered_as_in_the_book(path, jupyterlab_root, browser,
                                                       tmp_path):
    base_url, root_dir = jupyterlab_root
    number = lab_copy.page_number(path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    (root_dir / path.name).write_text(json.dumps(lab_copy.lab_copy(notebook, number)),
                                      encoding="utf-8")
    figures, exercises = _labels(notebook)
    want = {"figures": [f"Figure {number}.{i}" for i in range(1, len(figures) + 1)],
            "exercises": [f"Exercise {number}.{i}" for i in range(1, len(exercises) + 1)]}
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = watch(context, page)
    shot = tmp_path / f"{path.stem}.png"
    got: dict = {}
    try:
        jupyterlab._open(page, base_url, path.name)
        # jupyterlab-myst renders each cell, then numbers the whole notebook: wait for the
        # book's numbers, up to the tests' ceiling (then the assertion below says what
        # was drawn instead)
        started = time.monotonic()
        while time.monotonic() - started < CEILING_S:
            got = page.evaluate(_NUMBERS)
            if got["rendered"] and len(got["figures"]) >= len(figures) and len(
                    got["exercises"]) >= len(exercises) and got["figures"] == want["figures"]:
                break
            page.wait_for_timeout(500)
        page.screenshot(path=str(shot), full_page=True)
        # the first figure caption and exercise as drawn, for a reader of the test's output
        for what, css in (("figure", ".jp-Notebook .myst figure"),
                          ("exercise", ".jp-Notebook .myst .myst-proof")):
            found = page.locator(f"{css} >> visible=true")
            if found.count():
                found.first.screenshot(path=str(tmp_path / f"{path.stem}-{what}.png"))
    finally:
        print(f"screenshot: {shot}")
        close_lab_page(context, page)
    got = {k: got.get(k) for k in want}
    assert got == want, f"{path.name} in JupyterLab (screenshot {shot})"
    assert not seen.outside, f"requests that left 127.0.0.1: {sorted(set(seen.outside))}"


@pytest.fixture(scope="module")
def jupyterlab_root(tmp_path_factory):
    """A JupyterLab server (as tests/test_jupyterlab_widgets.py starts one) on a temporary
    root; yields ``(base_url, root_dir)``."""
    base = tmp_path_factory.mktemp("lab-numbering")
    root_dir = base / "root"
    root_dir.mkdir()
    env = jupyterlab._lab_dirs(base)
    port = jupyterlab._free_port()
    cmd = [sys.executable, "-m", "jupyterlab", *jupyterlab._server_options(base, port),
           f"--ServerApp.root_dir={root_dir}"]
    with jupyterlab._serve(cmd, root_dir, env, port, base / "server.log") as base_url:
        yield base_url, root_dir
