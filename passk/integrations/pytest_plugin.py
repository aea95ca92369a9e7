"""passk for pytest: repeat marked tests, report pass^k and flakiness, gate the session.

Installing ``passk`` registers this module as a pytest plugin (the ``pytest11``
entry point). A test marked ``@pytest.mark.passk(runs=12, k=5)`` runs twelve
times; the session then prints the chapter's table for the marked tests (runs,
passed, pass@k, pass^k, its interval, flakiness, class) and the dual gate's
verdict with every reason, and a blocked gate fails the session with exit
status :data:`EXIT_GATE_BLOCKED`.

How it repeats
--------------
Like pytest-repeat, each repetition is an item of its own, made by
``pytest_generate_tests`` (``test_x[passk3of12]``): a fresh call with fresh
function-scoped fixtures, one JUnit testcase per repetition, spread over
pytest-xdist workers like any other items, selectable with ``-k``/``-m``.
Repetition *i* of a test gets the fixture ``passk_seed`` =
:func:`passk.repeats.run_seed` ``(--passk-seed, task_id, i)``, where the
task id is the test's node id without the repetition, so the same suite seed
gives the same seeds on any machine, in any order, on any worker.

Like pytest-rerunfailures, a repetition that raises
:class:`passk.InfrastructureError` (in the test or a fixture) is run again by
re-entering pytest's own test protocol, with fresh fixtures and the seed
``passk run`` gives a retry, up to ``--passk-max-retries`` times; it is never
counted as a failure, and one that keeps failing is reported as skipped and
left out of the counts, as ``passk run`` does.

Each report carries a small ``passk`` dict (task id, run index, planned runs,
k, risk, seed, retries, and whether curtailment or early stopping skipped it),
which pytest-xdist ships to the controller with the report. Every process
records the reports it sees into one :class:`passk.run.schedule.Schedule`, the
scheduler ``passk run`` and Inspect's ``Curtailment`` drive too: the process
that runs a repetition asks its schedule whether the test is settled
(``--passk-policy curtailed``) or the suite has stopped (``--passk-stop-early``),
and the controller (or the single process) hands its schedule's ``Results`` to
the one judge, :func:`passk.gate.judge.judge`, so the log and the verdict do
not depend on how the repetitions were spread.

The module imports nothing but pytest when it loads; passk's estimators (numpy,
scipy) are imported only once a session has marked tests. Unmarked tests and
sessions without marked tests run exactly as without the plugin.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.runner import runtestprotocol  # re-entered for infrastructure retries

from passk.cli.options import open_probability, positive_int, probability, whole
from passk.criteria import DEFAULT_CRITERIA, GATE_MODES, MAX_K, GateCriteria
from passk.errors import BadInput, PasskError
from passk.render.tables import cell, one_line
from passk.render.words import plural

if TYPE_CHECKING:
    from passk.gate.bind import InForce
    from passk.stability import GateResult, SuiteReport

__all__ = ["EXIT_GATE_BLOCKED", "MARKER", "PasskSession", "task_id_of"]

#: The session's exit status when the passk gate blocked and nothing else failed.
#: pytest uses 0-6 and pytest-rerunfailures' ``--fail-on-flaky`` 7.
EXIT_GATE_BLOCKED = 10

#: The marker's name: ``@pytest.mark.passk(runs=N, k=K, risk=LABEL)``.
MARKER = "passk"

_META = pytest.StashKey[dict[str, Any]]()      # a repetition's task, index, runs, k, risk
_ATTEMPT = pytest.StashKey[int]()               # 0, then 1, 2, ... for infrastructure retries
_INFRA = pytest.StashKey[bool]()                # this attempt raised InfrastructureError
_SEEN_MARKED = pytest.StashKey[bool]()          # the session generated marked repetitions

_DEFAULTS = {"passk_k": DEFAULT_CRITERIA.k, "passk_seed": 0,
             "passk_min_overall": DEFAULT_CRITERIA.min_overall_pass_hat_k,
             "passk_max_flakiness": DEFAULT_CRITERIA.max_flakiness,
             "passk_on": DEFAULT_CRITERIA.on, "passk_policy": "fixed",
             "passk_max_retries": 3, "passk_stop_early": 0,
             "passk_confidence": DEFAULT_CRITERIA.confidence, "passk_min_runs": 0,
             "passk_mode": DEFAULT_CRITERIA.mode}


# --------------------------------------------------------------------------
# options, marker, fixtures
# --------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("passk", "passk: repeat marked tests, pass^k, flakiness, dual gate")
    group.addoption("--passk-runs", type=positive_int, default=None, metavar="N",
                    help="runs of a marked test whose marker gives none (default: by its "
                    "risk, 12 for high-risk-write, 5 otherwise)")
    group.addoption("--passk-k", type=positive_int, default=None, metavar="K",
                    help="k of pass^k for a marked test whose marker gives none (default 5)")
    group.addoption("--passk-seed", type=whole, default=None, metavar="S",
                    help="suite seed; repetition i of a test gets passk_seed = "
                    "run_seed(S, test id, i) (default 0)")
    group.addoption("--passk-min-overall", type=probability, default=None, metavar="BAR",
                    help="the gate's bar for the mean pass^k over marked tests (default 0.7)")
    group.addoption("--passk-max-flakiness", type=probability, default=None, metavar="CAP",
                    help="the gate's cap on any marked test's flakiness (default 0.2)")
    group.addoption("--passk-on", choices=("estimate", "lower-bound"), default=None,
                    help="gate on each test's pass^k estimate (default) or its exact 95%% "
                    "lower bound")
    group.addoption("--passk-confidence", type=open_probability, default=None, metavar="C",
                    help="the lower bounds' confidence (default: the policy's, else 0.95)")
    group.addoption("--passk-min-runs", type=whole, default=None, metavar="N",
                    help="a test with fewer counted runs fails the gate (default: the "
                    "policy's, else 0)")
    group.addoption("--passk-mode", choices=GATE_MODES, default=None,
                    help="how the gate decides: chapter (default), proved or proved-warn "
                    "(see passk gate --mode)")
    group.addoption("--passk-policy", choices=("fixed", "curtailed"), default=None,
                    help="curtailed: skip a test's remaining repetitions once the gate's "
                    "verdict on it is settled (default fixed)")
    group.addoption("--passk-stop-early", type=positive_int, default=None, metavar="LOOKS",
                    help="stop the whole session early at LOOKS planned looks (at least 2): "
                    "repetitions run stage by stage, and after each stage the suite stops "
                    "once passk's proved interval on mean pass^k (at level 1 - alpha/LOOKS) "
                    "clears the bar or lies below it; a wrong stop with a pass has "
                    "probability at most alpha/2. Not with --passk-policy curtailed")
    group.addoption("--passk-max-retries", type=whole, default=None, metavar="R",
                    help="retries of a repetition that raised passk.InfrastructureError "
                    "(default 3)")
    group.addoption("--passk-log", default=None, metavar="FILE",
                    help="write the runs as JSON Lines with the protocol header, for passk "
                    "report/gate/diff/plan")


def _option(config: pytest.Config, name: str) -> Any:
    value = config.getoption(name)
    return _DEFAULTS.get(name) if value is None else value


def _policy_in_force(config: pytest.Config, opt: dict[str, Any]) -> InForce:
    """The criteria in force (:func:`passk.gate.bind.bind`, the one binding): the options
    over the repository's policy (found from the rootdir as ``passk gate`` finds it) over
    the defaults. An option that would loosen the policy is a usage error naming the
    policy's value; ``opt`` is updated with the values in force."""
    from passk.gate.bind import CRITERIA, asked_from, bind
    from passk.gate.policy import policy_in_force

    given = {c.plugin.lstrip("-").replace("-", "_"): config.getoption(
        c.plugin.lstrip("-").replace("-", "_")) for c in CRITERIA if c.plugin}
    try:
        policy = policy_in_force(cwd=config.rootpath)
        f = bind(asked_from(given, "plugin"), policy, front="plugin")
    except PasskError as exc:
        raise pytest.UsageError(f"passk: {exc}") from None
    c = f.criteria
    opt.update(passk_k=f.k if f.k is not None else _DEFAULTS["passk_k"],
               passk_min_overall=c.min_overall_pass_hat_k, passk_max_flakiness=c.max_flakiness,
               passk_on=c.on, passk_confidence=c.confidence, passk_min_runs=c.min_runs,
               passk_mode=c.mode)
    return f


def _gate_requested(config: pytest.Config) -> bool:
    """Whether the command line asked for the gate (then an empty selection fails it)."""
    return any(config.getoption(name) is not None for name in (
        "passk_log", "passk_min_overall", "passk_max_flakiness", "passk_on"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(runs=None, k=None, risk='read-only'): run the test `runs` times (fresh "
        "fixtures each time, a passk_seed per run), report its pass^k and flakiness, and "
        "gate the session on them (passk)")
    session = PasskSession(config)
    config.pluginmanager.register(session, "passk-session")


@pytest.fixture
def passk_run(request: pytest.FixtureRequest) -> int:
    """The repetition's index, 0 to runs - 1 (0 for an unmarked test)."""
    return int(getattr(request, "param", 0))


@pytest.fixture
def passk_seed(request: pytest.FixtureRequest, passk_run: int) -> int:
    """This repetition's seed: ``run_seed(--passk-seed, task id, run index)``.

    A retry after an infrastructure error gets the seed ``passk run`` gives a
    retry. An unmarked test gets the seed of run 0 of its node id.
    """
    node = request.node
    meta = node.stash.get(_META, None)
    if meta is None:
        from passk.repeats import run_seed

        return run_seed(_option(request.config, "passk_seed"), node.nodeid, 0)
    from passk.repeats import attempt_seed  # attempt 0: run_seed(suite seed, task id, run index)

    return attempt_seed(meta["suite_seed"], meta["task"], meta["run"],
                         node.stash.get(_ATTEMPT, 0))


def _marker_settings(config: pytest.Config, mark: pytest.Mark, where: str) -> tuple[int, int, str]:
    """``(runs, k, risk)`` of a marked test, from its marker and the options."""
    kwargs = dict(mark.kwargs)
    if len(mark.args) > 1:
        raise BadInput(f"@pytest.mark.passk on {where}: takes at most one positional argument "
                         f"(runs), got {mark.args!r}")
    if mark.args:
        if "runs" in kwargs:
            raise BadInput(f"@pytest.mark.passk on {where}: runs given twice")
        kwargs["runs"] = mark.args[0]
    unknown = set(kwargs) - {"runs", "k", "risk"}
    if unknown:
        raise BadInput(f"@pytest.mark.passk on {where}: unknown "
                       f"{plural(len(unknown), 'argument', count=False)} "
                         f"{sorted(unknown)}; it takes runs, k and risk")
    risk = kwargs.get("risk", "read-only")
    if not isinstance(risk, str) or not risk:
        raise BadInput(f"@pytest.mark.passk on {where}: risk ({risk!r}) must be a label such "
                         "as 'read-only' or 'high-risk-write'")
    session = config.pluginmanager.get_plugin("passk-session")
    policy = getattr(session, "policy", None)
    runs = kwargs.get("runs")
    if runs is None:
        runs = config.getoption("passk_runs")
    if runs is None and policy is not None:  # the policy's runs for the test, by its tier
        repetition = re.search(r"passk\d+of\d+", where)
        runs = policy.tasks.runs_for_task(task_id_of(where, repetition.group(0))
                                          if repetition else where)
    if runs is None:
        from passk.adapter import Task
        from passk.stability import RepeatPolicy

        runs = RepeatPolicy().runs_for(Task(where, risk=risk))
    # the k in force (--passk-k, else the policy's, else the default) where the marker has none
    in_force = getattr(session, "opt", {}).get("passk_k") or _DEFAULTS["passk_k"]
    k = kwargs.get("k", in_force)
    for name, value in (("runs", runs), ("k", k)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise BadInput(f"@pytest.mark.passk on {where}: {name} ({value!r}) must be a whole "
                             "number >= 1")
        if value > MAX_K:  # a count of runs (numpy counts in int64)
            raise ValueError(f"@pytest.mark.passk on {where}: {name} ({value!r}) is more than "
                             f"{MAX_K:,}: give a number of runs")
    if policy is not None:  # the marker's k and runs are bound by the policy like any option
        from passk.gate.bind import bind

        try:  # spelled as the marker's keywords (an option looser than the policy was refused)
            bind({"k": k, "runs": {risk: runs}}, policy, front="python")
        except PasskError as exc:
            given = "the marker" if "runs" in kwargs else "--passk-runs" if config.getoption(
                "passk_runs") is not None else "the policy"
            # a usage error once collection ends (raised here, pytest would make it a
            # collection error with a traceback)
            line = (f"passk: @pytest.mark.passk on {where} (k={k}, runs={runs} from {given}, "
                    f"risk={risk!r}): {exc}")
            if session is None:
                raise pytest.UsageError(line) from None
            session.refused.append(line)
    return runs, k, risk


def _run_id(index: int, runs: int) -> str:
    return f"passk{index + 1}of{runs}"


@pytest.hookimpl(trylast=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    mark = metafunc.definition.get_closest_marker(MARKER)
    if mark is None:
        return
    runs, _, _ = _marker_settings(metafunc.config, mark, metafunc.definition.nodeid)
    metafunc.config.stash[_SEEN_MARKED] = True
    if "passk_run" not in metafunc.fixturenames:
        metafunc.fixturenames.append("passk_run")
    metafunc.parametrize("passk_run", range(runs), indirect=True,
                         ids=[_run_id(i, runs) for i in range(runs)])


def task_id_of(nodeid: str, run_id: str) -> str:
    """A repetition's node id without its repetition: the task id of the log and the seeds.

    Examples
    --------
    >>> task_id_of("t.py::test_x[passk3of12]", "passk3of12")
    't.py::test_x'
    >>> task_id_of("t.py::test_x[gpt-passk3of12]", "passk3of12")
    't.py::test_x[gpt]'
    """
    for old, new in ((f"[{run_id}]", ""), (f"-{run_id}]", "]"), (f"[{run_id}-", "["),
                     (f"-{run_id}-", "-")):
        if old in nodeid:
            head, _, tail = nodeid.rpartition(old)
            return head + new + tail
    return nodeid


# --------------------------------------------------------------------------
# the session: repetitions in, table, gate, log and exit status out
# --------------------------------------------------------------------------


@dataclass
class _Rep:
    """What the terminal, ``--lf`` and the log need of one repetition; its counts are the
    schedule's (:class:`passk.run.schedule.Schedule`)."""

    index: int
    nodeid: str
    node_key: Any
    retries: int = 0
    message: str = ""
    failed: bool = False
    passed_call: bool = False
    skipped: bool = False
    infrastructure_error: bool = False
    #: ``passed``, ``failed``, ``infrastructure`` (left out), ``skipped`` (by the test),
    #: ``settled`` (curtailed) or ``stopped`` (the suite stopped early); "" until torn down
    outcome: str = ""

    def ended(self) -> str:
        """The repetition's outcome from its reports (at teardown)."""
        if self.infrastructure_error:
            return "infrastructure"
        if self.failed:
            return "failed"
        if self.skipped or not self.passed_call:
            return "skipped"
        return "passed"


@dataclass(frozen=True)
class _Verdict:
    report: SuiteReport
    notes: tuple[str, ...]

    @property
    def gate(self) -> GateResult:
        """The judge's verdict (the report's ``gate``)."""
        gate = self.report.gate
        if gate is None:  # _verdict always judges
            raise BadInput("the session's report was not judged")
        return gate


class PasskSession:
    """The plugin's per-session hooks (registered as ``passk-session``).

    The counts, curtailment and early stopping are one :class:`passk.run.schedule.Schedule`:
    the process that runs the repetitions asks it whether a test is settled or the suite
    has stopped, and every process records the outcomes its reports carry into its own
    (under xdist a worker's holds its own runs, the controller's every run); the verdict
    is :func:`passk.gate.judge.judge` on the schedule's ``Results``.
    """

    def __init__(self, config: pytest.Config):
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.opt = {name: _option(config, name) for name in _DEFAULTS}
        #: The criteria in force (:class:`passk.gate.bind.InForce`).
        self.in_force = _policy_in_force(config, self.opt)
        self.policy = self.in_force.policy
        self.schedule: Any = None  # built at collection, or from the reports (xdist controller)
        self.reps: dict[str, dict[int, _Rep]] = {}
        self.first_failure: dict[str, _Rep] = {}
        self.marked_failures = 0  # failed reports of marked repetitions (pytest counted them)
        self.verdict: _Verdict | None = None
        self.exit_note = ""
        #: Markers the policy refuses, one line each: a usage error once collected.
        self.refused: list[str] = []

    def gate_settings(self) -> GateCriteria:
        """The gate the session decides with, and curtailment serves."""
        return dataclasses.replace(self.in_force.criteria, k=self.opt["passk_k"])

    def stopping(self) -> Any:
        from passk.run.schedule import Stopping

        try:
            return Stopping(curtailed=self.opt["passk_policy"] == "curtailed",
                            looks=self.opt["passk_stop_early"] or 0)
        except ValueError as exc:
            raise pytest.UsageError(f"passk: {exc}") from None

    def start_schedule(self, plan: Mapping[str, tuple[int, int, str]]) -> Any:
        """The schedule of the repetitions this process runs: task -> (runs, k, risk)."""
        from passk.run.schedule import Schedule

        gate = self.gate_settings()
        ks = {k for _, k, _ in plan.values()}
        if self.opt["passk_stop_early"] and len(ks) == 1:  # the looks' k: the tests' own
            gate = dataclasses.replace(gate, k=ks.pop())
        try:
            self.schedule = Schedule(
                {t: runs for t, (runs, _, _) in plan.items()}, gate,
                stopping=self.stopping(), ks={t: k for t, (_, k, _) in plan.items()},
                risks={t: r for t, (_, _, r) in plan.items()},
                max_retries=self.opt["passk_max_retries"])
        except ValueError as exc:
            raise pytest.UsageError(f"passk: {exc}") from None
        return self.schedule

    def _schedule(self) -> Any:
        if self.schedule is None:  # the xdist controller: it learns the tests from reports
            from passk.run.schedule import Schedule

            self.schedule = Schedule({}, self.gate_settings(),
                                     max_retries=self.opt["passk_max_retries"])
        return self.schedule

    # -- collection: what each repetition is -------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if self.refused:
            raise pytest.UsageError("\n".join(dict.fromkeys(self.refused)))
        if not config.stash.get(_SEEN_MARKED, False):
            return
        suite_seed = self.opt["passk_seed"]
        plan: dict[str, tuple[int, int, str]] = {}
        for item in items:
            callspec = getattr(item, "callspec", None)
            if callspec is None or "passk_run" not in callspec.params:
                continue
            mark = item.get_closest_marker(MARKER)
            if mark is None:
                continue
            runs, k, risk = _marker_settings(config, mark, item.nodeid)
            index = int(callspec.params["passk_run"])
            task = task_id_of(item.nodeid, _run_id(index, runs))
            plan[task] = (runs, k, risk)
            item.stash[_META] = {"task": task, "run": index, "runs": runs, "k": k,
                                 "risk": risk, "suite_seed": suite_seed}
        schedule = self.start_schedule(plan)
        if schedule.stopping.looks:  # stage by stage, so that each look has its runs
            def stage(item: pytest.Item) -> int:
                meta = item.stash.get(_META, None)
                if meta is None:
                    return 0
                targets = schedule.look_targets(meta["runs"])
                return next(j for j, m in enumerate(targets) if meta["run"] < m)

            items[:] = sorted(items, key=stage)  # stable: pytest's order within a stage

    # -- running a repetition: infrastructure retries, curtailment, early stop ---

    def skip_reason(self, meta: Mapping[str, Any]) -> tuple[str, str]:
        """``('settled' | 'stopped', why)`` when this repetition is not to run, else
        ``('', '')``: the schedule of this process decides (curtailment: the settle rule
        ``passk run --stopping curtailed`` uses; early stopping: the suite's look). Under
        xdist a worker has not seen the other workers' runs, which are then open, so a
        test settled on its view is settled on all the runs."""
        schedule = self._schedule()
        if meta["task"] in schedule.states and schedule.stopped_for(meta["task"]):
            return "stopped", f"passk: the suite {schedule.stop_note()}"
        if meta["task"] in schedule.states and schedule.settled(meta["task"]):
            s = schedule.states[meta["task"]]
            return "settled", (f"passk: curtailed, the gate's verdict on {meta['task']} is "
                               f"settled after {len(s.final)} of {plural(meta['runs'], 'run')} "
                               f"({s.successes} passed, {s.failures} failed)")
        return "", ""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None
                                ) -> bool | None:
        meta = item.stash.get(_META, None)
        if meta is None:
            return None  # not a passk repetition: pytest's own protocol
        kind, why = self.skip_reason(meta)
        if kind:
            item.add_marker(pytest.mark.skip(reason=why))
        max_retries = self.opt["passk_max_retries"]
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        attempt = 0
        while True:
            item.stash[_ATTEMPT] = attempt
            item.stash[_INFRA] = False
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
            infra = item.stash[_INFRA]
            session = item.session
            if not infra or attempt >= max_retries or session.shouldstop or session.shouldfail:
                break
            attempt += 1
        stopped = self.schedule.stopped if kind == "stopped" else None
        info = {"task": meta["task"], "run": meta["run"], "runs": meta["runs"], "k": meta["k"],
                "risk": meta["risk"], "retries": attempt, "settled": kind == "settled",
                "stopped": dataclasses.asdict(stopped) if stopped is not None else None,
                "infrastructure_error": infra}
        for report in reports:
            # what every process records; pytest-xdist ships it with the report
            report.passk = dict(info)  # type: ignore[attr-defined]
            if infra and report.failed:  # left out, as passk run leaves it: not a failure
                reason = (f"passk: infrastructure error after {attempt} retries, left out of "
                          f"the counts: {_crash_message(report)}")
                report.outcome = "skipped"
                report.longrepr = (str(item.path), item.location[1] or 0, reason)
            ihook.pytest_runtest_logreport(report=report)
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_exception_interact(self, node: pytest.Item | pytest.Collector,
                                  call: pytest.CallInfo[Any], report: Any) -> None:
        """Note an InfrastructureError (pytest calls this for every failed phase)."""
        if isinstance(node, pytest.Item) and _META in node.stash and call.excinfo is not None:
            from passk.adapter import InfrastructureError

            if call.excinfo.errisinstance(InfrastructureError):
                node.stash[_INFRA] = True

    # -- every process: record the reports into the schedule -----------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        info = getattr(report, "passk", None)
        if info is None:
            return
        task, run = info["task"], int(info["run"])
        schedule = self._schedule()
        if task not in schedule.states:
            schedule.add(task, int(info["runs"]), k=int(info["k"]), risk=str(info["risk"]))
        reps = self.reps.setdefault(task, {})
        rep = reps.get(run)
        if rep is None:
            rep = reps[run] = _Rep(run, report.nodeid, getattr(report, "id", report.nodeid))
        rep.retries = int(info.get("retries", 0))
        rep.infrastructure_error = rep.infrastructure_error or bool(
            info.get("infrastructure_error"))
        if report.when == "call" and report.passed:
            rep.passed_call = True
        if report.skipped:
            if hasattr(report, "wasxfail"):
                rep.failed = True  # an expected failure is a failed run
                rep.message = rep.message or f"xfail: {report.wasxfail}"
            else:
                rep.skipped = True
        if report.failed:
            rep.failed = True
            rep.message = rep.message or _crash_message(report)
            if not self.is_worker:
                self._shorten(report, task, rep, int(info["runs"]))
        if report.when == "teardown" and not rep.outcome:
            self._ended(task, rep, info)

    def _shorten(self, report: pytest.TestReport, task: str, rep: _Rep, runs: int) -> None:
        """Count a failed report; print the traceback once per test, for its first failed run."""
        self.marked_failures += not hasattr(report, "wasxfail")
        first = self.first_failure.setdefault(task, rep)
        if first is not rep:
            report.longrepr = (
                f"{_crash_message(report)}\n(passk: run {rep.index + 1} of {runs} of "
                f"{task} failed in {report.when}; the traceback is shown once per "
                f"test, for its first failed run: {first.nodeid})")

    def _ended(self, task: str, rep: _Rep, info: Mapping[str, Any]) -> None:
        """The repetition is over: its outcome into the schedule."""
        schedule = self._schedule()
        if info.get("settled"):
            rep.outcome = "settled"
            schedule.skip(task, rep.index, "settled")
            return
        if info.get("stopped"):
            rep.outcome = "stopped"
            schedule.skip(task, rep.index, "stopped", info["stopped"])
            return
        rep.outcome = rep.ended()
        for attempt in range(rep.retries):  # each retried attempt hit an infrastructure error
            schedule.record(task, rep.index, "infrastructure", attempt, replay=True)
        schedule.record(task, rep.index, rep.outcome, rep.retries, replay=True)

    # -- the verdict, the log, the exit status -----------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        config = self.config
        if self.is_worker or config.getoption("collectonly"):
            return
        if not self.reps and not _gate_requested(config):
            return
        self.verdict = self._verdict()
        gate = self.verdict.gate
        _mark_last_failed(self)
        _junit_properties(self, gate)
        log = config.getoption("passk_log")
        if log and not self.reps:
            self.exit_note = f"passk: no marked test ran, so no log was written to {log}"
        elif log:
            count = write_session_log(self, log)
            self.exit_note = f"passk: wrote {plural(count, 'run')} to {log}"
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return  # interrupted, internal or usage error, nothing collected: pytest's own
        others = session.testsfailed - self.marked_failures
        if others > 0:
            return  # unmarked tests failed: pytest's exit status 1 stands
        session.exitstatus = pytest.ExitCode.OK if gate.passed else EXIT_GATE_BLOCKED

    def _tasks(self) -> list[str]:
        """The tests that reported, in order of their ids."""
        return sorted(t for t in self._schedule().states if t in self.reps)

    def results(self) -> Any:
        """The session's counts as :class:`~passk.results.counts.Results`, for the judge.

        Counted runs are the repetitions that passed or failed; every attempt
        that hit an infrastructure error (retried or given up) is left out, as
        the session's log records it; a curtailed test is in ``settled_early``
        with its planned runs; an early stop rides on the verdict line.
        """
        return self._schedule().results(order=self._tasks(), excluded="attempts")

    def _verdict(self) -> _Verdict:
        from passk.gate.judge import judge_suite

        schedule = self._schedule()
        results = self.results()
        short = schedule.unfinished(results.task_ids)
        if self.policy is not None:  # the policy's task set and runs: what the session lacks
            from passk.gate.policy import apply_policy

            results = apply_policy(self.policy, results, "the pytest session",
                                   producer_checked=False)
        states = [schedule.states[t] for t in results.task_ids if t in schedule.states]
        ks = [schedule.states[t].k if t in schedule.states else self.opt["passk_k"]
              for t in results.task_ids]
        report = judge_suite(results, self.gate_settings(), k=ks or 5, ks=ks,
                             unfinished=short, policy_line=self.in_force.policy_line,
                             applied=self.in_force.overrides, protocol=None)
        # the session's k as its summary names it: the tests' one k, 0 when they differ
        report = dataclasses.replace(report, k=ks[0] if len(set(ks)) == 1 else
                                     0 if ks else self.opt["passk_k"])
        excluded = int(results.excluded.sum())
        notes = []
        if excluded:
            notes.append(plural(excluded, "attempt", verb=(
                "hit an infrastructure error and was left out of the counts",
                "hit an infrastructure error and were left out of the counts")))
        if results.settled_early:
            skipped = sum(s.not_made for s in states if s.task_id in results.settled_early)
            notes.append(f"curtailed: {plural(skipped, 'repetition')} not run once their test's "
                         "verdict was settled")
        if schedule.stopped is not None:
            notes.append(f"the suite {schedule.stop_note()}; "
                         f"{plural(sum(s.not_made for s in states), 'repetition')} not run")
        return _Verdict(report, tuple(notes))

    # -- the terminal -----------------------------------------------------

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.verdict is None:
            return
        tr = terminalreporter
        tr.write_sep("=", "passk: pass^k and flakiness of marked tests")
        for line in summary_lines(self):
            tr.write_line(line)


# --------------------------------------------------------------------------
# the edges: the log, --lf, --junitxml, the terminal
# --------------------------------------------------------------------------


def _mark_last_failed(session: PasskSession) -> None:
    """Let ``--lf`` rerun every repetition of a test with a failed one, not just those."""
    lf = session.config.pluginmanager.get_plugin("lfplugin")
    lastfailed = getattr(lf, "lastfailed", None)
    if not isinstance(lastfailed, dict):
        return
    for reps in session.reps.values():
        if any(r.failed for r in reps.values()):
            for r in reps.values():
                lastfailed[r.node_key] = True


def _junit_properties(session: PasskSession, gate: GateResult) -> None:
    """The verdict as testsuite properties of ``--junitxml`` (one testcase per run)."""
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest moved it
        return
    xml = session.config.stash.get(xml_key, None)
    if xml is None:
        return
    xml.add_global_property("passk_gate", "PASSED" if gate.passed else "BLOCKED")
    xml.add_global_property("passk_overall", cell(gate.overall))
    for reason in gate.reasons:
        xml.add_global_property("passk_reason", reason)


def session_runs(session: PasskSession) -> list[Any]:
    """The session's runs as :class:`passk.repeats.RepeatRun`, by test and run index.

    Each retried infrastructure error is a run flagged ``infrastructure_error``
    before the run's last attempt, as ``passk run`` logs them.
    """
    from passk.adapter import RunResult, Task
    from passk.repeats import RepeatRun, attempt_seed

    out = []
    suite_seed = session.opt["passk_seed"]
    for task_id in session._tasks():
        reps = session.reps[task_id]
        results = []
        for i in sorted(reps):
            r = reps[i]
            # each attempt's record carries the seed the passk_seed fixture gave it
            results += [RunResult(task_id, i, False, infrastructure_error=True,
                                  error="InfrastructureError (retried)",
                                  seed=attempt_seed(suite_seed, task_id, i, a))
                        for a in range(r.retries)]
            if r.outcome in ("passed", "failed", "infrastructure"):
                results.append(RunResult(task_id, i, r.outcome == "passed",
                                         error=r.message or None,
                                         seed=attempt_seed(suite_seed, task_id, i,
                                                           r.retries),
                                         infrastructure_error=r.outcome == "infrastructure"))
        out.append(RepeatRun(Task(task_id, risk=session.schedule.states[task_id].risk),
                             tuple(results)))
    return out


def session_protocol(session: PasskSession) -> Any:
    """The measurement's protocol: the tests, their runs, k and risk, and the gate."""
    from passk.results.protocol import Protocol

    states = [session._schedule().states[t] for t in session._tasks()]
    ks = {s.k for s in states}
    settings = {
        "runner": "pytest (passk.integrations.pytest_plugin)",
        "k": ks.pop() if len(ks) == 1 else None,  # the k passk report and gate then use
        "tests": {s.task_id: {"runs": s.n, "k": s.k, "risk": s.risk} for s in states},
        "stopping": session.opt["passk_policy"],
        "max_retries": session.opt["passk_max_retries"],
        "min_overall_pass_hat_k": session.opt["passk_min_overall"],
        "max_flakiness": session.opt["passk_max_flakiness"],
        "gate_on": session.opt["passk_on"],
        "confidence": DEFAULT_CRITERIA.confidence,
    }
    if session.opt["passk_stop_early"]:
        settings["stop_early"] = {"looks": session.opt["passk_stop_early"],
                                  "rule": "passk.stats.sequential.sequential_decision"}
    return Protocol(settings)


def write_session_log(session: PasskSession, path: str | os.PathLike[str]) -> int:
    """Write the runs as JSON Lines behind the protocol header; return the run count."""
    from passk.results.read import write_runs

    return write_runs(path, session_runs(session), protocol=session_protocol(session),
                      seed=session.opt["passk_seed"])


def summary_lines(session: PasskSession) -> list[str]:
    """The passk section of the terminal summary, line by line."""
    assert session.verdict is not None  # noqa: S101  # called only once a verdict is made
    from passk.gate.policy import NO_POLICY
    from passk.repeats import run_seed
    from passk.stability import format_table

    report, gate = session.verdict.report, session.verdict.gate
    tasks = session._tasks()
    states = session._schedule().states
    total = sum(len(session.reps[t]) for t in tasks)
    bar, cap = session.opt["passk_min_overall"], session.opt["passk_max_flakiness"]
    lines = [(f"{plural(len(tasks), 'marked test')}, {plural(total, 'repetition')}; suite seed "
              f"{session.opt['passk_seed']}; bar {bar:.3f} on the "
              f"{session.opt['passk_on']}, flakiness cap {cap:.3f}"),
             f"criteria: {session.policy.phrase if session.policy is not None else NO_POLICY}"]
    if report.k:
        lines += format_table(report, flaky_first=True).splitlines()
    else:  # tests with different k: a table per k, then the verdict
        for k in sorted({states[t].k for t in tasks}):
            rows = tuple(r for r in report.tasks if r.k == k)
            alone = dataclasses.replace(report, k=k, tasks=rows, gate=None)
            table = format_table(alone, flaky_first=True).splitlines()
            lines += table[:-1]  # without the interval note (unjudged: no verdict)
        lines.append(table[-1])
        lines += gate.describe(limit=None).splitlines()  # the judge's line, as it made it
    failing = [t for t in tasks if t in session.first_failure]
    if failing:
        lines.append("failed repetitions (the traceback of each test's first failed run is "
                     "under FAILURES; the others are shortened):")
    for t in failing:
        reps = session.reps[t].values()
        failed = sorted(r.index + 1 for r in reps if r.outcome == "failed")
        counted = sum(r.outcome in ("passed", "failed") for r in reps)
        first = session.first_failure[t]
        seed = run_seed(session.opt["passk_seed"], t, first.index)
        lines.append(f"  {t}: {len(failed)} of {plural(counted, 'run')} failed "
                     f"({plural(len(failed), 'run', count=False)} "
                     f"{', '.join(map(str, failed))}); first: run {first.index + 1}, "
                     f"passk_seed={seed}: {first.message}")
    lines += [f"note: {one_line(n)}" for n in session.verdict.notes]
    if session.exit_note:
        lines.append(session.exit_note)
    if not gate.passed:
        lines.append(f"passk: the gate BLOCKED: exit status {EXIT_GATE_BLOCKED} unless "
                     "an unmarked test failed (then 1)")
    return lines


def _crash_message(report: pytest.TestReport) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message).splitlines()[0] if crash.message else ""
    text = report.longreprtext.strip().splitlines()
    return text[-1] if text else report.outcome


