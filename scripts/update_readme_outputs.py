"""Run the shell sessions of the README and of the book's Part II, and write their real
outputs back into them.

    python scripts/update_readme_outputs.py            # rewrite every document's outputs
    python scripts/update_readme_outputs.py --check    # change nothing; exit 1 on a mismatch
    python scripts/update_readme_outputs.py book/using/gate.md   # one document

The documents are :data:`DOCUMENTS`: ``README.md``, ``README.zh-CN.md`` and every page of ``book/using/``
(the book's Part II, "Using passk"), whose sessions are the reference's examples.

**The convention.** A fenced block whose info string is ``console`` is a shell session:
each line that starts with ``$ `` is a command, the lines after it (up to the next
command) are what it prints, stdout and stderr together, in the order printed. A line
``...`` stands for any number of lines left out (none included). Every block runs in
one ``bash`` process (so ``echo $?`` sees the previous command's status), from a fresh
temporary directory that holds the repository's files (symlinks), so it runs "from the
repository root" and what a command writes (``runs.jsonl``) lands there, not in the
checkout. The shell is a fresh one, as the README says to use it: the environment of a
new login (the system's ``PATH``, ``HOME``, the locale; ``PYTHONPATH`` only if it is set,
as a worktree's tests set it), nothing of the Python running this script, and first the
README's own ``. .venv/bin/activate`` (``.venv`` being the venv running this script, the
checkout's when ``scripts/test.sh`` runs it). Without that line ``passk`` is not found.

Rewriting keeps each block's shape: the commands, and for each ``...`` the lines around
it: every segment between ``...`` lines keeps its length, re-anchored on the first line
of the new output that starts like the segment's first line. Anything else in the
README is left alone. ``tests/test_readme_commands.py`` uses the same parser and runner
and prints a diff on a mismatch.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: Every document whose ``console`` blocks are run: the README and the book's Part II.
DOCUMENTS = [README, ROOT / "README.zh-CN.md", *sorted((ROOT / "book" / "using").rglob("*.md"))]
PROMPT = "$ "
ELLIPSIS = "..."
MARK = "@@readme-session-command-done@@"
# a README session runs as long as its commands take (minutes on a busy machine); the
# limit only ends a hang: the tests' ceiling (tests/helpers/patience.py)
TIMEOUT_S = float(os.environ.get("PASSK_TEST_CEILING_S", "900"))
# what may differ between two runs and so is not compared (applied to both sides)
NORMALISE = [(re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|µs)\b(?= |$|\)|,|;)"), "<duration>")]
# the checkout's entries that a session must not see (build outputs, caches, the venv)
# what the README tells a fresh shell to run first (its "The `passk` command" paragraph)
ACTIVATE = ". .venv/bin/activate"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# what a new login shell has of the environment, and PYTHONPATH (a worktree's tests set it)
KEPT = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR",
        "PYTHONPATH")
HIDDEN = {".git", ".venv", "_build", "build", "dist", ".pytest_cache", ".hypothesis",
          ".mypy_cache", ".ruff_cache", ".jupyter_cache"}


@dataclass
class Command:
    line: str                    # without the prompt
    expected: list[str] = field(default_factory=list)


@dataclass
class Session:
    start: int                   # index of the first line inside the fence
    end: int                     # index of the closing fence
    commands: list[Command] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.commands[0].line if self.commands else "(empty)"


def parse(text: str) -> list[Session]:
    """The ``console`` blocks of a Markdown text."""
    lines = text.split("\n")
    sessions, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            j = i + 1
            session = Session(start=j, end=j)
            while j < len(lines) and lines[j].strip() != "```":
                line = lines[j]
                if line.startswith(PROMPT):
                    session.commands.append(Command(line[len(PROMPT):]))
                elif session.commands:
                    session.commands[-1].expected.append(line)
                j += 1
            session.end = j
            sessions.append(session)
            i = j
        i += 1
    return sessions


def _workdir(tmp: Path) -> Path:
    """A directory that looks like the repository root: a symlink per top-level entry."""
    for entry in ROOT.iterdir():
        if entry.name not in HIDDEN:
            (tmp / entry.name).symlink_to(entry)
    return tmp


def fresh_shell_env() -> dict[str, str]:
    """A new login's environment: no virtual environment, the system's PATH."""
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    env.update(PATH=SYSTEM_PATH, PYTHONUNBUFFERED="1", COLUMNS="200", NO_COLOR="1")
    return env


def _venv() -> Path:
    """The virtual environment running this script: the README's ``.venv``."""
    if sys.prefix == sys.base_prefix:
        raise SystemExit(f"run this from the project's virtual environment ({sys.executable} "
                         "is not in one): .venv/bin/python scripts/update_readme_outputs.py")
    return Path(sys.prefix)


def run(session: Session, *, activate: bool = True) -> list[list[str]]:
    """Each command's output lines, from one fresh bash in a fresh root-like directory."""
    script = [f"{ACTIVATE} >/dev/null 2>&1"] if activate else []
    for command in session.commands:
        script.append(f"{{ {command.line}\n}} 2>&1; __rc=$?; echo {MARK}; (exit $__rc)")
    with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
        workdir = _workdir(Path(tmp))
        (workdir / ".venv").symlink_to(_venv())
        proc = subprocess.run(["bash", "--noprofile", "--norc"], input="\n".join(script),
                              cwd=workdir, env=fresh_shell_env(), capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
    # the session's directory is a fresh temporary one: shown as the root it stands for
    out = (proc.stdout + proc.stderr).replace(f"{workdir}/", "").replace(str(workdir), ".")
    chunks = out.split(MARK + "\n")
    outputs = [chunk.rstrip("\n").split("\n") if chunk.strip("\n") else []
               for chunk in chunks[:len(session.commands)]]
    while len(outputs) < len(session.commands):
        outputs.append([f"(bash stopped before this command: {proc.stderr[-300:]!r})"])
    return outputs


def _norm(line: str) -> str:
    line = line.rstrip()
    for pattern, repl in NORMALISE:
        line = pattern.sub(repl, line)
    return line


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` fits ``expected``, whose ``...`` lines stand for any lines."""
    exp = [_norm(x) for x in expected]
    act = [_norm(x) for x in actual]

    def fit(i: int, j: int) -> bool:
        if i == len(exp):
            return j == len(act)
        if exp[i] == ELLIPSIS:
            return any(fit(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and fit(i + 1, j + 1)

    return fit(0, 0)


def regenerate(expected: list[str], actual: list[str]) -> list[str] | None:
    """``actual`` cut to the shape of ``expected`` (see the module docstring), or None."""
    if ELLIPSIS not in expected:
        return list(actual)
    segments: list[list[str]] = [[]]
    for line in expected:
        if line.strip() == ELLIPSIS:
            segments.append([])
        else:
            segments[-1].append(line)
    out: list[str] = []
    pos = 0
    for n, segment in enumerate(segments):
        if n > 0:
            out.append(ELLIPSIS)
        if not segment:
            continue
        if n == 0:
            start = 0
        elif n == len(segments) - 1 and not segment[0].strip():
            start = len(actual) - len(segment)
        else:
            head = segment[0][:12]
            start = next((k for k in range(pos, len(actual))
                          if actual[k].startswith(head)), None)
            if start is None:
                return None
        out += actual[start:start + len(segment)]
        pos = start + len(segment)
    return out


def diff(expected: list[str], actual: list[str]) -> str:
    import difflib

    return "\n".join(difflib.unified_diff(expected, actual, "README shows", "command printed",
                                          lineterm="", n=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("documents", nargs="*", type=Path, default=DOCUMENTS)
    args = parser.parse_args(argv)
    return max(_update(doc.resolve(), check=args.check) for doc in args.documents)


def _update(document: Path, *, check: bool) -> int:
    """Run one document's sessions; rewrite its outputs unless ``check``."""
    text = document.read_text(encoding="utf-8")
    lines = text.split("\n")
    failed = 0
    for session in reversed(parse(text)):  # from the end: indices stay valid
        outputs = run(session)
        body: list[str] = []
        for command, actual in zip(session.commands, outputs):
            body.append(PROMPT + command.line)
            if matches(command.expected, actual):
                body += command.expected
                continue
            failed += 1
            print(f"$ {command.line}\n{diff(command.expected, actual)}\n")
            new = regenerate(command.expected, actual)
            if new is None:
                print("  (cannot keep the `...` shape: edit this output by hand)")
                new = command.expected
            body += new
        lines[session.start:session.end] = body
    name = document.relative_to(ROOT)
    if failed and not check:
        document.write_text("\n".join(lines), encoding="utf-8")
        print(f"update_readme_outputs: rewrote {failed} {'output' if failed == 1 else 'outputs'} in {name}")
    elif not failed:
        print(f"update_readme_outputs: every output in {name} is what its command prints")
    return 1 if (failed and check) else 0


if __name__ == "__main__":
    raise SystemExit(main())
