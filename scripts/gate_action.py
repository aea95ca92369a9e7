"""The GitHub Action's step (action.yml): ``passk gate`` on results files, for CI.

    PASSK_RESULTS='runs/*.jsonl' python scripts/gate_action.py

Reads the action's inputs from environment variables (``action.yml`` maps each input to
one, so no input is ever pasted into a shell line):

- ``PASSK_RESULTS``: one or more results files, directories or globs (``**`` recurses),
  separated by spaces or newlines (quote a path that has spaces); several are read as
  trials of one suite, as ``passk gate FILE FILE`` does;
- ``PASSK_BASELINE``: optional, a results file of the last release (``--baseline``);
- ``PASSK_CRITERIA``: ``declared`` gates exactly as the results' protocol declares (the
  bar, the cap, k, what to gate on: a ``passk run`` log or the pytest plugin's
  ``--passk-log`` declares them) and is an error on results that declare none; empty:
  the criteria below, each defaulting as ``passk gate`` does (the protocol's, else
  k = the fewest runs of a task, bar 0.7, cap 0.2);
- ``PASSK_K``, ``PASSK_MIN_OVERALL``, ``PASSK_MAX_FLAKINESS``, ``PASSK_ON``,
  ``PASSK_CONFIDENCE``: the gate's criteria (empty: the default).

Runs ``python -m passk gate`` twice with the same arguments (``--json`` for the numbers,
``--markdown`` for people), appends the Markdown report under a heading to the file
named by ``GITHUB_STEP_SUMMARY`` (the job's summary page), writes the outputs
``verdict`` (``passed``, ``blocked`` or ``error``), ``pass-hat-k`` (the suite's mean pass^k
estimate at the gate's k), ``interval`` (its confidence interval, a JSON array) and ``k``
to the file named by ``GITHUB_OUTPUT``, and exits with ``passk gate``'s status: 0 passed,
1 blocked, 2 bad input (which fails the step). Outside Actions, with neither variable
set, it prints the same. ``tests/test_action.py`` runs it on shipped files.
"""

from __future__ import annotations

import glob
import html
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

EXIT_PASSED, EXIT_BLOCKED, EXIT_BAD_INPUT = 0, 1, 2
CRITERIA = [("PASSK_K", "--k"), ("PASSK_MIN_OVERALL", "--min-overall"),
            ("PASSK_MAX_FLAKINESS", "--max-flakiness"), ("PASSK_ON", "--on"),
            ("PASSK_CONFIDENCE", "--confidence")]


class BadInput(Exception):
    """An input the action cannot use; the message says which and what to do."""


def annotate(message: str) -> str:
    """An error annotation (a workflow command), its message escaped onto one line."""
    escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::error title=passk gate::{escaped}"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text.strip())}</pre>\n" if text.strip() else ""


def _env(name: str) -> str:
    return os.environ.get(name, "").strip()


def expand(patterns: str) -> list[str]:
    """The files and directories that ``patterns`` (globs, space or newline separated) name."""
    found: list[str] = []
    for pattern in shlex.split(patterns):
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise BadInput(f"results: the pattern {pattern!r} matches no file (in "
                               f"{Path.cwd()})")
            found += matches
        else:
            found.append(pattern)  # passk gate names a missing file itself
    if not found:
        raise BadInput("results: no results file given (the input `results` is empty)")
    return list(dict.fromkeys(found))


def gate_arguments() -> list[str]:
    """``passk gate``'s arguments from the action's inputs."""
    args = expand(_env("PASSK_RESULTS"))
    if _env("PASSK_BASELINE"):
        args += ["--baseline", _env("PASSK_BASELINE")]
    criteria = _env("PASSK_CRITERIA")
    given = [(flag, _env(var)) for var, flag in CRITERIA if _env(var)]
    if criteria == "declared":
        if given:
            raise BadInput("criteria: 'declared' gates as the results declare; do not also "
                           f"give {', '.join(flag.lstrip('-') for flag, _ in given)}")
    elif criteria:
        raise BadInput(f"criteria: {criteria!r} is not a choice: 'declared' (as the run's "
                       "protocol declares), or leave it empty and give k, min-overall, "
                       "max-flakiness, on, confidence")
    for flag, value in given:
        args += [flag, value]
    return args


def run_gate(args: list[str], mode: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "passk", "gate", *args, mode], env=env,
                          capture_output=True, text=True, check=False)


def suite_estimate(report: dict) -> tuple[float | None, list[float] | None]:
    """The suite's mean pass^k estimate at the gate's k and its interval (the curve's)."""
    curve = report.get("curve") or {}
    ks = curve.get("k") or []
    if report.get("k") not in ks:
        return None, None
    i = ks.index(report["k"])
    return curve["pass_hat_k"][i], list(curve["pass_hat_k_ci"][i])


def _append(variable: str, text: str) -> None:
    target = os.environ.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(text)


def write_outputs(outputs: dict[str, str]) -> None:
    lines = "".join(f"{name}={value}\n" for name, value in outputs.items())
    _append("GITHUB_OUTPUT", lines)
    print(lines, end="")


def fail(message: str, details: str = "") -> int:
    """Report bad input: an error annotation, a summary section, the outputs; status 2."""
    print(annotate(message))
    if details:
        print(details, file=sys.stderr)
    _append("GITHUB_STEP_SUMMARY",
            f"## passk gate: error\n\n{html.escape(message)}\n\n{_pre(details)}\n")
    write_outputs({"verdict": "error", "pass-hat-k": "", "interval": "", "k": ""})
    return EXIT_BAD_INPUT


def main() -> int:
    try:
        args = gate_arguments()
    except BadInput as exc:
        return fail(str(exc))
    print("passk gate " + shlex.join(args), file=sys.stderr)
    numbers = run_gate(args, "--json")
    if numbers.returncode not in (EXIT_PASSED, EXIT_BLOCKED):
        last = numbers.stderr.strip().splitlines()[-1:] or [f"exit {numbers.returncode}"]
        return fail(last[0], numbers.stderr)
    report = json.loads(numbers.stdout)
    gate = report["gate"]
    if _env("PASSK_CRITERIA") == "declared" and not gate.get("declared"):
        return fail("criteria: 'declared', but these results declare no gate criteria (a "
                    "`passk run` log or the pytest plugin's --passk-log does): give k, "
                    "min-overall and max-flakiness instead", numbers.stderr)
    shown = run_gate(args, "--markdown")
    if shown.returncode != numbers.returncode:
        return fail(f"passk gate --markdown exited {shown.returncode}, --json "
                    f"{numbers.returncode}", shown.stderr)
    verdict = "passed" if gate["passed"] else "blocked"
    estimate, interval = suite_estimate(report)
    notes = numbers.stderr.strip()
    print(notes, file=sys.stderr)
    print(shown.stdout)
    files = ", ".join(f"<code>{html.escape(a)}</code>" for a in expand(_env("PASSK_RESULTS")))
    summary = f"## passk gate: {verdict.upper()}\n\n{files}\n\n{shown.stdout.strip()}\n"
    if notes:
        summary += f"\n<details><summary>notes</summary>\n\n{_pre(notes)}</details>\n"
    _append("GITHUB_STEP_SUMMARY", summary + "\n")
    write_outputs({"verdict": verdict,
                   "pass-hat-k": "" if estimate is None else repr(estimate),
                   "interval": "" if interval is None else json.dumps(interval),
                   "k": str(report["k"])})
    if not gate["passed"]:
        first = (gate.get("reasons") or ["blocked"])[0]
        print(annotate(f"BLOCKED: {first}"))
    return numbers.returncode


if __name__ == "__main__":
    raise SystemExit(main())
