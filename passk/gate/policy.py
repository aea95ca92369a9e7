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
(:func:`passk.gate.bind.bind`); a results file's own protocol is checked against it and
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

import contextlib
import hashlib
import json
import math
import os
import subprocess
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from passk._public import publish
from passk.criteria import CORRECTIONS, GATE_MODES, GATE_ON, MAX_K, GateCriteria
from passk.errors import BadInput, PolicyError
from passk.render.words import plural
from passk.results.counts import Results, with_unrun_tasks
from passk.results.formats import FORMAT_OPTIONS, FORMATS
from passk.results.ids import lookalike_refusal
from passk.results.protocol import Protocol

__all__ = [
    "ERRORS",
    "NO_POLICY",
    "POLICY_FILE",
    "POLICY_SET_ASIDE",
    "POOLING",
    "Policy",
    "PolicyError",
    "SuccessRule",
    "TaskSet",
    "apply_policy",
    "count_errors",
    "find_policy",
    "load_policy",
    "policy_in_force",
    "policy_init",
    "protocol_refusal",
    "repository_root",
    "set_aside_refusal",
]

#: The policy's own file name.
POLICY_FILE = "passk.toml"
#: What the verdict line says when no policy is in force.
NO_POLICY = "no policy: criteria from the command line"
#: What the verdict line says when the repository's policy was set aside (``--no-policy``).
POLICY_SET_ASIDE = "policy set aside (--no-policy): criteria from the command line"
#: The commands that may set the repository's policy aside: they explore and decide
#: nothing (their exit status never depends on the verdict). A gate, a comparison that
#: blocks on a regression, a ranking with a release gate and a run never may.
SET_ASIDE_BY = ("report", "plan")
#: What errored samples count as: ``fail`` (a failure, unless the producer calls it an
#: infrastructure failure: Harbor's error policy, tau2's and passk's infrastructure
#: errors), ``exclude`` (left out, counted and shown), ``fail-all`` (a failure even
#: when the producer calls it the infrastructure's).
ERRORS = ("fail", "exclude", "fail-all")
#: Which pooling of files a policy may allow: ``trials`` (several files of one
#: evaluation, as trials of one suite) and ``evaluations`` (files of different
#: evaluations, ``--pool-evaluations``).
POOLING = ("trials", "evaluations", "unverified-runs")
#: The errored records a producer does not tell from infrastructure failures.
_AGENT_OR_INFRA = ("errored samples",)

_TOP = {"producer", "require_protocol", "errors", "pooling", "tasks", "success", "gate",
        "baseline"}
_TABLES: dict[str, set[str]] = {
    "tasks": {"ids", "dataset", "size", "runs", "runs_by_risk", "risk"},
    "success": {"scorer", "values", "threshold", "score_key", "metric", "filter"},
    "gate": {"k", "bar", "cap", "on", "confidence", "min_runs", "mode"},
    "baseline": {"alpha", "correction", "margin"},
}


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


#: Each success key of the policy and the reader option it sets.
_SUCCESS_KEYS = (("scorer", "scorer"), ("values", "success_values"),
                 ("threshold", "success_threshold"), ("score_key", "score_key"),
                 ("metric", "metric"), ("filter", "filter"))


@dataclass(frozen=True)
class SuccessRule:
    """What a success is, for the producers whose scores are not pass/fail."""

    scorer: str | None = None
    values: tuple[str, ...] = ()
    threshold: float | None = None
    score_key: str | None = None
    metric: str | None = None
    filter: str | None = None

    def given(self) -> dict[str, Any]:
        """The rule's keys that are set, by the policy's names."""
        out = {"scorer": self.scorer, "values": list(self.values) or None,
               "threshold": self.threshold, "score_key": self.score_key,
               "metric": self.metric, "filter": self.filter}
        return {k: v for k, v in out.items() if v is not None}

    def reader_options(self, fmt: str) -> dict[str, Any]:
        """The rule as :func:`passk.results.read.read_results` options (``fmt`` takes each:
        :meth:`check_applies`)."""
        names = dict(_SUCCESS_KEYS)
        taken = FORMAT_OPTIONS.get(fmt, ())
        return {names[k]: v for k, v in self.given().items() if names[k] in taken}

    def check_applies(self, fmt: str, path: str) -> None:
        """Refuse a key the producer's reader does not take: a rule that does not apply is
        never dropped without a word.

        Examples
        --------
        >>> SuccessRule(scorer="exact_match").check_applies("lm-eval", "passk.toml")
        Traceback (most recent call last):
        ...
        passk.errors.PolicyError: passk.toml: success.scorer: does not apply to lm-eval evidence (its reader takes metric, filter, success_threshold): remove it, or use a key that applies
        """  # noqa: E501  # a doctest's output line cannot wrap
        names = dict(_SUCCESS_KEYS)
        taken = FORMAT_OPTIONS.get(fmt, ())
        for key in self.given():
            if names[key] not in taken:
                takes = ", ".join(taken) or "no success keys"
                raise PolicyError(f"{path}: success.{key}: does not apply to {fmt} evidence "
                                  f"(its reader takes {takes}): remove it, or use a key that "
                                  "applies")

    def phrases(self) -> list[str]:
        """The rule as the verdict names it."""
        r = self
        out = [f"scorer {r.scorer}"] if r.scorer else []
        out += [f"success values {', '.join(r.values)}"] if r.values else []
        out += [f"success threshold {r.threshold:g}"] if r.threshold is not None else []
        out += [f"score key {r.score_key}"] if r.score_key else []
        out += [f"metric {r.metric}"] if r.metric else []
        out += [f"filter {r.filter}"] if r.filter else []
        return out


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
    #: The SHA-256 of the file's bytes (empty for a policy not read from a file).
    sha256: str = ""

    @property
    def phrase(self) -> str:
        """The policy as the verdict line names it: its path from the repository's root and
        the start of its hash."""
        return f"policy {self.path}" + (f" (sha256 {self.sha256[:12]})" if self.sha256 else "")


# --------------------------------------------------------------------------
# finding and reading
# --------------------------------------------------------------------------

#: A policy's content, for one reader of bytes: the working tree, or a commit.
Read = Callable[[str], "bytes | None"]


def _parse_toml(data: bytes, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{label}: cannot be read as UTF-8 ({exc}): fix the file") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{label}: not valid TOML ({exc}): fix the file (a file that does not "
                          "parse cannot say whether it holds a policy)") from None


def _chain(start: Path) -> tuple[list[Path], Path | None]:
    """The directories from ``start`` up to the outermost repository root on the way (the
    highest directory holding ``.git``: a nested repository does not end the search), or up
    to the filesystem's root when there is none; and that root."""
    up = [start, *start.parents]
    roots = [d for d in up if (d / ".git").exists()]
    if not roots:
        return up, None
    top = roots[-1]
    return up[: up.index(top) + 1], top


def _candidates(dirs: Sequence[str], read: Read, label: Callable[[str], str]
                ) -> list[tuple[str, bytes, bool]]:
    """Every policy in ``dirs``: (path, content, is a pyproject); a ``pyproject.toml`` that
    does not parse is an error, never "no policy"."""
    found = []
    for d in dirs:
        own = f"{d}/{POLICY_FILE}" if d else POLICY_FILE
        data = read(own)
        if data is not None:
            found.append((own, data, False))
        pyproject = f"{d}/pyproject.toml" if d else "pyproject.toml"
        data = read(pyproject)
        if data is not None:
            table = _parse_toml(data, label(pyproject)).get("tool")
            if isinstance(table, dict) and "passk" in table:
                found.append((pyproject, data, True))
    return found


def repository_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The repository a policy belongs to: the outermost directory holding ``.git`` from
    ``start`` (default: the working directory) up, so that a nested ``.git`` does not end
    the search; None outside any repository.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()).resolve(); (d / "sub" / ".git").mkdir(parents=True)
    >>> (d / ".git").mkdir()
    >>> repository_root(d / "sub") == d
    True
    """
    return _chain(Path(start if start is not None else Path.cwd()).resolve())[1]


def _file_reader(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes() if Path(path).is_file() else None
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read the policy: {exc}") from None


def _relative(path: Path, root: Path | None) -> str:
    if root is not None:
        with contextlib.suppress(ValueError):
            return path.relative_to(root).as_posix()
    return str(path)


def _one(found: Sequence[tuple[str, bytes, bool]], label: Callable[[str], str]
         ) -> tuple[str, bytes, bool] | None:
    unique = list({f[0]: f for f in found}.values())
    if len(unique) > 1:
        names = ", ".join(label(f[0]) + (" [tool.passk]" if f[2] else "") for f in unique)
        raise PolicyError(f"more than one policy: {names}: a repository has one policy; remove "
                          "all but one in a reviewed commit, or name one with --policy")
    return unique[0] if unique else None


def find_policy(cwd: str | os.PathLike[str] | None = None,
                results: Sequence[str | os.PathLike[str]] = ()) -> Path | None:
    """The policy file in force: ``passk.toml`` or a ``pyproject.toml`` with ``[tool.passk]``.

    Every directory from ``cwd`` (default: the working directory) up to the
    outermost repository root (a nested ``.git`` does not end the search), and
    from the results files' common directory up to theirs, is searched. One
    policy per repository: two files found (a ``passk.toml`` beside the
    results, a nested one, one shadowing a ``[tool.passk]``) are an error, and
    so is a ``pyproject.toml`` on the way that does not parse.

    Returns
    -------
    pathlib.Path or None

    Raises
    ------
    PolicyError
        More than one policy, or a ``pyproject.toml`` that cannot be read.

    Examples
    --------
    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); (d / ".git").mkdir(); (d / "runs").mkdir()
    >>> _ = (d / "passk.toml").write_text("[gate]\\nbar = 0.8\\n")
    >>> find_policy(d / "runs") == d / "passk.toml"
    True
    >>> _ = (d / "runs" / "passk.toml").write_text("[gate]\\nbar = 0.1\\n")
    >>> find_policy(d, results=[d / "runs"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    passk.errors.PolicyError: more than one policy: ...
    """
    starts = [Path(cwd if cwd is not None else Path.cwd()).resolve()]
    if results:
        dirs = [Path(p).resolve() for p in results]
        dirs = [p if p.is_dir() else p.parent for p in dirs]
        starts.append(Path(os.path.commonpath([str(d) for d in dirs])))
    found: list[tuple[str, bytes, bool]] = []
    for start in starts:
        chain, _ = _chain(start)
        found += _candidates([str(d) for d in chain], _file_reader, str)
    one = _one(found, str)
    return Path(one[0]) if one is not None else None


def load_policy(path: str | os.PathLike[str], *, content: bytes | None = None,
                label: str | None = None) -> Policy:
    """Read and validate a policy file: ``passk.toml``, or ``[tool.passk]`` of a pyproject.

    The policy is named by its path from its repository's root (the outermost
    directory holding ``.git`` above it) and the SHA-256 of its bytes, so that a
    verdict names the file a reviewer approved whatever the working directory.

    Parameters
    ----------
    path : path
        The file (or, with ``content``, its path as ``label`` names it).
    content : bytes, optional
        The file's bytes, when they come from elsewhere (a commit).
    label : str, optional
        How to name it (default: its path from the repository's root).

    Raises
    ------
    PolicyError
        The file is missing or not TOML, or a key is unknown or its value bad;
        one line naming the file, the key and what to do.
    """
    p = Path(path)
    if label is None:
        resolved = p.resolve()
        label = _relative(resolved, _chain(resolved.parent)[1])
    if content is None:
        try:
            content = p.read_bytes()
        except FileNotFoundError:
            raise PolicyError(f"{label}: no such policy file: give an existing file to "
                              "--policy, or write one with `passk policy init`") from None
        except OSError as exc:
            raise PolicyError(f"{label}: cannot read the policy: {exc}") from None
    data = _parse_toml(content, label)
    digest = hashlib.sha256(content).hexdigest()
    if p.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or not isinstance(tool.get("passk"), dict):
            raise PolicyError(f"{label}: has no [tool.passk] table: add one, or give "
                              "--policy a passk.toml")
        return replace(parse_policy(tool["passk"], f"{label} [tool.passk]"), sha256=digest)
    return replace(parse_policy(data, label), sha256=digest)


def set_aside_refusal(command: str) -> str | None:
    """Why ``command`` may not set the repository's policy aside, or None when it may.

    Only the exploratory commands of :data:`SET_ASIDE_BY` may: what they print is read,
    not obeyed. Everything that decides (``passk gate``, the Action, the pytest plugin,
    ``passk diff`` and ``rank`` whose exit status blocks, ``passk run``) stays bound by the
    policy a reviewer approved.

    Examples
    --------
    >>> set_aside_refusal("report") is None
    True
    >>> print(set_aside_refusal("gate"))  # doctest: +ELLIPSIS
    --no-policy: passk gate decides under the repository's policy and cannot set it aside...
    """
    if command in SET_ASIDE_BY:
        return None
    return (f"--no-policy: passk {command} decides under the repository's policy and cannot "
            "set it aside (a gate bound by a reviewed policy stays bound); to explore data "
            "the policy does not cover, use passk report --no-policy or passk plan "
            "--no-policy, or name another policy with --policy FILE")


def policy_in_force(given: str | os.PathLike[str] | None = None, *,
                    cwd: str | os.PathLike[str] | None = None,
                    results: Sequence[str | os.PathLike[str]] = (),
                    ref: str | None = None, set_aside_by: str | None = None
                    ) -> Policy | None:
    """The repository's policy: ``given`` (``--policy FILE``), else the one found
    (:func:`find_policy`); with ``ref``, the one that commit holds (the pull request's base:
    the policy a reviewer approved, not the one the change under test brings).

    ``set_aside_by`` names the command that asks to set the policy aside
    (``passk report --no-policy``): None is returned when that command may
    (:func:`set_aside_refusal`), and the verdict then says so
    (:data:`POLICY_SET_ASIDE`, bound by :func:`passk.gate.bind.bind`).

    Raises
    ------
    PolicyError
        As :func:`find_policy` and :func:`load_policy`; with ``ref``, a commit git cannot read;
        a policy set aside by a command that decides, or set aside and named at once.
    """
    if set_aside_by is not None:
        refused = set_aside_refusal(set_aside_by)
        if refused is not None:
            raise PolicyError(refused)
        if given is not None or ref is not None:
            named = f"--policy {given}" if given is not None else f"--policy-ref {ref}"
            raise PolicyError(f"--no-policy and {named} contradict each other: give one")
        return None
    if ref is not None:
        return _policy_at(ref, given, Path(cwd if cwd is not None else Path.cwd()).resolve())
    if given is not None:
        return load_policy(given)
    found = find_policy(cwd, results)
    return load_policy(found) if found is not None else None


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)


def _policy_at(ref: str, given: str | os.PathLike[str] | None, cwd: Path) -> Policy | None:
    """The policy in the commit ``ref``, searched as :func:`find_policy` searches the working
    tree (from ``cwd``'s place in the repository up to its root)."""
    _, root = _chain(cwd)
    if root is None:
        raise PolicyError(f"{cwd}: not in a git repository, so the policy at {ref} cannot be "
                          "read: run from the checkout")
    listed = _git(root, "ls-tree", "-r", "--name-only", "-z", ref)
    if listed.returncode != 0:
        why = listed.stderr.decode(errors="replace").strip().splitlines()
        raise PolicyError(f"cannot read the commit {ref} ({why[-1] if why else 'git failed'}): "
                          "fetch it first (git fetch origin BASE), or give the policy's ref")
    files = set(listed.stdout.decode("utf-8", errors="surrogateescape").split("\0"))

    def read(rel: str) -> bytes | None:
        if rel not in files:
            return None
        shown = _git(root, "show", f"{ref}:{rel}")
        if shown.returncode != 0:
            raise PolicyError(f"{ref}:{rel}: git cannot show it")
        return shown.stdout

    def name(rel: str) -> str:
        return f"{rel} at {ref}"

    if given is not None:
        rel = _relative(Path(given).resolve(), root)
        data = read(rel)
        if data is None:
            raise PolicyError(f"{rel}: not in the commit {ref}: the policy must be reviewed "
                              "and merged before it gates")
        return load_policy(rel, content=data, label=name(rel))
    here = _relative(cwd, root)
    parts = [] if here in ("", ".") else here.split("/")
    dirs = ["/".join(parts[:i]) for i in range(len(parts), -1, -1)]
    one = _one(_candidates(dirs, read, name), name)
    if one is None:
        return None
    return load_policy(one[0], content=one[1], label=name(one[0]))


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


def _whole(path: str, key: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise _bad(path, key, f"{value!r} is not a whole number >= {low}: write one")
    if high is not None and value > high:
        raise _bad(path, key, f"{value!r} is more than {high:,}: write a number of runs")
    return int(value)


def _text(path: str, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise _bad(path, key, f"{value!r} is not a non-empty string: write one in quotes")
    return value


def _texts(path: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v for v in value):
        raise _bad(path, key, f'{value!r} is not a list of strings: write e.g. ["a", "b"]')
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
    passk.errors.PolicyError: p.toml: gate.barr: unknown key; ...
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
    if refused := lookalike_refusal(ids, f"{path}: tasks.ids"):
        raise PolicyError(refused)
    dataset = _text(path, "tasks.dataset", t["dataset"]) if "dataset" in t else None
    size = _whole(path, "tasks.size", t["size"], 1) if "size" in t else None
    if ids and (dataset is not None or size is not None):
        raise _bad(path, "tasks", "give either ids or dataset and size, not both")
    if (dataset is None) != (size is None):
        raise _bad(path, "tasks", "dataset and size go together: give both")
    runs = _whole(path, "tasks.runs", t["runs"], 1, MAX_K) if "runs" in t else None
    by_risk = t.get("runs_by_risk", {})
    if not isinstance(by_risk, dict):
        raise _bad(path, "tasks.runs_by_risk", "must be a table of risk = runs")
    runs_by_risk = {str(r): _whole(path, f"tasks.runs_by_risk.{r}", v, 1, MAX_K)
                    for r, v in by_risk.items()}
    tiers = _tiers(path, t.get("risk", {}), ids, runs, runs_by_risk)

    s = tables["success"]
    success = SuccessRule(
        scorer=_text(path, "success.scorer", s["scorer"]) if "scorer" in s else None,
        values=_texts(path, "success.values", s["values"]) if "values" in s else (),
        threshold=(_number(path, "success.threshold", s["threshold"], -math.inf, math.inf)
                   if "threshold" in s else None),
        score_key=_text(path, "success.score_key", s["score_key"]) if "score_key" in s else None,
        metric=_text(path, "success.metric", s["metric"]) if "metric" in s else None,
        filter=_text(path, "success.filter", s["filter"]) if "filter" in s else None)
    if success.values and success.threshold is not None:
        raise _bad(path, "success", "give either values or threshold, not both")

    g, b = tables["gate"], tables["baseline"]
    d = GateCriteria()
    criteria = GateCriteria(
        k=_whole(path, "gate.k", g["k"], 1, MAX_K) if "k" in g else d.k,
        min_overall_pass_hat_k=(_number(path, "gate.bar", g["bar"], 0, 1) if "bar" in g
                                else d.min_overall_pass_hat_k),
        max_flakiness=(_number(path, "gate.cap", g["cap"], 0, 1) if "cap" in g
                       else d.max_flakiness),
        on=_choice(path, "gate.on", g["on"], GATE_ON) if "on" in g else d.on,
        confidence=(_number(path, "gate.confidence", g["confidence"], 0, 1, open_low=True,
                            open_high=True) if "confidence" in g else d.confidence),
        min_runs=_whole(path, "gate.min_runs", g["min_runs"], 0, MAX_K) if "min_runs" in g
        else d.min_runs,
        mode=_choice(path, "gate.mode", g["mode"], GATE_MODES) if "mode" in g else d.mode,
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
            raise _bad(path, "tasks.risk", f"gives no tier for "
                       f"{plural(len(missing), 'task', count=False)} {', '.join(missing)} of "
                       "ids: give each task of ids its tier")
        if extra:
            raise _bad(path, "tasks.risk", f"gives a tier for "
                       f"{plural(len(extra), 'task', count=False)} {', '.join(extra)}, not "
                       f"in ids: add {'it' if len(extra) == 1 else 'them'} to ids or remove "
                       f"{'it' if len(extra) == 1 else 'them'}")
    if runs_by_risk and runs is None:
        for task, tier in tiers.items():
            if tier not in runs_by_risk:
                raise _bad(path, f"tasks.risk.{task}", f"tier {tier!r} has no runs: add it to "
                           f"runs_by_risk (which has {', '.join(sorted(runs_by_risk))}) or "
                           "give runs for the others")
    return tiers


# --------------------------------------------------------------------------
# what the policy refuses
# --------------------------------------------------------------------------

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
            return (f"{label}: its protocol leaves out the policy's "
                    f"{plural(len(missing), 'task', count=False)} "
                    f"{', '.join(missing)} {tail}")
    by_risk, default = s.get("runs_by_risk"), s.get("default_runs")
    if isinstance(by_risk, Mapping) or isinstance(default, int):
        risks = set(policy.tasks.runs_by_risk) | set(by_risk or {})
        for risk in sorted(risks) or ["read-only"]:
            need = policy.tasks.runs_for(risk)
            have = (by_risk or {}).get(risk, default)
            if need is not None and isinstance(have, int) and have < need:
                return (f"{label}: its protocol plans {plural(have, 'run')} for {risk} tasks, "
                        f"fewer than the policy's {need} {tail}")
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
        raise BadInput(f"errors ({errors!r}) must be one of {', '.join(ERRORS)}")
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
        if tier is None or risk == tier or (n == 0 and tid not in results.settled_early):
            continue  # no tier, the same, or no record says (an unlabelled task's default)
        if risk != "read-only" or given:
            raise PolicyError(
                f"{label}: task {tid}: its records give risk {risk!r}, but the policy's tier "
                f"for it is {tier!r} ({policy.path}): the evidence cannot choose its own "
                "tier; give the evidence as it was run, or change the task's tier in the "
                "policy in a reviewed commit")
    return replace(results, risks=tuple(tiers.get(t, r) for t, r in
                                        zip(results.task_ids, results.risks, strict=True)))


def apply_policy(policy: Policy, results: Results, label: str, *,
                 producer_checked: bool = True) -> Results:
    """The results as the policy judges them: its task set's missing tasks added with no runs,
    and each gap from the policy's task set and runs an ``incomplete`` sentence (the gate
    fails closed on them).

    The runs each task needs are the policy's for its tier (:meth:`TaskSet.runs_for_task`),
    and each task takes the policy's tier in the results. ``producer_checked=False`` (the
    pytest plugin, whose session is its own evidence) leaves out the producer and protocol
    checks.

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
    if refused := lookalike_refusal([*results.task_ids, *policy.tasks.ids], label):
        raise PolicyError(refused)
    if producer_checked and policy.producer is not None and results.source != policy.producer:
        raise PolicyError(f"{label}: read as {results.source}, but the policy's producer is "
                          f"{policy.producer} ({policy.path}): give the policy's evidence")
    if producer_checked and policy.require_protocol and results.protocol is None:
        raise PolicyError(f"{label}: records no protocol (a passk run log's header), but the "
                          f"policy requires one ({policy.path}): give the whole log")
    refused = protocol_refusal(policy, results.protocol, label)
    if refused:
        raise PolicyError(refused)
    gaps: list[str] = []
    ts = policy.tasks
    if ts.ids:
        listed = set(ts.ids)
        results = with_unrun_tasks(results, list(ts.ids))
        extra = [t for t in results.task_ids if t not in listed]
        if extra:
            gaps.append(f"{plural(len(extra), 'task', count=False)} {', '.join(extra)}: not in "
                        "the policy's task set; the gate judges the policy's tasks, no others")
    results = _policy_tiers(policy, results, label)
    if ts.size is not None:
        have = len(results) + len(results.never_ran)
        if have < ts.size:
            gaps.append(f"the evidence holds {have} of the {ts.size} samples of the policy's "
                        f"dataset {ts.dataset}")
        elif have > ts.size:
            gaps.append(f"the evidence holds {plural(have, 'sample')}, more than the {ts.size} "
                        f"of the policy's dataset {ts.dataset}")
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
             "# it. Every key is in the book's page The gate and the policy (book/using/gate.md).",
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


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
