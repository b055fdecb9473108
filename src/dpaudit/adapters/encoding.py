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

Blocks of outputs (:func:`layout_of`, :func:`encode_block`): every user function
``f(x, n, rng)`` — on a real box or a typed domain of :mod:`dpaudit.domains` —
returns its ``n`` outputs as one *block*, read here and nowhere else.  The first
block (the probe) fixes the mechanism's :class:`OutputLayout`:

* ``array`` — a numpy array of numbers (bool, int, float) of shape ``(n, ...)``:
  passed on unchanged (a 1-D array is ``n`` scalar outputs, ``(n, 1)``);
* ``numbers`` — a sequence of ``n`` numbers, or of ``n`` lists/tuples/arrays of
  numbers of one structure: an ``(n, k)`` float64 array of their values;
* ``any`` — anything else (strings, booleans, ``None``, mixed tuples, dicts,
  nested lists...): the rows ``[code(skeleton), leaves...]`` above.

The codes depend on the value only, so they agree across the two inputs of a
pair, across blocks and across processes.  A wrong count, a container that is
not a sequence of outputs, an output that breaks a numeric layout, or a value
that cannot be encoded raises :class:`~dpaudit.errors.MechanismError` naming the
mechanism, the input, the output and what was expected; NaN and inf in numbers
are refused where every output is checked
(:func:`dpaudit.auditors.core.guard.checked_sample`).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
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


# ------------------------------------------------------------ blocks of outputs
#: The layouts of :class:`OutputLayout`, in the order the probe tries them.
LAYOUTS = ("array", "numbers", "any")

#: Scalar types read as numbers without a per-output structure walk (not bool).
_NUMBER_TYPES = frozenset(
    {int, float, np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
     np.uint64, np.uint32, np.uint16, np.uint8}
)  # fmt: skip


@dataclass(frozen=True)
class OutputLayout:
    """How every block of one mechanism's outputs is read (fixed by its first block).

    ``kind`` is one of :data:`LAYOUTS`; ``shape`` the shape of one encoded output
    (the mechanism's ``output_shape``); ``structure`` (``numbers`` only) the
    structure every output must have: ``#`` a number, ``t(#,#)`` a pair of
    numbers, ``l(#,#,#)`` a list of three, ``a(2,)`` an array of shape ``(2,)``.
    """

    kind: str
    shape: tuple[int, ...]
    structure: str = ""

    def describe(self) -> str:
        """The layout in words, for messages."""
        if self.kind == "array":
            return f"a numpy array of numbers of shape (n, {', '.join(map(str, self.shape))})"
        if self.kind == "numbers":
            what = "a number" if self.structure == "#" else f"numbers shaped {self.structure}"
            return f"a sequence of outputs, each {what}"
        return "a sequence of outputs of any type (encoded as categories and numbers)"


def _numbers(value: Any, leaves: list[float]) -> str | None:
    """Structure of ``value`` if it holds only (at least one) numbers, values to ``leaves``."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            leaves.append(float(value))
        except OverflowError:
            return None
        return "#"
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "iuf" or value.size == 0:
            return None
        leaves.extend(value.astype(np.float64).ravel().tolist())
        return f"a{value.shape}"
    if isinstance(value, (list, tuple)) and len(value) > 0:
        parts = [_numbers(v, leaves) for v in value]
        if None in parts:
            return None
        tag = "l" if isinstance(value, list) else "t"
        return tag + "(" + ",".join(parts) + ")"  # type: ignore[arg-type]
    return None


def _preview(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def outputs_of(out: Any, n: int, where: str) -> np.ndarray | list[Any]:
    """The block ``out`` returned for ``n`` outputs: a numeric array as it is, else a list.

    Refused, naming ``where`` (the mechanism and its input): something that is not a
    sequence of outputs (``None``, a number, a string, a dict, a 0-d array), and the
    wrong number of outputs.  A numeric array is returned unchecked: the auditors'
    guard and the conformance checks judge its shape, dtype and values.
    """
    if isinstance(out, np.ndarray) and out.dtype.kind in "biuf":
        return out
    if isinstance(out, np.ndarray):
        if out.ndim == 0:
            raise MechanismError(
                f"{where} returned a 0-d array: expected {n} outputs, e.g. an array of "
                f"shape ({n}, ...)"
            )
        if out.shape[0] != n:
            raise MechanismError(
                f"{where} returned shape {out.shape} for n = {n}: expected ({n}, ...) with n first"
            )
        return list(out)
    if out is None or isinstance(out, (str, bytes, dict, int, float, bool, np.generic)):
        raise MechanismError(
            f"{where} returned {type(out).__name__}: expected a sequence of {n} outputs "
            f"(a numpy array of shape ({n}, ...), or a list or tuple of {n} values)"
        )
    try:
        outs = list(out)
    except TypeError:
        raise MechanismError(
            f"{where} returned {type(out).__name__}: expected a sequence of {n} outputs "
            f"(a numpy array of shape ({n}, ...), or a list or tuple of {n} values)"
        ) from None
    if len(outs) != n:
        raise MechanismError(
            f"{where} returned {type(out).__name__} of {len(outs)} outputs for n = {n}: "
            f"expected {n}"
        )
    return outs


def layout_of(out: Any, n: int, where: str) -> OutputLayout:
    """The layout fixed by a first block ``out`` of ``n`` outputs (see the module docstring)."""
    block = outputs_of(out, n, where)
    if isinstance(block, np.ndarray):
        if block.ndim == 0 or block.shape[0] != n:
            raise MechanismError(
                f"{where} returned shape {block.shape} for n = {n}: expected ({n}, ...) "
                "with n first"
            )
        return OutputLayout("array", tuple(int(s) for s in block.shape[1:]) or (1,))
    leaves: list[float] = []
    structures = {_numbers(v, leaves) for v in block}
    if len(structures) == 1 and None not in structures:
        return OutputLayout("numbers", (len(leaves) // n,), structures.pop())  # type: ignore[arg-type]
    width = _naming(where, lambda: output_width(block[0]))
    _naming(where, lambda: encode_outputs(block, width))  # every output must be encodable
    return OutputLayout("any", (width,))


def _naming(where: str, encode: Any) -> Any:
    """``encode()``; an output that cannot be encoded is refused naming ``where``."""
    try:
        return encode()
    except MechanismError as exc:
        raise MechanismError(f"{where}: {exc}") from None


def encode_block(out: Any, n: int, layout: OutputLayout, where: str) -> np.ndarray:
    """The block ``out`` of ``n`` outputs as the array the auditors read, shape ``(n, *shape)``.

    ``array``: the array itself (1-D ``(n,)`` → ``(n, 1)``); its shape, dtype and values
    are checked by the auditors' guard.  ``numbers``: float64 values, every output of
    ``layout.structure``.  ``any``: :func:`encode_outputs`.
    """
    block = outputs_of(out, n, where)
    if layout.kind == "array":
        if not isinstance(block, np.ndarray):
            raise MechanismError(
                f"{where} returned {type(out).__name__} of non-numbers (e.g. "
                f"{_preview(block[0])}): expected {layout.describe()}, as its first outputs"
            )
        return block.reshape(-1, 1) if block.ndim == 1 and layout.shape == (1,) else block
    if isinstance(block, np.ndarray):
        block = list(block)
    if layout.kind == "any":
        return _naming(where, lambda: encode_outputs(block, layout.shape[0]))
    if layout.structure == "#" and all(type(v) in _NUMBER_TYPES for v in block):
        return np.asarray(block, dtype=np.float64).reshape(n, 1)
    leaves: list[float] = []
    for i, v in enumerate(block):
        if _numbers(v, leaves) != layout.structure:
            raise MechanismError(
                f"{where} returned {_preview(v)} ({type(v).__name__}) as output {i} of {n}: "
                f"expected {layout.describe()}, as its first outputs. Outputs that are "
                "sometimes not numbers must be so from the first call: return e.g. "
                "('value', 3.0) and ('none', 0) rather than 3.0 and None"
            )
    return np.asarray(leaves, dtype=np.float64).reshape(n, layout.shape[0])
