"""The run-directory format for unit results: exact round trips, no pickle, clear refusals."""

from __future__ import annotations

import dataclasses
import enum
import io
import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from dpaudit.attacks.experiment import AttackMetrics
from dpaudit.auditors.blackbox.counting import UnitCounts
from dpaudit.auditors.blackbox.scores import TrainingData, compress_rows
from dpaudit.engine.unit_codec import (
    ALLOWED_DATACLASSES,
    CorruptUnitError,
    UnitEncodingError,
    decode_unit,
    encode_unit,
)


def _same(a: object, b: object) -> bool:
    """Bit-identical: same types all the way down, arrays with equal dtype, shape and bytes."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, float):
        return a.hex() == b.hex()  # exact, and nan == nan
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a):
        return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def _unit_counts() -> UnitCounts:
    rng = np.random.default_rng(0)
    greater = (rng.integers(0, 100, 5), rng.integers(0, 100, 1))
    equal = (rng.integers(0, 9, 5), np.zeros(1, dtype=np.int64))
    weighted = ((rng.random(5), rng.random(5), float(rng.random())), None)
    return UnitCounts(1000, greater, equal, weighted)


def _attack_metrics() -> AttackMetrics:
    floats = {
        f.name: 0.1 * i
        for i, f in enumerate(dataclasses.fields(AttackMetrics))
        if f.type == "float"
    }
    ints = {f.name: 7 for f in dataclasses.fields(AttackMetrics) if f.type == "int"}
    return AttackMetrics(
        **floats,
        **ints,
        linking_auc_per_target=(1.0, 0.75, 0.5),
        optimal_linking_auc_per_target=(1.0, 1.0, float("nan")),
    )


# Every kind of value dpaudit's work units return.
RESULTS = {
    "final event hits (the core's counting unit)": np.array([20_000, 1234], dtype=np.int64),
    "sensitivity counts": np.array([400, 17, 0], dtype=np.int64),
    "black-box counts": _unit_counts(),
    "black-box counts, plain": UnitCounts(5, (np.arange(3),), (np.zeros(3, np.int64),)),
    "training outputs, continuous": TrainingData(
        np.random.default_rng(1).laplace(size=(50, 3)), np.ones(50, dtype=np.int64)
    ),
    "training outputs, compressed": compress_rows(
        np.random.default_rng(2).integers(0, 2, size=(200, 11)).astype(np.uint8)
    ),
    "exact loss": 0.123456789012345678,
    "exact loss, infinite": math.inf,
    "exact loss, unknown": None,
    "HoHo attack metrics": _attack_metrics(),
    "scalars": (np.float64(0.1), np.int64(-3), np.float32(2.5), True, -0.0, math.nan, "x", 2**70),
    "containers": {"a": [1, (2.0, None)], "b": {"c": np.arange(4).reshape(2, 2).T}},
}


@pytest.mark.parametrize("value", list(RESULTS.values()), ids=list(RESULTS))
def test_every_unit_result_type_round_trips_bit_identically(value: object) -> None:
    back = decode_unit(encode_unit(value))
    assert _same(value, back)


def test_decoded_arrays_are_writable() -> None:
    # Auditors merge unit results by in-place addition.
    back = decode_unit(encode_unit(_unit_counts()))
    for array in (back.greater[0], back.weighted[0][0]):
        before = array.copy()
        array += 1  # raises on a read-only array
        assert np.array_equal(array, before + 1)


class _Colour(enum.IntEnum):
    RED = 1


@dataclasses.dataclass(frozen=True)
class _NotAllowed:
    x: int


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (np.array([object(), 1], dtype=object), "result"),
        ({1, 2}, "result"),
        ({"ok": 1, 2: 3}, "result key"),
        ((1, [2, _Colour.RED]), "result[1][1]"),
        (_NotAllowed(1), "result"),
        (UnitCounts(1, (np.arange(2),), ({3},)), "result.equal[0]"),
        (b"bytes", "result"),
    ],
    ids=["object array", "set", "int key", "IntEnum", "other dataclass", "nested", "bytes"],
)
def test_unsupported_types_are_refused_naming_where(value: object, where: str) -> None:
    with pytest.raises(UnitEncodingError) as info:
        encode_unit(value)
    message = str(info.value)
    assert f"{where} has type" in message and "supported:" in message


class _Payload:
    """Unpickling this would create a file: proof that nothing was unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (Path.touch, (self.marker,))


def test_pickles_are_never_loaded(tmp_path: Path) -> None:
    marker = tmp_path / "code-ran"
    # A plain pickle renamed to .npz, and an .npz whose array holds the pickled payload.
    crafted = [pickle.dumps(_Payload(marker))]
    buf = io.BytesIO()
    np.savez(
        buf,
        structure=np.frombuffer(
            b'{"format":"dpaudit-unit/1","value":{"$array":0}}', dtype=np.uint8
        ),
        a0=np.array([_Payload(marker)], dtype=object),
    )
    crafted.append(buf.getvalue())
    for data in crafted:
        with pytest.raises(CorruptUnitError):
            decode_unit(data)
    assert not marker.exists()


@pytest.mark.parametrize(
    "structure",
    [
        b'{"format":"dpaudit-unit/1","value":{"$dataclass":"os.system","fields":{}}}',
        b'{"format":"dpaudit-unit/1","value":{"$dataclass":"subprocess.Popen",'
        b'"fields":{"args":"true"}}}',
        b'{"format":"dpaudit-unit/1","value":{"$array":3}}',
        b'{"format":"dpaudit-unit/0","value":1}',
        b'{"format":"dpaudit-unit/1","value":{"$float":"0x1p+0","$list":[]}}',
        b"not json",
    ],
    ids=["os.system", "Popen", "missing array", "other format", "two tags", "not json"],
)
def test_only_allowed_classes_are_built(structure: bytes) -> None:
    buf = io.BytesIO()
    np.savez(buf, structure=np.frombuffer(structure, dtype=np.uint8))
    with pytest.raises(CorruptUnitError):
        decode_unit(buf.getvalue())


def test_allowed_dataclasses_exist_and_are_dataclasses() -> None:
    import importlib

    for name in ALLOWED_DATACLASSES:
        module, _, cls = name.rpartition(".")
        assert dataclasses.is_dataclass(getattr(importlib.import_module(module), cls)), name


def test_truncated_or_flipped_bytes_are_reported_as_corrupt() -> None:
    data = encode_unit(_unit_counts())
    for cut in (0, 10, len(data) // 2, len(data) - 1):
        with pytest.raises(CorruptUnitError):
            decode_unit(data[:cut])
    # Flip one byte inside the first array's data: the zip member's CRC-32 catches it.
    magic = data.index(b"\x93NUMPY")
    header = 10 + int.from_bytes(data[magic + 8 : magic + 10], "little")  # .npy format 1.0
    offset = magic + header + 3
    flipped = bytearray(data)
    flipped[offset] ^= 0xFF
    with pytest.raises(CorruptUnitError):
        decode_unit(bytes(flipped))
