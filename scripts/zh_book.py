"""The Chinese edition of the book, generated from the English pages and a catalog.

One source: the English notebooks and ``book/intro.md``. The Chinese text lives in
``locales/zh_CN/<page>.yml``, one entry per English unit of prose:

* a notebook's markdown cell (keyed by the cell's ``id``),
* a figure caption in a code cell's ``mystnb.figure.caption`` metadata
  (keyed ``<cell id>/caption``),
* a section of a Markdown page, from one heading to the next (keyed by the slug of its
  English heading).

Each entry holds ``en`` (the English text it translates), ``en_sha`` (the first 12 hex
digits of its SHA-256) and ``zh`` (the translation, empty while untranslated). An entry
is *current* when its ``en_sha`` is that of the English unit today; a missing or stale
translation falls back to the English text in the build, and
``tests/test_book_zh.py`` names it.

The Chinese notebooks written to ``_build/zh-src/`` are the English notebooks with only
markdown sources and captions replaced: code cells, their outputs (glued values
included), execution counts and every other piece of metadata are copied verbatim, so
the two editions cannot show different numbers (nbval checks the English notebooks
once). The exceptions:

* a glued word (an identifier such as a verdict or a task class) that the catalog maps
  to Chinese in its top-level ``glue_zh: {KEY: {glued value: 中文}}``; glued numbers are
  never touched;
* a Markdown output written by the code (page 1's table of runbook fragments) that the
  catalog's ``outputs_zh: {cell id: {en_sha, zh}}`` translates, while ``en_sha`` is that
  of today's English output;
* the figures: each notebook with figures is executed once more (nbclient, nothing
  written back) with ``passk.book.plots.use_language("zh_CN", locales/zh_CN/_figures.yml)``
  set first, so that the same code draws each figure with Chinese texts in the CJK font
  (:func:`chinese_figures`; kept in ``_build/zh-figures/`` while the notebook's code,
  ``passk`` and the figure catalog are unchanged: about 5 minutes for all on 2 cores,
  then nothing).

The generated ``_toc.yml`` is the English one with each part's caption in Chinese,
from ``locales/zh_CN/_toc_captions.yml`` (:func:`chinese_toc`; a caption it lacks
fails the build).

The book's Chinese terms (one word per concept: 任务集, 分层, 召回, harness, 拦下,
提前终止, 置信下限, 第 N 页...) are kept by ``TERM_RULES``, which ``terms`` applies to the
prose of every catalog.

Commands (run from the repository root)::

    python scripts/zh_book.py sync [--prune]        # add entries for new English units
    python scripts/zh_book.py status [PAGE]         # per page: translated, missing, stale
    python scripts/zh_book.py accept PAGE [KEY...]  # the zh of these entries is current
    python scripts/zh_book.py terms                 # the book's terms in every zh (TERM_RULES)
    python scripts/zh_book.py build                 # _build/zh-src -> _build/html/zh/
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import hashlib
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "locales" / "zh_CN"
SOURCE = ROOT / "_build" / "zh-src"   # the generated Chinese book source
HTML = ROOT / "_build" / "html"
HTML_ZH = HTML / "zh"
# Copied as they are into the generated source (the switcher's template, the glued-eval
# extension).
SHARED_DIRS = ("_templates", "_static", "_ext")

_FENCE = re.compile(r"^(`{3,}|~{3,}|:{3,})")
# scripts/sync_notebooks.py stores each glued number in the English prose as an {eval} role
# naming its key, {eval}`glued("key:fmt")` (for JupyterLab; the older form carried a
# literal, {eval}`'0.318'  # glue key:fmt`). A unit's English, and the Chinese written from
# it, use the glue role instead: a number that changes leaves its translation current, and
# the Chinese page takes the number from the notebook's glued outputs, copied verbatim.
_EVAL_ROLE = re.compile(r"""\{eval\}`\s*glued\(\s*["']([^"'`]+)["']\s*\)\s*`"""
                        r"|\{eval\}`[^`]*?\s*#\s*glue\s+([^`]+?)\s*`")


def glue_roles(text: str) -> str:
    """``text`` with each glued-number ``{eval}`` role written back as ``{glue:text}``."""
    return _EVAL_ROLE.sub(lambda m: "{glue:text}`" + (m.group(1) or m.group(2)) + "`", text)
_HEADING = re.compile(r"^(#{1,2})\s+(.*\S)\s*$")


def sha(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of ``text`` (UTF-8)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Unit:
    """One unit of English prose that the catalog translates."""

    key: str
    kind: str  # 'markdown', 'caption' or 'section'
    en: str


# ----------------------------------------------------------------------------- pages


def toc_entries(root: Path = ROOT) -> list[str]:
    """Every document ``_toc.yml`` names (root, chapters, sections, parts), as written."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    names.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return names


def toc_pages(root: Path = ROOT) -> list[str]:
    """Every page of ``_toc.yml`` in order, with its file extension (``.md``/``.ipynb``)."""
    pages = []
    for name in toc_entries(root):
        stem = Path(name).with_suffix("") if Path(name).suffix in (".md", ".ipynb") else Path(name)
        for suffix in (".ipynb", ".md"):
            if (root / stem.with_suffix(suffix)).exists():
                pages.append(stem.with_suffix(suffix).as_posix())
                break
        else:
            raise FileNotFoundError(f"_toc.yml names {name!r}, but no .ipynb or .md exists")
    return pages


def catalog_path(page: str) -> Path:
    """``locales/zh_CN/<page without extension>.yml``."""
    return LOCALE / Path(page).with_suffix(".yml")


def _slug(heading: str) -> str:
    slug = re.sub(r"[^\w\s-]", "", heading.lower())
    return re.sub(r"[\s_-]+", "-", slug).strip("-") or "section"


def markdown_sections(text: str) -> list[tuple[str, str]]:
    """Split a Markdown page at its level-1 and level-2 headings (outside code fences).

    Returns ``(slug of the heading, text from the heading up to the next one)`` pairs;
    joining the texts gives back ``text``.
    """
    sections: list[list[str]] = []
    keys: list[str] = []
    fence = None
    for line in text.splitlines(keepends=True):
        marker = _FENCE.match(line.strip())
        if fence is None and marker:
            fence = marker.group(1)[0]
        elif fence is not None and marker and marker.group(1)[0] == fence:
            fence = None
        heading = _HEADING.match(line) if fence is None else None
        if heading or not sections:
            sections.append([])
            keys.append(_slug(heading.group(2)) if heading else "preamble")
        sections[-1].append(line)
    seen: dict[str, int] = {}
    unique = []
    for key in keys:
        seen[key] = seen.get(key, 0) + 1
        unique.append(key if seen[key] == 1 else f"{key}-{seen[key]}")
    return [(key, "".join(lines)) for key, lines in zip(unique, sections)]


def english_units(page: str, root: Path = ROOT) -> list[Unit]:
    """The units of English prose of one page, in reading order."""
    path = root / page
    if path.suffix == ".md":
        return [Unit(key, "section", body)
                for key, body in markdown_sections(path.read_text(encoding="utf-8"))]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    units = []
    for index, cell in enumerate(notebook["cells"]):
        cell_id = cell.get("id")
        if not cell_id:
            raise ValueError(f"{page}: cell {index} has no id (nbformat >= 4.5 gives every "
                             "cell one; open and save the notebook in Jupyter)")
        if "remove-cell" in cell.get("metadata", {}).get("tags", []):
            continue  # not in the book (e.g. JupyterLab's copy of a figure's caption)
        if cell["cell_type"] == "markdown":
            units.append(Unit(cell_id, "markdown", glue_roles("".join(cell["source"]))))
        caption = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("caption")
        if caption:
            units.append(Unit(f"{cell_id}/caption", "caption", caption))
    return units


# --------------------------------------------------------------------------- catalogs


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def load_catalog(page: str) -> dict[str, dict]:
    """The catalog entries of a page, by key (an empty dict when there is no catalog)."""
    path = catalog_path(page)
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    entries = {}
    for number, entry in enumerate(data.get("entries") or [], 1):
        missing = {"key", "en_sha", "en", "zh"} - set(entry)
        if missing:
            raise ValueError(f"{path}: entry {number} lacks {sorted(missing)}")
        if not isinstance(entry["key"], str):
            raise TypeError(f"{path}: entry {number}: key {entry['key']!r} is read as a "
                             f"{type(entry['key']).__name__}: quote it ('{entry['key']}')")
        entries[entry["key"]] = entry
    return entries


def catalog_extras(page: str) -> dict:
    """A catalog's top-level keys other than ``page`` and ``entries`` (``glue_zh``)."""
    path = catalog_path(page)
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {k: v for k, v in data.items() if k not in ("page", "entries")}


def glue_map(page: str) -> dict[str, dict[str, str]]:
    """The page's ``glue_zh``: glue key -> {glued value as shown: Chinese text}.

    A glued value that is a word ("flaky", "better", "below"), not a number, is an
    identifier chosen by the code; the Chinese page shows the catalog's Chinese for it.
    """
    table = catalog_extras(page).get("glue_zh") or {}
    if not isinstance(table, dict) or not all(
            isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
            for v in table.values()):
        raise ValueError(f"{catalog_path(page)}: glue_zh must map each glue key to "
                         "{glued value: Chinese text}, e.g. glue_zh: {eval_class: {flaky: 抖动}}")
    return {str(k): {str(a): b for a, b in v.items()} for k, v in table.items()}


def save_catalog(page: str, entries: list[dict], extra: dict | None = None) -> None:
    """Write the catalog; its other top-level keys (``glue_zh``) are kept unless given."""
    path = catalog_path(page)
    extra = catalog_extras(page) if extra is None else extra
    path.parent.mkdir(parents=True, exist_ok=True)
    head = (f"# Chinese translation of {page} (see CONTRIBUTING.md, 'The Chinese edition').\n"
            "# Translate `zh`; keep code, identifiers, {glue:text} roles, labels and math.\n"
            "# `en` is the English the translation follows; when the English page changes,\n"
            "# `python scripts/zh_book.py status` shows the difference.\n")
    body = yaml.dump({"page": page, **extra, "entries": entries}, Dumper=_Dumper,
                     allow_unicode=True, sort_keys=False, width=1000)
    path.write_text(head + body, encoding="utf-8")


@dataclass(frozen=True)
class PageStatus:
    """How far a page's translation is: keys of units translated, missing, stale."""

    page: str
    units: int
    translated: list[str]
    missing: list[str]   # no entry, or an empty zh
    stale: list[str]     # a zh for an older English text
    orphaned: list[str]  # entries for units the English page no longer has

    @property
    def complete(self) -> bool:
        return not (self.missing or self.stale or self.orphaned)


def page_status(page: str, root: Path = ROOT) -> PageStatus:
    entries = load_catalog(page)
    translated, missing, stale = [], [], []
    units = english_units(page, root)
    for unit in units:
        entry = entries.get(unit.key)
        if entry is None or not str(entry["zh"]).strip():
            missing.append(unit.key)
        elif entry["en_sha"] != sha(unit.en):
            stale.append(unit.key)
        else:
            translated.append(unit.key)
    orphaned = sorted(set(entries) - {u.key for u in units})
    return PageStatus(page, len(units), translated, missing, stale, orphaned)


def translation(page: str, root: Path = ROOT) -> dict[str, str]:
    """Current translations of a page by key (missing and stale ones left out)."""
    entries = load_catalog(page)
    current = {}
    for unit in english_units(page, root):
        entry = entries.get(unit.key)
        if entry and str(entry["zh"]).strip() and entry["en_sha"] == sha(unit.en):
            current[unit.key] = entry["zh"]
    return current


def sync(pages: list[str], root: Path = ROOT, prune: bool = False) -> None:
    """Bring each catalog in line with its English page, never losing a translation.

    New units get an entry with an empty ``zh``; a stale entry keeps its old ``en`` and
    ``en_sha`` (so that ``status`` can show what changed) until ``accept``; entries of
    units that are gone are kept at the end, marked by ``status`` as orphaned (reuse
    their text for the cells that replaced them), or dropped with ``prune``.
    """
    for page in pages:
        old = load_catalog(page)
        units = english_units(page, root)
        keys = {u.key for u in units}
        # A cell whose id changed but whose English did not keeps its translation.
        moved = {e["en_sha"]: e for k, e in old.items() if k not in keys and e["zh"].strip()}
        entries, taken = [], set()
        for unit in units:
            entry = old.get(unit.key) or moved.pop(sha(unit.en), None) or {
                "key": unit.key, "kind": unit.kind, "en_sha": sha(unit.en), "en": unit.en,
                "zh": ""}
            taken.add(entry["key"])
            if not str(entry["zh"]).strip():   # nothing to keep: follow the English
                entry.update(en_sha=sha(unit.en), en=unit.en)
            entries.append({"key": unit.key, "kind": unit.kind, "en_sha": entry["en_sha"],
                            "en": entry["en"], "zh": entry["zh"]})
        if not prune:
            entries += [e for k, e in old.items() if k not in keys | taken]
        save_catalog(page, entries)


def accept(page: str, keys: list[str], root: Path = ROOT) -> None:
    """Mark the translations of ``keys`` (all stale ones if none) as following today's English."""
    old = load_catalog(page)
    units = {u.key: u for u in english_units(page, root)}
    chosen = keys or [k for k, e in old.items() if k in units and e["en_sha"] != sha(units[k].en)]
    for key in chosen:
        if key not in old or key not in units:
            raise ValueError(f"{catalog_path(page)}: no entry {key!r} for a unit of {page}")
        old[key].update(en_sha=sha(units[key].en), en=units[key].en)
    save_catalog(page, list(old.values()))


def status_report(pages: list[str], diffs: bool = False, root: Path = ROOT) -> str:
    lines = []
    for page in pages:
        st = page_status(page, root)
        lines.append(f"{page}: {len(st.translated)}/{st.units} translated, "
                     f"{len(st.missing)} missing, {len(st.stale)} out of date"
                     + (f", {len(st.orphaned)} orphaned" if st.orphaned else ""))
        if diffs and st.stale:
            entries = load_catalog(page)
            units = {u.key: u for u in english_units(page, root)}
            for key in st.stale:
                lines.append(f"  out of date: {key}")
                lines += ["    " + d.rstrip("\n") for d in difflib.unified_diff(
                    entries[key]["en"].splitlines(True), units[key].en.splitlines(True),
                    "translated English", "English today", n=1)]
    return "\n".join(lines)


# ------------------------------------------------------------------------ terminology


# The book's Chinese terms (CONTRIBUTING.md, 'The Chinese edition', and the glossary of
# the Chinese front page): each rule rewrites a variant found in the catalogs into the
# chapter's word. `python scripts/zh_book.py terms` applies them to every `zh` (outside
# code), so a translation merged from another branch can be brought in line again; it is
# idempotent. Rules apply in order: specific phrasings before the general word.
_HAN = "\u3400-\u9fff"
TERM_RULES: list[tuple[str, str, str]] = [
    # (what, pattern, replacement)
    # harness: the agent's own runtime, kept in English as the chapter does.
    ("harness", r"测试框架（harness）", "harness"),
    ("harness", r"智能体测试框架", "智能体 harness"),
    ("harness", r"(?<!pytest )测试框架", "harness"),
    # A page is 第 N 页, this page 本页; 第 N.M 节 and 本节 are sections inside a page.
    ("page", r"第 ?([1-9]) ?节(?![.\d])", r"第 \1 页"),
    ("page", r"第([一二三四五六七八九])节", lambda m: "第 " + str(
        "一二三四五六七八九".index(m.group(1)) + 1) + " 页"),
    ("page", r"本节要点", "本页要点"),
    ("page", r"前面各节跑的都是模拟器，这一节", "前面各页跑的都是模拟器，本页"),
    ("page", r"本节(?=从单次成功率|沿着他的讲述|针对整个|把一个离线的)", "本页"),
    # Blocked (a gate's verdict): 拦下.
    ("blocked", r"被阻断", "被拦下"),
    ("blocked", r"又一条阻断理由", "又一条拦下的理由"),
    ("blocked", r"阻断", "拦下"),
    # Curtailment: 提前终止.
    ("curtailment", r"提前收手", "提前终止"),
    # Page 9's title: the page and the front page's table say the same.
    ("page 9 title", r"^# Inspect AI 内部", "# 深入 Inspect AI"),
    # 可靠性下界 is pass^k; a statistical lower bound is a 置信下限; a floor is a 底线.
    ("lower bound", r"一个精确下界", "一个精确的置信下限"),
    ("lower bound", r"(?<!可靠性)(?<!置信)下界", "置信下限"),
    ("floor", r"(?<!置信)下限", "底线"),
    # The chapter's words for the task set, tiering and retrieval.
    ("task set", r"(?<!测试)(?<!配)套件", "任务集"),
    ("tiering", r"分级", "分层"),
    ("retrieval", r"检索代码", "召回的实现"),
    ("retrieval", r"检索到的", "召回的"),
    ("retrieval", r"检索", "召回"),
    # No space between 秒 and the Chinese after it.
    ("seconds", r"秒 (?=[\u3400-\u9fff])", "秒"),
    # "not broken and not fixed"
    ("not broken, not fixed", r"既不是坏的，也不是好的", "没有坏，也没有被修好"),
    # 95%: no space, so that the sign never starts a line.
    ("percent", r"(\d) %", r"\1%"),
    # One word per concept, the chapter's where it has one (issue 32).
    ("flaky task", r"抖动的任务|抖的任务", "抖动任务"),
    ("flaky task", r"是抖的", "是抖动任务"),
    ("flaky task", r"抖的那类", "抖动的那类"),
    ("flaky task", r"稳定失败和抖。", "稳定失败和抖动。"),
    ("flaky task", r"被报告为抖；", "被报告为抖动任务；"),
    ("fail closed", r"失效即关闭", "失败即关闭"),
    ("grader", r"判分器", "评分器"),
    ("tied", r"分数打平", "分数相同"),
    ("tied", r"打平", "同分"),
    ("coin", r"抛硬币", "掷硬币"),
    ("tier", r"分档", "分层"),
    ("tier", r"(高危|只读)档", r"\1层"),
    ("tier", r"单独设一档", "单独设一层"),
    ("curtailment", r"提前停止|截短", "提前终止"),
    ("closed form", r"闭式解", "解析式"),
    ("bar", r"一道门槛", "阈值"),
    ("bar", r"门槛", "阈值"),
    ("better", r"更好（better）", "更可靠"),
    ("page", r"(后面|前面|前)几节", r"\1几页"),
]
# Inline: roles (their text is prose for {doc}/{ref}/{numref}/{index}, untouched for
# the others: glued values) and code spans, which the rules leave alone.
_INLINE = re.compile(r"\{(?P<role>[a-z:-]+)\}`[^`]*`|`[^`\n]*`")
_PROSE_ROLES = ("doc", "ref", "numref", "index")
# Seconds after a number in Chinese prose: "0.4 s" -> "0.4 秒".
# (a space before a Han character goes with the "s": "0.5 秒的截止时间").
_SECONDS = re.compile(r"((?<![\w.])\d+(?:\.\d+)?) s(?: (?=[\u3400-\u9fff])|(?=[，。；：、）]|\s|$))",
                      re.MULTILINE)
_FENCE_LINE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,}|:{3,})\s*(?P<info>\S*)")
_OPTION_LINE = re.compile(r"^\s*:[\w-]+:")
_CODE_DIRECTIVES = ("{code}", "{code-block}", "{code-cell}", "{math}")


def prose_pieces(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into ``(is_prose, piece)``: code blocks, directive fences and options,
    code spans and glued values are not prose; a directive's body ({exercise},
    {solution}, {note}...) is."""
    pieces: list[tuple[bool, str]] = []
    directives: list[str] = []   # open directive fences, innermost last
    code_fence = None
    for line in text.splitlines(keepends=True):
        fence = _FENCE_LINE.match(line)
        if code_fence is not None:
            if fence and not fence.group("info") and fence.group("fence")[0] == code_fence[0] \
                    and len(fence.group("fence")) >= len(code_fence):
                code_fence = None
            pieces.append((False, line))
            continue
        if fence:
            mark, info = fence.group("fence"), fence.group("info")
            if not info and directives and mark[0] == directives[-1][0] \
                    and len(mark) >= len(directives[-1]):
                directives.pop()
            elif info.startswith("{") and info not in _CODE_DIRECTIVES:
                directives.append(mark)
            else:
                code_fence = mark
            pieces.append((False, line))
            continue
        if directives and _OPTION_LINE.match(line):
            pieces.append((False, line))
            continue
        last = 0
        for span in _INLINE.finditer(line):
            pieces.append((True, line[last:span.start()]))
            pieces.append((span.group("role") in _PROSE_ROLES, span.group()))
            last = span.end()
        pieces.append((True, line[last:]))
    return pieces


def _spaced(text: str) -> str:
    """A space between a Han character and a Latin word put next to it by a rule."""
    text = re.sub(rf"([{_HAN}]|[{_HAN}]\*)(harness)", r"\1 \2", text)
    return re.sub(rf"(harness)([{_HAN}])", r"\1 \2", text)


def fix_terms(text: str) -> tuple[str, dict[str, int]]:
    """``text`` with TERM_RULES applied to its prose (:func:`prose_pieces`).

    Returns the text and the number of replacements by the rule's name.
    """
    counts: dict[str, int] = {}
    out = []
    pieces = prose_pieces(text)
    for index, (prose, piece) in enumerate(pieces):
        if prose:
            for what, pattern, replacement in TERM_RULES:
                piece, n = re.subn(pattern, replacement, piece, flags=re.MULTILINE)
                if n:
                    counts[what] = counts.get(what, 0) + n
            piece = _spaced(piece)
            # seconds after a number, or after the glued value just before this piece
            after_glue = index > 0 and pieces[index - 1][1].startswith("{glue")
            piece, n = _SECONDS.subn(r"\1 秒", piece)
            if after_glue:
                piece, m = re.subn(r"^ s(?: (?=[\u3400-\u9fff])|(?=[，。；：、）]|\s|$))", " 秒", piece)
                n += m
            if n:
                counts["seconds"] = counts.get("seconds", 0) + n
        out.append(piece)
    return "".join(out), counts


# An English gloss after a Chinese term: 升级（escalate）.
GLOSS = re.compile(rf"(?<=[{_HAN}])（([A-Za-z][A-Za-z .'’-]*[A-Za-z])）")


def first_glosses_only(pages: list[str]) -> int:
    """Keep an English gloss (``升级（escalate）``) at its first use in the book only.

    Pages are read in the book's order, each catalog's entries in the page's order; a
    gloss seen before (case aside) is removed from the prose (code, roles and glued
    values untouched). The glossary of the front page keeps every term. Returns the
    number of glosses removed.
    """
    seen: set[str] = set()
    removed = 0
    for page in pages:
        entries = load_catalog(page)
        changed = False
        for entry in entries.values():
            out = []
            for prose, piece in prose_pieces(str(entry["zh"])):
                if prose:
                    def drop(match: re.Match) -> str:
                        nonlocal removed
                        word = match.group(1).lower()
                        if word in seen:
                            removed += 1
                            return ""
                        seen.add(word)
                        return match.group()
                    piece = GLOSS.sub(drop, piece)
                out.append(piece)
            if "".join(out) != entry["zh"]:
                entry["zh"], changed = "".join(out), True
        if changed:
            save_catalog(page, list(entries.values()))
    return removed


def fix_catalog_terms(pages: list[str]) -> dict[str, int]:
    """Apply TERM_RULES to the ``zh`` of every entry of these pages' catalogs."""
    total: dict[str, int] = {}
    for page in pages:
        entries = load_catalog(page)
        if not entries:
            continue
        changed = False
        for entry in entries.values():
            fixed, counts = fix_terms(str(entry["zh"]))
            if fixed != entry["zh"]:
                entry["zh"], changed = fixed, True
            for what, n in counts.items():
                total[what] = total.get(what, 0) + n
        if changed:
            save_catalog(page, list(entries.values()))
    return total


# ------------------------------------------------------------------------- generation


# The label of a folded cell (myst-nb's code_prompt_show/hide, set per cell since its
# global "Show code cell {type}" puts an English word in {type}), by the cell's tag.
FOLD_PROMPTS = {
    "hide-input": ("显示代码", "隐藏代码"),
    "hide-output": ("显示输出", "隐藏输出"),
    "hide-cell": ("显示代码单元", "隐藏代码单元"),
}


def _shown_path(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def glued_key(output: dict) -> str | None:
    """The glue key of a notebook output (myst-nb's ``glue``), or None."""
    name = output.get("metadata", {}).get("scrapbook", {}).get("name")
    return name if isinstance(name, str) else None


def _translate_glued_word(page: str, output: dict, glue_zh: dict[str, dict[str, str]]) -> None:
    """Replace, in place, a glued word listed in the page's ``glue_zh`` by its Chinese."""
    key = glued_key(output)
    if key is None or key not in glue_zh:
        return
    for mime, text in output.get("data", {}).items():
        if not mime.endswith("text/plain"):
            continue
        text = "".join(text) if isinstance(text, list) else text
        try:
            value = ast.literal_eval(text)
        except (SyntaxError, ValueError):
            value = text
        if str(value) not in glue_zh[key]:
            raise ValueError(
                f"{_shown_path(catalog_path(page))}: glue_zh[{key!r}] has no Chinese for "
                f"the glued value {str(value)!r} (it has {sorted(glue_zh[key])}): add it, "
                "with every other value the code can glue there")
        output["data"][mime] = repr(glue_zh[key][str(value)])


FIGURES = LOCALE / "_figures.yml"     # the Chinese of every figure text (plots.use_language)
FIGURE_CACHE = ROOT / "_build" / "zh-figures"
#: Seconds a cell may run while the Chinese figures are drawn, and how many times a
#: notebook's kernel is started before the build fails (a hung kernel is started again).
_CELL_TIMEOUT, _ATTEMPTS = 300, 3
_SETUP_CELL = """\
import passk.book.plots as _passk_plots
_passk_plots.use_language("zh_CN", {catalog!r})
get_ipython().events.register(
    "pre_run_cell", lambda info: _passk_plots.drawing_in(info.raw_cell))
"""
_TEXTS_CELL = ("import json as _json; print(_json.dumps([_passk_plots.shown_texts(), "
               "_passk_plots.shown_sizes()]))")


def _figure_outputs(notebook: dict) -> list[tuple[str, int]]:
    """(cell id, output index) of every image output, in order."""
    return [(cell["id"], i) for cell in notebook["cells"] if cell["cell_type"] == "code"
            for i, out in enumerate(cell.get("outputs", []))
            if any(m.startswith("image/") for m in out.get("data", {}))]


# English a Chinese figure may hold: the words the prose keeps in English, names, and
# identifiers by their form (ALL-CAPS, a digit or one of _ @ ^ . = /, camelCase); math
# ($...$, pass$^k$) is left out before the words are read.
# "agent" is the chapter's own word in Chinese prose ("agent 不是纯函数"), like harness.
FIGURE_KEPT = {"harness", "agent", "bootstrap", "Clopper", "Pearson", "Wilson", "Beta", "dev",
               "epoch", "Inspect", "tau-bench"}
_FIGURE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_@^.=/'-]*")


def english_in_figure(texts: list[str], identifiers: set[str] = frozenset()) -> list[str]:
    """The English words of a figure's texts, beyond identifiers and kept names.

    >>> english_in_figure(["概率", "pass$^k$（$k$ 次全部成功）", "0.5", "payment-alert"],
    ...                   {"payment-alert"})
    []
    >>> english_in_figure(["run number", "GT 泄漏率", "p95 = 151 秒"])
    ['run', 'number']
    """
    words = []
    for text in texts:
        text = re.sub(r"(pass@|pass)?\$[^$]*\$", " ", text)
        for token in _FIGURE_WORD.findall(text):
            token = token.rstrip(".'/-")
            if (len(token) < 2 or token in FIGURE_KEPT or token in identifiers
                    or token.isupper() or re.search(r"[\d_@^.=/]", token)
                    or re.search(r"[a-z][A-Z]", token)):
                continue
            words.append(token)
    return words


def figure_identifiers() -> set[str]:
    """The identifiers the figure catalog lets a Chinese figure show (task ids)."""
    data = yaml.safe_load(FIGURES.read_text(encoding="utf-8")) if FIGURES.exists() else {}
    return set((data or {}).get("identifiers") or [])


def chinese_figures(page: str, root: Path = ROOT, *, execute: bool = True) -> dict[str, dict]:
    """The page's figures drawn in Chinese: ``{"<cell id>/<output index>": {"data":
    {mime: image}, "texts": [each text drawn], "fonts": {"dpi", "points", "text"}}}``
    (``fonts``: the resolution and the smallest text, ``plots.shown_sizes``; the same
    sizes as the English figure's, drawn by the same code).

    The notebook is executed (nbclient, in its own folder, nothing written back) with
    ``passk.book.plots.use_language("zh_CN", locales/zh_CN/_figures.yml)`` run first, so
    that the same code draws each figure with Chinese texts. The result is kept in
    ``_build/zh-figures/`` and used again while the notebook's code, ``passk`` and the
    figure catalog are unchanged. Every image output of the English notebook must have
    its Chinese twin, or this fails. ``execute=False``: the cached figures if they are
    current, else none (nothing is run).
    """
    path = root / page
    notebook = json.loads(path.read_text(encoding="utf-8"))
    wanted = _figure_outputs(notebook)
    if not wanted:
        return {}
    code = [("".join(c["source"])) for c in notebook["cells"] if c["cell_type"] == "code"]
    package = sorted((ROOT / "passk").rglob("*.py"))
    key = sha(json.dumps([code, FIGURES.read_text(encoding="utf-8") if FIGURES.exists()
                          else "", [p.read_text(encoding="utf-8") for p in package],
                          _SETUP_CELL]))
    cache = FIGURE_CACHE / (Path(page).stem + ".json")
    if cache.exists():
        stored = json.loads(cache.read_text(encoding="utf-8"))
        if stored.get("key") == key:
            return stored["figures"]
    if not execute:
        return {}
    import nbformat
    from nbclient import NotebookClient

    def to_run() -> Any:
        """The notebook between the cell that draws in Chinese and the one that reports."""
        run = nbformat.reads(json.dumps(notebook), as_version=4)
        run.cells.insert(0, nbformat.v4.new_code_cell(
            _SETUP_CELL.format(catalog=str(FIGURES))))
        run.cells.append(nbformat.v4.new_code_cell(_TEXTS_CELL))
        return run
    run = to_run()
    env = {**__import__("os").environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    for attempt in range(1, _ATTEMPTS + 1):
        # a kernel that hangs (seen once: no CPU for 15 minutes, a cell's whole timeout)
        # is started again; no cell of the book takes a minute even on a loaded machine
        try:
            NotebookClient(run, timeout=_CELL_TIMEOUT, kernel_name="python3",
                           resources={"metadata": {"path": str(path.parent)}}).execute(env=env)
            break
        except (CellTimeoutError, DeadKernelError) as error:
            if attempt == _ATTEMPTS:
                raise
            print(f"zh figures: {page}: {type(error).__name__}, starting its kernel again",
                  file=sys.stderr)
            run = to_run()
    drawn, sizes = json.loads("".join(o.get("text", "") for o in run.cells[-1].outputs))
    executed = json.loads(nbformat.writes(run))
    executed["cells"] = executed["cells"][1:-1]
    got = _figure_outputs(executed)
    # the texts of each figure shown as an image output (a widget's figure is not one)
    source = {c["id"]: "".join(c["source"]) for c in executed["cells"]}
    texts = [shown for cell_id in dict.fromkeys(c for c, _ in got)
             for where, shown in drawn if where == source[cell_id]]
    fonts = [size for cell_id in dict.fromkeys(c for c, _ in got)
             for where, size in sizes if where == source[cell_id]]
    if [c for c, _ in got] != [c for c, _ in wanted] or len(texts) != len(got):
        raise RuntimeError(
            f"{page}: executed for the Chinese figures, it drew {len(texts)} figures in "
            f"cells {[c for c, _ in got]}, but the English notebook stores figures in cells "
            f"{[c for c, _ in wanted]}: re-execute the English notebook (CONTRIBUTING.md)")
    cells = {c["id"]: c for c in executed["cells"]}
    figures = {}
    for (cell_id, index), (_, new_index), shown, font in zip(wanted, got, texts, fonts):
        data = cells[cell_id]["outputs"][new_index]["data"]
        figures[f"{cell_id}/{index}"] = {
            "data": {m: v for m, v in data.items() if m.startswith("image/")}, "texts": shown,
            "fonts": font}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "figures": figures}, ensure_ascii=False),
                     encoding="utf-8")
    print(f"zh figures: {page}: {len(figures)} drawn in Chinese in "
          f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    return figures


def output_map(page: str) -> dict[str, dict[str, str]]:
    """The page's ``outputs_zh``: cell id -> {en_sha, zh} for a Markdown output written
    by the code (a table of the runbook's fragments) that the Chinese page shows in
    Chinese. ``en_sha`` is :func:`sha` of the English output's text/markdown; when the
    English output changes, the Chinese page shows it in English until the entry follows
    (``stale_outputs``)."""
    table = catalog_extras(page).get("outputs_zh") or {}
    if not isinstance(table, dict) or not all(
            isinstance(v, dict) and set(v) == {"en_sha", "zh"} for v in table.values()):
        raise ValueError(f"{catalog_path(page)}: outputs_zh must map each cell id to "
                         "{en_sha: ..., zh: ...}")
    return {str(k): {"en_sha": str(v["en_sha"]), "zh": str(v["zh"])} for k, v in table.items()}


def _markdown_output(output: dict) -> str | None:
    text = output.get("data", {}).get("text/markdown")
    return None if text is None else ("".join(text) if isinstance(text, list) else text)


def stale_outputs(page: str, root: Path = ROOT) -> list[str]:
    """Cell ids of ``outputs_zh`` whose English Markdown output is not the one translated."""
    notebook = json.loads((root / page).read_text(encoding="utf-8"))
    shas = {c["id"]: [sha(t) for t in map(_markdown_output, c.get("outputs", [])) if t]
            for c in notebook["cells"]}
    return [cell for cell, entry in output_map(page).items()
            if entry["en_sha"] not in shas.get(cell, [])]


def chinese_notebook(page: str, root: Path = ROOT, *, figures: bool | str = True) -> dict:
    """The English notebook with its markdown and captions replaced by current translations.

    Its figures are those of :func:`chinese_figures` (the same code, drawn in Chinese);
    ``figures=False`` keeps the English ones; ``figures="cached"`` takes the Chinese ones
    only if the book's build left them current (the lab's copies: nothing is run).

    Code cells keep their source, outputs and execution counts; their ``mystnb``
    metadata gains only the translated caption and the Chinese labels of a fold. A glued
    word (an identifier such as a verdict) that the catalog's ``glue_zh`` maps is shown
    in Chinese; glued numbers are never touched.
    """
    notebook = json.loads((root / page).read_text(encoding="utf-8"))
    zh = translation(page, root)
    glue_zh = glue_map(page)
    figures = (chinese_figures(page, root, execute=figures != "cached") if figures
               else {})
    outputs_zh = output_map(page)
    out = copy.deepcopy(notebook)
    for cell in out["cells"]:
        if cell["cell_type"] == "markdown" and cell["id"] in zh:
            cell["source"] = zh[cell["id"]].splitlines(keepends=True)
        if cell["cell_type"] != "code":
            continue
        for index, output in enumerate(cell.get("outputs", [])):
            _translate_glued_word(page, output, glue_zh)
            markdown = _markdown_output(output)
            entry = outputs_zh.get(cell["id"])
            if markdown and entry and sha(markdown) == entry["en_sha"]:
                output["data"]["text/markdown"] = entry["zh"].splitlines(keepends=True)
            figure = figures.get(f"{cell['id']}/{index}")
            if figure:   # the same figure, drawn in Chinese (chinese_figures)
                output["data"] = {**{m: v for m, v in output["data"].items()
                                     if not m.startswith("image/")}, **figure["data"]}
        mystnb = cell.setdefault("metadata", {}).get("mystnb", {})
        if f"{cell['id']}/caption" in zh:
            mystnb["figure"]["caption"] = zh[f"{cell['id']}/caption"].strip()
        tags = cell["metadata"].get("tags", [])
        for tag, (show, hide) in FOLD_PROMPTS.items():
            if tag in tags:
                mystnb.update(code_prompt_show=show, code_prompt_hide=hide)
        if mystnb:
            cell["metadata"]["mystnb"] = mystnb
    return out


def chinese_markdown(page: str, root: Path = ROOT) -> str:
    zh = translation(page, root)
    text = "".join(
        zh[key].rstrip("\n") + "\n\n" if key in zh else body
        for key, body in markdown_sections((root / page).read_text(encoding="utf-8")))
    return text.rstrip("\n") + "\n"


def chinese_config(root: Path = ROOT) -> dict:
    """The English _config.yml with the Chinese overrides of locales/zh_CN/_config.yml."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    overrides = yaml.safe_load((LOCALE / "_config.yml").read_text(encoding="utf-8"))

    def merge(base: dict, extra: dict) -> dict:
        for key, value in extra.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value
        return base

    config = merge(config, overrides)
    # The Chinese typesetting (_ext/zh_typography.py): no line-initial punctuation, the
    # pinyin index, and a search that finds the glossary's terms whole.
    sphinx = config["sphinx"]["config"]
    sphinx["extensions"] = [*sphinx["extensions"], "zh_typography"]
    sphinx["zh_search_words"] = sorted(set(sphinx.get("zh_search_words") or [])
                                       | set(indexed_terms()))
    return config


_INDEX_ROLE = re.compile(r"\{index\}`([^`<]+?)\s*(?:<[^`]*>)?`")


def indexed_terms(pages: list[str] | None = None) -> list[str]:
    """Every Chinese term the catalogs index (``{index}`抖动率```), in the glossary's order."""
    terms: list[str] = []
    for page in pages if pages is not None else toc_pages():
        for entry in load_catalog(page).values():
            for term in _INDEX_ROLE.findall(str(entry["zh"])):
                if re.match(f"[{_HAN}]", term) and term not in terms:
                    terms.append(term)
    return terms


TOC_CAPTIONS = LOCALE / "_toc_captions.yml"   # the sidebar's part captions in Chinese


def chinese_toc(root: Path = ROOT, captions: Path = TOC_CAPTIONS) -> str:
    """The Chinese edition's ``_toc.yml``: the English one with each part's caption in
    Chinese, from ``captions`` (English caption as written -> Chinese). The pages, their
    order and numbering are the English ones; a caption the map lacks is an error."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    table = (yaml.safe_load(captions.read_text(encoding="utf-8")) or {}) if captions.exists() else {}
    if not isinstance(table, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in table.items()):
        raise ValueError(f"{_shown_path(captions)}: map each English part caption to its "
                         'Chinese, e.g. "Part I: the chapter": "第一部分：本章内容"')
    for part in toc.get("parts") or []:
        caption = part.get("caption")
        if caption is None:
            continue
        if caption not in table:
            raise ValueError(f"_toc.yml's part caption {caption!r} has no Chinese in "
                             f"{_shown_path(captions)}: add it there")
        part["caption"] = table[caption]
    return ("# Generated by scripts/zh_book.py from _toc.yml and "
            "locales/zh_CN/_toc_captions.yml.\n"
            + yaml.safe_dump(toc, allow_unicode=True, sort_keys=False))


def write_source(dest: Path = SOURCE, root: Path = ROOT) -> list[Path]:
    """Write the Chinese book source into ``dest``; returns the files that changed."""
    pages = toc_pages(root)
    files: dict[Path, bytes] = {}
    config = chinese_config(root)
    files[dest / "_config.yml"] = (
        "# Generated by scripts/zh_book.py from _config.yml and locales/zh_CN/_config.yml.\n"
        + yaml.safe_dump(config, allow_unicode=True, sort_keys=False)).encode("utf-8")
    files[dest / "_toc.yml"] = chinese_toc(root).encode("utf-8")
    for folder, name in [(root / n, n) for n in SHARED_DIRS] + [(LOCALE / "_static", "_static")]:
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            if path.is_file():
                files[dest / name / path.relative_to(folder)] = path.read_bytes()
    for page in pages:
        if page.endswith(".ipynb"):
            text = json.dumps(chinese_notebook(page, root), ensure_ascii=False, indent=1) + "\n"
        else:
            text = chinese_markdown(page, root)
        files[dest / page] = text.encode("utf-8")
    # Only what changed is rewritten (Sphinx then re-reads only those pages), and what
    # is no longer generated is removed; the build's own _build/ inside stays.
    changed = []
    for path in dest.rglob("*") if dest.exists() else []:
        if path.is_file() and path not in files and "_build" not in path.relative_to(dest).parts:
            path.unlink()
            changed.append(path)
    for path, data in files.items():
        if not path.exists() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            changed.append(path)
    return changed


def prune_unused_images(html: Path) -> list[str]:
    """Remove the images no page of ``html`` shows (an incremental build keeps those of
    earlier builds: the English figures of a build before the Chinese ones); their names."""
    images = html / "_images"
    if not images.is_dir():
        return []
    shown = set()
    for page in html.rglob("*.html"):
        shown.update(re.findall(r"_images/([^\"'#?\s)]+)", page.read_text(errors="ignore")))
    gone = sorted(f.name for f in images.iterdir() if f.is_file() and f.name not in shown)
    for name in gone:
        (images / name).unlink()
    return gone


def build(extra_args: list[str]) -> int:
    """Generate the source, build it with jupyter-book -W, and put it at _build/html/zh/."""
    start = time.monotonic()
    write_source()
    exe = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(exe) if exe.exists() else "jupyter-book", "build", str(SOURCE),
           "-W", "-n", "--keep-going", *extra_args]
    code = subprocess.run(cmd, cwd=ROOT, check=False).returncode
    if code != 0:
        return code
    if HTML_ZH.exists():
        shutil.rmtree(HTML_ZH)
    shutil.copytree(SOURCE / "_build" / "html", HTML_ZH)
    prune_unused_images(HTML_ZH)
    print(f"zh book: built in {time.monotonic() - start:.0f} s: {HTML_ZH / 'index.html'}")
    for page in toc_pages():
        for key, figure in (chinese_figures(page) if page.endswith(".ipynb") else {}).items():
            english = english_in_figure(figure["texts"], figure_identifiers())
            if english:
                print(f"zh book: {page}: figure {key} still shows English {english} "
                      f"(add them to {_shown_path(FIGURES)})")
    print(status_report(toc_pages()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    syn = sub.add_parser("sync", help="add catalog entries for new English units")
    syn.add_argument("--prune", action="store_true",
                     help="drop the entries of units the English pages no longer have")
    status = sub.add_parser("status", help="per page: translated, missing, out of date")
    status.add_argument("pages", nargs="*")
    acc = sub.add_parser("accept", help="mark translations as following today's English")
    acc.add_argument("page")
    acc.add_argument("keys", nargs="*")
    sub.add_parser("terms", help="rewrite variants of the book's terms in every catalog "
                   "(TERM_RULES) and say how many of each")
    bld = sub.add_parser("build", help="build the Chinese edition into _build/html/zh/")
    bld.add_argument("jb_args", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "sync":
        sync(toc_pages(), prune=args.prune)
        print(status_report(toc_pages()))
    elif args.command == "status":
        print(status_report(args.pages or toc_pages(), diffs=True))
    elif args.command == "accept":
        accept(args.page, args.keys)
        print(status_report([args.page]))
    elif args.command == "terms":
        counts = fix_catalog_terms(toc_pages())
        glosses = first_glosses_only(toc_pages())
        if glosses:
            counts["repeated gloss"] = glosses
        print("terms rewritten: " + (", ".join(f"{what} {n}" for what, n in counts.items())
                                     or "none (every catalog already uses the book's terms)"))
    else:
        return build(args.jb_args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
