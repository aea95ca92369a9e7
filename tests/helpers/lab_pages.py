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
