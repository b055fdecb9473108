"""JSON serialisation of results: infinite values become the string "inf"."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import types
import typing
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


def from_jsonable(tp: Any, data: Any) -> Any:
    """Inverse of :func:`to_jsonable` for a value of type ``tp`` (a type annotation).

    Rebuilds frozen dataclasses from their fields' annotations (keys a
    ``to_dict`` adds for readers, such as a probability's ``estimate``, are
    skipped; fields it leaves out take their defaults), tuples, dicts, enums and
    floats (``"inf"``, ``"-inf"``, ``"nan"`` back to floats).  ``Any`` keeps the
    JSON value as it is.
    """
    if data is None:
        return None
    if tp is Any or tp is object:
        return data
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return _from_union(typing.get_args(tp), data)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_jsonable(args[0], v) for v in data)
        return tuple(from_jsonable(a, v) for a, v in zip(args, data, strict=True))
    if origin is list:
        (arg,) = typing.get_args(tp)
        return [from_jsonable(arg, v) for v in data]
    if origin is dict:
        _, value_type = typing.get_args(tp)
        return {k: from_jsonable(value_type, v) for k, v in data.items()}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        json_fields = getattr(tp, "json_fields", None)  # a type whose JSON differs from its fields
        return tp(**dataclass_fields(tp, json_fields(data) if callable(json_fields) else data))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(data)
    if tp is float:
        return from_json_float(data)
    if tp in (int, bool, str):
        return tp(data)
    return data


def dataclass_fields(cls: type, data: dict[str, Any]) -> dict[str, Any]:
    """The constructor arguments of dataclass ``cls`` found in ``data``, each decoded by type."""
    hints = typing.get_type_hints(cls)
    return {
        f.name: from_jsonable(hints[f.name], data[f.name])
        for f in dataclasses.fields(cls)
        if f.init and f.name in data
    }


def _from_union(args: tuple[Any, ...], data: Any) -> Any:
    """A union member decoded: the first whose JSON shape fits ``data`` (None aside)."""
    options = [a for a in args if a is not type(None)]
    for a in options:
        if _fits(a, data):
            return from_jsonable(a, data)
    return from_jsonable(options[0], data)


def _fits(tp: Any, data: Any) -> bool:
    """Whether ``data``'s JSON type is the one :func:`to_jsonable` writes for ``tp``."""
    origin = typing.get_origin(tp) or tp
    if origin in (tuple, list):
        return isinstance(data, list)
    if origin is dict or (dataclasses.is_dataclass(origin) and isinstance(origin, type)):
        return isinstance(data, dict)
    if origin is str:
        return isinstance(data, str)
    if origin is float:
        return isinstance(data, int | float) or data in ("inf", "-inf", "nan")
    if origin in (int, bool):
        return isinstance(data, origin)
    if isinstance(origin, type) and issubclass(origin, enum.Enum):
        return any(data == m.value for m in origin)
    return True
