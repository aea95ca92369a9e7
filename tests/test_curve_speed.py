"""Issue 41: the curve's fast variance majorant gives the numbers the old one gave, bit for bit.

The reference is the old :func:`passk.stats.suite_interval._variance_majorant` (commit
37b088b), copied below as it was: a loop over j raising every grid point to every power.
The new one takes the powers of the grid points shared by every k from a table kept per
n; the suite intervals, the curve and the printed report are compared with the reference
patched in, on random designs (mixed n, n < k, n = 1, T = 1..5 and larger, confidence
0.90 / 0.95 / 0.99), for exact equality.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pytest

from passk.analysis.report import format_curve, suite_curve
from passk.stats import suite_interval
from passk.stats.suite_interval import _log_comb, mean_pass_hat_k_ci


def _reference_majorant(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The old ``_variance_majorant``, verbatim (without its cache)."""
    grid = np.linspace(0.0, 1.0, 2001)
    p = np.unique(np.concatenate([grid, grid ** (1.0 / k), 1.0 - np.geomspace(1e-9, 0.5, 600),
                                  [0.0, 1.0]]))
    log_pairs = float(_log_comb(float(n), k))
    a, b = p[:-1], p[1:]
    u = np.zeros(a.size)
    for j in range(max(1, 2 * k - n), k + 1):
        h_j = float(np.exp(_log_comb(float(k), j) + _log_comb(float(n - k), k - j) - log_pairs))
        u += h_j * (b ** (2 * k - j) - a ** (2 * k))
    u = np.maximum(u, 0.0) * (1.0 + 1e-12) + 1e-300
    w = np.maximum(np.concatenate([u[:1], u]), np.concatenate([u, u[-1:]]))
    theta = p**k
    xs, ys = theta.tolist(), w.tolist()
    hull: list[int] = []
    for i, (xi, yi) in enumerate(zip(xs, ys)):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            if (xs[i1] - xs[i0]) * (yi - ys[i0]) - (ys[i1] - ys[i0]) * (xi - xs[i0]) >= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return theta[hull], w[hull]


#: The reference with a cache, as the code it replaces had (log_ratio asks at every step).
_cached_reference = lru_cache(maxsize=256)(_reference_majorant)


def _clear() -> None:
    for f in (suite_interval._variance_majorant, suite_interval._groups,
              suite_interval._width_at_half, suite_interval._product_chosen,
              suite_interval._shared_powers, _cached_reference):
        if hasattr(f, "cache_clear"):
            f.cache_clear()


@pytest.fixture
def reference(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A switch: ``reference(True)`` puts the old majorant in place, ``False`` the new."""
    fast = suite_interval._variance_majorant

    def use(old: bool) -> None:
        _clear()
        monkeypatch.setattr(suite_interval, "_variance_majorant",
                            _cached_reference if old else fast)

    yield use
    _clear()


@pytest.mark.parametrize(("n", "k"), [(1, 1), (2, 1), (2, 2), (3, 2), (4, 4), (5, 3), (12, 5),
                                      (12, 12), (13, 7), (40, 1), (40, 20), (40, 21), (99, 50),
                                      (150, 149), (300, 100)])
def test_majorant_is_the_reference_bit_for_bit(n: int, k: int) -> None:
    _clear()
    vertices, values = suite_interval._variance_majorant(n, k)
    ref_vertices, ref_values = _reference_majorant(n, k)
    assert vertices.tobytes() == ref_vertices.tobytes()
    assert values.tobytes() == ref_values.tobytes()


def test_majorant_without_the_table_is_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the table's size (large n) the powers are all raised directly: the same numbers."""
    monkeypatch.setattr(suite_interval, "_POWER_TABLE_MAX", 0)
    _clear()
    for n, k in [(30, 4), (30, 17), (8, 8)]:
        got, ref = suite_interval._variance_majorant(n, k), _reference_majorant(n, k)
        assert got[0].tobytes() == ref[0].tobytes() and got[1].tobytes() == ref[1].tobytes()
    _clear()


def test_the_table_is_shared_across_k() -> None:
    """Each k of one n reads the rows of the others: the rows asked for are filled once."""
    _clear()
    for k in range(1, 21):
        suite_interval._variance_majorant(20, k)
    table = suite_interval._shared_powers(20)
    assert table is not None and table.done[1:21].all() and not table.done[21:].any()


def _random_designs(seed: int, count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(seed)
    designs = []
    for i in range(count):
        t = [1, 2, 3, 4, 5, 13][i % 6]
        # one n (sometimes 1), or mixed n, some below k
        n = np.full(t, int(rng.integers(1, 30))) if i % 3 == 0 else rng.integers(1, 25, size=t)
        c = rng.binomial(n, rng.beta(2, 0.7, size=t))
        designs.append((c, n))
    return designs


def _intervals(designs: list[tuple[np.ndarray, np.ndarray]], confidence: float) -> list[tuple]:
    out = []
    for c, n in designs:
        for k in sorted({1, 2, 3, int(n.max()) // 2 + 1, int(n.max())}):
            r = mean_pass_hat_k_ci(c, n, k, confidence=confidence)
            out.append((r.method, r.estimate, r.ci.low, r.ci.high, r.n_tasks))
    return out


@pytest.mark.parametrize(("confidence", "count"), [
    (0.90, 6), (0.95, 6), (0.99, 6),
    pytest.param(0.90, 40, marks=pytest.mark.slow), pytest.param(0.95, 40, marks=pytest.mark.slow),
    pytest.param(0.99, 40, marks=pytest.mark.slow)])
def test_suite_intervals_equal_the_reference(reference, confidence: float,  # type: ignore[no-untyped-def]
                                             count: int) -> None:
    designs = _random_designs(int(confidence * 100) + count, count)
    reference(False)
    new = _intervals(designs, confidence)
    reference(True)
    old = _intervals(designs, confidence)
    assert len(new) >= 4 * count
    assert json.dumps(new) == json.dumps(old)  # every float's repr: bit for bit


@pytest.mark.parametrize(("seed", "tasks", "runs", "kmax"), [
    (1, 6, 12, 12), (3, 3, 9, 9), (4, 200, 10, 10),
    pytest.param(2, 40, 24, 24, marks=pytest.mark.slow),
    pytest.param(5, 200, 60, 60, marks=pytest.mark.slow)])
def test_curve_and_its_printed_table_equal_the_reference(reference, seed: int, tasks: int,  # type: ignore[no-untyped-def]
                                                          runs: int, kmax: int) -> None:
    rng = np.random.default_rng(seed)
    n = rng.integers(max(1, runs - 6), runs + 1, size=tasks)
    n[0] = runs  # at least one task with kmax runs
    c = rng.binomial(n, rng.beta(4, 1, size=tasks))
    curves = {}
    for old in (False, True):
        reference(old)
        for confidence in (0.9, 0.99):
            cv = suite_curve(c, n, kmax, confidence=confidence)
            curves[(old, confidence)] = cv
    for confidence in (0.9, 0.99):
        new, ref = curves[(False, confidence)], curves[(True, confidence)]
        assert new.hat_ci.tobytes() == ref.hat_ci.tobytes()
        assert new.at_ci.tobytes() == ref.at_ci.tobytes()
        assert json.dumps(new.to_dict()) == json.dumps(ref.to_dict())
        assert np.isfinite(new.hat_ci).all() == (new.tasks > 0)


def test_report_curve_text_equals_the_reference(reference, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Through ``passk report``: the curve as printed (text and Markdown) is the reference's."""
    from passk.cli.commands import main

    rng = np.random.default_rng(7)
    path = tmp_path / "runs.jsonl"
    lines = []
    for t in range(12):
        n = 10 if t % 3 else 8
        p = rng.beta(5, 1)
        lines += [json.dumps({"task_id": f"t{t}", "trial": r, "success": bool(rng.random() < p)})
                  for r in range(n)]
    path.write_text("\n".join(lines) + "\n")
    outs = {}
    for old in (False, True):
        reference(old)
        got = []
        for extra in ([], ["--markdown"], ["--json"]):
            import contextlib
            import io
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                code = main(["report", str(path), "--k", "8", *extra])
            assert code in (0, 1)
            got.append(buf.getvalue())
        outs[old] = got
    assert outs[False] == outs[True]
    assert "pass^k" in outs[False][0] and '"curve"' in outs[False][2]


def test_format_curve_is_unchanged_on_one_report(reference) -> None:  # type: ignore[no-untyped-def]
    from passk.analysis.report import build_report
    from passk.results.counts import Run, results_from_runs

    rng = np.random.default_rng(11)
    runs = [Run(f"t{t}", bool(rng.random() < 0.85), r) for t in range(9) for r in range(10)]
    texts = []
    for old in (False, True):
        reference(old)
        fr = build_report(results_from_runs(runs), k=10)
        texts.append(format_curve(fr))
    assert texts[0] == texts[1] and texts[0].count("\n") >= 11
