"""What a reader of a built book page sees: raw markup in its prose, its exercises, its size.

Shared by ``tests/test_book_browser.py`` (which asserts on it) and
``scripts/page_metrics.py`` (which prints it per page). Both run ``PAGE_READING`` in
Chromium on a page opened at 1280 px, after MathJax has typeset.

*The text outside code* is the page's article with every code block, inline code
span kept as `` `text` `` (so that an unrendered role shows as ``{ref}`label` ``),
math, scripts and styles removed, and a line break around every block element. Text
inside folded cells and closed solution dropdowns counts: a reader opens them.

*Raw markup* in that text is what a Markdown renderer should have turned into
something else:

* a pipe-table row (``| a | b |``) or a delimiter row (``|---|:--:|``);
* a code fence (three or more backticks or tildes, a colon fence ``:::``);
* a MyST role or directive left as text: ``{glue:text}`x` ``, ``{ref}`...` ``,
  ``{numref}``, ``{exercise}``, ``{solution}``, ``{eval}``, any ``{name}`` directly
  followed by a backtick, or ``{name}`` opening a line.

*Exercises*: the number of every sphinx-exercise admonition in page order, and the
numbers of those that sit inside a solution (a solution's dropdown hides them).

*Wide tables*: output tables wider than their cell's box, which scroll sideways.

*Size* at the viewport's width: the page's height in px, and the summed height of the
article's top-level code cells (``div.cell``: input and output, as laid out, folded
parts folded), so that ``code_px / page_px`` is the share of the page that is code.
"""

from __future__ import annotations

import re

PIPE_ROW = re.compile(r"^\s*\|.*\|\s*$")
DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")
FENCE = re.compile(r"(`{3,}|~{3,})|^\s*:{3,}")
ROLE = re.compile(r"\{[a-z][\w.-]*(?::[\w.-]+)*\}(?=`)|^\s*\{[a-z][\w.-]*(?::[\w.-]+)*\}")


def raw_markup(text: str) -> list[str]:
    """The lines of ``text`` that hold raw Markdown: ``"pipe row: | a | b |"``, ..."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if (PIPE_ROW.match(line) and line.count("|") >= 3) or DELIMITER_ROW.match(line):
            found.append(f"pipe row: {line[:100]}")
        elif FENCE.search(line):
            found.append(f"code fence: {line[:100]}")
        elif ROLE.search(line):
            found.append(f"unrendered role or directive: {line[:100]}")
    return found


def pipe_rows(text: str) -> int:
    """How many lines of ``text`` are pipe-table rows (delimiter rows included)."""
    return sum(1 for m in raw_markup(text) if m.startswith("pipe row"))


# Run with page.evaluate(PAGE_READING) once the page has loaded and MathJax typeset.
PAGE_READING = r"""
() => {
  const article = document.querySelector('article.bd-article') ||
                  document.querySelector('article') || document.body;
  // sizes first, on the live page as laid out
  const page_px = Math.round(document.documentElement.scrollHeight);
  const cells = Array.from(article.querySelectorAll('div.cell'))
    .filter(c => !c.parentElement.closest('div.cell'));
  const code_px = Math.round(cells.reduce((s, c) => s + c.getBoundingClientRect().height, 0));
  // output tables wider than their box (they scroll sideways)
  const wide_tables = Array.from(article.querySelectorAll('div.cell_output table'))
    .filter(t => t.getBoundingClientRect().width >
                 t.closest('div.cell_output').clientWidth + 1).length;
  // exercises, in page order
  const exercises = Array.from(article.querySelectorAll('div.exercise')).map(ex => {
    const num = ex.querySelector('.caption-number');
    return {
      number: num ? num.textContent.replace(/^\s*Exercise\s*/, '').trim() : '',
      in_solution: !!ex.parentElement.closest('div.solution'),
      label: ex.id || '',
    };
  });
  // the text outside code
  const clone = article.cloneNode(true);
  clone.querySelectorAll('pre, div.highlight, div.cell_input, script, style, ' +
      'mjx-container, .math, .MathJax, mjx-assistive-mml, .headerlink, ' +
      'button.copybtn').forEach(el => el.remove());
  clone.querySelectorAll('code').forEach(el => {
    el.replaceWith(document.createTextNode('`' + el.textContent + '`'));
  });
  const BLOCKS = 'p, div, li, dt, dd, td, th, tr, h1, h2, h3, h4, h5, h6, section, ' +
      'figure, figcaption, caption, summary, details, table, ul, ol, dl, blockquote, br';
  clone.querySelectorAll(BLOCKS).forEach(el => {
    el.before(document.createTextNode('\n'));
    el.after(document.createTextNode('\n'));
  });
  return {page_px, code_px, cells: cells.length, wide_tables, exercises,
          text: clone.textContent};
}
"""
