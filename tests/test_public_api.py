"""The curated surface: ``passk.__all__``'s objects name the path users import them from.

As httpx's do (its ``__init__.py`` sets ``__module__ = "httpx"`` on each name of its
``__all__``): checked against Python's own machinery (``importlib``, ``pickle``,
``doctest``), never against passk's table alone.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from patience import CEILING_S  # the tests' one ceiling on a wait

import passk
from passk._public import defined_in

ROOT = Path(__file__).resolve().parents[1]


def _published() -> list[tuple[str, object]]:
    """passk.__all__'s classes and functions (constants such as CI_METHODS have no module)."""
    out = [(name, getattr(passk, name)) for name in passk.__all__]
    return [(n, o) for n, o in out if isinstance(o, type) or inspect.isfunction(o)]


def test_every_public_object_names_passk_and_resolves_there():
    published = _published()
    assert len(published) >= 40  # the surface is not empty by accident
    for name, obj in published:
        assert obj.__name__ == name, name  # no alias in the surface
        assert obj.__module__ == "passk", f"{name}.__module__ is {obj.__module__!r}"
        assert getattr(importlib.import_module(obj.__module__), obj.__qualname__) is obj, name
        # where it is written is kept: the owner module holds the same object
        home = defined_in(obj)
        assert home == f"passk.{passk._OWNER[name]}", name
        assert getattr(importlib.import_module(home), name) is obj, name


def _packages() -> list[str]:
    """passk and its subpackages: the paths users import from (``passk.results``, ...)."""
    return ["passk"] + [m.name for m in pkgutil.walk_packages(passk.__path__, "passk.")
                        if m.ispkg]


def test_every_package_all_resolves_through_dunder_module():
    """In passk and each subpackage, each ``__all__`` object's ``__module__`` is a path it is
    importable from (``passk.results.ResultsError`` names ``passk.results``)."""
    checked = 0
    for modname in _packages():
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if not (isinstance(obj, type) or inspect.isfunction(obj)) or (
                    "<locals>" in obj.__qualname__):  # made by a factory (an option's type)
                continue
            found = importlib.import_module(obj.__module__)
            for part in obj.__qualname__.split("."):
                found = getattr(found, part)
            assert found is obj, f"{modname}.{name}: {obj.__module__}.{obj.__qualname__}"
            checked += 1
    assert checked > 60


def test_dunder_module_does_not_depend_on_what_is_imported_first():
    """A fresh interpreter that imports every owner module before touching ``passk.X``."""
    owners = sorted({f"passk.{m}" for m in passk._OWNER.values()})
    code = "\n".join([
        "import importlib, inspect",
        f"mods = [importlib.import_module(m) for m in {owners!r}]",
        "import passk",
        "bad = []",
        "for name, owner in passk._OWNER.items():",
        "    obj = vars(importlib.import_module('passk.' + owner))[name]",
        "    if (isinstance(obj, type) or inspect.isfunction(obj)) and obj.__module__ != 'passk':",
        "        bad.append(name)",
        "    if name in vars(passk):",  # nothing went through passk.__getattr__
        "        bad.append('cached ' + name)",
        "assert not bad, bad",
    ])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=CEILING_S, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr


def test_doctests_are_collected_where_they_are_written():
    """doctest's finder skips an object whose ``__module__`` is another module; the root
    conftest.py makes it take each published object in the module that defines it, and
    in no other (not passk/__init__.py, where it is cached after first use)."""
    finder = doctest.DocTestFinder()
    with_examples = [(n, o) for n, o in _published() if ">>>" in (o.__doc__ or "")]
    assert len(with_examples) >= 25
    for name, obj in with_examples:
        home = importlib.import_module(defined_in(obj) or "")
        found = {t.name for t in finder.find(home) if t.examples}
        assert f"{home.__name__}.{obj.__qualname__}" in found, name
    for name, _ in _published():
        getattr(passk, name)  # cached in passk's globals, as after any use
    assert [t.name for t in finder.find(passk) if t.examples] == []
    # methods of a published class are still found with it
    stability = importlib.import_module("passk.stability")
    names = {t.name for t in finder.find(stability) if t.examples}
    assert "passk.stability.GateResult.verdict" in names


def _examples() -> list[object]:
    from passk.adapter import InfrastructureError, RunResult, Task, ToolCall
    from passk.metrics import ConfidenceInterval
    from passk.repeats import RepeatRun
    from passk.results.counts import Run, results_from_runs
    from passk.stability import RepeatPolicy, reliability_gate, suite_report
    from passk.stats.suite_interval import mean_pass_hat_k_ci

    task = Task("t1", "read-only", {"q": 1})
    run = RunResult(True, 0.5, (ToolCall("search", {"q": "x"}, 0.1),), 1)
    report = suite_report(["a", "b"], [3, 2], [4, 4], k=2)
    return [
        ConfidenceInterval(0.1, 0.9), task, run, RepeatRun(task, (run, run)),
        InfrastructureError("down"), RepeatPolicy(),
        report, report.tasks[0], reliability_gate(report.tasks),
        mean_pass_hat_k_ci([3, 2, 4], [4, 4, 4], 2),
        results_from_runs([Run("a", True, t) for t in range(3)]),
    ]


def test_public_objects_pickle_by_the_passk_path_and_load_in_a_fresh_interpreter():
    objs = _examples()
    data = pickle.dumps(objs)
    assert b"passk.metrics" not in data and b"passk.stability" not in data  # by passk.X
    again = pickle.loads(data)
    assert [type(o) for o in again] == [type(o) for o in objs]
    assert repr(again[:8]) == repr(objs[:8])
    # a fresh interpreter: the classes load through passk's lazy attributes
    code = ("import pickle, sys\nobjs = pickle.loads(sys.stdin.buffer.read())\n"
            "print([type(o).__module__ + '.' + type(o).__name__ for o in objs])")
    proc = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                          timeout=CEILING_S, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr.decode()
    names = proc.stdout.decode()
    for cls in ("ConfidenceInterval", "Task", "SuiteReport", "GateResult", "Results",
                "SuiteInterval"):
        assert f"'passk.{cls}'" in names, names
    r = again[-1]
    assert r.task_ids == objs[-1].task_ids and r.successes.tolist() == [3]


@pytest.mark.parametrize("name", ["SuiteRun", "GateResult", "Results"])
def test_repr_of_the_class_names_the_public_path(name):
    assert repr(getattr(passk, name)) == f"<class 'passk.{name}'>"


def test_public_classes_and_functions_pickle_by_reference():
    every = [obj for _, obj in _published()]
    assert pickle.loads(pickle.dumps(every)) == every  # each found again as passk.NAME
    assert b"passk.stats" not in pickle.dumps(every)
