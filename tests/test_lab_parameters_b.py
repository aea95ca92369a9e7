"""Each page's parameter changed in JupyterLab: pages 6 to 9, and pages 1 and 5's Chinese editions
(pages 1, 2, 4 and 5 in ``test_lab_parameters_a.py``; see ``tests/helpers/lab_pages.py``)."""

from __future__ import annotations

import json
import sys

import pytest
from lab_pages import lab, page_test

lab_server = lab.lab_server
pytestmark = lab.pytestmark
test_each_page_follows_its_parameter = page_test("06", "07", "08", "09")


# the pages whose Chinese edition is also run in JupyterLab (the quickest: each run of a
# page in the lab costs about a minute on a loaded machine)
CHINESE_PARAMETERS = [c for c in lab.CHANGED_PARAMETERS
                      if c[0] in ("01_searchrunbook_incident", "05_the_gate")]


@pytest.mark.parametrize(("stem", "old", "new", "prose_id", "shown", "followed"),
                         CHINESE_PARAMETERS, ids=[c[0] for c in CHINESE_PARAMETERS])
def test_the_chinese_page_follows_its_parameter(stem, old, new, prose_id, shown, followed,
                                                lab_server, browser, tmp_path):
    """The Chinese edition's notebook (``scripts/zh_book.py``: the English notebook with
    its prose and captions from the catalog; its glue roles made JupyterLab's {eval} roles
    by ``scripts/sync_notebooks.py``, as the English notebooks are), run in JupyterLab with
    the same change: its prose is Chinese and shows every number of the English words at
    the reader's value, the glue roles of its catalog entry being those of the English."""
    import importlib.util
    import re

    import nbformat

    def script(name):
        spec = importlib.util.spec_from_file_location(name, lab.ROOT / "scripts" / f"{name}.py")
        module = sys.modules.setdefault(name, importlib.util.module_from_spec(spec))
        spec.loader.exec_module(module)
        return module

    zh_book, sync_notebooks = script("zh_book"), script("sync_notebooks")
    notebook = lab.NOTEBOOKS / f"{stem}.ipynb"
    zh = zh_book.chinese_notebook(f"notebooks/{stem}.ipynb", lab.ROOT, figures=False)
    zh = json.loads(nbformat.writes(sync_notebooks.sync(
        nbformat.reads(json.dumps(zh), as_version=4), stem)))
    words = followed() if callable(followed) else followed
    followed_numbers = [n for w in words for n in re.findall(r"\d+(?:\.\d+)?", w)]
    before, after, problems = lab._rerun_with_a_parameter(
        lab_server, browser, tmp_path, notebook, old, new, prose_id, nb=zh, suffix="zh",
        until=followed_numbers)
    assert not problems, f"{stem} (zh):\n  " + "\n  ".join(problems)
    assert re.search(r"[\u4e00-\u9fff]", after), f"{stem}: the prose is not Chinese: {after!r}"
    flat = " ".join(after.split())
    for words, text in ((shown, " ".join(before.split())), (followed, flat)):
        numbers = [n for w in words for n in re.findall(r"\d+(?:\.\d+)?", w)]
        missing = [n for n in numbers if n not in text]
        assert not missing, f"{stem} (zh): the prose lacks {missing}: {text[:500]!r}"
