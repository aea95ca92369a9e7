"""A simulated on-call assistant with switchable nondeterminism (the chapter's ``src/flaky-adapter.ts``).

The assistant handles a payment-service error-rate alert with four tools:
``query_metrics``, ``search_runbook`` (a tiny in-memory vector store),
``restart_service`` and ``escalate``. Nothing here draws a failure directly;
every failure comes out of a mechanism, and each mechanism has its own switch
and its own random stream:

``deterministic_sort`` (tool results in unstable order)
    Three runbook fragments for the payment service tie in score. Unless
    sorted by (score descending, id), the store returns tied fragments in a
    shuffled order, and ``search_runbook`` keeps the top two. The policy acts
    on the first directive it reads unless it reads an unconditional
    "escalate". Exactly one of the six orders puts "restart first" ahead of
    "escalate if not recovered in 5 minutes" with the settlement-freeze
    fragment cut off, so the task passes with probability 5/6.
``temperature`` (sampling)
    The policy scores its actions and samples from a softmax at this
    temperature, truncated to the nucleus of mass ``top_p`` as LLM APIs do.
    0 means argmax. At the default 0.7 the runbook decision's margin keeps the
    nucleus to one action, so only the tie order matters there.
``concurrency`` (execution order)
    Read-only tasks fetch metrics and the deploy log in parallel; both write
    the shared scratchpad, and the last call to finish wins it.
``env_fault_rate`` (the environment)
    Each tool call times out upstream with this probability; the assistant
    retries once, then gives up.

The grader holds the expected final states; the policy never receives them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from .adapter import RunResult, Task, ToolCall

__all__ = [
    "RunbookFragment",
    "RUNBOOK",
    "search_runbook",
    "Grader",
    "OnCallSimulator",
    "demo_tasks",
    "EXPECTED_STATES",
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


def search_runbook(
    query_service: str,
    rng: np.random.Generator,
    *,
    deterministic_sort: bool,
    top_k: int = 2,
    store: tuple[RunbookFragment, ...] = RUNBOOK,
) -> list[RunbookFragment]:
    """Return the ``top_k`` fragments most similar to a query about ``query_service``.

    The similarity is the stored score for the service's own fragments and for
    generic ones, and a fraction of it for other services. Fragments with equal
    scores come back in an unspecified order (a shuffle drawn from ``rng``)
    unless ``deterministic_sort`` is set, which orders them by score
    descending, then by id.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> [f.fragment_id for f in search_runbook("payment-service", rng, deterministic_sort=True)]
    ['rb-pay-escalate', 'rb-pay-freeze']
    """
    def similarity(f: RunbookFragment) -> float:
        return f.score if f.service in (query_service, "any") else f.score * 0.5

    if deterministic_sort:
        ranked = sorted(store, key=lambda f: (-similarity(f), f.fragment_id))
    else:
        # the store's own order among equals: a fresh shuffle on every call
        shuffled = [store[i] for i in rng.permutation(len(store))]
        ranked = sorted(shuffled, key=lambda f: -similarity(f))  # stable sort keeps the shuffle
    return ranked[:top_k]


def sample_action(scores: Mapping[str, float], temperature: float, top_p: float,
                   rng: np.random.Generator) -> str:
    """Sample an action from softmax(scores / temperature) restricted to its top-p nucleus."""
    actions = sorted(scores, key=lambda a: -scores[a])
    if temperature == 0:
        return actions[0]
    logits = np.array([scores[a] for a in actions]) / temperature
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    keep = int(np.searchsorted(np.cumsum(probs), top_p) + 1)
    nucleus = probs[:keep] / probs[:keep].sum()
    return actions[int(rng.choice(keep, p=nucleus))]


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
    """One run's environment: the service, the tools, and what the agent did."""

    deterministic_sort: bool
    concurrency: bool
    env_fault_rate: float
    tie_rng: np.random.Generator
    env_rng: np.random.Generator
    race_rng: np.random.Generator
    trajectory: list[ToolCall] = field(default_factory=list)
    restarts: int = 0
    escalated: bool = False
    seconds: float = 0.0

    METRICS = {"payment-service": 0.12}
    DEPLOYS = {"payment-service": "deploy-4711"}

    def _call(self, tool: str, argument: str, answer: Any) -> Any:
        latency = float(self.env_rng.lognormal(mean=math.log(0.4), sigma=0.3))
        self.seconds += latency
        if self.env_rng.random() < self.env_fault_rate:
            self.trajectory.append(ToolCall(tool, argument, "timeout"))
            raise _ToolTimeout(tool)
        self.trajectory.append(ToolCall(tool, argument, str(answer)))
        return answer

    def call_with_retry(self, tool: str, argument: str, answer: Any) -> Any:
        try:
            return self._call(tool, argument, answer)
        except _ToolTimeout:
            return self._call(tool, argument, answer)  # one retry; a second timeout propagates

    # the four tools of the chapter, plus the deploy log for a read-only task
    def query_metrics(self, service: str) -> float:
        return self.call_with_retry("query_metrics", service, self.METRICS[service])

    def get_last_deploy(self, service: str) -> str:
        return self.call_with_retry("get_last_deploy", service, self.DEPLOYS[service])

    def search_runbook(self, service: str) -> list[RunbookFragment]:
        found = search_runbook(service, self.tie_rng,
                               deterministic_sort=self.deterministic_sort)
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
        """Fetch metrics and the deploy log at once; each writes ``scratchpad['latest']``.

        With concurrency off they run in program order (metrics, then deploys
        for a deploy question, the reverse for a metrics question), so the
        answer the question needs lands last. With concurrency on, the call
        that finishes last wins, and finishing order follows the latencies.
        """
        calls = [("query_metrics", self.METRICS[service]),
                 ("get_last_deploy", self.DEPLOYS[service])]
        if scratchpad["wanted"] == "query_metrics":
            calls.reverse()
        if self.concurrency:
            latencies = self.race_rng.exponential(1.0, size=len(calls))
            calls = [calls[i] for i in np.argsort(latencies)]
        for tool, answer in calls:
            scratchpad["latest"] = self.call_with_retry(tool, service, answer)


def _handle_alert(world: _World, service: str, decoding: "_Decoding",
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


def _policy(task: Task, world: _World, decoding: "_Decoding",
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


@dataclass(frozen=True)
class OnCallSimulator:
    """The simulated on-call assistant as a :class:`~passk.adapter.HarnessAdapter`.

    Parameters
    ----------
    temperature : float, default 0.7
        Sampling temperature of the policy's action choice; 0 is argmax.
    deterministic_sort : bool, default False
        Sort tied runbook fragments by id (the fix) instead of shuffling them.
    concurrency : bool, default False
        Run the read-only tasks' two fetches in parallel (a race on shared state).
    env_fault_rate : float, default 0.0
        Probability that any tool call times out upstream.
    top_p : float, default 0.95
        Nucleus mass kept when sampling.
    max_restarts : int, default 3
        How many restarts the assistant tries before it stops.

    Examples
    --------
    >>> sim = OnCallSimulator()
    >>> task = demo_tasks()[0]
    >>> sum(sim.run(task, seed=s).success for s in range(600)) / 600  # doctest: +SKIP
    0.83...
    >>> OnCallSimulator(deterministic_sort=True).run(task, seed=1).success
    True
    """

    temperature: float = 0.7
    deterministic_sort: bool = False
    concurrency: bool = False
    env_fault_rate: float = 0.0
    top_p: float = 0.95
    max_restarts: int = 3
    grader: Grader = field(default_factory=lambda: Grader(EXPECTED_STATES), repr=False)

    def __post_init__(self) -> None:
        if not (self.temperature >= 0 and math.isfinite(self.temperature)):
            raise ValueError(f"temperature ({self.temperature!r}) must be a finite number >= 0")
        if not 0 <= self.env_fault_rate <= 1:
            raise ValueError(f"env_fault_rate ({self.env_fault_rate!r}) must lie in [0, 1]")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p ({self.top_p!r}) must lie in (0, 1]")
        if isinstance(self.max_restarts, bool) or not isinstance(self.max_restarts, int) \
                or self.max_restarts < 1:
            raise ValueError(f"max_restarts ({self.max_restarts!r}) must be a whole number >= 1")

    def protocol(self) -> dict[str, Any]:
        """The switches that define a measurement with this simulator."""
        return {"temperature": self.temperature, "deterministic_sort": self.deterministic_sort,
                "concurrency": self.concurrency, "env_fault_rate": self.env_fault_rate,
                "top_p": self.top_p, "max_restarts": self.max_restarts}

    def run(self, task: Task, *, seed: int) -> RunResult:
        """Run ``task`` once; the same seed always gives the same run."""
        tie, sampling, race, env = (np.random.default_rng(s)
                                    for s in np.random.SeedSequence(seed).spawn(4))
        world = _World(tie_rng=tie, env_rng=env, race_rng=race,
                       deterministic_sort=self.deterministic_sort, concurrency=self.concurrency,
                       env_fault_rate=self.env_fault_rate)
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
            seconds=world.seconds,
            error=error,
        )
