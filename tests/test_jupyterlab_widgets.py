"""The README's promise, checked for real: in JupyterLab the sliders redraw live.

``pip install -e '.[notebooks]'`` then ``jupyter lab notebooks/``: every notebook with
an ``ipywidgets.interact(...)`` cell is opened in a real JupyterLab server and a real
(headless) Chromium, all of its cells are run, and for each interact widget the test

* waits for the live figure (an ``<img>`` whose ``src`` is a ``data:image/png`` URL),
* moves each of the widget's sliders in turn with the keyboard (focus the handle,
  press ArrowRight a few times),
* asserts after each move that the slider's readout moved and that the image ``src``
  changed, i.e. the kernel redrew the figure with different content (matplotlib's PNG
  output is deterministic, so a redraw that ignored the slider would not count).

It also asserts that no cell (and no widget output) holds an error or a traceback,
that "Run All" completed, and that the page needed nothing but ``127.0.0.1``: every
other request is recorded *and aborted*, so a widget manager that reaches for a CDN
fails here even on a machine with internet access.

The notebook is copied (outputs and saved widget state stripped, so nothing stale can
stand in for a live redraw) into a temporary root directory that the server serves;
the repository's notebooks are never written. JupyterLab's own network features are
switched off: no news (``LabApp.news_url=None`` and the announcements plugin disabled
in a temporary ``JUPYTER_CONFIG_DIR``), no update check (``NeverCheckForUpdate``),
settings and workspaces in temporary directories. The server runs in its own
process group, which is always killed at the end (kernels included).

Screenshots of each interact widget before and after each slider move are written to
the test's ``tmp_path`` (their paths are printed; run with ``-s`` to see them).

A fast companion test checks the other half of the promise without a browser: that
``pip install -e '.[notebooks]'`` *alone* provides every module the notebooks import
(the dependency closure of the extra, read from pyproject.toml, against the installed
distributions). In a development venv with every extra installed, the browser test
would pass even when the extra misses a package that only another extra brings in.

``test_prose_shows_its_numbers_in_jupyterlab`` opens a notebook with glued numbers as
a reader does (stored outputs, nothing run) and asserts that jupyterlab-myst drew the
prose: every number that ``scripts/sync_notebooks.py`` stored for a Markdown cell
appears in that cell's rendered text, no ``{glue``, ``{eval}`` or backtick role is
visible, and every machinery cell (tagged ``remove-cell``, ``remove-input``,
``hide-input``... in the book) has its code, and where the book drops them its outputs,
collapsed.

Skipped only when the ``notebooks`` extra is not installed
(``pip install -e '.[notebooks]'``). A missing Chromium or playwright is a failure:
this test needs ``/usr/bin/chromium`` (``apt-get install -y chromium``) and the
``playwright`` Python package; playwright's own browser download is never used.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import http.client
import importlib.metadata
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import pytest
from offline_browser import close_lab_page, watch
from patience import CEILING_MS, CEILING_S, too_long, wait_in_page, wait_until

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
# The distributions of pyproject's `notebooks` extra.
NOTEBOOKS_EXTRA = ("jupyterlab", "jupyterlab-myst", "ipywidgets", "matplotlib")
# Every wait (the server's start, Run All, a redraw, an autosave) is on its condition, up
# to the tests' one ceiling (tests/helpers/patience.py): a busy 2-core machine takes
# minutes where an idle one takes seconds, and a fixed limit made this test flaky.
ARROW_PRESSES = 5
# JupyterLab plugins that would reach the internet; disabled for the test server.
DISABLED_PLUGINS = {"@jupyterlab/apputils-extension:announcements": True}


def _missing_extra() -> list[str]:
    missing = []
    for dist in NOTEBOOKS_EXTRA:
        try:
            importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            missing.append(dist)
    return missing


_MISSING = _missing_extra()

pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"the `notebooks` extra is not installed (missing: {', '.join(_MISSING)}): "
    "pip install -e '.[notebooks]'",
)


def _interact_notebooks() -> list[Path]:
    """The notebooks with at least one ``interact(`` call in a code cell."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        if any(
            cell["cell_type"] == "code" and "interact(" in "".join(cell["source"])
            for cell in nb["cells"]
        ):
            found.append(path)
    return found


INTERACT_NOTEBOOKS = _interact_notebooks()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stripped_copy(src: Path, dest: Path) -> None:
    """``src`` without outputs, execution counts or saved widget state."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.get("metadata", {}).pop("widgets", None)
    dest.write_text(json.dumps(nb, indent=1), encoding="utf-8")


def _log_tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


# --------------------------------------------------------------------------- fixtures


def _lab_dirs(base: Path, autosave_s: int | None = None) -> dict[str, str]:
    """The throwaway directories of a test server under ``base`` (offline, every cell
    rendered, autosave every ``autosave_s`` seconds when given) and the environment that
    points JupyterLab at them."""
    config_dir = base / "config"
    for d in (config_dir / "labconfig", base / "runtime", base / "ipython",
              base / "data", base / "settings", base / "workspaces"):
        d.mkdir(parents=True)
    # disabledExtensions in page_config.json is how `jupyter labextension disable`
    # records a disabled plugin; here it lives in a throwaway JUPYTER_CONFIG_DIR.
    (config_dir / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": DISABLED_PLUGINS}), encoding="utf-8"
    )
    # Render every cell, not only those scrolled into view (JupyterLab 4 virtualises the
    # notebook by default), so that the prose test sees every Markdown cell.
    tracker = base / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}), encoding="utf-8"
    )
    if autosave_s is not None:  # JupyterLab's default is every 120 s
        docmanager = base / "settings" / "@jupyterlab" / "docmanager-extension"
        docmanager.mkdir(parents=True)
        (docmanager / "plugin.jupyterlab-settings").write_text(
            json.dumps({"autosave": True, "autosaveInterval": autosave_s}), encoding="utf-8"
        )
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "JUPYTER_TOKEN")}
    env.update(
        JUPYTER_CONFIG_DIR=str(config_dir),
        JUPYTER_RUNTIME_DIR=str(base / "runtime"),
        JUPYTER_DATA_DIR=str(base / "data"),
        IPYTHONDIR=str(base / "ipython"),
        JUPYTER_PLATFORM_DIRS="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONUNBUFFERED="1",
    )
    return env


def _server_options(base: Path, port: int) -> list[str]:
    """``jupyter lab`` options of a test server: 127.0.0.1, no token, nothing online."""
    return [
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.allow_root=True",
        "--ServerApp.open_browser=False",
        "--ServerApp.disable_check_xsrf=True",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        f"--LabApp.user_settings_dir={base / 'settings'}",
        f"--LabApp.workspaces_dir={base / 'workspaces'}",
    ]


@contextlib.contextmanager
def _serve(cmd: list[str], cwd: Path, env: dict[str, str], port: int, log_path: Path):
    """Start ``cmd`` (a JupyterLab server on ``port``) in its own process group, wait
    until it answers, yield its base URL; always kill it, with its kernels, at the end."""
    base_url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def answers() -> str | None:
        if proc.poll() is not None:
            return "exited"
        try:  # one attempt; a slow answer is asked again
            with urllib.request.urlopen(f"{base_url}/api/status", timeout=10) as resp:
                return "up" if resp.status == 200 else None
        except (urllib.error.URLError, OSError):
            return None

    try:
        try:
            state = wait_until(answers, f"jupyter lab to answer on {base_url}/api/status")
        except pytest.fail.Exception as exc:
            pytest.fail(f"{exc}\nlog:\n{_log_tail(log_path)}", pytrace=False)
        if state == "exited":
            pytest.fail(
                f"jupyter lab exited with code {proc.returncode} before serving.\n"
                f"command: {' '.join(cmd)}\nlog:\n{_log_tail(log_path)}",
                pytrace=False,
            )
        yield base_url
    finally:
        # The server runs in its own session: its process group holds the kernels too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=CEILING_S)  # killed: it ends; a busy machine only delays that


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """A JupyterLab server on 127.0.0.1 (no token, no browser, offline), serving a
    temporary root directory; yields ``(base_url, root_dir, log_path)``. Always
    killed, with its kernels, at the end."""
    base = tmp_path_factory.mktemp("jupyterlab")
    root_dir = base / "root"
    root_dir.mkdir()
    for rel in ("book", "examples", "locales"):  # what ../book/data, ../examples, ../locales reach
        (base / rel).symlink_to(ROOT / rel, target_is_directory=True)
    env = _lab_dirs(base)
    port = _free_port()
    cmd = [sys.executable, "-m", "jupyterlab", *_server_options(base, port),
           f"--ServerApp.root_dir={root_dir}"]
    log_path = base / "server.log"
    with _serve(cmd, root_dir, env, port, log_path) as base_url:
        yield base_url, root_dir, log_path


# ------------------------------------------------------------------------------ helpers

# Resolves once the notebook panel is current, its session ready and the kernel idle.
# The lab server restores the tabs earlier tests opened, and the current widget may be one
# of them for a while: wait until it is the notebook just opened.
_CURRENT_IS = r"""
(name) => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  return !!(w && w.context && w.context.path.endsWith(name));
}
"""

_WAIT_READY = """
() => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return false;
  const w = app.shell.currentWidget;
  if (!w || !w.content || !w.sessionContext) return false;
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle' && w.content.widgets.length > 0;
}
"""

# Run All, after clearing every Markdown cell's stored {eval} results (jupyterlab-myst
# computes them again when Run All reaches the cell, and _PROSE_DRAWN waits for them: no
# stored number can stand in for a recomputed one).
_RUN_ALL = """
(ms) => {
  const w = window.jupyterapp.shell.currentWidget;
  w.content.widgets.forEach(cell => {
    if (cell.model.type === 'markdown' && cell.model.getMetadata('user_expressions')) {
      cell.model.deleteMetadata('user_expressions');
    }
  });
  return Promise.race([
    window.jupyterapp.commands.execute('notebook:run-all-cells'),
    new Promise(done => setTimeout(() => done('timeout'), ms)),
  ]);
}
"""

_KERNEL_IDLE = """
() => {
  const w = window.jupyterapp.shell.currentWidget;
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  return !!kernel && kernel.status === 'idle';
}
"""

# Every error output in the notebook's model, plus any rendered traceback or error
# text anywhere on the page (that covers outputs captured inside widget Output areas).
_ERRORS = r"""
() => {
  const w = window.jupyterapp.shell.currentWidget;
  const errors = [];
  w.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    const outputs = cell.model.outputs.toJSON();
    for (const o of outputs) {
      if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
    }
    if (cell.model.executionCount === null) errors.push(`cell ${i}: not executed`);
  });
  document.querySelectorAll('[data-mime-type="application/vnd.jupyter.stderr"]')
    .forEach(el => {
      const text = el.textContent || '';
      if (/Traceback|Error\b|Exception\b/.test(text)) {
        errors.push('rendered: ' + text.slice(0, 400));
      }
    });
  return errors;
}
"""

_IMG_SRC = """
(i) => {
  const box = document.querySelectorAll('.jp-Notebook .widget-interact')[i];
  if (!box) return null;
  const img = box.querySelector('.jp-OutputArea-output img');
  return img ? img.getAttribute('src') : null;
}
"""


def _unresolved_figure_reference(console_error: str) -> bool:
    """jupyterlab-myst's log line for a reference it cannot resolve: it renders each
    Markdown cell, and a figure labelled in a code cell's metadata (``mystnb.figure``,
    for the book) is unknown to it, so it logs "Cross reference target was not found"
    and shows the label. Not an error in the page: the book resolves these."""
    return ("Cross reference target was not found" in console_error
            and "/jupyterlab-myst/" in console_error)


def _short(src: str | None) -> str:
    if src is None:
        return "None"
    return f"{src[:40]}...({len(src)} chars)"


def _open(page, base_url: str, name: str) -> None:
    """Open ``name`` in the lab; wait until it is the current tab and its kernel idle."""
    page.goto(f"{base_url}/lab/tree/{name}", wait_until="domcontentloaded")
    wait_in_page(page, _CURRENT_IS, f"JupyterLab to show {name} as its current tab", arg=name)
    wait_in_page(page, _WAIT_READY, f"{name}'s kernel to start and be idle")


def _run_all(page, name: str) -> object:
    """Run All in ``name`` (open, current) and wait until every cell has run and the
    kernel is idle; returns the command's answer (``True`` when every cell succeeded).
    The command's promise resolves once all the cells have run; it is raced against the
    ceiling so that a hung kernel cannot hang pytest."""
    started = time.monotonic()
    ok = page.evaluate(_RUN_ALL, CEILING_MS)
    if ok == "timeout":
        pytest.fail(too_long(f"Run All of {name} to finish", started), pytrace=False)
    wait_in_page(page, _KERNEL_IDLE, f"{name}'s kernel to be idle after Run All")
    return ok


def _check_notebook(page, base_url: str, name: str, shots: Path) -> list[str]:
    """Run all cells of ``name``, move every slider of every interact widget, and
    return what moved (``"interact 0 p: 0.90 -> 0.95"``, ...)."""
    moved: list[str] = []
    _open(page, base_url, name)
    ok = _run_all(page, name)
    errors = page.evaluate(_ERRORS)
    assert ok is True and not errors, f"{name}: Run All did not complete cleanly: {errors}"

    boxes = page.locator(".jp-Notebook .widget-interact")
    count = boxes.count()
    assert count > 0, f"{name}: no interact widget was rendered (is the widget manager loaded?)"

    stem = Path(name).stem
    for i in range(count):
        box = boxes.nth(i)
        box.scroll_into_view_if_needed()
        wait_in_page(
            page, "(i) => { const s = (" + _IMG_SRC + ")(i);"
            " return !!s && s.startsWith('data:image/png'); }",
            f"{name}: interact {i}'s live figure", arg=i,
        )
        box.screenshot(path=str(shots / f"{stem}-interact{i}-before.png"))
        sliders = box.locator(".widget-slider")
        assert sliders.count() > 0, f"{name}: interact {i} has no slider"
        # Move every slider of the widget in turn; each move must redraw the figure.
        for j in range(sliders.count()):
            slider = sliders.nth(j)
            label = slider.locator(".widget-label").first.inner_text().strip()
            readout = slider.locator(".widget-readout")
            readout_before = readout.inner_text()
            before = page.evaluate(_IMG_SRC, i)

            handle = slider.locator(".noUi-handle").first
            handle.focus()
            for _ in range(ARROW_PRESSES):
                handle.press("ArrowRight")
            wait_in_page(
                page, "([i, before]) => { const s = (" + _IMG_SRC + ")(i);"
                " return !!s && s.startsWith('data:image/png') && s !== before; }",
                f"{name}: interact {i}: the figure redrawn after moving slider {label!r} "
                f"from {readout_before} (image before {_short(before)})", arg=[i, before],
            )
            wait_in_page(page, _KERNEL_IDLE, f"{name}'s kernel to be idle after the redraw")
            # let the last of the continuous updates land before comparing
            page.wait_for_timeout(300)
            after = page.evaluate(_IMG_SRC, i)
            readout_after = readout.inner_text()
            tag = "".join(c if c.isalnum() else "_" for c in label) or str(j)
            box.screenshot(path=str(shots / f"{stem}-interact{i}-after-{j}-{tag}.png"))

            assert readout_after != readout_before, (
                f"{name}: interact {i}: slider {label!r} readout stayed at "
                f"{readout_before!r} after {ARROW_PRESSES} ArrowRight presses"
            )
            assert after and after.startswith("data:image/png") and after != before, (
                f"{name}: interact {i}: moving slider {label!r} did not redraw the figure "
                f"(before {_short(before)}, after {_short(after)})"
            )
            moved.append(f"interact {i} {label}: {readout_before} -> {readout_after}")

    errors = page.evaluate(_ERRORS)
    assert not errors, f"{name}: errors after moving the sliders: {errors}"
    return moved


def _extra_closure(extra: str) -> set[str]:
    """Canonical names of every installed distribution that ``pip install .[extra]``
    brings in (passk's own dependencies plus the extra's, transitively), read from
    pyproject.toml so that an edit there counts without reinstalling."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    stack = [Requirement(r) for r in project["dependencies"]]
    stack += [Requirement(r) for r in project["optional-dependencies"][extra]]
    seen: set[str] = set()
    while stack:
        req = stack.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        name = canonicalize_name(req.name)
        if name == canonicalize_name(project["name"]):  # a self-reference: passk-reliability[plot]
            for e in req.extras:
                stack += [Requirement(r) for r in project["optional-dependencies"][e]]
            continue
        try:
            dist = importlib.metadata.distribution(req.name)
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here: cannot follow it (pip check's job)
        key = name + "[" + ",".join(sorted(req.extras)) + "]"
        if key in seen:
            continue
        seen.add(key)
        for raw in dist.requires or []:
            sub = Requirement(raw)
            if sub.marker is None or any(
                sub.marker.evaluate({"extra": e}) for e in ("", *req.extras)
            ):
                sub.marker = None
                stack.append(sub)
    return {k.split("[")[0] for k in seen}


def _notebook_imports(path: Path) -> set[str]:
    """Top-level modules imported by the code cells of ``path`` (IPython syntax ok)."""
    from IPython.core.inputtransformer2 import TransformerManager

    transformer = TransformerManager()
    nb = json.loads(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse(transformer.transform_cell("".join(cell["source"])))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return modules


# ------------------------------------------------------------------------------ tests


def test_notebooks_extra_covers_every_notebook_import():
    """`pip install -e '.[notebooks]'` alone must be enough for `jupyter lab notebooks/`:
    every module a notebook imports comes from the standard library, passk, or a
    distribution in the extra's dependency closure. (A development venv with every
    extra would hide a gap here from the browser test below.)"""
    from packaging.utils import canonicalize_name

    closure = _extra_closure("notebooks")
    owners = importlib.metadata.packages_distributions()
    gaps = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for module in sorted(_notebook_imports(path)):
            if module in sys.stdlib_module_names or module == "passk":
                continue
            dists = {canonicalize_name(d) for d in owners.get(module, [])}
            if not dists & closure:
                where = sorted(dists) or "no installed distribution"
                gaps.append(f"{path.name}: import {module} (from {where})")
    assert not gaps, (
        "these notebook imports are not provided by the `notebooks` extra, so "
        "`pip install -e '.[notebooks]'` then `jupyter lab notebooks/` fails on them; "
        "add their distributions to [project.optional-dependencies] notebooks:\n  "
        + "\n  ".join(gaps)
    )


def test_some_notebook_has_sliders():
    assert INTERACT_NOTEBOOKS, "no notebook calls interact(...): the README's promise is moot"


@pytest.mark.slow
@pytest.mark.parametrize("notebook", INTERACT_NOTEBOOKS, ids=lambda p: p.stem)
def test_sliders_redraw_live_in_jupyterlab(notebook, lab_server, browser, tmp_path):
    base_url, root_dir, log_path = lab_server
    name = f"{notebook.stem}_live.ipynb"
    _stripped_copy(notebook, root_dir / name)

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = watch(context, page)
    try:
        moved = _check_notebook(page, base_url, name, tmp_path)
        print(f"{notebook.name}: redrawn after " + "; ".join(moved))
    except Exception:
        page.screenshot(path=str(tmp_path / "failure.png"), full_page=True)
        print(f"failure screenshot: {tmp_path / 'failure.png'}")
        print(f"server log tail:\n{_log_tail(log_path)}")
        raise
    finally:
        print(f"screenshots in {tmp_path}")
        # stop the kernel (best effort on the way out); the server's own teardown would too
        with contextlib.suppress(Exception):
            page.evaluate(
                "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext.shutdown()"
            )
        context.close()

    assert not seen.outside, ("requests that left 127.0.0.1 (all aborted): "
                              f"{sorted(set(seen.outside))}")
    assert not seen.page_errors, f"uncaught page errors: {seen.page_errors}"
    errors = [e for e in seen.console_errors if not _unresolved_figure_reference(e)]
    assert not errors, f"browser console errors: {errors}"


# Per cell, in notebook order: its type, its rendered Markdown text (markdown cells),
# and whether JupyterLab shows its input and outputs (code cells).
_CELLS = r"""
() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.content.widgets.map(cell => {
    const type = cell.model.type;
    const out = {type, rendered: null, inputHidden: cell.inputHidden,
                 outputHidden: type === 'code' ? cell.outputHidden : null,
                 editorVisible: false};
    if (type === 'markdown') {
      // jupyterlab-myst draws into div.myst (solutions as closed <details>: open them,
      // as a reader may); innerText leaves out the hidden editor
      cell.node.querySelectorAll('.myst details').forEach(d => { d.open = true; });
      out.rendered = cell.rendered && cell.node.querySelector('.myst')
        ? cell.node.querySelector('.jp-Cell-inputWrapper').innerText : null;
    }
    const editor = cell.node.querySelector('.jp-InputArea-editor');
    out.editorVisible = !!editor && editor.offsetParent !== null &&
                        editor.getBoundingClientRect().height > 0;
    return out;
  });
}
"""

# Every Markdown cell drawn by jupyterlab-myst, with the kernel idle, and every cell with
# {eval} roles holding their results (stored, or computed again by Run All) and showing
# them: none of its expressions' code (``glued("key")``, what jupyterlab-myst draws while
# a result is missing) is left in its text. The condition a fixed pause stood for.
_PROSE_DRAWN = r"""
() => {
  const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.content || !w.content.widgets.length || !w.sessionContext) return false;
  const kernel = w.sessionContext.session && w.sessionContext.session.kernel;
  if (!kernel || kernel.status !== 'idle') return false;
  return w.content.widgets.filter(c => c.model.type === 'markdown').every(c => {
    const myst = c.rendered && c.node.querySelector('.myst');
    if (!myst || myst.innerText.trim().length === 0) return false;
    if (!/\{eval\}`/.test(c.model.sharedModel.getSource())) return true;
    const results = c.model.getMetadata('user_expressions');
    if (!results || !results.length) return false;
    const text = myst.innerText;
    return results.every(r => !text.includes(r.expression));
  });
}
"""

GLUED_NOTEBOOK = NOTEBOOKS / "03_estimating_from_n_runs.ipynb"


@pytest.mark.slow
def test_prose_shows_its_numbers_in_jupyterlab(lab_server, browser, tmp_path):
    base_url, root_dir, _log_path = lab_server
    nb = json.loads(GLUED_NOTEBOOK.read_text(encoding="utf-8"))
    name = f"{GLUED_NOTEBOOK.stem}_prose.ipynb"
    (root_dir / name).write_text(json.dumps(nb), encoding="utf-8")
    expected = [
        [ast.literal_eval(e["result"]["data"]["text/plain"])
         for e in cell["metadata"].get("user_expressions", [])]
        for cell in nb["cells"]
    ]
    assert sum(map(len, expected)) >= 10, (
        f"{GLUED_NOTEBOOK.name} stores fewer than 10 numbers for its prose: run "
        "python scripts/sync_notebooks.py")

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = watch(context, page)
    try:
        _open(page, base_url, name)
        wait_in_page(page, _PROSE_DRAWN, f"{name}'s prose drawn with its stored numbers")
        cells = page.evaluate(_CELLS)
        page.screenshot(path=str(tmp_path / "prose.png"), full_page=True)
    finally:
        print(f"screenshot: {tmp_path / 'prose.png'}")
        close_lab_page(context, page)

    problems = []
    for i, (cell, source, numbers) in enumerate(zip(cells, nb["cells"], expected)):
        if cell["type"] == "markdown":
            text = cell["rendered"] or ""
            for raw in ("{glue", "{eval}", "# glue", "{ref}", "{numref}", "```"):
                if raw in text:
                    problems.append(f"cell {i}: {raw!r} is visible: {text[:160]!r}")
            missing = [n for n in numbers if n not in text]
            if missing:
                problems.append(f"cell {i}: numbers {missing} not in the rendered prose "
                                f"{text[:160]!r}")
        elif cell["type"] == "code":
            tags = set(source["metadata"].get("tags", []))
            hides_code = bool(tags & {"remove-cell", "remove-input", "hide-input"})
            hides_output = bool(tags & {"remove-cell", "remove-output", "hide-output"})
            if hides_code and (not cell["inputHidden"] or cell["editorVisible"]):
                problems.append(f"cell {i} (tags {sorted(tags)}): its code is shown")
            if hides_output and not cell["outputHidden"]:
                problems.append(f"cell {i} (tags {sorted(tags)}): its output is shown")
            if not hides_code and cell["inputHidden"]:
                problems.append(f"cell {i}: a cell the book shows has its code collapsed")
    assert not problems, (f"{GLUED_NOTEBOOK.name} in JupyterLab (screenshot "
                          f"{tmp_path / 'prose.png'}):\n  " + "\n  ".join(problems[:30]))
    assert not seen.outside, f"requests that left 127.0.0.1: {sorted(set(seen.outside))}"
    assert not seen.page_errors, f"uncaught page errors: {seen.page_errors}"


# The text of each Markdown cell as drawn, by cell index (solutions opened).
#: Whether Markdown cell ``index`` says every one of ``words`` (white space normalised).
_PROSE_SAYS = r"""
([indexes, words]) => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  let text = '';
  for (const index of indexes) {
    const myst = cells[index] && cells[index].node.querySelector('.myst');
    if (!myst) return false;
    text += ' ' + myst.innerText;
  }
  text = text.replace(/\s+/g, ' ');
  return words.every(w => text.includes(w));
}
"""

_MARKDOWN_TEXTS = r"""
() => {
  const w = window.jupyterapp.shell.currentWidget;
  return w.content.widgets.map(cell => {
    if (cell.model.type !== 'markdown') return null;
    cell.node.querySelectorAll('.myst details').forEach(d => { d.open = true; });
    const myst = cell.node.querySelector('.myst');
    return myst ? myst.innerText : null;
  });
}
"""

# Math that KaTeX could not draw (jupyterlab-myst shows the TeX in yellow or red, with
# the error as its title, e.g. "Undefined control sequence: \\E") and cross-references it could not resolve, anywhere in the notebook.
_UNDRAWN = r"""
() => {
  const out = [];
  const bad = ['.katex-error', 'span[title][class*="text-yellow-"]',
               'span[title][class*="text-red-"]'];
  document.querySelectorAll(bad.map(b => '.jp-Notebook .myst ' + b).join(', '))
    .forEach(el => out.push('undrawn: ' + (el.getAttribute('title') || '').slice(0, 80)));
  document.querySelectorAll('.jp-Notebook .myst').forEach(el => {
    const text = el.innerText || '';
    const m = text.match(/\u24d8\s*\S+|\bfig-\d\d-[a-z-]+/);
    if (m) out.push('reference: ' + m[0]);
  });
  return out;
}
"""

_SET_SOURCE = r"""
([i, source]) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  cell.model.sharedModel.setSource(source);
  return cell.model.sharedModel.getSource();
}
"""

PARAMETER_NOTEBOOK = NOTEBOOKS / "03_estimating_from_n_runs.ipynb"


def test_prose_follows_a_changed_parameter_in_jupyterlab(lab_server, browser, tmp_path):
    """Page 3 as a reader runs it: open it (stored numbers), change ``K = 5`` to
    ``K = 4`` in its set-up cell, Run All, and the prose shows the new numbers:
    the subset estimate C(10, 4)/C(12, 4) and the plug-in (10/12)^4, computed here with
    exact fractions, replace the stored C(10, 5)/C(12, 5) and (10/12)^5. Every number of
    the page is drawn (no ``⟨key⟩`` left, so the numbers before their glue cell were
    asked for after it ran), every formula renders and every figure reference resolves."""
    import math
    from fractions import Fraction

    base_url, root_dir, _log_path = lab_server
    nb = json.loads(PARAMETER_NOTEBOOK.read_text(encoding="utf-8"))
    name = f"{PARAMETER_NOTEBOOK.stem}_rerun.ipynb"
    (root_dir / name).write_text(json.dumps(nb), encoding="utf-8")
    setup = next(i for i, c in enumerate(nb["cells"])
                 if c["cell_type"] == "code" and "\nK = 5 " in "".join(c["source"]))
    prose = next(i for i, c in enumerate(nb["cells"])
                 if c["cell_type"] == "markdown" and 'glued("est_demo' in "".join(c["source"]))
    c, n = 10, 12  # the page's runbook task: 10 of 12 runs passed (asserted below)

    def shown(k):
        return (f"{float(Fraction(math.comb(c, k), math.comb(n, k))):.3f}",
                f"{float(Fraction(c, n) ** k):.3f}")

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = watch(context, page)
    started = time.monotonic()
    try:
        _open(page, base_url, name)
        wait_in_page(page, _PROSE_DRAWN, f"{name}'s prose drawn with its stored numbers")
        before = page.evaluate(_MARKDOWN_TEXTS)[prose]
        undrawn_before = page.evaluate(_UNDRAWN)

        source = "".join(nb["cells"][setup]["source"]).replace("\nK = 5 ", "\nK = 4 ", 1)
        assert page.evaluate(_SET_SOURCE, [setup, source]) == source
        ok = _run_all(page, name)
        wait_in_page(page, _PROSE_DRAWN, f"{name}'s prose drawn with the numbers Run All "
                     "computed (every Markdown cell's {eval} results back)")
        errors = page.evaluate(_ERRORS)
        texts = page.evaluate(_MARKDOWN_TEXTS)
        undrawn_after = page.evaluate(_UNDRAWN)
        page.screenshot(path=str(tmp_path / "rerun.png"), full_page=True)
    finally:
        print(f"screenshot: {tmp_path / 'rerun.png'}; "
              f"{time.monotonic() - started:.1f} s open to checked")
        close_lab_page(context, page)

    assert ok is True and not errors, f"Run All did not complete cleanly: {errors}"
    assert f"{c} of {n}" in " ".join(t for t in texts if t), "the page's task is not 10 of 12"
    for number in shown(5):
        assert number in before, f"stored prose lacks {number}: {before[:300]!r}"
    after = texts[prose]
    for old, new in zip(shown(5), shown(4)):
        assert new in after and old not in after, (
            f"after K = 4 and Run All the prose should show {new} instead of {old}: "
            f"{after[:400]!r}")
    pending = [f"cell {i}: {t[t.index(chr(0x27E8)):][:40]!r}"
               for i, t in enumerate(texts) if t and chr(0x27E8) in t]
    assert not pending, f"numbers not computed after Run All: {pending}"
    assert not undrawn_before and not undrawn_after, (
        f"formulas or references JupyterLab did not draw: {undrawn_before or undrawn_after}")
    assert not seen.outside, f"requests that left 127.0.0.1: {sorted(set(seen.outside))}"
    assert not seen.page_errors, f"uncaught page errors: {seen.page_errors}"


# ------------------------------------------------------- the lab never writes the book

LAB_NOTEBOOK = "01_searchrunbook_incident.ipynb"  # the quickest page to run
AUTOSAVE_S = 5
# JupyterLab stretches the interval to ten times the last save's duration (its
# SaveHandler), which on a loaded 2-core machine can reach minutes: the waits for a save
# go up to the ceiling.
# What scripts/lab.sh needs from a checkout: the notebooks, the files their relative
# paths reach, the .gitignore that leaves lab/ untracked, lab_copy.py with the toc it reads
# the page numbers from, and the Chinese catalogs its --zh copies are written from.
LAB_CHECKOUT = (".gitignore", "_toc.yml", "notebooks", "book/data", "examples", "scripts/lab.sh",
                "scripts/lab_copy.py", "scripts/zh_book.py", "locales/zh_CN")
READER_EDIT = "# edited by a reader, autosaved"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
         "-c", "commit.gpgsign=false", *args],
        check=True, capture_output=True, text=True,
    ).stdout


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _saved_cells(copy: Path, as_copied: str) -> list | None:
    """The cells of ``copy`` once a save has changed it (its digest is no longer
    ``as_copied``) and the save is whole: JupyterLab writes the file in place, so a read
    during a save can see it empty or cut short; that read waits for the next."""
    data = copy.read_bytes()
    if hashlib.sha256(data).hexdigest() == as_copied:
        return None
    try:
        return json.loads(data)["cells"]
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError):
        return None


def _keep_the_readers_version(page) -> None:
    """Answer JupyterLab's "File Changed ... has changed on disk" dialog as a reader
    keeping their work does ("Overwrite"). On a loaded machine a save of the lab's copy
    can outlast the autosave interval and JupyterLab asks; it is the lab's copy either
    way, and the test then checks that nothing tracked changed."""
    button = page.locator('dialog.jp-Dialog button:has-text("Overwrite")')
    if button.count():
        button.first.click()


def _checkout_for_the_lab(repo: Path) -> None:
    """A git repository holding what scripts/lab.sh needs, committed; its set-up step
    is a no-op and its .venv this test's environment (both already set up)."""
    for rel in LAB_CHECKOUT:
        src, dest = ROOT / rel, repo / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dest, ignore=shutil.ignore_patterns(
                "__pycache__", ".ipynb_checkpoints"))
        else:
            shutil.copy2(src, dest)
    (repo / "scripts" / "setup.sh").write_text(
        "#!/usr/bin/env bash\n# the test's environment is set up already\n", encoding="utf-8")
    (repo / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    _git(repo, "init", "-q")
    # a symlink is not a directory: the .gitignore's `.venv/` does not match it
    (repo / ".git" / "info" / "exclude").write_text(".venv\n", encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "the book")


def test_the_lab_never_writes_the_book(browser, tmp_path):
    """A reader's session the README's way, in a copy of the repository: `bash
    scripts/lab.sh` serves JupyterLab; the reader opens page 1 and runs every cell, and
    JupyterLab autosaves the new outputs (every 5 s here, into the working copy on disk);
    the reader edits a code cell and saves, and the test waits past one more autosave.
    Then ``git status`` is clean and every tracked notebook is byte for
    byte as committed; the server refuses to save outside its root (``../notebooks/``);
    a second `lab.sh` keeps the reader's copy and ``--fresh`` replaces it. The
    repository's own notebooks are untouched throughout."""
    repo, base = tmp_path / "repo", tmp_path / "lab-server"
    repo.mkdir()
    base.mkdir()
    _checkout_for_the_lab(repo)
    committed = {p.name: _digest(p) for p in (repo / "notebooks").glob("*.ipynb")}
    ours = {p.name: _digest(p) for p in NOTEBOOKS.glob("*.ipynb")}
    env = _lab_dirs(base, autosave_s=AUTOSAVE_S)
    port = _free_port()
    cmd = ["bash", str(repo / "scripts" / "lab.sh"), *_server_options(base, port)]
    copy = repo / "lab" / LAB_NOTEBOOK

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = watch(context, page)
    with _serve(cmd, repo, env, port, base / "server.log") as base_url:
        try:
            _open(page, base_url, LAB_NOTEBOOK)
            started = time.monotonic()
            as_copied = _digest(copy)   # the notebook with lab_copy.py's front matter
            ok = _run_all(page, LAB_NOTEBOOK)
            print(f"Run All: {time.monotonic() - started:.1f} s")
            assert ok is True, f"Run All of {LAB_NOTEBOOK} did not complete: {ok}"
            # autosave writes the fresh outputs into the working copy
            ran = time.monotonic()
            cells = wait_until(lambda: _saved_cells(copy, as_copied),
                               f"JupyterLab to autosave lab/{LAB_NOTEBOOK} after Run All "
                               f"(autosaveInterval {AUTOSAVE_S} s), the whole notebook",
                               poll_s=0.5, between=lambda: _keep_the_readers_version(page))
            print(f"autosaved {time.monotonic() - ran:.1f} s after Run All")
            code = next(i for i, c in enumerate(cells) if c["cell_type"] == "code"
                        and not c["metadata"].get("jupyter", {}).get("source_hidden"))
            # as a reader edits: click into the cell's editor, go to its end, paste a
            # line, and save (Ctrl+S; JupyterLab's own autosave may get there first)
            editor = page.locator(".jp-Notebook .jp-Cell").nth(code).locator(".cm-content")
            editor.scroll_into_view_if_needed()
            _keep_the_readers_version(page)
            editor.click()
            page.keyboard.press("Control+End")
            page.keyboard.insert_text("\n" + READER_EDIT)
            page.keyboard.press("Control+s")
            wait_until(lambda: READER_EDIT in copy.read_text(encoding="utf-8"),
                       f"the reader's edit to reach lab/{LAB_NOTEBOOK}",
                       poll_s=0.5, between=lambda: _keep_the_readers_version(page))
            page.wait_for_timeout(1_500 * AUTOSAVE_S)  # and past one more autosave
            _keep_the_readers_version(page)
            # a save aimed at the tracked notebook ("Save As ../notebooks/..."), sent as
            # is (a browser would normalise the "..")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CEILING_S)
            conn.request("PUT", f"/api/contents/../notebooks/{LAB_NOTEBOOK}",
                         body=json.dumps({"type": "file", "format": "text", "content": "x"}),
                         headers={"Content-Type": "application/json"})
            outside = conn.getresponse().status
            conn.close()
        finally:
            page.screenshot(path=str(tmp_path / "lab.png"), full_page=True)
            print(f"screenshot: {tmp_path / 'lab.png'}\nserver log tail:\n"
                  f"{_log_tail(base / 'server.log')}")
            close_lab_page(context, page)

    status = _git(repo, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"the lab session changed the checkout:\n{status}"
    now = {p.name: _digest(p) for p in (repo / "notebooks").glob("*.ipynb")}
    assert now == committed, "a tracked notebook changed"
    assert outside >= 400, f"the server saved outside lab/ (HTTP {outside})"
    assert {p.name: _digest(p) for p in NOTEBOOKS.glob("*.ipynb")} == ours
    assert not seen.page_errors, f"uncaught page errors: {seen.page_errors}"

    def lab(*args: str) -> None:
        subprocess.run(["bash", str(repo / "scripts" / "lab.sh"), *args, "--version"],
                       check=True, capture_output=True, env=env, timeout=CEILING_S)

    lab()
    assert READER_EDIT in copy.read_text(encoding="utf-8"), "lab.sh replaced a reader's copy"
    lab("--fresh")
    assert _digest(copy) == as_copied, "--fresh did not copy the notebook again"
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""


def _rerun_with_a_parameter(lab_server, browser, tmp_path, notebook: Path, old: str,
                            new: str, prose_id: str, nb: dict | None = None,
                            suffix: str = "param", until: Sequence[str] = (),
                            ) -> tuple[str, str, list[str]]:
    """Open ``notebook`` as a reader does (stored numbers), replace ``old`` by ``new``
    in the one code cell holding ``old``, Run All, and return the text of the Markdown
    cell ``prose_id`` (or of the cells whose ids it lists, space-separated, joined) as
    drawn before and after, and every problem seen (errors, numbers
    not computed, formulas or references not drawn, requests off the machine). ``nb``:
    the notebook to open instead of ``notebook``'s own (the Chinese edition's). ``until``:
    what the prose must come to say once Run All's {eval} results are back: on a busy
    machine they arrive one by one after the kernel is idle, so the wait is on them (up to
    the one ceiling), not on the first redraw."""
    base_url, root_dir, _log_path = lab_server
    if nb is None:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
    name = f"{notebook.stem}_{suffix}.ipynb"
    (root_dir / name).write_text(json.dumps(nb), encoding="utf-8")
    setups = [i for i, c in enumerate(nb["cells"])
              if c["cell_type"] == "code" and old in "".join(c["source"])]
    assert len(setups) == 1, f"{notebook.name}: {old!r} is in cells {setups}, not in one"
    prose = [next(i for i, c in enumerate(nb["cells"]) if c.get("id") == one)
             for one in prose_id.split()]
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    seen = watch(context, page)
    problems: list[str] = []
    try:
        _open(page, base_url, name)
        wait_in_page(page, _PROSE_DRAWN, f"{name}'s prose drawn with its stored numbers")
        before = " ".join(page.evaluate(_MARKDOWN_TEXTS)[i] or "" for i in prose)
        source = "".join(nb["cells"][setups[0]]["source"]).replace(old, new, 1)
        assert page.evaluate(_SET_SOURCE, [setups[0], source]) == source
        ok = _run_all(page, name)
        wait_in_page(page, _PROSE_DRAWN, f"{name}'s prose drawn with the numbers Run All "
                     "computed (every Markdown cell's {eval} results back)")
        if until:
            wait_in_page(page, _PROSE_SAYS, f"{name}'s prose cell {prose} to say {list(until)}",
                         [prose, list(until)])
        errors = page.evaluate(_ERRORS)
        texts = page.evaluate(_MARKDOWN_TEXTS)
        undrawn = page.evaluate(_UNDRAWN)
        page.screenshot(path=str(tmp_path / "param.png"), full_page=True)
    finally:
        print(f"screenshot: {tmp_path / 'param.png'}")
        close_lab_page(context, page)
    if ok is not True or errors:
        problems.append(f"Run All did not complete cleanly: {errors}")
    problems += [f"cell {i}: not computed: {t[t.index(chr(0x27E8)):][:40]!r}"
                 for i, t in enumerate(texts) if t and chr(0x27E8) in t]
    problems += [f"not drawn: {u}" for u in undrawn]
    if seen.outside:
        problems.append(f"requests that left 127.0.0.1: {sorted(set(seen.outside))}")
    if seen.page_errors:
        problems.append(f"uncaught page errors: {seen.page_errors}")
    return before, " ".join(texts[i] or "" for i in prose), problems


def _curves_numbers(p: str) -> list[str]:
    """Page 2's numbers at ``p``, by exact fractions: pass@2, pass^2, pass^5, pass^8."""
    from fractions import Fraction

    q = Fraction(p)
    return [f"{float(1 - (1 - q) ** 2):.2f}", f"{float(q ** 2):.2f}",
            f"{float(q ** 5):.2f}", f"{float(q ** 8):.2f}", f"{float(q):.0%}"]


def _gate_words(cap: str) -> list[str]:
    """Page 5 at cap ``cap``: every sentence of the page that depends on the cap, from
    exact fractions. The runbook task's flakiness 4 p (1 - p) at 10 of 12 (the chapter's
    count at ``DEMO_SEED``), its side of the cap and its ratio to it, and the dual gate's
    verdict (the mean, (C(10, 5)/C(12, 5) + 1 + 1)/3 = 0.773, clears the bar of 0.7 either
    way: the bar-only verdict is PASSED); how many of a high-risk write's 12 runs and of a
    read-only task's 5 may fail, f failures in n having flakiness 4 f (n - f) / n^2, and
    the fewest runs at which one failure stays within the cap; the summary's verdict."""
    import math
    from fractions import Fraction

    p, limit = Fraction(10, 12), Fraction(cap)
    flakiness = 4 * p * (1 - p)
    mean = (Fraction(math.comb(10, 5), math.comb(12, 5)) + 2) / 3
    assert mean > Fraction(7, 10)
    verdict = "PASSED" if flakiness <= limit else "BLOCKED"
    side = "within" if flakiness <= limit else "over"
    words = ("none", "one", "two", "three", "four", "five", "six")

    def most(n: int) -> str:
        return words[max(f for f in range(n // 2 + 1) if Fraction(4 * f * (n - f), n * n)
                         <= limit)]

    fewest = next(n for n in range(2, 41) if Fraction(4 * (n - 1), n * n) <= limit)
    return ["the verdict is PASSED.",
            (f"{float(flakiness):.3f}, {side} the cap of {cap} and "
             f"{float(flakiness / limit):.1f} times it"), f"verdict is {verdict}.",
            f"How strict is a cap of {cap}?", f"The answer: {most(12)} of them.",
            f"5 runs: {most(5)}.",   # no apostrophe: the lab may draw it curly
            f"= {fewest} runs on",
            f"Before the fix its verdict is {verdict} (flakiness {float(flakiness):.3f})"]


def _incident_words(cap: str) -> list[str]:
    """Page 1 with the gate's cap at ``cap``: the runbook task's 10 of 12 runs at
    ``DEMO_SEED`` (the chapter's count; the page asserts it in its prose), its flakiness
    4 p (1 - p) by exact fractions as a multiple of the cap, and the dual gate's verdict.
    The mean, (C(10, 5)/C(12, 5) + 1 + 1)/3 = 0.773, clears the bar of 0.7 either way,
    so the bar alone passes the suite and the cap alone decides."""
    import math
    from fractions import Fraction

    p = Fraction(10, 12)
    flakiness = 4 * p * (1 - p)
    mean = (Fraction(math.comb(10, 5), math.comb(12, 5)) + 2) / 3
    assert mean >= Fraction(7, 10)
    verdict = "PASSED" if flakiness <= Fraction(cap) else "BLOCKED"
    return [f"{float(flakiness / Fraction(cap)):.1f} times the gate", f"cap of {cap}.",
            "the verdict PASSED", f"verdict is {verdict}."]


def _flakiness_words(c: int, n: int) -> list[str]:
    """Page 4 with the chapter's task at ``c`` of ``n``: its failures (or passes, past
    half; or the flakiness one run the other way would give, at 0 or n) and its
    flakiness 4 p (1 - p), by exact fractions, in the words of each outcome's sentence."""
    from fractions import Fraction

    p = Fraction(c, n)
    flakiness = f"{float(4 * p * (1 - p)):.2f}"
    if n == 1:
        return ["ran once", "is 0 whether it passed or failed"]
    if n - c > 0 and 2 * (n - c) < n:
        return [f"failed only {n - c} of its {n} runs", f"flakiness is already {flakiness}"]
    if 2 * (n - c) == n:
        return [f"failed exactly half of its {n} runs", f"its flakiness is {flakiness}"]
    if 0 < c < n:
        return [f"passed only {c} of its {n} runs", f"flakiness is already {flakiness}"]
    one = Fraction(n - 1, n)
    return [f"never {'failed' if c == n else 'passed'} in its {n} runs",
            f"would make it {float(4 * one * (1 - one)):.2f}"]


def _honest_words(bar: str) -> list[str]:
    """Page 6 with the declared discovery-rate bar at ``bar``: the p95 measurement's
    discovery rate as the page stored it (the runs do not depend on the bar) against the
    bar, and the honest gate's verdict by its rule: a bar not met refuses."""
    from fractions import Fraction

    nb = json.loads((NOTEBOOKS / "06_trustworthy_numbers.ipynb").read_text(encoding="utf-8"))
    measured = next(
        "".join(v) for c in nb["cells"] for o in c.get("outputs", [])
        if o.get("metadata", {}).get("scrapbook", {}).get("name") == "fixed_discovery"
        for k, v in o["data"].items() if k.endswith("text/plain"))
    verdict = "PASSED" if Fraction(measured) >= Fraction(bar) else "REFUSED"
    return [f"{measured} against the bar of {bar}", f"verdict on it is {verdict}."]


def _plan_words(trials: int) -> list[str]:
    """Page 7 with at most ``trials`` trials a task: from tau-bench's records themselves
    (a success is a reward within 1e-6 of 1), whether any, some or all of the flaky tasks
    (passed and failed) could still be brought under the chapter's cap of 0.2 by straight
    passes with a pass^4 that clears the bar of 0.7 alone, and the most failures the cap
    allows, 4 f (n - f) <= 0.2 n^2, by exact fractions and binomial coefficients."""
    import math
    from collections import Counter
    from fractions import Fraction

    records = json.loads((ROOT / "book/data/tau-bench/gpt-4o-airline-rewards.json")
                         .read_text(encoding="utf-8"))
    wins = Counter()
    for r in records:
        wins[r["task_id"]] += abs(r["reward"] - 1) <= 1e-6
    runs = Counter(r["task_id"] for r in records)
    flaky = [(wins[t], runs[t]) for t in runs if 0 < wins[t] < runs[t]]
    cap, bar = Fraction(1, 5), Fraction(7, 10)
    most = max(f for f in range(trials // 2 + 1) if 4 * f * (trials - f) <= cap * trials**2)
    rescued = [(c, n) for c, n in flaky if n - c <= most and Fraction(
        math.comb(trials - (n - c), 4), math.comb(trials, 4)) >= bar]
    # the page says it in words, one branch per outcome (none, some, every one)
    rescue = ("No flaky task can be rescued" if not rescued else
              "Every flaky task could still be rescued" if len(rescued) == len(flaky) else
              "Some flaky tasks could still be rescued")
    stay = "never fails, or never passes" if most == 0 else f"fails at most {most} of them"
    return [rescue, f"with {trials} trials", f"only if it {stay}"]


def _epochs_words(epochs: int) -> list[str]:
    """Page 9 with ``epochs`` epochs a sample: its six samples (the simulator's three tasks
    in two versions, as the page builds them) times ``epochs``, every one scored."""
    scored = 3 * 2 * epochs
    return [f"The eval scored {scored} sample epochs", f"samples, {epochs} epochs each"]


def _fix_words(copies: int) -> list[str]:
    """Page 8 with ``copies`` instances of each simulator task: the paired t interval of the
    fix (scipy's ``ttest_rel``, the outside reference) and the verdict of the proved
    comparison, which the prose must follow (it changes from INCONCLUSIVE at 10 copies to
    BETTER at 40, where the t alone says BETTER at both)."""
    from dataclasses import replace

    import numpy as np
    from scipy import stats

    import passk
    from passk.flaky_adapter import EXPECTED_STATES, Grader
    from passk.metrics import estimate_pass_hat_k

    rng = np.random.default_rng(20250801)  # the page's SEED, its first draws
    kinds = passk.demo_tasks()
    tasks = [replace(t, task_id=f"{t.task_id}-{i}") for t in kinds for i in range(copies)]
    expected = {t.task_id: EXPECTED_STATES[t.task_id.rsplit("-", 1)[0]] for t in tasks}
    v1 = passk.OnCallSimulator(grader=Grader(expected))
    v2 = replace(v1, deterministic_sort=True, tie_break="priority")
    seeds = [int(s) for s in rng.integers(0, 2**31 - 1, size=3)]
    old = passk.evaluate_suite(v1, tasks, k=5, seed=seeds[0])
    new = passk.evaluate_suite(v2, tasks, k=5, seed=seeds[1])
    c_old, c_new = ([t.successes for t in r.tasks] for r in (old, new))
    n = [t.runs for t in old.tasks]
    h_old, h_new = (estimate_pass_hat_k(c, n, 5) for c in (c_old, c_new))
    ci = stats.ttest_rel(h_new, h_old).confidence_interval()
    proved = passk.compare_pass_hat_k(c_old, n, c_new, n, 5).verdict.upper()
    return [f"[{ci.low:+.3f}, {ci.high:+.3f}]", f"the verdict is {proved}."]


def _subset_words(k: int) -> list[str]:
    """Page 3's runbook task, 10 of 12 runs, at ``k``: the subset estimate C(10, k)/C(12, k)
    and the plug-in (10/12)^k, by exact fractions."""
    import math
    from fractions import Fraction

    return [f"{float(Fraction(math.comb(10, k), math.comb(12, k))):.3f}",
            f"{float(Fraction(10, 12) ** k):.3f}"]


def _prose_with(notebook: Path, key: str) -> str:
    """The id of the first Markdown cell of ``notebook`` that shows glued value ``key``."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return next(c["id"] for c in nb["cells"]
                if c["cell_type"] == "markdown" and f'glued("{key}' in "".join(c["source"]))


# (page, the edit in its set-up cell, the prose cell that must follow, its words at the
# page's value and at the reader's, each from an outside reference; a callable gives
# them when the test runs)
CHANGED_PARAMETERS = [
    ("01_searchrunbook_incident", "CRITERIA = DEFAULT_CRITERIA ",
     "CRITERIA = GateCriteria(max_flakiness=0.6) ", "4a688d12",
     _incident_words("0.2"), _incident_words("0.6")),
    # page 3's English run is test_prose_follows_a_changed_parameter_in_jupyterlab above;
    # this row is for its Chinese edition (tests/helpers/lab_pages.py)
    ("03_estimating_from_n_runs", "\nK = 5 ", "\nK = 4 ",
     _prose_with(PARAMETER_NOTEBOOK, "est_demo"), _subset_words(5), _subset_words(4)),
    ("02_pass_at_k_vs_pass_hat_k", "p = 0.9 ", "p = 0.8 ", "f29871e9",
     _curves_numbers("0.9"), _curves_numbers("0.8")),
    ("04_flakiness_and_its_sources", "c_chapter, n_chapter = 10, 12 ",
     "c_chapter, n_chapter = 11, 12 ", "8c339cbd",
     _flakiness_words(10, 12), _flakiness_words(11, 12)),
    ("05_the_gate", "CAP = 0.2 ", "CAP = 0.6 ", "e95e7c00 7663d65e 640de7ce",
     _gate_words("0.2"), _gate_words("0.6")),
    ("06_trustworthy_numbers", '{"discovery_rate": 0.75, "no_leak": 1.0}',
     '{"discovery_rate": 0.97, "no_leak": 1.0}', "1394c1f1",
     _honest_words("0.75"), _honest_words("0.97")),
    ("07_real_agents_real_runs", 'MAX_TRIALS = RepeatPolicy().runs_by_risk["high-risk-write"]',
     "MAX_TRIALS = 20", "7ca283ea", _plan_words(12), _plan_words(20)),
    ("09_inside_inspect_ai", "EPOCHS = 8 ", "EPOCHS = 12 ", "a3c1e7f0",
     _epochs_words(8), _epochs_words(12)),
    ("08_is_the_new_version_more_reliable", "COPIES = 10 ", "COPIES = 40 ", "8bd41110",
     lambda: _fix_words(10), lambda: _fix_words(40)),
]


# the parameter test of each page (tests/test_lab_parameters_a.py and _b.py run it, split
# so that their JupyterLab sessions run on both cores: tests/helpers/lab_pages.py)
PAGE_FIELDS = ("stem", "old", "new", "prose_id", "shown", "followed")


def check_page_follows(stem, old, new, prose_id, shown, followed, lab_server, browser,
                       tmp_path):
    """Each page with a parameter, as a reader runs it in JupyterLab: change the page's
    parameter, Run All, and the prose says what the new run computed (page 1: the verdict
    at a cap of 0.6, where the text once said the cap blocked "only because of its second
    condition"; page 2: the curves' numbers at p = 0.8, where a hidden cell once kept 0.9;
    page 4: the chapter's task at 11 of 12; page 5: the verdict at a cap of 0.6, PASSED,
    where the text once went on "too unpredictable to ship"; page 6: the p95 measurement
    refused under a bar of 0.97; page 7: flaky tasks that 20 trials could rescue, where
    the text once said none could be; page 8: the fix's paired t and the proved
    comparison's verdict with four times the tasks; page 9: the sample epochs of a 12-epoch eval)."""
    shown = shown() if callable(shown) else shown
    followed = followed() if callable(followed) else followed
    before, after, problems = _rerun_with_a_parameter(
        lab_server, browser, tmp_path, NOTEBOOKS / f"{stem}.ipynb", old, new, prose_id,
        until=followed)
    assert not problems, f"{stem}:\n  " + "\n  ".join(problems)
    assert all(w in " ".join(before.split()) for w in shown), (
        f"{stem}: the stored prose lacks {shown}: {before[:400]!r}")
    flat = " ".join(after.split())
    missing = [w for w in followed if w not in flat]
    assert not missing, f"{stem}: after {new.strip()!r} the prose lacks {missing}: {flat[:500]!r}"
