"""Each page's parameter changed in JupyterLab, pages 1 to 5.

The pages of ``test_jupyterlab_widgets.CHANGED_PARAMETERS`` are split over two files
(``test_lab_parameters_a.py`` and ``_b.py``) so that, with one test file to a worker, their
JupyterLab sessions run on both cores; each file starts its own JupyterLab
(``lab_server``) from the session code in ``test_jupyterlab_widgets.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "jupyterlab_session", Path(__file__).with_name("test_jupyterlab_widgets.py"))
lab = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(lab)
lab_server = lab.lab_server
pytestmark = lab.pytestmark

PAGES = [c for c in lab.CHANGED_PARAMETERS if c[0][:2] in {"01", "02", "04", "05"}]


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


