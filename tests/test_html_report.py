"""``passk report --html`` / ``passk gate --html``: the page, opened from disk in headless Chromium.

One results file with markup in its task ids (``<script>alert(1)</script>``, ``<b>x</b>``,
an ``<img onerror>``), two flaky tasks and a policy file, written to a temporary folder;
``passk report`` (in process) writes the page and its JSON. The page is opened as a
``file://`` URL in Debian's Chromium (the ``browser`` fixture of ``tests/conftest.py``), every
request it makes is recorded, and these are asserted against the report JSON (the
reference: the same report's own numbers, printed by ``--json``) and the file's bytes:

* no request but the page itself, no console error, no dialog (an ``alert`` never runs);
* the curve is an SVG with a point and an interval for pass@k and pass^k at every k;
* the table has one row per task, each number as the JSON's rounded to 3 digits;
  a click on a column's header sorts the rows by it, ascending then descending;
* every reason of the verdict is shown, in order; the flaky tasks are listed;
* the criteria say where each came from (the command line, the policy file);
* what was read: the file, its producer and its SHA-256 (computed here from its bytes);
* a task id with markup shows as that text, and creates no element.

A screenshot of the whole page is written to ``_build/screenshots/html-report.png``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
from pathlib import Path

import pytest

from passk.cli import commands

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOT = ROOT / "_build" / "screenshots" / "html-report.png"
SCRIPT_ID = "<script>alert(1)</script>"
BOLD_ID = "<b>x</b>"
IMG_ID = '<img src=x onerror="alert(2)">'
#: task id -> outcomes of its runs
RUNS = {SCRIPT_ID: [1, 0, 1, 0], BOLD_ID: [1, 1, 1, 1], IMG_ID: [0, 0, 0, 0],
        "refund": [1, 1, 1, 1], "lookup": [1, 0, 0, 0], "cancel & rebook": [1, 1, 1, 0]}


def _cell(x):
    return "-" if x is None or not math.isfinite(x) else f"{x:.3f}"


def _passk(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = commands.main(list(argv))
    return status, out.getvalue()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """(page path, report JSON, results path) of ``passk report --html`` on the file."""
    d = tmp_path_factory.mktemp("html")
    results = d / "runs.jsonl"
    results.write_text("".join(json.dumps({"task_id": t, "trial": i, "success": bool(s)}) + "\n"
                               for t, outcomes in RUNS.items()
                               for i, s in enumerate(outcomes)), encoding="utf-8")
    policy = d / "passk.toml"
    policy.write_text("[gate]\nk = 3\nbar = 0.5\ncap = 0.3\n", encoding="utf-8")
    page = d / "report.html"
    args = [str(results), "--k", "4", "--policy", str(policy)]
    status, _ = _passk("report", *args, "--html", str(page))
    assert status == 0 and page.exists()
    status, out = _passk("report", *args, "--json")
    assert status == 0
    return page, json.loads(out), results


@pytest.fixture(scope="module")
def opened(browser, written):
    """The page open in Chromium, with every request, console error and dialog recorded."""
    page_path, _, _ = written
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    page = context.new_page()
    seen: dict[str, list[str]] = {"requests": [], "console": [], "dialogs": [], "errors": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("console", lambda m: seen["console"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))

    def dialog(d):
        seen["dialogs"].append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    url = page_path.as_uri()
    page.goto(url)
    page.wait_for_load_state("load")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    yield page, seen, url
    context.close()


def test_the_page_makes_no_request_and_no_error(opened):
    _, seen, url = opened
    assert seen["requests"] == [url], seen["requests"]
    assert seen["console"] == [] and seen["errors"] == [], seen
    assert seen["dialogs"] == []
    assert SCREENSHOT.stat().st_size > 10_000


def test_the_curve_is_an_svg_with_every_k_and_its_intervals(opened, written):
    page, _, _ = opened
    curve = written[1]["curve"]
    assert page.locator("svg#curve").count() == 1
    assert page.locator("svg#curve circle").count() == 2 * len(curve["k"])
    finite = sum(lo is not None and hi is not None
                 for key in ("pass_at_k_ci", "pass_hat_k_ci") for lo, hi in curve[key])
    assert finite == 2 * len(curve["k"])
    assert page.locator("svg#curve line.interval").count() == finite
    titles = page.locator("svg#curve circle title").all_text_contents()
    k = curve["k"].index(4)
    lo, hi = curve["pass_hat_k_ci"][k]
    assert (f"pass^k at k=4: {_cell(curve['pass_hat_k'][k])} [{_cell(lo)}, {_cell(hi)}]"
            in titles)


def _column(page, n: int) -> list[str]:
    return page.locator(f"#tasks tbody tr td:nth-child({n})").all_text_contents()


def _header(page, name: str) -> int:
    heads = page.locator("#tasks thead th").all_text_contents()
    return heads.index(name) + 1


def test_one_row_per_task_with_the_jsons_numbers(opened, written):
    page, _, _ = opened
    tasks = {t["task_id"]: t for t in written[1]["tasks"]}
    assert page.locator("#tasks tbody tr").count() == len(RUNS) == len(tasks)
    ids = _column(page, 1)
    assert sorted(ids) == sorted(RUNS)
    for name, key in (("pass^k", "pass_hat_k"), ("flakiness", "flakiness"),
                      ("lower", "lower_bound"), ("pass@k", "pass_at_k")):
        shown = _column(page, _header(page, name))
        assert shown == [_cell(tasks[t][key]) for t in ids], name
    # flaky tasks first, as the text report orders them
    flaky = [t for t in ids if tasks[t]["class"] == "flaky"]
    assert ids[:len(flaky)] == flaky and set(flaky) == {SCRIPT_ID, "lookup", "cancel & rebook"}


def test_a_click_sorts_the_table(opened, written):
    page, _, _ = opened
    tasks = {t["task_id"]: t for t in written[1]["tasks"]}
    before = _column(page, 1)
    head = page.locator("#tasks thead th").nth(_header(page, "flakiness") - 1)
    head.click()  # the first order is flakiest first: a click sorts ascending
    ascending = _column(page, 1)
    assert [tasks[t]["flakiness"] for t in ascending] == sorted(
        t["flakiness"] for t in tasks.values())
    assert ascending != before and head.get_attribute("aria-sort") == "ascending"
    head.click()
    descending = [tasks[t]["flakiness"] for t in _column(page, 1)]
    assert descending == sorted(descending, reverse=True) and descending[0] == 1.0
    assert head.get_attribute("aria-sort") == "descending"
    page.locator("#tasks thead th").nth(0).click()
    ids = _column(page, 1)
    assert ids != before
    assert ids == page.evaluate("(xs) => xs.slice().sort((a, b) => a.localeCompare(b))", ids)


def test_every_reason_and_the_flaky_tasks_are_shown(opened, written):
    page, _, _ = opened
    gate = written[1]["gate"]
    assert not gate["passed"] and gate["reasons"]
    assert page.locator("ul.reasons li").all_text_contents() == gate["reasons"]
    assert "gate: BLOCKED" in page.locator("#verdict").text_content()
    assert any(SCRIPT_ID in r for r in gate["reasons"])  # a reason that names a marked-up id
    flaky = page.locator("#flaky li").all_text_contents()
    assert len(flaky) == 3 and any(f.startswith(SCRIPT_ID + ": flakiness") for f in flaky)


def test_the_criteria_say_where_they_came_from(opened, written):
    page, _, _ = opened
    rows = {r.split("\t")[0]: r.split("\t")[1:] for r in page.evaluate(
        "Array.from(document.querySelectorAll('#criteria tbody tr'))"
        ".map(r => Array.from(r.cells).map(c => c.textContent).join('\\t'))")}
    path = written[2].parent / "passk.toml"  # no repository around it: named in full
    policy = f"{path} (sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]})"
    assert rows["k"] == ["4", "command line (--k 4)"]
    assert rows["bar"] == ["0.5", f"policy {policy}"]
    assert rows["flakiness cap"] == ["0.3", f"policy {policy}"]


def test_what_was_read_names_the_file_its_producer_and_digest(opened, written):
    page, _, _ = opened
    results = written[2]
    cells = page.locator("#read tbody tr td").all_text_contents()
    assert cells[:4] == ["results", str(results), "jsonl",
                         hashlib.sha256(results.read_bytes()).hexdigest()]


def test_markup_in_a_task_id_shows_as_text(opened):
    page, seen, _ = opened
    assert page.locator("script").count() == 1  # the page's own sorter, nothing else
    assert page.locator("body b, body img, body i").count() == 0
    ids = _column(page, 1)
    assert {SCRIPT_ID, BOLD_ID, IMG_ID} <= set(ids)
    assert SCRIPT_ID in page.locator("body").inner_text()
    assert seen["dialogs"] == []


def test_a_gate_page_names_the_baseline_its_digest_and_the_comparisons_criteria(tmp_path):
    """``passk gate --baseline --html``: both files read, each with its SHA-256 (computed
    here), and the comparison's level, correction and margin, each with where it came from."""
    new = ROOT / "tests" / "fixtures" / "stable.jsonl"
    copy = tmp_path / "old.jsonl"  # the last release's runs: here the same ones
    copy.write_bytes(new.read_bytes())
    page = tmp_path / "gate.html"
    status, _ = _passk("gate", str(new), "--baseline", str(copy), "--k", "2", "--margin",
                       "0.5", "--html", str(page))
    assert status == 1  # two tasks cannot show non-inferiority: the gate blocks, and says so
    text = page.read_text(encoding="utf-8")
    digest = hashlib.sha256(new.read_bytes()).hexdigest()
    assert (f'<tr><td>results</td><td class="id">{new}</td><td>jsonl</td>'
            f'<td class="id">{digest}</td>') in text
    assert f'<tr><td>baseline</td><td class="id">{copy}</td><td>jsonl</td>' in text
    assert "<tr><td>margin</td><td>0.5</td><td>command line (--margin 0.5)</td></tr>" in text
    assert "<tr><td>alpha</td><td>0.05</td><td>the default</td></tr>" in text
    assert "<tr><td>correction</td><td>holm</td><td>the default</td></tr>" in text
    assert '<div id="verdict" class="verdict blocked">gate: BLOCKED' in text
    assert "non-inferiority within 0.5 not shown" in text.split('<ul class="reasons">', 1)[1].split("</ul>", 1)[0]
