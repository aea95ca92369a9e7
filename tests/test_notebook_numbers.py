"""Every number in the book's prose is computed, and every stored glued value is rounded.

**Numbers in the prose.** A number typed into a page's text can silently disagree with
the code beside it; a glued one (myst-nb's ``{glue:text}`name:.3f``` / ``{glue}`name```)
cannot. ``test_prose_numbers_are_glued`` scans the prose of every markdown cell of
``notebooks/*.ipynb`` (and every figure caption in the cells' metadata) and of every
``book/*.md`` page, and fails on each number that is neither glued, nor excluded by one
of the rules below, nor on the allow-list.

Excluded by rule, because they are not prose numbers:

1. glue roles and directives, ``{glue:text}`name:.3f``` and friends: computed;
2. code: fenced blocks (```` ```python ````, ``{code-cell}``), inline ```code```;
3. markup: other roles (``{numref}``, ``{ref}``, ``{eq}``, ``{doc}``, ``{index}``...),
   link targets ``](...)``, URLs, labels ``(name)=``, directive options (``:label:``),
   a ``{solution}``'s label, HTML tags and comments;
4. identifiers: digits joined to a word (``tau2-bench``, ``GPT-4o``, ``pass@5``,
   ``fig-02-curves``, ``ex-01-1``, ``p_09``);
5. the statement of an ``{exercise}``: it poses the question's inputs. Its
   ``{solution}`` is prose like any other, and is scanned;
6. in math (``$...$``, ``$$...$$``, ``\\begin{align}``, ``{math}``): exponents and
   subscripts (``p^5``, ``^{30}``, ``\\sum_{c=0}``), integers below 10 and fractions of
   them (``1 - p``, ``4\\hat p(1-\\hat p)``, ``3! = 6``, ``5/6``: a formula's structure),
   and a value given to a named quantity (``k = 5``, ``p = 0.9``,
   ``\\mathrm{pass}^5 \\ge 0.9``: a parameter, set, not computed). A decimal or an
   integer of 10 or more anywhere else in math is a typed number (``(5/6)^{30} =
   0.004``, ``\\binom{12}{5}``);
7. in prose: 0 and 1 (the ends of every probability and flakiness scale); ordered-list
   and heading numbers (``1. The searchRunbook incident``); ``chapter 7``, ``page 4``
   and ``notebook 03`` (the chapter's and this book's own numbering); ``section 7``,
   ``fact 2``, ``rule 3``, ``source 2``, ``step 4`` (the page's own numbered headings and
   lists); a year in a citation (``Chen et al. (2021)``); a named parameter (``k = 5``).

Not excluded: ``Exercise 3`` or ``Figure 2`` typed by hand. Refer to an exercise or a
figure by its label (``{ref}`ex-06-3``` or ``{numref}`fig-02-curves```), so that the
number on the page is the one Sphinx gives it.

Numbers written as words ("three runs", "one in six") are not checked.

**Glued floats are rounded.** A glued value is stored in the notebook's outputs and
compared by nbval on every machine; printed at full precision its last digits depend on
the CPU (issue 9). ``test_glued_floats_are_rounded`` fails on any glued float stored with
more than 12 significant digits: round it (``round(x, 3)``) before gluing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PAGES = sorted((ROOT / "book").glob("*.md"))
MAX_SIGNIFICANT_DIGITS = 12

# The allow-list: numbers that are facts of the chapter's story or fixed conventions,
# typed on purpose. Each is a whole phrase, so the same number elsewhere is still checked.
ALLOWED_PHRASES = [
    # The incident happened at 2 a.m. (the chapter's story; nothing computes it).
    r"\b2 a\.m\.",
    # The runbook fragment's own words, quoted: "escalate if not recovered within 5 minutes".
    r"\b(?:within|in) 5 minutes",
    # The conventional confidence level, a named setting (passk's `confidence=0.95`).
    (r"\b95 ?% (?:(?:Wilson|exact|percentile|bootstrap|one-sided|two-sided|confidence) )*"
     r"(?:confidence|interval|CI|lower bound|upper bound|bound)"),
]

# --------------------------------------------------------------------------- the scanner

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_TOKEN = re.compile(
    # not part of a word or of a longer number; a fraction a/b is one token
    rf"(?<![\w@.\-/^\\])(?:{_NUMBER})(?:/(?:{_NUMBER}))?(?![\w@]|\.\d)"
)
_FENCE_OPEN = re.compile(r"^\s*(`{3,}|~{3,}|:{3,})\s*(?:\{([\w:-]+)\})?\s*(.*)$")
_CODE_DIRECTIVES = {
    "code-cell", "code-block", "code", "sourcecode", "literalinclude", "glue", "glue:",
    "glue:any", "glue:text", "glue:md", "glue:figure", "glue:math", "raw", "mermaid",
    "index", "toctree", "tableofcontents",
}
_MATH_DIRECTIVES = {"math"}
_EXEMPT_DIRECTIVES = {"exercise"}   # rule 5: an exercise's statement poses its inputs
_LABEL_ARG_DIRECTIVES = {"solution", "solution-start", "exercise-start"}
_OPTION_LINE = re.compile(r"^\s*:[\w-]+:(?:\s.*)?$")

_ROLE = re.compile(r"\{([\w:-]+)\}(`+)(.*?)\2", re.DOTALL)
_INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)((?:[^$\\\n]|\\.|\n(?!\s*\n))+?)(?<!\s)\$(?!\d)")
_ENV_MATH = re.compile(r"\\begin\{(\w+\*?)\}(.+?)\\end\{\1\}", re.DOTALL)
_MASKS = [
    re.compile(r"<!--.*?-->", re.DOTALL),                    # HTML comments
    re.compile(r"^\s*\([\w:.-]+\)=\s*$", re.MULTILINE),         # labels (name)=
    re.compile(r"\]\([^)\s]*\)"),                       # link targets
    re.compile(r"^\s*\[[^\]]+\]:\s*\S+.*$", re.MULTILINE),      # reference-style link definitions
    re.compile(r"<https?://[^>]*>|https?://\S+"),       # URLs
    re.compile(r"</?[A-Za-z][^>\n]*>"),                 # HTML tags
]
_LIST_OR_HEADING_NUMBER = re.compile(r"(?:^|\n)[ \t]*(?:#+[ \t]*)?(\d+)[.)][ \t]|\[(\d+)\.[ \t]")
_PROSE_RULES = [
    # the chapter's and this book's numbering, and the page's own numbered lists and headings
    re.compile(r"(?i)\b(?:chapters?|pages?|notebooks?|sections?|facts?|rules?|sources?|steps?)"
               r"[ \t-]+"
               r"(\d+)(?:(?:,|,? and|–|-| to)[ \t]*(\d+))*"),
    re.compile(r"(?:\(|et al\.,?[ \t]+|,[ \t]+)((?:19|20)\d\d)[a-z]?\)?"),   # citation years
    re.compile(r"(?<![\w\\])[A-Za-z][ \t]*(?:=|≥|≤|<|>)[ \t]*(" + _NUMBER + r")"),
]
_MATH_SCRIPT = re.compile(r"[\^_](?:\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}|\s*\\?\w)")
_MATH_NAMED = re.compile(
    r"(?:(?<![\w\\}])[A-Za-z]|\\[A-Za-z]+(?:\{[^{}]*\})?)(?:[\^_](?:\{[^{}]*\}|\w))?"
    r"\s*(?:=|<|>|\\ge|\\geq|\\le|\\leq|\\ne)\s*(" + _NUMBER + r")"
)


@dataclass(frozen=True)
class TypedNumber:
    where: str      # "notebooks/03_x.ipynb cell 12" or "book/intro.md"
    number: str
    context: str

    def __str__(self) -> str:
        return f"{self.where}: {self.number!r} in {self.context!r}"


def _blank(text: str, start: int, end: int) -> str:
    """Replace text[start:end] by spaces (newlines kept), so offsets stay valid."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _spaces(text: str) -> str:
    return " " * len(text)


def _blank_all(text: str, pattern: re.Pattern[str], group: int = 0) -> str:
    for m in reversed(list(pattern.finditer(text))):
        text = _blank(text, m.start(group), m.end(group))
    return text


def _split_fences(markdown: str) -> tuple[str, list[str]]:
    """The prose outside code, with fenced code and exercise statements blanked out
    (offsets kept), and the lines of math directives (scanned as math)."""
    out: list[str] = []
    maths: list[str] = []
    stack: list[tuple[str, str]] = []   # (fence, kind); kind: prose, code, exempt, math
    for line in markdown.split("\n"):
        kind = stack[-1][1] if stack else "prose"
        if stack:
            fence = stack[-1][0]
            if re.fullmatch(rf"\s*{re.escape(fence[0])}{{{len(fence)},}}\s*", line):
                stack.pop()
                out.append(_spaces(line))
                continue
        opening = _FENCE_OPEN.match(line) if kind in ("prose", "exempt") else None
        if opening:
            fence, name, arg = opening.groups()
            if kind == "exempt":
                new_kind = "exempt"
            elif name is None:
                new_kind = "prose" if fence[0] == ":" else "code"   # ```python: code
            elif name in _CODE_DIRECTIVES:
                new_kind = "code"
            elif name in _MATH_DIRECTIVES:
                new_kind = "math"
            elif name in _EXEMPT_DIRECTIVES:
                new_kind = "exempt"
            else:
                new_kind = "prose"
            stack.append((fence, new_kind))
            keep_arg = new_kind == "prose" and name not in (None, *_LABEL_ARG_DIRECTIVES)
            head = _spaces(line[: len(line) - len(arg)])
            out.append(head + (arg if keep_arg else _spaces(arg)))
            continue
        if kind == "math":
            maths.append(line)
        if kind != "prose" or (stack and _OPTION_LINE.match(line)):
            out.append(_spaces(line))
        else:
            out.append(line)
    return "\n".join(out), maths


def _math_numbers(math: str) -> list[str]:
    math = _blank_all(math, _MATH_SCRIPT)
    math = _blank_all(math, _MATH_NAMED, 1)
    found = []
    for m in _TOKEN.finditer(math):
        parts = m.group().replace(",", "").split("/")
        if any("." in p or float(p) >= 10 for p in parts):
            found.append(m.group())
    return found


def typed_numbers(markdown: str, where: str) -> list[TypedNumber]:
    """Every number in ``markdown``'s prose that the rules above do not excuse."""
    prose, maths = _split_fences(markdown)
    found: list[tuple[str, int]] = []   # (number, offset in prose) or offset -1 for math

    def context(at: int) -> str:
        if at < 0:
            return ""
        lo, hi = max(0, at - 40), min(len(markdown), at + 40)
        return " ".join(markdown[lo:hi].split())

    # roles: glue and references are blanked; {math} roles are math
    for m in reversed(list(_ROLE.finditer(prose))):
        if m.group(1) == "math":
            found += [(n, m.start()) for n in _math_numbers(m.group(3))]
        prose = _blank(prose, m.start(), m.end())
    prose = _blank_all(prose, _INLINE_CODE)
    for pattern in (_ENV_MATH, _DISPLAY_MATH, _INLINE_MATH):
        for m in reversed(list(pattern.finditer(prose))):
            body = m.group(pattern.groups)
            found += [(n, m.start()) for n in _math_numbers(body)]
            prose = _blank(prose, m.start(), m.end())
    for math in maths:
        found += [(n, -1) for n in _math_numbers(math)]
    for mask in _MASKS:
        prose = _blank_all(prose, mask)
    for phrase in ALLOWED_PHRASES:
        prose = _blank_all(prose, re.compile(phrase))
    prose = _blank_all(prose, _LIST_OR_HEADING_NUMBER, 1)
    prose = _blank_all(prose, _LIST_OR_HEADING_NUMBER, 2)
    for rule in _PROSE_RULES:
        for m in reversed(list(rule.finditer(prose))):
            for g in range(1, (rule.groups or 0) + 1):
                if m.group(g) is not None:
                    prose = _blank(prose, m.start(g), m.end(g))
    for m in _TOKEN.finditer(prose):
        if m.group() in ("0", "1"):
            continue
        found.append((m.group(), m.start()))
    found.sort(key=lambda item: item[1])
    return [TypedNumber(where, number, context(at)) for number, at in found]


def _notebook_prose(path: Path) -> list[tuple[str, str]]:
    """(where, markdown) for each markdown cell and each figure caption of a notebook."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    rel = path.relative_to(ROOT).as_posix()
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "markdown":
            out.append((f"{rel} cell {i}", "".join(cell["source"])))
        mystnb = cell.get("metadata", {}).get("mystnb")
        if isinstance(mystnb, dict):
            caption = (mystnb.get("figure") or {}).get("caption")
            if caption:
                out.append((f"{rel} cell {i} caption", caption))
    return out


def _sources() -> list[Path]:
    return [*NOTEBOOKS, *PAGES]


def _param(path: Path):
    return pytest.param(path, id=path.relative_to(ROOT).as_posix())


# --------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("path", [_param(p) for p in _sources()])
def test_prose_numbers_are_glued(path):
    if path.suffix == ".ipynb":
        parts = _notebook_prose(path)
    else:
        parts = [(path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8"))]
    typed = [t for where, text in parts for t in typed_numbers(text, where)]
    assert not typed, (
        f"{len(typed)} typed number(s) in the prose: glue them "
        "({glue:text}`name:.3f`) or refer by label; see this test's docstring for the rules.\n  "
        + "\n  ".join(map(str, typed))
    )


def significant_digits(text: str) -> int | None:
    """Significant digits of a float's repr (``'0.5787037037037037'`` -> 16), or None
    when the text is not a float (an int, a string, an array)."""
    text = text.strip()
    m = re.fullmatch(r"(?:np\.float(?:16|32|64)\()?([-+]?[\d.]+(?:[eE][-+]?\d+)?)\)?", text)
    if not m or not re.search(r"[.eE]", m.group(1)):
        return None
    mantissa = re.split(r"[eE]", m.group(1))[0].lstrip("+-").replace(".", "")
    digits = mantissa.lstrip("0")
    return len(digits) if "." not in m.group(1) or digits else 1


def glued_values(path: Path) -> list[tuple[str, str]]:
    """(name, text/plain) of every glued value stored in a notebook's outputs."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            scrapbook = output.get("metadata", {}).get("scrapbook")
            if not scrapbook:
                continue
            data = output.get("data", {})
            key = f"{scrapbook.get('mime_prefix', '')}text/plain"
            text = data.get(key, data.get("text/plain"))
            if text is not None:
                out.append((scrapbook["name"], "".join(text) if isinstance(text, list) else text))
    return out


@pytest.mark.parametrize("path", [_param(p) for p in NOTEBOOKS])
def test_glued_floats_are_rounded(path):
    long = [
        f"{name} = {text}"
        for name, text in glued_values(path)
        if (digits := significant_digits(text)) is not None and digits > MAX_SIGNIFICANT_DIGITS
    ]
    assert not long, (
        f"{len(long)} glued float(s) stored with more than {MAX_SIGNIFICANT_DIGITS} significant "
        "digits, whose last digits differ between CPUs: round them before gluing.\n  "
        + "\n  ".join(long)
    )


# ------------------------------------------------------------- the scanner's own rules


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("The task passed 10 of 12 runs.", ["10", "12"]),
        ("only the bar at 10/12 falls within ±0.1", ["10/12", "0.1"]),
        ("almost three times the 0.2 limit", ["0.2"]),
        ("a 12-run estimate", ["12"]),
        ("Exercise 3 does it", ["3"]),
        ("over 1,000 runs, 95% of them", ["1,000", "95"]),
        ("$1 - \\mathrm{pass}^{30} = 1 - (5/6)^{30} = 0.0042$", ["0.0042"]),
        ("recompute $\\binom{c^*}{5}/\\binom{12}{5}$", ["12"]),
        ("has dropped to $0.9^2$", ["0.9"]),
        ("```{solution} ex-06-3\n:class: dropdown\n\nIt stays below 0.5.\n```", ["0.5"]),
        ("Figure caption: pass^5 and C(c,5)/C(12,5)", ["5", "12", "5"]),
    ],
)
def test_scanner_flags_typed_numbers(markdown, expected):
    assert [t.number for t in typed_numbers(markdown, "x")] == expected


@pytest.mark.parametrize(
    "markdown",
    [
        "pass rate {glue:text}`rate_03:.3f` over {glue:text}`n_runs_03` runs",
        "```{glue:figure} fig_03\n:name: fig-03-x\n\nCaption 12\n```",
        "run `passk.pass_hat_k(0.9, 5)` or\n\n```python\nx = 600\n```",
        "see {numref}`fig-02-curves` and {ref}`ex-01-2` and [notebook](../notebooks/03_x.ipynb)",
        "```{exercise}\n:label: ex-02-2\n\nOn a busy night the assistant handles 40 alerts.\n```",
        "$\\mathrm{pass}^k = p^k$, $4\\hat p(1-\\hat p)$, $3! = 6$, $p = 5/6$, $\\sum_{c=0}^{n}$",
        "at $k = 5$ and $p = 0.9$, where $\\mathrm{pass}^5 \\ge 0.9$ holds; with k = 5",
        "$$\n\\widehat{\\mathrm{pass}^k} = \\prod_{i=0}^{k-1} \\frac{c-i}{n-i}\n$$",
        "tau2-bench, GPT-4o, pass@5, chapter 7, chapter-7 suite, notebook 03, Chen et al. (2021)",
        "as [page 3](03_x.ipynb) shows, and pages 5 and 6 (see Page 4)",
        "1. **The store returns ties** in any order\n2. the policy\n\n| [1. The incident](x) |",
        "rises towards 1 and falls towards 0",
        'at 2 a.m., "escalate if not recovered within 5 minutes", a 95% Wilson interval',
        "(sec-03-ci)=\n## Intervals\n<!-- 12 -->",
        "## 6. Protocols\n\nRule 3 can be enforced; see section 7 and fact 2 (source 2).",
    ],
)
def test_scanner_excuses_what_is_not_a_typed_number(markdown):
    assert typed_numbers(markdown, "x") == []


@pytest.mark.parametrize(
    ("text", "digits"),
    [("0.5787037037037037", 16), ("0.318", 3), ("np.float64(0.41)", 2), ("600", None),
     ("83.33333333333334", 16), ("1e-05", 1), ("0.0", 1), ("'0.3'", None)],
)
def test_significant_digits(text, digits):
    assert significant_digits(text) == digits
