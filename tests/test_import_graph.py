"""No import circle anywhere in passk: every module's imports, read from its source.

Every ``import`` and ``from ... import`` statement counts, at module level or
inside a function (a lazy import closes a circle as surely, only later), except
those under ``if TYPE_CHECKING:``, which never run, and under
``if __name__ == "__main__":``, which run only in the module's copy ``python -m``
makes (``__main__``), never in the module other modules import.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "passk"


def _modules() -> dict[str, Path]:
    found = {}
    for f in PACKAGE.rglob("*.py"):
        parts = list(f.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = f
    return found


class _Imports(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
                isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
            for child in node.orelse:
                self.visit(child)
            return
        if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
                and test.left.id == "__name__" and len(test.comparators) == 1
                and isinstance(test.comparators[0], ast.Constant)
                and test.comparators[0].value == "__main__"):
            return  # python -m's copy of the module, not the module the others import
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append(node)


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)] if node.level else []
    target = ".".join(base + ([node.module] if node.module else []))
    return [target] + [f"{target}.{a.name}" for a in node.names]


def import_graph() -> dict[str, set[str]]:
    """Each passk module and the passk modules it imports."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        deps = set()
        for node in visitor.found:
            for target in _targets(name, path.name == "__init__.py", node):
                if target in modules and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), and self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_circle():
    # the checker itself, on a made-up graph: a -> b -> c -> a, and d alone
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    tree = ast.parse("from ..results.read import x\nif TYPE_CHECKING:\n    from ..cli import y\n"
                     "def f():\n    from .. import stability\n")
    visitor = _Imports()
    visitor.visit(tree)
    found = [t for n in visitor.found for t in _targets("passk.analysis.report", False, n)]
    assert "passk.results.read" in found and "passk.stability" in found
    assert "passk.cli.y" not in found


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    assert "passk.results.formats" in graph["passk.results.read"]  # module level
    assert "passk.analysis.report" in graph["passk.cli.commands"]  # inside a command function
    assert {"passk.results.counts", "passk.results.runlog"} <= set(graph)


def test_no_import_circle_in_passk():
    found = cycles(import_graph())
    assert found == [], "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_readers_import_no_other_reader_nor_io():
    graph = import_graph()
    readers = [m for m in graph if m.startswith("passk.results.formats.") and
               not m.startswith("passk.results.formats._")]
    assert len(readers) >= 5
    for reader in readers:
        assert "passk.results.read" not in graph[reader], reader
        others = {m for m in graph[reader] if m in readers}
        assert not others, f"{reader} imports {others}"


#: The flat layout's module names, which no longer exist: every module has one path.
GONE = ("io", "runlog", "formats", "protocol", "curtailment", "reporting", "planning", "diff",
        "runner", "tables", "pytest_plugin", "inspect", "options", "scenarios", "trajectory",
        "plots", "coverage", "compare")
_OLD_PATH = re.compile(r"(?<![\w.])passk\.(" + "|".join(GONE) + r")\b(?!\()")


def _tracked_text_files() -> list[Path]:
    root = PACKAGE.parent
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True,
                                text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # an sdist: no git
        listed = [str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()]
    out = []
    for name in listed:
        path = root / name
        if path.suffix in {".py", ".md", ".ipynb", ".yml", ".yaml", ".toml", ".txt", ".cfg",
                           ".sh", ".rst", ".json", ".jsonl", ".html", ".in"} and path.is_file():
            out.append(path)
    return out


def test_no_old_module_path_anywhere_in_the_repository():
    """The flat layout's module paths are gone: no file names them, in prose or code."""
    old = "from passk" + ".io import x"  # split, so that this file does not name it
    assert _OLD_PATH.search(old) and not _OLD_PATH.search("passk.results.read")
    hits = []
    for path in _tracked_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{path.relative_to(PACKAGE.parent)}: {m.group(0)}" for m in _OLD_PATH.finditer(text)]
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and node.module == "passk" and not node.level:
                    hits += [f"{path.name}: from passk import {a.name}"
                             for a in node.names if a.name in GONE]
    assert hits == [], "old module paths: " + "; ".join(hits[:20])


def test_no_import_hook_nor_alias_module():
    """No meta-path finder, and no module made to answer to a second name."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "sys.meta_path" not in text, path
        assert "sys.modules[" not in text, path
    assert not (PACKAGE / "compare.py").exists()
    import passk

    assert not hasattr(passk, "MOVED")
    for name in GONE:
        if name in passk._SUBMODULES:
            continue
        with pytest.raises(ImportError):
            importlib.import_module(f"passk.{name}")


def _trace_script():
    import importlib.util

    path = PACKAGE.parent / "benchmarks" / "trace_gate_call.py"
    spec = importlib.util.spec_from_file_location("trace_gate_call", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gate_call_reads_once_judges_once_and_never_climbs():
    """``passk gate NEW --baseline OLD`` followed call by call (benchmarks/trace_gate_call.py):
    both files read in one visit to the results layer, the verdict made once, in
    ``passk.gate.judge.judge`` (the dual gate run once), the baseline compared once, and no
    function calling into a layer above its own."""
    tr = _trace_script()
    calls, rc = tr.trace(tr.ARGV)
    assert rc == 1  # the fixtures' new version regressed: BLOCKED
    names = [f for _, _, f in calls]
    assert names.count("judge") == 1 and names.count("reliability_gate") == 1
    assert {b for _, b, f in calls if f == "judge"} == {"passk.gate.judge"}
    assert names.count("diff_results") == 1 and names.count("read_results") == 2
    assert {a for a, _, f in calls if f == "reliability_gate"} == {"passk.gate.judge"}
    path, _, _ = tr.timeline([tr.layer_of(m) for _, m, _ in calls])
    assert path.count("results") == 1, " -> ".join(path)  # NEW and OLD in one visit
    up = [(a, b, f) for a, b, f in calls if a and tr.rank(tr.layer_of(b)) < tr.rank(tr.layer_of(a))]
    assert up == []
    # the layers the trace uses are the contract's, top first
    assert tr.LAYERS[0] == ["integrations"] and ["cli"] in tr.LAYERS
