"""Checks at the boundary of the comparison, the planner and the study.

Every numeric argument is checked before numpy sees it, because numpy reads a
bool as 0 or 1, a numeric string as a number, and wraps a count past int64.
Each check raises ``ValueError`` naming the argument and the bad value.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from passk.errors import BadInput

_INT64_MAX = 2**63 - 1


def _bad_element(x: Any) -> str | None:
    """Why one element is not a real number (None when it is one)."""
    if isinstance(x, (bool, np.bool_)):
        return "a bool is not a number here"
    if x is None:
        return "None is not a number"
    if isinstance(x, (str, bytes)):
        return "a string is not a number"
    if isinstance(x, (complex, np.complexfloating)):
        return "a complex number is not real"
    if not isinstance(x, numbers.Real):
        return f"a {type(x).__name__} is not a number"
    return None


def real_array(value: Any, name: str, *, finite: bool = True) -> np.ndarray:
    """``value`` as a float or integer array of real numbers (no bools, strings, None,
    complex; finite unless ``finite=False``)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":
        array = value
    elif isinstance(value, np.ndarray) and value.dtype.kind in "bc":
        kind = "bools" if value.dtype.kind == "b" else "complex numbers"
        raise BadInput(f"{name} ({value!r}) holds {kind}, not real numbers")
    else:
        try:
            objects = np.asarray(value, dtype=object)
        except ValueError as err:  # ragged nesting
            raise BadInput(f"{name} ({value!r}) must be a number or an array of numbers: "
                             f"{err}") from None
        for i, x in enumerate(objects.ravel().tolist()):
            why = _bad_element(x)
            if why is not None:
                where = "" if objects.ndim == 0 else f" at position {i}"
                raise BadInput(f"{name} ({value!r}) has {x!r}{where}: {why}")
            if isinstance(x, numbers.Integral) and abs(int(x)) > _INT64_MAX:
                raise BadInput(f"{name} ({x!r}) is past int64 (at most {_INT64_MAX})")
        items = objects.ravel().tolist()
        if all(isinstance(x, numbers.Integral) for x in items):
            array = np.array(items, dtype=np.int64).reshape(objects.shape)
        else:
            array = np.array([float(x) for x in items], dtype=float).reshape(objects.shape)
    if finite and array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        bad = array[~np.isfinite(array)].flat[0].item()
        raise BadInput(f"{name} ({bad!r}) must be finite")
    return array


def whole_array(value: Any, name: str, *, minimum: int = 0) -> np.ndarray:
    """``value`` as an int64 array of whole numbers at least ``minimum``."""
    array = real_array(value, name)
    if array.dtype.kind == "f":
        if np.any(array != np.round(array)):
            bad = array[array != np.round(array)].flat[0].item()
            raise BadInput(f"{name} ({bad!r}) must be a whole number")
        if np.any(np.abs(array) >= 2.0**63):
            bad = array[np.abs(array) >= 2.0**63].flat[0].item()
            raise BadInput(f"{name} ({bad!r}) is past int64 (at most {_INT64_MAX})")
    if array.dtype.kind == "u" and np.any(array > _INT64_MAX):
        bad = array[array > _INT64_MAX].flat[0].item()
        raise BadInput(f"{name} ({bad!r}) is past int64 (at most {_INT64_MAX})")
    if np.any(array < minimum):
        bad = array[array < minimum].flat[0].item()
        raise BadInput(f"{name} ({bad!r}) must be at least {minimum}")
    return array.astype(np.int64)


def whole(value: Any, name: str, *, minimum: int = 0) -> int:
    """One whole number at least ``minimum``."""
    array = whole_array(value, name, minimum=minimum)
    if array.ndim:
        raise BadInput(f"{name} ({value!r}) must be one whole number, not an array")
    return int(array)


def real(value: Any, name: str, *, low: float = -np.inf, high: float = np.inf,
         open_low: bool = False, open_high: bool = False, what: str = "") -> float:
    """One finite real number in the interval given (ends open or closed)."""
    array = real_array(value, name)
    if array.ndim:
        raise BadInput(f"{name} ({value!r}) must be one number, not an array")
    x = float(array)
    ok = (x > low if open_low else x >= low) and (x < high if open_high else x <= high)
    if not ok:
        span = f"{'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
        raise BadInput(f"{name} ({value!r}) must lie in {span}{what}")
    return x


def confidence(value: Any) -> float:
    """A two-sided confidence level strictly between 0 and 1."""
    return real(value, "confidence", low=0.0, high=1.0, open_low=True, open_high=True)


def choice(value: Any, name: str, options: tuple[str, ...]) -> str:
    """One of ``options`` (a string)."""
    if not isinstance(value, str) or value not in options:
        raise BadInput(f"{name} ({value!r}) must be one of {', '.join(options)}")
    return value
