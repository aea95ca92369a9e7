"""Each page's parameter changed in JupyterLab, pages 6 to 9, and page 1's Chinese edition.

The pages of ``test_jupyterlab_widgets.CHANGED_PARAMETERS`` are split over two files
(``test_lab_parameters_a.py`` and ``_b.py``) so that, with one test file to a worker, their
JupyterLab sessions run on both cores; each file starts its own JupyterLab
(``lab_server``) from the session code in ``test_jupyterlab_widgets.py``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "jupyterlab_session", Path(__file__).with_name("test_jupyterlab_widgets.py"))
lab = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(lab)
lab_server = lab.lab_server
pytestmark = lab.pytestmark

PAGES = [c for c in lab.CHANGED_PARAMETERS if c[0][:2] in {"06", "07", "08", "09"}]


@pytest.mark.parametrize(("stem", "old", "new", "prose_id", "shown", "followed"),
                         PAGES, ids=[c[0] for c in PAGES])
def test_each_page_follows_its_parameter(stem, old, new, prose_id, shown, followed,
                                         lab_server, browser, tmp_path):
    """Each page with a parameter, as a reader runs it in JupyterLab: change the page's
    parameter, Run All, and the prose says what the new run computed (page 1: the verdict
    at a cap of 0.6, where the text once said the cap blocked "only because of its second
    condition"; page 2: the curves' numbers at p = 0.8, where a hidden cell once kept 0.9;
    page 4: the chapter's task at 11 of 12; page 5: the verdict at a cap of 0.6, PASSED,
    where the text once went on "too unpredictable to ship"; page 6: the p95 measurement
    refused under a bar of 0.97; page 7: flaky tasks that 20 trials could rescue, where
    the text once said none could be; page 8: the fix's paired t and the proved
    comparison's verdict with four times the tasks; page 9: the epochs of a 12-epoch eval)."""
    shown = shown() if callable(shown) else shown
    followed = followed() if callable(followed) else followed
    before, after, problems = lab._rerun_with_a_parameter(
        lab_server, browser, tmp_path, lab.NOTEBOOKS / f"{stem}.ipynb", old, new, prose_id)
    assert not problems, f"{stem}:\n  " + "\n  ".join(problems)
    assert all(w in " ".join(before.split()) for w in shown), (
        f"{stem}: the stored prose lacks {shown}: {before[:400]!r}")
    flat = " ".join(after.split())
    missing = [w for w in followed if w not in flat]
    assert not missing, f"{stem}: after {new.strip()!r} the prose lacks {missing}: {flat[:500]!r}"



# the pages whose Chinese edition is also run in JupyterLab (the quickest: each run of a
# page in the lab costs about a minute on a loaded machine)
CHINESE_PARAMETERS = [c for c in lab.CHANGED_PARAMETERS
                      if c[0] in {"01_searchrunbook_incident"}]


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
    before, after, problems = lab._rerun_with_a_parameter(
        lab_server, browser, tmp_path, notebook, old, new, prose_id, nb=zh, suffix="zh")
    assert not problems, f"{stem} (zh):\n  " + "\n  ".join(problems)
    assert re.search(r"[\u4e00-\u9fff]", after), f"{stem}: the prose is not Chinese: {after!r}"
    flat = " ".join(after.split())
    for words, text in ((shown, " ".join(before.split())), (followed, flat)):
        numbers = [n for w in words for n in re.findall(r"\d+(?:\.\d+)?", w)]
        missing = [n for n in numbers if n not in text]
        assert not missing, f"{stem} (zh): the prose lacks {missing}: {text[:500]!r}"
