"""Encode outputs of any Python type into a fixed-width float array, reproducibly.

The rule, in words: every output is split into its *numeric leaves* (finite
ints and floats, and the elements of numeric numpy arrays — not booleans) and
its *skeleton* (everything else, with each numeric leaf replaced by ``#``:
strings, booleans, ``None``, container types, dict keys, array shapes and
dtypes, non-finite numbers).  The feature row is ``[code(skeleton), leaves...]``
where ``code`` maps the canonical serialisation of the skeleton through
BLAKE2b to a 53-bit integer scaled into ``[0, 1)`` — so each distinct skeleton
is an outcome of its own (distinct values stay distinct except with
probability ~K²/2⁵⁴) and numbers keep their values.  The width is fixed by the
first output seen; an output with a different number of leaves is encoded as
``[code(whole value, tagged), 0, ..., 0]`` — again an outcome of its own.
Python's ``hash()`` is never used, so codes agree across processes.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

import numpy as np

from dpaudit.errors import MechanismError


def _canon(value: Any, leaves: list[float] | None) -> str:
    """Canonical text of ``value``; numeric leaves go to ``leaves`` (``#``) when given."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None:
        return "N"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, (int, float)):
        v = float(value)
        if math.isfinite(v) and leaves is not None:
            leaves.append(v)
            return "#"
        return "n" + repr(v)
    if isinstance(value, str):
        return "s" + json.dumps(value)
    if isinstance(value, bytes):
        return "y" + value.hex()
    if isinstance(value, np.ndarray):
        head = f"a{value.shape}"
        if value.dtype.kind in "iuf":
            return head + "[" + ",".join(_canon(v, leaves) for v in value.ravel().tolist()) + "]"
        return head + value.dtype.kind + _canon(value.ravel().tolist(), leaves)
    if isinstance(value, (list, tuple)):
        tag = "l" if isinstance(value, list) else "t"
        return tag + "(" + ",".join(_canon(v, leaves) for v in value) + ")"
    if isinstance(value, (set, frozenset)):
        return "e(" + ",".join(sorted(_canon(v, None) for v in value)) + ")"
    if isinstance(value, dict):
        items = sorted((_canon(k, None), v) for k, v in value.items())
        return "d(" + ",".join(k + ":" + _canon(v, leaves) for k, v in items) + ")"
    raise MechanismError(
        f"cannot encode an output of type {type(value).__name__}: return numbers, strings, "
        "booleans, None, bytes, tuples, lists, dicts, sets or numpy arrays"
    )


def stable_code(text: str) -> float:
    """BLAKE2b of ``text`` as a 53-bit integer scaled into ``[0, 1)`` (exact in float64)."""
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 11) / 2.0**53


def split(value: Any) -> tuple[float, list[float]]:
    """``(code(skeleton), numeric leaves)`` of one output."""
    leaves: list[float] = []
    skeleton = _canon(value, leaves)
    return stable_code(skeleton), leaves


def encode_one(value: Any, width: int) -> np.ndarray:
    """The feature row of one output for a row of ``width`` numbers."""
    code, leaves = split(value)
    row = np.zeros(width, dtype=np.float64)
    if len(leaves) == width - 1:
        row[0] = code
        row[1:] = leaves
    else:
        row[0] = stable_code("whole:" + _canon(value, None))
    return row


def output_width(value: Any) -> int:
    """Width of the feature row fixed by the first output ``value``."""
    return 1 + len(split(value)[1])


def encode_outputs(outputs: Any, width: int) -> np.ndarray:
    """An ``(n, width)`` float64 array for a sequence of ``n`` outputs."""
    return np.stack([encode_one(v, width) for v in outputs]).reshape(-1, width)
