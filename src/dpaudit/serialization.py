"""JSON serialisation of results: infinite values become the string "inf"."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from pathlib import Path
from typing import Any

import numpy as np


def to_jsonable(obj: Any) -> Any:
    """Recursively convert dataclasses, numpy values and non-finite floats to JSON types.

    ``inf`` → ``"inf"``, ``-inf`` → ``"-inf"``, ``nan`` → ``"nan"`` so the output is
    strict JSON that any parser reads.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        if hasattr(obj, "to_dict"):
            return to_jsonable(obj.to_dict())
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return v
    if isinstance(obj, Path):
        return str(obj)
    return obj


def dumps(obj: Any, indent: int | None = 2) -> str:
    """Serialise ``obj`` (see :func:`to_jsonable`) to a strict JSON string."""
    return json.dumps(to_jsonable(obj), indent=indent, allow_nan=False)


def from_json_float(value: Any) -> float:
    """Inverse of the float mapping of :func:`to_jsonable`."""
    if isinstance(value, str):
        return float(value)
    return float(value)
