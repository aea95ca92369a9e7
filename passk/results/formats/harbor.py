"""Harbor's jobs (terminal-bench 2): a job directory, a trial's ``result.json``, or a folder of
jobs.

``harbor run`` (terminal-bench 2.0 is ``harbor run -d terminal-bench@2.0``)
writes ``jobs/<job>/``: ``config.json`` (its ``JobConfig``: ``n_attempts``,
agents, datasets), ``result.json`` (its ``JobResult``: ``id``,
``started_at``, ``finished_at``, ``n_total_trials``, ``stats.evals[KEY]``
with ``n_trials``, ``n_errors``, ``metrics``, ``pass_at_k``) and one folder a
trial holding the trial's ``result.json`` (its ``TrialResult``: ``id``,
``task_name``, ``trial_name``, ``source``, ``agent_info`` {name, version,
model_info {name}}, ``verifier_result`` {rewards}, ``exception_info``,
``step_results``, ``started_at``, ``finished_at``). The field names are those
of ``harbor/models/job/result.py``, ``harbor/models/trial/result.py`` and
``harbor/models/job/config.py`` (harbor 0.26.0 on PyPI, checked against
0.13.0).

Trials are grouped by (evaluation key, task name), the key as Harbor forms it:
``"<agent>__<model>__<dataset>"`` (``"<agent>__<dataset>"`` without a model;
dataset ``"adhoc"`` when the trial has no ``source``). Trial folder names (the
task name cut to 32 characters and a random suffix) are never parsed, and
attempts carry no ordinal: a task's trials are numbered in the order of their
``started_at`` (then ``trial_name``).

Success is Harbor's rule: the trial's one reward equals 1, and a trial
without a verifier result (or without rewards) counts as 0. A trial with
several reward keys, or a reward other than 0 and 1, has no pass@k in Harbor;
here it is an error unless ``score_key`` (which reward) or
``success_threshold`` (a reward of at least it succeeds) says how to judge it.

Failures that are not the agent's, by Harbor's error policy
(``harbor/models/trial/error_policy.py``: an exception whose policy has
``has_valid_reward`` false: the sandbox or environment, the model provider's
API, the request or the verifier, configuration or cancellation), are left
out and counted (``Results.excluded``), as passk leaves out tau2's
infrastructure errors; ``count_errors_as_failures=True`` counts them as
failures instead (with their reward when the verifier ran, else 0), as Harbor
up to 0.13 counted them.

The figures the job stores (``metrics`` mean and ``pass_at_k`` of each
evaluation key) are recomputed from its trials by Harbor's rule for the
version that wrote them (trials carrying ``reward_valid``, as Harbor writes
since its error policy: only those with a valid reward; older trials: every
trial, a missing reward 0): a mismatch is an error naming both numbers.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from passk.render.words import plural
from passk.results.counts import Results, ResultsError, Run, tally_runs, with_notes
from passk.results.formats._shared import (
    QUOTE,
    is_number,
    load_json,
    require,
    short_of_plan,
    some,
)

__all__ = ["ERROR_KINDS", "HARBOR_RUN_ID", "digests", "identity", "read_harbor", "sniff",
           "sniff_dir", "stored_pass_at_k"]

RESULT, CONFIG = "result.json", "config.json"

#: What a Harbor run's identity is: its trial's ``id`` (the trial name where none).
HARBOR_RUN_ID = "Harbor trial"

#: What the runs left out are, as ``Results.excluded_reason`` prints them.
NOT_THE_AGENTS = "errors that are not the agent's"

#: Harbor's exceptions whose policy says the trial has no valid reward (not the agent's
#: outcome), by kind; the names of ``harbor/models/trial/error_policy.py`` (harbor 0.26.0).
ERROR_KINDS: dict[str, tuple[str, ...]] = {
    "environment": (
        "EnvironmentStartTimeoutError", "SandboxBuildFailedError", "AgentSetupTimeoutError",
        "HealthcheckError", "SandboxLikelyOutOfMemoryError", "MemoryLimitExceededError",
        "SSHAccessError", "GKEExecStreamClosedError", "GKEPodNotFoundError",
        "RuntimeRequestError", "AddTestsDirError", "DownloadVerifierDirError"),
    "model provider": (
        "ApiError", "ApiRateLimitError", "ApiInternalServerError", "ApiOverloadedError",
        "ApiConnectionClosedError", "ApiResponseStalledError", "UnknownApiError",
        "NetworkConnectionError", "ApiConnectionError", "ApiUsageLimitError", "RateLimitError",
        "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "APIError",
        "Timeout"),
    "request or verifier": (
        "UnsupportedModelParametersError", "BadRequestError", "UnprocessableEntityError",
        "UnsupportedParamsError", "APIResponseValidationError", "BudgetExceededError",
        "VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError",
        "VerifierOutputParseError"),
    "configuration or cancellation": (
        "AgentAuthenticationError", "ModelNotFoundError", "ApiProviderResourceNotFoundError",
        "AuthenticationError", "PermissionDeniedError", "NotFoundError",
        "ServiceOperationsUnsupportedError", "VercelScopeError", "DspyImportError",
        "MissingExtraError", "RegradeError", "CancelledError"),
}
_KIND = {name: kind for kind, names in ERROR_KINDS.items() for name in names}

#: Harbor's stored figures are floats of the same sums: agreement within this.
_AGREE = 1e-9


# --------------------------------------------------------------------------
# detection
# --------------------------------------------------------------------------


def _is_trial(data: Any) -> bool:
    return isinstance(data, dict) and all(f in data for f in ("task_name", "trial_name",
                                                               "agent_info"))


def _is_job(data: Any) -> bool:
    return isinstance(data, dict) and "n_total_trials" in data and "stats" in data


def sniff(data: Any, path: Path) -> bool:
    """A Harbor trial's ``result.json`` (``task_name``, ``trial_name``, ``agent_info``) or a
    job's (``n_total_trials`` and ``stats``)."""
    return _is_trial(data) or _is_job(data)


def _subdirs(path: Path) -> list[Path]:
    return sorted(d for d in path.iterdir() if d.is_dir() and not d.name.startswith("."))


def _dir_kind(path: Path) -> str | None:
    """``"job"`` or ``"trial"`` by the content of the folder's ``result.json`` (None: neither).

    A ``result.json`` that cannot be read beside a ``config.json`` is taken for a job (no
    other format writes ``result.json``), so that the reader names what is wrong with it.
    """
    if not (path / RESULT).is_file():
        return None
    try:
        data = load_json(path / RESULT)
    except ResultsError:
        return "job" if (path / CONFIG).is_file() else None
    return "job" if _is_job(data) else "trial" if _is_trial(data) else None


def sniff_dir(path: Path) -> bool:
    """A job directory, a trial's folder, or a folder of job directories (one is enough to
    claim it: the reader names the folders that are not)."""
    if (path / RESULT).is_file():
        return _dir_kind(path) is not None
    return any(_dir_kind(d) == "job" for d in _subdirs(path))


def _load(file: Path, report_as: Path, where: str | None, what: str) -> Any:
    """A Harbor file's JSON; an error saying which Harbor file it is and what to do."""
    try:
        return load_json(file, report_as, where)
    except ResultsError as exc:
        raise ResultsError(report_as, where, f"{exc.message} (Harbor's {what}: re-run or "
                           "resume the job with `harbor jobs resume`, or move this folder "
                           "out of the job)") from None


# --------------------------------------------------------------------------
# trials
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Trial:
    file: Path | str
    where: str
    id: str
    task: str
    name: str
    started: str
    key: str
    agent: str
    agent_version: str
    model: str | None
    dataset: str
    rewards: dict[str, Any] | None
    reward_valid: bool | None
    errors: tuple[tuple[str, str | None], ...]  # (exception type, kind if not the agent's)
    job: str


def _error_kind(info: Any, file: Path, where: str) -> tuple[str, str | None]:
    if not isinstance(info, dict):
        raise ResultsError(file, where, f"Harbor trial result: 'exception_info' must be an "
                           f"object or null, got {info!r:.{QUOTE}}")
    name = require(info, "exception_type", (str,), "a string", file, where)
    policy = info.get("policy")  # serialized by Harbor since its error policy (with overrides)
    if isinstance(policy, dict) and isinstance(policy.get("has_valid_reward"), bool):
        valid = policy["has_valid_reward"]
        return name, None if valid else _KIND.get(name, "marked so by the job's error policy")
    override = info.get("policy_override")
    if isinstance(override, dict) and isinstance(override.get("has_valid_reward"), bool):
        valid = override["has_valid_reward"]
        return name, None if valid else _KIND.get(name, "marked so by the job's error policy")
    return name, _KIND.get(name)


def _read_trial(file: Path | str, report_as: Path, where: str, job: str,
                data: Any = None, *, alone: bool | None = None) -> _Trial:
    alone = report_as == file if alone is None else alone
    if data is None:
        data = _load(Path(file), report_as, None if alone else where, "trial result, TrialResult")
    at = "trial" if alone else where
    if not _is_trial(data):
        missing = [f for f in ("task_name", "trial_name", "agent_info")
                   if not isinstance(data, dict) or f not in data]
        raise ResultsError(report_as, at, "is not a Harbor trial result (TrialResult): missing "
                           f"{', '.join(map(repr, missing))}; pass a trial's result.json, its "
                           "job directory, or a folder of job directories")
    task = require(data, "task_name", (str,), "a string", report_as, at)
    name = require(data, "trial_name", (str,), "a string", report_as, at)
    agent_info = require(data, "agent_info", (dict,), "an object", report_as, at)
    agent = require(agent_info, "name", (str,), "a string", report_as, f"{at}: agent_info")
    version = agent_info.get("version")
    model_info = agent_info.get("model_info")
    model = None
    if model_info is not None:
        if not isinstance(model_info, dict):
            raise ResultsError(report_as, f"{at}: agent_info", "field 'model_info' must be an "
                               f"object or null, got {model_info!r:.{QUOTE}}")
        model = require(model_info, "name", (str,), "a string", report_as,
                        f"{at}: agent_info.model_info")
    source = data.get("source")
    dataset = source if isinstance(source, str) and source else "adhoc"
    key = f"{agent}__{model}__{dataset}" if model else f"{agent}__{dataset}"
    verifier = data.get("verifier_result")
    rewards = None
    if verifier is not None:
        if not isinstance(verifier, dict):
            raise ResultsError(report_as, at, "Harbor trial result: 'verifier_result' must be "
                               f"an object or null, got {verifier!r:.{QUOTE}}")
        rewards = verifier.get("rewards")
        if rewards is not None and not isinstance(rewards, dict):
            raise ResultsError(report_as, at, "Harbor trial result: 'verifier_result.rewards' "
                               f"must be an object of numbers or null, got {rewards!r:.{QUOTE}}")
        for k, v in (rewards or {}).items():
            if not is_number(v) or not math.isfinite(float(v)):
                raise ResultsError(report_as, at, f"Harbor trial result: reward {k!r} must be "
                                   f"a finite number, got {v!r:.{QUOTE}}")
    errors = []
    if data.get("exception_info") is not None:
        errors.append(_error_kind(data["exception_info"], report_as, f"{at}: exception_info"))
    steps = data.get("step_results")
    for i, step in enumerate(steps if isinstance(steps, list) else ()):
        if isinstance(step, dict) and step.get("exception_info") is not None:
            errors.append(_error_kind(step["exception_info"], report_as,
                                      f"{at}: step_results[{i}].exception_info"))
    valid = data.get("reward_valid")
    started = data.get("started_at")
    return _Trial(file=file, where=where, id=str(data.get("id", name)), task=task, name=name,
                  started=started if isinstance(started, str) else "", key=key, agent=agent,
                  agent_version=version if isinstance(version, str) else "", model=model,
                  dataset=dataset, rewards=rewards,
                  reward_valid=valid if isinstance(valid, bool) else None,
                  errors=tuple(errors), job=job)


def _judge(t: _Trial, report_as: Path, score_key: str | None,
           success_threshold: float | None) -> bool:
    """Harbor's rule: the one reward equals 1; no rewards: 0."""
    if not t.rewards:
        return False
    if score_key is not None:
        if score_key not in t.rewards:
            raise ResultsError(report_as, t.where, f"Harbor trial {t.name!r}: no reward "
                               f"{score_key!r} (--score-key); its rewards are "
                               f"{', '.join(map(repr, t.rewards))}")
        value = t.rewards[score_key]
    elif len(t.rewards) > 1:
        raise ResultsError(report_as, t.where, f"Harbor trial {t.name!r} has several rewards "
                           f"({', '.join(map(repr, t.rewards))}), so Harbor computes no pass@k: "
                           "pass --score-key KEY (score_key=) to say which decides success")
    else:
        value = next(iter(t.rewards.values()))
    if success_threshold is not None:
        return float(value) >= success_threshold
    if value not in (0, 1):
        raise ResultsError(report_as, t.where, f"Harbor trial {t.name!r}: reward {value!r} is "
                           "neither 0 nor 1, so Harbor computes no pass@k: pass "
                           "--success-threshold X (success_threshold=) to count a reward of at "
                           "least X as a success")
    return bool(value == 1)


# --------------------------------------------------------------------------
# Harbor's own figures, recomputed
# --------------------------------------------------------------------------


def stored_pass_at_k(per_task: list[tuple[int, int]], k: int) -> float:
    """pass@k as Harbor computes it: the mean over tasks of ``1 - C(n - c, k) / C(n, k)``.

    Harbor reports k = 2, 4, 8, ... and 5, 10, ... up to the fewest trials of any task, so
    every task has at least k; ``per_task`` is ``(c, n)`` a task.

    Examples
    --------
    >>> stored_pass_at_k([(1, 3), (0, 3), (3, 3)], 2)
    0.5555555555555556
    """
    values = [1.0 - math.comb(n - c, k) / math.comb(n, k) for c, n in per_task]
    return sum(values) / len(values)


def _harbor_ks(fewest: int) -> list[int]:
    ks = {k for k in (2 ** i for i in range(1, 64)) if k <= fewest}
    return sorted(ks | set(range(5, fewest + 1, 5)))


def _harbor_figures(trials: list[_Trial]) -> tuple[float | None, dict[int, float]]:
    """The mean and pass@k Harbor computes over one evaluation key's trials (None: no mean)."""
    newer = any(t.reward_valid is not None for t in trials)
    if newer:  # a trial without the field (a job resumed by a newer Harbor): Harbor's rule
        counted = [t for t in trials if t.reward_valid or (t.reward_valid is None and t.rewards
                   and all(kind is None for _, kind in t.errors))]
    else:
        counted = trials
    if not counted:
        return None, {}
    keys = {k for t in counted for k in (t.rewards or {})}
    mean = None
    if len(keys) <= 1:
        values = [float(next(iter(t.rewards.values()))) if t.rewards else 0.0 for t in counted]
        mean = sum(values) / len(values)
    per_task: dict[str, list[int]] = defaultdict(list)
    for t in counted:
        if t.rewards is None:
            per_task[t.task].append(0)
            continue
        if len(t.rewards) != 1:
            return mean, {}
        value = next(iter(t.rewards.values()))
        if value not in (0, 1):
            return mean, {}
        per_task[t.task].append(int(value))
    counts = [(sum(v), len(v)) for v in per_task.values()]
    fewest = min(n for _, n in counts)
    return mean, {k: stored_pass_at_k(counts, k) for k in _harbor_ks(fewest)}


def _check_stored(job_file: Path, key: str, stats: Any, trials: list[_Trial]) -> str | None:
    """The note saying the figures the job stores agree with its trials; an error if not."""
    if not isinstance(stats, dict):
        return None
    mean, pass_at = _harbor_figures(trials)
    where = f"stats.evals[{key!r}]"
    checked: list[str] = []
    metrics = stats.get("metrics")
    for i, metric in enumerate(metrics if isinstance(metrics, list) else ()):
        if not (isinstance(metric, dict) and set(metric) == {"mean"}
                and is_number(metric["mean"])):
            continue
        if mean is None or abs(mean - metric["mean"]) > _AGREE:
            raise ResultsError(job_file, f"{where}.metrics[{i}]", f"Harbor's stored mean "
                               f"{metric['mean']!r} disagrees with its {len(trials)} trials, "
                               f"which give {mean!r} by Harbor's rule (an edited job, or trials "
                               "added or removed after it finished?): re-run `harbor jobs "
                               "resume` or read the trials alone (pass one trial's result.json)")
        checked.append(f"mean {metric['mean']:.4f}")
    stored = stats.get("pass_at_k")
    for raw, value in (stored.items() if isinstance(stored, dict) else ()):
        try:
            k = int(raw)
        except (TypeError, ValueError):
            continue
        if not is_number(value):
            continue
        mine = pass_at.get(k)
        if mine is None or abs(mine - value) > _AGREE:
            raise ResultsError(job_file, f"{where}.pass_at_k[{raw!r}]", f"Harbor's stored "
                               f"pass@{k} {value!r} disagrees with its {len(trials)} trials, "
                               f"which give {'no pass@' + str(k) if mine is None else repr(mine)}"
                               " by Harbor's rule (an edited job, or trials added or removed "
                               "after it finished?)")
        checked.append(f"pass@{k} {value:.4f}")
    if not checked:
        return None
    return (f"the figures {job_file.parent.name}/{RESULT} stores for {key} agree with its "
            f"trials: {', '.join(checked)}")


# --------------------------------------------------------------------------
# jobs
# --------------------------------------------------------------------------


@dataclass
class _Job:
    dir: Path
    data: dict[str, Any]
    config: dict[str, Any]
    trials: list[_Trial]
    unfinished: list[str]


def _read_job(job_dir: Path, report_as: Path) -> _Job:
    label = job_dir.name if report_as != job_dir else ""
    prefix = f"{label}/" if label else ""
    data = _load(job_dir / RESULT, report_as, f"{prefix}{RESULT}", "job result, JobResult")
    if not _is_job(data):
        raise ResultsError(report_as, f"{prefix}{RESULT}", "is not a Harbor job result "
                           "(JobResult): it lacks 'n_total_trials' or 'stats'; pass a Harbor "
                           "job directory (config.json, result.json, one folder a trial)")
    config: Any = {}
    if (job_dir / CONFIG).is_file():
        config = _load(job_dir / CONFIG, report_as, f"{prefix}{CONFIG}", "job config, JobConfig")
        if not isinstance(config, dict):
            raise ResultsError(report_as, f"{prefix}{CONFIG}", "is not a Harbor job config "
                               f"(JobConfig): a JSON object, got a JSON {type(config).__name__}")
    trials: list[_Trial] = []
    unfinished: list[str] = []
    job_id = str(data.get("id", job_dir.name))
    root = os.fspath(job_dir)
    for name in _subdir_names(job_dir):
        file = os.path.join(root, name, RESULT)
        where = f"{prefix}{name}/{RESULT}"
        read = _read_once(file)
        if read is None:  # missing, not a file, or not clean JSON: the one-by-one path says why
            d = job_dir / name
            if not (d / RESULT).is_file():
                unfinished.append(name)
                continue
            trials.append(_read_trial(d / RESULT, report_as, where, job_id))
            continue
        if read is _MISSING:
            unfinished.append(name)
            continue
        trial_data, _DIGESTS[file] = read
        trials.append(_read_trial(file, report_as, where, job_id, trial_data, alone=False))
    return _Job(job_dir, data, config, trials, unfinished)


#: :func:`_read_once` of a trial folder without a ``result.json`` (an unfinished trial).
_MISSING: tuple[Any, str] = (None, "")

#: Each file :func:`read_harbor` parsed last, by its path, with the SHA-256 of the bytes
#: it parsed: the evidence's digest (:func:`passk.results.evidence.content_sha256`) takes
#: them (:func:`digests`) without reading every trial's file a second time.
_DIGESTS: dict[str, str] = {}


def _read_once(file: str) -> tuple[Any, str] | None:
    """A trial file's JSON and the SHA-256 of its bytes, read in one open; :data:`_MISSING`
    for no such file; None for anything else out of the ordinary (an unreadable file, not
    UTF-8, empty, not JSON), which :func:`_load` then reads and names."""
    try:
        with open(file, "rb") as f:
            raw = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return _MISSING
    except OSError:
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if "\x00" in text[:64] or not text.strip():
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data, hashlib.sha256(raw).hexdigest()


def digests(path: str | os.PathLike[str]) -> dict[str, str]:
    """The SHA-256 of each file the last :func:`read_harbor` of ``path`` parsed, by the file's
    path (empty for another path); given once, then forgotten."""
    found = dict(_DIGESTS) if _DIGESTS_OF[0] == os.path.realpath(path) else {}
    _DIGESTS.clear()
    _DIGESTS_OF[0] = ""
    return found


#: The path (real) whose files :data:`_DIGESTS` holds.
_DIGESTS_OF = [""]


def _subdir_names(path: Path) -> list[str]:
    """:func:`_subdirs`' names, from one directory scan."""
    with os.scandir(path) as entries:
        return sorted(e.name for e in entries if not e.name.startswith(".") and _is_dir(e))


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _jobs(path: Path) -> tuple[list[_Job], Path]:
    if (path / RESULT).is_file():
        return [_read_job(path, path)], path
    subdirs = _subdirs(path)
    jobs = [d for d in subdirs if _dir_kind(d) == "job"]
    others = [d.name for d in subdirs if d not in jobs]
    if not jobs or others:
        raise ResultsError(path, None, f"is not a Harbor job directory (no {RESULT}) nor a "
                           "folder of job directories" + (
                               f": {len(others)} of its folders are not Harbor job directories "
                               f"({some(others)}); pass the job directories themselves"
                               if jobs else ""))
    return [_read_job(d, path) for d in jobs], path


def _trial_file(path: Path, data: Any) -> tuple[Path | None, Any]:
    """The trial ``result.json`` ``path`` names (the file or its folder), else (None, None)."""
    if path.is_file():
        data = _load(path, path, None, "result.json") if data is None else data
        return (None, None) if _is_job(data) else (path, data)
    if _dir_kind(path) == "trial":
        return path / RESULT, None
    return None, None


def _choose_key(trials: list[_Trial], eval_key: str | None, report_as: Path) -> str:
    keys = list(dict.fromkeys(t.key for t in trials))
    if eval_key is not None:
        if eval_key not in keys:
            raise ResultsError(report_as, None, f"no Harbor evaluation {eval_key!r} "
                               f"(--eval-key); its trials are of {', '.join(map(repr, keys))}")
        return eval_key
    if len(keys) > 1:
        counts = Counter(t.key for t in trials)
        raise ResultsError(report_as, None, f"holds trials of {len(keys)} Harbor evaluations "
                           f"({', '.join(f'{k!r} ({counts[k]} trials)' for k in keys)}), "
                           "which are not one suite: pass --eval-key KEY (eval_key=) to read "
                           "one")
    return keys[0]


def _runs(trials: list[_Trial], report_as: Path, score_key: str | None,
          success_threshold: float | None, count_errors_as_failures: bool,
          left_out: Counter[tuple[str, str]]) -> Iterator[tuple[str, Run]]:
    by_task: dict[str, list[_Trial]] = defaultdict(list)
    for t in trials:
        by_task[t.task].append(t)
    for task, group in by_task.items():
        for i, t in enumerate(sorted(group, key=lambda t: (t.started, t.name))):
            not_agents = [(kind, name) for name, kind in t.errors if kind is not None]
            if not_agents and not count_errors_as_failures:
                left_out[not_agents[0]] += 1  # counted by the trial's first such error
                yield t.where, Run(task, False, i, excluded=True, excluded_as=NOT_THE_AGENTS,
                                   run_id=(HARBOR_RUN_ID, t.id))
                continue
            yield t.where, Run(task, _judge(t, report_as, score_key, success_threshold), i,
                               run_id=(HARBOR_RUN_ID, t.id))


def read_harbor(path: str | os.PathLike[str], data: Any = None, *, duplicates: str = "error",
                eval_key: str | None = None, score_key: str | None = None,
                success_threshold: float | None = None,
                count_errors_as_failures: bool = False) -> Results:
    """Read a Harbor job directory, a folder of them, or one trial's (or a job's) ``result.json``.

    Parameters
    ----------
    path : str or PathLike
        A job directory (``config.json``, ``result.json``, one folder a
        trial), a folder of job directories (read as trials of one suite), a
        job's ``result.json`` (its directory is read), or a trial's
        ``result.json`` (or its folder).
    data : object, optional
        ``path``'s parsed JSON, when the caller has read it.
    duplicates : str
        Accepted for the readers' common signature; attempts are numbered, so
        no (task, attempt) repeats.
    eval_key : str, optional
        The evaluation (``"<agent>__<model>__<dataset>"``) to read when the
        trials hold several; without it, several are an error naming them.
    score_key : str, optional
        The reward that decides success when a trial has several.
    success_threshold : float, optional
        A reward of at least this succeeds (for rewards other than 0 and 1).
    count_errors_as_failures : bool, default False
        Count trials that failed for reasons that are not the agent's
        (Harbor's error policy) as failures, as Harbor up to 0.13 did, instead
        of leaving them out.

    Returns
    -------
    Results
        One task a task name, n its trials; ``incomplete`` names a job without
        ``finished_at``, with fewer trials than ``n_total_trials``, or a task
        with fewer trials than ``n_attempts``.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> trial = {"task_name": "hello", "trial_name": "hello__x1", "source": "tb",
    ...          "agent_info": {"name": "oracle", "version": "1"},
    ...          "verifier_result": {"rewards": {"reward": 1}}}
    >>> _ = (d / "result.json").write_text(json.dumps(trial))
    >>> r = read_harbor(d / "result.json")
    >>> r.task_ids, r.successes.tolist(), r.totals.tolist(), r.suite
    (('hello',), [1], [1], 'oracle__tb')
    """
    path = Path(path)
    notes: list[str] = []
    incomplete: list[str] = []
    jobs: list[_Job] = []
    _DIGESTS.clear()
    _DIGESTS_OF[0] = os.path.realpath(path)
    file, data = _trial_file(path, data)
    if file is not None:
        report_as = file
        trials = [_read_trial(file, file, "trial", "", data)]
        notes.append("one Harbor trial, read alone: its job's plan (and whether it is "
                     "complete) is not known")
    else:
        jobs, report_as = _jobs(path.parent if path.is_file() else path)
        trials = [t for job in jobs for t in job.trials]
        if not trials:
            raise ResultsError(report_as, None, "Harbor job holds no finished trial (no trial "
                               f"folder with a {RESULT}): wait for `harbor run` to finish a "
                               "trial, or pass another job")
    key = _choose_key(trials, eval_key, report_as)
    chosen = [t for t in trials if t.key == key]
    if len(chosen) < len(trials):
        notes.append(f"read Harbor evaluation {key} ({plural(len(chosen), 'trial')}); "
                     f"{plural(len(trials) - len(chosen), 'trial')} of other evaluations "
                     "left aside")
    for job in jobs:
        label = "" if report_as == job.dir else f"{job.dir.name}/"
        evals = (job.data.get("stats") or {}).get("evals")
        stats = evals.get(key) if isinstance(evals, dict) else None
        mine = [t for t in job.trials if t.key == key]
        if mine:
            checked = _check_stored(Path(f"{report_as}/{label}{RESULT}") if label else
                                    report_as / RESULT, key, stats, mine)
            if checked:
                notes.append(checked)
        if job.data.get("finished_at") is None:
            incomplete.append(f"Harbor job {job.dir.name}: {RESULT} has no finished_at: the job "
                              "is still running or was stopped (`harbor jobs resume` finishes "
                              "it)")
        total = job.data.get("n_total_trials")
        if isinstance(total, int) and len(job.trials) < total:
            incomplete.append(f"Harbor job {job.dir.name}: holds {len(job.trials)} of its "
                              f"n_total_trials {total} trials"
                              + (f" ({plural(len(job.unfinished), 'trial folder')} without "
                                 f"a {RESULT}: {some(job.unfinished)})" if job.unfinished
                                 else ""))
    left_out: Counter[tuple[str, str]] = Counter()
    results = tally_runs(_runs(chosen, report_as, score_key, success_threshold,
                               count_errors_as_failures, left_out),
                         path=report_as, source="harbor", duplicates=duplicates)
    attempts = {job.config.get("n_attempts") for job in jobs}
    if len(jobs) == 1 and attempts and all(isinstance(a, int) for a in attempts):
        n = int(next(iter(attempts)))  # type: ignore[arg-type]
        short = short_of_plan(results, n, opening="Harbor job holds", unit="trials",
                              per_task=f"config.json n_attempts {n}")
        if short:
            incomplete.append(short)
    elif len(jobs) > 1:
        notes.insert(0, f"{len(jobs)} Harbor jobs read as trials of one suite: "
                     + some([f"{j.dir.name} ({plural(len(j.trials), 'trial')})" for j in jobs],
                            10))
        per_job = [job.config.get("n_attempts") for job in jobs]
        if all(isinstance(a, int) for a in per_job):
            for job in jobs:
                tasks = {t.task for t in job.trials if t.key == key}
                counts = Counter(t.task for t in job.trials if t.key == key)
                short_tasks = [f"{t}: {counts[t]}" for t in sorted(tasks)
                               if counts[t] < job.config["n_attempts"]]
                if short_tasks:
                    incomplete.append(f"Harbor job {job.dir.name}/: "
                                      f"{plural(len(short_tasks), 'task')} with fewer trials "
                                      f"than its n_attempts {job.config['n_attempts']} "
                                      f"({some(short_tasks)})")
    if left_out:
        kinds: dict[str, list[str]] = defaultdict(list)
        for (kind, name), count in left_out.most_common():
            kinds[kind].append(f"{name} ({count})")
        notes.append(f"{plural(sum(left_out.values()), 'trial')} left out as {NOT_THE_AGENTS} "
                     "(Harbor's error policy: no valid reward): "
                     + "; ".join(f"{kind}: {', '.join(names)}" for kind, names in kinds.items())
                     + "; --count-errors-as-failures counts them as failures, as Harbor up to "
                     "0.13 did")
    elif count_errors_as_failures:
        counted = sum(1 for t in chosen if any(kind for _, kind in t.errors))
        if counted:
            notes.append(f"{plural(counted, 'trial')} that Harbor's error policy marks as not "
                         "the agent's counted as failures (or by their reward, where the "
                         "verifier ran), as --count-errors-as-failures asks")
    no_reward = sum(1 for t in chosen if not t.rewards and not (
        not count_errors_as_failures and any(kind for _, kind in t.errors)))
    if no_reward:
        notes.append(f"{plural(no_reward, 'trial')} without a verifier result counted as "
                     f"{'a failure' if no_reward == 1 else 'failures'} (Harbor's rule up to "
                     "0.13: a missing reward is 0; Harbor since "
                     "its error policy leaves such trials out of its own mean and pass@k)")
    notes.append("Harbor's trials carry no attempt number: each task's trials are numbered "
                 "by started_at, then trial_name")
    overrides = []
    if score_key is not None:
        overrides.append(f"--score-key {score_key} decides success")
    if success_threshold is not None:
        overrides.append(f"--success-threshold {success_threshold:g}: a reward of at least "
                         f"{success_threshold:g} counted as a success")
    if count_errors_as_failures:
        overrides.append("errors Harbor's error policy calls not the agent's counted as "
                         "failures (--count-errors-as-failures)")
    _COUNTED.clear()  # the evidence's identity from the trials counted: each file read once
    _COUNTED[(os.path.realpath(path), key)] = _identity(trials, [
        str(job.data.get("id", job.dir.name)) for job in jobs] if jobs else [trials[0].id], key)
    return replace(with_notes(results, notes, incomplete), suite=key,
                   overrides=results.overrides + tuple(overrides))


#: The identity (:func:`identity`) of what :func:`read_harbor` read last, by its path and
#: evaluation key: ``identity`` of the same path and key takes it without reading every
#: trial's file again (``read_results`` asks right after reading).
_COUNTED: dict[tuple[str, str], dict[str, Any]] = {}


def identity(path: str | os.PathLike[str], eval_key: str | None = None) -> dict[str, Any]:
    """What identifies a Harbor job's evidence: its run ids and the evaluation it measures.

    ``run_ids`` are the job ids (a job's ``result.json`` ``id``), or the trial's
    id for one trial read alone; ``evaluation`` is the agent, its version, the
    model, the dataset and Harbor's evaluation key.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> trial = {"id": "t-1", "task_name": "hello", "trial_name": "hello__x1",
    ...          "source": "terminal-bench", "agent_info": {"name": "oracle", "version": "1",
    ...          "model_info": {"name": "m"}}, "verifier_result": None}
    >>> _ = (d / "result.json").write_text(json.dumps(trial))
    >>> identity(d / "result.json")["evaluation"]["eval_key"]
    'oracle__m__terminal-bench'
    """
    path = Path(path)
    if eval_key is not None and (os.path.realpath(path), eval_key) in _COUNTED:
        return _COUNTED.pop((os.path.realpath(path), eval_key))
    file, data = _trial_file(path, None)
    if file is not None:
        trials = [_read_trial(file, file, "trial", "", data)]
        run_ids = [trials[0].id]
    else:
        jobs, _ = _jobs(path.parent if path.is_file() else path)
        trials = [t for job in jobs for t in job.trials]
        run_ids = [str(job.data.get("id", job.dir.name)) for job in jobs]
    if not trials:
        raise ResultsError(path, None, "Harbor job holds no finished trial")
    return _identity(trials, run_ids, _choose_key(trials, eval_key, path))


def _identity(trials: list[_Trial], run_ids: list[str], key: str) -> dict[str, Any]:
    """:func:`identity` of the trials read, the run ids and the evaluation key chosen."""
    t = next(t for t in trials if t.key == key)
    versions = sorted({x.agent_version for x in trials if x.key == key})
    return {"run_ids": run_ids,
            "evaluation": {"agent": t.agent, "agent_version": ", ".join(versions),
                           "model": t.model, "dataset": t.dataset, "eval_key": key}}
