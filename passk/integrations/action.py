"""The GitHub Action's step (``action.yml``): the gate on results files, for CI.

    PASSK_RESULTS='runs/*.jsonl' python -m passk.integrations.action

(``scripts/gate_action.py``, which ``action.yml`` runs, is this module's :func:`main`.)
It is a skin over :mod:`passk.api`, as ``passk gate`` is: the inputs arrive as
environment variables (``action.yml`` maps each input to one, so no input is ever
pasted into a shell line), each criterion's variable is the one
:data:`passk.gate.bind.CRITERIA` names and is parsed by the same type as the
command line's option, and :meth:`passk.api.Evaluation.gate` binds and judges.

- ``PASSK_RESULTS``: one or more results files, directories or globs (``**`` recurses),
  separated by spaces or newlines (quote a path that has spaces); several are read as
  trials of one suite, as ``passk gate FILE FILE`` does;
- ``PASSK_BASELINE``: optional, a results file of the last release (``--baseline``);
- ``PASSK_POLICY``: optional, the gate policy file (``--policy``); empty: the
  repository's own, found as ``passk gate`` finds it;
- ``PASSK_POLICY_REF``: the commit the policy is read from. Empty (the default): on a
  pull request, its base (``origin/$GITHUB_BASE_REF``, which ``action.yml`` fetches),
  so that the policy in force is the one already reviewed and merged, never the one
  the change under test brings; elsewhere, the checkout. A pull request that changes
  the policy is gated under the base's, and the job summary shows the change;
- ``PASSK_CRITERIA``: ``declared`` gates exactly as the results' protocol declares and
  is an error on results that declare none; empty: the criteria below;
- ``PASSK_K``, ``PASSK_MIN_OVERALL``, ``PASSK_MAX_FLAKINESS``, ``PASSK_ON``,
  ``PASSK_CONFIDENCE``, ``PASSK_MIN_RUNS``, ``PASSK_MODE``, ``PASSK_ALPHA``,
  ``PASSK_CORRECTION``, ``PASSK_MARGIN``: the gate's criteria (empty: the
  protocol's, else the policy's, else the default; looser than the policy: refused);
- ``PASSK_HTML``: optional, where to write the report as one self-contained HTML page.

The gate is made once and rendered twice: the JSON's numbers for the outputs, the
Markdown for people. The Markdown goes under a heading to the file named by
``GITHUB_STEP_SUMMARY``; the outputs ``verdict`` (``passed``, ``blocked`` or
``error``), ``pass-hat-k``, ``interval`` (a JSON array), ``k``, ``policy`` (the
policy's path from the repository's root, or empty) and ``policy-sha256`` to the file
named by ``GITHUB_OUTPUT``. The exit status is the error family's
(:mod:`passk.errors`): 0 passed, 1 blocked, 2 bad input.
"""

from __future__ import annotations

import glob
import html
import json
import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from passk.errors import EXIT_BAD_INPUT, PasskError

__all__ = ["ActionInputError", "annotate", "asked_of", "expand", "main", "policy_change",
           "policy_ref", "suite_estimate"]

#: The outputs, in the order they are written.
_OUTPUTS = ("verdict", "pass-hat-k", "interval", "k", "policy", "policy-sha256")


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


def _input_name(variable: str) -> str:
    """An environment variable as ``action.yml`` names its input (PASSK_MIN_OVERALL ->
    min-overall)."""
    return variable.removeprefix("PASSK_").lower().replace("_", "-")


def asked_of(env: Mapping[str, str]) -> dict[str, Any]:
    """What the inputs ask, by the binding's names (:func:`passk.gate.bind.asked_from`):
    each criterion's variable parsed by the type of its ``passk gate`` option.

    Raises
    ------
    ActionInputError
        A value the option's type refuses, naming the input; ``criteria: declared``
        with criteria given.

    Examples
    --------
    >>> asked_of({"PASSK_K": "3", "PASSK_MIN_OVERALL": "0.8"})["bar"]
    0.8
    """
    import argparse

    from passk.cli.commands import build_parser
    from passk.gate.bind import CRITERIA, asked_from

    gate = next(a for a in build_parser()._subparsers._group_actions  # type: ignore[union-attr]
                if isinstance(a, argparse._SubParsersAction)).choices["gate"]
    options = {flag: action for action in gate._actions for flag in action.option_strings}
    given: dict[str, Any] = {}
    for c in CRITERIA:
        text = _env(env, c.env) if c.env else ""
        if not text:
            continue
        action = options[c.flag]
        try:
            value = action.type(text) if callable(action.type) else text
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise ActionInputError(f"{_input_name(c.env or '')}: {exc}") from None
        if action.choices is not None and value not in action.choices:
            raise ActionInputError(f"{_input_name(c.env or '')}: {text!r} is not one of "
                                   f"{', '.join(map(str, action.choices))}")
        given[c.env or ""] = value
    criteria = _env(env, "PASSK_CRITERIA")
    if criteria == "declared" and given:
        raise ActionInputError(
            "criteria: 'declared' gates as the results declare; do not also give "
            f"{', '.join(_input_name(v) for v in given)}")
    if criteria and criteria != "declared":
        raise ActionInputError(
            f"criteria: {criteria!r} is not a choice: 'declared' (as the run's protocol "
            "declares), or leave it empty and give k, min-overall, max-flakiness, on, "
            "confidence")
    return asked_from(given, "env")


def policy_ref(env: Mapping[str, str], cwd: Path | None = None) -> str | None:
    """The commit the policy is read from: ``PASSK_POLICY_REF``, else on a pull request its
    base (``origin/BASE`` when fetched, else ``BASE``), else None (the checkout)."""
    import subprocess

    given = _env(env, "PASSK_POLICY_REF")
    if given:
        return given
    base = _env(env, "GITHUB_BASE_REF")
    if not base:
        return None
    from passk.gate.policy import repository_root

    remote = f"origin/{base}"
    # asked of the repository the policy is read from (a nested .git is not it)
    found = subprocess.run(["git", "rev-parse", "--verify", "-q", f"{remote}^{{commit}}"],
                           cwd=repository_root(cwd), capture_output=True, check=False)
    return remote if found.returncode == 0 else base


def policy_change(ref: str, cwd: Path | None = None) -> str:
    """The change the checkout makes to the policy files against ``ref`` (``git diff``), or
    empty: shown in the job summary, since the gate applies ``ref``'s policy. Every policy
    file of the repository (the outermost one, as the policy's search), wherever the step
    runs from."""
    import subprocess

    from passk.gate.policy import repository_root

    shown = subprocess.run(["git", "diff", "--no-color", ref, "--",
                            ":(top,glob)**/passk.toml", ":(top,glob)**/pyproject.toml"],
                           cwd=repository_root(cwd), capture_output=True, check=False)
    return shown.stdout.decode("utf-8", errors="replace") if shown.returncode == 0 else ""


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


def _fail(env: Mapping[str, str], message: str, details: str = "",
          status: int = EXIT_BAD_INPUT) -> int:
    """Report bad input: an error annotation, a summary section, the outputs; status 2."""
    print(annotate(message))
    if details:
        print(details, file=sys.stderr)
    _append(env, "GITHUB_STEP_SUMMARY",
            f"## passk gate: error\n\n{html.escape(message)}\n\n{_pre(details)}\n")
    _write_outputs(env, {"verdict": "error"})
    return status


def main(env: Mapping[str, str] | None = None) -> int:
    """The action's step: gate, write the summary and the outputs, return the exit status."""
    from passk.analysis.report import format_report
    from passk.api import Evaluation
    from passk.cli.commands import html_page
    from passk.errors import EXIT_BLOCKED, EXIT_OK, PasskError
    from passk.render.tables import escape_markdown, escape_text

    env = os.environ if env is None else env
    if _env(env, "PASSK_HTML"):  # an earlier step's page is never uploaded as this one's
        Path(_env(env, "PASSK_HTML")).unlink(missing_ok=True)
    notes: list[str] = []
    try:
        files = expand(_env(env, "PASSK_RESULTS"))
        asked = asked_of(env)
        ref = policy_ref(env)
        run = Evaluation(asked, _env(env, "PASSK_POLICY") or None, ref, command="gate",
                         say=notes.append, front="env")
        baseline = _env(env, "PASSK_BASELINE") or None
        fr = run.gate(files if len(files) > 1 else files[0], baseline)
    except PasskError as exc:
        return _fail(env, f"passk gate: error: {escape_text(str(exc))}", "\n".join(notes),
                     exc.exit_code)
    except OSError as exc:
        return _fail(env, f"passk gate: error: {escape_text(str(exc))}", "\n".join(notes))
    report = fr.to_dict(curves=False)
    gate = report["gate"]
    said = "\n".join(notes).strip()
    if _env(env, "PASSK_CRITERIA") == "declared" and not gate.get("declared"):
        return _fail(env, "criteria: 'declared', but these results declare no gate criteria (a "
                     "`passk run` log or the pytest plugin's --passk-log does): give k, "
                     "min-overall and max-flakiness instead", said)
    shown = escape_markdown(format_report(fr, markdown=True, curve=False))
    page = _env(env, "PASSK_HTML")
    if page:
        Path(page).parent.mkdir(parents=True, exist_ok=True)
        Path(page).write_text(html_page(fr, run.read, title=f"passk gate: {' '.join(files)}",
                                        baseline=baseline is not None), encoding="utf-8")
        notes.append(f"passk gate: wrote {page}")
    verdict = "passed" if gate["passed"] else "blocked"
    estimate, interval = suite_estimate(report)
    if said:
        print(said, file=sys.stderr)
    print(shown)
    listed = ", ".join(f"<code>{html.escape(a)}</code>" for a in files)
    policy = gate.get("policy") or ""
    where = (f"policy <code>{html.escape(policy)}</code>" if policy
             else "no policy: criteria from the inputs")
    summary = f"## passk gate: {verdict.upper()}\n\n{listed} ({where})\n\n{shown.strip()}\n"
    change = policy_change(ref) if ref is not None else ""
    if change:
        summary += ("\n**This pull request changes the policy.** The gate applied the policy "
                    f"of <code>{html.escape(ref or '')}</code>, the one already reviewed; the "
                    "change below takes effect once it is merged.\n\n<details><summary>the "
                    f"policy's change</summary>\n\n{_pre(change)}</details>\n")
    if said:
        summary += f"\n<details><summary>notes</summary>\n\n{_pre(said)}</details>\n"
    _append(env, "GITHUB_STEP_SUMMARY", summary + "\n")
    _write_outputs(env, {"verdict": verdict,
                         "pass-hat-k": "" if estimate is None else repr(estimate),
                         "interval": "" if interval is None else json.dumps(interval),
                         "k": str(report["k"]), "policy": policy,
                         "policy-sha256": gate.get("policy_sha256") or ""})
    if not gate["passed"]:
        first = (gate.get("reasons") or ["blocked"])[0]
        print(annotate(f"BLOCKED: {first}"))
    return EXIT_OK if gate["passed"] else EXIT_BLOCKED


if __name__ == "__main__":
    raise SystemExit(main())
