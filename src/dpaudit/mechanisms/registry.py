"""Registry of mechanisms by name, and construction from names and ``-p`` parameters.

Importing this module imports its package first, whose ``__init__`` registers
every built-in mechanism; adapters register when :mod:`dpaudit.adapters` is
imported.  The registry itself imports no mechanism.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from decimal import Decimal, InvalidOperation
from typing import Any

from dpaudit.analysis.word_embedding import glove_embedding
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, UnknownNameError
from dpaudit.mechanisms.base import Mechanism

_REGISTRY: dict[str, type[Mechanism]] = {}


def register(cls: type[Mechanism]) -> type[Mechanism]:
    """Class decorator adding a mechanism class to the registry under ``cls.name``."""
    return _add(_REGISTRY, cls, "mechanism")


def _add(registry: dict[str, Any], cls: Any, kind: str) -> Any:
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} has no name")
    if cls.name in registry and registry[cls.name] is not cls:
        raise ValueError(f"{kind} name {cls.name!r} registered twice")
    registry[cls.name] = cls
    return cls


def _unknown(kind: str, name: str, known: list[str]) -> UnknownNameError:
    """An unknown-name error listing every known name, with a "did you mean" for near misses."""
    import difflib

    error = UnknownNameError(kind, name, known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        # The message is built by UnknownNameError; the suggestion is appended to it.
        error.args = (f"{error.args[0]}; did you mean {' or '.join(map(repr, close))}?",)
    return error


def mechanism_names() -> list[str]:
    """All registered mechanism names, sorted."""
    return sorted(_REGISTRY)


def mechanism_class(name: str) -> type[Mechanism]:
    """The class registered under ``name``."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise _unknown("mechanism", name, list(_REGISTRY) + list(_WORD_REGISTRY)) from None


def parameter_fields(cls: type[Mechanism]) -> dict[str, dataclasses.Field[Any]]:
    """Parameter fields of ``cls`` keyed by their CLI name (``epsilon`` included)."""
    return {(f.metadata.get("cli") or f.name): f for f in dataclasses.fields(cls)}


def make_mechanism(name: str, **params: Any) -> Mechanism:
    """Build mechanism ``name`` from keyword parameters named as on the CLI.

    Values may be strings (as from ``-p NAME=VALUE``); they are converted to the
    field's type.  Unknown parameters raise :class:`UnknownNameError`.
    """
    cls = mechanism_class(name)
    fields = parameter_fields(cls)
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in params.items():
        if key not in fields:
            raise UnknownNameError(f"parameter of {name}", key, list(fields))
        f = fields[key]
        kwargs[f.name] = _convert(key, value, f, hints[f.name])
    try:
        return cls(**kwargs)
    except TypeError as exc:
        if isinstance(exc, InvalidTypeError):
            raise
        missing = [k for k, f in fields.items() if _required(f) and f.name not in kwargs]
        if missing:
            raise InvalidArgumentError(
                missing[0], None, f"a value (required parameter of {name})"
            ) from None
        raise


def from_spec(spec: dict[str, Any]) -> Mechanism:
    """Inverse of :meth:`Mechanism.spec`."""
    return make_mechanism(spec["mechanism"], **spec["params"])


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _convert(key: str, value: Any, f: dataclasses.Field[Any], hint: Any) -> Any:
    choices = f.metadata.get("choices")
    target = _base_type(hint)
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if target is str:
            value = text
        elif target is int:
            # Exact, as the CLI's counts: 1000, 1_000 and 1e3 are the same integer; 1.5 is not.
            try:
                number = Decimal(text)
            except InvalidOperation:
                number = Decimal("NaN")
            if not number.is_finite() or number != number.to_integral_value():
                raise InvalidArgumentError(key, value, "an integer (e.g. 1000 or 1e3)")
            if number.adjusted() > 18:
                raise InvalidArgumentError(key, value, "an integer below 1e19")
            value = int(number)
        elif target is float:
            try:
                value = float(text)
            except ValueError:
                raise InvalidArgumentError(key, value, "a number") from None
            if not math.isfinite(value):
                raise InvalidArgumentError(key, text, "a finite number")
        elif target is tuple:
            value = parse_range(key, text)
    if choices is not None and value not in choices:
        raise InvalidArgumentError(key, value, f"one of {', '.join(choices)}")
    return value


def parse_range(key: str, text: str) -> tuple[float, float]:
    """Parse ``LOW,HIGH`` into a pair of floats with LOW < HIGH."""
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        low, high = float(parts[0]), float(parts[1])
    except ValueError:
        raise InvalidArgumentError(key, text, "LOW,HIGH with two numbers") from None
    if math.isnan(low) or math.isnan(high) or not low < high:
        raise InvalidArgumentError(key, text, "LOW,HIGH with LOW < HIGH")
    return (low, high)


def _base_type(tp: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _base_type(args[0]) if args else tp
    if origin is tuple:
        return tuple
    return tp


# ------------------------------------------------------------------ word level
_WORD_REGISTRY: dict[str, type[Any]] = {}


def register_word(cls: type[Any]) -> type[Any]:
    """Class decorator adding a word-level mechanism (:mod:`dpaudit.mechanisms.word`)."""
    return _add(_WORD_REGISTRY, cls, "word mechanism")


def word_mechanism_names() -> list[str]:
    """All registered word-level mechanism names, sorted."""
    return sorted(_WORD_REGISTRY)


def word_mechanism_class(name: str) -> type[Any]:
    """The word-level mechanism class registered under ``name``."""
    try:
        return _WORD_REGISTRY[name]
    except KeyError:
        raise _unknown("word mechanism", name, list(_WORD_REGISTRY)) from None


def make_word_mechanism(name: str, embedding: Any = None, **params: Any) -> Any:
    """Build word mechanism ``name`` over ``embedding`` (default: GloVe, 20 000 words).

    ``params`` are named as on the CLI (``-p NAME=VALUE``: the field name, or its
    ``cli`` name such as ``lambda``); string values are converted to the field's type.
    """
    cls = word_mechanism_class(name)
    fields = {
        k: f for k, f in parameter_fields(cls).items() if k != "embedding" and not k.startswith("_")
    }
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in params.items():
        if key not in fields:
            raise UnknownNameError(f"parameter of {name}", key, sorted(fields))
        f = fields[key]
        kwargs[f.name] = _convert(key, value, f, hints[f.name])
    if "epsilon" not in kwargs:
        raise InvalidArgumentError("epsilon", None, f"a value (required parameter of {name})")
    return cls(embedding=embedding if embedding is not None else glove_embedding(), **kwargs)
