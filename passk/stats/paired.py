"""A change tested on paired runs: the exact McNemar (sign) test, Holm's correction, and the
test's size and power computed exactly by enumeration.

When a baseline and a variant run a task on the same seeds, run *i* of each is a pair.
Pairs that end alike say nothing about the change; of the discordant pairs, those the
variant *fixed* (failed before, passed after) and those it *broke* are, under the null
hypothesis that the change does not move the pass rate, equally likely. Conditional on
the number of discordant pairs :math:`d`, the fixed count is then
:math:`\\mathrm{Binomial}(d, 1/2)` whatever the task's pass rate or how the pairs
depend, so the exact test (:func:`paired_change_test`, scipy's ``binomtest``) has size
at most its level for every population, which :func:`paired_test_size` computes exactly.

References
----------
.. [1] Q. McNemar, "Note on the sampling error of the difference between correlated
   proportions or percentages", Psychometrika 12 (1947), 153-157.
.. [2] S. Holm, "A simple sequentially rejective multiple test procedure", Scandinavian
   Journal of Statistics 6 (1979), 65-70.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["PairedTest", "holm", "paired_change_test", "paired_p_values", "paired_test_power",
           "paired_test_size"]


@dataclass(frozen=True)
class PairedTest:
    """The exact paired test of a change on runs that pair up by seed.

    Attributes
    ----------
    fixed : int
        Pairs that failed before and pass after.
    broken : int
        Pairs that passed before and fail after.
    pairs : int
        All pairs compared.
    p_value : float
        Two-sided exact p-value (1 when no pair changed).
    """

    fixed: int
    broken: int
    pairs: int
    p_value: float

    @property
    def discordant(self) -> int:
        """Pairs whose outcome changed."""
        return self.fixed + self.broken


def paired_p_values(fixed: ArrayLike, broken: ArrayLike) -> np.ndarray:
    """Two-sided exact McNemar p-values, vectorized: :math:`\\min(1, 2 P(X \\le \\min(f, b)))`
    with :math:`X \\sim \\mathrm{Binomial}(f + b, 1/2)`.

    This is scipy's ``binomtest(f, f + b, 0.5).pvalue``: for p = 1/2 the binomial is
    symmetric, so the outcomes at most as likely as the one seen are the two tails.

    Examples
    --------
    >>> paired_p_values([5, 3, 0], [0, 3, 0]).round(4).tolist()
    [0.0625, 1.0, 1.0]
    """
    from scipy.stats import binom

    f = np.asarray(fixed, dtype=np.int64)
    b = np.asarray(broken, dtype=np.int64)
    if np.any(f < 0) or np.any(b < 0):
        raise ValueError("fixed and broken counts must be whole numbers >= 0")
    d = f + b
    p = 2.0 * binom.cdf(np.minimum(f, b), np.maximum(d, 1), 0.5)
    return np.where(d == 0, 1.0, np.minimum(1.0, p))


def paired_change_test(before: ArrayLike, after: ArrayLike) -> PairedTest:
    """Exact two-sided test that a change moved a task's pass rate, on runs paired by seed.

    Parameters
    ----------
    before, after : array_like of bool
        Run *i*'s outcome under the baseline and under the change, on the same seed.

    Returns
    -------
    PairedTest

    Notes
    -----
    The exact McNemar test: with :math:`f` fixed and :math:`b` broken pairs,
    :math:`p = \\min(1, 2\\,P(X \\le \\min(f, b)))`, :math:`X \\sim
    \\mathrm{Binomial}(f + b, 1/2)`; pairs that end alike are left out.

    Examples
    --------
    >>> t = paired_change_test([1, 1, 0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1])
    >>> t.fixed, t.broken, round(t.p_value, 4)
    (5, 0, 0.0625)
    """
    x = np.asarray(before, dtype=bool)
    y = np.asarray(after, dtype=bool)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"before and after must be paired 1-d outcomes, got shapes "
                         f"{x.shape} and {y.shape}")
    fixed = int(np.sum(~x & y))
    broken = int(np.sum(x & ~y))
    return PairedTest(fixed, broken, int(x.size), float(paired_p_values(fixed, broken)))


def holm(p_values: Sequence[float] | ArrayLike) -> np.ndarray:
    """Holm's step-down adjusted p-values: reject where ``adjusted <= alpha`` and the
    family-wise error rate is at most alpha, whatever the tests' dependence.

    Notes
    -----
    With the p-values sorted :math:`p_{(1)} \\le \\dots \\le p_{(m)}`, the adjusted value
    of :math:`p_{(i)}` is :math:`\\max_{j \\le i} \\min(1, (m - j + 1) p_{(j)})`.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.5]).round(3).tolist()
    [0.04, 0.09, 0.09, 0.5]
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError("p_values must be a 1-d sequence")
    if np.any(np.isnan(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def _rejects(n: int, alpha: float) -> np.ndarray:
    """reject[f, b] for f + b <= n: the exact test at level alpha."""
    f, b = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    return (paired_p_values(f, b) <= alpha) & (f + b <= n)


def _multinomial(n: int, p_fixed: float, p_broken: float) -> np.ndarray:
    """P(f fixed, b broken) of n independent pairs, as a table over f + b <= n: the
    discordant count is Binomial(n, q), q = p_fixed + p_broken, and of those the fixed
    count Binomial(d, p_fixed / q)."""
    from scipy.stats import binom

    f, b = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    q = min(1.0, p_fixed + p_broken)
    if q == 0:
        prob = np.zeros((n + 1, n + 1))
        prob[0, 0] = 1.0
        return prob
    d = f + b
    prob = binom.pmf(d, n, q) * binom.pmf(f, d, min(1.0, p_fixed / q))
    return np.asarray(np.where(d <= n, prob, 0.0), dtype=float)


def _check(n: Any, p_fixed: float, p_broken: float, alpha: float) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n ({n!r}) must be a whole number >= 1")
    if not (0 <= p_fixed <= 1 and 0 <= p_broken <= 1 and p_fixed + p_broken <= 1 + 1e-12):
        raise ValueError(f"p_fixed ({p_fixed!r}) and p_broken ({p_broken!r}) must be "
                         "probabilities summing to at most 1")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha ({alpha!r}) must lie strictly between 0 and 1")


def paired_test_power(n: int, p_fixed: float, p_broken: float = 0.0, *,
                      alpha: float = 0.05) -> float:
    """Exact probability that :func:`paired_change_test` rejects at ``alpha``, for ``n``
    independent pairs each fixed with probability ``p_fixed`` and broken with ``p_broken``.

    Computed by summing the multinomial over every (fixed, broken) outcome.

    Examples
    --------
    A variant that turns every failure into a pass, on a task failing 1 run in 6, with
    60 pairs (about 10 failures to fix):

    >>> round(paired_test_power(60, 1 / 6, alpha=0.05), 3)
    0.949
    >>> paired_test_power(10, 0.0)   # nothing changes: never shown
    0.0
    """
    _check(n, p_fixed, p_broken, alpha)
    return float(np.sum(_multinomial(int(n), p_fixed, p_broken)[_rejects(int(n), alpha)]))


def paired_test_size(n: int, discordance: float, *, alpha: float = 0.05) -> float:
    """Exact rejection rate of :func:`paired_change_test` under the null: ``n`` pairs, each
    discordant with probability ``discordance``, fixed or broken alike.

    Never above ``alpha`` (the test is exact conditional on the discordant count).

    Examples
    --------
    >>> paired_test_size(30, 0.3, alpha=0.05) <= 0.05
    True
    """
    if not 0 <= discordance <= 1:
        raise ValueError(f"discordance ({discordance!r}) must lie in [0, 1]")
    return paired_test_power(n, discordance / 2, discordance / 2, alpha=alpha)
