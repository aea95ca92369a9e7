"""run_suite on a Dask distributed cluster: ``client.get_executor(pure=False)`` gives the
thread pool's outcomes for the same seed (the ``distributed`` extra; CI installs it)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from runner_helpers import SeedCoin, p_tasks

from passk import InfrastructureError, OnCallSimulator, RunResult, Task, demo_tasks
from passk.repeats import run_seed
from passk.run.runner import SuiteRun, read_log, run_suite
from passk.stability import RepeatPolicy

distributed = pytest.importorskip(
    "distributed",
    reason="dask[distributed] is not installed (pip install 'passk-reliability[distributed]')")

POLICY = RepeatPolicy(runs_by_risk={"high-risk-write": 24, "read-only": 12})


def outcomes(run: SuiteRun) -> dict[tuple[str, int], tuple[bool, int | None]]:
    return {(r.task_id, r.run_index): (bool(r.success), r.seed) for r in run.results}


@pytest.fixture(scope="module")
def client():
    # processes=False: workers are threads of this process, so the cluster starts in a
    # fraction of a second and leaves nothing behind; the process pool test in
    # test_runner.py covers pickling
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=False,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster) as c):
        yield c


@pytest.mark.parametrize("seed", [0, 3])
def test_dask_executor_same_outcomes_as_thread_pool(client, seed, tmp_path):
    with ThreadPoolExecutor(4) as pool:
        threaded = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=seed,
                             executor=pool, progress=False)
    log = tmp_path / "dask.jsonl"
    on_dask = run_suite(OnCallSimulator(), demo_tasks(), POLICY, seed=seed,
                        executor=client.get_executor(pure=False), log=log, progress=False)
    assert outcomes(on_dask) == outcomes(threaded)
    assert on_dask.report.to_dict() == threaded.report.to_dict()
    assert on_dask.runs_spent == threaded.runs_spent == 48
    assert len(read_log(log)) == 48
    assert 0 < sum(ok for ok, _ in outcomes(on_dask).values()) < 48


def test_dask_executor_curtailed_and_infrastructure_retries(client):
    tasks = p_tasks([1.0, 0.5, 0.0, 0.99, 0.3])
    bad = {run_seed(0, t.task_id, i) for t in tasks for i in (1, 4)}

    class Adapter:
        def run(self, task: Task, *, seed: int) -> RunResult:
            if seed in bad:
                raise InfrastructureError("worker lost")
            return SeedCoin().run(task, seed=seed)

    policy = {"read-only": 12}
    with ThreadPoolExecutor(4) as pool:
        threaded = run_suite(Adapter(), tasks, policy, executor=pool, backoff=0,
                             progress=False)
    on_dask = run_suite(Adapter(), tasks, policy, executor=client.get_executor(pure=False),
                        backoff=0, progress=False)
    assert outcomes(on_dask) == outcomes(threaded)
    assert on_dask.retries == threaded.retries == {t.task_id: 2 for t in tasks}
    cut = run_suite(Adapter(), tasks, RepeatPolicy(runs_by_risk=policy, stopping="curtailed"),
                    executor=client.get_executor(pure=False), backoff=0, progress=False)
    assert cut.report.gate.passed == threaded.report.gate.passed
    assert set(cut.report.gate.flaky_tasks) == set(threaded.report.gate.flaky_tasks)
    assert cut.runs_spent < threaded.runs_spent
