"""A safe, exact file format for work-unit results in a run directory.

A run directory may come from someone else (a colleague's interrupted audit),
so reading it must never execute code: no pickle.  A stored unit result is one
``.npz`` archive (:func:`numpy.savez`, read back with ``allow_pickle=False``):

* ``structure`` — UTF-8 JSON (as a ``uint8`` array) describing the value's
  shape: containers, Python scalars, and references to the arrays below;
* ``a0``, ``a1``, … — every numpy array and numpy scalar of the value, in the
  ``.npy`` format (dtype, byte order and shape kept exactly).

The codec supports exactly what dpaudit's auditors return from work units,
and raises :class:`UnitEncodingError` for anything else:

* numpy arrays without Python objects (the sanity check's and the sensitivity
  simulation's counts) and numpy scalars (kept as numpy scalars);
* ``None``, ``bool``, ``int``, ``float`` (stored as ``float.hex``: exact,
  ``inf`` and ``nan`` included), ``str``;
* ``tuple``, ``list`` and ``dict`` with ``str`` keys of these;
* the dataclasses named in :data:`ALLOWED_DATACLASSES` (the black-box auditor's
  ``UnitCounts`` and ``TrainingData``, the HoHo experiment's ``AttackMetrics``, the
  rewriter white box's ``ScoredRewrites`` and ``FidelityCheck``),
  rebuilt by calling the class with its fields — nothing else is ever imported
  or constructed.

Decoding checks everything it reads; any problem (a truncated or corrupted
archive — zip CRCs catch flipped bytes — or an unexpected structure) raises
:class:`CorruptUnitError`, which the checkpoint treats as a missing unit.
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
import zipfile
from typing import Any

import numpy as np

#: Identifies the format inside ``structure``; a different value is refused.
FORMAT = "dpaudit-unit/1"

#: Dataclasses a unit result may contain (``module.QualName``), by module path so
#: that importing this codec imports none of them.
ALLOWED_DATACLASSES = frozenset(
    {
        "dpaudit.auditors.blackbox.counting.UnitCounts",
        "dpaudit.auditors.blackbox.scores.TrainingData",
        "dpaudit.attacks.experiment.AttackMetrics",
        "dpaudit.auditors.rewriter.whitebox.ScoredRewrites",
        "dpaudit.auditors.rewriter.fidelity.FidelityCheck",
    }
)

_STRUCTURE = "structure"
_SUPPORTED = (
    "numpy arrays (no object dtype), numpy scalars, None, bool, int, float, str, "
    "tuple, list, dict with str keys, and the dataclasses " + ", ".join(sorted(ALLOWED_DATACLASSES))
)


class UnitEncodingError(TypeError):
    """A work-unit result contains a type the run-directory format does not store."""


class CorruptUnitError(ValueError):
    """A stored unit result cannot be read back (truncated, corrupted, or not this format)."""


# ------------------------------------------------------------------ encoding
def encode_unit(value: Any) -> bytes:
    """The ``.npz`` bytes that store ``value`` (see the module docstring)."""
    arrays: list[np.ndarray] = []
    node = _encode(value, arrays, "result")
    structure = json.dumps({"format": FORMAT, "value": node}, separators=(",", ":"))
    members = {f"a{i}": a for i, a in enumerate(arrays)}
    members[_STRUCTURE] = np.frombuffer(structure.encode("utf-8"), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **members)
    return buf.getvalue()


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _encode(value: Any, arrays: list[np.ndarray], where: str) -> Any:
    # Exact type checks: a subclass (an IntEnum, a float subclass other than
    # numpy's) would not come back as itself, so it is refused.
    kind = type(value)
    if isinstance(value, np.ndarray) and kind is np.ndarray:
        if value.dtype.hasobject:
            raise _unsupported(value, where, "an array of Python objects needs pickle")
        arrays.append(value)
        return {"$array": len(arrays) - 1}
    if isinstance(value, np.generic):  # before float: np.float64 subclasses float
        if value.dtype.hasobject:
            raise _unsupported(value, where, "a Python object needs pickle")
        arrays.append(np.asarray(value))
        return {"$scalar": len(arrays) - 1}
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return {"$float": value.hex()}
    if kind is tuple or kind is list:
        items = [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]
        return {"$tuple" if kind is tuple else "$list": items}
    if kind is dict:
        pairs = []
        for key, v in value.items():
            if type(key) is not str:
                raise _unsupported(key, f"{where} key", "dict keys must be str")
            pairs.append([key, _encode(v, arrays, f"{where}[{key!r}]")])
        return {"$dict": pairs}
    name = _type_name(kind)
    if name in ALLOWED_DATACLASSES and dataclasses.is_dataclass(value):
        fields = {
            f.name: _encode(getattr(value, f.name), arrays, f"{where}.{f.name}")
            for f in dataclasses.fields(value)
        }
        return {"$dataclass": name, "fields": fields}
    raise _unsupported(value, where, "not a supported type")


def _unsupported(value: Any, where: str, why: str) -> UnitEncodingError:
    return UnitEncodingError(
        f"cannot store a work-unit result in the run directory: {where} has type "
        f"{_type_name(type(value))} ({why}); supported: {_SUPPORTED}"
    )


# ------------------------------------------------------------------ decoding
def decode_unit(data: bytes) -> Any:
    """The value stored by :func:`encode_unit`; :class:`CorruptUnitError` if unreadable."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            members = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as exc:
        raise CorruptUnitError(f"not a readable unit archive ({exc})") from None
    try:
        structure = json.loads(bytes(members.pop(_STRUCTURE)).decode("utf-8"))
    except (KeyError, ValueError, TypeError, RecursionError) as exc:
        raise CorruptUnitError(f"no readable structure ({exc})") from None
    if not isinstance(structure, dict) or structure.get("format") != FORMAT:
        raise CorruptUnitError(f"not the {FORMAT} format")
    try:
        return _decode(structure.get("value"), members)
    except CorruptUnitError:
        raise
    except Exception as exc:  # a structure that does not fit its own arrays or classes
        raise CorruptUnitError(f"inconsistent structure ({type(exc).__name__}: {exc})") from None


def _decode(node: Any, members: dict[str, np.ndarray]) -> Any:
    if node is None or type(node) in (bool, int, str):
        return node
    if type(node) is not dict:
        raise CorruptUnitError(f"unexpected node {node!r:.80}")
    if set(node) == {"$dataclass", "fields"} and type(node["fields"]) is dict:
        cls = _allowed_class(node["$dataclass"])
        return cls(**{_key(k): _decode(v, members) for k, v in node["fields"].items()})
    if len(node) != 1:
        raise CorruptUnitError(f"unexpected node {node!r:.80}")
    ((tag, body),) = node.items()
    if tag == "$array":
        return _member(members, body)
    if tag == "$scalar":
        return _member(members, body)[()]
    if tag == "$float":
        return float.fromhex(body)
    if tag == "$tuple":
        return tuple(_decode(v, members) for v in body)
    if tag == "$list":
        return [_decode(v, members) for v in body]
    if tag == "$dict":
        return {_key(k): _decode(v, members) for k, v in body}
    raise CorruptUnitError(f"unexpected node {node!r:.80}")


def _member(members: dict[str, np.ndarray], index: Any) -> np.ndarray:
    if type(index) is not int or f"a{index}" not in members:
        raise CorruptUnitError(f"reference to a missing array {index!r}")
    array = members[f"a{index}"]
    # Results are merged by in-place addition: hand out writable arrays.
    return array if array.flags.writeable else array.copy()


def _key(key: Any) -> str:
    if type(key) is not str:
        raise CorruptUnitError(f"non-string key {key!r:.80}")
    return key


def _allowed_class(name: Any) -> type:
    if name not in ALLOWED_DATACLASSES:
        raise CorruptUnitError(f"dataclass {name!r:.80} is not an allowed unit result")
    module, _, qualname = str(name).rpartition(".")
    cls = getattr(importlib.import_module(module), qualname)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise CorruptUnitError(f"{name} is not a dataclass")
    return cls
