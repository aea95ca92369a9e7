"""The pytest plugin, driven through pytest's own ``pytester``.

Oracles: each repetition's outcome is recomputed here from its documented seed
(``run_seed(suite seed, test id, i)``) and the test's own rule; pass^k is
``C(c, k) / C(n, k)`` from :func:`math.comb`, flakiness ``4 p (1 - p)`` in
:class:`fractions.Fraction`; the log is read back by ``passk report``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import re
import xml.etree.ElementTree as ET
from fractions import Fraction
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from passk import run_seed, stability
from passk.cli import main as passk_main
from passk.integrations.pytest_plugin import EXIT_GATE_BLOCKED
from passk.run import runner

pytest_plugins = ["pytester"]

# The plugin's report loads numpy's and scipy's extension modules on first use. pytester
# unloads whatever an in-process session imported, and numpy's extensions cannot load twice
# in one process, so the report's path runs once here, outside any inner session.
stability.format_table(stability.suite_report(["warm", "up"], [1, 2], [2, 2], k=[1, 2]))
runner.suite_outlook([runner.task_outlook(1, 1, 1, k=1)], 0.7)

COIN = """
import random
import pytest

@pytest.mark.passk(runs=12)
def test_coin(passk_seed):
    assert random.Random(passk_seed).random() < 0.5, "tails"

@pytest.mark.passk(runs=12)
def test_stable(passk_seed):
    assert passk_seed >= 0

def test_plain():
    pass
"""


def coin_outcomes(seed: int = 0, task: str = "test_suite.py::test_coin", n: int = 12,
                  ) -> list[bool]:
    """The coin test's outcomes, recomputed from the seeds the plugin documents."""
    return [random.Random(run_seed(seed, task, i)).random() < 0.5 for i in range(n)]


def pass_hat_k(c: int, n: int, k: int) -> float:
    return math.comb(c, k) / math.comb(n, k)


def flakiness(c: int, n: int) -> Fraction:
    p = Fraction(c, n)
    return 4 * p * (1 - p)


#: Inner sessions skip hypothesis' pytest plugin (about 2 s a session, unrelated to passk).
QUIET = ("-p", "no:hypothesispytest")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """An in-process pytest session in ``pytester``'s folder; plugins load as installed."""
    return pytester.runpytest(*QUIET, *args)


def passk_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = passk_main(list(argv))
    return code, out.getvalue()


def section(result: pytest.RunResult) -> str:
    """The passk part of the terminal summary."""
    text = result.stdout.str()
    start = text.index("passk: pass^k and flakiness of marked tests")
    return text[start:text.index("short test summary", start) if "short test summary" in
                text[start:] else len(text)]


def test_installing_passk_registers_the_plugin():
    assert [(e.name, e.value) for e in entry_points(group="pytest11") if e.name == "passk"] == [
        ("passk", "passk.integrations.pytest_plugin")]


def test_p_passk_loads_it_with_autoloading_on_or_off(pytester, monkeypatch):
    pytester.makepyfile(test_suite="import pytest\n\n@pytest.mark.passk(runs=2, k=1)\n"
                                   "def test_x():\n    pass\n")
    assert run(pytester, "-p", "passk").ret == 0  # no second registration
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest("-p", "passk")
    result.assert_outcomes(passed=2)
    assert "gate: PASSED" in section(result)


def test_coin_flip_fails_the_session_and_the_log_feeds_passk_report(pytester):
    pytester.makepyfile(test_suite=COIN)
    log = pytester.path / "runs.jsonl"
    xml = pytester.path / "junit.xml"
    result = run(pytester, "--passk-log", str(log), "--junitxml", str(xml))

    coin = coin_outcomes()
    c = sum(coin)
    assert 0 < c < 12  # a real coin: neither stable pass nor stable fail under seed 0
    assert result.ret == EXIT_GATE_BLOCKED
    result.assert_outcomes(passed=12 + c + 1, failed=12 - c)

    text = section(result)
    row = next(line for line in text.splitlines() if line.startswith("test_suite.py::test_coin"))
    cells = row.split()
    assert cells[2:4] == ["12", str(c)]
    assert cells[5] == f"{pass_hat_k(c, 12, 5):.3f}"
    assert cells[-2] == f"{float(flakiness(c, 12)):.3f}" and cells[-1] == "flaky"
    stable = next(line for line in text.splitlines()
                  if line.startswith("test_suite.py::test_stable"))
    assert stable.split()[2:6] == ["12", "12", "1.000", "1.000"]
    assert stable.split()[-1] == "stable-pass"
    assert "gate: BLOCKED" in text
    assert (f"task test_suite.py::test_coin: flakiness {float(flakiness(c, 12)):.3f} exceeds the "
            f"cap 0.200 ({c}/12 passed)") in text
    assert f"{12 - c} of 12 runs failed" in text

    # the failures are summarised: one traceback per test, the other failed runs one line each
    assert result.stdout.str().count("assert random.Random(passk_seed).random() < 0.5") == 1

    # the log: the protocol header, then 12 runs per test, read back by passk report
    header = json.loads(log.read_text().splitlines()[0])
    assert header["seed"] == 0 and header["protocol"]["settings"]["k"] == 5
    code, out = passk_cli("report", str(log), "--json")
    assert code == 0
    tasks = {t["task_id"]: t for t in json.loads(out)["tasks"]}
    assert {t: (v["runs"], v["successes"]) for t, v in tasks.items()} == {
        "test_suite.py::test_coin": (12, c), "test_suite.py::test_stable": (12, 12)}
    assert math.isclose(tasks["test_suite.py::test_coin"]["pass_hat_k"], pass_hat_k(c, 12, 5))
    assert passk_cli("gate", str(log))[0] == 1
    assert passk_cli("diff", str(log), str(log))[0] == 0
    assert passk_cli("plan", str(log))[0] == 0

    # JUnit XML: one testcase per repetition, the verdict as testsuite properties
    suite = ET.parse(xml).getroot().find("testsuite")
    assert suite is not None
    assert len(suite.findall("testcase")) == 25
    props = [(p.get("name"), p.get("value")) for p in suite.iter("property")]
    assert ("passk_gate", "BLOCKED") in props
    assert any(name == "passk_reason" and "test_coin: flakiness" in (value or "")
               for name, value in props)


def test_a_stable_suite_passes_and_each_run_has_fresh_fixtures_and_its_seed(pytester):
    pytester.makepyfile(test_suite="""
        import pytest

        made = {"function": 0, "module": 0}
        seen = []

        @pytest.fixture(scope="module")
        def shared():
            made["module"] += 1
            return []

        @pytest.fixture
        def fresh():
            made["function"] += 1
            return []

        @pytest.mark.passk(runs=6, k=3, risk="high-risk-write")
        def test_agent(passk_seed, passk_run, fresh, shared):
            assert fresh == []
            fresh.append(1)
            shared.append(passk_run)
            seen.append((passk_run, passk_seed))

        def test_after():
            assert made == {"function": 6, "module": 1}
            with open("seeds.json", "w") as f:
                import json
                json.dump(seen, f)
    """)
    result = run(pytester, "--passk-seed", "7")
    assert result.ret == 0
    result.assert_outcomes(passed=7)
    seeds = json.loads((pytester.path / "seeds.json").read_text())
    assert seeds == [[i, run_seed(7, "test_suite.py::test_agent", i)] for i in range(6)]
    text = section(result)
    assert "gate: PASSED  overall pass^3 = 1.000" in text
    assert re.search(r"test_suite.py::test_agent\s+high-risk-write\s+6\s+6", text)


def test_failed_runs_within_the_gate_do_not_fail_the_session(pytester):
    # 19 of 20: flakiness 0.19 <= 0.2 and pass^5 = C(19,5)/C(20,5) = 0.75 >= 0.7
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.passk(runs=20)
        def test_mostly(passk_run):
            assert passk_run != 0
    """)
    result = run(pytester)
    result.assert_outcomes(passed=19, failed=1)
    assert result.ret == 0
    assert f"gate: PASSED  overall pass^5 = {pass_hat_k(19, 20, 5):.3f}" in section(result)


def test_an_unmarked_failure_keeps_pytest_exit_status(pytester):
    pytester.makepyfile(test_suite=COIN + "\ndef test_broken():\n    assert False\n")
    result = run(pytester)
    assert result.ret == 1
    assert "gate: BLOCKED" in section(result)


def test_no_marked_tests_change_nothing_unless_the_gate_is_asked_for(pytester):
    pytester.makepyfile(test_suite="def test_plain():\n    pass\n")
    result = run(pytester)
    assert result.ret == 0
    assert "pass^k" not in result.stdout.str()
    # asked to gate with nothing marked: an empty suite is not evidence (fails closed)
    result = run(pytester, "--passk-min-overall", "0.9")
    assert result.ret == EXIT_GATE_BLOCKED
    assert "no tasks: an empty suite is not evidence" in section(result)


def test_selection_by_k_and_m(pytester):
    pytester.makepyfile(test_suite=COIN)
    result = run(pytester, "-k", "stable")
    result.assert_outcomes(passed=12)
    assert result.ret == 0
    assert "test_coin" not in section(result)
    result = run(pytester, "-m", "passk", "--passk-runs", "3")  # markers give runs=12
    result.assert_outcomes(passed=12 + sum(coin_outcomes()), failed=12 - sum(coin_outcomes()))


def test_passk_runs_is_the_default_for_markers_without_runs(pytester):
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.passk
        def test_read():
            pass

        @pytest.mark.passk(risk="high-risk-write")
        def test_write():
            pass
    """)
    result = run(pytester)
    result.assert_outcomes(passed=5 + 12)  # the repeat policy's tiers
    result = run(pytester, "--passk-runs", "7")
    result.assert_outcomes(passed=14)


def test_last_failed_reruns_every_repetition_of_a_failing_test(pytester):
    pytester.makepyfile(test_suite=COIN)
    run(pytester)
    result = run(pytester, "--lf")
    c = sum(coin_outcomes())
    result.assert_outcomes(passed=c, failed=12 - c)
    text = section(result)
    assert "test_suite.py::test_coin" in text and "test_stable" not in text


def test_infrastructure_errors_are_retried_never_counted(pytester):
    pytester.makepyfile(test_suite="""
        import pytest
        from passk import InfrastructureError

        attempts = {}

        @pytest.fixture
        def sandbox(passk_run):
            attempts[passk_run] = attempts.get(passk_run, 0) + 1
            if passk_run % 2 == 0 and attempts[passk_run] == 1:
                raise InfrastructureError("sandbox did not start")
            return "up"

        @pytest.mark.passk(runs=6)
        def test_recovers(sandbox, passk_seed):
            assert sandbox == "up"

        @pytest.mark.passk(runs=3, k=1)
        def test_never_up():
            raise InfrastructureError("rate limited")
    """)
    log = pytester.path / "runs.jsonl"
    result = run(pytester, "--passk-max-retries", "2", "--passk-log", str(log))
    # every run of test_recovers passes (3 after a retry); test_never_up's runs are left out
    result.assert_outcomes(passed=6, skipped=3)
    assert result.ret == EXIT_GATE_BLOCKED
    text = section(result)
    assert "task test_suite.py::test_never_up: no runs, so no evidence" in text
    assert re.search(r"test_suite.py::test_recovers\s+read-only\s+6\s+6", text)
    # the log keeps the left-out attempts (3 retries + 3 x (2 retries + 1 given up))
    code, out = passk_cli("report", str(log), "--json", "--k", "1")
    assert code == 0
    tasks = {t["task_id"]: t for t in json.loads(out)["tasks"]}
    assert (tasks["test_suite.py::test_recovers"]["runs"],
            tasks["test_suite.py::test_never_up"]["runs"]) == (6, 0)
    rows = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert sum(r.get("infrastructure_error", False) for r in rows) == 3 + 9


def test_curtailed_stops_a_test_once_its_verdict_is_settled(pytester):
    pytester.makepyfile(test_suite=COIN)
    result = run(pytester, "--passk-policy", "curtailed")
    coin = coin_outcomes()

    def always_flaky(s: int, f: int) -> bool:  # every completion: c >= s passes, d >= f fails
        return all(flakiness(c, c + d) > Fraction(1, 5) for c in range(s, 13)
                   for d in range(f, 13 - c) if c + d)

    # oracle: the coin stops once it is flaky whatever its other runs give (which blocks the
    # suite, so its verdict is settled); the stable test, never flaky for sure, runs in full
    ran = next(m for m in range(1, 13) if always_flaky(sum(coin[:m]), m - sum(coin[:m])))
    result.assert_outcomes(passed=12 + sum(coin[:ran]) + 1, failed=ran - sum(coin[:ran]),
                           skipped=12 - ran)
    assert result.ret == EXIT_GATE_BLOCKED
    assert "1 task stopped early once the gate's verdict on it was settled" in section(result)


def test_tests_with_different_k_get_a_table_each(pytester):
    pytester.makepyfile(test_suite="""
        import pytest

        @pytest.mark.passk(runs=4, k=2)
        def test_a():
            pass

        @pytest.mark.passk(runs=4, k=4)
        def test_b():
            pass
    """)
    result = run(pytester)
    assert result.ret == 0
    text = section(result)
    assert "pass^2" in text and "pass^4" in text
    # the judge's verdict line, with the policy (none here) it names, never one of the plugin's
    assert ("gate: PASSED  overall pass^k = 1.000  (bar 0.700, flakiness cap 0.200)  "
            "[no policy: criteria from the command line]") in text


@pytest.mark.parametrize("mark, message", [
    ("runs=0", "runs (0) must be a whole number >= 1"),
    ("runs=5, k=2.5", "k (2.5) must be a whole number >= 1"),
    ("runs=5, n=3", "unknown argument ['n']"),
])
def test_a_bad_marker_is_a_collection_error_naming_the_value(pytester, mark, message):
    pytester.makepyfile(test_suite=f"""
        import pytest

        @pytest.mark.passk({mark})
        def test_x():
            pass
    """)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert message in result.stdout.str()


@pytest.mark.slow
def test_plugin_stays_lazy_without_marked_tests(pytester):
    pytester.makeconftest("""
        import sys

        def pytest_unconfigure(config):
            with open("loaded.txt", "w") as f:
                f.write(" ".join(m for m in ("passk.stability", "passk.run.runner", "passk.results.read", "scipy")
                                 if m in sys.modules))
    """)
    pytester.makepyfile(test_suite="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess(*QUIET)
    assert result.ret == 0
    assert (pytester.path / "loaded.txt").read_text() == ""


@pytest.mark.slow
def test_xdist_spreads_repetitions_and_changes_nothing(pytester):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_suite=COIN)
    serial = pytester.runpytest_subprocess(*QUIET, "--passk-log", "serial.jsonl")
    spread = pytester.runpytest_subprocess(*QUIET, "--passk-log", "spread.jsonl", "-n", "2", "-v")
    assert serial.ret == spread.ret == EXIT_GATE_BLOCKED
    workers = set(re.findall(r"\[(gw\d)\]", spread.stdout.str()))
    assert workers == {"gw0", "gw1"}  # the repetitions ran on both workers
    assert ((pytester.path / "serial.jsonl").read_bytes()
            == (pytester.path / "spread.jsonl").read_bytes())
    # the table and the verdict; which failed run came first may differ
    table = [section(r).split("failed repetitions")[0] for r in (serial, spread)]
    assert table[0] == table[1] and "gate: BLOCKED" in table[0]


# --------------------------------------------------------------------------
# curtailment decides as fixed repetition under every gate mode
# --------------------------------------------------------------------------

FAIL_FAIL_PASS = """
import pytest

@pytest.mark.passk(runs=3, k=2)
def test_late(passk_run):
    assert passk_run == 2, "not yet"
"""


@pytest.mark.parametrize("on, ret", [("lower-bound", 0), ("estimate", EXIT_GATE_BLOCKED)])
def test_fail_fail_pass_decides_as_fixed_repetition_under_either_gate(pytester, on, ret):
    """The issue's case: 1 of 3 has pass^2 = 0 but an exact lower bound of 0.000286
    (the 5% quantile of Beta(1, 3), squared), above a bar of 0.0002. On the lower
    bound the third run can lift the test over the bar, so curtailment runs it; on
    the estimate nothing can, so curtailment stops after two failures and says why."""
    pytester.makepyfile(test_suite=FAIL_FAIL_PASS)
    gate = ("--passk-min-overall", "0.0002", "--passk-max-flakiness", "1", "--passk-on", on)
    fixed = run(pytester, *gate)
    cut = run(pytester, *gate, "--passk-policy", "curtailed")
    assert fixed.ret == cut.ret == ret
    bound = (1 - 0.95 ** (1 / 3)) ** 2  # Clopper-Pearson lower bound on p for 1 of 3, squared
    assert bound > 0.0002
    if on == "lower-bound":
        cut.assert_outcomes(passed=1, failed=2)  # all three ran
        assert f"{bound:.3f}" in section(fixed)
        return
    cut.assert_outcomes(failed=2, skipped=1)
    # its log records the gate curtailment served: another one is refused, exit 2
    logged = run(pytester, *gate, "--passk-policy", "curtailed", "--passk-log", "cut.jsonl")
    assert logged.ret == EXIT_GATE_BLOCKED
    log = str(pytester.path / "cut.jsonl")
    assert passk_cli("gate", log)[0] == 1
    assert passk_cli("gate", log, "--on", "lower-bound")[0] == 2
    text = section(cut)
    assert "no runs, so no evidence" not in text
    assert ("overall pass^2 could reach at most 0.000 whatever the runs not made gave, below "
            "the bar 0.000: not met") in text
    assert "test_suite.py::test_late (3 planned)" in text


class _Config:
    """The options a session reads, and nothing else (the plugin's decisions are driven
    here without pytest's machinery, so that thousands of cases take seconds)."""

    def __init__(self, **options):
        import tempfile

        self.options = options
        self.rootpath = Path(tempfile.gettempdir())  # no gate policy there

    def getoption(self, name):
        return self.options.get(name)


def _session_verdict(tests, order, *, policy, on, bar, cap):
    """Drive the plugin's session through its schedule (``skip_reason`` before each
    repetition, the outcome recorded after it, as its hooks do) for repetitions run in
    ``order`` [(test, run index), ...] ending with the outcomes given; return (passed,
    flaky tests, repetitions skipped, reasons)."""
    from passk.integrations.pytest_plugin import PasskSession, _Rep

    session = PasskSession(_Config(passk_policy=policy, passk_on=on, passk_min_overall=bar,
                                   passk_max_flakiness=cap))
    schedule = session.start_schedule({name: (runs, k, "read-only")
                                       for name, (runs, k, _) in tests.items()})
    skipped = 0
    for name, i in order:
        runs, k, outcomes = tests[name]
        meta = {"task": name, "run": i, "runs": runs, "k": k, "risk": "read-only"}
        session.reps.setdefault(name, {})[i] = _Rep(i, f"{name}[{i}]", f"{name}[{i}]")
        kind, _ = session.skip_reason(meta)
        if kind:
            schedule.skip(name, i, kind)
            skipped += 1
        else:
            schedule.record(name, i, "passed" if outcomes[i] else "failed", replay=True)
    gate = session._verdict().report.gate
    return gate.passed, gate.flaky_tasks, skipped, gate.reasons


@pytest.mark.slow
def test_curtailed_sessions_decide_as_fixed_ones_on_every_outcome_sequence():
    """Exhaustive: every outcome sequence of one test with 1-5 runs and of two tests with
    1-3 runs each, k = 1-3, under both gate modes and a grid of bars and caps; the
    curtailed session (repetitions in order, and interleaved for two tests) gives the
    fixed session's verdict and flaky tests. The reasons of a curtailed block never blame
    a test with runs for having none."""
    import itertools

    cases = []
    for n in range(1, 6):
        for outcomes in itertools.product([False, True], repeat=n):
            for k in (1, 2, 3):
                cases.append({"t": (n, k, outcomes)})
    pairs = [seq for n in range(1, 4) for seq in itertools.product([False, True], repeat=n)]
    rng = random.Random(17)
    for a, b in itertools.product(pairs, pairs):
        cases.append({"t": (len(a), rng.choice((1, 2)), a), "u": (len(b), rng.choice((1, 2)), b)})
    checked = skipped = 0
    for tests in cases:
        by_test = [[(name, i) for i in range(tests[name][0])] for name in tests]
        orders = [[x for seq in by_test for x in seq]]
        if len(tests) == 2:  # interleaved, as under xdist or a random order
            orders.append([x for pair in itertools.zip_longest(*by_test) for x in pair if x])
        for on in ("estimate", "lower-bound"):
            for bar, cap in itertools.product((0.0, 0.0002, 0.3, 0.7, 1.0), (0.0, 0.5, 1.0)):
                gate = {"on": on, "bar": bar, "cap": cap}
                fixed = _session_verdict(tests, orders[0], policy="fixed", **gate)
                for order in orders:
                    cut = _session_verdict(tests, order, policy="curtailed", **gate)
                    assert cut[:2] == fixed[:2], (tests, order, gate, cut, fixed)
                    assert not any("no runs" in r for r in cut[3]), (tests, gate, cut)
                    checked += 1
                    skipped += cut[2]
    print(f"{checked} curtailed sessions, {skipped} repetitions skipped")
    assert checked == 17_340 and skipped > 5_000
