"""Run the README's shell sessions, and write their real outputs back into it.

    python scripts/update_readme_outputs.py            # rewrite README.md's outputs
    python scripts/update_readme_outputs.py --check    # change nothing; exit 1 on a mismatch

**The convention.** A fenced block whose info string is ``console`` is a shell session:
each line that starts with ``$ `` is a command, the lines after it (up to the next
command) are what it prints, stdout and stderr together, in the order printed. A line
``...`` stands for any number of lines left out (none included). Every block runs in
one ``bash`` process (so ``echo $?`` sees the previous command's status), from a fresh
temporary directory that holds the repository's files (symlinks), so it runs "from the
repository root" and what a command writes (``runs.jsonl``) lands there, not in the
checkout. ``passk`` and ``python`` are the current environment's.

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
PROMPT = "$ "
ELLIPSIS = "..."
MARK = "@@readme-session-command-done@@"
TIMEOUT_S = 120
# what may differ between two runs and so is not compared (applied to both sides)
NORMALISE = [(re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|µs)\b(?= |$|\)|,|;)"), "<duration>")]
# the checkout's entries that a session must not see (build outputs, caches, the venv)
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


def run(session: Session) -> list[list[str]]:
    """Each command's output lines, from one bash process in a fresh root-like directory."""
    script = []
    for command in session.commands:
        script.append(f"{{ {command.line}\n}} 2>&1; __rc=$?; echo {MARK}; (exit $__rc)")
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", PYTHONUNBUFFERED="1",
               COLUMNS="200", NO_COLOR="1")
    with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
        proc = subprocess.run(["bash", "--noprofile", "--norc"], input="\n".join(script),
                              cwd=_workdir(Path(tmp)), env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
    chunks = (proc.stdout + proc.stderr).split(MARK + "\n")
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
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
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
    if failed and not args.check:
        args.readme.write_text("\n".join(lines), encoding="utf-8")
        print(f"update_readme_outputs: rewrote {failed} output(s) in {args.readme}")
    elif not failed:
        print("update_readme_outputs: every output in the README is what its command prints")
    return 1 if (failed and args.check) else 0


if __name__ == "__main__":
    raise SystemExit(main())
