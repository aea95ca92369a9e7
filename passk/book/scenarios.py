"""Fault injection with labelled golden scenarios, a diagnosing assistant, and its budget.

Production failures are rare and badly recorded, so waiting for incidents
never fills an evaluation set. Here faults are injected on purpose in the
payment domain, each scenario carrying its root cause as ground truth:

- ``payment-channel-timeout``: a payment channel times out upstream;
- ``state-machine-stuck``: orders pile up between two states;
- ``config-release-with-promotion``: a config release lands with a promotion change;
- ``healthy``: the control, nothing wrong.

Ground truth is isolated by construction, not by convention. A
:class:`GoldenScenario` splits into what the environment needs
(:class:`Telemetry`: numbers and log lines, no label) and what the grader
needs (:class:`GroundTruth`: the root cause and a canary string). The
assistant's policy receives an instruction and an :class:`EvidenceTools`
object built from the telemetry alone; :class:`DiagnosisSimulator` is built
from telemetry alone; only :class:`GroundTruthGrader` holds labels, and it is
applied outside the adapter by :class:`GradedAdapter`. :func:`leak_check`
scans everything the assistant saw for the labels' canaries, so a harness
that leaks (like :class:`LeakyDiagnosisSimulator`, kept as a test double) is
caught.

The scenarios come in two disjoint splits built from different variants:
``dev`` for working on the assistant, ``hidden`` for the release decision.
Injected faults cover only the failure shapes someone designed; a fault
nobody thought of is not in either split.

The budget is a harness setting: :class:`Budget` truncates a run after
``max_steps`` steps or ``max_time_seconds`` simulated seconds. Each step
costs simulated time, so a budget below what the assistant typically needs
cuts it off before it submits.

Beside the scenarios, a rate model for studies: :func:`bernoulli_runs` draws
runs from given per-task rates. It is not an agent (nothing in it can fail for
a reason), and serves only where a rule is studied over populations of rates
(curtailment's saving, a gate's operating characteristic); where flakiness
comes from is :mod:`passk.flaky_adapter`'s business.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from passk.adapter import HarnessAdapter, RunResult, Task, ToolCall
from passk.flaky_adapter import sample_action
from passk.render.words import plural

if TYPE_CHECKING:  # pragma: no cover
    from passk.repeats import RepeatRun

__all__ = [
    "EVIDENCE_TOOLS",
    "ROOT_CAUSES",
    "Budget",
    "DiagnosisSimulator",
    "EvidenceTools",
    "GoldenScenario",
    "GradedAdapter",
    "GroundTruth",
    "GroundTruthGrader",
    "LeakReport",
    "LeakyDiagnosisSimulator",
    "Telemetry",
    "bernoulli_runs",
    "catalogue",
    "environments",
    "leak_check",
    "leak_report",
    "measure",
    "split_tasks",
]

ROOT_CAUSES = ("payment-channel-timeout", "state-machine-stuck",
               "config-release-with-promotion", "healthy")

#: The evidence sources, in the assistant's investigation order.
EVIDENCE_TOOLS = ("query_metrics", "check_channel_status", "inspect_order_states",
                  "read_config_log", "read_promo_log")


@dataclass(frozen=True)
class Telemetry:
    """What the environment shows about one scenario: observations only, no label."""

    error_rate: float
    channel: str
    channel_timeout_rate: float
    stuck_state: str
    stuck_orders: int
    config_releases: tuple[str, ...]
    promo_changes: tuple[str, ...]


@dataclass(frozen=True)
class GroundTruth:
    """The label of a scenario. Only the grader holds it.

    ``canary`` is a string that appears nowhere but here: finding it in
    anything the assistant saw proves the label leaked.
    """

    root_cause: str
    canary: str


@dataclass(frozen=True)
class GoldenScenario:
    """One injected fault: an id, its split, what it looks like, and what it is."""

    scenario_id: str
    split: str
    telemetry: Telemetry
    truth: GroundTruth = field(repr=False)


def _canary(scenario_id: str) -> str:
    return "gt-" + hashlib.sha256(f"passk-ground-truth:{scenario_id}".encode()).hexdigest()[:12]


def _inject(fault: str, variant: dict[str, Any]) -> Telemetry:
    """Telemetry of a fault. Each fault moves its own signals; the rest look normal."""
    channel = variant["channel"]
    base: dict[str, Any] = {"error_rate": 0.004, "channel": channel,
                            "channel_timeout_rate": 0.002, "stuck_state": variant["state"],
                            "stuck_orders": 3, "config_releases": (), "promo_changes": ()}
    if fault == "payment-channel-timeout":
        base.update(error_rate=variant["magnitude"], channel_timeout_rate=variant["magnitude"] * 2)
    elif fault == "state-machine-stuck":
        base.update(error_rate=variant["magnitude"] / 2,
                    stuck_orders=int(4000 * variant["magnitude"]))
    elif fault == "config-release-with-promotion":
        base.update(error_rate=variant["magnitude"],
                    config_releases=(f"{variant['at']} release payment-routing v{variant['v']}",),
                    promo_changes=(f"{variant['at']} promotion {variant['promo']} enabled",))
    elif fault != "healthy":
        raise ValueError(f"unknown fault {fault!r}; expected one of {ROOT_CAUSES}")
    return Telemetry(**base)


# Two disjoint sets of variants: different channels, states, magnitudes and times.
_VARIANTS = {
    "dev": [
        {"channel": "card", "state": "PENDING_CAPTURE", "magnitude": 0.08, "at": "14:02",
         "v": "41", "promo": "SPRING10"},
        {"channel": "wallet", "state": "AUTHORIZED", "magnitude": 0.15, "at": "09:30",
         "v": "42", "promo": "FLASH5"},
    ],
    "hidden": [
        {"channel": "bank-transfer", "state": "REFUND_PENDING", "magnitude": 0.11, "at": "21:47",
         "v": "57", "promo": "NIGHT20"},
        {"channel": "qr-pay", "state": "SETTLING", "magnitude": 0.06, "at": "03:15",
         "v": "58", "promo": "MEMBER8"},
        {"channel": "card-3ds", "state": "CAPTURE_RETRY", "magnitude": 0.19, "at": "12:00",
         "v": "59", "promo": "NOON15"},
    ],
}


def catalogue() -> tuple[GoldenScenario, ...]:
    """Every golden scenario: each fault (and the healthy control) in every variant.

    Examples
    --------
    >>> scenarios = catalogue()
    >>> len(scenarios), sorted({s.split for s in scenarios})
    (20, ['dev', 'hidden'])
    """
    scenarios = []
    for split, variants in _VARIANTS.items():
        for v, variant in enumerate(variants):
            for fault in ROOT_CAUSES:
                # an opaque id: a name like "dev-healthy-0" would hand the agent its label
                sid = f"{split}-" + hashlib.sha256(f"{split}/{fault}/{v}".encode()).hexdigest()[:6]
                scenarios.append(GoldenScenario(sid, split, _inject(fault, variant),
                                                GroundTruth(fault, _canary(sid))))
    return tuple(sorted(scenarios, key=lambda s: s.scenario_id))


def _split(split: str) -> list[GoldenScenario]:
    if split not in _VARIANTS:
        raise ValueError(f"split ({split!r}) must be one of {sorted(_VARIANTS)}")
    return [s for s in catalogue() if s.split == split]


def split_tasks(split: str) -> list[Task]:
    """The tasks of a split as the assistant sees them: an instruction and a scenario id."""
    return [Task(s.scenario_id, "Payment success rate alert. Find the root cause and submit it.",
                 risk="high-risk-write", params={"scenario_id": s.scenario_id})
            for s in _split(split)]


def environments(split: str) -> dict[str, Telemetry]:
    """The environment side of a split: telemetry by scenario id, no labels."""
    return {s.scenario_id: s.telemetry for s in _split(split)}


@dataclass(frozen=True)
class GroundTruthGrader:
    """Holds the labels of a split and grades diagnoses against them."""

    split: str
    _truth: Mapping[str, GroundTruth] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_truth", {s.scenario_id: s.truth for s in _split(self.split)})

    def grade(self, task_id: str, final_state: Mapping[str, Any] | None) -> bool:
        """True when the run submitted the scenario's root cause."""
        if task_id not in self._truth:
            raise KeyError(f"no ground truth for {task_id!r} in split {self.split!r}")
        if not final_state:
            return False
        return final_state.get("root_cause") == self._truth[task_id].root_cause

    def canaries(self) -> tuple[str, ...]:
        """The markers a leak check looks for."""
        return tuple(t.canary for t in self._truth.values())


@dataclass(frozen=True)
class Budget:
    """The harness's limits on one run; ``None`` means unlimited."""

    max_steps: int | None = None
    max_time_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError(f"max_steps ({self.max_steps}) must be at least 1")
        if self.max_time_seconds is not None and not self.max_time_seconds > 0:
            raise ValueError(f"max_time_seconds ({self.max_time_seconds}) must be positive")


class _BudgetExhausted(Exception):
    pass


class EvidenceTools:
    """The assistant's tools: each call is one step and costs simulated seconds.

    Built from :class:`Telemetry` only. The harness's budget is enforced here,
    outside the policy: a step that would run past it ends the run.
    """

    def __init__(self, telemetry: Telemetry, budget: Budget, rng: np.random.Generator,
                 seconds_per_step: float) -> None:
        self._t, self._budget, self._rng = telemetry, budget, rng
        self._seconds_per_step = seconds_per_step
        self.trajectory: list[ToolCall] = []
        self.seconds = 0.0

    def _step(self, tool: str, observation: str, argument: str = "") -> str:
        cost = float(self._rng.lognormal(math.log(self._seconds_per_step), 0.35))
        steps = len(self.trajectory) + 1
        if (self._budget.max_steps is not None and steps > self._budget.max_steps) or (
                self._budget.max_time_seconds is not None
                and self.seconds + cost > self._budget.max_time_seconds):
            raise _BudgetExhausted(f"budget exhausted after {len(self.trajectory)} steps, "
                                   f"{self.seconds:.1f} s")
        self.seconds += cost
        self.trajectory.append(ToolCall(tool, argument, observation))
        return observation

    def think(self) -> None:
        """A step of reasoning: it costs a step and observes nothing."""
        self._step("think", "")

    def query_metrics(self) -> float:
        """The service's error rate (one step)."""
        self._step("query_metrics", f"error_rate={self._t.error_rate:.3f}")
        return self._t.error_rate

    def check_channel_status(self) -> float:
        """The payment channel's timeout rate (one step)."""
        self._step("check_channel_status",
                   f"{self._t.channel} timeouts={self._t.channel_timeout_rate:.3f}")
        return self._t.channel_timeout_rate

    def inspect_order_states(self) -> int:
        """How many orders are stuck, and in which state (one step)."""
        self._step("inspect_order_states",
                   f"{self._t.stuck_orders} orders in {self._t.stuck_state}")
        return self._t.stuck_orders

    def read_config_log(self) -> tuple[str, ...]:
        """The recent configuration releases (one step)."""
        self._step("read_config_log", "; ".join(self._t.config_releases) or "no releases")
        return self._t.config_releases

    def read_promo_log(self) -> tuple[str, ...]:
        """The recent promotion changes (one step)."""
        self._step("read_promo_log", "; ".join(self._t.promo_changes) or "no changes")
        return self._t.promo_changes

    def submit_diagnosis(self, root_cause: str) -> None:
        """Submit the root cause the assistant settled on (one step)."""
        self._step("submit_diagnosis", "accepted", argument=root_cause)


def _hypothesis(evidence: Mapping[str, Any]) -> str | None:
    """What the evidence read so far points to, if it points to one thing."""
    if evidence.get("check_channel_status", 0.0) > 0.02:
        return "payment-channel-timeout"
    if evidence.get("inspect_order_states", 0) > 100:
        return "state-machine-stuck"
    if evidence.get("read_config_log"):
        both = bool(evidence.get("read_promo_log"))
        return "config-release-with-promotion" if both else "config-release"
    return None


def _diagnose(instruction: str, tools: EvidenceTools, temperature: float,
              rng: np.random.Generator, top_p: float) -> str:
    """The diagnosing assistant. It sees the instruction and the tools, nothing else.

    It works through the evidence sources in order, thinking a few steps over
    each. Once the evidence points to one cause it may submit early: it
    samples between "keep checking" (score 2.5) and "submit now" (score 1.0)
    at its temperature, within the top-p nucleus, with the same decoding as
    the on-call assistant (:func:`passk.flaky_adapter.sample_action`). Early
    submissions are sometimes right for the wrong reason, sometimes plainly wrong.
    """
    evidence: dict[str, Any] = {}
    for source in EVIDENCE_TOOLS:
        for _ in range(1 + int(rng.poisson(2.0))):
            tools.think()
        evidence[source] = getattr(tools, source)()
        guess = _hypothesis(evidence)
        if guess is not None and source != EVIDENCE_TOOLS[-1]:
            choice = sample_action({"continue": 2.5, "submit": 1.0}, temperature, top_p, rng)
            if choice == "submit":
                return guess
    return _hypothesis(evidence) or "healthy"


@dataclass(frozen=True)
class DiagnosisSimulator:
    """The diagnosing on-call assistant in a fault-injected environment.

    It is built from telemetry alone and grades nothing: its results carry
    ``success=False`` until a :class:`GradedAdapter` grades them.

    Parameters
    ----------
    environments : Mapping[str, Telemetry]
        Telemetry by scenario id (see :func:`environments`).
    budget : Budget
        The harness's step and time limits.
    temperature : float, default 0.7
    top_p : float, default 0.95
    seconds_per_step : float, default 5.5
        Median simulated seconds one step takes (a model call plus a tool call).
    """

    environments: Mapping[str, Telemetry]
    budget: Budget = Budget()
    temperature: float = 0.7
    top_p: float = 0.95
    seconds_per_step: float = 5.5

    def protocol(self) -> dict[str, Any]:
        """The settings that define this measurement, for a protocol fingerprint."""
        return {"budget_max_steps": self.budget.max_steps,
                "budget_max_time_seconds": self.budget.max_time_seconds,
                "temperature": self.temperature, "top_p": self.top_p,
                "seconds_per_step": self.seconds_per_step,
                "scenarios": sorted(self.environments)}

    def run(self, task: Task, *, seed: int) -> RunResult:
        """Diagnose ``task``'s scenario once, with the random stream of ``seed``."""
        scenario_id = task.params.get("scenario_id", task.task_id)
        if scenario_id not in self.environments:
            raise KeyError(f"no environment for scenario {scenario_id!r}")
        timing, sampling = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
        tools = EvidenceTools(self.environments[scenario_id], self.budget, timing,
                              self.seconds_per_step)
        try:
            cause = _diagnose(task.instruction, tools, self.temperature, sampling, self.top_p)
            tools.submit_diagnosis(cause)
            final_state: dict[str, Any] = {"root_cause": cause}
            error = None
        except _BudgetExhausted as exc:
            final_state, error = {"root_cause": None, "truncated": True}, str(exc)
        return RunResult(task.task_id, 0, False, final_state=final_state,
                         trajectory=tuple(tools.trajectory), seconds=tools.seconds, error=error)


@dataclass(frozen=True)
class LeakyDiagnosisSimulator:
    """A deliberately broken harness: an 'incident notes' tool returns the label.

    It exists so that tests and the book can show :func:`leak_check` catching
    a leak. Never use it to measure anything.
    """

    inner: DiagnosisSimulator
    notes: Mapping[str, GroundTruth]

    def run(self, task: Task, *, seed: int) -> RunResult:
        """A run that reads the leaked incident notes and copies their answer."""
        truth = self.notes[task.params.get("scenario_id", task.task_id)]
        leak = ToolCall("read_incident_notes", "", f"root cause: {truth.root_cause} "
                        f"[{truth.canary}]")
        # the leaky assistant reads the notes and copies the answer
        return RunResult(task.task_id, 0, False, final_state={"root_cause": truth.root_cause},
                         trajectory=(leak, ToolCall("submit_diagnosis", truth.root_cause,
                                                    "accepted")), seconds=1.0)


@dataclass(frozen=True)
class GradedAdapter:
    """Wrap an adapter that does not know the answers, and grade its runs from outside."""

    adapter: HarnessAdapter
    grader: GroundTruthGrader

    def run(self, task: Task, *, seed: int) -> RunResult:
        """The wrapped adapter's run, with ``success`` set by the grader."""
        result = self.adapter.run(task, seed=seed)
        return replace(result, success=self.grader.grade(task.task_id, result.final_state))


def leak_check(task: Task, result: RunResult, canaries: Sequence[str]) -> tuple[str, ...]:
    """Where any ground-truth canary appears in what the assistant saw.

    Scans the instruction, the task's parameters, and every tool call's
    argument and observation. Returns one finding per hit; empty means clean.

    Examples
    --------
    >>> t = Task("x", "find the cause")
    >>> r = RunResult("x", 0, True, trajectory=(ToolCall("notes", "", "cause [gt-abc]"),))
    >>> leak_check(t, r, ["gt-abc"])
    ('step 1 (notes): ground-truth marker gt-abc',)
    """
    seen = [("instruction", task.instruction), ("task params", repr(dict(task.params)))]
    seen += [(f"step {i + 1} ({c.tool})", f"{c.argument} {c.observation}")
             for i, c in enumerate(result.trajectory)]
    return tuple(f"{where}: ground-truth marker {marker}"
                 for where, text in seen for marker in canaries if marker in text)


@dataclass(frozen=True)
class LeakReport:
    """GT leakage as its own metric: the share of runs that saw a ground-truth marker."""

    runs: int
    leaked_runs: int
    findings: tuple[str, ...]

    @property
    def leak_rate(self) -> float:
        """The share of runs that saw a marker (NaN with no runs)."""
        return self.leaked_runs / self.runs if self.runs else math.nan


def leak_report(pairs: Sequence[tuple[Task, RunResult]], canaries: Sequence[str]) -> LeakReport:
    """Run :func:`leak_check` over (task, run) pairs and count the runs that leaked.

    Examples
    --------
    >>> t = Task("x", "find the cause")
    >>> clean = RunResult("x", 0, True)
    >>> dirty = RunResult("x", 1, True, trajectory=(ToolCall("notes", "", "[gt-abc]"),))
    >>> leak_report([(t, clean), (t, dirty)], ["gt-abc"]).leak_rate
    0.5
    """
    findings: list[str] = []
    leaked = 0
    for task, result in pairs:
        found = leak_check(task, result, canaries)
        leaked += bool(found)
        findings += [f"{task.task_id} run {result.run_index}: {f}" for f in found]
    return LeakReport(len(pairs), leaked, tuple(findings))


def measure(runs: Mapping[str, RepeatRun] | Iterable[RepeatRun],
            canaries: Sequence[str]) -> dict[str, float]:
    """The trust gate's two figures for graded runs: discovery rate and ``no_leak``.

    Parameters
    ----------
    runs : Mapping[str, RepeatRun] or iterable of RepeatRun
        Each task's repeats (what :func:`passk.repeats.repeat_run` returns),
        graded from outside, e.g. by :class:`GradedAdapter`; a mapping (task id
        to repeats) is read by its values.
    canaries : sequence of str
        The ground-truth markers to look for, :meth:`GroundTruthGrader.canaries`.

    Returns
    -------
    dict
        ``discovery_rate`` and ``no_leak``, ready for
        :class:`passk.gate.honest.Measurement` and :func:`passk.gate.honest.honest_gate`.

    Raises
    ------
    ValueError
        When ``runs`` hold no counted run (nothing to measure).

    Notes
    -----
    With :math:`N` counted runs (not infrastructure errors or cached repeats),
    :math:`s` of them graded a success, and :math:`L` of all :math:`M` runs
    leaking a canary (:func:`leak_report`, which scans every run: a leak is a
    leak, however the run ended),

    .. math:: \\text{discovery\\_rate} = s / N, \\qquad
              \\text{no\\_leak} = 1 - L / M .

    Leakage is reported as a metric of its own, so a bar of 1 on ``no_leak``
    refuses a measurement in which a single run saw the answer.

    Examples
    --------
    >>> from passk.repeats import RepeatRun
    >>> t = Task("x", "find the cause")
    >>> clean = RunResult("x", 0, True)
    >>> dirty = RunResult("x", 1, True, trajectory=(ToolCall("notes", "", "[gt-abc]"),))
    >>> wrong = RunResult("x", 2, False)
    >>> measure([RepeatRun(t, (clean, dirty, wrong, clean))], ["gt-abc"])
    {'discovery_rate': 0.75, 'no_leak': 0.75}
    """
    repeats = list(runs.values()) if isinstance(runs, Mapping) else list(runs)
    counted = [r.success for rr in repeats for r in rr.results if r.counted]
    if not counted:
        raise ValueError(f"runs ({plural(len(repeats), 'task')}) hold no counted run: nothing "
                         "to measure")
    leaks = leak_report([(rr.task, r) for rr in repeats for r in rr.results], canaries)
    return {"discovery_rate": sum(counted) / len(counted), "no_leak": 1.0 - leaks.leak_rate}


def bernoulli_runs(rates: Sequence[float] | np.ndarray, runs: int, *,
                   rng: int | np.random.Generator | None = None) -> np.ndarray:
    r"""Outcomes of ``runs`` independent runs of each task, task ``t`` passing with ``rates[t]``.

    The model of a study, not of an agent: run :math:`j` of task :math:`t` is
    :math:`X_{tj} \sim \mathrm{Bernoulli}(p_t)`, independently of every other run,
    so :math:`c_t = \sum_j X_{tj} \sim \mathrm{Binomial}(n, p_t)`. Its scope is a
    rule studied over populations of rates, in the order the runs happen
    (curtailment replayed epoch by epoch, a gate's operating characteristic); it
    says nothing about why a run fails, and an agent's failures should come from a
    mechanism instead (:class:`passk.flaky_adapter.OnCallSimulator`).

    Parameters
    ----------
    rates : array_like of float, shape (tasks,)
        Each task's single-run success rate, in [0, 1].
    runs : int
        Runs per task (at least 1).
    rng : int, numpy.random.Generator or None
        The randomness (see :func:`numpy.random.default_rng`).

    Returns
    -------
    numpy.ndarray of bool, shape (tasks, runs)
        ``out[t, j]``: run ``j`` of task ``t`` passed.

    Examples
    --------
    >>> out = bernoulli_runs([1.0, 0.0, 0.5], 4, rng=0)
    >>> out.shape, out[0].all(), out[1].any()
    ((3, 4), np.True_, np.False_)
    >>> round(float(bernoulli_runs([0.9], 20_000, rng=1).mean()), 2)
    0.9
    """
    p = np.asarray(rates, dtype=float)
    if p.ndim != 1 or p.size == 0 or not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"rates ({rates!r}) must be a non-empty 1-d array of values in [0, 1]")
    if isinstance(runs, bool) or not isinstance(runs, (int, np.integer)) or runs < 1:
        raise ValueError(f"runs ({runs!r}) must be a whole number >= 1")
    gen = np.random.default_rng(rng)
    return gen.random((p.size, int(runs))) < p[:, None]
