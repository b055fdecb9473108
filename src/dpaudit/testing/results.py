"""The typed, immutable results of :func:`dpaudit.testing.check_mechanism`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CheckResult:
    """One named check: ``passed``, and a ``message`` saying what is wrong and how to fix it.

    ``skipped``: the check did not apply (no declaration to check) or could not
    run because an earlier check failed; a skipped check counts as passed.
    """

    name: str
    passed: bool
    message: str
    skipped: bool = False

    def describe(self) -> str:
        """One line: ``name: PASS|FAIL|SKIP — message``."""
        status = "SKIP" if self.skipped else ("PASS" if self.passed else "FAIL")
        return f"{self.name}: {status} — {self.message}"


@dataclass(frozen=True)
class ConformanceReport:
    """The results of :func:`check_mechanism` on ``mechanism`` (its label), in check order."""

    mechanism: str
    results: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        """Whether every check passed (or was skipped)."""
        return all(r.passed for r in self.results)

    @property
    def failures(self) -> tuple[CheckResult, ...]:
        """The checks that failed."""
        return tuple(r for r in self.results if not r.passed)

    def result(self, name: str) -> CheckResult:
        """The result of check ``name`` (``KeyError`` naming the checks run otherwise)."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(f"no check {name!r}: ran {[r.name for r in self.results]}")

    def describe(self) -> str:
        """A few lines: the verdict, then one line per check."""
        head = "all checks passed" if self.passed else f"{len(self.failures)} check(s) failed"
        lines = [f"conformance of mechanism {self.mechanism!r}: {head}"]
        lines += [f"  {r.describe()}" for r in self.results]
        return "\n".join(lines)


class ConformanceError(AssertionError):
    """A mechanism failed a conformance check; ``report`` holds every result."""

    def __init__(self, report: ConformanceReport) -> None:
        self.report = report
        super().__init__(report.describe())


def passed(name: str, message: str) -> CheckResult:
    """A passed check."""
    return CheckResult(name, True, message)


def failed(name: str, message: str) -> CheckResult:
    """A failed check; ``message`` says what is wrong and how to fix it."""
    return CheckResult(name, False, message)


def skipped(name: str, message: str) -> CheckResult:
    """A check that did not apply or could not run; ``message`` says why."""
    return CheckResult(name, True, message, skipped=True)


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception, for a check's message."""
    return f"{type(exc).__name__}: {exc}"


def complete(results: list[CheckResult], names: Sequence[str]) -> list[CheckResult]:
    """``results`` with every check of ``names`` not run added as skipped, in ``names`` order."""
    ran = {r.name: r for r in results}
    first = next((r.name for r in results if not r.passed), None)
    reason = f"not run: check {first!r} failed" if first else "not run"
    return [ran.get(n) or skipped(n, reason) for n in names]
