"""How often a per-task interval for pass^k covers, computed exactly over the binomial.

An interval method that prints "95% CI" makes a promise about repeated
evaluations: whatever the task's true success rate p, at least 95% of the
n-run evaluations one could have made give an interval that contains the true
:math:`\\mathrm{pass}^k = p^k`. With independent runs the success count is
:math:`c \\sim \\mathrm{Binomial}(n, p)`, which takes only n + 1 values, so the
promise can be checked exactly, by summing over them, with no simulation:
:func:`exact_coverage`. :func:`expected_width` is the price paid for it.

``benchmarks/bench_coverage.py`` prints both on a grid; notebook 03 draws them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy import stats

from passk._validation import confidence_level as _confidence
from passk._validation import probability as _probability
from passk._validation import scalar_or_array as _scalar_or_array
from passk._validation import whole_numbers as _whole_numbers
from passk.errors import BadInput
from passk.metrics import CI_METHODS, ArrayLike, FloatOrArray, pass_hat_k_ci, wilson_ci

#: The intervals whose coverage :func:`exact_coverage` sums: pass_hat_k_ci's, and Wilson's.
COVERAGE_METHODS = (*CI_METHODS, "wilson")

__all__ = ["COVERAGE_METHODS", "EstimatorMoments", "estimator_moments", "exact_coverage",
           "expected_width", "identical_suite_coverage"]


class EstimatorMoments(NamedTuple):
    """An estimator's exact mean, bias, standard deviation and RMSE, one per rate p."""

    mean: np.ndarray
    bias: np.ndarray
    sd: np.ndarray
    rmse: np.ndarray


def estimator_moments(estimates: ArrayLike, p: ArrayLike, truth: ArrayLike) -> EstimatorMoments:
    """Exact moments of an estimator of n independent runs, summed over the binomial.

    Parameters
    ----------
    estimates : array_like, shape (n + 1,)
        The estimate when c of the n runs pass, for c = 0, ..., n.
    p : array_like
        True single-run success rates in [0, 1] (any shape).
    truth : array_like
        The quantity estimated at each p (broadcast against ``p``), e.g. ``p**k``.

    Returns
    -------
    EstimatorMoments
        ``mean``, ``bias``, ``sd`` and ``rmse``, each shaped like ``p``.

    Notes
    -----
    With :math:`P(C = c) = \\binom{n}{c} p^c (1-p)^{n-c}` (``scipy.stats.binom.pmf``),
    :math:`E[\\hat\\theta] = \\sum_c P(C=c)\\,\\hat\\theta_c`, bias
    :math:`E[\\hat\\theta] - \\theta`,
    :math:`\\mathrm{sd} = \\sqrt{\\sum_c P(C=c)(\\hat\\theta_c - E[\\hat\\theta])^2}` and
    :math:`\\mathrm{rmse} = \\sqrt{\\sum_c P(C=c)(\\hat\\theta_c - \\theta)^2}`.

    Examples
    --------
    The unbiased estimator C(c, k)/C(n, k) of pass^5 from 12 runs, at p = 5/6:

    >>> import numpy as np
    >>> from passk import estimate_pass_hat_k
    >>> est = estimate_pass_hat_k(np.arange(13), 12, 5)
    >>> m = estimator_moments(est, 5 / 6, (5 / 6) ** 5)
    >>> bool(abs(m.bias) < 1e-12), f"{float(m.sd):.3f}", f"{float(m.rmse):.3f}"
    (True, '0.279', '0.279')
    """
    est = np.asarray(estimates, dtype=float)
    if est.ndim != 1 or est.size < 1:
        raise BadInput(f"estimates must be one value per count 0..n, got shape {est.shape}")
    n = est.size - 1
    rates = np.asarray(_probability(p, "p"), dtype=float)
    target = np.broadcast_to(np.asarray(truth, dtype=float), rates.shape)
    weights = stats.binom.pmf(np.arange(n + 1), n, rates[..., None])  # (..., n + 1)
    mean = weights @ est
    sd = np.sqrt(np.maximum(weights @ est**2 - mean**2, 0.0))
    rmse = np.sqrt(np.sum(weights * (est - target[..., None]) ** 2, axis=-1))
    return EstimatorMoments(mean, mean - target, sd, rmse)


def _enumerate(
    n: ArrayLike, k: ArrayLike, p: ArrayLike, method: str, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Binomial weights, interval ends and truth on a trailing axis of counts c.

    Returns ``(pmf, low, high, truth, undefined)``: ``pmf`` has the broadcast
    shape of ``n`` and ``p`` plus a last axis c = 0..max(n) (0 where c > n);
    ``low`` and ``high`` that of ``n`` and ``k`` plus the same axis; ``truth``
    is ``p**k`` with a length-1 last axis; ``undefined`` marks the (n, k) for
    which the method gives no interval for some c <= n. They broadcast together.
    """
    from scipy import stats
    if not isinstance(method, str) or method not in COVERAGE_METHODS:
        raise BadInput(f"method ({method!r}) must be one of {sorted(COVERAGE_METHODS)}")
    _confidence(confidence)
    n_ = _whole_numbers(n, "n", minimum=1)
    k_ = _whole_numbers(k, "k", minimum=1)
    p_ = _probability(p)
    c = np.arange(int(n_.max()) + 1)
    # the weights P(C = c), C ~ Binomial(n, p), do not depend on k: computed once per (n, p);
    # binom.pmf is 0 for c > n
    pmf = np.asarray(stats.binom.pmf(c, n_[..., None], p_[..., None]), dtype=float)
    # the intervals do not depend on p: computed once per (n, k)
    n_c, k_c = (a[..., None] for a in np.broadcast_arrays(n_, k_))
    valid = c <= n_c
    if method == "wilson":  # an interval for p, mapped through p -> p^k as the others are
        ends = np.frompyfunc(lambda cc, nn: tuple(wilson_ci(int(cc), int(nn),
                                                            confidence=confidence)), 2, 1)
        pairs = ends(np.minimum(c, n_c), np.broadcast_to(n_c, np.broadcast(c, n_c).shape))
        low = np.vectorize(lambda e: e[0], otypes=[float])(pairs) ** k_c
        high = np.vectorize(lambda e: e[1], otypes=[float])(pairs) ** k_c
    else:
        low, high = pass_hat_k_ci(np.minimum(c, n_c), n_c, k_c, confidence=confidence,
                                  method=method)
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    undefined = np.any(valid & (np.isnan(low) | np.isnan(high)), axis=-1)
    truth = np.asarray(p_[..., None] ** k_[..., None], dtype=float)
    return pmf, low, high, truth, undefined


def exact_coverage(n: ArrayLike, k: ArrayLike, p: ArrayLike, *, method: str = "exact",
                   confidence: float = 0.95) -> FloatOrArray:
    r"""The probability that a per-task interval for pass^k contains the true p^k.

    Parameters
    ----------
    n : int or array_like of int
        Runs per evaluation, at least 1.
    k : int or array_like of int
        Runs that must all succeed, at least 1.
    p : float or array_like of float
        The task's true single-run success rate, in [0, 1]. ``n``, ``k`` and
        ``p`` broadcast against each other, like numpy arrays.
    method : {'exact', 'blaker', 'bootstrap', 'wilson'}, default 'exact'
        The interval of :func:`passk.metrics.pass_hat_k_ci`: the exact
        Clopper–Pearson interval mapped through :math:`p \mapsto p^k`, or the
        chapter's percentile bootstrap (in its infinite-resample limit); or
        :func:`passk.metrics.wilson_ci` (an approximate interval for p, the
        chapter-7 pass rate's) mapped the same way.
    confidence : float, default 0.95
        The confidence the interval is computed at, the level it claims.

    Returns
    -------
    float or ndarray
        The coverage at each (n, k, p), in [0, 1]; a float when all three
        are scalars. NaN where the method gives no interval (the bootstrap
        when ``k > n``).

    Raises
    ------
    ValueError
        When ``method`` is not a key of :data:`passk.metrics.CI_METHODS`,
        ``n`` or ``k`` is not a whole number of at least 1, ``p`` is outside
        [0, 1] or ``confidence`` outside (0, 1); the message names the value.

    See Also
    --------
    expected_width : the mean width of the same intervals.
    passk.metrics.pass_hat_k_ci : the intervals themselves.

    Notes
    -----
    With :math:`[L(c), U(c)]` the interval computed from c successes in n
    runs, the coverage at p is a finite sum over the binomial:

    .. math::

        \mathrm{coverage}(p) = \sum_{c=0}^{n} \binom{n}{c} p^c (1-p)^{n-c}\,
        \mathbf{1}\bigl[L(c) \le p^k \le U(c)\bigr].

    It is exact, not simulated [1]_: no seed, no Monte Carlo error. An interval
    keeps its promise when the coverage is at least ``confidence`` at every p.
    The exact method does, because :math:`p^k \in [L^k, U^k]` exactly when
    :math:`p` is in the Clopper–Pearson interval, whatever k; its
    coverage is the Clopper–Pearson coverage of p. The percentile bootstrap
    does not: it returns [1, 1] whenever all n runs pass, which misses
    every :math:`p < 1`, and all n runs pass with probability :math:`p^n`,
    which is large exactly where reliability claims are made. Its coverage
    falls towards 0 as p approaches 1.

    The sum is taken on an (n + 1)-point axis of counts for every
    (n, k, p), with the intervals computed once per (n, k).

    References
    ----------
    .. [1] L. D. Brown, T. T. Cai and A. DasGupta, "Interval estimation for a
       binomial proportion", Statistical Science 16(2), 101–133, 2001
       (coverage computed by summing over the binomial). The methods' own
       references are in :func:`passk.metrics.pass_hat_k_ci`.

    Examples
    --------
    The chapter's 12 runs and pass^5, near p = 1:

    >>> p = [0.9, 0.95, 0.99, 0.995]
    >>> exact_coverage(12, 5, p, method="bootstrap").round(2)
    array([0.69, 0.46, 0.11, 0.06])
    >>> exact_coverage(12, 5, p).round(3)
    array([0.996, 0.98 , 0.994, 0.998])
    >>> bool(exact_coverage(12, 5, 0.95) == exact_coverage(12, 1, 0.95))
    True
    """
    pmf, low, high, truth, undefined = _enumerate(n, k, p, method, confidence)
    inside = (low <= truth) & (truth <= high)
    coverage = np.sum(pmf * inside, axis=-1)
    return _scalar_or_array(np.where(undefined, np.nan, coverage))


def expected_width(n: ArrayLike, k: ArrayLike, p: ArrayLike, *, method: str = "exact",
                   confidence: float = 0.95) -> FloatOrArray:
    r"""The mean width of a per-task interval for pass^k over n-run evaluations.

    Parameters
    ----------
    n, k, p, method, confidence
        As in :func:`exact_coverage`.

    Returns
    -------
    float or ndarray
        :math:`\sum_{c=0}^{n} \binom{n}{c} p^c (1-p)^{n-c}\,\bigl(U(c) - L(c)\bigr)`,
        exactly; NaN where the method gives no interval.

    Examples
    --------
    The bootstrap is narrow near p = 1 because it is usually [1, 1]:

    >>> round(expected_width(12, 5, 0.99, method="bootstrap"), 3)
    0.096
    >>> round(expected_width(12, 5, 0.99), 3)
    0.798
    """
    pmf, low, high, _, undefined = _enumerate(n, k, p, method, confidence)
    width = np.sum(pmf * np.where(np.isnan(high - low), 0.0, high - low), axis=-1)
    return _scalar_or_array(np.where(undefined, np.nan, width))


def _suite_sum_pmf(tasks: int, n: int, k: int, p: np.ndarray) -> np.ndarray:
    """P(S = s), s = 0..T C(n, k), for S = sum over T tasks of C(c_i, k), one row per p (FFT)."""
    from math import comb

    from scipy import stats

    scale = comb(n, k)
    size = tasks * scale + 1
    values = [comb(c, k) for c in range(n + 1)]  # C(c, k) per count c
    one = np.zeros((p.size, scale + 1))
    pmf_c = np.asarray(stats.binom.pmf(np.arange(n + 1)[None, :], n, p[:, None]))
    for c, value in enumerate(values):  # one task's distribution of C(c, k)
        one[:, value] += pmf_c[:, c]
    length = 1 << int(np.ceil(np.log2(size)))
    out = np.empty((p.size, size))
    for start in range(0, p.size, 32):  # in chunks, to bound the FFT's memory
        spectrum = np.fft.rfft(one[start:start + 32], n=length, axis=1) ** tasks
        out[start:start + 32] = np.fft.irfft(spectrum, n=length, axis=1)[:, :size]
    return np.clip(out, 0.0, None)


def _accepted_range(x: np.ndarray, theta: np.ndarray, size: int, alpha: float, *,
                    bernoulli: bool, spread: tuple[int, int, int] | None = None,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per theta, the indices ``[first, last]`` of the sorted means ``x`` the test accepts.

    The upper-tail bound falls as x grows and the lower-tail bound rises, so the accepted
    means are a run of consecutive indices, found by bisection on the index. ``spread``
    is passed to :func:`passk.stats.suite_interval._tail_bounds` (its exact-variance part).
    """
    from passk.stats.suite_interval import _tail_bounds

    half = alpha / 2
    top = x.size - 1

    def search(ok_at: Callable[[np.ndarray], np.ndarray], start_ok: np.ndarray,
               start_bad: np.ndarray) -> np.ndarray:
        ok, bad = start_ok.copy(), start_bad.copy()
        while np.any(np.abs(bad - ok) > 1):
            mid = (ok + bad) // 2
            good = ok_at(mid)
            ok, bad = np.where(good, mid, ok), np.where(good, bad, mid)
        return ok

    def upper_ok(i: np.ndarray) -> np.ndarray:  # x[i] not too large for theta
        return _tail_bounds(x[i], theta, size, bernoulli=bernoulli, upper=True,
                            spread=spread) > half

    def lower_ok(i: np.ndarray) -> np.ndarray:  # x[i] not too small for theta
        return _tail_bounds(x[i], theta, size, bernoulli=bernoulli, upper=False,
                            spread=spread) > half

    # the index of the mean nearest theta is accepted by both tails (each bound is 1 there
    # or above alpha/2); search outwards from it
    centre = np.clip(np.searchsorted(x, theta), 0, top)
    centre = np.where(lower_ok(centre) & upper_ok(centre), centre,
                      np.clip(centre - 1, 0, top))
    none = ~(lower_ok(centre) & upper_ok(centre))  # the test rejects every mean at theta
    last = np.where(upper_ok(np.full_like(centre, top)), top,
                    search(upper_ok, centre, np.full_like(centre, top)))
    first = np.where(lower_ok(np.zeros_like(centre)), 0,
                     search(lower_ok, centre, np.zeros_like(centre)))
    return np.where(none, 1, first), np.where(none, 0, last)  # none: an empty run


def identical_suite_coverage(tasks: int, n: int, k: int, p: ArrayLike, *,
                             confidence: float = 0.95, method: str = "hoeffding") -> FloatOrArray:
    r"""Exact coverage of a suite interval when all T tasks share one p.

    Parameters
    ----------
    tasks : int
        T, the number of tasks, at least 1 (at least
        :data:`passk.stats.suite_interval.SUITE_MIN_TASKS` for ``'score'``).
    n : int
        Runs per task.
    k : int
        Runs that must all succeed, ``1 <= k <= n``.
    p : float or array_like of float
        The tasks' common success rate, in [0, 1].
    confidence : float, default 0.95
        The level the interval is computed at.
    method : {'hoeffding', 'score'}, default 'hoeffding'
        The method of :func:`passk.mean_pass_hat_k_ci` (the default, or the former one).

    Returns
    -------
    float or ndarray
        The probability that the interval contains :math:`p^k`, one value per p:
        exact for ``'score'``, and for ``'hoeffding'`` when :math:`n \ge 2k`; a lower
        bound, computed exactly, for ``'hoeffding'`` when :math:`n < 2k` (see Notes).

    Notes
    -----
    The suite's estimate is :math:`S / (T \binom{n}{k})` with
    :math:`S = \sum_i \binom{c_i}{k}`, an integer. The distribution of S is the T-fold
    convolution of that of one task's :math:`\binom{c}{k}`,
    :math:`c \sim \mathrm{Binomial}(n, p)`, taken by FFT, so

    .. math:: \mathrm{coverage}(p) = \sum_{s} P(S = s)\,
              \mathbf{1}\bigl[L(s) \le p^k \le U(s)\bigr]

    is a finite sum: no simulation, no Monte Carlo error (the FFT's rounding is below
    1e-12). ``'score'`` depends on the runs only through S (and, for its all-fail bound,
    on whether every :math:`c_i` is 0). ``'hoeffding'``'s binomial-dominated part depends
    on S only, and the sum runs over the S its test accepts at :math:`\theta = p^k`
    (the test itself, so the interval's outward rounding only adds coverage). Where
    :math:`n < 2k` its union part (a function of every :math:`c_i`) is also intersected:
    then coverage :math:`\ge P(\text{part 1 covers}) - P(\text{some task's own interval
    misses})`, and the second term is :math:`1 - \mathrm{cov}_1^T` with
    :math:`\mathrm{cov}_1` the exact per-task coverage (:func:`exact_coverage`) at level
    :math:`1 - \alpha_u/T`; that lower bound is what is returned. Where the default is the
    exact product (always at T = 1, see :func:`passk.mean_pass_hat_k_ci`), the mean is
    covered whenever every task's own interval is, so :math:`\mathrm{cov}_1^T` at the
    per-task level :math:`1 - 2\beta` is returned (exact at T = 1).

    Examples
    --------
    Ten tasks at p = 0.9, n = k = 4, where the default before issue 17 covered 0.81:

    >>> round(identical_suite_coverage(10, 4, 4, 0.9), 4)
    0.98
    >>> round(identical_suite_coverage(10, 4, 4, 0.9, method="score"), 4)
    0.9765
    """
    from math import comb

    from passk.stats.suite_interval import (
        SUITE_MIN_TASKS,
        _all_fail_upper,
        _all_pass_lower,
        _product_chosen,
        _score_bounds,
        _sidak_side,
        _union_share,
    )

    alpha = 1.0 - _confidence(confidence)
    if method not in ("hoeffding", "score"):
        raise BadInput(f"method ({method!r}) must be one of ['hoeffding', 'score']")
    t = int(_whole_numbers(tasks, "tasks",
                           minimum=SUITE_MIN_TASKS if method == "score" else 1))
    n_ = int(_whole_numbers(n, "n", minimum=1))
    k_ = int(_whole_numbers(k, "k", minimum=1))
    if k_ > n_:
        raise BadInput(f"k ({k_}) must be at most n ({n_})")
    p_ = _probability(p)
    flat = np.atleast_1d(p_).astype(float).ravel()
    scale = comb(n_, k_)
    pmf = _suite_sum_pmf(t, n_, k_, flat)
    truth = flat ** k_
    x = np.arange(pmf.shape[1]) / (t * scale)
    if method == "hoeffding" and _product_chosen(((n_, t),), k_, alpha):
        # the exact product: every task's own interval holds with probability own^T
        own = np.atleast_1d(exact_coverage(n_, k_, flat,
                                           confidence=1.0 - 2.0 * _sidak_side(alpha, t)))
        return _scalar_or_array(np.clip(own**t, 0.0, 1.0).reshape(np.shape(p_)))
    if method == "hoeffding":
        share = _union_share(np.array([n_]), k_)
        first, last = _accepted_range(x, truth, (n_ // k_) * t, alpha * (1.0 - share),
                                      bernoulli=k_ in (1, n_), spread=(t, n_, k_))
        cumulative = np.concatenate([np.zeros((flat.size, 1)), np.cumsum(pmf, axis=1)], axis=1)
        rows = np.arange(flat.size)
        coverage = cumulative[rows, last + 1] - cumulative[rows, first]
        if share > 0:
            own = np.atleast_1d(exact_coverage(n_, k_, flat, confidence=1.0 - alpha * share / t))
            coverage = coverage - (1.0 - own**t)
        return _scalar_or_array(np.clip(coverage, 0.0, 1.0).reshape(np.shape(p_)))
    low, high = _score_bounds(x, t, n_, k_, alpha, bernoulli=k_ == n_)
    low[-1] = min(low[-1], _all_pass_lower(t, n_, k_, alpha))  # S at its top: every run passed
    inside = (low[None, :] <= truth[:, None]) & (truth[:, None] <= high[None, :])
    coverage = np.sum(pmf * inside, axis=1)
    # S = 0 with every run failed gets the all-fail upper end, raised if needed
    all_fail = (1.0 - flat) ** (n_ * t)
    raised = max(float(high[0]), _all_fail_upper(t, n_, k_, alpha))
    gained = (truth > high[0]) & (truth <= raised) & (truth >= low[0])
    coverage = coverage + np.where(gained, all_fail, 0.0)
    return _scalar_or_array(np.clip(coverage, 0.0, 1.0).reshape(np.shape(p_)))
