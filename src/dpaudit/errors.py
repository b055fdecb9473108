"""Exception types.

Every error a *user* can cause (bad argument, non-encodable value, misbehaving
mechanism) is a :class:`DPAuditError`.  The CLI turns these into a one-line
message on stderr and exit status 2; everything else is a bug and keeps its
traceback.
"""

from __future__ import annotations


class DPAuditError(Exception):
    """Base class of all errors caused by the caller's input."""


class InvalidArgumentError(DPAuditError, ValueError):
    """An argument is outside its allowed range.

    The message always names the argument and the allowed range.
    """

    def __init__(self, argument: str, value: object, allowed: str) -> None:
        self.argument = argument
        self.value = value
        self.allowed = allowed
        super().__init__(f"{argument}={value!r} is invalid: expected {allowed}")


class MissingArgumentError(DPAuditError, ValueError):
    """A needed argument (usually a command-line flag) was not given.

    The message names the argument and what it takes.
    """

    def __init__(self, argument: str, needed: str) -> None:
        self.argument = argument
        self.needed = needed
        super().__init__(f"{argument} is missing: {needed}")


class InvalidTypeError(DPAuditError, TypeError):
    """An argument has the wrong type."""

    def __init__(self, argument: str, value: object, expected: str) -> None:
        self.argument = argument
        self.value = value
        super().__init__(f"{argument} has type {type(value).__name__}: expected {expected}")


class UnknownNameError(DPAuditError, ValueError):
    """A mechanism, parameter, figure, ... name that does not exist."""

    def __init__(self, kind: str, name: str, known: list[str] | tuple[str, ...]) -> None:
        self.kind = kind
        self.name = name
        super().__init__(f"unknown {kind} {name!r}; known: {', '.join(sorted(known))}")


class EncodingError(DPAuditError, ValueError):
    """A value cannot be represented by a mechanism's encoding."""


class MechanismError(DPAuditError, RuntimeError):
    """A mechanism misbehaved while being sampled (NaN, wrong shape, raised, ...)."""


class OptionalDependencyError(DPAuditError, ImportError):
    """An optional package is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str, purpose: str, install: str = "") -> None:
        how = install or f"pip install 'dpaudit[{extra}]'"
        super().__init__(f"{purpose} needs the optional package {package!r}: {how}")
