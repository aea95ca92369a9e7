"""Open every page of the built book in headless Chromium and check what a reader sees.

For each HTML page of ``_build/html`` (one parametrized test per page) this asserts:

* no console errors and no uncaught page errors;
* no HTTP error (status >= 400) for any resource the page loads;
* no request left the loopback host: the site is served from ``127.0.0.1`` and any
  other request is recorded *and aborted*, so a page that reaches for a CDN fails
  here even on a machine with internet access;
* every ``<img>`` has loaded (``complete`` and ``naturalWidth > 0``);
* MathJax has typeset: once ``MathJax.startup.promise`` resolves, every ``.math``
  element holds an ``mjx-container``, and no formula holds a TeX error (``merror``)
  or an undefined macro (MathJax's ``noundefined`` draws ``\\E`` in red as an ``mtext``
  with ``mathcolor="red"``; both are found by walking MathJax's own internal MathML of
  every typeset formula, and in the DOM as ``mjx-merror`` or red text). The book's
  macros are defined in ``_config.yml`` (``mathjax3_config``);
* the text a reader sees outside code (folded cells and closed solutions included)
  holds no raw Markdown: no pipe-table row (``| a | b |``, ``|---|``), no code fence,
  no unrendered role or directive (``{glue:text}`x` ``, ``{ref}``, ``{exercise}``...);
  the definitions are in ``tests/helpers/book_page.py``, shared with
  ``scripts/page_metrics.py`` (``test_page_shows_no_raw_markdown``);
* the exercises a reader sees without opening anything are numbered without a gap
  (page N has Exercise N.1, N.2, ...), and no exercise sits inside a solution, whose
  dropdown would hide it (``test_exercises_numbered_and_outside_solutions``);
* exactly one search box is visible, at 1280 px and at 800 px wide (the theme shows a
  field in the sidebar on wide screens and an icon in the header on narrow ones).

Across pages:

* ``test_glossary_chinese_renders``: every Chinese character of the glossary (in
  ``book/intro.md``) renders as a real glyph. Each character is drawn on a canvas in the
  page's own font stack and language, and its pixels are compared with those of code
  points no font has (what Chromium draws when no installed font has a glyph, the
  "tofu" box): a missing glyph looks exactly like them, and all missing glyphs look
  alike. ``test_chinese_check_fails_without_a_cjk_font`` runs the same check in a
  Chromium that sees only the DejaVu fonts, and asserts that it fails there;
* ``test_undefined_macro_check_fails`` types an undefined macro into a page and asserts
  that the math check reports it;
* ``test_index_lists_the_glossary_terms``: ``genindex.html`` holds every English term of
  the glossary, and the intro links to it;
* ``test_no_code_block_scrolls``: at 1280 px, with every folded cell and solution
  opened, no ``pre`` in a page's article is wider than its box (no horizontal
  scrolling); the failure lists every page (blocks that scroll out of all blocks) and
  each block's longest line.

A full-page screenshot of each page is written to ``_build/screenshots/<page>.png``.

If ``_build/html/index.html`` is missing, a module fixture builds the book first
with ``jupyter-book build . -W -n --keep-going``; a failed build fails every test
here (it never skips), without stopping the collection of other test modules.
The pages are listed without building: each toc entry, ``search.html`` and
``genindex.html``, plus any other page found in an existing build. It needs the
``playwright`` Python package and Debian's Chromium at ``/usr/bin/chromium``
(``apt-get install -y chromium``, with ``fonts-noto-cjk`` for the glossary; both are
installed by ``scripts/setup.sh``); playwright's own browser download is never used.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from book_page import PAGE_READING, raw_markup
from offline_browser import CHROMIUM, CHROMIUM_ARGS, serve_directory, watch
from patience import CEILING_MS, launch

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "_build"
HTML = BUILD / "html"
SCREENSHOTS = BUILD / "screenshots"
# a page's load, its images and MathJax are waited for up to the tests' one ceiling
# (tests/helpers/patience.py), never a limit a busy machine can miss
PAGE_TIMEOUT_MS = CEILING_MS
VIEWPORT = {"width": 1280, "height": 900}
NARROW_VIEWPORT = {"width": 800, "height": 900}
INTRO = "book/intro.html"
DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
# search.html and genindex.html are ordinary Sphinx pages and pass these checks,
# so they are tested too. index.html is only a redirect written by
# sphinx-external-toc to book/intro.html (tested under its own name), so skip it.
SKIP_PAGES = {"index.html"}
# Sphinx-generated folders that hold assets and sources, not pages.
NON_PAGE_DIRS = {"_static", "_sources", "_images", "_downloads"}
# The Chinese edition (_build/html/zh/) has its own browser test, tests/test_book_zh.py.
NON_PAGE_DIRS |= {"zh"}


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
    """Every document named in _toc.yml (root, chapters, sections, parts): the walk the
    Chinese edition's script uses (scripts/zh_book.py)."""
    zh_book = sys.modules.get("zh_book")
    if zh_book is None:
        spec = importlib.util.spec_from_file_location("zh_book", ROOT / "scripts" / "zh_book.py")
        zh_book = sys.modules["zh_book"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(zh_book)
    return zh_book.toc_entries(ROOT)


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


@pytest.fixture(scope="module")
def built_site() -> Path:
    """_build/html, built first if index.html is absent (a failed build fails
    every test of this module, with the build's last lines, and only once)."""
    if not (HTML / "index.html").exists():
        _build_book()
    return HTML


@pytest.fixture(scope="module")
def site_url(built_site):
    with serve_directory(HTML) as url:
        yield url


# ------------------------------------------------------------------------------ tests


def test_every_toc_entry_was_built(built_site):
    missing = [
        f
        for f in _toc_files()
        if not (built_site / f"{Path(f).with_suffix('').as_posix()}.html").exists()
    ]
    assert not missing, f"toc entries without a built page: {missing}"


_WAIT_FOR_IMAGES = """
async (ms) => {
  await Promise.all(Array.from(document.images).map(img => img.complete ? null :
    new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done);
                          setTimeout(done, ms); })));
  return Array.from(document.images)
    .filter(img => !(img.complete && img.naturalWidth > 0))
    .map(img => img.currentSrc || img.src || img.outerHTML.slice(0, 200));
}
"""

_MATH_STATE = r"""
async (ms) => {
  // myst-parser restricts MathJax to these classes (mathjax3_config processHtmlClass).
  const mathElements = document.querySelectorAll('.math');
  const rawDelimiters = Array.from(
      document.querySelectorAll('.tex2jax_process, .mathjax_process, .output_area'))
    .some(el => /\\\(|\\\[/.test(el.innerHTML));
  const hasMath = mathElements.length > 0 || rawDelimiters;
  if (!hasMath) return {hasMath: false};
  const t0 = Date.now();
  while (!(window.MathJax && MathJax.startup && MathJax.startup.promise)) {
    if (Date.now() - t0 > ms) return {hasMath: true, loaded: false};
    await new Promise(r => setTimeout(r, 50));
  }
  await MathJax.startup.promise;
  const untypeset = Array.from(mathElements)
    .filter(el => !el.querySelector('mjx-container'))
    .map(el => el.textContent.trim().slice(0, 80));
  // MathJax's own MathML of every typeset formula: a TeX error is an merror node, an
  // undefined macro (the noundefined package) an mtext drawn in red.
  const errors = [];
  const text = node => node.isToken ? node.getText()
    : (node.childNodes || []).map(text).join('');
  for (const item of MathJax.startup.document.math) {
    item.root.walkTree(node => {
      if (node.isKind('merror')) {
        errors.push(`TeX error "${node.attributes.get('data-mjx-error') || text(node)}"` +
                    ` in ${String(item.math).slice(0, 80)}`);
      } else if (node.isKind('mtext') && node.attributes.get('mathcolor') === 'red') {
        errors.push(`undefined macro ${text(node)} in ${String(item.math).slice(0, 80)}`);
      }
    });
  }
  // The same seen in the page, should MathJax's internals change.
  const drawn = Array.from(document.querySelectorAll(
      'mjx-merror, mjx-container [style*="color: red"], mjx-container [mathcolor="red"]'));
  if (drawn.length && !errors.length) {
    errors.push(...drawn.map(el => `red or merror in ${el.closest('mjx-container')
      .querySelector('mjx-assistive-mml')?.textContent.slice(0, 80) ?? el.tagName}`));
  }
  return {
    hasMath: true, loaded: true,
    containers: document.querySelectorAll('mjx-container').length,
    untypeset, errors,
  };
}
"""

_INJECT_UNDEFINED_MACRO = r"""
async () => {
  await MathJax.startup.promise;
  const host = document.querySelector('article p');
  const el = document.createElement('span');
  el.className = 'math notranslate nohighlight';
  el.textContent = '\\(\\NoSuchMacro x + \\E[T]\\)';
  host.appendChild(el);
  await MathJax.typesetPromise([el]);
}
"""

# Visible search boxes outside the article (search.html has its own form in the article).
_SEARCH_BOXES = r"""
() => Array.from(document.querySelectorAll(
    '.search-button__button, form.bd-search, input[type=search], #searchbox'))
  .filter(el => !el.closest('article, .bd-search-container'))
  .filter(el => {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden';
  })
  .map(el => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')}`)
"""

# Every Han character in the article's tables, drawn in the page's own font stack and
# language, against code points that no font has (drawn as the same "tofu" box).
_CHINESE_GLYPHS = r"""
() => {
  const HAN = /[\u3400-\u9fff\uf900-\ufaff]/u;
  const cells = Array.from(document.querySelectorAll('article td, article th'))
    .filter(el => HAN.test(el.textContent));
  const chars = [...new Set(cells.flatMap(el => Array.from(el.textContent))
    .filter(c => HAN.test(c)))];
  if (!chars.length) return {chars: [], missing: [], distinct: 0};
  const holder = cells.map(el => el.querySelector('[lang]') || el)[0];
  const canvas = document.createElement('canvas');
  canvas.width = 48; canvas.height = 48;
  canvas.lang = holder.closest('[lang]') ? holder.closest('[lang]').lang : '';
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const fontFamily = getComputedStyle(holder).fontFamily;
  ctx.font = `32px ${fontFamily}`;
  ctx.textBaseline = 'top';
  const draw = ch => {   // a hash of the glyph's pixels, 0 when nothing is drawn
    ctx.clearRect(0, 0, 48, 48);
    ctx.fillText(ch, 4, 4);
    const a = ctx.getImageData(0, 0, 48, 48).data;
    let h = 2166136261, ink = 0;
    for (let i = 3; i < a.length; i += 4) {
      h = Math.imul(h ^ a[i], 16777619) >>> 0;
      ink += a[i] > 0;
    }
    return ink ? h : 0;
  };
  const tofu = new Set(['\u{10FFFD}', '\u{E0FFF}', '\uFFFE'].map(draw));
  const drawn = new Map(chars.map(c => [c, draw(c)]));
  return {
    chars, fontFamily, lang: canvas.lang,
    missing: chars.filter(c => drawn.get(c) === 0 || tofu.has(drawn.get(c))),
    distinct: new Set(drawn.values()).size,
  };
}
"""

# Blocks of code and output wider than their box, with every fold and solution opened.
_WIDE_BLOCKS = r"""
() => {
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  document.querySelectorAll('article button.toggle-button-hidden').forEach(b => b.click());
  const blocks = Array.from(document.querySelectorAll('article pre'))
    .filter(pre => pre.clientWidth > 0);
  const wide = blocks.filter(pre => pre.scrollWidth > pre.clientWidth + 1).map(pre => {
    const kind = pre.closest('.cell_input') ? 'code'
      : pre.closest('.cell_output, .output') ? 'output' : 'block';
    const longest = pre.textContent.split('\n')
      .reduce((a, b) => (b.length > a.length ? b : a), '');
    const s = getComputedStyle(pre);
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = s.font;
    const inner = pre.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    return {kind, over: pre.scrollWidth - pre.clientWidth, longest: longest.trimEnd(),
            fits: Math.floor(inner / ctx.measureText('0').width)};
  });
  return {blocks: blocks.length, wide};
}
"""


def _visit(browser, site_url: str, page_path: str) -> dict:
    """Open one page at 1280 px, save its screenshot, and measure what the tests check."""
    context = browser.new_context(viewport=VIEWPORT)
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
        result = {
            "broken_images": page.evaluate(_WAIT_FOR_IMAGES, PAGE_TIMEOUT_MS),
            "math": page.evaluate(_MATH_STATE, PAGE_TIMEOUT_MS),
            "search": page.evaluate(_SEARCH_BOXES),
            "chinese": page.evaluate(_CHINESE_GLYPHS),
            "reading": page.evaluate(PAGE_READING),
        }
        shot = SCREENSHOTS / Path(page_path).with_suffix(".png")
        shot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot), full_page=True)
        result["wide"] = page.evaluate(_WIDE_BLOCKS)
        page.set_viewport_size(NARROW_VIEWPORT)
        page.wait_for_timeout(200)
        result["search_narrow"] = page.evaluate(_SEARCH_BOXES)
    finally:
        context.close()
    result.update(console_errors=seen.console_errors, page_errors=seen.page_errors,
                  outside=seen.outside, http_errors=http_errors)
    return result


@pytest.fixture(scope="module")
def visit(browser, site_url):
    """visit(page) -> its measurements; each page is opened once per module."""
    cache: dict[str, dict] = {}

    def get(page_path: str) -> dict:
        if page_path not in cache:
            assert (HTML / page_path).exists(), f"{page_path} was not built"
            cache[page_path] = _visit(browser, site_url, page_path)
        return cache[page_path]

    return get


@pytest.mark.parametrize("page_path", PAGES)
def test_page_renders_offline(page_path, visit):
    seen = visit(page_path)
    problems = []
    if seen["console_errors"]:
        problems.append(f"console errors: {seen['console_errors']}")
    if seen["page_errors"]:
        problems.append(f"page errors: {seen['page_errors']}")
    if seen["http_errors"]:
        problems.append(f"HTTP errors: {seen['http_errors']}")
    if seen["outside"]:
        problems.append(f"requests that left 127.0.0.1: {sorted(set(seen['outside']))}")
    if seen["broken_images"]:
        problems.append(f"images that did not load: {seen['broken_images']}")
    math = seen["math"]
    if math["hasMath"]:
        if not math["loaded"]:
            problems.append("page has math but MathJax never started")
        else:
            if math["containers"] == 0:
                problems.append("page has math but no mjx-container was rendered")
            if math["untypeset"]:
                problems.append(f"math left untypeset: {math['untypeset']}")
            if math["errors"]:
                problems.append(
                    "MathJax drew errors (define a macro in _config.yml, mathjax3_config): "
                    f"{math['errors']}"
                )
    for width, boxes in ((VIEWPORT["width"], seen["search"]),
                         (NARROW_VIEWPORT["width"], seen["search_narrow"])):
        if len(boxes) != 1:
            problems.append(f"{len(boxes)} search boxes visible at {width} px, not 1: {boxes}")
    assert not problems, f"{page_path}:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("page_path", PAGES)
def test_page_shows_no_raw_markdown(page_path, visit):
    raw = raw_markup(visit(page_path)["reading"]["text"])
    assert not raw, (
        f"{page_path}: {len(raw)} lines of the text outside code are raw Markdown "
        "(a Markdown output not rendered, a fence closed at the end of a prose line, a "
        "role misspelt...):\n  " + "\n  ".join(raw[:30])
    )


def test_raw_markdown_check_fails():
    """The raw-Markdown check can fail: what commonmark made of a table, a fence left at
    the end of a line and a role in a plain output are reported; prose is not."""
    found = raw_markup(
        "| task | p |\n|---|---:|\n| a | 0.5 |\nonly by the step rule. ```\n"
        "the rate is {glue:text}`p_hat_03:.3f` here\n{exercise} Ten tries\n"
        "pass@k | pass^k are two numbers; the set {a, b} and a|b are prose."
    )
    kinds = [f.split(":")[0] for f in found]
    assert kinds == ["pipe row"] * 3 + ["code fence"] + ["unrendered role or directive"] * 2, found


def _chapter_of(page_path: str) -> int | None:
    """The number the toc gives a page (1 for the first chapter), None for the rest."""
    files = [f"{Path(f).with_suffix('').as_posix()}.html" for f in _toc_files()]
    return files.index(page_path) if page_path in files[1:] else None


@pytest.mark.parametrize("page_path", PAGES)
def test_exercises_numbered_and_outside_solutions(page_path, visit):
    exercises = visit(page_path)["reading"]["exercises"]
    nested = [e["number"] for e in exercises if e["in_solution"]]
    visible = [e["number"] for e in exercises if not e["in_solution"]]
    chapter = _chapter_of(page_path)
    expected = [f"{chapter}.{i}" for i in range(1, len(visible) + 1)] if chapter else []
    problems = []
    if nested:
        problems.append(f"exercises inside a solution's dropdown (hidden until the "
                        f"solution is opened): {nested}")
    if visible != expected:
        problems.append(f"the exercises a reader sees are numbered {visible}, not "
                        f"{expected}")
    assert not problems, f"{page_path}:\n  " + "\n  ".join(problems)


def test_undefined_macro_check_fails(browser, site_url):
    """The math check can fail: an undefined macro typed into a page is reported."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    try:
        page.goto(f"{site_url}/{INTRO}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
        page.evaluate(_INJECT_UNDEFINED_MACRO)
        errors = page.evaluate(_MATH_STATE, PAGE_TIMEOUT_MS)["errors"]
    finally:
        context.close()
    assert any("undefined macro \\NoSuchMacro" in e for e in errors), errors
    assert not any("\\E" in e.split(" in ")[0] for e in errors), f"\\E is undefined: {errors}"


def _glossary_terms() -> list[str]:
    """The English terms of book/intro.md's glossary table (its first column)."""
    text = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    glossary = text.split("## Glossary", 1)[1]
    terms = []
    for line in glossary.splitlines():
        if line.startswith("|") and not re.match(r"\|\s*(English|-+)\s*\|", line):
            first = re.sub(r"\{index\}`([^`]*)`", r"\1", line.split("|")[1])
            terms += [t.strip() for t in first.split(", ") if t.strip()]
    return terms


def test_glossary_chinese_renders(visit):
    chinese = visit(INTRO)["chinese"]
    assert chinese["chars"], f"no Chinese text found in the tables of {INTRO}"
    assert not chinese["missing"], (
        f"{len(chinese['missing'])} of {len(chinese['chars'])} Chinese characters of the "
        f"glossary render as the missing-glyph box (font stack {chinese['fontFamily']}, "
        f"lang {chinese['lang']!r}): install a CJK font (apt-get install fonts-noto-cjk; "
        f"scripts/setup.sh does): {''.join(chinese['missing'][:40])}"
    )
    assert chinese["distinct"] == len(chinese["chars"]), (
        f"{len(chinese['chars'])} characters drawn as only {chinese['distinct']} glyphs"
    )


def test_chinese_check_fails_without_a_cjk_font(browser, site_url, tmp_path):
    """The glyph check can fail: in a Chromium that sees only DejaVu, it must."""
    if not (DEJAVU / "DejaVuSans.ttf").exists():
        pytest.fail(f"{DEJAVU}/DejaVuSans.ttf not found: apt-get install fonts-dejavu-core",
                    pytrace=False)
    fonts_conf = tmp_path / "fonts.conf"
    fonts_conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n'
        f"<fontconfig><dir>{DEJAVU}</dir><cachedir>{tmp_path / 'cache'}</cachedir>"
        "</fontconfig>\n",
        encoding="utf-8",
    )
    latin_only = launch(
        browser.browser_type, executable_path=CHROMIUM, args=CHROMIUM_ARGS,
        env={**os.environ, "FONTCONFIG_FILE": str(fonts_conf)},
    )
    try:
        page = latin_only.new_page(viewport=VIEWPORT)
        page.goto(f"{site_url}/{INTRO}", wait_until="load", timeout=PAGE_TIMEOUT_MS)
        chinese = page.evaluate(_CHINESE_GLYPHS)
    finally:
        latin_only.close()
    assert chinese["chars"]
    assert set(chinese["missing"]) == set(chinese["chars"]), chinese["missing"]


def test_index_lists_the_glossary_terms(built_site):
    index = (built_site / "genindex.html").read_text(encoding="utf-8")
    entries = {html.unescape(e).strip().lower()
               for e in re.findall(r'<a href="[^"]*#index-\d+">([^<]+)</a>', index)}
    terms = _glossary_terms()
    assert len(terms) >= 20, f"the glossary of book/intro.md lost its terms: {terms}"
    missing = [t for t in terms if t.lower() not in entries]
    assert not missing, f"glossary terms missing from genindex.html: {missing}"
    intro = (built_site / INTRO).read_text(encoding="utf-8")
    assert 'href="../genindex.html"' in intro, "the intro does not link to the index"


# Part II (book/using/) shows what the commands print as a terminal prints it: a report's
# table keeps its columns and scrolls sideways rather than wrap into an unreadable one,
# and a docstring's example is the doctest as written. The teaching pages, and the command
# reference's help texts (drawn at 76 columns), must fit.
NO_SCROLL_PAGES = [p for p in PAGES
                   if not p.startswith("book/using/") or p == "book/using/cli.html"]


def test_no_code_block_scrolls(visit):
    report, total = [], 0
    for page_path in NO_SCROLL_PAGES:
        wide = visit(page_path)["wide"]
        if not wide["wide"]:
            continue
        total += len(wide["wide"])
        report.append(f"{page_path}: {len(wide['wide'])} of {wide['blocks']} blocks scroll")
        for block in wide["wide"]:
            report.append(
                f"    {block['kind']:6} {block['over']:4d} px over (fits {block['fits']} "
                f"characters): {block['longest'][:100]}"
            )
    assert not total, f"{total} code/output blocks scroll at 1280 px:\n" + "\n".join(report)
