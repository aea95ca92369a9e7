"""The GitHub Action's step (``action.yml``): ``passk gate`` on results files, for CI.

    PASSK_RESULTS='runs/*.jsonl' python -m passk.integrations.action

(``scripts/gate_action.py``, which ``action.yml`` runs, is this module's :func:`main`.)
The action's inputs arrive as environment variables (``action.yml`` maps each input
to one, so no input is ever pasted into a shell line):

- ``PASSK_RESULTS``: one or more results files, directories or globs (``**`` recurses),
  separated by spaces or newlines (quote a path that has spaces); several are read as
  trials of one suite, as ``passk gate FILE FILE`` does;
- ``PASSK_BASELINE``: optional, a results file of the last release (``--baseline``);
- ``PASSK_POLICY``: optional, the gate policy file (``--policy``). Empty (the default):
  the repository's own, ``passk.toml`` or ``[tool.passk]`` in ``pyproject.toml``, found
  walking up from the working directory (the checkout) as ``passk gate`` finds it. With
  a policy, an input that would loosen it and results that declare looser criteria
  than it are refused (the step fails, exit 2);
- ``PASSK_CRITERIA``: ``declared`` gates exactly as the results' protocol declares and
  is an error on results that declare none; empty: the criteria below;
- ``PASSK_K``, ``PASSK_MIN_OVERALL``, ``PASSK_MAX_FLAKINESS``, ``PASSK_ON``,
  ``PASSK_CONFIDENCE``: the gate's criteria (empty: the policy's, else the default);
- ``PASSK_HTML``: optional, where to write the report as one self-contained HTML page
  (``passk gate --html``); ``action.yml`` uploads it as an artifact and links it from
  the job summary.

The gate is made once (:func:`passk.cli.commands.gate_report`) and rendered twice: the
JSON's numbers for the outputs, the Markdown for people. The Markdown goes under a
heading to the file named by ``GITHUB_STEP_SUMMARY``; the outputs ``verdict``
(``passed``, ``blocked`` or ``error``), ``pass-hat-k`` (the suite's mean pass^k at the
gate's k), ``interval`` (a JSON array), ``k`` and ``policy`` (the policy file, or empty)
to the file named by ``GITHUB_OUTPUT``. The exit status is ``passk gate``'s: 0 passed,
1 blocked, 2 bad input. Outside Actions, with neither variable set, it prints the same.
"""

from __future__ import annotations

import contextlib
import glob
import html
import io
import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passk.errors import PasskError

__all__ = ["ActionInputError", "annotate", "expand", "gate_arguments", "main",
           "suite_estimate"]

EXIT_PASSED, EXIT_BLOCKED, EXIT_BAD_INPUT = 0, 1, 2
#: The criteria inputs, each with its ``passk gate`` option.
CRITERIA = (("PASSK_K", "--k"), ("PASSK_MIN_OVERALL", "--min-overall"),
            ("PASSK_MAX_FLAKINESS", "--max-flakiness"), ("PASSK_ON", "--on"),
            ("PASSK_CONFIDENCE", "--confidence"))
_OUTPUTS = ("verdict", "pass-hat-k", "interval", "k", "policy")


class ActionInputError(PasskError):
    """An input the action cannot use; the message says which and what to do."""


def annotate(message: str) -> str:
    """An error annotation (a workflow command), its message escaped onto one line.

    Examples
    --------
    >>> annotate("a\\nb%")
    '::error title=passk gate::a%0Ab%25'
    """
    escaped = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"::error title=passk gate::{escaped}"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text.strip())}</pre>\n" if text.strip() else ""


def _env(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def expand(patterns: str, cwd: Path | None = None) -> list[str]:
    """The files and directories that ``patterns`` (globs, space or newline separated) name.

    Raises
    ------
    ActionInputError
        A glob that matches nothing, or no results at all.
    """
    found: list[str] = []
    for pattern in shlex.split(patterns):
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            if not matches:
                raise ActionInputError(f"results: the pattern {pattern!r} matches no file (in "
                                       f"{cwd or Path.cwd()})")
            found += matches
        else:
            found.append(pattern)  # passk gate names a missing file itself
    if not found:
        raise ActionInputError("results: no results file given (the input `results` is empty)")
    return list(dict.fromkeys(found))


def gate_arguments(env: Mapping[str, str]) -> list[str]:
    """``passk gate``'s arguments from the action's inputs.

    Examples
    --------
    >>> gate_arguments({"PASSK_RESULTS": "a.jsonl", "PASSK_K": "3", "PASSK_POLICY": "p.toml"})
    ['a.jsonl', '--policy', 'p.toml', '--k', '3']
    """
    args = expand(_env(env, "PASSK_RESULTS"))
    if _env(env, "PASSK_BASELINE"):
        args += ["--baseline", _env(env, "PASSK_BASELINE")]
    if _env(env, "PASSK_POLICY"):
        args += ["--policy", _env(env, "PASSK_POLICY")]
    criteria = _env(env, "PASSK_CRITERIA")
    given = [(flag, _env(env, var)) for var, flag in CRITERIA if _env(env, var)]
    if criteria == "declared":
        if given:
            raise ActionInputError(
                "criteria: 'declared' gates as the results declare; do not also give "
                f"{', '.join(flag.lstrip('-') for flag, _ in given)}")
    elif criteria:
        raise ActionInputError(
            f"criteria: {criteria!r} is not a choice: 'declared' (as the run's protocol "
            "declares), or leave it empty and give k, min-overall, max-flakiness, on, "
            "confidence")
    for flag, value in given:
        args += [flag, value]
    return args


def suite_estimate(report: Mapping[str, Any]) -> tuple[float | None, list[float] | None]:
    """The suite's mean pass^k estimate at the gate's k and its interval (the curve's)."""
    curve = report.get("curve") or {}
    ks = curve.get("k") or []
    if report.get("k") not in ks:
        return None, None
    i = ks.index(report["k"])
    return curve["pass_hat_k"][i], list(curve["pass_hat_k_ci"][i])


def _append(env: Mapping[str, str], variable: str, text: str) -> None:
    target = env.get(variable)
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(text)


def _write_outputs(env: Mapping[str, str], outputs: Mapping[str, str]) -> None:
    lines = "".join(f"{name}={outputs.get(name, '')}\n" for name in _OUTPUTS)
    _append(env, "GITHUB_OUTPUT", lines)
    print(lines, end="")


def _fail(env: Mapping[str, str], message: str, details: str = "") -> int:
    """Report bad input: an error annotation, a summary section, the outputs; status 2."""
    print(annotate(message))
    if details:
        print(details, file=sys.stderr)
    _append(env, "GITHUB_STEP_SUMMARY",
            f"## passk gate: error\n\n{html.escape(message)}\n\n{_pre(details)}\n")
    _write_outputs(env, {"verdict": "error"})
    return EXIT_BAD_INPUT


def main(env: Mapping[str, str] | None = None) -> int:
    """The action's step: gate, write the summary and the outputs, return the exit status."""
    from passk.analysis.report import format_report
    from passk.cli.commands import BadInput, build_parser, gate_report, html_page
    from passk.render.tables import escape_markdown, escape_text
    from passk.results.counts import ResultsError

    env = os.environ if env is None else env
    if _env(env, "PASSK_HTML"):  # an earlier step's page is never uploaded as this one's
        Path(_env(env, "PASSK_HTML")).unlink(missing_ok=True)
    try:
        args = gate_arguments(env)
    except ActionInputError as exc:
        return _fail(env, str(exc))
    print("passk gate " + shlex.join(args), file=sys.stderr)
    notes = io.StringIO()
    try:
        with contextlib.redirect_stderr(notes):
            parsed = build_parser().parse_args(["gate", *args])
            fr = gate_report(parsed)
    except SystemExit:  # argparse has said why on stderr
        said = notes.getvalue().strip()
        return _fail(env, said.splitlines()[-1] if said else "bad arguments", said)
    except (ResultsError, BadInput, ValueError, OSError) as exc:
        message = f"passk gate: error: {escape_text(str(exc))}"
        return _fail(env, message, notes.getvalue())
    report = fr.to_dict(curves=False)
    gate = report["gate"]
    said = notes.getvalue().strip()
    if _env(env, "PASSK_CRITERIA") == "declared" and not gate.get("declared"):
        return _fail(env, "criteria: 'declared', but these results declare no gate criteria (a "
                     "`passk run` log or the pytest plugin's --passk-log does): give k, "
                     "min-overall and max-flakiness instead", said)
    shown = escape_markdown(format_report(fr, markdown=True, curve=False))
    page = _env(env, "PASSK_HTML")
    if page:
        Path(page).parent.mkdir(parents=True, exist_ok=True)
        Path(page).write_text(html_page(parsed, fr), encoding="utf-8")
        print(f"passk gate: wrote {page}", file=sys.stderr)
    verdict = "passed" if gate["passed"] else "blocked"
    estimate, interval = suite_estimate(report)
    if said:
        print(said, file=sys.stderr)
    print(shown)
    files = ", ".join(f"<code>{html.escape(a)}</code>"
                      for a in expand(_env(env, "PASSK_RESULTS")))
    policy = gate.get("policy") or ""
    where = (f"policy <code>{html.escape(policy)}</code>" if policy
             else "no policy: criteria from the inputs")
    summary = f"## passk gate: {verdict.upper()}\n\n{files} ({where})\n\n{shown.strip()}\n"
    if said:
        summary += f"\n<details><summary>notes</summary>\n\n{_pre(said)}</details>\n"
    _append(env, "GITHUB_STEP_SUMMARY", summary + "\n")
    _write_outputs(env, {"verdict": verdict,
                         "pass-hat-k": "" if estimate is None else repr(estimate),
                         "interval": "" if interval is None else json.dumps(interval),
                         "k": str(report["k"]), "policy": policy})
    if not gate["passed"]:
        first = (gate.get("reasons") or ["blocked"])[0]
        print(annotate(f"BLOCKED: {first}"))
    return EXIT_PASSED if gate["passed"] else EXIT_BLOCKED


if __name__ == "__main__":
    raise SystemExit(main())
