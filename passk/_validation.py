"""Checks at the boundary: numeric arguments in, clean numpy arrays out, or a ValueError.

One place for the checks that the estimators (:mod:`passk.metrics`), the suite interval
(:mod:`passk.stats.suite_interval`), the exact coverage (:mod:`passk.stats.coverage`) and
the comparison share. Each refuses, with a ``ValueError`` that names the argument and the
value: a bool, alone or anywhere inside a list, tuple or array (numpy would read ``True``
as 1); a string (``'0.95'``); ``None``; a complex number; NaN or infinity where a finite
number is needed; a count past what an int64 holds (it would wrap round).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from passk.errors import BadInput

__all__ = [
    "INT64_MAX",
    "confidence_level",
    "counts",
    "probability",
    "real_numbers",
    "scalar_or_array",
    "whole_numbers",
]

ArrayLike = npt.ArrayLike
FloatOrArray = float | np.ndarray

#: The largest count an int64 holds; larger counts are refused, never wrapped.
INT64_MAX = int(np.iinfo(np.int64).max)


def scalar_or_array(values: np.ndarray) -> FloatOrArray:
    """A 0-d array as a float, any other array unchanged."""
    return float(values) if values.ndim == 0 else values


def _holds_bool(values: Any) -> bool:
    """Whether ``values`` is a bool or holds one anywhere in its nested lists or tuples."""
    if isinstance(values, (bool, np.bool_)):
        return True
    if isinstance(values, np.ndarray):
        return bool(values.dtype == bool)
    if isinstance(values, (list, tuple)):
        return any(_holds_bool(v) for v in values)
    return False


def real_numbers(values: ArrayLike, name: str, what: str) -> np.ndarray:
    """``values`` as a real numeric array, or a ValueError naming them.

    The one check at the boundary for counts, probabilities and confidence levels alike:
    booleans (alone or inside a list), strings, None, complex numbers and other objects are
    refused (numpy would otherwise read ``True`` as 1, ``'0.5'`` as 0.5, and drop an
    imaginary part with only a warning). ``what`` completes the message, e.g.
    ``'whole numbers'``.

    Examples
    --------
    >>> real_numbers([3, 4], "successes", "whole numbers")
    array([3, 4])
    >>> real_numbers([3, True], "successes", "whole numbers")
    Traceback (most recent call last):
    ...
    passk.errors.BadInput: successes ([3, True]) must be whole numbers, not bools
    """
    if _holds_bool(values):
        raise BadInput(f"{name} ({values!r}) must be {what}, not bools")
    try:
        array = np.asarray(values)
    except (TypeError, ValueError, OverflowError):  # ragged nesting and the like
        raise BadInput(f"{name} ({values!r}) must be {what}") from None
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer)
                                   or np.issubdtype(array.dtype, np.floating)):
        raise BadInput(f"{name} ({values!r}) must be {what}")
    return array


def whole_numbers(values: ArrayLike, name: str, *, minimum: int) -> np.ndarray:
    """``values`` as an int64 array of whole numbers at least ``minimum``, or a ValueError."""
    array = real_numbers(values, name, "whole numbers")
    if np.issubdtype(array.dtype, np.floating) and (
        not np.all(np.isfinite(array)) or np.any(array != np.round(array))
    ):
        raise BadInput(f"{name} ({values!r}) must be whole numbers")
    if np.any(array < minimum):
        bad = array[array < minimum].flat[0].item()
        raise BadInput(f"{name} ({bad!r}) must be at least {minimum}")
    # an unsigned or float count beyond int64 would wrap round, and give NaN or worse
    too_big = array > INT64_MAX if np.issubdtype(array.dtype, np.unsignedinteger) else (
        array >= 2.0**63 if np.issubdtype(array.dtype, np.floating)
        else np.zeros(array.shape, bool))
    if np.any(too_big):
        bad = array[too_big].flat[0].item()
        raise BadInput(f"{name} ({bad!r}) must be at most {INT64_MAX}")
    return array.astype(np.int64)


def counts(successes: ArrayLike, total: ArrayLike, *, names: tuple[str, str] = (
        "successes", "total")) -> tuple[np.ndarray, np.ndarray]:
    """Successes and totals as broadcast int64 arrays with ``0 <= c <= n``, or a ValueError."""
    c = whole_numbers(successes, names[0], minimum=0)
    n = whole_numbers(total, names[1], minimum=0)
    try:
        c, n = np.broadcast_arrays(c, n)
    except ValueError:
        raise BadInput(f"{names[0]} (shape {c.shape}) and {names[1]} (shape {n.shape}) "
                         f"must broadcast together") from None
    if np.any(c > n):
        i = np.flatnonzero(c > n)[0]
        raise BadInput(f"{names[0]} ({c.flat[i]}) cannot exceed {names[1]} ({n.flat[i]})")
    return c, n


def probability(p: ArrayLike, name: str = "p") -> np.ndarray:
    """``p`` as a float array in [0, 1], or a ValueError (NaN and infinity are refused)."""
    array = real_numbers(p, name, "a probability in [0, 1]").astype(float)
    if np.any(~((array >= 0) & (array <= 1))):
        raise BadInput(f"{name} ({p!r}) must lie in [0, 1]")
    return array


def confidence_level(confidence: Any, name: str = "confidence") -> float:
    """``confidence`` as a float strictly between 0 and 1, or a ValueError."""
    level = real_numbers(confidence, name, "a number strictly between 0 and 1")
    if level.ndim or not 0 < float(level) < 1:
        raise BadInput(f"{name} ({confidence!r}) must lie strictly between 0 and 1")
    return float(level)
