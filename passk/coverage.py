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

import numpy as np

from .metrics import (
    CI_METHODS,
    ArrayLike,
    FloatOrArray,
    _confidence,
    _probability,
    _scalar_or_array,
    _whole_numbers,
    pass_hat_k_ci,
)

__all__ = ["exact_coverage", "expected_width"]


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
    if method not in CI_METHODS:
        raise ValueError(f"method ({method!r}) must be one of {sorted(CI_METHODS)}")
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
    method : {'exact', 'bootstrap'}, default 'exact'
        The interval of :func:`passk.metrics.pass_hat_k_ci`: the exact
        Clopper–Pearson interval mapped through :math:`p \mapsto p^k`, or the
        chapter's percentile bootstrap (in its infinite-resample limit).
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
