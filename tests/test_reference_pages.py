"""The book's Part II is the reference: every command, option, policy key and gate mode is
in it, every page of it is in the book, and the README stays a front door into it."""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
import sys
from pathlib import Path

import pytest

from passk.criteria import GATE_MODES
from passk.gate import policy

ROOT = Path(__file__).resolve().parents[1]
USING = ROOT / "book" / "using"
README = ROOT / "README.md"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    """Every subcommand's parser, as the book's {passk-help} directive finds them."""
    spec = importlib.util.spec_from_file_location("passk_reference",
                                                  ROOT / "_ext" / "passk_reference.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    return {name: parser for name, parser in reference.commands().items() if name}


def _toc_files() -> set[str]:
    """Every document _toc.yml names: the walk of the Chinese edition's script."""
    spec = importlib.util.spec_from_file_location("zh_book", ROOT / "scripts" / "zh_book.py")
    zh_book = sys.modules.setdefault("zh_book", importlib.util.module_from_spec(spec))
    if not hasattr(zh_book, "toc_entries"):
        spec.loader.exec_module(zh_book)
    return set(zh_book.toc_entries(ROOT))


def test_the_readme_is_a_front_door():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines: move reference to book/using/"
    links = re.findall(r"\]\((book/using/[^)#]+)", "\n".join(lines))
    assert len(links) >= 10, links
    for link in links:
        assert (ROOT / link).is_file(), f"README links to {link}, which does not exist"


def test_every_part_ii_page_is_in_the_book():
    pages = {p.relative_to(ROOT).with_suffix("").as_posix() for p in USING.rglob("*.md")}
    missing = pages - _toc_files()
    assert not missing, f"pages of book/using/ that _toc.yml does not list: {sorted(missing)}"


def test_the_command_reference_covers_every_command():
    text = (USING / "cli.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"```\{passk-help\} ?(\S*)", text))
    assert shown == {"", *_subcommands()}, (shown, set(_subcommands()))


def test_the_built_command_reference_shows_every_option():
    page = ROOT / "_build" / "html" / "book" / "using" / "cli.html"
    if not page.exists():
        pytest.fail(f"{page} is not built: bash scripts/book.sh", pytrace=False)
    text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))
    for name, parser in _subcommands().items():
        for action in parser._actions:
            for option in action.option_strings:
                assert option in text, f"passk {name} {option} is not in the built cli.html"


def test_the_gate_page_names_every_policy_key_and_mode():
    text = (USING / "gate.md").read_text(encoding="utf-8")
    keys = set(policy._TOP) | {k for keys in policy._TABLES.values() for k in keys}
    for key in sorted(keys):
        k = re.escape(key)
        assert re.search(rf"`{k}`|[\[.]{k}\]", text), (
            f"policy key {key!r} is not in book/using/gate.md")
    modes = text.split("## The gate modes", 1)[1].split("\n## ", 1)[0]
    for mode in GATE_MODES:
        assert f"| `{mode}`" in modes, f"gate mode {mode!r} has no row in gate.md's modes table"


def test_the_python_reference_documents_the_api():
    text = (USING / "api.md").read_text(encoding="utf-8")
    for module in ("passk.api", "passk.metrics", "passk.results.read", "passk.gate.bind",
                   "passk.gate.policy", "passk.run.runner", "passk.errors"):
        assert f".. automodule:: {module}" in text, module
