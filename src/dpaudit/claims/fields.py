"""What every claim's ``to_dict``/``from_dict`` share: the kind check and the field reader.

A claim's JSON form is its dataclass fields plus ``"kind"``; infinite numbers
are written as the strings ``"inf"``/``"-inf"`` (as :mod:`dpaudit.serialization`
does) so that the form is strict JSON, and read back with :func:`number`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from dpaudit.errors import InvalidArgumentError, MissingArgumentError

#: The neighbouring relation of a claim that does not fix one itself: a curve claim is
#: made for the mechanism it is attached to, between that mechanism's neighbours.
MECHANISMS_NEIGHBOURS = "the neighbouring inputs of the mechanism making the claim"


def check_kind(cls: type, data: Mapping[str, Any], kinds: tuple[str, ...] = ()) -> str:
    """``data["kind"]``, or an error unless it is ``cls.kind`` (or one of ``kinds``)."""
    if not isinstance(data, Mapping):
        raise InvalidArgumentError("data", data, f"the dict a {cls.__name__}.to_dict() wrote")
    if "kind" not in data:
        raise MissingArgumentError("kind", f"the claim's kind ({cls.__name__}.to_dict() writes it)")
    allowed = kinds or (cls.kind,)  # type: ignore[attr-defined]
    kind = data["kind"]
    if kind not in allowed:
        raise InvalidArgumentError("kind", kind, f"{' or '.join(allowed)} for a {cls.__name__}")
    return str(kind)


def init_fields(cls: type, data: Mapping[str, Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The constructor arguments of dataclass ``cls`` present in ``data`` (other keys ignored)."""
    return {
        f.name: data[f.name]
        for f in dataclasses.fields(cls)
        if f.init and f.name in data and f.name not in skip
    }


def number(value: Any) -> float:
    """A float from its JSON form (``"inf"``, ``"-inf"`` and ``"nan"`` too)."""
    return float(value)


def jsonable_number(value: float) -> float | str:
    """``value``, or ``"inf"``/``"-inf"`` when it is infinite (strict JSON has no infinity)."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return float(value)


def neighbouring_entry(neighbouring: str) -> dict[str, str]:
    """``{"neighbouring": ...}`` unless it is the default relation (kept out of the JSON form)."""
    return {} if neighbouring == MECHANISMS_NEIGHBOURS else {"neighbouring": neighbouring}
