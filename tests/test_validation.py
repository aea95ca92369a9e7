"""Every numeric argument of every public function in metrics, suite_interval and coverage
is checked at the boundary: a bool (alone or inside a list or array), a string, None, a
complex number, NaN or infinity, or a count past int64 raises ValueError naming the argument
and the value (issue 23). One helper module does it: passk._validation."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from passk import metrics
from passk.stats import coverage, suite_interval

# function, its valid arguments by name, and which of them are counts (the rest are reals:
# probabilities, confidence levels, targets)
CALLS: list[tuple[Callable[..., Any], dict[str, Any], set[str]]] = [
    (metrics.pass_at_k, {"p": 0.5, "k": 2}, {"k"}),
    (metrics.pass_hat_k, {"p": 0.5, "k": 2}, {"k"}),
    (metrics.estimate_pass_at_k, {"successes": 3, "total": 4, "k": 2},
     {"successes", "total", "k"}),
    (metrics.estimate_pass_hat_k, {"successes": 3, "total": 4, "k": 2},
     {"successes", "total", "k"}),
    (metrics.estimate_pass_hat_k_variance, {"successes": 3, "total": 5, "k": 2},
     {"successes", "total", "k"}),
    (metrics.flakiness, {"successes": 3, "total": 4}, {"successes", "total"}),
    (metrics.unbiased_flakiness, {"successes": 3, "total": 4}, {"successes", "total"}),
    (metrics.bootstrap_pass_hat_k_ci,
     {"outcomes": [1, 0, 1, 1], "k": 2, "confidence": 0.9, "n_resamples": 99, "rng": 0},
     {"k", "n_resamples"}),
    (metrics.exact_bootstrap_pass_hat_k_ci,
     {"successes": 3, "total": 4, "k": 2, "confidence": 0.9}, {"successes", "total", "k"}),
    (metrics.wilson_ci, {"successes": 3, "total": 4, "confidence": 0.9}, {"successes", "total"}),
    (metrics.pass_hat_k_ci, {"successes": 3, "total": 4, "k": 2, "confidence": 0.9},
     {"successes", "total", "k"}),
    (metrics.pass_hat_k_lower_bound, {"successes": 3, "total": 4, "k": 2, "confidence": 0.9},
     {"successes", "total", "k"}),
    (metrics.runs_needed, {"target": 0.5, "k": 2, "confidence": 0.9}, {"k"}),
    (suite_interval.mean_pass_hat_k_ci,
     {"successes": [3, 4, 2], "totals": [4, 4, 4], "k": 2, "confidence": 0.9,
      "n_resamples": 99},
     {"successes", "totals", "k", "n_resamples"}),
    (coverage.exact_coverage, {"n": 4, "k": 2, "p": 0.5, "confidence": 0.9}, {"n", "k"}),
    (coverage.expected_width, {"n": 4, "k": 2, "p": 0.5, "confidence": 0.9}, {"n", "k"}),
    (coverage.identical_suite_coverage,
     {"tasks": 5, "n": 4, "k": 2, "p": 0.5, "confidence": 0.9}, {"tasks", "n", "k"}),
]

#: The bad kinds, each as a function of the argument's valid value (so that a list stays a
#: list with one element spoiled).
BAD: dict[str, Callable[[Any], Any]] = {
    "bool": lambda v: True,
    "numpy bool": lambda v: np.bool_(True),
    "bool in a list": lambda v: [*v[:-1], True] if isinstance(v, list) else [v, True],
    "bool array": lambda v: np.array([True, False]),
    "string": str,
    "None": lambda v: None,
    "complex": lambda v: complex(v if not isinstance(v, list) else v[0], 1),
    "NaN": lambda v: float("nan"),
    "infinity": lambda v: float("inf"),
    "NaN in a list": lambda v: [*v[:-1], float("nan")] if isinstance(v, list) else [v, np.nan],
    "past int64": lambda v: 2**64 + 3,
    "past int64 in a list": lambda v: [*v[:-1], 2**64 + 3] if isinstance(v, list)
    else [v, 2**64 + 3],
}

CASES = [
    pytest.param(function, valid, name, id=f"{function.__name__}-{name}")
    for function, valid, counts in CALLS
    for name in valid
    if name not in ("rng", "outcomes")  # outcomes may be bools (tested below); rng is numpy's
]


@pytest.mark.parametrize("function,valid,name", CASES)
def test_every_bad_kind_raises_value_error_naming_argument_and_value(function, valid, name):
    for kind, spoil in BAD.items():
        bad = spoil(valid[name])
        with pytest.raises(ValueError) as info:
            function(**{**valid, name: bad})
        message = str(info.value)
        assert re.search(rf"\b{re.escape(name)} \(", message), (kind, message)
        shown = repr(bad) if not isinstance(bad, np.ndarray) else "array"
        assert shown in message or str(bad) in message or str(2**64 + 3) in message, (
            kind, message)


@pytest.mark.parametrize("function,valid,counts", CALLS, ids=lambda x: getattr(x, "__name__", ""))
def test_the_valid_arguments_work(function, valid, counts):
    function(**valid)  # the baseline each bad case spoils: it must not raise
    assert counts <= set(valid)


@pytest.mark.parametrize("bad", [[1, 0, "1"], [1, None], [1, 1j], [1, np.nan], "1101"], ids=repr)
def test_bootstrap_outcomes_refuse_non_numbers_but_take_bools(bad):
    with pytest.raises(ValueError, match=re.escape(f"outcomes ({bad!r})")):
        metrics.bootstrap_pass_hat_k_ci(bad, 1, n_resamples=99, rng=0)
    ci = metrics.bootstrap_pass_hat_k_ci([True, False, True], 1, n_resamples=99, rng=0)
    assert 0.0 <= ci.low <= ci.high <= 1.0


@pytest.mark.parametrize("call", [
    lambda: metrics.estimate_pass_hat_k([3, True], 4, 2),
    lambda: suite_interval.mean_pass_hat_k_ci([True, 4, 3, 2, 4], 4, 2),
    lambda: metrics.flakiness([3, 4], [4, True]),
], ids=["estimate", "suite", "flakiness"])
def test_the_issues_bool_examples(call):
    """Issue 23's examples: a bool inside a list used to be read as 1."""
    with pytest.raises(ValueError, match="not bools"):
        call()


@pytest.mark.parametrize("method", [None, 3, ["hoeffding"]], ids=repr)
def test_method_must_be_a_known_name(method):
    with pytest.raises(ValueError, match=re.escape(f"method ({method!r})")):
        suite_interval.mean_pass_hat_k_ci([3, 4], 4, 2, method=method)
    with pytest.raises(ValueError, match=re.escape(f"method ({method!r})")):
        metrics.pass_hat_k_ci(3, 4, 2, method=method)
