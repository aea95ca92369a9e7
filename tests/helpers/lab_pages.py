"""The pages' parameter tests, for the test files that split them over the cores.

``tests/test_jupyterlab_widgets.py`` holds the JupyterLab session (its ``lab_server``
fixture), the pages' parameters (``CHANGED_PARAMETERS``) and the check
(``check_page_follows``). With one test file to a worker (``--dist loadfile``), pages in
one file run one after another; ``page_test`` makes the parametrized test for some of
them, so that ``tests/test_lab_parameters_a.py`` and ``_b.py`` run on both cores, each
with a JupyterLab of its own.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "jupyterlab_session", Path(__file__).resolve().parents[1] / "test_jupyterlab_widgets.py")
lab = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(lab)


def page_test(*pages: str):
    """``test_each_page_follows_its_parameter`` for the pages numbered ``pages`` ("01")."""
    chosen = [c for c in lab.CHANGED_PARAMETERS if c[0][:2] in pages]

    @pytest.mark.parametrize(lab.PAGE_FIELDS, chosen, ids=[c[0] for c in chosen])
    def test_each_page_follows_its_parameter(stem, old, new, prose_id, shown, followed,
                                             lab_server, browser, tmp_path):
        lab.check_page_follows(stem, old, new, prose_id, shown, followed, lab_server,
                               browser, tmp_path)

    test_each_page_follows_its_parameter.__doc__ = lab.check_page_follows.__doc__
    return test_each_page_follows_its_parameter


def _script(name: str):
    """scripts/NAME.py as a module (once)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, lab.ROOT / "scripts" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def chinese_page_test(*pages: str):
    """``test_the_chinese_page_follows_its_parameter`` for the pages numbered ``pages``."""
    chosen = [c for c in lab.CHANGED_PARAMETERS if c[0][:2] in pages]

    @pytest.mark.parametrize(lab.PAGE_FIELDS, chosen, ids=[c[0] for c in chosen])
    def test_the_chinese_page_follows_its_parameter(stem, old, new, prose_id, shown,
                                                    followed, lab_server, browser,
                                                    tmp_path):
        """The Chinese working copy a reader opens (``scripts/lab.sh`` writes it with
        ``scripts/lab_copy.py --zh``: the Chinese edition's prose, and a first cell that
        draws the figures in Chinese), its glue roles made JupyterLab's {eval} roles by
        ``scripts/sync_notebooks.py`` as the English notebooks' are, run in JupyterLab with
        the page's change: its prose is Chinese and shows every number of the English
        words, before (stored) and after (computed at the reader's value)."""
        import nbformat

        lab_copy, sync_notebooks = _script("lab_copy"), _script("sync_notebooks")
        notebook = lab.NOTEBOOKS / f"{stem}.ipynb"
        zh = lab_copy.chinese_copy(notebook)
        zh = json.loads(nbformat.writes(sync_notebooks.sync(
            nbformat.reads(json.dumps(zh), as_version=4), stem)))
        shown_words = shown() if callable(shown) else shown
        words = followed() if callable(followed) else followed
        followed_numbers = [n for w in words for n in re.findall(r"\d+(?:\.\d+)?", w)]
        before, after, problems = lab._rerun_with_a_parameter(
            lab_server, browser, tmp_path, notebook, old, new, prose_id, nb=zh,
            suffix="zh", until=followed_numbers)
        assert not problems, f"{stem} (zh):\n  " + "\n  ".join(problems)
        assert re.search(r"[\u4e00-\u9fff]", after), f"{stem}: not Chinese: {after!r}"
        flat = " ".join(after.split())
        for given, text in ((shown_words, " ".join(before.split())), (words, flat)):
            numbers = [n for w in given for n in re.findall(r"\d+(?:\.\d+)?", w)]
            missing = [n for n in numbers if n not in text]
            assert not missing, f"{stem} (zh): the prose lacks {missing}: {text[:500]!r}"

    return test_the_chinese_page_follows_its_parameter
