r"""Many versions, one table: rank N versions on mean pass^k into tie groups, family-wise.

Each ordered pair of versions (i, j) is one hypothesis
:math:`H_{ij}: \mu_i \le \mu_j` (version i is *not* better than j on the mean over the
suite's tasks of pass^k). Rejecting :math:`H_{ij}` is the claim "i is better than j".
There are :math:`2m` of them, :math:`m = N(N-1)/2`. Each gets the one-sided p-value of
passk's proved paired comparison (:func:`passk.stats.compare.compare_pass_hat_k`, the
one ``passk diff`` uses, :func:`pairwise_p_values`), and the claims are made by
Shaffer's step-down procedure over the 2m one-sided hypotheses
(:func:`step_down`), which controls the family-wise error at level α: with
probability at least 1 - α, every claim in the table is true, whatever the versions'
true means, the dependence between the comparisons (they share versions), the number
of runs per task, or the tasks.

Why this construction
---------------------
* The proof needs only that each p-value is valid (:math:`P(p_{ij} \le u) \le u` under
  :math:`H_{ij}`). The pairwise comparison's *proved* part is its betting capital
  :math:`K_{ij}` (bets fixed by the design before the data), a nonnegative variable
  with expectation at most 1 under :math:`H_{ij}`, so :math:`\min(1, 1/K_{ij})` is valid
  by Markov's inequality; the p-value taken is the largest of that and the comparison's
  other three (the paired t, the Edgeworth-corrected t, the binomial floor), each
  halved to the side observed. So a rank never separates two versions that
  ``passk diff`` at the same per-side level would not.
* Bonferroni over the m pairs (each two-sided at level α/m, i.e. each side at
  α/(2m)) is the *first step* of the procedure, so the procedure claims everything
  Bonferroni claims, and more.
* Holm (1979) over the 2m one-sided hypotheses divides α by 2m - s + 1 at step s.
  Shaffer (1986, method 1) divides by :math:`t_s`, the largest number of the 2m
  hypotheses that can be true when s - 1 of them are false. Here the true ones are
  the pairs in their true order plus both directions of every tie: with the versions
  in blocks of equal true means of sizes :math:`b_g`, :math:`m + \sum_g\binom{b_g}{2}`
  are true. So :math:`t_s = m + \max\{S \in \mathcal S_N : S \le m - s + 1\}`, with
  :math:`\mathcal S_N` the sums :math:`\sum_g \binom{b_g}{2}` over the partitions of
  N (:func:`shaffer_divisors`). :math:`t_1 = 2m` (Bonferroni), but
  :math:`t_2 = 2m - N + 1` where Holm's is 2m - 1: after one claim, at least N - 1
  tie-pairs are gone. Proof (Shaffer 1986): at the step s where the first true
  hypothesis is rejected, the s - 1 before it were false, so the number
  :math:`n_0` of true hypotheses is at most :math:`t_s`, and that rejection needs
  :math:`p \le \alpha/t_s \le \alpha/n_0`; so a false claim needs
  :math:`\min_{H \text{ true}} p_H \le \alpha/n_0`, of probability at most
  :math:`n_0 \cdot \alpha/n_0 = \alpha` (Bonferroni over the true ones), under any
  dependence. Shaffer's method 2 (conditioning on *which* hypotheses were rejected)
  is more powerful still but needs a search over orderings per step; closed testing
  in full is exponential in 2m.
* A claim i > j is made only when version i's mean is above j's (else its p-value
  is 1), and the claims are closed under transitivity (i > j and j > l give i > l):
  when every claim is true, so is every claim the closure adds, at no cost in error.

Tie groups
----------
The versions are sorted by mean pass^k. A **cut** between two neighbours in that order
is *proved* when every version above it is claimed better than every version below
it. The **tie groups** are the runs of versions between proved cuts: every version of
a group is shown better than every version of every lower group, and so
"X is in a lower tie group than Y" means X is shown worse than Y and than every
version of Y's group. Inside a group some pairs may still be separated; each
version's **rank interval** :math:`[1 + \#\{\text{shown better}\}, N -
\#\{\text{shown worse}\}]` says how far. All of these statements (the cuts, the
rank intervals, "could be the best": a rank interval starting at 1) hold together
with probability at least 1 - α, because each follows from the claims.

The noise of one version
------------------------
From each task's n runs with c successes (:func:`noise_floor`): two distinct runs
of the task disagree with probability :math:`2p(1-p)`, estimated without bias by the
**flip rate** :math:`f = 2c(n-c)/(n(n-1))` (the share of the
:math:`\binom n2` pairs of its runs that disagree); the suite's flip rate is its
mean over tasks. One run of every task gives a suite score (its pass rate) whose
variance is :math:`\sum_i p_i(1-p_i)/T^2`, estimated without bias from
:math:`c(n-c)/(n(n-1))` per task: the **single-run noise floor** is its square root,
and two identical single runs differ by more than
:math:`z_{1-\alpha/2}\sqrt2\,\mathrm{sd}` with probability about α (the rerun band).

References
----------
.. [1] J. P. Shaffer, "Modified sequentially rejective multiple test procedures",
   J. Amer. Statist. Assoc. 81(395), 826-831, 1986.
.. [2] S. Holm, "A simple sequentially rejective multiple test procedure",
   Scand. J. Stat. 6(2), 65-70, 1979.
.. [3] I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random variables
   by betting", J. R. Stat. Soc. B 86(1), 1-27, 2024.
.. [4] S. Yao et al., "tau-bench", arXiv:2406.12045, 2024 (pass^k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from passk._validation import counts as _counts
from passk.metrics import estimate_pass_hat_k
from passk.stats import _checks as check
from passk.stats.compare import (
    _blocks,
    _floor_test,
    _floor_weight,
    _log_capital,
    _skew_t,
    mean_of,
    paired_difference_test,
)

__all__ = ["PROCEDURES", "NoiseFloor", "Ranking", "bet_level", "noise_floor",
           "pairwise_p_values", "rank_versions", "shaffer_divisors", "step_down",
           "tie_groups"]

#: Step-down procedures over the 2m one-sided hypotheses; the first is the default.
PROCEDURES = ("shaffer", "holm", "bonferroni")


@lru_cache(maxsize=64)
def _tie_sums(n_versions: int) -> frozenset[int]:
    """Every :math:`\\sum_g \\binom{b_g}{2}` over the partitions of ``n_versions``."""
    sums: list[set[int]] = [set() for _ in range(n_versions + 1)]
    sums[0].add(0)
    for size in range(1, n_versions + 1):  # unbounded knapsack over block sizes
        pairs = size * (size - 1) // 2
        for total in range(size, n_versions + 1):
            sums[total] |= {s + pairs for s in sums[total - size]}
    return frozenset(sums[n_versions])


def shaffer_divisors(n_versions: int, procedure: str = "shaffer") -> np.ndarray:
    r"""The divisors :math:`t_s` of α at each step s = 1..2m of the step-down.

    Parameters
    ----------
    n_versions : int
        N, at least 2.
    procedure : {'shaffer', 'holm', 'bonferroni'}
        ``'shaffer'``: :math:`t_s = m + \max\{S \in \mathcal S_N: S \le m-s+1\}`, the
        most hypotheses that can be true when s - 1 are false (0 where s - 1 > m:
        no step there). ``'holm'``: :math:`2m - s + 1`. ``'bonferroni'``: 2m at
        every step (one step: each pair's two sides at α/(2m)).

    Returns
    -------
    numpy.ndarray of int, shape (2m,)

    Examples
    --------
    >>> shaffer_divisors(3).tolist()  # m = 3: after one claim, at most 4 can be true
    [6, 4, 4, 3, 0, 0]
    >>> shaffer_divisors(3, "holm").tolist()
    [6, 5, 4, 3, 2, 1]
    """
    n = check.whole(n_versions, "n_versions", minimum=2)
    check.choice(procedure, "procedure", PROCEDURES)
    m = n * (n - 1) // 2
    steps = np.arange(1, 2 * m + 1)
    if procedure == "holm":
        return 2 * m - steps + 1
    if procedure == "bonferroni":
        return np.full(2 * m, 2 * m)
    sums = sorted(_tie_sums(n))
    out = np.zeros(2 * m, dtype=np.int64)
    for s in steps.tolist():
        room = m - s + 1
        fits = [x for x in sums if x <= room]
        out[s - 1] = m + max(fits) if fits else 0
    return out


def bet_level(alpha: float, n_versions: int) -> float:
    """The side level the betting p-values' bets are tuned to, fixed by the design:
    α/(2m), the first step's (for two versions α/2, as ``passk diff`` at 1 - α)."""
    m = n_versions * (n_versions - 1) // 2
    return alpha / (2 * max(m, 1))


def pairwise_p_values(h: npt.ArrayLike, n: npt.ArrayLike, k: int, *,
                      bet_alpha: float) -> np.ndarray:
    r"""One-sided p-values for "version i is better than version j", every ordered pair.

    Parameters
    ----------
    h : array_like, shape (..., N, T)
        Each version's unbiased pass^k on each task (the same T tasks in every version);
        leading axes are independent replicates.
    n : array_like, shape (..., N, T)
        Runs per task (at least k), broadcast against ``h``.
    k : int
        The k of pass^k (for the blocks of runs the bets see).
    bet_alpha : float
        The side level the bets are tuned to (:func:`bet_level`); fixed before the data.

    Returns
    -------
    numpy.ndarray, shape (..., N, N)
        ``p[..., i, j]`` for :math:`H_{ij}: \mu_i \le \mu_j`; 1 on the diagonal and
        wherever version i's mean is not above version j's.

    Notes
    -----
    For :math:`d = \hat h_i - \hat h_j` with :math:`\bar d > 0`,
    :math:`p_{ij} = \max(\min(1, 1/K_{ij}),\, p_t/2,\, p_{\text{skew}}/2,\,
    p_{\text{floor}}/2)`: :math:`K_{ij}` the betting capital of
    :func:`passk.stats.compare.compare_pass_hat_k` against :math:`\mu_i - \mu_j \le 0`
    (valid: :math:`\mathrm E K_{ij} \le 1` under :math:`H_{ij}`), the others the
    comparison's two-sided p-values halved to the side observed. Since
    :math:`p_{ij} \ge \min(1, 1/K_{ij})`, :math:`P(p_{ij} \le u) \le u`.

    Examples
    --------
    >>> h = np.array([[1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0] * 5,
    ...               [0.0, 0.5, 0.0, 0.5, 0.0, 0.5, 0.0, 0.5] * 5])
    >>> p = pairwise_p_values(h, 4, 2, bet_alpha=0.025)
    >>> bool(p[0, 1] < 1e-6), float(p[1, 0])
    (True, 1.0)
    """
    from scipy import stats
    h_ = np.asarray(h, dtype=float)
    if h_.ndim < 2 or h_.shape[-2] < 2 or h_.shape[-1] < 2:
        raise ValueError(f"h (shape {h_.shape}) needs at least 2 versions and 2 tasks")
    n_ = np.broadcast_to(np.asarray(n, dtype=float), h_.shape)
    versions, t_count = h_.shape[-2], h_.shape[-1]
    ii, jj = np.triu_indices(versions, 1)
    hi, hj = h_[..., ii, :], h_[..., jj, :]  # (..., m, T): pair (i, j) with i < j
    ni, nj = n_[..., ii, :], n_[..., jj, :]
    d = hi - hj
    mean = d.mean(axis=-1)
    p_t = paired_difference_test(d, method="t").p_value
    p_skew = _skew_t(d, 0.05).p_value
    q = float(stats.t.ppf(0.975, t_count - 1))  # the floor's p-value does not use its level
    _, _, p_floor = _floor_test(hj, hi, _floor_weight(k, nj), _floor_weight(k, ni), q,
                                t_count - 1, skew=((k / nj) ** 2, (k / ni) ** 2), search=False)
    zero = np.zeros(mean.shape)
    bi, bj = _blocks(k, ni, hi.shape), _blocks(k, nj, hj.shape)
    log_up = _log_capital(hj, hi, bj, bi, zero, bet_alpha)  # against mu_i <= mu_j
    log_down = _log_capital(hi, hj, bi, bj, zero, bet_alpha)  # against mu_j <= mu_i
    halves = np.maximum.reduce([np.asarray(p_t), np.asarray(p_skew), np.asarray(p_floor)]) / 2
    p_up = np.maximum(halves, np.minimum(1.0, np.exp(-log_up)))
    p_down = np.maximum(halves, np.minimum(1.0, np.exp(-log_down)))
    out = np.ones((*h_.shape[:-2], versions, versions))
    out[..., ii, jj] = np.where(mean > 0, p_up, 1.0)
    out[..., jj, ii] = np.where(mean < 0, p_down, 1.0)
    return np.minimum(out, 1.0)


def step_down(p: npt.ArrayLike, alpha: float, procedure: str = "shaffer") -> np.ndarray:
    r"""The claims of a step-down procedure over the one-sided p-values of every ordered pair.

    Parameters
    ----------
    p : array_like, shape (..., N, N)
        ``p[..., i, j]`` for "i is better than j" (:func:`pairwise_p_values`); the
        diagonal is ignored.
    alpha : float
        The family-wise error allowed, in (0, 1).
    procedure : {'shaffer', 'holm', 'bonferroni'}
        The divisors (:func:`shaffer_divisors`).

    Returns
    -------
    numpy.ndarray of bool, shape (..., N, N)
        ``claims[..., i, j]``: i is shown better than j, closed under transitivity.

    Notes
    -----
    The 2m off-diagonal p-values are sorted; step s rejects when
    :math:`p_{(s)} \le \alpha / t_s` and the procedure stops at the first step that
    does not (ties in p are taken in a fixed order; a tie can only be rejected
    together, as the divisors do not increase).

    Examples
    --------
    >>> p = np.array([[1, 0.004, 0.001], [1, 1, 0.02], [1, 1, 1]])
    >>> step_down(p, 0.05).astype(int).tolist()  # 0.001 <= .05/6, .004 <= .05/4, .02 <= .05/2.5?
    [[0, 1, 1], [0, 0, 0], [0, 0, 0]]
    >>> step_down(p, 0.1).astype(int).tolist()  # .02 <= .1/4: 2 is shown worse than 1 too
    [[0, 1, 1], [0, 0, 1], [0, 0, 0]]
    """
    p_ = np.asarray(p, dtype=float)
    if p_.ndim < 2 or p_.shape[-1] != p_.shape[-2] or p_.shape[-1] < 2:
        raise ValueError(f"p (shape {p_.shape}) must be square over at least 2 versions")
    alpha = check.real(alpha, "alpha", low=0.0, high=1.0, open_low=True, open_high=True)
    versions = p_.shape[-1]
    off = ~np.eye(versions, dtype=bool)
    flat = p_[..., off]  # (..., 2m)
    divisors = shaffer_divisors(versions, procedure).astype(float)
    with np.errstate(divide="ignore"):
        limits = np.where(divisors > 0, alpha / np.where(divisors > 0, divisors, 1.0), -1.0)
    order = np.argsort(flat, axis=-1, kind="stable")
    ok = np.take_along_axis(flat, order, axis=-1) <= limits
    count = np.cumprod(ok, axis=-1).sum(axis=-1)  # steps passed before the first failure
    rank_of = np.empty_like(order)
    np.put_along_axis(rank_of, order, np.arange(flat.shape[-1]), axis=-1)
    rejected = rank_of < count[..., None]
    claims = np.zeros(p_.shape, dtype=bool)
    claims[..., off] = rejected
    return _closure(claims)


def _closure(claims: np.ndarray) -> np.ndarray:
    """Transitive closure (Warshall) over the last two axes."""
    out = claims.copy()
    for via in range(out.shape[-1]):
        out |= out[..., :, via, None] & out[..., None, via, :]
    return out


def tie_groups(claims: npt.ArrayLike, means: npt.ArrayLike
               ) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """The order by mean and the tie groups: runs of versions between proved cuts.

    Parameters
    ----------
    claims : array_like of bool, shape (N, N)
        ``claims[i, j]``: i shown better than j (closed, consistent with the means).
    means : array_like, shape (N,)

    Returns
    -------
    order : tuple of int
        The versions by mean, highest first (ties by position).
    groups : tuple of tuple of int
        The tie groups in order; a cut after position p of ``order`` is proved when every
        version up to p is shown better than every version after it.

    Examples
    --------
    >>> c = np.zeros((4, 4), bool); c[0, 2:] = c[1, 2:] = c[2, 3] = True
    >>> tie_groups(c, [0.9, 0.8, 0.5, 0.2])
    ((0, 1, 2, 3), ((0, 1), (2,), (3,)))
    >>> c[1, 2] = False  # 1 and 2 not told apart: no cut between {0, 1} and {2}
    >>> tie_groups(c, [0.9, 0.8, 0.5, 0.2])[1]
    ((0, 1, 2), (3,))
    """
    c = np.asarray(claims, dtype=bool)
    m = np.asarray(means, dtype=float)
    order = tuple(int(i) for i in np.argsort(-m, kind="stable"))
    sorted_claims = c[np.ix_(order, order)]
    groups: list[tuple[int, ...]] = []
    start = 0
    for cut in range(1, len(order)):
        if sorted_claims[:cut, cut:].all():
            groups.append(order[start:cut])
            start = cut
    groups.append(order[start:])
    return order, tuple(groups)


@dataclass(frozen=True)
class Ranking:
    """N versions ranked on mean pass^k with a family-wise error (see :func:`rank_versions`)."""

    k: int
    confidence: float
    procedure: str
    means: tuple[float, ...]
    p_values: np.ndarray  # (N, N): one-sided, "row better than column"
    claims: np.ndarray  # (N, N) bool, closed
    order: tuple[int, ...]
    groups: tuple[tuple[int, ...], ...]
    tasks: int
    left_out: int

    @property
    def rank_intervals(self) -> tuple[tuple[int, int], ...]:
        """Each version's [best, worst] rank: 1 + versions shown better, N - shown worse."""
        n = len(self.means)
        above, below = self.claims.sum(axis=0), self.claims.sum(axis=1)
        return tuple((1 + int(a), n - int(b)) for a, b in zip(above, below, strict=True))

    def group_of(self, version: int) -> int:
        """The index (0 = top) of a version's tie group."""
        return next(g for g, members in enumerate(self.groups) if version in members)

    def shown_worse(self, version: int, than: int) -> bool:
        """Whether ``version`` is shown worse than ``than`` (a claim of the table)."""
        return bool(self.claims[than, version])

    def __repr__(self) -> str:
        return (f"Ranking(k={self.k}, confidence={self.confidence:g}, order={self.order}, "
                f"groups={self.groups}, tasks={self.tasks}, left_out={self.left_out}, "
                f"procedure={self.procedure!r})")


def rank_versions(c: npt.ArrayLike, n: npt.ArrayLike, k: int, *, confidence: float = 0.95,
                  procedure: str = "shaffer") -> Ranking:
    r"""Rank N versions on mean pass^k: claims, tie groups and rank intervals, family-wise.

    Parameters
    ----------
    c, n : array_like of int, shape (N, T)
        Successes and runs of each version (rows) on each task (columns; the same task in
        every row).
    k : int
        Runs that must all succeed. A task with fewer than k runs in any version is left
        out of the whole table (and counted), so every mean is over the same tasks.
    confidence : float, default 0.95
        1 - α: every claim of the table (and so every cut, rank interval and tie group)
        holds together with at least this probability.
    procedure : {'shaffer', 'holm', 'bonferroni'}, default 'shaffer'
        See :func:`step_down`; the default is the most powerful of the three, and all
        three are proved.

    Returns
    -------
    Ranking

    Notes
    -----
    :math:`\hat h_{vi} = \binom{c_{vi}}{k}/\binom{n_{vi}}{k}`, means
    :math:`\bar h_v`; one-sided p-values from :func:`pairwise_p_values` (bets tuned to
    α/(2m)); claims from :func:`step_down`; groups from :func:`tie_groups`. See the
    module's notes for the proof and the definitions.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(0.3, 1.0, 80)
    >>> c = np.stack([rng.binomial(8, np.clip(p + s, 0, 1)) for s in (0.25, 0.0, 0.0, -0.3)])
    >>> r = rank_versions(c, 8, 2)
    >>> r.groups, r.rank_intervals
    (((0,), (2, 1), (3,)), ((1, 1), (2, 3), (2, 3), (4, 4)))
    """
    c_, n_ = _counts(check.whole_array(c, "c"), check.whole_array(n, "n"))
    c_, n_ = np.broadcast_arrays(c_, n_)
    if c_.ndim != 2 or c_.shape[0] < 2:
        raise ValueError(f"counts must be 2-D (versions, tasks) with at least 2 versions, "
                         f"not shape {c_.shape}")
    k_ = check.whole(k, "k", minimum=1)
    conf = check.confidence(confidence)
    check.choice(procedure, "procedure", PROCEDURES)
    keep = (n_ >= k_).all(axis=0)
    versions, tasks = c_.shape[0], int(keep.sum())
    h = np.asarray(estimate_pass_hat_k(c_[:, keep], n_[:, keep], k_), dtype=float)
    h = h.reshape(versions, tasks)
    means = tuple(mean_of(row) for row in h)
    alpha = 1.0 - conf
    if tasks >= 2:
        p = pairwise_p_values(h, n_[:, keep], k_, bet_alpha=bet_level(alpha, versions))
        claims = step_down(p, alpha, procedure)
    else:  # one task (or none) says nothing about a population of tasks
        p = np.ones((versions, versions))
        claims = np.zeros((versions, versions), dtype=bool)
    order, groups = tie_groups(claims, [m if math.isfinite(m) else -1.0 for m in means])
    return Ranking(k_, conf, procedure, means, p, claims, order, groups, tasks,
                   int((~keep).sum()))


@dataclass(frozen=True)
class NoiseFloor:
    """One version's run-to-run noise (see :func:`noise_floor`)."""

    single_run_sd: float  # sd of one run's suite pass rate
    rerun_band: float  # two identical single runs differ by more with probability ~ alpha
    flip_rate: float  # mean over tasks of P(two runs of a task disagree)
    task_flip_rates: np.ndarray  # per task (NaN where n < 2)
    mixed_share: float  # share of tasks with both a pass and a fail among their runs
    tasks: int  # tasks with at least 2 runs (the ones measured)
    confidence: float

    def __repr__(self) -> str:
        return (f"NoiseFloor(single_run_sd={self.single_run_sd:.4f}, "
                f"rerun_band={self.rerun_band:.4f} ({self.confidence:.0%}), "
                f"flip_rate={self.flip_rate:.4f}, mixed_share={self.mixed_share:.4f}, "
                f"tasks={self.tasks})")


def noise_floor(c: npt.ArrayLike, n: npt.ArrayLike, *, confidence: float = 0.95) -> NoiseFloor:
    r"""A version's single-run noise floor and flip rate, from its repeats.

    Parameters
    ----------
    c, n : array_like of int, shape (T,)
        Successes and runs per task; tasks with fewer than 2 runs are left out.
    confidence : float, default 0.95
        The level of the rerun band.

    Returns
    -------
    NoiseFloor

    Notes
    -----
    Per task, :math:`v = c(n-c)/(n(n-1))` is unbiased for :math:`p(1-p)`, the
    variance of one run; the flip rate :math:`f = 2v` is the share of the task's
    :math:`\binom n2` pairs of runs that disagree, unbiased for :math:`2p(1-p)`. One
    run of each of the T tasks has a pass rate with variance :math:`\sum p(1-p)/T^2`;
    ``single_run_sd`` is :math:`\sqrt{\sum v}/T`, and ``rerun_band`` is
    :math:`z_{1-\alpha/2}\sqrt 2\,` ``single_run_sd``: the difference of two
    independent single runs of the same version has variance :math:`2\sum
    p(1-p)/T^2`, and exceeds the band with probability about α (normal
    approximation). ``flip_rate`` is the mean of f; ``mixed_share`` the share of tasks
    with 0 < c < n (which grows with n, unlike the flip rate).

    Examples
    --------
    >>> nf = noise_floor([4, 0, 2, 3, 1], 4)
    >>> round(nf.flip_rate, 4), round(nf.single_run_sd, 4), round(nf.rerun_band, 4)
    (0.3333, 0.1826, 0.5061)
    >>> nf.task_flip_rates.round(3).tolist()
    [0.0, 0.0, 0.667, 0.5, 0.5]
    """
    from scipy import special
    c_, n_ = _counts(check.whole_array(c, "c"), check.whole_array(n, "n"))
    c_, n_ = np.broadcast_arrays(c_, n_)
    conf = check.confidence(confidence)
    c_, n_ = c_.ravel().astype(float), n_.ravel().astype(float)
    ok = n_ >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(ok, c_ * (n_ - c_) / (n_ * (n_ - 1)), np.nan)
    tasks = int(ok.sum())
    if tasks == 0:
        return NoiseFloor(math.nan, math.nan, math.nan, 2 * v, math.nan, 0, conf)
    sd = math.sqrt(math.fsum(v[ok].tolist())) / tasks
    z = float(special.ndtri(1 - (1 - conf) / 2))
    mixed = float(((c_ > 0) & (c_ < n_))[ok].mean())
    return NoiseFloor(sd, z * math.sqrt(2) * sd, mean_of(2 * v[ok]), 2 * v, mixed, tasks, conf)


def simulate_claims(rates: Any, runs: Any, k: int, *, confidence: float,
                    replicates: int, procedure: str | tuple[str, ...] = "shaffer",
                    rng: int | np.random.Generator | None = None) -> dict[str, np.ndarray]:
    """Monte Carlo of the table: each replicate draws every version's runs and ranks them.

    Parameters
    ----------
    rates : array_like, shape (N, T)
        Each version's true success rate per task (the suite's tasks, fixed).
    runs : array_like of int, broadcast to (N, T)
        Runs per task and version (at least k).
    k, confidence, procedure
        As :func:`rank_versions` (several procedures share the draws).
    replicates : int
    rng : int, numpy.random.Generator or None

    Returns
    -------
    dict
        Per procedure, the claims of every replicate, shape (replicates, N, N).
    """
    gen = np.random.default_rng(rng)
    p = np.asarray(rates, dtype=float)
    n_ = np.broadcast_to(np.asarray(runs, dtype=np.int64), p.shape)
    alpha = 1.0 - confidence
    c = gen.binomial(n_, p, size=(replicates, *p.shape))
    h = np.asarray(estimate_pass_hat_k(c, np.broadcast_to(n_, c.shape), k), dtype=float)
    pv = pairwise_p_values(h, n_, k, bet_alpha=bet_level(alpha, p.shape[0]))
    procs = (procedure,) if isinstance(procedure, str) else procedure
    return {name: step_down(pv, alpha, name) for name in procs}
