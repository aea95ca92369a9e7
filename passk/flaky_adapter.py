"""A simulated on-call assistant with switchable nondeterminism (the chapter's
``src/flaky-adapter.ts``).

The assistant handles a payment-service error-rate alert with four tools:
``query_metrics``, ``search_runbook`` (a tiny in-memory vector store),
``restart_service`` and ``escalate``. Nothing here draws a failure: no
``rng.random() < rate`` decides that something goes wrong. Every failure comes
out of a mechanism, each mechanism has its own switch, and the random draws it
reads come from a stream of its own (spawned from the run's seed), so
switching one source on or off leaves the others' draws as they were:

``deterministic_sort`` and ``tie_break`` (tool results in unstable order; tie stream)
    Three runbook fragments for the payment service tie in score. Unless
    ``deterministic_sort`` is set, the store returns tied fragments in a
    shuffled order, and ``search_runbook`` keeps the top two. The policy
    favours the first directive it reads, unless it reads an unconditional
    "escalate", which it favours more strongly still; it then samples its
    action (see ``temperature``). At the default temperature it always takes
    the favoured action. Exactly one of the six orders puts "restart first"
    ahead of "escalate if not recovered in 5 minutes" with the
    settlement-freeze fragment cut off, so the task passes with probability
    5/6. The chapter's fix sorts ties by score descending, then fragment id
    (``tie_break="id"``), which keeps the right fragments only because of how
    they happen to be named (see :func:`rename_fragments`);
    ``tie_break="priority"``, an addition of this package, orders them by
    what they say (:data:`DIRECTIVE_PRIORITY`).
``temperature`` (sampling; sampling stream)
    The policy scores its actions and samples from a softmax at this
    temperature, truncated to the nucleus of mass ``top_p`` as LLM APIs do
    (:func:`sample_action`). 0 means argmax. At the default 0.7 the runbook
    decision's margin keeps the nucleus to one action, so only the tie order
    matters there. At a high temperature (2.0, say) the other action enters
    the nucleus: the assistant sometimes restarts even after reading the
    settlement-freeze rule, and sometimes escalates after "restart first".
``deadline`` (the environment; environment stream)
    Every tool call's latency is drawn from the environment's stream
    (lognormal, median ``latency_median``, log-scale spread ``latency_sigma``)
    and recorded in the trajectory (:class:`TimedCall`). A call times out
    exactly when its latency exceeds the client's ``deadline``; the client
    then has waited the deadline, the assistant retries once, and a second
    timeout in a row makes it give up. ``deadline=None`` (the default, the
    offline mock) waits for every answer. The implied probability that one
    call times out is :meth:`OnCallSimulator.timeout_probability`.
``concurrency`` (execution order)
    Read-only tasks fetch metrics and the deploy log in parallel, and both
    write the shared scratchpad. Each call takes its recorded latency; the
    faster call finishes first and writes first, the slower one finishes last
    and overwrites it, so the slower call's answer is the one the assistant
    reads. The parallel phase lasts as long as the slower call. This source has no random stream of
    its own: it exposes
    the environment's latencies, which are drawn in program order whether the
    calls run in parallel or not.

The grader holds the expected final states; the policy never receives them.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, TypeVar

import numpy as np

from passk._public import publish
from passk.adapter import RunResult, Task, ToolCall

_Answer = TypeVar("_Answer")

__all__ = [
    "DIRECTIVE_PRIORITY",
    "EXPECTED_STATES",
    "RUNBOOK",
    "TIE_BREAKS",
    "Grader",
    "OnCallSimulator",
    "RunbookFragment",
    "TimedCall",
    "demo_tasks",
    "fragments_read",
    "rename_fragments",
    "sample_action",
    "search_runbook",
]


@dataclass(frozen=True)
class RunbookFragment:
    """One retrievable runbook passage and the directive a reader takes from it."""

    fragment_id: str
    service: str
    text: str
    score: float
    directive: str  # "restart", "escalate-if-not-recovered", "escalate", "info"


RUNBOOK: tuple[RunbookFragment, ...] = (
    RunbookFragment("rb-pay-restart", "payment-service",
                    "Transient 5xx on payment-service: restart first.", 0.92, "restart"),
    RunbookFragment("rb-pay-escalate", "payment-service",
                    "If the error rate has not recovered within 5 minutes, escalate "
                    "to the payments on-call.", 0.92, "escalate-if-not-recovered"),
    RunbookFragment("rb-pay-freeze", "payment-service",
                    "Settlement window: never restart payment-service without a human; "
                    "escalate.", 0.92, "escalate"),
    RunbookFragment("rb-generic-page", "any",
                    "How to page a human: use the escalate tool with a short summary.",
                    0.61, "info"),
    RunbookFragment("rb-checkout-restart", "checkout-service",
                    "checkout-service pods leak memory; a restart is safe.", 0.48, "restart"),
)

#: The runbook's own precedence among directives, lower first: a rule that
#: forbids acting alone comes before the condition for handing over, which
#: comes before the remedy. ``tie_break="priority"`` orders tied fragments by it.
DIRECTIVE_PRIORITY: Mapping[str, int] = {
    "escalate": 0, "escalate-if-not-recovered": 1, "restart": 2, "info": 3,
}

#: What can order tied fragments when ``deterministic_sort`` is set.
TIE_BREAKS = ("id", "priority")


def rename_fragments(
    fragment_ids: Mapping[str, str] | None,
    store: Sequence[RunbookFragment] = RUNBOOK,
) -> tuple[RunbookFragment, ...]:
    """The runbook store with some fragments under other ids; text, score and directive stay.

    Parameters
    ----------
    fragment_ids : Mapping[str, str] or None
        New id by current id. Fragments not named keep theirs; ``None`` or an
        empty mapping returns the store unchanged.
    store : sequence of RunbookFragment, default RUNBOOK
        The fragments to rename.

    Returns
    -------
    tuple of RunbookFragment
        The store in its own order, renamed.

    Raises
    ------
    ValueError
        When a key is not an id in ``store``, a new id is empty, or two
        fragments would share an id.

    Notes
    -----
    An id is a name, not content: renaming changes nothing the assistant
    reads. It does change a tie-break by id. The chapter's deterministic sort
    (score descending, then id) keeps the freeze and escalate rules only
    because ``"rb-pay-escalate" < "rb-pay-freeze" < "rb-pay-restart"``; under
    the name ``"rb-pay-a-restart"`` the restart rule sorts first and the fixed
    task fails every run.

    Examples
    --------
    >>> store = rename_fragments({"rb-pay-restart": "rb-pay-a-restart"})
    >>> [f.fragment_id for f in store[:3]]
    ['rb-pay-a-restart', 'rb-pay-escalate', 'rb-pay-freeze']
    >>> rng = np.random.default_rng(0)
    >>> [f.directive for f in search_runbook("payment-service", rng, deterministic_sort=True,
    ...                                      store=store)]
    ['restart', 'escalate-if-not-recovered']
    """
    store = tuple(store)
    renames = dict(fragment_ids or {})
    if not renames:
        return store
    known = {f.fragment_id for f in store}
    for old, new in renames.items():
        if old not in known:
            raise ValueError(f"fragment id {old!r} is not in the runbook; known ids: "
                             f"{sorted(known)}")
        if not isinstance(new, str) or not new:
            raise ValueError(f"new id for {old!r} ({new!r}) must be a non-empty string")
    renamed = tuple(replace(f, fragment_id=renames.get(f.fragment_id, f.fragment_id))
                    for f in store)
    ids = [f.fragment_id for f in renamed]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"fragment ids must be unique; {duplicates} would name two fragments")
    return renamed


def search_runbook(
    query_service: str,
    rng: np.random.Generator,
    *,
    deterministic_sort: bool,
    top_k: int = 2,
    store: Sequence[RunbookFragment] = RUNBOOK,
    tie_break: str = "id",
) -> list[RunbookFragment]:
    """Return the ``top_k`` fragments most similar to a query about ``query_service``.

    The similarity is the stored score for the service's own fragments and for
    generic ones, and a fraction of it for other services. Fragments with equal
    scores come back in an unspecified order (a shuffle drawn from ``rng``)
    unless ``deterministic_sort`` is set, which orders them by score
    descending, then by ``tie_break``: the fragment id (``"id"``, the
    chapter's rule) or the directive's :data:`DIRECTIVE_PRIORITY`, then the id
    (``"priority"``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> [f.fragment_id for f in search_runbook("payment-service", rng, deterministic_sort=True)]
    ['rb-pay-escalate', 'rb-pay-freeze']
    >>> [f.fragment_id for f in search_runbook("payment-service", rng, deterministic_sort=True,
    ...                                        tie_break="priority")]
    ['rb-pay-freeze', 'rb-pay-escalate']
    """
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break ({tie_break!r}) must be one of {TIE_BREAKS}")

    def similarity(f: RunbookFragment) -> float:
        return f.score if f.service in (query_service, "any") else f.score * 0.5

    if deterministic_sort:
        if tie_break == "id":
            ranked = sorted(store, key=lambda f: (-similarity(f), f.fragment_id))
        else:
            ranked = sorted(store, key=lambda f: (-similarity(f), DIRECTIVE_PRIORITY[f.directive],
                                                  f.fragment_id))
    else:
        # the store's own order among equals: a fresh shuffle on every call
        shuffled = [store[i] for i in rng.permutation(len(store))]
        ranked = sorted(shuffled, key=lambda f: -similarity(f))  # stable sort keeps the shuffle
    return ranked[:top_k]


def fragments_read(run: RunResult) -> tuple[str, ...]:
    """The runbook fragment ids ``search_runbook`` returned in a run, in the order read.

    The simulator records each tool call's answer as text; this reads the
    ids back from the run's (last answered) ``search_runbook`` call.

    Parameters
    ----------
    run : RunResult
        A run of :class:`OnCallSimulator`.

    Returns
    -------
    tuple of str
        The ids, first read first; empty when the run never got an answer
        from ``search_runbook`` (a read-only task, or a timeout).

    Examples
    --------
    >>> run = OnCallSimulator(deterministic_sort=True).run(demo_tasks()[0], seed=1)
    >>> fragments_read(run)
    ('rb-pay-escalate', 'rb-pay-freeze')
    >>> fragments_read(OnCallSimulator().run(demo_tasks()[1], seed=1))
    ()
    """
    answers = [c.observation for c in run.trajectory
               if c.tool == "search_runbook" and c.observation != "timeout"]
    return tuple(ast.literal_eval(answers[-1])) if answers else ()


def sample_action(scores: Mapping[str, float], temperature: float, top_p: float,
                  rng: np.random.Generator) -> str:
    """Sample an action the way an LLM API decodes: softmax at a temperature, top-p nucleus.

    The simulated assistants' one model of sampling (the temperature source);
    :mod:`passk.book.scenarios`' diagnosing assistant decodes with it too.

    Parameters
    ----------
    scores : Mapping[str, float]
        The policy's score (logit) for each action.
    temperature : float
        Softmax temperature, finite and >= 0; 0 takes the highest score
        (ties go to the action listed first) and draws nothing.
    top_p : float
        Nucleus mass in (0, 1]: the smallest set of most probable actions
        whose probabilities sum to at least ``top_p`` is kept and renormalized.
    rng : numpy.random.Generator
        The sampling stream (one draw per call when ``temperature > 0``).

    Returns
    -------
    str
        The chosen action.

    Notes
    -----
    With actions sorted by score, :math:`p_i \\propto \\exp(s_i / T)`; the
    nucleus is the first :math:`m` actions with :math:`\\sum_{i \\le m} p_i \\ge`
    ``top_p``, and the action is drawn from :math:`p_{1..m} / \\sum_{i \\le m} p_i`.
    An action outside the nucleus is never chosen, whatever the draw.

    References
    ----------
    .. [1] A. Holtzman, J. Buys, L. Du, M. Forbes and Y. Choi, "The curious case of
       neural text degeneration", ICLR 2020 (nucleus sampling).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> sample_action({"escalate": 4.0, "restart": 0.0}, 0.7, 0.95, rng)  # restart not in nucleus
    'escalate'
    >>> picks = [sample_action({"a": 1.0, "b": 0.0}, 2.0, 1.0, rng) for _ in range(2000)]
    >>> round(picks.count("a") / 2000, 1)  # softmax(0.5, 0) = 0.62
    0.6
    """
    if not scores:
        raise ValueError("scores is empty: there is no action to choose")
    if not (temperature >= 0 and math.isfinite(temperature)):
        raise ValueError(f"temperature ({temperature!r}) must be a finite number >= 0")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p ({top_p!r}) must lie in (0, 1]")
    actions = sorted(scores, key=lambda a: -scores[a])
    if temperature == 0:
        return actions[0]
    logits = np.array([scores[a] for a in actions]) / temperature
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    keep = min(int(np.searchsorted(np.cumsum(probs), top_p) + 1), len(actions))
    nucleus = probs[:keep] / probs[:keep].sum()
    return actions[int(rng.choice(keep, p=nucleus))]


@dataclass(frozen=True)
class TimedCall(ToolCall):
    """A simulated tool call with its timing: enough to see why it timed out or won a race.

    Parameters
    ----------
    tool, argument, observation : str
        As in :class:`~passk.adapter.ToolCall`; the observation of a call that
        timed out is ``"timeout"``.
    latency : float
        Seconds the upstream took (or would have taken) to answer, drawn from
        the environment's stream.
    deadline : float or None
        The client's deadline when the call was made; ``None`` waits for ever.
    started : float
        Simulated seconds since the run began when the call was issued.
    parallel : bool
        The call ran in a parallel phase, alongside the other fetch.
    race : {'', 'won', 'lost'}
        In a parallel phase, the final attempt of the call that finished
        first is marked ``'won'``, that of the call that finished last
        ``'lost'``. The last to finish writes the shared scratchpad last, so
        the loser's answer is the one left for the assistant.

    Examples
    --------
    >>> call = TimedCall("query_metrics", "payment-service", "timeout", latency=0.62,
    ...                  deadline=0.5, started=1.0)
    >>> call.timed_out, call.elapsed, call.finished
    (True, 0.5, 1.5)
    >>> print(call)
    query_metrics(payment-service) -> timeout  [latency 0.62 s > deadline 0.50 s]
    """

    latency: float = 0.0
    deadline: float | None = None
    started: float = 0.0
    parallel: bool = False
    race: str = ""

    @property
    def timed_out(self) -> bool:
        """Whether the latency exceeded the deadline."""
        return self.deadline is not None and self.latency > self.deadline

    @property
    def elapsed(self) -> float:
        """How long the client waited: the latency, or the deadline if that came first."""
        return self.deadline if self.timed_out and self.deadline is not None else self.latency

    @property
    def finished(self) -> float:
        """Simulated seconds since the run began when the answer (or the timeout) came."""
        return self.started + self.elapsed

    def __str__(self) -> str:
        why = []
        if self.timed_out:
            why.append(f"latency {self.latency:.2f} s > deadline {self.deadline:.2f} s")
        if self.parallel:
            if not self.timed_out:
                why.append(f"latency {self.latency:.2f} s")
            why.append("parallel")
        if self.race == "won":
            why.append("won the race: finished first, its write was overwritten")
        elif self.race == "lost":
            why.append("lost the race: finished last, its write stands")
        return super().__str__() + (f"  [{', '.join(why)}]" if why else "")


class _ToolTimeout(Exception):
    pass


@dataclass(frozen=True)
class _Decoding:
    """The policy's own settings. The policy gets these, never the simulator (or its grader)."""

    temperature: float
    top_p: float
    max_restarts: int


@dataclass
class _World:
    """One run's environment: the service, the tools, the clock, and what the agent did."""

    store: tuple[RunbookFragment, ...]
    deterministic_sort: bool
    tie_break: str
    concurrency: bool
    deadline: float | None
    latency_median: float
    latency_sigma: float
    tie_rng: np.random.Generator
    env_rng: np.random.Generator
    trajectory: list[ToolCall] = field(default_factory=list)
    restarts: int = 0
    escalated: bool = False
    clock: float = 0.0

    METRICS: ClassVar[Mapping[str, float]] = {"payment-service": 0.12}
    DEPLOYS: ClassVar[Mapping[str, str]] = {"payment-service": "deploy-4711"}

    def _attempt(self, tool: str, argument: str, answer: Any, started: float,
                 parallel: bool) -> TimedCall:
        latency = float(self.env_rng.lognormal(mean=math.log(self.latency_median),
                                               sigma=self.latency_sigma))
        timed_out = self.deadline is not None and latency > self.deadline
        return TimedCall(tool, argument, "timeout" if timed_out else str(answer),
                         latency=latency, deadline=self.deadline, started=started,
                         parallel=parallel)

    def _with_retry(self, tool: str, argument: str, answer: Any, started: float,
                    parallel: bool = False) -> list[TimedCall]:
        """A call and, if it timed out, one retry issued when the client gave up on it."""
        calls = [self._attempt(tool, argument, answer, started, parallel)]
        if calls[0].timed_out:
            calls.append(self._attempt(tool, argument, answer, calls[0].finished, parallel))
        return calls

    def _give_up(self, calls: list[TimedCall]) -> _ToolTimeout:
        return _ToolTimeout(f"{calls[-1].tool} ({len(calls)} attempts, each over the "
                            f"{calls[-1].deadline:.2f} s deadline)")

    def call_with_retry(self, tool: str, argument: str, answer: _Answer) -> _Answer:
        calls = self._with_retry(tool, argument, answer, self.clock)
        self.trajectory.extend(calls)
        self.clock = calls[-1].finished
        if calls[-1].timed_out:
            raise self._give_up(calls)
        return answer

    # the four tools of the chapter, plus the deploy log for a read-only task
    def query_metrics(self, service: str) -> float:
        return self.call_with_retry("query_metrics", service, self.METRICS[service])

    def get_last_deploy(self, service: str) -> str:
        return self.call_with_retry("get_last_deploy", service, self.DEPLOYS[service])

    def search_runbook(self, service: str) -> list[RunbookFragment]:
        found = search_runbook(service, self.tie_rng, deterministic_sort=self.deterministic_sort,
                               store=self.store, tie_break=self.tie_break)
        self.call_with_retry("search_runbook", service, [f.fragment_id for f in found])
        return found

    # a write changes the world only once its call went through
    def restart_service(self, service: str) -> None:
        self.call_with_retry("restart_service", service, "restarted")
        self.restarts += 1

    def escalate(self, service: str) -> None:
        self.call_with_retry("escalate", service, "paged the payments on-call")
        self.escalated = True

    def fetch_in_parallel(self, service: str, scratchpad: dict[str, Any]) -> None:
        """Fetch metrics and the deploy log; each answer is written to ``scratchpad['latest']``.

        Program order is metrics, then deploys for a deploy question, the
        reverse for a metrics question, so that the answer the question needs
        lands last. With concurrency off the calls run in that order. With
        concurrency on both are issued at once: each (with its retry) takes its
        recorded latencies, the phase ends when the slower one is done, and
        the answers land in the order the calls finished. Latencies are drawn
        in program order either way.
        """
        calls = [("query_metrics", self.METRICS[service]),
                 ("get_last_deploy", self.DEPLOYS[service])]
        if scratchpad["wanted"] == "query_metrics":
            calls.reverse()
        if not self.concurrency:
            for tool, answer in calls:
                scratchpad["latest"] = self.call_with_retry(tool, service, answer)
            return
        start = self.clock
        branches = [self._with_retry(tool, service, answer, start, parallel=True)
                    for tool, answer in calls]
        finishing = sorted(range(len(branches)), key=lambda i: branches[i][-1].finished)
        places = {finishing[0]: "won", finishing[-1]: "lost"}
        for i, branch in enumerate(branches):
            branch[-1] = replace(branch[-1], race=places.get(i, ""))
        finished: list[TimedCall] = sorted((c for b in branches for c in b),
                                           key=lambda c: c.finished)
        self.trajectory.extend(finished)
        self.clock = max(b[-1].finished for b in branches)
        for i in finishing:  # each answer is written when its call finishes
            if branches[i][-1].timed_out:
                raise self._give_up(branches[i])
            scratchpad["latest"] = calls[i][1]


def _handle_alert(world: _World, service: str, decoding: _Decoding,
                  sampling_rng: np.random.Generator) -> dict[str, Any]:
    error_rate = world.query_metrics(service)
    if error_rate <= 0.05:
        return {"action": "none"}
    fragments = world.search_runbook(service)
    directives = [f.directive for f in fragments if f.directive != "info"]
    if "escalate" in directives:
        scores = {"escalate": 4.0, "restart": 0.0}
    elif directives and directives[0] == "restart":
        scores = {"restart": 3.0, "escalate": 0.0}
    else:
        scores = {"escalate": 3.0, "restart": 0.0}
    action = sample_action(scores, decoding.temperature, decoding.top_p, sampling_rng)
    if action == "escalate":
        world.escalate(service)
        return {"action": "escalate"}
    for _ in range(decoding.max_restarts):  # the runbook said restart; it keeps trying
        world.restart_service(service)
        if world.query_metrics(service) <= 0.05:
            break
    return {"action": "restart"}


def _answer_question(world: _World, service: str, wanted: str) -> dict[str, Any]:
    scratchpad: dict[str, Any] = {"wanted": wanted, "latest": None}
    world.fetch_in_parallel(service, scratchpad)
    return {"answer": str(scratchpad["latest"])}


def _policy(task: Task, world: _World, decoding: _Decoding,
            sampling_rng: np.random.Generator) -> dict[str, Any]:
    """The assistant: it sees the task (instruction and params) and the tools, nothing else."""
    service = task.params.get("service", "payment-service")
    intent = task.params.get("intent", "handle-alert")
    if intent == "handle-alert":
        return _handle_alert(world, service, decoding, sampling_rng)
    if intent == "read-error-rate":
        return _answer_question(world, service, "query_metrics")
    if intent == "read-last-deploy":
        return _answer_question(world, service, "get_last_deploy")
    raise ValueError(f"the simulated assistant cannot handle intent {intent!r}")


@dataclass(frozen=True)
class Grader:
    """Compares a run's final state with the expected one. Only the grader holds the latter."""

    expected: Mapping[str, Mapping[str, Any]]

    def grade(self, task_id: str, final_state: Mapping[str, Any]) -> bool:
        """True when every expected key has its expected value in ``final_state``."""
        if task_id not in self.expected:
            raise KeyError(f"the grader has no expected state for task {task_id!r}")
        want = self.expected[task_id]
        return all(final_state.get(key) == value for key, value in want.items())


#: The expected final states of the demo tasks. The policy never sees these.
EXPECTED_STATES: Mapping[str, Mapping[str, Any]] = {
    "payment-alert": {"escalated": True, "restarts": 0},
    "read-error-rate": {"answer": "0.12"},
    "read-last-deploy": {"answer": "deploy-4711"},
}


def demo_tasks() -> list[Task]:
    """The chapter's suite: the runbook task (a high-risk write) and two read-only tasks.

    Examples
    --------
    >>> [(t.task_id, t.risk) for t in demo_tasks()]
    [('payment-alert', 'high-risk-write'), ('read-error-rate', 'read-only'), \
('read-last-deploy', 'read-only')]
    """
    return [
        Task("payment-alert",
             "payment-service error rate is above its alert threshold; handle the alert.",
             risk="high-risk-write",
             params={"service": "payment-service", "intent": "handle-alert"}),
        Task("read-error-rate", "What is payment-service's current error rate?",
             risk="read-only",
             params={"service": "payment-service", "intent": "read-error-rate"}),
        Task("read-last-deploy", "Which deploy is payment-service running?",
             risk="read-only",
             params={"service": "payment-service", "intent": "read-last-deploy"}),
    ]


def _positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{name} ({value!r}) must be a finite number > 0")


@dataclass(frozen=True)
class OnCallSimulator:
    """The simulated on-call assistant as a :class:`~passk.adapter.HarnessAdapter`.

    Every switch's default is the offline mock's: only the tie order and the
    sampling are live.

    Parameters
    ----------
    temperature : float, default 0.7
        Sampling temperature of the policy's action choice; 0 is argmax.
    deterministic_sort : bool, default False
        Sort tied runbook fragments (the fix) instead of shuffling them.
    concurrency : bool, default False
        Run the read-only tasks' two fetches in parallel (a race on shared state,
        decided by the calls' recorded latencies).
    deadline : float or None, default None
        The client's per-call deadline in seconds: a call whose latency exceeds
        it times out. ``None`` switches timeouts off.
    top_p : float, default 0.95
        Nucleus mass kept when sampling.
    max_restarts : int, default 3
        How many restarts the assistant tries before it stops.
    tie_break : {'id', 'priority'}, default 'id'
        What orders tied fragments when ``deterministic_sort`` is set: the
        fragment id (the chapter's fix) or :data:`DIRECTIVE_PRIORITY`.
        Ignored without ``deterministic_sort``.
    fragment_ids : Mapping[str, str] or None, default None
        Ids the runbook fragments go by, keyed by their ids in :data:`RUNBOOK`;
        fragments not named keep theirs (see :func:`rename_fragments`). Only
        names change, yet a tie-break by id reads them.
    latency_median : float, default 0.4
        Median latency of a tool call, in seconds.
    latency_sigma : float, default 0.3
        Spread of the log-latency: latencies are lognormal,
        ``exp(N(log(latency_median), latency_sigma**2))``; 0 makes every call
        take exactly the median.

    Notes
    -----
    A call times out with probability
    :math:`q = P(L > d) = \\tfrac12 \\operatorname{erfc}\\big(\\ln(d/m) / (\\sigma\\sqrt2)\\big)`
    for deadline :math:`d`, median :math:`m` and spread :math:`\\sigma`
    (:meth:`timeout_probability`). At the default latencies a 0.5 s deadline
    gives :math:`q \\approx 0.228`, 1 s gives :math:`q \\approx 0.0011`. With one
    retry, a call fails with probability :math:`q^2`.

    Examples
    --------
    >>> sim = OnCallSimulator()
    >>> task = demo_tasks()[0]
    >>> sum(sim.run(task, seed=s).success for s in range(600)) / 600  # doctest: +SKIP
    0.83...
    >>> OnCallSimulator(deterministic_sort=True).run(task, seed=1).success
    True
    >>> renamed = OnCallSimulator(deterministic_sort=True,
    ...                           fragment_ids={"rb-pay-restart": "rb-pay-a-restart"})
    >>> renamed.run(task, seed=1).success  # the same fix, other names
    False
    >>> round(OnCallSimulator(deadline=0.5).timeout_probability(), 3)
    0.228
    """

    temperature: float = 0.7
    deterministic_sort: bool = False
    concurrency: bool = False
    deadline: float | None = None
    top_p: float = 0.95
    max_restarts: int = 3
    tie_break: str = "id"
    fragment_ids: Mapping[str, str] | None = None
    latency_median: float = 0.4
    latency_sigma: float = 0.3
    grader: Grader = field(default_factory=lambda: Grader(EXPECTED_STATES), repr=False)

    def __post_init__(self) -> None:
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature ({self.temperature!r}) must be a finite number >= 0")
        if self.deadline is not None:
            _positive("deadline", self.deadline)
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p ({self.top_p!r}) must lie in (0, 1]")
        if isinstance(self.max_restarts, bool) or not isinstance(self.max_restarts, int) \
                or self.max_restarts < 1:
            raise ValueError(f"max_restarts ({self.max_restarts!r}) must be a whole number >= 1")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break ({self.tie_break!r}) must be one of {TIE_BREAKS}")
        _positive("latency_median", self.latency_median)
        if not (self.latency_sigma >= 0 and math.isfinite(self.latency_sigma)):
            raise ValueError(f"latency_sigma ({self.latency_sigma!r}) must be a finite number "
                             ">= 0")
        if self.fragment_ids is not None:
            rename_fragments(self.fragment_ids)  # refuses unknown, empty or clashing ids
            object.__setattr__(self, "fragment_ids", dict(self.fragment_ids))

    @property
    def store(self) -> tuple[RunbookFragment, ...]:
        """The runbook store this simulator searches, under its fragment ids."""
        return rename_fragments(self.fragment_ids)

    def timeout_probability(self) -> float:
        """Probability that one tool call times out: P(latency > deadline).

        The latency is lognormal, so
        :math:`q = \\tfrac12 \\operatorname{erfc}\\big(\\ln(d/m) / (\\sigma\\sqrt2)\\big)`;
        0 without a deadline.

        Examples
        --------
        >>> round(OnCallSimulator(deadline=1.0, latency_sigma=1.0).timeout_probability(), 3)
        0.18
        >>> OnCallSimulator().timeout_probability()
        0.0
        """
        if self.deadline is None:
            return 0.0
        z = math.log(self.deadline / self.latency_median)
        if self.latency_sigma == 0:
            return 1.0 if z < 0 else 0.0
        return 0.5 * math.erfc(z / (self.latency_sigma * math.sqrt(2)))

    def protocol(self) -> dict[str, Any]:
        """The switches that define a measurement with this simulator.

        ``fragment_ids`` lists the ids in effect, in the store's order, so a
        rename changes the protocol.
        """
        return {"temperature": self.temperature, "deterministic_sort": self.deterministic_sort,
                "tie_break": self.tie_break,
                "fragment_ids": [f.fragment_id for f in self.store],
                "concurrency": self.concurrency, "deadline": self.deadline,
                "latency_median": self.latency_median, "latency_sigma": self.latency_sigma,
                "top_p": self.top_p, "max_restarts": self.max_restarts}

    def run(self, task: Task, *, seed: int) -> RunResult:
        """Run ``task`` once; the same seed always gives the same run.

        The seed spawns three streams: tie order, sampling, environment.
        """
        tie, sampling, env = (np.random.default_rng(s)
                              for s in np.random.SeedSequence(seed).spawn(3))
        world = _World(store=self.store, deterministic_sort=self.deterministic_sort,
                       tie_break=self.tie_break, concurrency=self.concurrency,
                       deadline=self.deadline, latency_median=self.latency_median,
                       latency_sigma=self.latency_sigma, tie_rng=tie, env_rng=env)
        decoding = _Decoding(self.temperature, self.top_p, self.max_restarts)
        try:
            answer = _policy(task, world, decoding, sampling)
            error = None
        except _ToolTimeout as exc:
            answer, error = {"action": "gave-up"}, f"upstream timeout in {exc}"
        final_state = {**answer, "escalated": world.escalated, "restarts": world.restarts}
        return RunResult(
            task_id=task.task_id,
            run_index=0,
            success=self.grader.grade(task.task_id, final_state),
            final_state=final_state,
            trajectory=tuple(world.trajectory),
            seconds=world.clock,
            error=error,
        )


publish(globals())  # the names passk.__all__ takes from here say 'passk' (passk._public)
