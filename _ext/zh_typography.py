"""The Chinese edition's typesetting: loaded by the Chinese build only (scripts/zh_book.py).

Three things Sphinx does for English that Chinese needs done differently:

* **No line starts with punctuation.** Inline math (MathJax draws it as an inline
  block) and a code span are break opportunities on both sides for the browser, so a
  ，。；：、） right after one could start the next line ("…要看的是 pass^k ⏎，而不是…").
  Chinese typesetting forbids that (行首禁则). :func:`keep_punctuation_with` wraps each
  math or code element together with the CJK punctuation that follows it in
  ``<span class="zh-nobreak">`` (``white-space: nowrap`` in passk-zh.css), so the mark
  stays on the line of what it closes.
* **A pinyin index.** Sphinx sorts the index by code point, which puts 上限 before 任务集
  and groups every Chinese term under "Symbols". :func:`pinyin_index` sorts a Chinese
  entry by the pinyin of ``zh_index_pinyin`` (locales/zh_CN/_config.yml, one row per
  indexed term) and files it under the pinyin's first letter, among the English entries
  of that letter, as Chinese books print their index. An indexed Chinese term with no
  row is a build warning (so ``-W`` fails) naming the term.
* **Search finds the book's terms.** Sphinx's Chinese search cuts the text with jieba,
  whose general dictionary splits 抖动率, 处置手册, 置信下限 into shorter words and finds
  掷硬币 nowhere. :func:`search_dictionary` hands jieba a user dictionary of the book's
  own terms (``zh_search_words``: the glossary's indexed terms, written by
  scripts/zh_book.py), so that a search for any of them finds the pages that use it.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

logger = logging.getLogger(__name__)

# Marks that must not begin a line (GB/T 15834, 行首禁则), and the closing quote.
CLOSING = "，。；：、）！？》」』”’…"
_INNER = (r'(?:<span class="math notranslate nohighlight">[^<]*</span>'
          r'|<code class="[^"]*\bliteral\b[^"]*">(?:(?!</code>).)*</code>)')
_ELEMENT = rf"(?:<a\b[^>]*>{_INNER}</a>|{_INNER})"
_NOBREAK = re.compile(rf"(?P<element>{_ELEMENT})(?P<marks>[{CLOSING}]+)", re.DOTALL)


def keep_punctuation_with(html: str) -> str:
    """Wrap every inline math or code element and the CJK marks right after it.

    Examples
    --------
    >>> m = '<span class="math notranslate nohighlight">p</span>'
    >>> keep_punctuation_with(f'是 {m}，而') == f'是 <span class="zh-nobreak">{m}，</span><wbr>而'
    True
    >>> keep_punctuation_with('<code class="docutils literal notranslate">x</code> 和')
    '<code class="docutils literal notranslate">x</code> 和'

    One element only: never the text between two code spans.

    >>> c = '<code class="docutils literal notranslate">'
    >>> keep_punctuation_with(f'{c}a</code> 和 {c}b</code>，').count(' 和 </')
    0
    >>> keep_punctuation_with(f'{c}a</code> 和 {c}b</code>，').startswith(f'{c}a</code> 和 <span')
    True

    A long code span with spaces keeps only its last word with the mark:

    >>> w = '<span class="pre">'
    >>> long = f'{c}{w}gate:</span> {w}PASSED</span> {w}(with:</span> {w}look)</span></code>，'
    >>> keep_punctuation_with(long).split('<span class="zh-nobreak">')[1]
    '<code class="docutils literal notranslate"><span class="pre">look)</span></code>，</span><wbr>'
    """
    return _NOBREAK.sub(_kept_together, html)


_LAST_WORD = re.compile(r'^(?P<open><code [^>]*>)(?P<head>.*\S)(?P<space>\s+)'
                        r'(?P<last><span class="pre">[^<]*</span>)</code>$', re.DOTALL)
LONG_CODE = 24   # characters of code text: a longer code span with spaces is split


def _kept_together(match: re.Match[str]) -> str:
    element, marks = match.group("element"), match.group("marks")
    last = _LAST_WORD.match(element)
    if last and len(re.sub(r"<[^>]+>", "", element)) > LONG_CODE:
        # A long code span with spaces must still break at its spaces on a narrow
        # screen: only its last word is kept with the marks (two code boxes, one line
        # break opportunity between them).
        head = f'{last["open"]}{last["head"]}</code>{last["space"]}'
        element = f'{last["open"]}{last["last"]}</code>'
        return f'{head}<span class="zh-nobreak">{element}{marks}</span><wbr>'
    # <wbr>: a line may break after the marks even when the next element is kept
    # together too (`--a`、`--b`、: two no-wrap spans side by side would not break).
    return f'<span class="zh-nobreak">{element}{marks}</span><wbr>'


def _html_page(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
               doctree: Any) -> None:
    if "body" in context:
        context["body"] = keep_punctuation_with(context["body"])


# ------------------------------------------------------------------------- the index

_HAN = re.compile(r"[\u3400-\u9fff]")


def pinyin_key(term: str, table: dict[str, str]) -> str | None:
    """The sort key of an index term that starts with a Han character; None otherwise.

    >>> pinyin_key("抖动率", {"抖动率": "dou3 dong4 lv4"})
    'dou3 dong4 lv4'
    >>> pinyin_key("pass^k", {}) is None
    True
    """
    if not _HAN.match(term):
        return None
    return table.get(term.split("（", maxsplit=1)[0].strip())


def _patch_index(app: Sphinx) -> None:
    from sphinx.environment.adapters import indexentries

    table: dict[str, str] = dict(app.config.zh_index_pinyin or {})
    # Sphinx has no hook for the index's order: its two module functions are replaced
    # (Sphinx 7.4's names; the build fails loudly if they are renamed).
    english_key = indexentries._key_func_1  # noqa: SLF001
    english_group = indexentries._group_by_func  # noqa: SLF001
    missing: set[str] = set()

    def key(entry: tuple[str, Any]) -> tuple[tuple[int, str], str]:
        pinyin = pinyin_key(entry[0], table)
        if pinyin is None:
            if _HAN.match(entry[0]) and entry[0] not in missing:
                missing.add(entry[0])
                logger.warning("zh index: %r has no pinyin in zh_index_pinyin "
                               "(locales/zh_CN/_config.yml): add a row", entry[0])
            return english_key(entry)
        # among the English entries of the same letter, by pinyin, then by the term
        return (1, unicodedata.normalize("NFD", pinyin.lower())), entry[0]

    def group(entry: tuple[str, Any]) -> str:
        pinyin = pinyin_key(entry[0], table)
        return pinyin[0].upper() if pinyin else english_group(entry)

    indexentries._key_func_1 = key  # noqa: SLF001
    indexentries._group_by_func = group  # noqa: SLF001


# ------------------------------------------------------------------------- the search


def search_dictionary(app: Sphinx, config: Any) -> None:
    """Write jieba's user dictionary of the book's terms and point the search at it."""
    words = sorted({w for w in (config.zh_search_words or []) if _HAN.search(w)})
    if not words:
        return
    path = Path(app.doctreedir) / "zh-search-words.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{w}\n" for w in words), encoding="utf-8")
    options = dict(config.html_search_options or {})
    options["dict"] = str(path)
    config.html_search_options = options


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_config_value("zh_index_pinyin", {}, "env")
    app.add_config_value("zh_search_words", [], "html")
    app.connect("config-inited", search_dictionary)
    app.connect("builder-inited", _patch_index)
    app.connect("html-page-context", _html_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
