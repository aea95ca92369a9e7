r"""The simulation study of the paired comparison: task populations and simulated suites.

Used by ``benchmarks/bench_compare.py``, the tests and the notebooks to
measure the error rates of :func:`passk.stats.compare.compare_pass_hat_k`
and the power that :func:`passk.stats.power.plan_comparison` predicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from passk.errors import BadInput
from passk.metrics import estimate_pass_hat_k
from passk.stats import _checks as check
from passk.stats.compare import METHODS, PairedTest, _floored, paired_difference_test

__all__ = [
    "TaskPopulation",
    "simulate_comparison",
    "simulate_intervals",
    "simulate_suites",
    "task_population",
]

#: Logit-scale mixture of task difficulty: (weight, centre, spread) per component.
_MIXTURE = ((0.3, -3.5, 1.0), (0.4, -0.5, 1.2), (0.3, 3.5, 1.0))
#: Spread of a version's own deviation from a task's difficulty, on the logit scale.
_VERSION_SD = 1.2
_DEFAULT_POPULATION_SIZE = 20_000
_PLAN_POPULATION_SIZE = 4_000


@dataclass(frozen=True)
class TaskPopulation:
    """A finite population of tasks: each task's single-run rate in both versions."""

    p_old: np.ndarray
    p_new: np.ndarray
    change: str

    def delta(self, k: int) -> float:
        """The population's true change in mean pass^k, new minus old."""
        return float(np.mean(self.p_new**k - self.p_old**k))


def task_population(size: int = 100_000, *, change: str = "none", k: int = 1,
                    delta: float = 0.0, rng: int | np.random.Generator | None = None
                    ) -> TaskPopulation:
    r"""A population of tasks like real suites, in two correlated versions.

    Parameters
    ----------
    size : int, default 100000
        Tasks in the population (even).
    change : {'none', 'trade-off', 'drop'}
        ``'none'``: the versions are exchangeable (each task's two rates are
        two draws around its difficulty, and the population holds both
        orders), so the change in mean pass^j is exactly 0 for every j.
        ``'trade-off'``: the new version fixes 20 % of tasks (logit +2.5) and
        slips on the rest by the amount that makes the change in mean pass^k
        exactly ``-delta`` (0 by default: a null hypothesis that is not
        symmetric). ``'drop'``: every task slips by the same logit amount,
        chosen so the change in mean pass^k is exactly ``-delta``.
    k : int
        The k at which ``delta`` is met.
    delta : float
        The drop in mean pass^k to build in (``'trade-off'`` and ``'drop'``).
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    TaskPopulation

    Notes
    -----
    Difficulty :math:`\theta` is a mixture on the logit scale, 30 % around
    −3.5, 40 % around −0.5 and 30 % around +3.5; a version's rate is
    :math:`\operatorname{expit}(\theta + 1.2\,e)`, e standard normal. With 4
    runs, about 35 % of tasks pass 0 of 4 and 29 % pass 4 of 4 (tau-bench's
    GPT-4o airline run: 28 % and 20 %); the two versions' pass^k correlate
    about 0.85 across tasks.

    Examples
    --------
    >>> pop = task_population(2_000, change="drop", k=4, delta=0.05, rng=0)
    >>> round(pop.delta(4), 6), round(task_population(2_000, rng=0).delta(3), 6)
    (-0.05, 0.0)
    """
    from scipy import optimize, special
    check.choice(change, "change", ("none", "trade-off", "drop"))
    size_ = check.whole(size, "size", minimum=2)
    k_ = check.whole(k, "k", minimum=1)
    delta = check.real(delta, "delta", low=0.0)
    gen = np.random.default_rng(rng)
    half = size_ // 2
    weights, centres, spreads = (np.array(x) for x in zip(*_MIXTURE))
    comp = gen.choice(len(weights), size=half, p=weights)
    theta = centres[comp] + spreads[comp] * gen.standard_normal(half)
    a = theta + _VERSION_SD * gen.standard_normal(half)
    b = theta + _VERSION_SD * gen.standard_normal(half)
    logit_old, logit_new = np.concatenate([a, b]), np.concatenate([b, a])
    p_old = special.expit(logit_old)
    if change == "none":
        return TaskPopulation(p_old, special.expit(logit_new), change)
    if not 0 <= delta < float(np.mean(p_old**k_)):
        raise BadInput(f"delta ({delta!r}) must lie in [0, mean pass^k)")
    fixed = np.zeros(logit_new.size, dtype=bool)
    if change == "trade-off":
        fixed[gen.permutation(logit_new.size)[: logit_new.size // 5]] = True
    target = float(np.mean(p_old**k_)) - delta

    def gap(shift: float) -> float:
        moved = np.where(fixed, logit_new + 2.5, logit_new - shift)
        return float(np.mean(special.expit(moved) ** k_)) - target
    shift = optimize.brentq(gap, -30.0, 30.0, xtol=1e-14)
    p_new = special.expit(np.where(fixed, logit_new + 2.5, logit_new - shift))
    return TaskPopulation(p_old, p_new, change)


def simulate_intervals(population: TaskPopulation, tasks: int, runs: int, k: int, *,
                       methods: tuple[str, ...] = METHODS, replicates: int = 2000,
                       confidence: float = 0.95, n_resamples: int = 999,
                       rng: int | np.random.Generator | None = None, floor: bool = True,
                       p_values: bool = True) -> dict[str, PairedTest]:
    r"""Simulated suites' intervals and p-values per method (see :func:`simulate_comparison`).

    ``floor=False`` gives the methods' intervals without the within-task floor
    (what :func:`compare_pass_hat_k` computed before it had one, for contrast);
    ``p_values=False`` skips the floor's p-value (the field is then the
    method's own), which the error rates of intervals do not need.

    Returns
    -------
    dict
        Per method, a :class:`PairedTest` of arrays of length ``replicates``.

    Examples
    --------
    >>> pop = task_population(10_000, rng=1)
    >>> out = simulate_intervals(pop, 50, 4, 2, methods=("t", "welch"), replicates=3, rng=2)
    >>> out["t"].low.shape, out["welch"].low.shape
    ((3,), (3,))
    """
    gen = np.random.default_rng(rng)
    for m in methods:
        check.choice(m, "methods", (*METHODS, "welch"))
    tasks = check.whole(tasks, "tasks", minimum=2)
    runs = check.whole(runs, "runs", minimum=1)
    k = check.whole(k, "k", minimum=1)
    if k > runs:
        raise BadInput(f"k ({k}) cannot exceed runs ({runs})")
    replicates = check.whole(replicates, "replicates", minimum=1)
    n_resamples = check.whole(n_resamples, "n_resamples", minimum=99)
    alpha = 1.0 - check.confidence(confidence)
    table = np.asarray(estimate_pass_hat_k(np.arange(runs + 1), runs, k), dtype=float)
    parts: dict[str, list[PairedTest]] = {m: [] for m in methods}
    block = 500  # fresh bootstrap weights and sign patterns every block of replicates
    for lo in range(0, replicates, block):
        r = min(block, replicates - lo)
        idx = gen.integers(0, population.p_old.size, size=(r, tasks))
        h_old = table[gen.binomial(runs, population.p_old[idx])]
        h_new = table[gen.binomial(runs, population.p_new[idx])]
        for m in methods:
            if m == "welch":
                parts[m].append(_welch(h_old, h_new, alpha))
                continue
            res = paired_difference_test(h_new - h_old, method=m, confidence=1 - alpha,
                                         n_resamples=n_resamples, rng=gen)
            if floor:
                res = _floored(res, h_old, h_new, k, runs, runs, alpha, p_value=p_values)
            parts[m].append(res)
    return {m: PairedTest(*(np.concatenate(x) for x in zip(*v))) for m, v in parts.items()}


def simulate_suites(rates: npt.ArrayLike, tasks: int, runs: int, k: int, *,
                    drop: float = 0.0, method: str = "t", floor: bool = True,
                    replicates: int = 2000, confidence: float = 0.95,
                    runs_new: int | None = None, spread: str = "even",
                    rng: int | np.random.Generator | None = None
                    ) -> tuple[PairedTest, np.ndarray]:
    r"""Simulated comparisons of suites drawn from a pool of task rates, with an exact change.

    Each replicate draws ``tasks`` single-run rates from ``rates`` (with
    replacement) for the old version. A drop (``drop > 0``) scales the new
    version's pass^k of the tasks that change,
    :math:`\theta_{\text{new}} = s\,\theta_{\text{old}}`; a gain
    (``drop < 0``) scales their chance of failing it,
    :math:`1-\theta_{\text{new}} = s\,(1-\theta_{\text{old}})`. s is chosen
    *in each suite* so that the suite's mean pass^k changes by exactly
    ``-drop`` (``drop = 0``: the versions are the same). Scaling works where a
    logit shift cannot (a task at p = 1). ``spread='even'`` changes every
    task; ``'concentrated'`` only the tenth of the tasks (at least one) with
    the most to lose (or gain), each by a lot. Where a suite cannot change
    that much, s stops at 0 and ``truth`` says so.

    Parameters
    ----------
    runs_new : int, optional
        Runs per task of the new version (default ``runs``): unequal runs.
    spread : {'even', 'concentrated'}
        How the change is spread over the tasks.

    Returns
    -------
    PairedTest, ndarray
        The intervals (vectorized over ``replicates``, clipped to [-1, 1] as
        :func:`compare_pass_hat_k` does; the floor's p-value is not computed,
        the field is the method's) and each suite's true change.

    Examples
    --------
    >>> res, truth = simulate_suites([1.0], 10, 2, 1, drop=0.01, replicates=500, rng=0)
    >>> bool(np.allclose(truth, -0.01)), float(np.mean(res.low > -0.01))  # never non-inferior
    (True, 0.0)
    >>> old, _ = simulate_suites([1.0], 10, 2, 1, drop=0.01, floor=False, replicates=500,
    ...                          rng=0)
    >>> float(np.mean(old.low > -0.01))  # without the floor: 0.99**20 = 0.82
    0.826
    >>> _, gain = simulate_suites([0.5], 20, 1, 1, drop=-0.04, runs_new=12,
    ...                           spread="concentrated", replicates=2, rng=0)
    >>> gain.round(6)  # two tasks of 20 carry the whole gain
    array([0.04, 0.04])
    >>> simulate_suites([0.5], 20, 1, 1, drop=-0.1, spread="concentrated",
    ...                 replicates=1, rng=0)[1].round(6)  # they cannot carry more than 2/20 x 0.5
    array([0.05])
    """
    pool = np.asarray(check.real_array(rates, "rates"), dtype=float).ravel()
    if pool.size == 0 or not np.all((pool >= 0) & (pool <= 1)):
        raise BadInput(f"rates ({rates!r}) must be a non-empty array of values in [0, 1]")
    t_count = check.whole(tasks, "tasks", minimum=2)
    n_runs = check.whole(runs, "runs", minimum=1)
    n_new = n_runs if runs_new is None else check.whole(runs_new, "runs_new", minimum=1)
    k_ = check.whole(k, "k", minimum=1)
    replicates = check.whole(replicates, "replicates", minimum=1)
    drop = check.real(drop, "drop", low=-1.0, high=1.0, open_low=True, open_high=True)
    check.choice(spread, "spread", ("even", "concentrated"))
    if k_ > min(n_runs, n_new):
        raise BadInput(f"k ({k_}) cannot exceed runs ({min(n_runs, n_new)})")
    gen = np.random.default_rng(rng)
    alpha = 1.0 - check.confidence(confidence)
    table_old = np.asarray(estimate_pass_hat_k(np.arange(n_runs + 1), n_runs, k_), dtype=float)
    table_new = np.asarray(estimate_pass_hat_k(np.arange(n_new + 1), n_new, k_), dtype=float)
    parts: list[PairedTest] = []
    truths = []
    block = max(1, 400_000 // t_count)
    for lo in range(0, replicates, block):
        r = min(block, replicates - lo)
        p_old = pool[gen.integers(0, pool.size, size=(r, t_count))]
        theta = p_old**k_
        mass = theta if drop >= 0 else 1.0 - theta  # what the change scales down
        moving = np.ones(mass.shape, dtype=bool)
        if spread == "concentrated":
            top = max(1, math.ceil(t_count / 10))
            order = np.argsort(-mass, axis=1, kind="stable")[:, :top]
            moving = np.zeros(mass.shape, dtype=bool)
            np.put_along_axis(moving, order, True, axis=1)
        total = np.where(moving, mass, 0.0).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.clip(np.where(total > 0, 1.0 - abs(drop) * t_count / total, 1.0),
                            0.0, 1.0)
        mass_new = np.where(moving, mass * scale[:, None], mass)
        theta_new = mass_new if drop >= 0 else 1.0 - mass_new
        truths.append((theta_new - theta).mean(axis=1))
        h_old = table_old[gen.binomial(n_runs, p_old)]
        h_new = table_new[gen.binomial(n_new, np.clip(theta_new, 0.0, 1.0) ** (1.0 / k_))]
        res = paired_difference_test(h_new - h_old, method=method, confidence=1 - alpha,
                                     rng=gen, n_resamples=999)
        if floor:
            res = _floored(res, h_old, h_new, k_, n_runs, n_new, alpha, p_value=False)
        res = PairedTest(res.mean, np.maximum(res.low, -1.0), np.minimum(res.high, 1.0),
                         res.p_value)
        parts.append(PairedTest(*(np.atleast_1d(x) for x in res)))
    return PairedTest(*(np.concatenate(x) for x in zip(*parts))), np.concatenate(truths)


def simulate_comparison(population: TaskPopulation, tasks: int, runs: int, k: int, *,
                        methods: tuple[str, ...] = METHODS, replicates: int = 2000,
                        confidence: float = 0.95, n_resamples: int = 999,
                        rng: int | np.random.Generator | None = None
                        ) -> dict[str, dict[str, float]]:
    r"""Monte Carlo error rates of the interval methods on one population and design.

    Parameters
    ----------
    population : TaskPopulation
        Tasks are drawn from it with replacement, ``tasks`` per replicate.
    tasks, runs, k : int
        Tasks per suite, runs per task and version, and the k of pass^k.
    methods : tuple of str
        Among :data:`METHODS`, plus ``'welch'`` (the unpaired Welch t interval,
        for contrast: it ignores that the tasks are the same).
    replicates : int, default 2000
        Simulated suites.
    confidence : float, default 0.95
        Two-sided confidence level.
    n_resamples : int, default 999
        Resamples or sign patterns per replicate for the resampling methods.
    rng : int, numpy.random.Generator or None
        Seed or generator.

    Returns
    -------
    dict
        Per method: ``reject`` (the interval excludes 0: the Type I error when
        the population's change is 0), ``worse`` (the interval lies below 0:
        power against a drop, or the gate's false-alarm rate under no change),
        ``cover`` (the interval holds the population's true change) and
        ``width`` (mean width).

    Examples
    --------
    >>> pop = task_population(10_000, rng=1)
    >>> out = simulate_comparison(pop, 50, 4, 2, methods=("t",), replicates=400, rng=2)
    >>> round(out["t"]["reject"], 3), round(out["t"]["cover"], 3)
    (0.003, 0.998)
    """
    truth = population.delta(check.whole(k, "k", minimum=1))
    out = simulate_intervals(population, tasks, runs, k, methods=methods, replicates=replicates,
                             confidence=confidence, n_resamples=n_resamples, rng=rng)
    return {m: {"reject": float(np.mean((r.low > 0) | (r.high < 0))),
                "worse": float(np.mean(r.high < 0)),
                "cover": float(np.mean((r.low <= truth) & (truth <= r.high))),
                "width": float(np.mean(r.high - r.low))} for m, r in out.items()}


def _welch(h_old: np.ndarray, h_new: np.ndarray, alpha: float) -> PairedTest:
    from scipy import stats
    t_count = h_old.shape[-1]
    v1, v2 = h_old.var(axis=-1, ddof=1) / t_count, h_new.var(axis=-1, ddof=1) / t_count
    mean = h_new.mean(axis=-1) - h_old.mean(axis=-1)
    se = np.sqrt(v1 + v2)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(se > 0, (v1 + v2) ** 2 / (v1**2 / (t_count - 1) + v2**2 / (t_count - 1)),
                      t_count - 1)
        q = stats.t.ppf(1 - alpha / 2, np.nan_to_num(df, nan=t_count - 1))
        p = np.where(se > 0, 2 * stats.t.sf(np.abs(mean) / se, df), 1.0)
    return PairedTest(mean, mean - q * se, mean + q * se, p)
