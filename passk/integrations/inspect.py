"""passk inside Inspect AI: curtailed epochs, and mean pass^k with its interval.

Needs the optional extra ``inspect``
(``pip install 'passk-reliability[inspect]'``).
Installing passk registers this module with Inspect (the ``inspect_ai``
entry point), so its reducer and metric are also known by name, as
``passk/pass_hat_k_counts`` and ``passk/mean_pass_hat_k``.

- :class:`Curtailment` is Inspect's ``EarlyStopping``
  (``Task(early_stopping=Curtailment(...))``): it skips a sample's remaining
  epochs exactly when passk's settle rule (:mod:`passk.gate.curtailment`, the rule
  of ``passk run --stopping curtailed``) says no outcome of them can change the
  gate's decision. What it stopped, and the protocol it served, go into the
  log (``results.early_stopping``), where ``passk report`` and ``passk gate``
  read them.
- :func:`pass_hat_k_counts` is an epochs reducer that keeps each sample's
  counts (passes c of runs n) in the reduced score, and
  :func:`mean_pass_hat_k` a metric that turns them into the suite's mean
  pass^k with passk's suite interval (:func:`passk.stats.suite_interval.mean_pass_hat_k_ci`),
  the figures ``passk report`` prints for the same log.

A score value counts as a success by Inspect's binary convention: ``"C"``,
``True`` and ``1`` pass, ``"I"``, ``"N"``, ``False`` and ``0`` fail; any other
value is an error naming it, unless ``success_values`` (added to those) or
``success_threshold`` says how to judge it.

Examples
--------
>>> from passk.integrations.inspect import Curtailment
>>> Curtailment(k=2, min_overall_pass_hat_k=0.5).gate.describe()
'k 2, bar 0.5 on the estimate, flakiness cap 0.2'
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

try:
    from inspect_ai.scorer import (
        Metric,
        SampleScore,
        Score,
        ScoreReducer,
        Value,
        metric,
        score_reducer,
    )
    from inspect_ai.util import EarlyStop
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError("passk.integrations.inspect needs the optional extra 'inspect': pip install "
                      "'passk-reliability[inspect]' (or pip install inspect-ai)") from exc

from passk.errors import BadInput
from passk.gate.curtailment import GateSettings
from passk.render.words import plural
from passk.results.formats.inspect_log import is_success  # the one rule, shared with the reader
from passk.results.protocol import Protocol

if TYPE_CHECKING:
    from inspect_ai.dataset import Sample
    from inspect_ai.log import EvalSpec

__all__ = ["MANAGER", "Curtailment", "is_success", "mean_pass_hat_k", "pass_hat_k_counts",
           "replay"]

#: The early-stopping manager's name, as the log records it.
MANAGER = "passk.gate.curtailment"


class Curtailment:
    """Inspect AI early stopping by passk's settle rule: epochs stop once they cannot matter.

    ``Task(..., epochs=n, early_stopping=Curtailment(k=5, ...))`` runs a
    sample's epochs until no outcome of its remaining epochs (each a pass, a
    failure, or left out as an error) can change the dual gate's decision:
    mean pass^k (or its lower bound) at least the bar and no sample flakier
    than the cap. The gate on the epochs made is then the gate on all n, for
    every sample (see :mod:`passk.gate.curtailment`; the rule is the one of
    ``passk run --stopping curtailed`` and of the pytest plugin).

    Inspect may run epochs of a sample concurrently and finish them out of
    order: an epoch in flight counts as open until its score arrives, so a
    stop is decided only on outcomes known, and stays exact. How much is saved
    depends on how many epochs are in flight at once (``max_samples``). An
    epoch that errored is never scored and stays open, so no stop rests on it
    (passk's reader counts it as a failure); an epoch Inspect re-runs and
    scores anew replaces its first score.

    Parameters
    ----------
    k : int, optional
        k of pass^k (default: the policy's, else 5).
    min_overall_pass_hat_k : float, optional
        The gate's bar on the mean over samples (default: the policy's, else 0.7).
    max_flakiness : float, optional
        The cap on any sample's flakiness (default: the policy's, else 0.2).
    on : {'estimate', 'lower-bound'}, optional
        What the mean is of: each sample's pass^k estimate, or its exact
        one-sided lower bound at ``confidence`` (default: the policy's, else
        'estimate').
    min_runs : int, default 0
        Fewer scored epochs fail a sample.
    scorer : str, optional
        The scorer whose value decides success; needed when the task has several.
    confidence : float, optional
        The lower bounds' confidence (default: the policy's, else 0.95).
    success_values, success_threshold
        How to judge values beyond pass/fail (see :func:`is_success`).
    policy : path, optional
        The gate policy (``passk.toml`` or a ``pyproject.toml`` with ``[tool.passk]``);
        default the one found from the working directory as ``passk gate`` finds it. With
        a policy, an argument that would loosen it raises
        :class:`passk.gate.policy.PolicyError` naming the policy's value, and the
        criteria are the policy's, or the arguments' where they are stricter.
    stop_early : int, optional
        Instead of curtailing each sample, stop the whole eval early at this many planned
        looks (at least 2): after the epochs of each look (the first after k epochs of
        every sample), the eval stops once passk's proved interval on mean pass^k at
        level 1 - alpha/L clears the bar or lies below it
        (:func:`passk.stats.sequential.sequential_decision`; a wrong stop with a pass has
        probability at most alpha/2). Inspect schedules epoch by epoch, so a look comes
        once every sample's epochs up to it are scored, and it counts those epochs only
        (later ones already scored wait for the next look, so what a look sees never
        depends on how fast passes or failures end). The decisions are
        :class:`passk.run.schedule.Schedule`'s, as in
        ``passk run --stop-early`` and the pytest plugin's ``--passk-stop-early``.

    Examples
    --------
    Driven by hand as Inspect drives it (``start_task``, then ``schedule_sample``
    before each epoch and ``complete_sample`` after it): a sample that passes
    once and fails once is flaky whatever its last epoch gives, which blocks
    the gate, so that epoch is stopped.

    >>> import asyncio
    >>> from types import SimpleNamespace
    >>> from inspect_ai.scorer import Score, SampleScore
    >>> def scored(value):
    ...     return {"check": SampleScore(score=Score(value=value), sample_id="a")}
    >>> async def drive(c):
    ...     await c.start_task(None, [SimpleNamespace(id="a")], epochs=3)
    ...     for epoch, value in ((1, "C"), (2, "I")):
    ...         assert await c.schedule_sample("a", epoch) is None
    ...         await c.complete_sample("a", epoch, scored(value))
    ...     stop = await c.schedule_sample("a", 3)
    ...     return stop.reason, await c.complete_task()
    >>> reason, meta = asyncio.run(drive(Curtailment(k=1)))
    >>> reason
    "settled after 2 of 3 epochs (1 passed, 1 failed): no outcome of the rest can change the gate's decision"
    >>> meta["settled_early"], meta["epochs_saved"]
    ({'a': 2}, 1)
    """  # noqa: E501  # a doctest's output line cannot wrap

    def __init__(self, *, k: int | None = None, min_overall_pass_hat_k: float | None = None,
                 max_flakiness: float | None = None, on: str | None = None, min_runs: int = 0,
                 scorer: str | None = None, confidence: float | None = None,
                 success_values: Sequence[str] = (), success_threshold: float | None = None,
                 policy: str | os.PathLike[str] | None = None, stop_early: int | None = None):
        from passk.gate.bind import asked_from, bind
        from passk.gate.policy import policy_in_force
        from passk.run.schedule import Stopping

        #: Curtailment per sample, or (``stop_early``) the suite's early stopping.
        self.stopping = Stopping(curtailed=not stop_early, looks=stop_early or 0)
        asked = asked_from({"k": k, "min_overall_pass_hat_k": min_overall_pass_hat_k,
                            "max_flakiness": max_flakiness, "on": on, "confidence": confidence,
                            "min_runs": min_runs or None, "scorer": scorer,
                            "success_values": list(success_values) or None,
                            "success_threshold": success_threshold}, "python")
        #: The criteria in force (:func:`passk.gate.bind.bind`, the one binding): the
        #: arguments over the repository's policy over the defaults; an argument that would
        #: loosen the policy raises :class:`passk.errors.PolicyError` naming its value.
        self.in_force = bind(asked, policy_in_force(policy), front="python",
                             producer="inspect")
        #: The repository's gate policy in force (None: the arguments and the defaults).
        self.policy = self.in_force.policy
        c = self.in_force.criteria
        #: The gate curtailment serves: the criteria in force, whole (never a subset).
        self.gate: GateSettings = dataclasses.replace(
            c, k=self.in_force.k if self.in_force.k is not None else c.k)
        from passk.run.schedule import Schedule

        Schedule({}, self.gate, stopping=self.stopping)  # refuses what it cannot serve, now
        reader = self.in_force.reader
        scorer = reader.get("scorer")
        success_values = tuple(reader.get("success_values") or ())
        success_threshold = reader.get("success_threshold")
        self.scorer = scorer
        self.success_values = tuple(success_values)
        self.success_threshold = success_threshold
        self._started = False

    def _reset(self, ids: Sequence[str | int], epochs: int, task: str | None) -> None:
        from passk.run.schedule import Schedule

        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise BadInput(f"epochs ({epochs!r}) must be a whole number >= 1")
        keys = [str(i) for i in ids]
        if len(set(keys)) != len(keys):
            raise BadInput("sample ids must be unique within a task for passk's curtailment")
        self.epochs, self.task_name, self.ids = epochs, task, keys
        #: The one scheduler (epoch e of a sample is its run e - 1): counts, the settle
        #: rule, early stopping.
        self.schedule = Schedule(dict.fromkeys(keys, epochs), self.gate, stopping=self.stopping)
        self.stopped: dict[str, set[int]] = {key: set() for key in keys}
        self.scheduled: set[tuple[str, int]] = set()
        self._started = True

    @property
    def outcomes(self) -> dict[str, dict[int, bool]]:
        """Each sample's scored epochs so far: epoch -> passed (the schedule's records)."""
        return {key: {i + 1: o == "passed" for i, o in sorted(s.final.items())}
                for key, s in self.schedule.states.items()}

    # -- Inspect's EarlyStopping protocol --------------------------------

    async def start_task(self, task: EvalSpec | None, samples: list[Sample], epochs: int
                         ) -> str:
        """Register the samples and epochs; return the manager's name,
        ``passk.gate.curtailment``."""
        if getattr(self, "_running", False):
            raise RuntimeError("this Curtailment is already curtailing a task: give each "
                               "Task its own Curtailment(...)")
        ids = [s.id for s in samples]
        if any(i is None for i in ids):
            raise BadInput("every sample needs an id for passk's curtailment")
        self._reset([i for i in ids if i is not None], epochs, getattr(task, "task", None))
        self._running = True
        return MANAGER

    async def schedule_sample(self, id: str | int, epoch: int) -> EarlyStop | None:
        """An ``EarlyStop`` when the schedule says the sample is settled or the eval has
        stopped, else None (run it)."""
        key = self._key(id)
        schedule = self.schedule
        s = schedule.states[key]
        # the first epoch of the eval always runs: an eval that runs nothing writes no
        # results, and so no record of what curtailment settled (epochs < k settles every
        # sample at once), and its log could not be gated as the full one is
        if self.scheduled and epoch - 1 not in s.final:
            done = s.counted
            if schedule.stopped is not None and schedule.stopped_for(key):
                schedule.skip(key, epoch - 1, "stopped")
                self.stopped[key].add(epoch)
                return EarlyStop(id=id, epoch=epoch, reason=f"the eval {schedule.stop_note()}",
                                 metadata={"passes": s.successes, "runs": done,
                                           "look": schedule.stopped.look})
            if schedule.settled(key):
                schedule.skip(key, epoch - 1, "settled")
                self.stopped[key].add(epoch)
                return EarlyStop(id=id, epoch=epoch, reason=(
                    f"settled after {done} of {plural(self.epochs, 'epoch')} "
                    f"({s.successes} passed, {s.failures} failed): no outcome of the rest can "
                    "change the gate's decision"), metadata={"passes": s.successes, "runs": done,
                                           "suite": schedule.suite})
        schedule.start(key, epoch - 1)
        self.scheduled.add((key, epoch))
        return None

    async def complete_sample(self, id: str | int, epoch: int,
                              scores: dict[str, SampleScore]) -> None:
        """Record the epoch's outcome (success by the scorer's value, see :func:`is_success`);
        an epoch scored again replaces its first score."""
        key = self._key(id)
        value = self._value(scores)
        if value is None:
            return  # not scored: it stays open, as an epoch left out is one completion
        won = is_success(value, success_values=self.success_values,
                         success_threshold=self.success_threshold)
        self.schedule.record(key, epoch - 1, "passed" if won else "failed")

    async def complete_task(self) -> dict[str, Any]:
        """What curtailment did, for the log: the protocol it served, the samples it
        settled early (with the epochs scored), and the epochs planned, run and saved."""
        if not self._started:
            raise RuntimeError("complete_task before start_task")
        self._running = False
        schedule = self.schedule
        settled = {key: len(schedule.states[key].final) for key in self.ids
                   if self.stopped[key] and schedule.states[key].settled_mark}
        saved = sum(len(s) for s in self.stopped.values())
        meta: dict[str, Any] = {
            "protocol": self.protocol().to_dict(),
            "settled_early": settled,
            "epochs_planned": self.epochs * len(self.ids),
            "epochs_run": len(self.scheduled),
            "epochs_saved": saved,
        }
        if schedule.stopped is not None:
            meta["stopped_early"] = {**dataclasses.asdict(schedule.stopped),
                                     "note": schedule.stop_note()}
        return meta

    # -- the protocol and helpers ------------------------------------------

    def protocol(self) -> Protocol:
        """The measurement's protocol, with the settings ``passk run`` writes where they
        apply: the gate curtailment served binds ``passk gate`` on the log."""
        from passk.stability import CLASS_THRESHOLD

        g = self.gate
        settings: dict[str, Any] = {
            "runner": "inspect_ai (passk.integrations.inspect.Curtailment)",
            "stopping": "curtailed" if self.stopping.curtailed else "stop-early",
            "k": g.k, "min_overall_pass_hat_k": g.min_overall_pass_hat_k,
            "max_flakiness": g.max_flakiness, "gate_on": g.on, "confidence": g.confidence,
            "class_threshold": CLASS_THRESHOLD, "default_runs": self.epochs,
            "min_runs": g.min_runs, "tasks": sorted(self.ids), "scorer": self.scorer,
        }
        if self.stopping.looks:
            settings["stop_early"] = {"looks": self.stopping.looks,
                                      "rule": "passk.stats.sequential.sequential_decision"}
        if self.task_name:
            settings["eval_task"] = self.task_name
        if self.success_values or self.success_threshold is not None:
            settings["success_values"] = list(self.success_values)
            settings["success_threshold"] = self.success_threshold
        return Protocol(settings)

    def _key(self, id: str | int) -> str:
        if not self._started:
            raise RuntimeError("Inspect called the early stopping before start_task")
        key = str(id)
        if key not in self.schedule.states:
            raise BadInput(f"sample {id!r} was not registered by start_task")
        return key

    def _value(self, scores: dict[str, SampleScore]) -> Any:
        if not scores:
            return None
        if self.scorer is None:
            if len(scores) > 1:
                raise BadInput(f"the task has several scorers ({', '.join(scores)}): pass "
                                 "scorer= to Curtailment")
            self.scorer = next(iter(scores))
        sample_score = scores.get(self.scorer)
        if sample_score is None:
            raise BadInput(f"no scorer {self.scorer!r} in the sample's scores; it has "
                             f"{', '.join(scores)}")
        return sample_score.score.value


def _now(step: Any) -> Any:
    """Run a coroutine that never suspends (Curtailment's methods), without an event loop,
    so that replay works in Jupyter too, where a loop is already running."""
    try:
        step.send(None)
    except StopIteration as done:
        return done.value
    step.close()
    raise RuntimeError("the early stopping suspended: it cannot be replayed synchronously")


def replay(curtailment: Curtailment, outcomes: Any, *, ids: Sequence[str | int] | None = None,
           in_flight: int = 1) -> dict[str, Any]:
    """What curtailment does to a table of epoch outcomes, calling it as Inspect does.

    Epochs are scheduled epoch by epoch over the samples (Inspect's order),
    ``in_flight`` at a time; each finishes before the next starts when
    ``in_flight`` is 1, else the oldest in flight finishes first. An epoch
    whose outcome is ``None`` (or NaN) ended in an error: it is never
    completed. Run it on the outcomes of a full-epoch log to see what
    curtailment would have saved there.

    Parameters
    ----------
    curtailment : Curtailment
        A fresh one (it is started here).
    outcomes : array_like of bool, shape (samples, epochs)
    ids : sequence, optional
        The samples' ids (default ``0, 1, ...``).
    in_flight : int, default 1
        Epochs running at once (Inspect's ``max_samples``).

    Returns
    -------
    dict
        :meth:`Curtailment.complete_task`'s metadata.

    Examples
    --------
    >>> table = [[True] * 6, [True, False] * 3, [True] * 6]
    >>> meta = replay(Curtailment(k=2), table)
    >>> meta["settled_early"], meta["epochs_saved"], meta["epochs_planned"]
    ({'1': 2}, 4, 18)
    """
    rows = [list(r) for r in outcomes]
    if not rows or len({len(r) for r in rows}) != 1 or not rows[0]:
        raise BadInput("outcomes must be a non-empty table: one row of epochs per sample")
    if isinstance(in_flight, bool) or not isinstance(in_flight, int) or in_flight < 1:
        raise BadInput(f"in_flight ({in_flight!r}) must be a whole number >= 1")
    names = list(ids) if ids is not None else list(range(len(rows)))
    if len(names) != len(rows):
        raise BadInput(f"{len(names)} ids for {len(rows)} rows of outcomes")
    epochs = len(rows[0])
    samples = [_Registered(i) for i in names]
    _now(curtailment.start_task(None, samples, epochs))  # type: ignore[arg-type]
    running: list[tuple[int, int]] = []

    def finish() -> None:
        row, epoch = running.pop(0)
        won = rows[row][epoch - 1]
        if won is None or (isinstance(won, float) and math.isnan(won)):
            return  # errored: Inspect does not complete it
        score = Score(value="C" if bool(won) else "I")
        _now(curtailment.complete_sample(names[row], epoch, {scorer: SampleScore(
            score=score, sample_id=names[row])}))

    scorer = curtailment.scorer or "passk"
    for epoch in range(1, epochs + 1):
        for row, name in enumerate(names):
            if _now(curtailment.schedule_sample(name, epoch)) is None:
                running.append((row, epoch))
            if len(running) >= in_flight:
                finish()
    while running:
        finish()
    meta: dict[str, Any] = _now(curtailment.complete_task())
    return meta


class _Registered:
    """What start_task reads of a sample: its id."""

    def __init__(self, id: str | int):
        self.id = id


def _counts_of(score: Score) -> tuple[int, int]:
    meta = score.metadata or {}
    c, n = meta.get("passes"), meta.get("runs")
    if not (isinstance(c, int) and isinstance(n, int) and 0 <= c <= n):
        raise BadInput("mean_pass_hat_k needs each sample's counts: use the epochs "
                         "reducer passk.integrations.inspect.pass_hat_k_counts (Epochs(n, "
                         "pass_hat_k_counts()))")
    return c, n


def pass_hat_k_counts(success_values: Sequence[str] = (),
                      success_threshold: float | None = None) -> ScoreReducer:
    """An epochs reducer that keeps a sample's counts: ``c`` passes of ``n`` epochs.

    The reduced score's value is ``c / n`` (so Inspect's ``accuracy`` still
    reads as the mean success rate), and its metadata holds ``passes`` and
    ``runs`` for :func:`mean_pass_hat_k`. Success is :func:`is_success`.

    Examples
    --------
    >>> from inspect_ai.scorer import Score
    >>> reduce = pass_hat_k_counts()
    >>> reduce([Score(value="C"), Score(value="I"), Score(value="C")]).metadata
    {'passes': 2, 'runs': 3}
    """
    def reduce(scores: list[Score]) -> Score:
        wins = [is_success(s.value, success_values=success_values,
                           success_threshold=success_threshold) for s in scores]
        c, n = sum(wins), len(wins)
        return Score(value=c / n if n else math.nan,
                     explanation=f"{c} of {plural(n, 'epoch')} passed",
                     metadata={"passes": c, "runs": n})

    return reduce


def mean_pass_hat_k(k: int = 5, confidence: float = 0.95,
                    method: str | None = None) -> Metric:
    r"""The suite's mean pass^k with passk's interval, from the samples' counts.

    Needs the epochs reducer :func:`pass_hat_k_counts`. The estimate is
    :math:`\frac1T \sum_i \binom{c_i}{k} / \binom{n_i}{k}` over the samples
    with at least k scored epochs, and the interval
    :func:`passk.stats.suite_interval.mean_pass_hat_k_ci`'s (its default method unless
    ``method`` names another): the figures ``passk report`` prints for the same log. Reported as
    ``pass^k``, ``pass^k_low`` and
    ``pass^k_high`` (with k's value), and ``samples``, the samples averaged.

    Examples
    --------
    >>> from inspect_ai.scorer import Score, SampleScore
    >>> scores = [SampleScore(score=Score(value=c / 4, metadata={"passes": c, "runs": 4}),
    ...                       sample_id=i) for i, c in enumerate([4, 3, 4, 2, 4])]
    >>> {name: round(v, 4) for name, v in mean_pass_hat_k(k=2)(scores).items()}
    {'pass^2': 0.7333, 'pass^2_low': 0.3717, 'pass^2_high': 0.9448, 'samples': 5}
    """
    from passk.stats.suite_interval import mean_pass_hat_k_ci

    def compute(scores: list[SampleScore]) -> Value:
        counts = [_counts_of(s.score) for s in scores]
        c = [x for x, _ in counts]
        n = [y for _, y in counts]
        suite = (mean_pass_hat_k_ci(c, n, k, confidence=confidence) if method is None else
                 mean_pass_hat_k_ci(c, n, k, confidence=confidence, method=method))
        return {f"pass^{k}": float(suite.estimate), f"pass^{k}_low": float(suite.ci.low),
                f"pass^{k}_high": float(suite.ci.high), "samples": int(suite.n_tasks)}

    return compute


# Inspect's decorators register the two under their names and return wrappers without
# the docstrings: keep the undecorated functions for doctest and the docs.
__test__ = {"pass_hat_k_counts": pass_hat_k_counts, "mean_pass_hat_k": mean_pass_hat_k}
_reducer_doc, _metric_doc = pass_hat_k_counts.__doc__, mean_pass_hat_k.__doc__
# named in full: Inspect prefixes the package only when it can find passk's distribution
# under the import name, which an editable install of passk-reliability does not give it
pass_hat_k_counts = score_reducer(name="passk/pass_hat_k_counts")(pass_hat_k_counts)
mean_pass_hat_k = metric(name="passk/mean_pass_hat_k")(mean_pass_hat_k)
pass_hat_k_counts.__doc__, mean_pass_hat_k.__doc__ = _reducer_doc, _metric_doc
