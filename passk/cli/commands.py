"""The ``passk`` command: the only module that parses arguments or prints.

Exit codes: 0 success (the gate passed; no regression shown), 1 the gate blocked (a
regression shown), 2 bad input, 3 inconclusive (``passk diff --margin`` only), 130
interrupted. Bad input is one line on stderr naming the file and the line; never a
traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast

from passk.api import Evaluation, label

# Only what the parser needs is imported here; each command imports the rest when it
# runs, so `passk --help` and a small report start in a fraction of a second.
from passk.cli.options import (
    int_list,
    looks,
    margin,
    open_probability,
    positive_int,
    probability,
    risk_k,
    whole,
)
from passk.criteria import CORRECTIONS, GATE_MODES
from passk.errors import (
    EXIT_BAD_INPUT,
    EXIT_BLOCKED,
    EXIT_INCONCLUSIVE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    BadInput,
    PasskError,
)
from passk.gate.bind import CRITERIA, InForce, asked_from, bind
from passk.gate.policy import (
    POLICY_FILE,
    Policy,
)
from passk.metrics import CI_METHODS
from passk.render.words import plural
from passk.results.counts import with_unrun_tasks
from passk.results.read import FORMATS, Results
from passk.stability import CLASS_THRESHOLD, DEFAULT_CRITERIA, DEMO_SEED, GATE_ON

if TYPE_CHECKING:
    from passk.analysis.report import FileReport


#: Extensions whose format is fixed (nothing to detect, so nothing said on stderr).
_EXTENSION_FORMATS = (".jsonl", ".ndjson", ".csv")
#: Reports over more tasks than this print compact JSON (one line) for speed.
_COMPACT_JSON_TASKS = 10_000


def _print_json(payload: Any, *, compact: bool = False) -> None:
    # indent=2 for people; a very large report is printed compact (the C encoder is ~10x faster)
    print(json.dumps(payload, indent=None if compact else 2, allow_nan=False))


def _emit(text: str, *, markdown: bool = False) -> None:
    """Print a report: control characters from the files escaped, and for Markdown HTML too
    (JSON is printed exact by :func:`_print_json`)."""
    from passk.render.tables import escape_markdown, escape_text

    print(escape_markdown(text) if markdown else escape_text(text, keep_newlines=True))


def _evaluation(args: argparse.Namespace) -> Evaluation:
    """The command's evaluation (:class:`passk.api.Evaluation`): what was asked, by the
    binding's names, the policy's source, notes on stderr. Made once per command."""
    if "_evaluation" not in vars(args):
        asked = asked_from(vars(args), "cli")
        asked.update(k_for=dict(getattr(args, "k_for", None) or []),
                     format=getattr(args, "format", "auto"),
                     ci_method=getattr(args, "ci_method", "exact"))
        vars(args)["_evaluation"] = Evaluation(
            asked, getattr(args, "policy_file", None), getattr(args, "policy_ref", None),
            command=args.command, say=lambda line: print(line, file=sys.stderr))
    return cast("Evaluation", vars(args)["_evaluation"])


def _policy(args: argparse.Namespace, paths: Sequence[str] = ()) -> Policy | None:
    """The policy in force, read once (:meth:`passk.api.Evaluation.policy`)."""
    return _evaluation(args).policy(paths)


def _asked(args: argparse.Namespace, files: int = 1) -> dict[str, Any]:
    """What the command was given, by the binding's names (:func:`passk.gate.bind.asked_from`)."""
    return {**_evaluation(args).asked, "files": files}


def _read(args: argparse.Namespace, path: str | Sequence[str] | None = None, *,
          judged: bool = True) -> Results:
    """Read a results file (or several, as trials of one suite), as the API reads it."""
    return _evaluation(args).read_all([(path if path is not None else args.file, judged)])[0]


def _incomplete_lines(args: argparse.Namespace, named: Sequence[tuple[str, Results]]
                      ) -> list[str]:
    """The one rule for incomplete inputs: each one named, with what it lacks."""
    return [f"incomplete input {path}: {why}" for path, r in named for why in r.incomplete]


def _bound(args: argparse.Namespace, results: Results) -> InForce:
    """The criteria in force for ``results`` (:meth:`passk.api.Evaluation.bound`)."""
    return _evaluation(args).bound(results)


def _file_report(args: argparse.Namespace, results: Results | None = None) -> FileReport:
    """Score and judge a file under the criteria in force (:meth:`passk.api.Evaluation.report`)."""
    return _evaluation(args).report(results if results is not None else _read(args))


def cmd_demo(args: argparse.Namespace) -> int:
    """``passk demo`` (and ``python -m passk.stability``): the chapter's suite, before and after."""
    from passk.run.evaluate import demo_text

    print(demo_text(args.seed, k=args.k, as_json=args.json))
    return EXIT_OK


def cmd_curves(args: argparse.Namespace) -> int:
    """``passk curves``: pass@k and pass^k for k = 1..K at a single-run success rate p."""
    import numpy as np

    from passk.metrics import pass_at_k, pass_hat_k
    from passk.render.tables import json_number

    ks = np.arange(1, args.k + 1)
    at, hat = np.atleast_1d(pass_at_k(args.p, ks)), np.atleast_1d(pass_hat_k(args.p, ks))
    if args.json:
        _print_json({"p": args.p, "k": ks.tolist(), "pass_at_k": list(map(json_number, at)),
                     "pass_hat_k": list(map(json_number, hat))})
        return EXIT_OK
    print(f"p = {args.p}")
    print(f"{'k':>3}  {'pass@k':>8}  {'pass^k':>8}")
    for k, a, h in zip(ks, at, hat):
        print(f"{k:>3}  {a:>8.4f}  {h:>8.4f}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    """``passk report FILE``: per-task table, the suite curve and the gate."""
    from passk.analysis.report import format_report

    fr = _file_report(args)
    if args.plot:
        from passk.book.plots import plot_report

        plot_report(fr, args.plot)
        print(f"passk report: wrote {args.plot}", file=sys.stderr)
    _write_html(args, fr)
    if args.json:
        _print_json(fr.to_dict(), compact=len(fr.results) > _COMPACT_JSON_TASKS)
    else:
        _emit(format_report(fr, markdown=args.markdown), markdown=args.markdown)
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    """``passk gate FILE``: the dual gate under the policy and the run's protocol; with
    ``--baseline OLD`` also the paired comparison (and ``--margin``: non-inferiority must be
    shown)."""
    from passk.analysis.report import format_report

    fr = gate_report(args)
    _write_html(args, fr)
    passed = fr.gate.passed  # then the report, rendered once
    if args.json:
        _print_json(fr.to_dict(curves=False), compact=len(fr.results) > _COMPACT_JSON_TASKS)
    else:
        _emit(format_report(fr, markdown=args.markdown, curve=False), markdown=args.markdown)
    return EXIT_OK if passed else EXIT_BLOCKED


def gate_report(args: argparse.Namespace) -> FileReport:
    """``passk gate``'s report, made once by :meth:`passk.api.Evaluation.gate`."""
    return _evaluation(args).gate(args.file, args.baseline)


def criteria_origins(fr: FileReport, *, baseline: bool = False
                     ) -> list[tuple[str, str, str]]:
    """The criteria in force, each as (name, value, where it came from), for the HTML page:
    :attr:`passk.gate.bind.InForce.origins`, with the values the report used."""
    f = fr.bound
    if f is None:
        raise ValueError("this report was not bound: make it with passk.api")
    ks = sorted(set(fr.ks.tolist()))
    k_shown = str(f.k) if f.k is not None else (
        str(ks[0]) if len(ks) == 1 else "per task: " + ", ".join(map(str, ks)))
    labels = {"k": "k", "bar": "bar", "cap": "flakiness cap", "on": "on",
              "confidence": "confidence", "min_runs": "min runs", "mode": "mode"}
    if baseline:
        labels.update(alpha="alpha", correction="correction", margin="margin")
    out = []
    for c in CRITERIA:
        if c.name not in labels:
            continue
        value = k_shown if c.name == "k" else f.value(c.name)
        shown = "none" if value is None else value if isinstance(value, str) else (
            str(value) if isinstance(value, int) else f"{value:g}")
        out.append((labels[c.name], shown, f.origins[c.name]))
    for risk, k in sorted(f.k_for.items()):
        out.append((f"k for {risk}", str(k), f.origins[f"k for {risk}"]))
    return out


def html_page(fr: FileReport, read: Sequence[tuple[str, Results]], *, title: str,
              baseline: bool = False) -> str:
    """The report as one self-contained HTML page (:func:`passk.render.html.report_page`),
    from the same report the text, Markdown and JSON print; ``read`` is what was read, by
    role (:attr:`passk.api.Evaluation.read`)."""
    import passk
    from passk.analysis.report import format_gate
    from passk.render.html import report_page
    from passk.stability import interval_note, order_rows

    files = [{"role": role, "path": src.path, "producer": src.producer, "sha256": src.sha256,
              "run_ids": list(src.run_ids)}
             for role, results in read for src in results.sources]
    return report_page(fr.to_dict(curves=False),
                       verdict=format_gate(fr, limit=0).splitlines()[0],
                       order=order_rows(fr.report.tasks),
                       criteria=criteria_origins(fr, baseline=baseline),
                       read=files, interval_note=interval_note(fr.report.confidence,
                                                               fr.report.ci_method),
                       title=title, generator=f"passk {passk.__version__}")


def _write_html(args: argparse.Namespace, fr: FileReport) -> None:
    """``--html OUT``: write the page, and say so on stderr."""
    out = getattr(args, "html", None)
    if out:
        Path(out).write_text(html_page(fr, _evaluation(args).read,
                                       title=f"passk {args.command}: {label(args.file)}",
                                       baseline=getattr(args, "baseline", None) is not None),
                             encoding="utf-8")
        print(f"passk {args.command}: wrote {out}", file=sys.stderr)


def cmd_plan(args: argparse.Namespace) -> int:
    """``passk plan``: all-pass runs for a claim; with a FILE, which tasks more runs can
    change; with ``--compare``, the power of a paired comparison over tasks × runs."""
    if args.compare:
        return _plan_compare(args)
    if args.gate:
        return _plan_gate(args)
    if args.file is not None:
        return _plan_file(args)
    from passk.metrics import runs_needed

    k = args.k if args.k is not None else 5
    args.confidence = args.confidence if args.confidence is not None else 0.95
    targets = [args.target] if args.target is not None else [0.5, 0.8, 0.9, 0.95, 0.99]
    rows = [{"target": t, "k": k, "confidence": args.confidence,
             "runs_needed": runs_needed(t, k, confidence=args.confidence)} for t in targets]
    if args.json:
        _print_json(rows if args.target is None else rows[0])
        return EXIT_OK
    print(f"all-pass runs needed to claim pass^{k} >= target "
          f"at {args.confidence:.0%} confidence")
    print(f"{'target':>7}  {'runs':>6}")
    for row in rows:
        print(f"{row['target']:>7.3f}  {row['runs_needed']:>6}")
    return EXIT_OK


def _plan_compare(args: argparse.Namespace) -> int:
    """``passk plan --compare``: power of the paired comparison over tasks × runs per task."""
    from passk.render.plans import format_comparison_plan
    from passk.stats.power import plan_comparison

    k = args.k if args.k is not None else 5
    confidence = args.confidence if args.confidence is not None else 0.95
    pilot: dict[str, Any] = {}
    if args.file is not None:
        results = _read(args)
        pilot = {"successes": results.successes, "totals": results.totals}
    plan = plan_comparison(k, delta=args.delta, correlation=args.correlation,
                           tasks=tuple(args.tasks), runs=None if args.runs is None else
                           tuple(args.runs), confidence=confidence, power=args.power, **pilot)
    if args.json:
        _print_json(plan.to_dict())
        return EXIT_OK
    spread = None
    best = plan.cheapest
    t_best = (plan.tasks_needed[best]
              if best is not None and plan.tasks_needed is not None else None)
    if pilot and plan.delta is not None and best is not None and t_best is not None:
        from passk.stats.power import pilot_power_spread

        spread = pilot_power_spread(k, plan.delta, pilot["successes"], pilot["totals"],
                                    tasks=t_best, runs=plan.runs[best],
                                    confidence=confidence, rng=0)
    print(format_comparison_plan(plan, k=k, confidence=confidence, pilot=bool(pilot),
                                 markdown=args.markdown, spread=spread))
    return EXIT_OK


def _plan_gate(args: argparse.Namespace) -> int:
    """``passk plan --gate FILE``: the configured gate's operating characteristic on tasks like
    the file's, by runs per task and mode, and the runs that meet the error targets."""
    from passk.analysis.plan import format_gate_plan, plan_gate

    if args.file is None:
        raise BadInput("--gate needs FILE: its tasks' observed rates are the suite planned for")
    baseline = getattr(args, "baseline", None)
    if baseline is None and getattr(args, "margin", None) is not None:
        raise BadInput("--margin needs --baseline OLD to compare against")
    ev = _evaluation(args)
    results, *others = ev.read_all([(args.file, True)] + ([(baseline, False)] if baseline
                                                          else []))
    old = others[0] if others else None
    if old is not None and baseline is not None:
        ev.same_protocol(old, results, str(baseline), str(args.file))
    fr = _file_report(args, results)
    ks = sorted(set(fr.ks.tolist()))
    if len(ks) > 1:
        raise BadInput(f"--gate plans one k; the file's tasks have k = {ks} (give --k)")
    # the criteria in force (bound once), at the file's one k; the header names their mode
    criteria = dataclasses.replace(_bound(args, results).criteria, k=int(ks[0]))
    plan = plan_gate(criteria, pilot=(results.successes, results.totals), runs=args.runs,
                     false_block=args.false_block, false_pass=args.false_pass, baseline=old,
                     configured=results.totals, task_ids=results.task_ids)
    if args.json:
        _print_json(plan.to_dict())
        return EXIT_OK
    _emit(format_gate_plan(plan, markdown=args.markdown), markdown=args.markdown)
    return EXIT_OK


def _plan_file(args: argparse.Namespace) -> int:
    """``passk plan FILE``: each task alone against the gate, and whether more runs can flip it."""
    from passk.analysis.plan import format_plan, plan_tasks, policy_max_runs

    if args.target is not None:
        raise BadInput("--target is for the table without a file; with a file the bar is "
                       "--min-overall")
    results = _read(args)
    gaps = _incomplete_lines(args, [(args.file, results)])
    never = results.never_ran
    if never and not args.accept_incomplete:  # fail closed: what never ran needs its runs
        results = replace(with_unrun_tasks(results, never), never_ran=())
    fr = _file_report(args, results)
    max_runs = policy_max_runs(results, args.max_n)
    o = fr.options  # the criteria in force: the protocol's, tightened by the options
    bar, cap, on = o["min_overall"], o["max_flakiness"], o["gate_on"]
    plans = plan_tasks(results, fr.ks.tolist(), max_runs, min_overall_pass_hat_k=bar,
                       max_flakiness=cap, gate_on=on, min_runs=args.min_runs,
                       confidence=o["confidence"])
    if args.json:
        _print_json({
            "rule": "a task clears when it has enough runs, its pass^k (or lower bound) is at "
                    "least the bar and its flakiness at most the cap; open when some outcome of "
                    "further runs up to max_runs could flip that",
            "bar": bar, "cap": cap, "on": on,
            "tasks": [{"task_id": p.task_id, "risk": p.risk, "runs": p.runs,
                       "successes": p.successes, "k": p.k, "max_runs": p.max_runs,
                       "clears": p.clears, "open": p.open, "extra_runs_at_most": p.extra_at_most}
                      for p in plans],
            "open_tasks": sum(p.open for p in plans),
            "total_extra_runs_at_most": sum(p.extra_at_most for p in plans),
            "incomplete": gaps, "never_ran": list(never),
            "never_ran_counted": bool(never) and not args.accept_incomplete,
        }, compact=len(plans) > _COMPACT_JSON_TASKS)
        return EXIT_OK
    what = "pass^k" if on == "estimate" else "exact lower bound on pass^k"
    print(f"each task alone against the gate: {what} >= {bar:.3f} and flakiness "
          f"<= {cap:.3f}; max n = " + (str(args.max_n) if args.max_n is not None else
                                       _tier_cap()))
    lines = [format_plan(plans, markdown=args.markdown)]
    if never:
        lines.append(f"{plural(len(never), 'task')} of the file's plan never ran; "
                     + (f"{'it is' if len(never) == 1 else 'each is'} counted above with 0 "
                        "runs (--accept-incomplete plans only what ran)"
                        if not args.accept_incomplete else
                        "left out of this plan (--accept-incomplete)"))
    lines += gaps
    _emit("\n".join(lines), markdown=args.markdown)
    return EXIT_OK


def _tier_cap() -> str:
    """The cap on runs ``passk plan FILE`` plans up to without ``--max-n``, said in full."""
    from passk.stability import RepeatPolicy

    policy = RepeatPolicy()
    tiers = ", ".join(f"{risk} {n}" for risk, n in sorted(policy.runs_by_risk.items()))
    return (f"the runs of each task's risk tier ({tiers}, any other risk {policy.default}): "
            "more runs than that are not planned; --max-n N plans up to N runs a task")


_DIFF_EXIT_CODES = ("exit codes: 0 no regression shown (with --margin: non-inferior); 1 a "
                    "regression is shown: the suite's mean pass^k is worse (its interval lies "
                    "below 0), or a task regressed beyond repeat noise (Fisher, Holm), or an "
                    "input is incomplete (named; --accept-incomplete to compare anyway); 2 bad "
                    "input; 3 inconclusive (only with --margin): neither non-inferiority nor a "
                    "regression is shown, so more tasks or runs are needed "
                    "(passk plan --compare says how many)")


def cmd_diff(args: argparse.Namespace) -> int:
    """``passk diff OLD NEW``: the suite's paired comparison, then each task's change."""
    from passk.analysis.diff import diff_results, format_diff

    old = _read(args, args.old, judged=False)
    new = _read(args, args.new)
    _evaluation(args).same_protocol(old, new, args.old, args.new)
    settings = bind(_asked(args), _policy(args)).criteria  # alpha, correction, margin
    d = diff_results(old, new, k=args.k, alpha=settings.alpha, correction=settings.correction,
                     class_threshold=args.class_threshold, margin=settings.margin,
                     method=args.method, rng=args.seed)
    gaps = _incomplete_lines(args, [(args.old, old), (args.new, new)])
    closed = bool(gaps) and not args.accept_incomplete
    if args.json:
        out = d.to_dict()
        out["incomplete"] = gaps
        out["failed_closed_on_incomplete"] = closed
        _print_json(out, compact=len(d.tasks) > _COMPACT_JSON_TASKS)
    else:
        tail = [""] + [("- " if args.markdown else "") + line + (
            " (--accept-incomplete to compare anyway)" if closed else " (accepted)")
            for line in gaps] if gaps else []
        _emit("\n".join([format_diff(d, markdown=args.markdown), *tail]),
              markdown=args.markdown)
    if closed:  # fails closed: an incomplete input never reads as "no regression"
        return EXIT_BLOCKED
    return {"worse": EXIT_BLOCKED, "inconclusive": EXIT_INCONCLUSIVE}.get(d.decision, EXIT_OK)


def cmd_rank(args: argparse.Namespace) -> int:
    """``passk rank FILE FILE ...``: the versions ranked on mean pass^k into tie groups."""
    from passk.render.rank import format_rank, rank_page, rank_verdict

    if (args.candidate is None) != (args.release is None):
        raise BadInput("--candidate and --release go together: the gate asks whether the "
                       "candidate is shown worse than the release")
    for name in (args.candidate, args.release):
        if name is not None and name not in args.file:
            raise BadInput(f"{name} is not one of the files ranked ({', '.join(args.file)}): "
                           "--candidate and --release name two of them")
    report = _evaluation(args).rank(args.file)
    out = report.to_dict()
    verdict, passed = "", True
    if args.candidate is not None:
        passed, verdict = rank_verdict(out, args.candidate, args.release)
        out["gate"] = {"candidate": args.candidate, "release": args.release, "passed": passed,
                       "verdict": verdict}
    if args.html:
        Path(args.html).write_text(rank_page(out, verdict=verdict), encoding="utf-8")
        print(f"passk rank: wrote {args.html}", file=sys.stderr)
    if args.json:
        _print_json(out)
    else:
        text = format_rank(out, markdown=args.markdown)
        if verdict:
            text += "\n" + (f"**{verdict}**" if args.markdown else verdict)
        _emit(text, markdown=args.markdown)
    return EXIT_OK if passed else EXIT_BLOCKED


def cmd_policy_init(args: argparse.Namespace) -> int:
    """``passk policy init RESULTS...``: write a starting policy from a suite, to review."""
    from passk.gate.policy import SuccessRule, parse_policy, policy_init

    vars(args)["_policy"] = None  # the starting point is the evidence, not a policy in force
    results = _read(args)
    rule = SuccessRule(scorer=args.scorer, values=tuple(args.success_value or ()),
                       threshold=args.success_threshold, score_key=args.score_key)
    text = policy_init(results, list(args.file), rule)
    import tomllib

    parse_policy(tomllib.loads(text), args.output)  # what it writes, it reads back
    if args.output == "-":
        print(text, end="")
        return EXIT_OK
    out = Path(args.output)
    if out.exists() and not args.force:
        raise BadInput(f"{out} exists: review and edit it, or give --force to overwrite it "
                       "(or --output - to print)")
    out.write_text(text, encoding="utf-8")
    print(f"passk policy init: wrote {out} ({plural(len(results), 'task')}); review it and "
          "commit it with the code it gates", file=sys.stderr)
    return EXIT_OK


#: ``passk run``'s repetition: every planned run, or curtailed once the verdict is settled.
STOPPING = ("fixed", "curtailed")
#: ``passk run``'s defaults where neither the policy nor an option says.
_RUN_DEFAULTS = {"k": 5, "min_overall": DEFAULT_CRITERIA.min_overall_pass_hat_k,
                 "max_flakiness": DEFAULT_CRITERIA.max_flakiness, "on": DEFAULT_CRITERIA.on,
                 "confidence": DEFAULT_CRITERIA.confidence, "runs_high_risk": 12,
                 "runs_read_only": 5}


def _run_settings(args: argparse.Namespace) -> InForce:
    """``passk run``'s settings: the criteria bound (:func:`passk.gate.bind.bind`: each
    option where given, else the policy's, else the default; an option looser than the
    policy is refused), and the runs per risk (the option, else the policy's, else the
    default)."""
    if args.policy_file in STOPPING and not Path(args.policy_file).exists():
        raise BadInput(f"--policy names the policy file, and there is no file "
                       f"{args.policy_file!r}: the stopping rule is --stopping "
                       f"{args.policy_file}")
    args.stopping = args.stopping or "fixed"
    policy = _policy(args)
    runs = {risk: n for risk, n in (("high-risk-write", args.runs_high_risk),
                                    ("read-only", args.runs_read_only)) if n is not None}
    f = bind({**_asked(args), "runs": runs}, policy)
    c = f.criteria
    args.k = f.k if f.k is not None else _RUN_DEFAULTS["k"]
    args.min_overall, args.max_flakiness = c.min_overall_pass_hat_k, c.max_flakiness
    args.on, args.confidence = c.on, c.confidence
    for name, risk in (("runs_high_risk", "high-risk-write"), ("runs_read_only", "read-only")):
        if getattr(args, name) is None:
            need = policy.tasks.runs_for(risk) if policy is not None else None
            setattr(args, name, need if need is not None else _RUN_DEFAULTS[name])
    return f


def cmd_run(args: argparse.Namespace) -> int:
    """``passk run ADAPTER TASKS --log F``: run a suite, logging every run as it ends."""
    from passk.run.runner import load_adapter, load_tasks, run_suite
    from passk.stability import RepeatPolicy, format_table

    in_force = _run_settings(args)
    adapter = load_adapter(args.adapter)
    tasks = load_tasks(args.tasks)
    policy = _policy(args)
    if policy is not None and policy.tasks.ids:
        have = {t.task_id for t in tasks}
        missing = [t for t in policy.tasks.ids if t not in have]
        if missing:
            raise BadInput(f"{args.tasks}: lacks the policy's "
                           f"{plural(len(missing), 'task', count=False)} {', '.join(missing)} "
                           f"({policy.path}): run the policy's task set")
    policy_ = RepeatPolicy(runs_by_risk={"high-risk-write": args.runs_high_risk,
                                         "read-only": args.runs_read_only},
                           previously_flaky=args.runs_high_risk, default=args.runs_read_only,
                           stopping=args.stopping)
    try:
        run = run_suite(adapter, tasks, policy_, k=args.k, seed=args.seed,
                        max_concurrency=args.concurrency, log=args.log, resume=args.resume,
                        progress=args.progress and sys.stderr.isatty(), timeout=args.timeout,
                        max_retries=args.max_retries, min_overall_pass_hat_k=args.min_overall,
                        max_flakiness=args.max_flakiness, gate_on=args.on,
                        confidence=args.confidence, stop_early=args.stop_early,
                        in_force=in_force)
    except KeyboardInterrupt:  # run_suite has said how many runs the log holds
        print(f"passk run: to finish: passk run {args.adapter} {args.tasks} --log {args.log} "
              f"--seed {args.seed} --resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        out = run.report.to_dict()
        out["gate"].update(policy=in_force.policy.path if in_force.policy is not None else None,
                           policy_line=run.gate.policy_line)
        out["runs"] = {"spent": run.runs_spent, "fixed": run.runs_fixed, "saved": run.runs_saved,
                       "retries": dict(run.retries), "cached": dict(run.cached),
                       "infrastructure_errors": dict(run.infrastructure_errors),
                       "effective_n": dict(run.effective_n),
                       "settled_early": dict(run.settled_early),
                       "stopped_early": (dataclasses.asdict(run.stopped)
                                         if run.stopped is not None else None)}
        out["protocol"] = run.protocol.to_dict() if run.protocol else None
        _print_json(out)
    else:
        _emit(format_table(run.report, flaky_first=True))
        left_out = sum(run.infrastructure_errors.values()) + sum(run.cached.values())
        print(f"runs: {run.runs_spent} counted of {run.runs_fixed} planned"
              + (f" ({run.runs_saved} saved by curtailment)" if args.stopping == "curtailed"
                 else f" ({run.runs_saved} saved by stopping early at look "
                 f"{run.stopped.look} of {run.stopped.looks})" if run.stopped is not None
                 else "")
              + f"; {sum(run.retries.values())} retries, {left_out} left out; log: {args.log}")
        if run.settled_early:
            _emit("settled early, the gate's verdict the same whatever the runs not made: "
                  + ", ".join(f"{tid} ({run.effective_n[tid]} counted of {n} planned)"
                              for tid, n in run.settled_early.items()))
    return EXIT_OK if run.gate.passed else EXIT_BLOCKED


def cmd_attribute(args: argparse.Namespace) -> int:
    """``passk attribute FILE``: where each flaky task's passing and failing runs part.

    ``passk attribute --run ADAPTER TASKS --vary NAME=VALUE ...``: the controlled
    comparison, one variable at a time on the same seeds, with the first divergence of
    the baseline's runs."""
    from passk.render.attribution import (
        attribution_page,
        attribution_text,
        divergence_page,
        divergence_text,
    )

    if args.run is None:
        if args.file is None:
            raise BadInput("give a FILE to read (a passk run log, an Inspect log, a tau2 run), "
                           "or --run ADAPTER TASKS --vary NAME=VALUE to run the comparison")
        if args.vary:
            raise BadInput("--vary needs --run ADAPTER TASKS: a file's runs were made under "
                           "one setting")
        from passk.analysis.divergence import read_divergences

        options = {k: v for k, v in (("scorer", args.scorer),
                                     ("success_values", args.success_value),
                                     ("success_threshold", args.success_threshold),
                                     ("score_key", args.score_key),
                                     ("errors", args.errors),
                                     ("eval_key", args.eval_key)) if v is not None}
        fmt = None if args.format == "auto" else args.format
        if options and fmt not in (None, "inspect", "harbor"):
            raise BadInput(f"--scorer, --success-value, --success-threshold, --score-key, "
                           f"--errors and --eval-key are for Inspect logs and Harbor jobs, not "
                           f"--format {fmt}")
        report = read_divergences(args.file, format=fmt, **options).to_dict()
        _write_attribution_html(args.html, report, divergence_page)
        if args.json:
            _print_json(report)
        else:
            _emit(divergence_text(report, markdown=args.markdown), markdown=args.markdown)
        return EXIT_OK
    if args.file is not None:
        raise BadInput(f"give either FILE ({args.file}) or --run ADAPTER TASKS, not both")
    from passk.run.attribute import attribute_variants, parse_variations
    from passk.run.runner import load_adapter, load_tasks

    adapter = load_adapter(args.run[0])
    tasks = load_tasks(args.run[1])
    variants = parse_variations(args.vary or [])
    found = attribute_variants(adapter, tasks, variants, runs=args.runs, seed=args.seed,
                               k=args.k, alpha=args.alpha,
                               progress=args.progress and sys.stderr.isatty())
    payload = found.to_dict()
    _write_attribution_html(args.html, payload, attribution_page)
    if args.json:
        _print_json(payload)
    else:
        _emit(attribution_text(payload, markdown=args.markdown), markdown=args.markdown)
    return EXIT_OK


def _write_attribution_html(out: str | None, payload: dict[str, Any],
                            page: Callable[[dict[str, Any]], str]) -> None:
    """``passk attribute --html OUT``: write the page, and say so on stderr."""
    if not out:
        return
    try:
        Path(out).write_text(page(payload), encoding="utf-8")
    except OSError as e:
        raise BadInput(f"--html {out}: cannot write it ({e.strerror or e}); give a path in a "
                       "folder that exists and that you may write to") from None
    print(f"passk attribute: wrote {out}", file=sys.stderr)


def add_input_options(p: argparse.ArgumentParser) -> None:
    """--format, the Inspect options, --duplicates and --accept-incomplete, for any
    command that reads results files."""
    from passk.cli.options import add_reader_overrides
    from passk.results.read import DUPLICATES
    p.add_argument("--policy", dest="policy_file", default=None, metavar="FILE",
                   help="the gate policy (passk.toml, or a pyproject.toml's [tool.passk]); "
                   "default: found walking up from the working directory, then from the "
                   "results, to the repository root. With a policy, an option that would "
                   "loosen it is refused; without one, the verdict line says so")
    p.add_argument("--policy-ref", default=None, metavar="REF",
                   help="read the policy from the commit REF instead of the working tree (in "
                   "CI: the pull request's base, so that the policy in force is the one "
                   "already reviewed, not the one the change brings); searched as in the "
                   "working tree, from the working directory's place up to the root")
    p.add_argument("--format", default="auto", choices=FORMATS, metavar="FORMAT",
                   help="input format: " + ", ".join(FORMATS) + " (default auto: by extension, "
                   "for .json by content, for a directory by tau2-bench's run layout; the "
                   "choice is printed on stderr)")
    p.add_argument("--scorer", default=None,
                   help="Inspect logs: the scorer whose value decides success")
    p.add_argument("--success-value", action="append", default=None, metavar="VALUE",
                   help="Inspect logs: a score value that counts as a success, added to the "
                   "defaults C, True and 1 (repeatable); every other value is then a failure. "
                   "Without it or --success-threshold, a value that is not pass/fail (a grade, "
                   "partial credit) is an error naming the values seen")
    p.add_argument("--success-threshold", type=float, default=None, metavar="X",
                   help="Inspect logs: a numeric score (or numeric string) of at least X is a "
                   "success, as Inspect's pass_k and pass_at count (they use 1); "
                   "lm-evaluation-harness: a metric value of at least X succeeds")
    p.add_argument("--score-key", default=None, metavar="KEY",
                   help="Inspect logs with dict-valued scores: the key whose value is judged "
                   "(Harbor jobs with several rewards: the reward that decides success)")
    p.add_argument("--eval-key", default=None, metavar="KEY",
                   help="Harbor jobs holding several evaluations: the one to read, as Harbor "
                   "keys it (AGENT__MODEL__DATASET)")
    p.add_argument("--count-errors-as-failures", action="store_true",
                   help="Harbor jobs: count trials that failed for reasons Harbor's error "
                   "policy says are not the agent's (sandbox, model provider, verifier) as "
                   "failures, as Harbor up to 0.13 did, instead of leaving them out")
    p.add_argument("--metric", default=None, metavar="NAME",
                   help="lm-evaluation-harness samples holding several metrics: the one whose "
                   "value decides success (1 succeeds, 0 fails; --success-threshold for a "
                   "graded metric)")
    p.add_argument("--filter", default=None, metavar="NAME",
                   help="lm-evaluation-harness samples holding several filters: the filter "
                   "whose scored responses are read")
    p.add_argument("--duplicates", choices=DUPLICATES, default="error",
                   help="a (task, trial) recorded twice, as a resumed run can leave: error "
                   "(default; the message names both records), or keep the first or the last "
                   "record of each (the report's notes say how many were dropped)")
    p.add_argument("--pool-evaluations", action="store_true",
                   help="several files of different evaluations (another model, other task "
                   "arguments, another plan or generate config) read as trials of one suite "
                   "anyway; the report's notes say what was pooled. Without it they are "
                   "refused, as are the same evidence twice (a copy, the same run, a log of "
                   "the same seeds)")
    add_reader_overrides(p)
    p.add_argument("--accept-incomplete", action="store_true",
                   help="accept an incomplete run (an Inspect log not finished with status "
                   "success, short of its samples x epochs or stopped early by a manager "
                   "other than passk's curtailment, a tau2 run with fewer simulations than "
                   "num_trials x tasks, a tau-bench or terminal-bench run with uneven "
                   "trials, a passk run log short of its protocol); without it every "
                   "command names it and fails closed: report and gate block, diff and "
                   "gate --baseline exit 1, plan counts what never ran")


def add_no_policy(p: argparse.ArgumentParser, command: str) -> None:
    """``--no-policy``: offered where it may set the policy aside (``report``, ``plan``:
    :data:`passk.gate.policy.SET_ASIDE_BY`) and refused, with the reason, where the command
    decides (:func:`passk.gate.policy.set_aside_refusal`, through the one binding)."""
    from passk.gate.policy import SET_ASIDE_BY

    p.add_argument("--no-policy", action="store_true", help=(
        "set the repository's policy aside, to explore data it does not cover (another "
        "producer, other tasks): the criteria are the command line's and the defaults, and "
        "the verdict line says 'policy set aside'. passk gate never sets the policy aside"
        if command in SET_ASIDE_BY else
        f"refused: passk {command} decides under the repository's policy and never sets it "
        "aside (passk report --no-policy explores data the policy does not cover)"))


def add_bar_and_cap(p: argparse.ArgumentParser, *, declare: bool = False) -> None:
    """The dual gate's two numbers.

    For ``passk run`` (``declare=True``) they are declared into the run's
    protocol, with the defaults 0.7 and 0.2. For commands that read results
    they default to None, so that a run's protocol binds them.
    """
    if declare:
        p.add_argument("--min-overall", type=probability, default=None,
                       help="bar for the mean pass^k, declared in the run's protocol "
                       "(default: the policy's, else 0.7)")
        p.add_argument("--max-flakiness", type=probability, default=None,
                       help="cap on any task's flakiness, declared in the run's protocol "
                       "(default: the policy's, else 0.2)")
        return
    p.add_argument("--min-overall", type=probability, default=None,
                   help="bar for the mean pass^k (default: the run's protocol, else 0.7; "
                   "a lower bar than the protocol's is refused)")
    p.add_argument("--max-flakiness", type=probability, default=None,
                   help="cap on any task's flakiness (default: the run's protocol, else 0.2; "
                   "a higher cap than the protocol's is refused)")


def add_gate_options(p: argparse.ArgumentParser) -> None:
    """The k, the bar, the cap and what to gate on; shared by report, gate and plan FILE."""
    p.add_argument("--k", type=positive_int, default=None,
                   help="k of pass^k (default: the run's protocol, else the smallest n over "
                   "tasks; a smaller k than the protocol's is refused)")
    p.add_argument("--k-for", action="append", type=risk_k, default=None, metavar="RISK=K",
                   help="a k for tasks of one risk label, e.g. high-risk-write=8 (repeatable)")
    add_bar_and_cap(p)
    p.add_argument("--on", choices=GATE_ON, default=None,
                   help="gate on each task's pass^k estimate (default) or its exact "
                   "lower bound")
    p.add_argument("--min-runs", type=whole, default=0,
                   help="a task with fewer counted runs fails the gate (default 0)")
    p.add_argument("--confidence", type=open_probability, default=None,
                   help="confidence of intervals and lower bounds (default 0.95)")
    p.add_argument("--mode", choices=GATE_MODES, default=None,
                   help="how the gate decides: chapter (the point estimates, the default), "
                   "proved (the suite's proved lower bound, and each task proved steady) or "
                   "proved-warn (the proved bound; flakiness named, not blocking); a mode "
                   "looser than the policy's or the protocol's is refused")
    p.add_argument("--ci-method", choices=tuple(CI_METHODS), default="exact",
                   help="per-task interval: exact (Clopper-Pearson, default: covers at least "
                   "its confidence) or bootstrap (the chapter's percentile bootstrap, which "
                   "covers far less near p = 1)")


#: A command's parser, made by ``build_parser``'s ``add(name, func, help)``.
_Add = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]

_FILE_HELP = ("results: JSON Lines, CSV, tau-bench or tau2-bench JSON, an Inspect AI "
              "log (.eval/.json), terminal-bench's results.json, a Harbor (terminal-bench "
              "2) job directory or result.json, a promptfoo eval output (promptfoo eval "
              "--repeat N -o out.json), an lm-evaluation-harness samples_<task>_*.jsonl "
              "(--log_samples), or a run directory")
_FILES_HELP = (_FILE_HELP + "; several files are read as trials of one suite (their "
               "tasks, format and protocol must match)")


def _add_demo(add: _Add) -> None:
    """``passk demo``'s arguments."""
    p = add("demo", cmd_demo, "the chapter's stability demo, before and after the fix")
    p.add_argument("--seed", type=int, default=DEMO_SEED)
    p.add_argument("--k", type=positive_int, default=5)


def _add_curves(add: _Add) -> None:
    """``passk curves``'s arguments."""
    p = add("curves", cmd_curves, "pass@k and pass^k for k = 1..K at a single-run rate p")
    p.add_argument("--p", type=probability, default=0.9)
    p.add_argument("--k", type=positive_int, default=8)


def _add_report(add: _Add) -> None:
    """``passk report FILE...``'s arguments."""
    p = add("report", cmd_report, "score a results file per task, with the suite curve over k")
    p.add_argument("file", nargs="+", metavar="FILE", help=_FILES_HELP)
    add_input_options(p)
    add_no_policy(p, "report")
    add_gate_options(p)
    p.add_argument("--markdown", action="store_true", help="Markdown tables")
    p.add_argument("--plot", metavar="FILE.png", default=None,
                   help="also draw the curves and flakiness per task (needs matplotlib)")
    p.add_argument("--html", metavar="OUT.html", default=None,
                   help="also write the report as one self-contained HTML page (opens "
                   "offline: the curve, the sortable task table, the verdict and its reasons)")


def _add_gate(add: _Add) -> None:
    """``passk gate FILE... [--baseline OLD]``'s arguments."""
    p = add("gate", cmd_gate, "the dual gate on a results file (exit 0 passed, 1 blocked, "
            "2 bad input)")
    p.add_argument("file", nargs="+", metavar="FILE", help=_FILES_HELP)
    add_input_options(p)
    add_no_policy(p, "gate")
    add_gate_options(p)
    p.add_argument("--baseline", default=None, metavar="OLD",
                   help="also block when the suite's mean pass^k is worse than OLD's (paired "
                   "t over tasks, as passk diff) or a task regressed against OLD beyond repeat "
                   "noise; refused when OLD was measured under a different protocol")
    p.add_argument("--margin", type=margin, default=None, metavar="D",
                   help="with --baseline: block unless the mean pass^k is shown to be at "
                   "most D below OLD's (non-inferiority; an inconclusive comparison blocks)")
    p.add_argument("--alpha", type=open_probability, default=None,
                   help="with --baseline: the comparison's level, per task after correction "
                   "and 1 - the suite interval's confidence (default: the policy's [baseline] "
                   "alpha, else 0.05; a higher one than the policy's is refused)")
    p.add_argument("--correction", choices=CORRECTIONS, default=None,
                   help="with --baseline: holm (family-wise error, default) or bh (false "
                   "discovery rate; refused when the policy's is holm)")
    p.add_argument("--allow-change", action="append", default=None, metavar="SETTING",
                   help="a protocol setting the two versions may differ in, the change under "
                   "test (e.g. adapter_settings.temperature; a prefix names a group); "
                   "repeatable; any other difference is refused")
    p.add_argument("--markdown", action="store_true", help="Markdown tables")
    p.add_argument("--html", metavar="OUT.html", default=None,
                   help="also write the report as one self-contained HTML page (opens "
                   "offline: the curve, the sortable task table, the verdict and its reasons)")


def _add_plan(add: _Add) -> None:
    """``passk plan [FILE]``'s arguments."""
    p = add("plan", cmd_plan, "runs needed: all-pass runs for a claim pass^k >= target, or, "
            "with a FILE, which tasks more runs could still change")
    p.add_argument("file", nargs="?", default=None, help=_FILE_HELP)
    add_input_options(p)
    add_no_policy(p, "plan")
    add_gate_options(p)
    p.add_argument("--target", type=probability, default=None,
                   help="without FILE: the claim pass^k >= target (default: a table)")
    p.add_argument("--max-n", type=positive_int, default=None,
                   help="with FILE: most runs a task may get (default: the repeat policy's "
                   "runs for its risk, 12 high-risk-write, 5 otherwise)")
    p.add_argument("--markdown", action="store_true", help="a Markdown table")
    p.add_argument("--compare", action="store_true",
                   help="plan a comparison of two versions instead: the power of passk diff "
                   "over a grid of tasks × runs per task (FILE, if given, is a pilot run of "
                   "the old version: its tasks' rates and spread; default: a stated "
                   "population)")
    p.add_argument("--delta", type=open_probability, default=None, metavar="D",
                   help="with --compare: the drop in mean pass^k to detect (default: only the "
                   "smallest detectable drop)")
    p.add_argument("--power", type=open_probability, default=0.8,
                   help="with --compare: the power wanted (default 0.8)")
    p.add_argument("--correlation", type=probability, default=None,
                   help="with --compare: correlation across tasks of the two versions' true "
                   "pass^k, setting how unevenly the change spreads over tasks (default: "
                   "none; the change is assumed to fall on as few as 10%% of the tasks, "
                   "variance at least 9 x drop^2, which is cautious for an even change; "
                   "0.7 was the default before)")
    p.add_argument("--tasks", type=int_list, default=[20, 50, 100, 200, 500],
                   metavar="T1,T2,...", help="with --compare: task counts of the grid")
    p.add_argument("--runs", type=int_list, default=None, metavar="N1,N2,...",
                   help="with --compare: runs per task of the grid (default: 2, 4, 8, 12, 16, "
                   "24 from k up); with --gate: the runs per task planned (default 8, 12, 16, "
                   "24, 32, 48, 64, 96)")
    p.add_argument("--gate", action="store_true",
                   help="with FILE: how often the gate passes tasks like the file's (false "
                   "block) and tasks at the bar (false pass), by runs per task and mode, and "
                   "the runs that meet --false-block and --false-pass")
    p.add_argument("--baseline", default=None, metavar="OLD",
                   help="with --gate: the gate also compares with OLD (as passk gate FILE "
                   "--baseline OLD): how often it passes, by Monte Carlo through the judge "
                   "(as run, and at each --runs)")
    p.add_argument("--margin", type=margin, default=None, metavar="D",
                   help="with --gate --baseline: non-inferiority within D must be shown")
    p.add_argument("--alpha", type=open_probability, default=None,
                   help="with --gate --baseline: the comparison's level (default: the "
                   "policy's [baseline] alpha, else 0.05)")
    p.add_argument("--correction", choices=CORRECTIONS, default=None,
                   help="with --gate --baseline: holm (default) or bh")
    p.add_argument("--false-block", type=open_probability, default=0.1,
                   help="with --gate: the largest false-block rate wanted (default 0.1)")
    p.add_argument("--false-pass", type=open_probability, default=0.05,
                   help="with --gate: the largest false-pass rate wanted at the bar "
                   "(default 0.05)")


def _add_diff(add: _Add) -> None:
    """``passk diff OLD NEW``'s arguments."""
    from passk.stats.compare import METHODS as COMPARE_METHODS

    p = add("diff", cmd_diff, "compare two results files: the suite's mean pass^k (paired over "
            "tasks), then task by task")
    p.epilog = _DIFF_EXIT_CODES
    p.add_argument("old", help="results of the old version")
    p.add_argument("new", help="results of the new version")
    add_input_options(p)
    add_no_policy(p, "diff")
    p.add_argument("--k", type=positive_int, default=None,
                   help="k of pass^k (default: the smallest n over both files)")
    p.add_argument("--alpha", type=open_probability, default=None,
                   help="significance level: per task after correction, and 1 - the suite "
                   "interval's confidence (default: the policy's [baseline] alpha, else 0.05; "
                   "a higher one than the policy's is refused)")
    p.add_argument("--margin", type=margin, default=None, metavar="D",
                   help="non-inferiority: pass (exit 0) only when the suite's mean pass^k is "
                   "shown to be at most D below the old one; exit 3 when that is not shown "
                   "and no regression is either")
    p.add_argument("--allow-change", action="append", default=None, metavar="SETTING",
                   help="a protocol setting the two versions may differ in, the change under "
                   "test (e.g. adapter_settings.temperature; a prefix names a group); "
                   "repeatable; any other difference is refused")
    p.add_argument("--method", choices=COMPARE_METHODS, default=COMPARE_METHODS[0],
                   help="the suite interval: t (paired t over tasks, the default: the method "
                   "that kept its error rates in benchmarks/bench_compare.py) or a bootstrap "
                   "or sign-flip variant")
    p.add_argument("--seed", type=whole, default=0,
                   help="seed of the resampling methods (default 0; t needs none)")
    p.add_argument("--correction", choices=CORRECTIONS, default=None,
                   help="holm (family-wise error, default) or bh (Benjamini-Hochberg, "
                   "false discovery rate; refused when the policy's is holm)")
    p.add_argument("--class-threshold", type=probability, default=CLASS_THRESHOLD,
                   help="flakiness above which a task's runs are called flaky (default 0.2)")
    p.add_argument("--markdown", action="store_true", help="a Markdown table")


def _add_rank(add: _Add) -> None:
    """``passk rank FILE FILE ...``'s arguments."""
    p = add("rank", cmd_rank, "rank several versions' results (the same suite) on mean "
            "pass^k into tie groups whose family-wise error is proved, with each version's "
            "single-run noise floor and flip rate")
    p.epilog = ("exit codes: 0 ranked (with --candidate/--release: the candidate is not shown "
                "worse than the release); 1 the candidate is shown worse than the release; "
                "2 bad input")
    p.add_argument("file", nargs="+", metavar="FILE",
                   help="one results file per version (" + _FILE_HELP + ")")
    add_input_options(p)
    add_no_policy(p, "rank")
    p.add_argument("--k", type=positive_int, default=None,
                   help="k of pass^k (default: the policy's or the runs' protocol, else the "
                   "smallest n over every file)")
    p.add_argument("--alpha", type=open_probability, default=None,
                   help="the table's family-wise error: every claim holds together with "
                   "probability at least 1 - alpha (default: the policy's [baseline] alpha, "
                   "else 0.05; a higher one than the policy's is refused)")
    p.add_argument("--allow-change", action="append", default=None, metavar="SETTING",
                   help="a protocol setting the versions may differ in (repeatable); any "
                   "other difference is refused")
    p.add_argument("--candidate", default=None, metavar="FILE",
                   help="with --release: exit 1 when this file's version is shown worse "
                   "than the release's")
    p.add_argument("--release", default=None, metavar="FILE",
                   help="the released version's file, one of FILE")
    p.add_argument("--markdown", action="store_true", help="a Markdown table")
    p.add_argument("--html", metavar="OUT.html", default=None,
                   help="also write the ranking as one self-contained HTML page")


def _add_policy(add: _Add) -> None:
    """``passk policy init RESULTS...``'s arguments."""
    p = add("policy", cmd_policy_init, "the gate policy: `passk policy init RESULTS...` writes "
            "a starting passk.toml from a suite, to be reviewed like code")
    p.add_argument("action", choices=("init",), help="init: write a starting policy")
    p.add_argument("file", nargs="+", metavar="RESULTS", help=_FILES_HELP)
    add_input_options(p)
    p.add_argument("--output", default=POLICY_FILE, metavar="FILE",
                   help=f"where to write it (default {POLICY_FILE}; - prints it)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")


def _add_run(add: _Add) -> None:
    """``passk run ADAPTER TASKS --log LOG``'s arguments."""
    p = add("run", cmd_run, "run a suite against an adapter, logging every run as it ends "
            "(exit 0 passed, 1 blocked, 2 bad input, 130 interrupted)")
    p.add_argument("adapter", help="module:attribute naming an adapter object, or a class or "
                   "function of no arguments returning one, e.g. "
                   "passk.flaky_adapter:OnCallSimulator")
    p.add_argument("tasks", help="JSON Lines of tasks: task_id, risk, instruction, and any "
                   "fields the adapter's tasks take")
    p.add_argument("--log", required=True, help="the run log (JSON Lines, appended per run)")
    p.add_argument("--resume", action="store_true",
                   help="continue the log: run only what it lacks, with the same seeds")
    p.add_argument("--concurrency", type=positive_int, default=None,
                   help="runs in flight at once (threads, or tasks for an async adapter)")
    p.add_argument("--seed", type=whole, default=0, help="suite seed (default 0)")
    p.add_argument("--k", type=positive_int, default=None,
                   help="k of pass^k (default: the policy's, else 5)")
    p.add_argument("--stopping", choices=STOPPING, default=None,
                   help="curtailed: stop a task once its gate verdict is settled (default "
                   "fixed)")
    p.add_argument("--stop-early", type=looks, default=None, metavar="LOOKS",
                   help="stop the whole suite early, at LOOKS planned looks (at least 2; "
                   "the first after k runs of every task, the last after all): after each "
                   "look the suite stops once passk's proved interval on mean pass^k at "
                   "level 1 - alpha/LOOKS clears the bar or lies below it (a wrong stop "
                   "with a pass has probability at most alpha/2); the verdict is the gate's "
                   "on the runs made. Not with --stopping curtailed")
    p.add_argument("--policy", dest="policy_file", default=None, metavar="FILE",
                   help="the gate policy (default: passk.toml or [tool.passk] found walking "
                   "up from the working directory); the run takes its k, criteria and runs, "
                   "and a looser option is refused (the stopping rule is --stopping, not "
                   "--policy)")
    add_no_policy(p, "run")
    p.add_argument("--runs-high-risk", type=positive_int, default=None,
                   help="runs for high-risk-write and previously flaky tasks (default: the "
                   "policy's, else 12)")
    p.add_argument("--runs-read-only", type=positive_int, default=None,
                   help="runs for read-only and other tasks (default: the policy's, else 5)")
    p.add_argument("--timeout", type=float, default=None, help="per-run limit in seconds")
    p.add_argument("--max-retries", type=whole, default=3,
                   help="retries of a run that hit an infrastructure error (default 3)")
    add_bar_and_cap(p, declare=True)
    p.add_argument("--on", choices=GATE_ON, default=None,
                   help="gate on each task's pass^k estimate (default) or its exact lower "
                   "bound; declared in the protocol, and what curtailment serves")
    p.add_argument("--confidence", type=open_probability, default=None,
                   help="confidence of the lower bounds (default: the policy's, else 0.95)")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar (it is also off when stderr is not a terminal)")


def _add_attribute(add: _Add) -> None:
    """``passk attribute FILE`` and ``passk attribute --run ADAPTER TASKS --vary ...``."""
    p = add("attribute", cmd_attribute, "why is a task flaky? Read a log: where each flaky "
            "task's passing and failing runs part (the first divergence). Or run the "
            "controlled comparison: --run ADAPTER TASKS --vary NAME=VALUE, one variable at a "
            "time on the same seeds, each change tested (exit 0, 2 bad input)")
    p.add_argument("file", nargs="?", default=None, metavar="FILE",
                   help="a passk run log (.jsonl), an Inspect log (.eval, .json), a "
                   "tau2-bench run (results.json or its directory) or a Harbor job "
                   "(terminal-bench 2; its trials' agent/trajectory.json)")
    p.add_argument("--format", default="auto", metavar="FORMAT",
                   choices=("auto", "jsonl", "inspect", "tau2", "harbor", "terminal-bench"),
                   help="FILE's producer: auto (the default: by extension and content), "
                   "jsonl, inspect, tau2, harbor or terminal-bench")
    p.add_argument("--scorer", default=None,
                   help="Inspect logs: the scorer whose value decides success")
    p.add_argument("--success-value", action="append", default=None, metavar="VALUE",
                   help="Inspect logs: a score value that counts as a success (repeatable)")
    p.add_argument("--success-threshold", type=float, default=None, metavar="X",
                   help="Inspect logs: a numeric score of at least X is a success")
    p.add_argument("--score-key", default=None, metavar="KEY",
                   help="Inspect logs with dict-valued scores, Harbor trials with several "
                   "rewards: the key whose value is judged")
    p.add_argument("--errors", choices=("fail", "exclude"), default=None,
                   help="Inspect logs: an errored sample epoch is a failure (default) or left "
                   "out")
    p.add_argument("--eval-key", default=None, metavar="KEY",
                   help="Harbor jobs holding several evaluations: the one to read "
                   "(<agent>__<model>__<dataset>)")
    p.add_argument("--run", nargs=2, default=None, metavar=("ADAPTER", "TASKS"),
                   help="run the controlled comparison: ADAPTER as passk run takes it "
                   "(module:attribute; it must offer with_setting(name, value)), TASKS a JSON "
                   "Lines task file")
    p.add_argument("--vary", action="append", default=None, metavar="NAME=VALUE",
                   help="a variant: the baseline with one variable changed (repeatable; "
                   "VALUE as JSON, else text: temperature=0, deterministic_sort=true)")
    p.add_argument("--runs", type=positive_int, default=30,
                   help="runs of each task under the baseline and under each variant, on the "
                   "same seeds (default 30)")
    p.add_argument("--seed", type=whole, default=0, help="suite seed (default 0)")
    p.add_argument("--k", type=positive_int, default=5, help="k of pass^k (default 5)")
    p.add_argument("--alpha", type=open_probability, default=0.05,
                   help="the tests' family-wise error rate, Holm across tasks x variants "
                   "(default 0.05)")
    p.add_argument("--markdown", action="store_true", help="Markdown")
    p.add_argument("--html", metavar="OUT.html", default=None,
                   help="also write one self-contained HTML page: per flaky task a failing "
                   "and a passing run side by side, the step where they part highlighted")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar")


class _Version(argparse.Action):
    """``passk --version``: the distribution's version (:func:`passk._version.version`), read
    only when asked, so that no other command pays for :mod:`importlib.metadata`."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> NoReturn:
        from passk._version import version

        print(f"passk {version()}")
        parser.exit()


def close_names(typed: str, known: Sequence[str]) -> list[str]:
    """The names in ``known`` closest to ``typed`` (:func:`difflib.get_close_matches`, at
    most three, nearest first); an option's ``=VALUE`` is not part of its name.

    Examples
    --------
    >>> close_names("--min-overal=0.7", ["--min-overall", "--max-flakiness", "--min-runs"])
    ['--min-overall', '--min-runs']
    >>> close_names("--zzz", ["--k"])
    []
    """
    import difflib

    return difflib.get_close_matches(typed.split("=", 1)[0], list(known), n=3)


def _did_you_mean(names: Sequence[str]) -> str:
    return ("did you mean " + (names[0] if len(names) == 1 else
                               ", ".join(names[:-1]) + " or " + names[-1]) + "?")


class _Parser(argparse.ArgumentParser):
    """argparse, with every usage error one line (no usage block) that names the unknown
    option or command and the nearest of the command's own (``passk gate f.jsonl
    --min-overal 0.7``: ``passk gate: error: unknown option --min-overal (did you mean
    --min-overall?)``), exit 2. Options are never abbreviated: a prefix that reads today
    as one option would read as another, or as an error, once an option is added."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _own_options(self) -> list[str]:
        return sorted({s for a in self._actions for s in a.option_strings
                       if s not in ("-h", "--help")})

    def _commands(self) -> dict[str, argparse.ArgumentParser]:
        for a in self._actions:
            if isinstance(a, argparse._SubParsersAction):  # noqa: SLF001
                return dict(a.choices)
        return {}

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        """Parse; anything left over is an error here, in the parser it was given to, so
        that the suggestion comes from this command's own options."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self._unknown(extras)
        return parsed, extras

    def _unknown(self, extras: Sequence[str]) -> NoReturn:
        typed = next((e for e in extras if e.startswith("-") and e != "-"), None)
        if typed is None:
            self.error(f"unexpected argument{'s' if len(extras) > 1 else ''} "
                       f"{' '.join(map(repr, extras))}: {self.prog} --help lists what it "
                       "takes")
        name = typed.split("=", 1)[0]
        close = close_names(typed, self._own_options())
        elsewhere = getattr(self, "elsewhere", {}).get(name, [])
        others = (", ".join(elsewhere[:-1]) + " and " + elsewhere[-1] if len(elsewhere) > 1
                  else "".join(elsewhere))
        self.error(f"unknown option {name} (" + (
            f"{name} is an option of passk {others}, not of {self.prog}" if elsewhere else
            _did_you_mean(close) if close else f"{self.prog} --help lists the options") + ")")

    def error(self, message: str) -> NoReturn:
        """One line on stderr, ``PROG: error: MESSAGE``, and exit 2 (argparse's status)."""
        import re

        from passk.render.tables import escape_text

        wrong = re.match(r"argument COMMAND: invalid choice: '([^']*)'", message)
        if wrong:  # a mistyped command: the nearest commands, not the whole list
            close = close_names(wrong.group(1), list(self._commands()))
            message = f"unknown command {wrong.group(1)!r} (" + (
                _did_you_mean(close) if close else
                "commands: " + ", ".join(self._commands())) + ")"
        else:
            choice = re.match(r"argument (\S+): invalid choice: '([^']*)'", message)
            action = next((a for a in self._actions if choice and choice.group(1) in
                           a.option_strings and a.choices is not None), None)
            if choice and action is not None and action.choices is not None:
                close = close_names(choice.group(2), [str(c) for c in action.choices])
                message += f" ({_did_you_mean(close)})" if close else ""
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {escape_text(message)}\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``passk`` parser: one ``_add_<command>`` function per command (a new command
    is one more such function, named in the tuple below)."""
    parser = _Parser(
        prog="passk",
        description="pass@k, pass^k and flakiness for AI agents: report, gate, plan and diff.",
    )
    parser.add_argument("--version", action=_Version, help="print passk's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=_Parser)

    def add(name: str, func: Callable[[argparse.Namespace], int], help_: str,
            ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return p

    for declare in (_add_demo, _add_curves, _add_report, _add_gate, _add_plan, _add_diff,
                    _add_rank, _add_policy, _add_run, _add_attribute):
        declare(add)
    commands = {name: {s for a in p._actions for s in a.option_strings}  # noqa: SLF001
                for name, p in sub.choices.items()}
    for name, p in sub.choices.items():  # an option of another command is named as such
        p.elsewhere = {o: [c for c in commands if o in commands[c]]  # type: ignore[attr-defined]
                       for other in commands.values() for o in other - commands[name]}
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` when None); return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    # a short-lived command building millions of small objects: the cycle collector
    # would only rescan them (about a fifth of the time on 10**6 runs); nothing here
    # makes reference cycles, and the process ends when the command does
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        status: int = args.func(args)
    except PasskError as exc:  # input passk cannot use: one line, the class's own status
        from passk.render.tables import escape_text

        print(f"passk {args.command}: error: {escape_text(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # a file that cannot be opened or written: named by the OS
        from passk.render.tables import escape_text

        print(f"passk {args.command}: error: {escape_text(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"passk {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    else:
        return status
    finally:
        if gc_was_on:
            gc.enable()


if __name__ == "__main__":
    sys.exit(main())
