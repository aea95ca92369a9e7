"""The gate policy: what the evaluation is and what it must reach, committed with the code.

A release gate's contract has to live where a reviewer sees it change. The
policy is one TOML table, in either of two places, found the way ruff and
pytest find their configuration (walking up from the working directory, then
from the results files, to the repository root, the first directory holding
``.git``):

- ``passk.toml``, whose top level is the policy, checked first in each
  directory (as ruff checks ``ruff.toml`` before ``pyproject.toml``);
- ``[tool.passk]`` in ``pyproject.toml``, for a project that keeps one
  configuration file (passk's own house style).

Both, because a repository that gates an agent is not always a Python project
(a ``passk.toml`` beside the evaluation), and one that is keeps its settings in
``pyproject.toml``. The working directory is searched first, so that the
anchor is the repository being released, not the folder the evidence sits in.
``--policy FILE`` names one explicitly (a ``.toml`` file; a ``pyproject.toml``
is read at ``[tool.passk]``).

Every key is validated (:func:`load_policy`): an unknown key or a bad value is
one line naming the file, the key and what to do. The schema::

    producer = "inspect"          # the format the evidence must be read as
    require_protocol = true       # a passk run log: its header must be there
    errors = "fail"               # errored samples: 'fail' | 'exclude' | 'fail-all'
    pooling = ["trials"]          # which pooling of files is allowed

    [tasks]                       # the task set, and the runs each must have
    ids = ["a", "b"]              # or: dataset = "name", size = 3
    runs = 5                      # or: runs_by_risk = {high-risk-write = 12}

    [tasks.risk]                  # each task's tier, one line a task
    a = "high-risk-write"         # a needs runs_by_risk's 12 runs
    b = "read-only"               # b needs runs_by_risk's read-only, else runs

    [success]                     # the success rule (Inspect, Harbor)
    scorer = "match"
    values = ["C"]                # or: threshold = 1.0
    score_key = "reward"

    [gate]                        # k, bar, cap, on, confidence, min_runs
    k = 5
    bar = 0.7
    cap = 0.2

    [baseline]                    # the comparison with the last release
    alpha = 0.05
    correction = "holm"
    margin = 0.05

With a policy in force, an option that would loosen it is refused
(:func:`refuse_looser`); a results file's own protocol is checked against it and
never loosens it (:func:`protocol_refusal`); what the evidence lacks of the
policy's task set and runs is incomplete, and fails closed (:func:`apply_policy`).

Tiers are the policy's, never the evidence's. A task's risk tier decides the runs it
needs, so it is written in the policy, task by task (``[tasks.risk]``, which
``passk policy init`` writes from the honest evidence), and a record that labels its
task with another tier is refused, naming the file, the task and both tiers
(:func:`apply_policy`). The tiers are a table keyed by task, not lists keyed by tier,
for the reviewer: TOML refuses a key written twice, so each task has exactly one
tier, and moving a task to another tier is one changed line naming the task and
both tiers. A policy with ``runs_by_risk`` that gives a task no tier fails closed:
the task needs the largest of ``runs_by_risk`` and ``runs``, whatever its records
call it (:meth:`TaskSet.runs_for_task`).
"""

from __future__ import annotations

import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from passk.criteria import CORRECTIONS, GATE_ON, GateCriteria
from passk.results.counts import Results, with_unrun_tasks
from passk.results.formats import FORMAT_OPTIONS, FORMATS
from passk.results.protocol import Protocol

__all__ = [
    "ERRORS",
    "NO_POLICY",
    "POLICY_FILE",
    "POOLING",
    "Policy",
    "PolicyError",
    "SuccessRule",
    "TaskSet",
    "apply_policy",
    "count_errors",
    "find_policy",
    "load_policy",
    "override_phrases",
    "policy_init",
    "protocol_refusal",
    "refuse_looser",
]

#: The policy's own file name.
POLICY_FILE = "passk.toml"
#: What the verdict line says when no policy is in force.
NO_POLICY = "no policy: criteria from the command line"
#: What errored samples count as: ``fail`` (a failure, unless the producer calls it an
#: infrastructure failure: Harbor's error policy, tau2's and passk's infrastructure
#: errors), ``exclude`` (left out, counted and shown), ``fail-all`` (a failure even
#: when the producer calls it the infrastructure's).
ERRORS = ("fail", "exclude", "fail-all")
#: Which pooling of files a policy may allow: ``trials`` (several files of one
#: evaluation, as trials of one suite) and ``evaluations`` (files of different
#: evaluations, ``--pool-evaluations``).
POOLING = ("trials", "evaluations")
#: The errored records a producer does not tell from infrastructure failures.
_AGENT_OR_INFRA = ("errored samples",)

_TOP = {"producer", "require_protocol", "errors", "pooling", "tasks", "success", "gate",
        "baseline"}
_TABLES: dict[str, set[str]] = {
    "tasks": {"ids", "dataset", "size", "runs", "runs_by_risk", "risk"},
    "success": {"scorer", "values", "threshold", "score_key"},
    "gate": {"k", "bar", "cap", "on", "confidence", "min_runs"},
    "baseline": {"alpha", "correction", "margin"},
}


class PolicyError(ValueError):
    """A policy that cannot be used, or an option or file it refuses; one line."""


@dataclass(frozen=True)
class TaskSet:
    """The policy's task set and the runs each task must have.

    Attributes
    ----------
    ids : tuple of str
        The tasks by id (empty when the policy names a dataset instead).
    dataset : str or None
        A dataset's name (an Inspect log's dataset), with its ``size``.
    size : int or None
        How many samples (tasks) the dataset has.
    runs : int or None
        Runs every task must have.
    runs_by_risk : Mapping[str, int]
        Runs per risk label, over ``runs`` where given.
    risk : Mapping[str, str]
        Each task's tier (task id to risk label), the policy's, not the evidence's.

    Examples
    --------
    >>> ts = TaskSet(("a", "b"), runs=5, runs_by_risk={"high-risk-write": 12},
    ...              risk={"a": "high-risk-write", "b": "read-only"})
    >>> ts.runs_for_task("a"), ts.runs_for_task("b"), ts.runs_for_task("c")
    (12, 5, 12)
    """

    ids: tuple[str, ...] = ()
    dataset: str | None = None
    size: int | None = None
    runs: int | None = None
    runs_by_risk: Mapping[str, int] = field(default_factory=dict)
    risk: Mapping[str, str] = field(default_factory=dict)

    def runs_for(self, risk: str) -> int | None:
        """The runs a task of this tier must have, or None when the policy says none."""
        return self.runs_by_risk.get(risk, self.runs)

    def tier_of(self, task_id: str) -> str | None:
        """The policy's tier for a task, or None when the policy gives it none."""
        return self.risk.get(task_id)

    def runs_for_task(self, task_id: str) -> int | None:
        """The runs a task must have, from the policy's tier for it (never the evidence's).

        A task the policy gives no tier, under a policy whose runs depend on the tier
        (``runs_by_risk``), needs the largest of them and ``runs``: the evidence cannot
        choose its own tier. None when the policy asks no runs.
        """
        tier = self.tier_of(task_id)
        if tier is not None:
            return self.runs_for(tier)
        if self.runs_by_risk:
            return max([*self.runs_by_risk.values(), *([self.runs] if self.runs else [])])
        return self.runs


@dataclass(frozen=True)
class SuccessRule:
    """What a success is, for the producers whose scores are not pass/fail."""

    scorer: str | None = None
    values: tuple[str, ...] = ()
    threshold: float | None = None
    score_key: str | None = None

    def reader_options(self, fmt: str) -> dict[str, Any]:
        """The rule as :func:`passk.results.read.read_results` options, those ``fmt`` takes."""
        given = {"scorer": self.scorer, "success_values": list(self.values) or None,
                 "success_threshold": self.threshold, "score_key": self.score_key}
        taken = FORMAT_OPTIONS.get(fmt, ())
        return {k: v for k, v in given.items() if v is not None and k in taken}


@dataclass(frozen=True)
class Policy:
    """A gate policy, read from its file (see the module's docstring for the schema).

    Examples
    --------
    >>> p = Policy("passk.toml", criteria=GateCriteria(k=3, min_overall_pass_hat_k=0.8))
    >>> p.criteria.describe()
    'k 3, bar 0.8 on the estimate, flakiness cap 0.2'
    >>> p.phrase
    'policy passk.toml'
    """

    path: str
    producer: str | None = None
    tasks: TaskSet = field(default_factory=TaskSet)
    success: SuccessRule = field(default_factory=SuccessRule)
    errors: str = "fail"
    criteria: GateCriteria = field(default_factory=GateCriteria)
    pooling: tuple[str, ...] = ("trials",)
    require_protocol: bool = False

    @property
    def phrase(self) -> str:
        """The policy as the verdict line names it."""
        return f"policy {self.path}"


# --------------------------------------------------------------------------
# finding and reading
# --------------------------------------------------------------------------

def _has_tool_passk(pyproject: Path) -> bool:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(data.get("tool"), dict) and "passk" in data["tool"]


def _walk_up(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        if (directory / POLICY_FILE).is_file():
            return directory / POLICY_FILE
        if (directory / "pyproject.toml").is_file() and _has_tool_passk(
                directory / "pyproject.toml"):
            return directory / "pyproject.toml"
        if (directory / ".git").exists():  # the repository's root: stop here
            return None
    return None


def find_policy(cwd: str | os.PathLike[str] | None = None,
                results: Sequence[str | os.PathLike[str]] = ()) -> Path | None:
    """The policy file in force: ``passk.toml`` or a ``pyproject.toml`` with ``[tool.passk]``.

    Walks up from ``cwd`` (default: the working directory) to the repository's
    root, then from the results files' common directory; the first found wins.

    Returns
    -------
    pathlib.Path or None

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / ".git").mkdir(); (d / "runs").mkdir()
    >>> _ = (d / "passk.toml").write_text("[gate]\\nbar = 0.8\\n")
    >>> find_policy(d / "runs") == d / "passk.toml"
    True
    """
    found = _walk_up(Path(cwd if cwd is not None else Path.cwd()).resolve())
    if found is None and results:
        dirs = [Path(p).resolve() for p in results]
        dirs = [p if p.is_dir() else p.parent for p in dirs]
        found = _walk_up(Path(os.path.commonpath([str(d) for d in dirs])))
    return found


def _where(path: str, table: str | None, key: str) -> str:
    return f"{table}.{key}" if table else key


def _bad(path: str, key: str, message: str) -> PolicyError:
    return PolicyError(f"{path}: {key}: {message}")


def _number(path: str, key: str, value: Any, low: float, high: float, *,
            open_low: bool = False, open_high: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(
            value):
        raise _bad(path, key, f"{value!r} is not a number: write a number in "
                   f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}")
    if value < low or value > high or (open_low and value == low) or (
            open_high and value == high):
        raise _bad(path, key, f"{value!r} is out of range: write a number in "
                   f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}")
    return float(value)


def _whole(path: str, key: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _bad(path, key, f"{value!r} is not a whole number >= {low}: write one")
    return int(value)


def _text(path: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(path, key, f"{value!r} is not a non-empty string: write one in quotes")
    return value


def _texts(path: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v for v in value):
        raise _bad(path, key, f"{value!r} is not a list of strings: write e.g. [\"a\", \"b\"]")
    if len(set(value)) != len(value):
        raise _bad(path, key, "lists a value twice: list each once")
    return tuple(value)


def _choice(path: str, key: str, value: Any, choices: Sequence[str]) -> str:
    if value not in choices:
        raise _bad(path, key, f"{value!r} is not one of {', '.join(choices)}: write one of them")
    return str(value)


def _check_keys(path: str, table: str | None, data: Mapping[str, Any], allowed: set[str]
                ) -> None:
    for key in data:
        if key not in allowed:
            where = f"[{table}]" if table else "the top level"
            raise _bad(path, _where(path, table, key),
                       f"unknown key; the keys of {where} are {', '.join(sorted(allowed))}: "
                       "fix its name or remove it")


def parse_policy(data: Mapping[str, Any], path: str) -> Policy:
    """A :class:`Policy` from a parsed TOML table, every key validated.

    Raises
    ------
    PolicyError
        Naming the file, the key and what to do.

    Examples
    --------
    >>> parse_policy({"gate": {"k": 3}, "tasks": {"ids": ["a"], "runs": 5}}, "p.toml").tasks
    TaskSet(ids=('a',), dataset=None, size=None, runs=5, runs_by_risk={}, risk={})
    >>> parse_policy({"gate": {"barr": 1}}, "p.toml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    passk.gate.policy.PolicyError: p.toml: gate.barr: unknown key; ...
    """
    _check_keys(path, None, data, _TOP)
    tables: dict[str, Mapping[str, Any]] = {}
    for name, keys in _TABLES.items():
        table = data.get(name, {})
        if not isinstance(table, dict):
            raise _bad(path, name, f"must be a table ([{name}]), not {table!r}")
        _check_keys(path, name, table, keys)
        tables[name] = table

    require_protocol = data.get("require_protocol", False)
    if not isinstance(require_protocol, bool):
        raise _bad(path, "require_protocol", f"{require_protocol!r} is not true or false")
    producer = data.get("producer")
    if producer is not None:
        producer = _choice(path, "producer", producer, FORMATS[1:])
    errors = _choice(path, "errors", data.get("errors", "fail"), ERRORS)
    pooling = data.get("pooling", ["trials"])
    if not isinstance(pooling, list) or any(p not in POOLING for p in pooling):
        raise _bad(path, "pooling", f"{pooling!r} is not a list of {', '.join(POOLING)} "
                   "(write [] to allow one file only)")

    t = tables["tasks"]
    ids = _texts(path, "tasks.ids", t["ids"]) if "ids" in t else ()
    dataset = _text(path, "tasks.dataset", t["dataset"]) if "dataset" in t else None
    size = _whole(path, "tasks.size", t["size"], 1) if "size" in t else None
    if ids and (dataset is not None or size is not None):
        raise _bad(path, "tasks", "give either ids or dataset and size, not both")
    if (dataset is None) != (size is None):
        raise _bad(path, "tasks", "dataset and size go together: give both")
    runs = _whole(path, "tasks.runs", t["runs"], 1) if "runs" in t else None
    by_risk = t.get("runs_by_risk", {})
    if not isinstance(by_risk, dict):
        raise _bad(path, "tasks.runs_by_risk", "must be a table of risk = runs")
    runs_by_risk = {str(r): _whole(path, f"tasks.runs_by_risk.{r}", v, 1)
                    for r, v in by_risk.items()}
    tiers = _tiers(path, t.get("risk", {}), ids, runs, runs_by_risk)

    s = tables["success"]
    success = SuccessRule(
        scorer=_text(path, "success.scorer", s["scorer"]) if "scorer" in s else None,
        values=_texts(path, "success.values", s["values"]) if "values" in s else (),
        threshold=(_number(path, "success.threshold", s["threshold"], -math.inf, math.inf)
                   if "threshold" in s else None),
        score_key=_text(path, "success.score_key", s["score_key"]) if "score_key" in s else None)
    if success.values and success.threshold is not None:
        raise _bad(path, "success", "give either values or threshold, not both")

    g, b = tables["gate"], tables["baseline"]
    d = GateCriteria()
    criteria = GateCriteria(
        k=_whole(path, "gate.k", g["k"], 1) if "k" in g else d.k,
        min_overall_pass_hat_k=(_number(path, "gate.bar", g["bar"], 0, 1) if "bar" in g
                                else d.min_overall_pass_hat_k),
        max_flakiness=(_number(path, "gate.cap", g["cap"], 0, 1) if "cap" in g
                       else d.max_flakiness),
        on=_choice(path, "gate.on", g["on"], GATE_ON) if "on" in g else d.on,
        confidence=(_number(path, "gate.confidence", g["confidence"], 0, 1, open_low=True,
                            open_high=True) if "confidence" in g else d.confidence),
        min_runs=_whole(path, "gate.min_runs", g["min_runs"], 0) if "min_runs" in g
        else d.min_runs,
        alpha=(_number(path, "baseline.alpha", b["alpha"], 0, 1, open_low=True, open_high=True)
               if "alpha" in b else d.alpha),
        correction=(_choice(path, "baseline.correction", b["correction"], CORRECTIONS)
                    if "correction" in b else d.correction),
        margin=(_number(path, "baseline.margin", b["margin"], 0, 1, open_high=True)
                if "margin" in b else d.margin))
    return Policy(path, producer, TaskSet(ids, dataset, size, runs, runs_by_risk, tiers),
                  success, errors, criteria, tuple(pooling), require_protocol)


def _tiers(path: str, value: Any, ids: Sequence[str], runs: int | None,
           runs_by_risk: Mapping[str, int]) -> dict[str, str]:
    """``[tasks.risk]``: each task's tier, validated against the task set and its runs."""
    if not isinstance(value, dict):
        raise _bad(path, "tasks.risk", 'must be a table of task = tier, e.g. [tasks.risk] '
                   'a = "high-risk-write"')
    tiers = {str(task): _text(path, f"tasks.risk.{task}", tier) for task, tier in value.items()}
    if ids and tiers:
        missing = [t for t in ids if t not in tiers]
        extra = [t for t in tiers if t not in set(ids)]
        if missing:
            raise _bad(path, "tasks.risk", f"gives no tier for task(s) {', '.join(missing)} of "
                       "ids: give each task of ids its tier")
        if extra:
            raise _bad(path, "tasks.risk", f"gives a tier for task(s) {', '.join(extra)}, not "
                       "in ids: add them to ids or remove them")
    if runs_by_risk and runs is None:
        for task, tier in tiers.items():
            if tier not in runs_by_risk:
                raise _bad(path, f"tasks.risk.{task}", f"tier {tier!r} has no runs: add it to "
                           f"runs_by_risk (which has {', '.join(sorted(runs_by_risk))}) or "
                           "give runs for the others")
    return tiers


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read and validate a policy file: ``passk.toml``, or ``[tool.passk]`` of a pyproject.

    Raises
    ------
    PolicyError
        The file is missing or not TOML, or a key is unknown or its value bad;
        one line naming the file, the key and what to do.
    """
    p = Path(path)
    label = os.fspath(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PolicyError(f"{label}: no such policy file: give an existing file to --policy, "
                          f"or write one with `passk policy init`") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{label}: cannot read the policy: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{label}: not valid TOML ({exc}): fix the file") from None
    if p.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or not isinstance(tool.get("passk"), dict):
            raise PolicyError(f"{label}: has no [tool.passk] table: add one, or give "
                              "--policy a passk.toml")
        return parse_policy(tool["passk"], f"{label} [tool.passk]")
    return parse_policy(data, label)


# --------------------------------------------------------------------------
# what the policy refuses
# --------------------------------------------------------------------------

def _refused(option: str, what: str, policy: Policy) -> PolicyError:
    return PolicyError(f"{option} would loosen the policy's {what} ({policy.path}): remove the "
                       "option, or change the policy in a reviewed commit")


def refuse_looser(policy: Policy, asked: Mapping[str, Any]) -> None:
    """Refuse every option that would loosen the policy, naming the policy's value.

    Parameters
    ----------
    policy : Policy
    asked : Mapping[str, Any]
        The options given (``None``, ``False``, ``0`` or absent: not given), by
        the command line's names: ``k``, ``k_for`` (risk to k), ``min_overall``,
        ``max_flakiness``, ``on``, ``confidence``, ``min_runs``, ``alpha``,
        ``correction``, ``margin``, ``runs`` (risk to runs, ``passk run``),
        ``accept_incomplete``, ``scorer``, ``success_value``,
        ``success_threshold``, ``score_key``, ``duplicates``,
        ``pool_evaluations``, ``files`` (how many results files).

    Raises
    ------
    PolicyError

    Examples
    --------
    >>> p = Policy("passk.toml", criteria=GateCriteria(min_overall_pass_hat_k=0.8))
    >>> refuse_looser(p, {"min_overall": 0.9})  # stricter: fine
    >>> refuse_looser(p, {"min_overall": 0.5})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    passk.gate.policy.PolicyError: --min-overall 0.5 would loosen the policy's bar 0.8 ...
    """
    c = policy.criteria

    def get(name: str) -> Any:
        return asked.get(name)

    if get("k") is not None and get("k") < c.k:
        raise _refused(f"--k {get('k')}", f"k {c.k}", policy)
    for risk, kk in dict(get("k_for") or {}).items():
        if kk < c.k:
            raise _refused(f"--k-for {risk}={kk}", f"k {c.k}", policy)
    if get("min_overall") is not None and get("min_overall") < c.min_overall_pass_hat_k:
        raise _refused(f"--min-overall {get('min_overall'):g}",
                       f"bar {c.min_overall_pass_hat_k:g}", policy)
    if get("max_flakiness") is not None and get("max_flakiness") > c.max_flakiness:
        raise _refused(f"--max-flakiness {get('max_flakiness'):g}", f"cap {c.max_flakiness:g}",
                       policy)
    if get("on") is not None and GATE_ON.index(get("on")) < GATE_ON.index(c.on):
        raise _refused(f"--on {get('on')}", f"on {c.on!r}", policy)
    if get("confidence") is not None and get("confidence") < c.confidence:
        raise _refused(f"--confidence {get('confidence'):g}", f"confidence {c.confidence:g}",
                       policy)
    if get("min_runs") and get("min_runs") < c.min_runs:
        raise _refused(f"--min-runs {get('min_runs')}", f"min_runs {c.min_runs}", policy)
    if get("alpha") is not None and get("alpha") > c.alpha:
        raise _refused(f"--alpha {get('alpha'):g}", f"baseline alpha {c.alpha:g}", policy)
    if get("correction") is not None and get("correction") != c.correction and (
            CORRECTIONS.index(get("correction")) > CORRECTIONS.index(c.correction)):
        raise _refused(f"--correction {get('correction')}",
                       f"baseline correction {c.correction!r}", policy)
    if get("margin") is not None and c.margin is not None and get("margin") > c.margin:
        raise _refused(f"--margin {get('margin'):g}", f"baseline margin {c.margin:g}", policy)
    for risk, n in dict(get("runs") or {}).items():
        need = policy.tasks.runs_for(risk)
        if need is not None and n < need:
            raise _refused(f"{n} runs for {risk} tasks", f"runs {need} for {risk}", policy)
    if get("accept_incomplete"):
        raise _refused("--accept-incomplete", "task set and runs (incomplete evidence fails "
                       "closed)", policy)
    rule = policy.success
    if get("scorer") is not None and get("scorer") != rule.scorer:
        raise _refused(f"--scorer {get('scorer')}", f"scorer {rule.scorer!r}" if rule.scorer
                       else "success rule (no scorer chosen: the log's own)", policy)
    if get("success_value") and set(get("success_value")) - set(rule.values):
        extra = sorted(set(get("success_value")) - set(rule.values))
        raise _refused(f"--success-value {', '.join(extra)}",
                       f"success values {list(rule.values)}" if rule.values
                       else "success rule (the producer's pass/fail values)", policy)
    if get("success_threshold") is not None and (
            rule.threshold is None or get("success_threshold") < rule.threshold):
        raise _refused(f"--success-threshold {get('success_threshold'):g}",
                       f"success threshold {rule.threshold:g}" if rule.threshold is not None
                       else "success rule (no threshold)", policy)
    if get("score_key") is not None and get("score_key") != rule.score_key:
        raise _refused(f"--score-key {get('score_key')}", f"score_key {rule.score_key!r}"
                       if rule.score_key else "success rule (no score key)", policy)
    if get("duplicates") not in (None, "error"):
        raise _refused(f"--duplicates {get('duplicates')}", "evidence (a run recorded twice "
                       "is an error)", policy)
    if get("pool_evaluations") and "evaluations" not in policy.pooling:
        raise _refused("--pool-evaluations", f"pooling {list(policy.pooling)}", policy)
    if (get("files") or 1) > 1 and "trials" not in policy.pooling:
        raise _refused(f"{get('files')} results files", f"pooling {list(policy.pooling)} (one "
                       "file only)", policy)


def strictest(policy: Policy | None, asked: Mapping[str, Any]) -> dict[str, Any]:
    """The gate's criteria to ask for: each the option's when given (it is at least as
    strict, :func:`refuse_looser` has seen to it), else the policy's, else not asked.

    Keys as :func:`passk.gate.criteria.bind_criteria` takes them, with ``min_runs``.
    """
    out = {"k": asked.get("k"), "min_overall_pass_hat_k": asked.get("min_overall"),
           "max_flakiness": asked.get("max_flakiness"), "gate_on": asked.get("on"),
           "confidence": asked.get("confidence"), "min_runs": asked.get("min_runs") or 0}
    if policy is None:
        return out
    c = policy.criteria
    policy_values = {"k": c.k, "min_overall_pass_hat_k": c.min_overall_pass_hat_k,
                     "max_flakiness": c.max_flakiness, "gate_on": c.on,
                     "confidence": c.confidence}
    for name, value in policy_values.items():
        if out[name] is None:
            out[name] = value
    out["min_runs"] = max(int(out["min_runs"] or 0), c.min_runs)
    return out


#: A protocol's settings and the policy's criteria they must not loosen.
_HEADER = (("k", "k", "higher"), ("min_overall_pass_hat_k", "bar", "higher"),
           ("max_flakiness", "cap", "lower"), ("confidence", "confidence", "higher"),
           ("min_runs", "min_runs", "higher"))


def protocol_refusal(policy: Policy, protocol: Protocol | None, label: str) -> str | None:
    """Why a results file's own protocol may not be gated under the policy, or None.

    A protocol (a ``passk run`` log's header) is checked against the policy and
    never loosens it: one that declares fewer tasks, fewer runs, a smaller k,
    a lower bar, a higher cap or gates on the estimate where the policy gates
    on the lower bound is refused, naming both values.

    Examples
    --------
    >>> p = Policy("passk.toml", criteria=GateCriteria(k=5))
    >>> print(protocol_refusal(p, Protocol({"k": 3}), "run.jsonl"))  # doctest: +ELLIPSIS
    run.jsonl: its protocol declares k 3, looser than the policy's k 5 (passk.toml): ...
    """
    if protocol is None:
        return None
    s, c = protocol.settings, policy.criteria
    policy_values = {"k": c.k, "bar": c.min_overall_pass_hat_k, "cap": c.max_flakiness,
                     "confidence": c.confidence, "min_runs": c.min_runs}
    tail = f"({policy.path}): the evidence must be measured under the policy; rerun under it"
    for key, name, direction in _HEADER:
        declared = s.get(key)
        if not isinstance(declared, (int, float)) or isinstance(declared, bool):
            continue
        want = policy_values[name]
        if (declared < want) if direction == "higher" else (declared > want):
            return (f"{label}: its protocol declares {name} {declared:g}, looser than the "
                    f"policy's {name} {want:g} {tail}")
    on = s.get("gate_on")
    if on in GATE_ON and GATE_ON.index(on) < GATE_ON.index(c.on):
        return f"{label}: its protocol gates on the {on}, the policy on the {c.on} {tail}"
    listed = s.get("tasks")
    if isinstance(listed, list) and policy.tasks.ids:
        missing = [t for t in policy.tasks.ids if t not in set(map(str, listed))]
        if missing:
            return (f"{label}: its protocol leaves out the policy's task(s) "
                    f"{', '.join(missing)} {tail}")
    by_risk, default = s.get("runs_by_risk"), s.get("default_runs")
    if isinstance(by_risk, Mapping) or isinstance(default, int):
        risks = set(policy.tasks.runs_by_risk) | set(by_risk or {})
        for risk in sorted(risks) or ["read-only"]:
            need = policy.tasks.runs_for(risk)
            have = (by_risk or {}).get(risk, default)
            if need is not None and isinstance(have, int) and have < need:
                return (f"{label}: its protocol plans {have} runs for {risk} tasks, fewer than "
                        f"the policy's {need} {tail}")
    return None


def count_errors(results: Results, errors: str) -> tuple[Results, tuple[str, ...]]:
    """Apply the policy's ``errors = 'fail-all'``: every run the reader left out (the
    producer's own infrastructure errors included) counts as a failure. ``'fail'`` and
    ``'exclude'`` are the readers' own rule (``read_results(errors=...)``: an errored
    sample the producer does not call the infrastructure's is a failure unless
    excluded), so the results come back as they are. Returns the results and what was done.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> r = results_from_runs([Run("a", True, 0), Run("a", False, 1, excluded=True,
    ...                                                 excluded_as="errored samples")])
    >>> counted, said = count_errors(r, "fail-all")
    >>> counted.totals.tolist(), counted.excluded.tolist(), said
    ([2], [0], ('errored samples counted as failures: 1 (errors = fail-all)',))
    """
    if errors not in ERRORS:
        raise ValueError(f"errors ({errors!r}) must be one of {', '.join(ERRORS)}")
    if errors != "fail-all":  # 'fail' and 'exclude' are the reader's own rule (its errors=)
        return results, ()
    left_out = int(results.excluded.sum())
    if not left_out or errors == "exclude":
        said = (f"{results.excluded_reason or 'runs'} left out: {left_out} (errors = exclude)",)
        return results, said if left_out else ()
    if errors == "fail" and results.excluded_reason not in _AGENT_OR_INFRA:
        return results, ()  # the producer's own rule: its infrastructure errors are left out
    counted = replace(results, totals=results.totals + results.excluded,
                      excluded=np.zeros_like(results.excluded), excluded_reason="")
    line = (f"{results.excluded_reason or 'excluded runs'} counted as failures: {left_out} "
            f"(errors = {errors})")
    return counted, (line,)


def _labels_every_record(results: Results) -> bool:
    """Whether the evidence's risk labels were all written by its producer: a passk log
    (``passk run``, ``write_runs``, the pytest plugin's ``--passk-log``) labels every record,
    so its ``read-only`` is a label given; elsewhere ``read-only`` may only mean none."""
    s = results.protocol.settings if results.protocol is not None else {}
    return isinstance(s.get("tasks"), list) or isinstance(s.get("tests"), Mapping)


def _policy_tiers(policy: Policy, results: Results, label: str) -> Results:
    """The results with the policy's tier for each task it gives one; a task whose
    records give another tier is refused (the evidence cannot choose its own tier)."""
    tiers = policy.tasks.risk
    if not tiers:
        return results
    given = _labels_every_record(results)
    recorded = (results.totals + results.excluded).tolist()
    for tid, risk, n in zip(results.task_ids, results.risks, recorded, strict=True):
        tier = tiers.get(tid)
        if tier is None or risk == tier or n == 0 and tid not in results.settled_early:
            continue  # no tier, the same, or no record says (an unlabelled task's default)
        if risk != "read-only" or given:
            raise PolicyError(
                f"{label}: task {tid}: its records give risk {risk!r}, but the policy's tier "
                f"for it is {tier!r} ({policy.path}): the evidence cannot choose its own "
                "tier; give the evidence as it was run, or change the task's tier in the "
                "policy in a reviewed commit")
    return replace(results, risks=tuple(tiers.get(t, r) for t, r in
                                        zip(results.task_ids, results.risks, strict=True)))


def apply_policy(policy: Policy, results: Results, label: str) -> Results:
    """The results as the policy judges them: its task set's missing tasks added with no runs,
    and each gap from the policy's task set and runs an ``incomplete`` sentence (the gate
    fails closed on them).

    The runs each task needs are the policy's for its tier (:meth:`TaskSet.runs_for_task`),
    and each task takes the policy's tier in the results.

    Raises
    ------
    PolicyError
        The results were read as another producer than the policy's, their
        protocol would loosen the policy (see :func:`protocol_refusal`), or a task's
        records give it another tier than the policy's.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> p = Policy("passk.toml", tasks=TaskSet(ids=("a", "b"), runs=2))
    >>> r = apply_policy(p, results_from_runs([Run("a", True, 0), Run("a", True, 1)]), "f")
    >>> r.task_ids, r.incomplete
    (('a', 'b'), ("task b: the policy's task set lists it, the evidence has no runs of it",))
    """
    if policy.producer is not None and results.source != policy.producer:
        raise PolicyError(f"{label}: read as {results.source}, but the policy's producer is "
                          f"{policy.producer} ({policy.path}): give the policy's evidence")
    if policy.require_protocol and results.protocol is None:
        raise PolicyError(f"{label}: records no protocol (a passk run log's header), but the "
                          f"policy requires one ({policy.path}): give the whole log")
    refused = protocol_refusal(policy, results.protocol, label)
    if refused:
        raise PolicyError(refused)
    gaps: list[str] = []
    ts = policy.tasks
    if ts.ids:
        listed = set(ts.ids)
        results = with_unrun_tasks(results, [t for t in ts.ids])
        extra = [t for t in results.task_ids if t not in listed]
        if extra:
            gaps.append(f"task(s) {', '.join(extra)}: not in the policy's task set; the gate "
                        "judges the policy's tasks, no others")
    results = _policy_tiers(policy, results, label)
    if ts.size is not None:
        have = len(results) + len(results.never_ran)
        if have < ts.size:
            gaps.append(f"the evidence holds {have} of the {ts.size} samples of the policy's "
                        f"dataset {ts.dataset}")
        elif have > ts.size:
            gaps.append(f"the evidence holds {have} samples, more than the {ts.size} of the "
                        f"policy's dataset {ts.dataset}")
        recorded = {v for src in results.sources for k, v in src.evaluation
                    if k.startswith("dataset") and not k.startswith("dataset sample")}
        if ts.dataset is not None and recorded and ts.dataset not in recorded:
            gaps.append(f"the evidence's dataset is {', '.join(sorted(recorded))}, not the "
                        f"policy's {ts.dataset}")
    for tid, n in zip(results.task_ids, results.totals.tolist(), strict=True):
        need = ts.runs_for_task(tid)
        if ts.ids and n == 0:
            gaps.append(f"task {tid}: the policy's task set lists it, the evidence has no "
                        "runs of it")
        elif need is not None and n < need and tid not in (results.settled_early or {}):
            why = ("" if ts.tier_of(tid) is not None or not ts.runs_by_risk else
                   " (the policy gives it no tier: the largest of its runs)")
            gaps.append(f"task {tid}: {n} counted runs, the policy asks {need}{why}")
    if not gaps:
        return results
    return replace(results, incomplete=tuple(results.incomplete) + tuple(gaps))


# --------------------------------------------------------------------------
# saying what is in force
# --------------------------------------------------------------------------

_OVERRIDES = (("scorer", "--scorer"), ("success_value", "--success-value"),
              ("success_threshold", "--success-threshold"), ("score_key", "--score-key"),
              ("eval_key", "--eval-key"), ("count_errors_as_failures",
                                           "--count-errors-as-failures"),
              ("accept_incomplete", "--accept-incomplete"),
              ("pool_evaluations", "--pool-evaluations"), ("allow_change", "--allow-change"))


def override_phrases(asked: Mapping[str, Any], policy: Policy | None = None,
                     errors_said: Sequence[str] = ()) -> tuple[str, ...]:
    """Every reader or override option in effect, as a phrase naming it and its value,
    for the verdict line, the Markdown and the JSON; the policy's own success rule too.

    Examples
    --------
    >>> override_phrases({"success_value": ["I"], "accept_incomplete": True})
    ('--success-value I', '--accept-incomplete')
    """
    out: list[str] = []
    for key, flag in _OVERRIDES:
        value = asked.get(key)
        if value is None or value is False or value == [] or value == ():
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out.append(f"{flag} {', '.join(map(str, value))}")
        else:
            out.append(f"{flag} {value:g}" if isinstance(value, float) else f"{flag} {value}")
    if asked.get("duplicates") not in (None, "error"):
        out.append(f"--duplicates {asked['duplicates']}")
    if policy is not None:
        r = policy.success
        rule = [f"scorer {r.scorer}"] if r.scorer else []
        rule += [f"success values {', '.join(r.values)}"] if r.values else []
        rule += [f"success threshold {r.threshold:g}"] if r.threshold is not None else []
        rule += [f"score key {r.score_key}"] if r.score_key else []
        if rule:
            out.append("policy's " + ", ".join(rule))
        if policy.errors != "fail":
            out.append(f"policy's errors = {policy.errors}")
    out += list(errors_said)
    return tuple(out)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) \
            + "}"
    raise TypeError(f"cannot write {value!r} as TOML")


def _tier_lines(results: Results, ids: Sequence[str], by_risk: Mapping[str, int]
                ) -> list[str]:
    """``[tasks.risk]``: each task's tier as the honest evidence labels it, when the runs
    depend on the tier or the evidence labels any task; a task no record labels gets the
    tier with the most runs (fail closed), with a comment to review it."""
    risk_of = dict(zip(results.task_ids, results.risks, strict=True))
    recorded = dict(zip(results.task_ids, (results.totals + results.excluded).tolist(),
                        strict=True))
    if not by_risk and all(r == "read-only" for r in risk_of.values()):
        return []
    largest = max(by_risk, key=lambda r: (by_risk[r], r)) if by_risk else "read-only"
    lines = ["", "[tasks.risk]  # each task's tier: its records must agree, and it sets its runs"]
    for t in ids:
        if recorded.get(t, 0) or t in results.settled_early:
            lines.append(f"{json.dumps(t)} = {_toml(risk_of[t])}")
        else:
            lines.append(f"{json.dumps(t)} = {_toml(largest)}  # no record gives its tier: "
                         "the one with the most runs; review it")
    return lines


def policy_init(results: Results, files: Sequence[str],
                success: SuccessRule | None = None) -> str:
    """A starting policy (``passk.toml``) from a suite: its producer, tasks, runs, each
    task's tier (``[tasks.risk]``, from the evidence's labels) and the gate's criteria
    (its protocol's where it declares them, else passk's defaults), to be reviewed like
    any code before it is committed.

    Examples
    --------
    >>> from passk.results.counts import Run, results_from_runs
    >>> text = policy_init(results_from_runs([Run("a", True, t) for t in range(3)]), ["r.jsonl"])
    >>> parse_policy(tomllib.loads(text), "passk.toml").tasks
    TaskSet(ids=('a',), dataset=None, size=None, runs=3, runs_by_risk={}, risk={})
    >>> runs = [Run("a", True, t, "high-risk-write") for t in range(3)] + [Run("b", True, 0)]
    >>> parse_policy(tomllib.loads(policy_init(results_from_runs(runs), ["r.jsonl"])),
    ...              "passk.toml").tasks.risk
    {'a': 'high-risk-write', 'b': 'read-only'}
    """
    s = results.protocol.settings if results.protocol is not None else {}
    d = GateCriteria()
    gate = {"k": s.get("k", d.k), "bar": s.get("min_overall_pass_hat_k",
                                                d.min_overall_pass_hat_k),
            "cap": s.get("max_flakiness", d.max_flakiness), "on": s.get("gate_on", d.on),
            "confidence": s.get("confidence", d.confidence),
            "min_runs": s.get("min_runs", d.min_runs)}
    ids = list(results.task_ids) + [t for t in results.never_ran if t not in results.task_ids]
    if isinstance(s.get("tasks"), list):
        ids = [str(t) for t in s["tasks"]]
    runs_line: list[str]
    by_risk: dict[str, int] = {}
    if isinstance(s.get("runs_by_risk"), Mapping) and isinstance(s.get("default_runs"), int):
        by_risk = {str(r): int(n) for r, n in s["runs_by_risk"].items()}
        runs_line = [f"runs = {s['default_runs']}", f"runs_by_risk = {_toml(by_risk)}"]
    else:
        positive = results.totals[results.totals > 0]
        runs_line = [f"runs = {int(positive.min()) if positive.size else 1}"]
    lines = [f"# passk gate policy, written by `passk policy init` from {', '.join(files)}.",
             "# Review it like code: the gate refuses any option or results file looser than",
             "# it. See the passk README (\"The gate policy\") for every key.",
             f"producer = {_toml(results.source)}",
             *(["require_protocol = true  # the run log's header must be there"]
               if results.protocol is not None else []),
             ('errors = "fail"  # errored samples count as failures (the producer\'s own '
              "infrastructure errors excepted)"),
             f"pooling = {_toml(['trials'])}", "", "[tasks]", f"ids = {_toml(ids)}", *runs_line,
             *_tier_lines(results, ids, by_risk)]
    rule = success or SuccessRule()
    if rule != SuccessRule():
        lines += ["", "[success]"]
        lines += [f"scorer = {_toml(rule.scorer)}"] if rule.scorer else []
        lines += [f"values = {_toml(list(rule.values))}"] if rule.values else []
        lines += [f"threshold = {_toml(rule.threshold)}"] if rule.threshold is not None else []
        lines += [f"score_key = {_toml(rule.score_key)}"] if rule.score_key else []
    lines += ["", "[gate]"] + [f"{k} = {_toml(v)}" for k, v in gate.items()]
    lines += ["", "[baseline]", f"alpha = {_toml(d.alpha)}", f"correction = {_toml(d.correction)}",
              "# margin = 0.05  # non-inferiority: block unless a drop is shown to be smaller"]
    return "\n".join(lines) + "\n"
