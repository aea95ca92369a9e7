"""``passk rank``: the family-wise error of the tie groups, exact and simulated; the step-down's
divisors against brute force; the pairwise p-values against ``passk diff``; the noise floor
against enumeration of each task's runs; the CLI in every format, its gate and its bad input.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import math
import sys
from fractions import Fraction
from math import comb, factorial
from pathlib import Path

import numpy as np
import pytest

from passk import api
from passk.cli.commands import main
from passk.metrics import estimate_pass_hat_k
from passk.stats.compare import compare_pass_hat_k
from passk.stats.rank import (
    PROCEDURES,
    bet_level,
    noise_floor,
    pairwise_p_values,
    rank_versions,
    shaffer_divisors,
    simulate_claims,
    step_down,
    tie_groups,
)

LEVELS = (0.90, 0.95, 0.99)
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "tau-bench" / \
    "gpt-4o-airline.json"
BOOK_COPY = Path(__file__).resolve().parents[1] / "book" / "data" / "tau-bench" / \
    "gpt-4o-airline-rewards.json"


def _bench():  # the study's populations and driver (benchmarks/bench_rank.py)
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_rank.py"
    spec = importlib.util.spec_from_file_location("bench_rank", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_rank", module)  # dataclasses look their module up
    spec.loader.exec_module(sys.modules["bench_rank"])
    return sys.modules["bench_rank"]


# --------------------------------------------------------------------------
# the step-down's divisors: brute force over every weak order of the versions
# --------------------------------------------------------------------------


@pytest.mark.parametrize("versions", [2, 3, 4, 5])
def test_shaffer_divisors_are_the_most_true_hypotheses_given_s_minus_1_false(versions):
    m = versions * (versions - 1) // 2
    true_counts = set()
    for levels in itertools.product(range(versions), repeat=versions):  # every weak order
        true_counts.add(sum(levels[i] <= levels[j] for i in range(versions)
                            for j in range(versions) if i != j))
    expected = []
    for s in range(1, 2 * m + 1):
        fits = [t for t in true_counts if 2 * m - t >= s - 1]
        expected.append(max(fits) if fits else 0)
    assert shaffer_divisors(versions).tolist() == expected
    holm = shaffer_divisors(versions, "holm")
    assert holm.tolist() == list(range(2 * m, 0, -1))
    assert (shaffer_divisors(versions) <= holm).all()
    assert (shaffer_divisors(versions, "bonferroni") == 2 * m).all()


@pytest.mark.parametrize("bad", [1, 0, -2, 2.5, "3", True])
def test_divisors_refuse_what_is_not_a_number_of_versions(bad):
    with pytest.raises(ValueError, match="n_versions"):
        shaffer_divisors(bad)


# --------------------------------------------------------------------------
# exact family-wise error by enumeration on tiny designs
# --------------------------------------------------------------------------


def _exact_error(rates, n, k, tasks, confidence, procedure="shaffer"):
    """P(any false claim), summed over every outcome of identical tasks (a multiset of
    per-task patterns: the p-values are symmetric in the tasks)."""
    rates = np.asarray(rates, dtype=float)
    versions = rates.size
    patterns = list(itertools.product(range(n + 1), repeat=versions))
    prob = np.array([math.prod(comb(n, c) * p ** c * (1 - p) ** (n - c)
                               for c, p in zip(pat, rates)) for pat in patterns])
    outcomes = list(itertools.combinations_with_replacement(range(len(patterns)), tasks))
    idx = np.array(outcomes)  # (R, T)
    counts = np.array(patterns)[idx].transpose(0, 2, 1)  # (R, N, T)
    weights = np.array([factorial(tasks) / math.prod(factorial(o.count(v)) for v in set(o))
                        for o in outcomes]) * prob[idx].prod(axis=1)
    assert math.isclose(weights.sum(), 1.0, rel_tol=1e-9)
    h = np.asarray(estimate_pass_hat_k(counts, n, k), dtype=float)
    alpha = 1 - confidence
    p = pairwise_p_values(h, n, k, bet_alpha=bet_level(alpha, versions))
    claims = step_down(p, alpha, procedure)
    mu = rates ** k
    false = mu[:, None] <= mu[None, :]
    wrong = (claims & false).any(axis=(1, 2))
    return float(weights[wrong].sum()), float(weights[claims.any(axis=(1, 2))].sum())


EXACT_DESIGNS = [  # (rates, runs, k, tasks): equal, one better, a ladder; 1, 2 and 3 runs
    ((0.5, 0.5, 0.5), 1, 1, 8),
    ((0.75, 0.6, 0.45), 1, 1, 8),
    ((0.5, 0.5), 2, 1, 8),
    ((0.7, 0.7), 3, 2, 5),
]
SLOW_DESIGNS = [((0.9, 0.5, 0.5), 1, 1, 8), ((0.8, 0.5), 2, 1, 8), ((0.7, 0.7), 3, 2, 6)]


@pytest.mark.parametrize("design", [*EXACT_DESIGNS,
                                    *(pytest.param(d, marks=pytest.mark.slow)
                                      for d in SLOW_DESIGNS)])
@pytest.mark.parametrize("confidence", LEVELS)
def test_exact_family_wise_error_holds(design, confidence):
    rates, n, k, tasks = design
    error, any_claim = _exact_error(rates, n, k, tasks, confidence)
    assert error <= 1 - confidence
    if len(set(rates)) == 1:  # equal versions: every claim is false
        assert error == pytest.approx(any_claim)


def test_exact_enumeration_is_not_vacuous():
    """Where a version is much better, the tiny designs do make true claims."""
    _, any_claim = _exact_error((0.95, 0.2), 2, 1, 8, 0.90)
    assert any_claim > 0.5


# --------------------------------------------------------------------------
# Monte Carlo: the cheap version of the slow study below
# --------------------------------------------------------------------------


def test_family_wise_error_holds_on_a_few_random_populations():
    bench = _bench()
    rng = np.random.default_rng(40)
    pops = bench.populations(12, rng)  # two of each class
    replicates = 40
    rows = bench.study(pops, replicates, rng)
    for level in LEVELS:
        err = np.array([r["error shaffer"] for r in rows if r["level"] == level])
        se = math.sqrt((1 - level) * level / (err.size * replicates))
        assert err.mean() <= (1 - level) + 3 * se, (level, err.mean())


def test_equal_versions_claim_rarely_and_a_clear_leader_is_found():
    rng = np.random.default_rng(7)
    base = rng.uniform(0.2, 0.95, 60)
    equal = simulate_claims(np.tile(base, (4, 1)), 6, 2, confidence=0.95, replicates=150,
                            rng=rng)["shaffer"]
    assert equal.any(axis=(1, 2)).mean() <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 150)
    leader = np.tile(base, (4, 1))
    leader[2] = np.minimum(1, base + 0.3)
    found = simulate_claims(leader, 6, 2, confidence=0.95, replicates=60, rng=rng)["shaffer"]
    assert found[:, 2, [0, 1, 3]].all(axis=1).mean() > 0.9


@pytest.mark.slow
def test_family_wise_error_holds_on_300_populations_at_90_95_99():
    """The issue's study: 300 populations of six classes, 100 replicates each, every level;
    pooled by class and level the error is within 3 s.e. of its bound, and Shaffer's
    step-down claims at least what Holm's and Bonferroni's do."""
    bench = _bench()
    rng = np.random.default_rng(2026)
    pops = bench.populations(300, rng)
    replicates = 100
    rows = bench.study(pops, replicates, rng)
    print(bench.tables(rows, replicates))
    for kind in bench.CLASSES:
        for level in LEVELS:
            err = np.array([r["error shaffer"] for r in rows
                            if r["kind"] == kind and r["level"] == level])
            se = math.sqrt((1 - level) * level / (err.size * replicates))
            assert err.mean() <= (1 - level) + 3 * se, (kind, level, err.mean())
    for r in rows:
        if not math.isnan(r["power shaffer"]):
            assert r["power shaffer"] >= r["power holm"] >= r["power bonferroni"]


# --------------------------------------------------------------------------
# the procedures, the claims and the groups
# --------------------------------------------------------------------------


def test_shaffer_claims_everything_holm_and_bonferroni_claim():
    rng = np.random.default_rng(3)
    rates = np.clip(rng.uniform(0.3, 0.9, 40)[None, :]
                    + np.array([0.0, 0.05, 0.1, 0.15, 0.2])[:, None], 0, 1)
    out = simulate_claims(rates, 4, 1, confidence=0.9, replicates=200, procedure=PROCEDURES,
                          rng=rng)
    assert (out["bonferroni"] <= out["holm"]).all()
    assert (out["holm"] <= out["shaffer"]).all()
    assert out["shaffer"].sum() > out["bonferroni"].sum()  # strictly more on this ladder


def test_claims_are_closed_and_follow_the_means():
    rng = np.random.default_rng(11)
    for _ in range(30):
        versions, tasks = int(rng.integers(2, 7)), int(rng.integers(10, 80))
        p = np.clip(rng.uniform(0.1, 1, tasks) + rng.normal(0, 0.2, (versions, 1)), 0, 1)
        c = rng.binomial(4, p)
        r = rank_versions(c, 4, 2, confidence=float(rng.choice(LEVELS)))
        cl = r.claims
        means = np.array(r.means)
        assert not (cl & cl.T).any()
        assert (means[:, None] > means[None, :])[cl].all()
        closed = cl.copy()
        for via in range(versions):
            closed |= cl[:, [via]] & cl[[via], :]
        assert (closed == cl).all()
        # the groups: contiguous in the order, every pair across them claimed
        flat = [v for g in r.groups for v in g]
        assert tuple(flat) == r.order
        for a, b in itertools.combinations(range(len(r.groups)), 2):
            assert all(cl[i, j] for i in r.groups[a] for j in r.groups[b])
        # no cut is missed: inside a group, the versions above any split are not all
        # shown better than those below it
        for g in r.groups:
            for cut in range(1, len(g)):
                assert not all(cl[i, j] for i in g[:cut] for j in g[cut:])
        for pos, v in enumerate(r.order):
            lo, hi = r.rank_intervals[v]
            assert lo <= pos + 1 <= hi


def test_tie_groups_by_hand():
    c = np.zeros((3, 3), bool)
    assert tie_groups(c, [0.1, 0.5, 0.3]) == ((1, 2, 0), ((1, 2, 0),))
    c[1, 0] = c[2, 0] = True
    assert tie_groups(c, [0.1, 0.5, 0.3]) == ((1, 2, 0), ((1, 2), (0,)))


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_two_versions_are_separated_exactly_when_passk_diff_shows_the_change(alpha):
    """For N = 2 the table is ``passk diff`` at confidence 1 - alpha: one claim, each side
    at alpha/2, the same p-value."""
    rng = np.random.default_rng(5)
    agree = 0
    for _ in range(15):
        tasks, n = int(rng.integers(8, 60)), int(rng.integers(1, 7))
        k = int(rng.integers(1, n + 1))
        p = rng.uniform(0.2, 1, tasks)
        c0 = rng.binomial(n, p)
        c1 = rng.binomial(n, np.clip(p + rng.normal(0.1, 0.1), 0, 1))
        r = rank_versions(np.stack([c0, c1]), n, k, confidence=1 - alpha)
        cmp = compare_pass_hat_k(c0, n, c1, n, k, confidence=1 - alpha)
        shown = cmp.p_value <= alpha
        claimed = bool(r.claims.any())
        if claimed:  # never separates what passk diff does not
            assert shown and cmp.verdict in ("better", "worse")
            assert r.claims[1, 0] == (cmp.delta > 0)
        agree += claimed == shown
    assert agree == 15


@pytest.mark.parametrize(("c", "n", "why"), [
    ([[1, 2]], 2, "at least 2 versions"),
    ([1, 2], 2, "2-D"),
    ([[3, 1], [1, 1]], 2, "cannot exceed"),
])
def test_rank_versions_refuses_bad_counts(c, n, why):
    with pytest.raises(ValueError, match=why):
        rank_versions(c, n, 1)


def test_one_task_in_common_ranks_nothing():
    r = rank_versions([[2, 0], [0, 0]], [2, 1], 2)  # the second task has n < k in a version
    assert r.tasks == 1 and r.left_out == 1 and not r.claims.any()
    assert len(r.groups) == 1


# --------------------------------------------------------------------------
# the noise floor: against enumeration of each task's runs
# --------------------------------------------------------------------------


def test_flip_rate_and_single_run_floor_equal_enumeration_of_pairs_of_runs():
    rng = np.random.default_rng(9)
    for _ in range(20):
        tasks = int(rng.integers(1, 12))
        n = rng.integers(2, 7, tasks)
        c = rng.binomial(n, rng.uniform(0, 1, tasks))
        nf = noise_floor(c, n)
        flips, var = [], Fraction(0)
        for ci, ni in zip(c.tolist(), n.tolist()):
            runs = [1] * ci + [0] * (ni - ci)
            pairs = list(itertools.permutations(range(ni), 2))  # two distinct runs, in order
            flips.append(Fraction(sum(runs[a] != runs[b] for a, b in pairs), len(pairs)))
            var += Fraction(sum((runs[a] - runs[b]) ** 2 for a, b in pairs), len(pairs))
        np.testing.assert_allclose(nf.task_flip_rates, [float(f) for f in flips], rtol=1e-12)
        assert nf.flip_rate == pytest.approx(float(sum(flips) / tasks), rel=1e-12)
        # two single runs (one of each task) differ by D with E D^2 = 2 sd^2
        assert 2 * nf.single_run_sd ** 2 == pytest.approx(float(var) / tasks ** 2, rel=1e-12)
        assert nf.mixed_share == pytest.approx(float(((c > 0) & (c < n)).mean()))


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_flip_rate_is_unbiased_for_two_p_one_minus_p(n):
    for p in (Fraction(1, 3), Fraction(1, 2), Fraction(9, 10)):
        expected = sum(comb(n, c) * p ** c * (1 - p) ** (n - c) * Fraction(2 * c * (n - c),
                       n * (n - 1)) for c in range(n + 1))
        assert expected == 2 * p * (1 - p)


def test_noise_floor_leaves_out_single_runs_and_says_nan_without_repeats():
    nf = noise_floor([1, 0, 2], [1, 1, 4])
    assert nf.tasks == 1 and math.isnan(nf.task_flip_rates[0])
    assert math.isnan(noise_floor([1, 0], 1).flip_rate)


# --------------------------------------------------------------------------
# the command: every format, the gate, bad input
# --------------------------------------------------------------------------


def _write(path: Path, rates, runs=4, tasks=30, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(tasks):
        p = rates if isinstance(rates, float) else rates[t]
        rows += [json.dumps({"task_id": f"t{t}", "trial": i, "success": bool(rng.random() < p)})
                 for i in range(runs)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.fixture
def suite(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    good = _write(tmp_path / "good.jsonl", 0.95, seed=1)
    mid = _write(tmp_path / "mid.jsonl", 0.9, seed=2)
    bad = _write(tmp_path / "bad.jsonl", 0.2, seed=3)
    return good, mid, bad


def test_cli_text_markdown_json_agree_with_the_api(suite, capsys):
    good, mid, bad = suite
    assert main(["rank", bad, good, mid, "--k", "2"]) == 0
    text = capsys.readouterr().out
    rep = api.rank([bad, good, mid], asked={"k": 2}).to_dict()
    assert rep["versions"][-1]["version"] == bad
    assert "tie groups: {" in text and "family-wise 95%" in text
    assert text.strip().splitlines()[-1].endswith("{" + bad + "}")
    assert main(["rank", bad, good, mid, "--k", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == json.loads(json.dumps(rep))
    assert out["k"] == 2 and out["confidence"] == pytest.approx(0.95)
    assert [v["version"] for v in out["versions"]][-1] == bad
    assert out["groups"][-1] == [bad]
    assert all(v["flip_rate"] is not None for v in out["versions"])
    assert main(["rank", bad, good, mid, "--k", "2", "--markdown"]) == 0
    md = capsys.readouterr().out
    assert "| group | version |" in md and "**tie groups:" in md


def test_cli_html_page_draws_groups_and_escapes_names(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    odd = _write(tmp_path / "<b>x.jsonl", 0.9, seed=4)
    other = _write(tmp_path / "y.jsonl", 0.3, seed=5)
    out = tmp_path / "rank.html"
    assert main(["rank", odd, other, "--k", "1", "--html", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="rank-plot"' in page
    assert "<b>x" not in page and "&lt;b&gt;x" in page
    assert page.count("<circle") == 2 and "default-src 'none'" in page
    assert "wrote" in capsys.readouterr().err


def test_cli_rank_gate_blocks_a_candidate_shown_worse(suite, capsys):
    good, mid, bad = suite
    assert main(["rank", good, mid, bad, "--k", "2", "--candidate", bad,
                 "--release", good]) == 1
    out = capsys.readouterr().out
    assert "rank gate: BLOCKED" in out and f"{bad} is shown worse than {good}" in out
    assert main(["rank", good, mid, bad, "--k", "2", "--candidate", good,
                 "--release", bad, "--json"]) == 0
    gate = json.loads(capsys.readouterr().out)["gate"]
    assert gate["passed"] is True and "PASSED" in gate["verdict"]
    assert main(["rank", good, mid, bad, "--k", "2", "--candidate", bad, "--release", good,
                 "--markdown"]) == 1
    assert "**rank gate: BLOCKED" in capsys.readouterr().out


def test_cli_rank_gate_passes_versions_it_cannot_tell_apart(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    a = _write(tmp_path / "a.jsonl", 0.7, seed=6)
    b = _write(tmp_path / "b.jsonl", 0.7, seed=7)
    assert main(["rank", a, b, "--candidate", a, "--release", b]) == 0
    assert "rank gate: PASSED" in capsys.readouterr().out


def _one_line_error(capsys, *words):
    err = capsys.readouterr().err.strip()
    assert err.startswith("passk rank: error:") and "\n" not in err, err
    for w in words:
        assert w in err, err


def test_cli_bad_input_is_one_line_exit_2(suite, tmp_path, capsys):
    good, mid, _bad = suite
    assert main(["rank", good]) == 2
    _one_line_error(capsys, "at least 2")
    assert main(["rank", good, good]) == 2
    _one_line_error(capsys, "given twice")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"task_id": "zz", "trial": 0, "success": True}) + "\n")
    assert main(["rank", good, str(other)]) == 2
    _one_line_error(capsys, "share no task")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(Path(mid).read_text() + '{"task_id": "t0", "trial": 9}\n')
    assert main(["rank", good, str(broken)]) == 2
    _one_line_error(capsys, "broken.jsonl:121")
    assert main(["rank", good, mid, "--candidate", good]) == 2
    _one_line_error(capsys, "--candidate and --release go together")
    assert main(["rank", good, mid, "--candidate", "nope.jsonl", "--release", good]) == 2
    _one_line_error(capsys, "nope.jsonl is not one of the files ranked")
    with pytest.raises(SystemExit) as exc:
        main(["rank", good, mid, "--alpha", "0"])
    assert exc.value.code == 2


def test_policy_alpha_binds_and_a_looser_one_is_refused(suite, tmp_path, capsys):
    good, _mid, bad = suite
    (tmp_path / "passk.toml").write_text("[gate]\nk = 2\n[baseline]\nalpha = 0.01\n")
    assert main(["rank", good, bad, "--k", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["confidence"] == pytest.approx(0.99)
    assert main(["rank", good, bad, "--k", "2", "--alpha", "0.05"]) == 2
    _one_line_error(capsys, "would loosen the policy's baseline alpha 0.01")
    rep = api.rank([good, bad], asked={"k": 2, "alpha": 0.001}).to_dict()
    assert rep["confidence"] == pytest.approx(0.999)


def test_default_k_is_the_smallest_n_and_said(suite, capsys):
    good, _mid, bad = suite
    said = []
    rep = api.rank([good, bad], say=said.append)
    assert rep.ranking.k == 4 and any("k = 4" in s for s in said)


# --------------------------------------------------------------------------
# the real run: tau-bench's GPT-4o airline trials, halves of one agent ranked
# --------------------------------------------------------------------------


def _halves(src: Path, tmp_path: Path, split):
    recs = json.loads(src.read_text())
    paths = []
    for name, trials in split:
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"task_id": str(r["task_id"]), "trial": r["trial"],
                                            "success": abs(r["reward"] - 1) < 1e-6}) + "\n"
                                for r in recs if r["trial"] in trials))
        paths.append(str(path))
    return paths


@pytest.mark.skipif(not BOOK_COPY.exists(), reason="the book's copy of the tau-bench run is absent")
@pytest.mark.parametrize("split", [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))])
def test_real_run_halves_of_one_agent_tie(tmp_path, monkeypatch, split):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    paths = _halves(BOOK_COPY, tmp_path, [(f"trials{''.join(map(str, s))}", s) for s in split])
    rep = api.rank(paths, asked={"k": 1})
    assert len(rep.ranking.groups) == 1 and not rep.ranking.claims.any()
    recs = json.loads(BOOK_COPY.read_text())
    for path, trials, nf in zip(paths, split, rep.noise):
        by_task: dict[int, list[bool]] = {}
        for r in recs:
            if r["trial"] in trials:
                by_task.setdefault(r["task_id"], []).append(abs(r["reward"] - 1) < 1e-6)
        flips = [x[0] != x[1] for x in by_task.values()]  # two runs: a flip or not
        assert nf.flip_rate == pytest.approx(np.mean(flips), abs=1e-12), path


@pytest.mark.skipif(not BOOK_COPY.exists(), reason="the book's copy of the tau-bench run is absent")
def test_real_run_whole_noise_floor(tmp_path):
    recs = json.loads(BOOK_COPY.read_text())
    by_task: dict[int, list[int]] = {}
    for r in recs:
        by_task.setdefault(r["task_id"], []).append(int(abs(r["reward"] - 1) < 1e-6))
    c = np.array([sum(v) for v in by_task.values()])
    nf = noise_floor(c, 4)
    # against the pairs of runs themselves: the share of the 6 pairs per task that disagree
    pair_flips = [np.mean([a != b for a, b in itertools.combinations(v, 2)])
                  for v in by_task.values()]
    assert nf.flip_rate == pytest.approx(np.mean(pair_flips), abs=1e-12)
    assert 0.1 < nf.flip_rate < 0.4 and nf.tasks == 50


# --------------------------------------------------------------------------
# the Action: PASSK_RANK_AGAINST, a second decision beside the gate's
# --------------------------------------------------------------------------


def _action(tmp_path, results, against, **extra):
    from passk.integrations import action

    out, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {"PASSK_RESULTS": results, "PASSK_RANK_AGAINST": against, "PASSK_K": "2",
           "PASSK_MIN_OVERALL": "0", "PASSK_MAX_FLAKINESS": "1",
           "GITHUB_OUTPUT": str(out), "GITHUB_STEP_SUMMARY": str(summary), **extra}
    status = action.main(env)
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    return status, outputs, summary.read_text()


def test_action_blocks_a_candidate_ranked_below_the_release(suite, tmp_path, capsys):
    good, _mid, bad = suite
    status, outputs, summary = _action(tmp_path, bad, good)
    assert status == 1 and outputs["verdict"] == "blocked"
    assert "### Ranked against the release" in summary
    assert f"**rank gate: BLOCKED  {bad} is shown worse than {good}" in summary
    assert "**gate: PASSED" in summary  # the gate's own verdict is unchanged
    assert "::error" in capsys.readouterr().out


def test_action_passes_a_candidate_not_shown_worse(suite, tmp_path):
    good, _mid, bad = suite
    status, outputs, summary = _action(tmp_path, good, bad)
    assert status == 0 and outputs["verdict"] == "passed"
    assert "rank gate: PASSED" in summary


def test_action_rank_bad_input_is_an_error(suite, tmp_path):
    good, _mid, _bad = suite
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"task_id": "zz", "trial": 0, "success": True}) + "\n")
    status, outputs, summary = _action(tmp_path, good, str(other))
    assert status == 2 and outputs["verdict"] == "error"
    assert "passk rank: error: the files share no task" in summary
