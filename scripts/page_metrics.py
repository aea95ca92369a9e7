"""Print what each page of the built book costs a reader: raw Markdown, height, code share.

    python scripts/page_metrics.py [_build/html] [--json]

For every page of ``_toc.yml``, opened in offline headless Chromium at 1280 px wide
(Debian's ``/usr/bin/chromium`` through playwright, the browser test's set-up): the raw
pipe-table rows in the text outside code (what a reader sees as ``| a | b |`` instead
of a table), the other raw markup (code fences, unrendered roles and directives), the
page's height in px, and the share of that height taken by code cells (input and
output, as laid out, folded parts folded), and the output tables too wide for the page
(they scroll sideways). The definitions are those of
``tests/helpers/book_page.py``, which the browser test asserts on. For a notebook page,
also the longest code cell whose source the page shows unfolded, in lines, from the
notebook's tags (``tests/helpers/notebook_cells.py``, which
``tests/test_page_standards.py`` asserts on). Build the book first
(``jupyter-book build . -W -n --keep-going``).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "helpers"))

from book_page import PAGE_READING, pipe_rows, raw_markup
from notebook_cells import load, longest_visible_code
from offline_browser import CHROMIUM, CHROMIUM_ARGS, watch

VIEWPORT = {"width": 1280, "height": 900}
WAIT_FOR_MATH = """
async () => { if (window.MathJax && MathJax.startup && MathJax.startup.promise)
                await MathJax.startup.promise; }
"""


def toc_pages() -> list[str]:
    """The toc's documents as built pages, in reading order (both parts): the walk of the
    Chinese edition's script, ``zh_book.toc_entries``."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from zh_book import toc_entries

    return [f"{f}.html" for f in toc_entries(ROOT)]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def longest_visible(page_path: str) -> int | None:
    """Lines of the page's longest unfolded code cell; None for a page that is no notebook."""
    nb = ROOT / Path(page_path).with_suffix(".ipynb")
    return longest_visible_code(load(nb))[0] if nb.exists() else None


def measure(html_dir: Path, pages: list[str] | None = None) -> list[dict]:
    """One row per page of ``pages`` (default: the toc's): page, pipe_rows, other_raw,
    page_px, code_px, code_share, wide_tables, longest_code (lines)."""
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Quiet, directory=str(html_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    rows = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            for page_path in pages or toc_pages():
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                watch(context, page)
                page.goto(f"{url}/{page_path}", wait_until="load")
                # a busy machine can keep the network "not idle" past playwright's 30 s;
                # the math wait below is what the reading depends on
                page.wait_for_load_state("networkidle", timeout=180_000)
                page.evaluate(WAIT_FOR_MATH)
                seen = page.evaluate(PAGE_READING)
                context.close()
                raw = raw_markup(seen["text"])
                rows.append({
                    "page": page_path,
                    "pipe_rows": pipe_rows(seen["text"]),
                    "other_raw": len(raw) - pipe_rows(seen["text"]),
                    "page_px": seen["page_px"],
                    "code_px": seen["code_px"],
                    "code_share": round(seen["code_px"] / seen["page_px"], 3),
                    "wide_tables": seen["wide_tables"],
                    "longest_code": longest_visible(page_path),
                })
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", nargs="?", default=str(ROOT / "_build" / "html"))
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    html_dir = Path(args.html)
    if not (html_dir / "index.html").exists():
        print(f"page_metrics: {html_dir}/index.html not found: build the book first "
              "(jupyter-book build . -W -n --keep-going)", file=sys.stderr)
        return 2
    rows = measure(html_dir)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(f"{'page':48} {'pipe rows':>9} {'other raw':>9} {'height px':>9} "
          f"{'code px':>8} {'code':>5} {'wide tables':>11} {'longest code':>12}")
    for r in rows:
        print(f"{r['page']:48} {r['pipe_rows']:9d} {r['other_raw']:9d} {r['page_px']:9d} "
              f"{r['code_px']:8d} {r['code_share']:5.0%} {r['wide_tables']:11d} "
              f"{'-' if r['longest_code'] is None else r['longest_code']:>12}")
    total = {k: sum(r[k] for r in rows) for k in ("pipe_rows", "other_raw", "page_px", "code_px")}
    print(f"{'all pages':48} {total['pipe_rows']:9d} {total['other_raw']:9d} "
          f"{total['page_px']:9d} {total['code_px']:8d} "
          f"{total['code_px'] / total['page_px']:5.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
