"""passk's Python API for results files: read, bind, score and judge, once.

``passk report``, ``passk gate``, ``passk plan FILE``, the GitHub Action and any
script are skins over this module, as ``inspect eval`` is over
``inspect_ai.eval()``: they say what was asked as a plain mapping (the names of
:data:`passk.gate.bind.CRITERIA` and :data:`passk.gate.bind.CHOICES`, see
:func:`passk.gate.bind.asked_from`) and get a judged
:class:`~passk.analysis.report.FileReport` back, whose verdict line already names
the policy and every choice in effect.

Examples
--------
>>> import json, tempfile
>>> from pathlib import Path
>>> d = Path(tempfile.mkdtemp()); (d / ".git").mkdir()
>>> _ = (d / "runs.jsonl").write_text("".join(
...     json.dumps({"task_id": t, "trial": i, "success": t == "a" or i % 2 == 0}) + "\\n"
...     for t in "ab" for i in range(6)))
>>> fr = gate([str(d / "runs.jsonl")], asked={"k": 2}, cwd=d)
>>> print(fr.gate.verdict())
gate: BLOCKED  overall pass^2 = 0.600  (bar 0.700, flakiness cap 0.200)  [no policy: criteria from the command line]
"""  # noqa: E501  # a doctest's output line cannot wrap

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from passk.errors import BadInput, PolicyError
from passk.gate.bind import InForce, bind
from passk.gate.criteria import curtailment_refusal
from passk.gate.policy import (
    Policy,
    apply_policy,
    count_errors,
    policy_in_force,
    set_aside_refusal,
)
from passk.results.counts import Results, ResultsError
from passk.results.formats import FORMAT_OPTIONS
from passk.results.protocol import require_same_protocol
from passk.results.read import read_results
from passk.stability import CLASS_THRESHOLD

if TYPE_CHECKING:
    from passk.analysis.rank import RankReport
    from passk.analysis.report import FileReport

__all__ = ["Evaluation", "gate", "rank", "report"]

#: Extensions whose format is fixed (nothing to detect, so nothing said).
_EXTENSION_FORMATS = (".jsonl", ".ndjson", ".csv")
#: Producers whose files hold one run a task unless repeats were asked for.
_REPEATS_FLAG = {"promptfoo": "`promptfoo eval --repeat N`",
                 "lm-eval": "repeats: N in the task (each repeat scored), or one lm-eval run "
                            "per --seed read together"}
#: What a results input is: one file, or several read as trials of one suite.
Input = str | Sequence[str]


def _quiet(line: str) -> None:
    """Where notes go when nobody listens."""


def label(path: Input) -> str:
    """An input as messages name it."""
    return path if isinstance(path, str) else " + ".join(path)


@dataclass
class Evaluation:
    """One evaluation of results files: what was asked, the policy, what was read, bound once.

    Parameters
    ----------
    asked : Mapping[str, Any]
        What was asked, by :func:`passk.gate.bind.asked_from`'s names, plus the
        reader's ``format``, ``ci_method``, ``class_threshold``, ``k_for``.
    policy_file : path, optional
        ``--policy FILE``; default: the repository's (:func:`policy_in_force`).
    policy_ref : str, optional
        Read the policy from this commit (a pull request's base).
    cwd : path, optional
        Where the policy's search starts (default: the working directory).
    command : str
        How notes name the command.
    say : callable
        Where notes go, one line each (the CLI: stderr).
    front : str
        How options are spelled in messages (:data:`passk.gate.bind.FRONTS`).
    """

    asked: Mapping[str, Any] = field(default_factory=dict)
    policy_file: str | os.PathLike[str] | None = None
    policy_ref: str | None = None
    cwd: str | os.PathLike[str] | None = None
    command: str = "gate"
    say: Callable[[str], None] = _quiet
    front: str = "cli"
    #: What was read, by role (``results``, ``baseline``), for the HTML page.
    read: list[tuple[str, Results]] = field(default_factory=list)
    _policy: Policy | None = field(default=None, init=False, repr=False)
    _policy_read: bool = field(default=False, init=False, repr=False)
    _said: tuple[str, ...] = field(default=(), init=False, repr=False)
    _bound: InForce | None = field(default=None, init=False, repr=False)

    def note(self, line: str) -> None:
        """Say one line, prefixed with the command."""
        self.say(f"passk {self.command}: {line}")

    def policy(self, paths: Sequence[str] = ()) -> Policy | None:
        """The policy in force, read once (:func:`passk.gate.policy.policy_in_force`)."""
        if not self._policy_read:
            aside = bool(self.asked.get("no_policy"))
            self._policy = policy_in_force(self.policy_file, cwd=self.cwd,
                                           results=[p for p in paths if p != "-"],
                                           ref=self.policy_ref,
                                           set_aside_by=self.command if aside else None)
            self._policy_read = True
            if aside:
                self.note("policy set aside (--no-policy): the repository's policy is not "
                          "applied; the criteria are the command line's and the defaults, "
                          "and passk gate still applies the policy")
        return self._policy

    def _asked(self, files: int = 1) -> dict[str, Any]:
        return {**self.asked, "files": files}

    def read_all(self, inputs: Sequence[tuple[Input, bool]]) -> list[Results]:
        """Read each input (a file, or several as trials of one suite); ``judged`` marks the
        evidence the gate judges (``passk gate NEW --baseline OLD``: NEW judged, OLD not).

        Where the command may set the policy aside (``passk report``, ``plan``), a refusal
        by the policy, or evidence the policy's task set does not cover, says how
        (``--no-policy``).
        """
        try:
            return self._read_all(inputs)
        except PolicyError as exc:
            if self._policy is None or set_aside_refusal(self.command) is not None:
                raise
            raise PolicyError(f"{exc}; or, to explore, passk {self.command} --no-policy sets "
                              "the policy aside (passk gate never does)") from None

    def _read_all(self, inputs: Sequence[tuple[Input, bool]]) -> list[Results]:
        """:meth:`read_all`, step by step.

        Step by step, for every input: the binding refuses an option that would loosen the
        policy and gives the readers the success rule in force; each input is read; a log
        that stopped early is verified from its own records; the policy's errors rule is
        applied, and the judged results are checked against its producer, protocol, task
        set and runs.
        """
        paths = [[p] if isinstance(p, str) else list(p) for p, _ in inputs]
        fmt = str(self.asked.get("format") or "auto")
        policy = self.policy([p for ps in paths for p in ps])
        a = self.asked
        common: dict[str, Any] = {
            "duplicates": a.get("duplicates") or "error",
            "pool_evaluations": bool(a.get("pool_evaluations")),
            "pool_unverified_runs": bool(a.get("pool_unverified_runs")),
            "accept_incomplete": bool(a.get("accept_incomplete")),
            "eval_key": a.get("eval_key"),
            "count_errors_as_failures": a.get("count_errors_as_failures") or None}
        producers: list[str | None] = [None] * len(paths)
        if policy is not None:
            from passk.results.formats import detect_format

            producers = [fmt if fmt != "auto" else policy.producer or detect_format(ps[0])
                         for ps in paths]
        options: list[dict[str, Any]] = []
        for ps, producer in zip(paths, producers, strict=True):
            # refused here when looser than the policy, before anything is read
            reader = bind(self._asked(len(ps)), policy, front=self.front,
                          producer=producer).reader
            opts = {k: v for k, v in reader.items() if v is not None}
            taken = FORMAT_OPTIONS.get(producer, ()) if producer is not None else None
            if taken is not None and "errors" not in taken and a.get("errors") is None:
                opts.pop("errors", None)  # the policy's errors rule, where the reader takes it
            options.append(opts)
        read = [read_results(ps[0] if len(ps) == 1 else ps, fmt, **opts, **common)
                for ps, opts in zip(paths, options, strict=True)]
        read = [_stopped_early(results, ps) if judged else results
                for (_, judged), ps, results in zip(inputs, paths, read, strict=True)]
        for (path, _), ps, results in zip(inputs, paths, read, strict=True):
            _refuse_single_runs(a.get("k"), label(path), results)
            if fmt == "auto" and (results.source not in ("jsonl", "csv") or any(
                    Path(p).suffix.lower() not in _EXTENSION_FORMATS for p in ps)):
                self.note(f"read {', '.join(ps)} as {results.source} (detected; --format to "
                          "override)")
        errors = policy.errors if policy is not None else "fail"
        out = []
        for (path, judged), found in zip(inputs, read, strict=True):
            results, said = count_errors(found, errors)
            self.read.append(("results" if judged else "baseline", results))
            if judged:
                self._said = said
                if policy is not None:
                    gaps = len(results.incomplete)
                    results = apply_policy(policy, results, label(path))
                    if len(results.incomplete) > gaps and set_aside_refusal(
                            self.command) is None:
                        self.note(f"the policy {policy.path} does not cover all of "
                                  f"{label(path)}: to explore it, passk {self.command} "
                                  "--no-policy sets the policy aside (passk gate never does)")
            out.append(results)
        return out

    def bound(self, results: Results) -> InForce:
        """The criteria in force for ``results`` (:func:`passk.gate.bind.bind`), bound once;
        a curtailed or stopped run decides only under the gate it served."""
        if self._bound is not None:
            return self._bound
        f = bind(self._asked(), self.policy(), results.protocol, front=self.front,
                 producer=results.source, said=self._said, recorded_k=results.recorded_k)
        if results.recorded_k is not None and f.origins["k"].startswith("the log's"):
            self.note(f"k = {f.k}, from {f.origins['k']} (--k to choose)")
        refused = curtailment_refusal(
            results.protocol, {"k": f.k, "min_overall_pass_hat_k": f.value("bar"),
                               "max_flakiness": f.value("cap"), "gate_on": f.value("on"),
                               "confidence": f.value("confidence"),
                               "min_runs": f.value("min_runs"), "mode": f.criteria.mode},
            results)
        if refused:
            raise BadInput(refused)
        self._bound = f
        return f

    def criteria(self, results: Results) -> dict[str, Any]:
        """The criteria in force as :func:`passk.analysis.report.build_report`'s keywords.

        The default k is one rule: the protocol's, else the asked one, else the policy's,
        else the smallest n (said)."""
        f = self.bound(results)
        c = f.criteria
        per_test = results.protocol is not None and "tests" in results.protocol.settings
        if f.k is None and not f.k_for and not per_test:  # per test: each test's own k
            positive = results.totals[results.totals > 0]
            smallest = int(positive.min()) if positive.size else 1
            self.note(f"k = {smallest}, the smallest number of runs of any task (--k to "
                      "choose)")
        for line in f.stricter:
            self.note(line)
        declared = (results.protocol.settings.get("class_threshold")
                    if results.protocol is not None else None)
        return {
            "k": f.k, "k_for": dict(f.k_for), "confidence": c.confidence,
            "ci_method": self.asked.get("ci_method") or "exact",
            "class_threshold": declared if declared is not None else CLASS_THRESHOLD,
            "min_overall_pass_hat_k": c.min_overall_pass_hat_k, "max_flakiness": c.max_flakiness,
            "gate_on": c.on, "min_runs": c.min_runs, "mode": c.mode,
            "accept_incomplete": bool(self.asked.get("accept_incomplete")),
            "declared": f.declared, "stricter": f.stricter,
            "alpha": c.alpha, "correction": c.correction, "margin": c.margin,
            "policy_line": f.policy_line, "applied": f.overrides,
            "policy": f.policy.path if f.policy is not None else None,
            "policy_sha256": f.policy.sha256 if f.policy is not None else None,
        }

    def report(self, results: Results, baseline: Results | None = None) -> FileReport:
        """Score and judge ``results`` (and the comparison with ``baseline``) under the
        criteria in force: the judged report, made once."""
        from passk.analysis.report import build_report

        return build_report(results, **self.criteria(results), baseline=baseline,
                            bound=self.bound(results))

    def same_protocol(self, old: Results, new: Results, old_path: str, new_path: str) -> None:
        """Refuse to compare results measured under different protocols (or unknown against
        known), except in the settings ``allow_change`` names, which are said."""
        if old.protocol is None and new.protocol is None:
            return
        if old.protocol is None or new.protocol is None:
            missing, other = (old_path, new_path) if old.protocol is None else (new_path,
                                                                                  old_path)
            known = old.protocol if old.protocol is not None else new.protocol
            raise BadInput(f"{missing} records no protocol but {other} does (fingerprint "
                           f"{known.fingerprint if known else '?'}): cannot tell whether they "
                           "compare")
        allowed = tuple(self.asked.get("allow_change") or ())
        for line in require_same_protocol(old.protocol, new.protocol, allowed=allowed):
            self.note(f"the versions differ in {line} (--allow-change)")

    def gate(self, files: Input, baseline: Input | None = None) -> FileReport:
        """``passk gate``: the judged report on ``files`` (with ``baseline``: the paired
        comparison too, the judge deciding once on both)."""
        refused = set_aside_refusal("gate") if self.asked.get("no_policy") else None
        if refused is not None:  # a gate stays bound, whatever this evaluation is called
            raise PolicyError(refused)
        if baseline is None and self.asked.get("margin") is not None:
            raise BadInput("--margin needs --baseline OLD to compare against")
        inputs: list[tuple[Input, bool]] = [(files, True)]
        if baseline is not None:
            inputs.append((baseline, False))
        results, *others = self.read_all(inputs)  # both read, then the policy on both
        old = others[0] if others else None
        if old is not None and baseline is not None:
            self.same_protocol(old, results, label(baseline), label(files))
        return self.report(results, old)

    def rank(self, files: Sequence[Input]) -> RankReport:
        """``passk rank``: each input one version, read and bound as ``passk gate`` reads
        its results; ranked on mean pass^k at the k in force, the family-wise error the
        policy's (or the asked) alpha (:func:`passk.analysis.rank.rank_results`)."""
        from passk.analysis.rank import rank_results

        refused = set_aside_refusal("rank") if self.asked.get("no_policy") else None
        if refused is not None:  # a ranking may gate a release: it stays bound
            raise PolicyError(refused)
        labels = [label(f) for f in files]
        if len(files) < 2:
            raise BadInput(f"rank needs at least 2 results inputs, one per version (got "
                           f"{len(files)}: {', '.join(labels) or 'none'})")
        twice = sorted({x for x in labels if labels.count(x) > 1})
        if twice:
            raise BadInput(f"{twice[0]} is given twice: each version once (a copy of a file "
                           "is the same evidence, not a second version)")
        read = self.read_all([(f, True) for f in files])
        gaps = [f"{name}: {why}" for name, r in zip(labels, read, strict=True)
                for why in r.incomplete]
        if gaps and not self.asked.get("accept_incomplete"):
            raise BadInput(f"incomplete input {gaps[0]} (--accept-incomplete to rank anyway)")
        for name, r in zip(labels[1:], read[1:], strict=True):
            self.same_protocol(read[0], r, labels[0], name)
        f = self.bound(read[0])
        for line in f.stricter:
            self.note(line)
        k = f.k
        if k is None:
            positive = np.concatenate([r.totals[r.totals > 0] for r in read])
            k = int(positive.min()) if positive.size else 1
        ranked = rank_results(read, labels, k=k, confidence=1.0 - f.criteria.alpha)
        if f.k is None:
            self.note(f"k = {k}, the smallest number of runs of any task in any file (--k to "
                      "choose)")
        return ranked


def _stopped_early(results: Results, paths: Sequence[str]) -> Results:
    """A run log that stopped before its plan, stopped early at a look (``--stop-early``) or
    curtailed (``--stopping curtailed``, ``--passk-policy curtailed``): complete under its
    protocol's stopping rule only as far as :func:`passk.run.runner.results_of_replayed_log`,
    replaying its own records through the scheduler, shows it. Anything not shown stays
    short of its plan (the gate blocks)."""
    if results.protocol is None or len(paths) != 1:
        return results
    from passk.run.runner import results_of_replayed_log

    return results_of_replayed_log(paths[0], results)


def _refuse_single_runs(k: Any, where: str, results: Results) -> None:
    """A promptfoo or lm-eval file without repeats (one run a task) gated at k > 1 is
    refused: it holds no evidence about pass^k, and saying so beats a table of dashes."""
    if (results.source in _REPEATS_FLAG and isinstance(k, int) and k > 1 and len(results)
            and int(results.totals.max()) <= 1):
        raise ResultsError(where, None, f"one run a task (no repeats), so pass^{k} cannot be "
                           f"estimated: run {_REPEATS_FLAG[results.source]} with N >= {k}, "
                           "or pass --k 1")


def gate(files: Input, baseline: Input | None = None, *, asked: Mapping[str, Any] | None = None,
         policy: str | os.PathLike[str] | None = None, policy_ref: str | None = None,
         cwd: str | os.PathLike[str] | None = None,
         say: Callable[[str], None] = _quiet) -> FileReport:
    """The gate on results files, as ``passk gate`` decides it.

    Parameters
    ----------
    files : str or sequence of str
        A results file, or several read as trials of one suite.
    baseline : str or sequence of str, optional
        The last release's results: the paired comparison decides too.
    asked : Mapping[str, Any], optional
        What was asked, by :func:`passk.gate.bind.asked_from`'s names (``k``,
        ``bar``, ``cap``, ``on``, ``confidence``, ``min_runs``, ``mode``,
        ``alpha``, ``correction``, ``margin``, the readers' choices) and
        ``format``.
    policy, policy_ref, cwd
        The policy file, the commit to read the policy from, and where its
        search starts (:func:`passk.gate.policy.policy_in_force`).
    say : callable
        Where notes go (what auto-detection chose, the k chosen, ...).

    Returns
    -------
    FileReport
        Judged: ``fr.gate`` is the verdict, its line naming the policy and every choice.

    Raises
    ------
    passk.errors.PasskError
        Input the gate cannot use (its ``exit_code`` is 2).
    """
    run = Evaluation(dict(asked or {}), policy, policy_ref, cwd, "gate", say, "api")
    return run.gate(files, baseline)


def report(files: Input, *, asked: Mapping[str, Any] | None = None,
           policy: str | os.PathLike[str] | None = None, policy_ref: str | None = None,
           cwd: str | os.PathLike[str] | None = None,
           say: Callable[[str], None] = _quiet) -> FileReport:
    """``passk report``: the judged report on results files (see :func:`gate`)."""
    run = Evaluation(dict(asked or {}), policy, policy_ref, cwd, "report", say, "api")
    results = run.read_all([(files, True)])[0]
    return run.report(results)


def rank(files: Sequence[Input], *, asked: Mapping[str, Any] | None = None,
         policy: str | os.PathLike[str] | None = None, policy_ref: str | None = None,
         cwd: str | os.PathLike[str] | None = None,
         say: Callable[[str], None] = _quiet) -> RankReport:
    """``passk rank``: several versions' results ranked on mean pass^k into tie groups.

    Parameters
    ----------
    files : sequence of (str or sequence of str)
        One input per version (a file, or several read as trials of one suite).
    asked : Mapping[str, Any], optional
        As :func:`gate`: ``k``, ``alpha`` (1 - the table's family-wise confidence), the
        readers' choices, ``format``, ``allow_change``, ``accept_incomplete``.
    policy, policy_ref, cwd, say
        As :func:`gate`.

    Returns
    -------
    passk.analysis.rank.RankReport
        ``report.ranking`` (order, tie groups, claims, rank intervals), each version's
        noise, and the adjacent pairs with the runs that would separate them.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> d = Path(tempfile.mkdtemp()); (d / ".git").mkdir()
    >>> for name, rate in (("a", 3), ("b", 9)):
    ...     _ = (d / f"{name}.jsonl").write_text("".join(
    ...         json.dumps({"task_id": t, "trial": i, "success": (t * 7 + i) % 10 < rate})
    ...         + "\\n" for t in range(30) for i in range(4)))
    >>> rep = rank([str(d / "a.jsonl"), str(d / "b.jsonl")], asked={"k": 2}, cwd=d)
    >>> [Path(rep.labels[v]).name for v in rep.ranking.order], len(rep.ranking.groups)
    (['b.jsonl', 'a.jsonl'], 2)
    """
    run = Evaluation(dict(asked or {}), policy, policy_ref, cwd, "rank", say, "python")
    return run.rank(files)
