"""The one registry of mechanisms by name, and construction from names and ``-p`` parameters.

Vector, word and text mechanisms share one registry: each class declares its
:attr:`~dpaudit.mechanisms.base.MechanismContract.output_kind`, and
:func:`mechanism_names` filters by it.  Importing this module imports its
package first, whose ``__init__`` registers every built-in mechanism; adapters
register when :mod:`dpaudit.adapters` is imported.  The registry itself imports
no mechanism.

The text mechanisms (the LM rewriters, output kind ``"text"``) are registered by name and
*factory path* (:func:`register_factory`): a rewriter is built on a language model the
caller loads, one class serves several names (DP-Prompt and DP-Paraphrase), and their
modules are imported only when :func:`make_mechanism` builds one, so that listing the
registry never imports PyTorch.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from decimal import Decimal, InvalidOperation
from importlib import import_module
from typing import Any

from dpaudit.analysis.word_embedding import glove_embedding
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, UnknownNameError
from dpaudit.mechanisms.base import OUTPUT_KINDS, VECTOR_OUTPUT_KINDS, MechanismContract

_REGISTRY: dict[str, type[MechanismContract]] = {}
#: Mechanisms built by a factory: name → (output kind, ``"module:function"``).
_FACTORIES: dict[str, tuple[str, str]] = {}

#: The output kind of the LM rewriters: a document in, a document out.
TEXT_KIND = "text"
#: ``kind`` filters of :func:`mechanism_names`: one output kind, or all vector kinds.
KINDS = (*OUTPUT_KINDS, TEXT_KIND, "vector")


_M = typing.TypeVar("_M", bound=type[MechanismContract])


def register(cls: _M) -> _M:
    """Class decorator adding a mechanism class (any output kind) under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__qualname__} has no name")
    if (cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls) or cls.name in _FACTORIES:
        raise ValueError(f"mechanism name {cls.name!r} registered twice")
    if cls.output_kind not in OUTPUT_KINDS:
        raise ValueError(f"{cls.__qualname__}.output_kind must be one of {OUTPUT_KINDS}")
    _REGISTRY[cls.name] = cls
    return cls


def register_factory(name: str, output_kind: str, target: str) -> None:
    """Register mechanism ``name`` of ``output_kind``, built by ``target`` (``"module:function"``).

    The module is imported only when :func:`make_mechanism` builds ``name``; the function is
    called with the keyword parameters given there.  For the text mechanisms, whose classes
    take a loaded language model and serve several names.
    """
    module, _, function = target.partition(":")
    if not (module and function) or output_kind != TEXT_KIND:
        raise ValueError(f"factory {target!r} of {output_kind!r}: 'module:function' of 'text'")
    if name in _REGISTRY or _FACTORIES.get(name, (output_kind, target)) != (output_kind, target):
        raise ValueError(f"mechanism name {name!r} registered twice")
    _FACTORIES[name] = (output_kind, target)


def _unknown(kind: str, name: str, known: list[str]) -> UnknownNameError:
    """An unknown-name error listing every known name, with a "did you mean" for near misses."""
    error = UnknownNameError(kind, name, known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:
        # The message is built by UnknownNameError; the suggestion is appended to it.
        error.args = (f"{error.args[0]}; did you mean {' or '.join(map(repr, close))}?",)
    return error


def mechanism_names(kind: str | None = None) -> list[str]:
    """Registered mechanism names, sorted: all of them, or those of one ``kind``.

    ``kind``: an output kind (``"word"``, ``"text"``, ``"real"``, ...) or ``"vector"``
    for every vector kind.
    """
    if kind is None:
        return sorted([*_REGISTRY, *_FACTORIES])
    if kind not in KINDS:
        raise InvalidArgumentError("kind", kind, f"None or one of {', '.join(KINDS)}")
    wanted = VECTOR_OUTPUT_KINDS if kind == "vector" else (kind,)
    kinds = {n: c.output_kind for n, c in _REGISTRY.items()}
    kinds.update({n: k for n, (k, _) in _FACTORIES.items()})
    return sorted(n for n, k in kinds.items() if k in wanted)


def output_kind(name: str) -> str:
    """The output kind of mechanism ``name`` (without importing a factory's module)."""
    if name in _FACTORIES:
        return _FACTORIES[name][0]
    return mechanism_class(name).output_kind


def mechanism_class(name: str) -> type[Any]:
    """The class registered under ``name`` (a vector or word mechanism)."""
    try:
        return _REGISTRY[name]
    except KeyError:
        if name in _FACTORIES:
            raise InvalidArgumentError(
                "mechanism",
                name,
                f"a vector or word mechanism: {name} is a text mechanism (an LM rewriter), "
                "built on a model by make_mechanism(name, model=..., epsilon=...) and audited "
                "by dpaudit audit-rewriter",
            ) from None
        raise _unknown("mechanism", name, list(_REGISTRY)) from None


def parameter_fields(cls: type[MechanismContract]) -> dict[str, dataclasses.Field[Any]]:
    """Parameter fields of ``cls`` keyed by their CLI name (``epsilon`` included)."""
    return {(f.metadata.get("cli") or f.name): f for f in dataclasses.fields(cls)}


def make_mechanism(name: str, **params: Any) -> Any:
    """Build mechanism ``name`` from keyword parameters named as on the CLI.

    Values may be strings (as from ``-p NAME=VALUE``); they are converted to the
    field's type.  Unknown parameters raise :class:`UnknownNameError`.  A word
    mechanism takes an ``embedding`` (default: GloVe, as :func:`make_word_mechanism`).  A
    text mechanism is built by its factory from its parameters as given (a loaded ``model``
    and ``epsilon``, then its own keywords; no conversion from strings).
    """
    if name in _FACTORIES:
        module, _, function = _FACTORIES[name][1].partition(":")
        return getattr(import_module(module), function)(**params)
    cls = mechanism_class(name)
    if cls.output_kind == "word":
        return make_word_mechanism(name, params.pop("embedding", None), **params)
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


def from_spec(spec: dict[str, Any]) -> Any:
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
def make_word_mechanism(name: str, embedding: Any = None, **params: Any) -> Any:
    """Build word mechanism ``name`` over ``embedding`` (default: GloVe, 20 000 words).

    ``params`` are named as on the CLI (``-p NAME=VALUE``: the field name, or its
    ``cli`` name such as ``lambda``); string values are converted to the field's type.
    """
    cls = mechanism_class(name)
    if cls.output_kind != "word":
        raise InvalidArgumentError(
            "name", name, f"a word mechanism ({', '.join(mechanism_names('word'))})"
        )
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
