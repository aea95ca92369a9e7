"""The shell sessions of the README and of the book's Part II run as written, and print
what the page shows.

Every ```` ```console ```` block of README.md and of every ``book/using/`` page is run by
``scripts/update_readme_outputs.py``'s runner (one bash process per block, from a fresh
directory that holds the repository's files, so "from the repository root" without
writing into the checkout; a fresh shell's environment, with only what the README says to
do first: ``. .venv/bin/activate``), and each command's output, stdout and stderr together, is
compared with the lines the README shows under it (``...`` stands for lines left out;
durations are masked). On a mismatch the test prints a diff; after an intended change,
``python scripts/update_readme_outputs.py`` writes the new outputs into the README.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "update_readme_outputs", ROOT / "scripts" / "update_readme_outputs.py")
readme = importlib.util.module_from_spec(_spec)
sys.modules["update_readme_outputs"] = readme  # dataclasses look their module up there
_spec.loader.exec_module(readme)

SESSIONS = [(doc.relative_to(readme.ROOT).as_posix(), session)
            for doc in readme.DOCUMENTS
            for session in readme.parse(doc.read_text(encoding="utf-8"))]
USING = readme.ROOT / "book" / "using" / "index.md"


def test_the_documents_have_sessions_that_use_shipped_files():
    commands = [c.line for _, s in SESSIONS for c in s.commands]
    assert len(SESSIONS) >= 8 and len(commands) >= 16, commands
    for name in ("passk report", "passk gate", "passk diff", "passk curves", "passk plan",
                 "passk run", "passk rank", "passk policy"):
        assert any(c.startswith(name) for c in commands), f"no `{name}` session"
    assert any(doc == "README.md" for doc, _ in SESSIONS), "the README shows no session"


def test_the_documents_say_how_the_command_is_reached():
    for doc in (readme.README, USING):
        text = doc.read_text(encoding="utf-8")
        assert f"{readme.ACTIVATE}     #" in text, f"{doc.name} no longer says `{readme.ACTIVATE}`"
        assert ".venv/bin/passk --help" in text, doc
    using = " ".join(USING.read_text(encoding="utf-8").split())
    assert f"after `{readme.ACTIVATE}`" in using  # said where the sessions are introduced


def _session(*lines: str) -> readme.Session:
    return readme.Session(start=0, end=0, commands=[readme.Command(x) for x in lines])


def test_a_fresh_shell_finds_passk_only_after_activating():
    """The sessions' shell is fresh: no passk until the README's activation line."""
    without = readme.run(_session("passk --help", "echo $?", "echo $VIRTUAL_ENV"),
                         activate=False)
    assert "passk: command not found" in without[0][-1], without
    assert without[1:] == [["127"], []]
    activated = readme.run(_session("command -v passk python"))
    bin_dir = Path(sys.prefix) / "bin"
    assert activated == [[str(bin_dir / "passk"), str(bin_dir / "python")]]


@pytest.mark.parametrize(("document", "session"), SESSIONS,
                         ids=[f"{d}:{s.name[:50]}" for d, s in SESSIONS])
def test_session_prints_what_the_page_shows(document, session):
    outputs = readme.run(session)
    problems = []
    for command, actual in zip(session.commands, outputs):
        if not readme.matches(command.expected, actual):
            problems.append(f"$ {command.line}\n{readme.diff(command.expected, actual)}")
    assert not problems, (
        f"{document} shows outputs that its commands do not print (if the change is "
        f"intended: python scripts/update_readme_outputs.py {document}):\n\n"
        + "\n\n".join(problems))


@pytest.mark.parametrize(("expected", "actual", "ok"), [
    (["a", "...", "z"], ["a", "b", "c", "z"], True),
    (["a", "...", "z"], ["a", "z"], True),
    (["a", "...", "z"], ["a", "b"], False),
    (["a", "z"], ["a", "b", "z"], False),
    (["...", "c", "..."], ["a", "b", "c", "d"], True),
    (["done in 0.53 s"], ["done in 1.2 s"], True),
    (["k = 5"], ["k = 6"], False),
])
def test_matching_with_ellipsis(expected, actual, ok):
    assert readme.matches(expected, actual) is ok


def test_regenerate_keeps_the_shape():
    expected = ["head", "row 1", "...", "CI: x", "", "gate: old", "  - a", "..."]
    actual = ["head", "row 9", "row 8", "CI: x", "", "gate: new", "  - b", "  - c"]
    new = readme.regenerate(expected, actual)
    assert new == ["head", "row 9", "...", "CI: x", "", "gate: new", "  - b", "..."]
    assert readme.matches(new, actual)
