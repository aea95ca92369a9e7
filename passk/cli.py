"""The ``passk`` command.

Exit codes: 0 success (the gate passed), 1 the gate blocked, 2 bad input.
Bad input is one line on stderr naming the file and the line; never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .io import ResultsError, read_results
from .metrics import pass_at_k, pass_hat_k, runs_needed
from .stability import DEMO_SEED, SuiteReport, format_table, run_demo, suite_report

EXIT_OK, EXIT_BLOCKED, EXIT_BAD_INPUT = 0, 1, 2


class BadInput(Exception):
    """Raised by a command for input it cannot use; becomes one line on stderr and exit 2."""


def _print_json(payload: Any) -> None:
    print(json.dumps(payload, indent=2, allow_nan=False))


def _report_from_file(args: argparse.Namespace) -> SuiteReport:
    results = read_results(args.file)
    return suite_report(
        results.task_ids, results.successes, results.totals, risks=results.risks, k=args.k,
        min_overall_pass_hat_k=getattr(args, "min_overall", 0.7),
        max_flakiness=getattr(args, "max_flakiness", 0.2),
    )


def cmd_demo(args: argparse.Namespace) -> int:
    before, after = run_demo(args.seed, k=args.k)
    if args.json:
        _print_json({"seed": args.seed, "k": args.k, "before": before.to_dict(),
                     "after": after.to_dict()})
    else:
        print(f"seed {args.seed}; before the fix (unstable tie order):")
        print(format_table(before))
        print("\nafter the fix (deterministic sort):")
        print(format_table(after))
    return EXIT_OK


def cmd_curves(args: argparse.Namespace) -> int:
    ks = np.arange(1, args.k + 1)
    at, hat = pass_at_k(args.p, ks), pass_hat_k(args.p, ks)
    if args.json:
        _print_json({"p": args.p, "k": ks.tolist(), "pass_at_k": np.round(at, 6).tolist(),
                     "pass_hat_k": np.round(hat, 6).tolist()})
        return EXIT_OK
    print(f"p = {args.p}")
    print(f"{'k':>3}  {'pass@k':>8}  {'pass^k':>8}")
    for k, a, h in zip(ks, at, hat):
        print(f"{k:>3}  {a:>8.4f}  {h:>8.4f}")
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    report = _report_from_file(args)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(format_table(report, markdown=args.markdown, flaky_first=True))
    return EXIT_OK


def cmd_gate(args: argparse.Namespace) -> int:
    report = _report_from_file(args)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(format_table(report, flaky_first=True))
    return EXIT_OK if report.gate.passed else EXIT_BLOCKED


def cmd_plan(args: argparse.Namespace) -> int:
    targets = [args.target] if args.target is not None else [0.5, 0.8, 0.9, 0.95, 0.99]
    rows = [{"target": t, "k": args.k, "confidence": args.confidence,
             "runs_needed": runs_needed(t, args.k, confidence=args.confidence)} for t in targets]
    if args.json:
        _print_json(rows if args.target is None else rows[0])
        return EXIT_OK
    print(f"all-pass runs needed to claim pass^{args.k} >= target "
          f"at {args.confidence:.0%} confidence")
    print(f"{'target':>7}  {'runs':>6}")
    for row in rows:
        print(f"{row['target']:>7.3f}  {row['runs_needed']:>6}")
    return EXIT_OK


def _probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} must lie in [0, 1]")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="passk",
        description="pass@k, pass^k and flakiness for AI agents: report, gate and plan repeats.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Callable[[argparse.Namespace], int], help_: str,
            ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(func=func)
        p.add_argument("--json", action="store_true", help="print JSON instead of a table")
        return p

    p = add("demo", cmd_demo, "the chapter's stability demo, before and after the fix")
    p.add_argument("--seed", type=int, default=DEMO_SEED)
    p.add_argument("--k", type=_positive_int, default=5)

    p = add("curves", cmd_curves, "pass@k and pass^k for k = 1..K at a single-run rate p")
    p.add_argument("--p", type=_probability, default=0.9)
    p.add_argument("--k", type=_positive_int, default=8)

    for name, func, help_ in (("report", cmd_report, "score a results file per task"),
                              ("gate", cmd_gate, "the dual gate on a results file (exit 0/1/2)")):
        p = add(name, func, help_)
        p.add_argument("file", help="results: JSON Lines (.jsonl) or CSV (.csv), one run a row")
        p.add_argument("--k", type=_positive_int, default=5)
        if name == "report":
            p.add_argument("--markdown", action="store_true", help="a Markdown table")
        else:
            p.add_argument("--min-overall", type=_probability, default=0.7,
                           help="bar for the mean pass^k (default 0.7)")
            p.add_argument("--max-flakiness", type=_probability, default=0.2,
                           help="cap on any task's flakiness (default 0.2)")

    p = add("plan", cmd_plan, "all-pass runs needed to support a claim pass^k >= target")
    p.add_argument("--target", type=_probability, default=None)
    p.add_argument("--k", type=_positive_int, default=5)
    p.add_argument("--confidence", type=_probability, default=0.95)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ResultsError, BadInput, ValueError) as exc:
        print(f"passk {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"passk {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
