"""Argument checks shared by every layer; each raises an error naming the argument."""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpaudit.errors import InvalidArgumentError, InvalidTypeError


def check_real(name: str, value: object) -> float:
    """Return ``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidTypeError(name, value, "a real number")
    v = float(value)
    if not math.isfinite(v):
        raise InvalidArgumentError(name, value, "a finite real number")
    return v


def check_positive(name: str, value: object) -> float:
    """A finite real number > 0."""
    v = check_real(name, value)
    if v <= 0:
        raise InvalidArgumentError(name, value, "a finite number > 0")
    return v


def check_epsilon(value: object, name: str = "epsilon") -> float:
    """ε must be a finite number > 0."""
    return check_positive(name, value)


def check_delta(value: object, name: str = "delta") -> float:
    """δ must lie in [0, 1)."""
    v = check_real(name, value)
    if not 0.0 <= v < 1.0:
        raise InvalidArgumentError(name, value, "a number in [0, 1)")
    return v


def check_probability_open(name: str, value: object) -> float:
    """A number in the open interval (0, 1), e.g. a confidence level."""
    v = check_real(name, value)
    if not 0.0 < v < 1.0:
        raise InvalidArgumentError(name, value, "a number in the open interval (0, 1)")
    return v


def check_int(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in ``[minimum, maximum]``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise InvalidTypeError(name, value, "an integer")
    v = int(value)
    if v < minimum or (maximum is not None and v > maximum):
        hi = "∞" if maximum is None else str(maximum)
        raise InvalidArgumentError(name, value, f"an integer in [{minimum}, {hi}]")
    return v


def check_seed(value: object, name: str = "seed") -> int:
    """A non-negative integer seed."""
    return check_int(name, value, minimum=0)


def as_finite_array(name: str, value: object, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Convert ``value`` to a float64 array, rejecting NaN/inf and (optionally) a wrong shape."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidTypeError(name, value, "an array of real numbers") from exc
    if shape is not None and arr.shape != shape:
        raise InvalidArgumentError(name, f"<array of shape {arr.shape}>", f"shape {shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidArgumentError(name, "<array with NaN/inf>", "finite values only")
    return arr
