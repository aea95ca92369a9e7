"""Open every page of the built book in headless Chromium and check it works offline.

For each HTML page of ``_build/html`` (one parametrized test per page) this asserts:

* no console errors and no uncaught page errors;
* no HTTP error (status >= 400) for any resource the page loads;
* no request left the loopback host: the site is served from ``127.0.0.1`` and any
  other request is recorded *and aborted*, so a page that reaches for a CDN fails
  here even on a machine with internet access;
* every ``<img>`` has loaded (``complete`` and ``naturalWidth > 0``);
* MathJax has typeset: once ``MathJax.startup.promise`` resolves, every ``.math``
  element holds an ``mjx-container`` and no TeX error (``mjx-merror``) is shown.

A full-page screenshot of each page is written to ``_build/screenshots/<page>.png``.

If ``_build/html/index.html`` is missing, a module fixture builds the book first
with ``jupyter-book build . -W -n --keep-going``; a failed build fails every test
here (it never skips), without stopping the collection of other test modules.
The pages are listed without building: each toc entry, ``search.html`` and
``genindex.html``, plus any other page found in an existing build. It needs the ``playwright`` Python package and
Debian's Chromium at ``/usr/bin/chromium`` (``apt-get install -y chromium``);
playwright's own browser download is never used.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from offline_browser import watch

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
PAGE_TIMEOUT_MS = 60_000
# search.html and genindex.html are ordinary Sphinx pages and pass these checks,
# so they are tested too. index.html is only a redirect written by
# sphinx-external-toc to book/intro.html (tested under its own name), so skip it.
SKIP_PAGES = {"index.html"}
# Sphinx-generated folders that hold assets and sources, not pages.
NON_PAGE_DIRS = {"_static", "_sources", "_images", "_downloads"}


def _jupyter_book() -> list[str]:
    exe = Path(sys.executable).with_name("jupyter-book")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    pytest.fail(
        "jupyter-book is not installed: pip install -e '.[book]' "
        "(then build with `jupyter-book build . -W -n --keep-going`)",
        pytrace=False,
    )


def _build_book() -> None:
    cmd = [*_jupyter_book(), "build", ".", "-W", "-n", "--keep-going"]
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False
    )
    if proc.returncode != 0 or not (HTML / "index.html").exists():
        lines = (proc.stdout + "\n" + proc.stderr).splitlines()
        flagged = [
            line
            for line in lines
            if ("WARNING" in line or "ERROR" in line or "Error" in line)
            and "IPKernelApp" not in line
        ]
        pytest.fail(
            f"`{' '.join(cmd)}` failed (exit {proc.returncode}).\n"
            "Warnings/errors:\n" + "\n".join(flagged[-40:]) + "\n"
            "Last lines:\n" + "\n".join(lines[-25:]),
            pytrace=False,
        )


def _toc_files() -> list[str]:
    """Every document named in _toc.yml (root, chapters, sections, parts)."""
    import yaml

    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    files.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return files


def _pages() -> list[str]:
    """The pages to test, known without building: every toc entry, Sphinx's
    search and index pages, plus any other page an existing build holds."""
    pages = {f"{Path(f).with_suffix('').as_posix()}.html" for f in _toc_files()}
    pages |= {"search.html", "genindex.html"}
    if HTML.is_dir():
        for path in HTML.rglob("*.html"):
            rel = path.relative_to(HTML)
            if rel.parts[0] not in NON_PAGE_DIRS:
                pages.add(rel.as_posix())
    return sorted(pages - SKIP_PAGES)


PAGES = _pages()


# --------------------------------------------------------------------------- fixtures


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature from the base class
        pass


@pytest.fixture(scope="module")
def built_site() -> Path:
    """_build/html, built first if index.html is absent (a failed build fails
    every test of this module, with the build's last lines, and only once)."""
    if not (HTML / "index.html").exists():
        _build_book()
    return HTML


@pytest.fixture(scope="module")
def site_url(built_site):
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# ------------------------------------------------------------------------------ tests


def test_every_toc_entry_was_built(built_site):
    missing = [
        f
        for f in _toc_files()
        if not (built_site / f"{Path(f).with_suffix('').as_posix()}.html").exists()
    ]
    assert not missing, f"toc entries without a built page: {missing}"


_WAIT_FOR_IMAGES = """
async () => {
  await Promise.all(Array.from(document.images).map(img => img.complete ? null :
    new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done);
                          setTimeout(done, 10000); })));
  return Array.from(document.images)
    .filter(img => !(img.complete && img.naturalWidth > 0))
    .map(img => img.currentSrc || img.src || img.outerHTML.slice(0, 200));
}
"""

_MATH_STATE = r"""
async () => {
  // myst-parser restricts MathJax to these classes (mathjax3_config processHtmlClass).
  const mathElements = document.querySelectorAll('.math');
  const rawDelimiters = Array.from(
      document.querySelectorAll('.tex2jax_process, .mathjax_process, .output_area'))
    .some(el => /\\\(|\\\[/.test(el.innerHTML));
  const hasMath = mathElements.length > 0 || rawDelimiters;
  if (!hasMath) return {hasMath: false};
  const t0 = Date.now();
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() - t0 > 30000) return {hasMath: true, loaded: false};
    await new Promise(r => setTimeout(r, 50));
  }
  await MathJax.startup.promise;
  const untypeset = Array.from(mathElements)
    .filter(el => !el.querySelector('mjx-container'))
    .map(el => el.textContent.trim().slice(0, 80));
  const errors = Array.from(document.querySelectorAll('mjx-merror'))
    .map(el => (el.getAttribute('data-mjx-error') || el.textContent).slice(0, 120));
  return {
    hasMath: true, loaded: true,
    containers: document.querySelectorAll('mjx-container').length,
    untypeset, errors,
  };
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("page_path", PAGES)
def test_page_renders_offline(page_path, browser, site_url):
    assert (HTML / page_path).exists(), f"{page_path} was not built"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    seen = watch(context, page)
    http_errors: list[str] = []
    page.on(
        "response",
        lambda resp: http_errors.append(f"{resp.status} {resp.url}")
        if resp.status >= 400
        else None,
    )
    try:
        page.goto(f"{site_url}/{page_path}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
        broken_images = page.evaluate(_WAIT_FOR_IMAGES)
        math = page.evaluate(_MATH_STATE)
        shot = SCREENSHOTS / Path(page_path).with_suffix(".png")
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
    finally:
        context.close()

    problems = []
    if seen.console_errors:
        problems.append(f"console errors: {seen.console_errors}")
    if seen.page_errors:
        problems.append(f"page errors: {seen.page_errors}")
    if http_errors:
        problems.append(f"HTTP errors: {http_errors}")
    if seen.outside:
        problems.append(f"requests that left 127.0.0.1: {sorted(set(seen.outside))}")
    if broken_images:
        problems.append(f"images that did not load: {broken_images}")
    if math["hasMath"]:
        if not math["loaded"]:
            problems.append("page has math but MathJax never started")
        else:
            if math["containers"] == 0:
                problems.append("page has math but no mjx-container was rendered")
            if math["untypeset"]:
                problems.append(f"math left untypeset: {math['untypeset']}")
            if math["errors"]:
                problems.append(f"MathJax errors: {math['errors']}")
    assert not problems, f"{page_path}:\n  " + "\n  ".join(problems)
