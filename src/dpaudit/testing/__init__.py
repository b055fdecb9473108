"""Tests for your own CI: ``assert_no_violation`` (privacy) and ``check_mechanism`` (conformance).

:func:`check_mechanism` (:mod:`dpaudit.testing.conformance`) checks that a
mechanism keeps the interface's contract — output shape and dtype, seeding,
declared densities against real samples, a well-formed claim — before any audit.

A one-line pytest check that a mechanism does not demonstrably break its claim::

    import numpy as np
    from dpaudit.claims import Definition, InputDomain, PrivacyClaim
    from dpaudit import round_to_grid
    from dpaudit.testing import assert_no_violation

    def my_mechanism(x, n, rng):              # f(x, n, rng) -> array (n, ...)
        # rounded to a grid x cannot move: a bare float64 x + noise leaks through its bits
        return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)

    def test_my_mechanism_is_1_dp():
        claim = PrivacyClaim(Definition.PURE, 1.0, InputDomain((1,), 0.0, 1.0))
        assert_no_violation(my_mechanism, claim)

It runs :func:`dpaudit.audit` (for a vector mechanism the black-box search; for an (ε, δ)
claim the profile certifier beside it, under one error budget) with a
sample size chosen for CI — about 1 s for a scalar black-box function, well
under that for a dpaudit mechanism with a log-density — and raises
:class:`PrivacyViolationError` (an ``AssertionError``) carrying the witness when the
audit proves, at the given confidence, that the true ε exceeds the claim.

What a pass means: *no violation was found at this sample size* — never that
the mechanism is private.  Bigger ``samples`` find smaller violations.  The
seed is fixed (``seed=0``), so a test gives the same answer on every run.  With
the defaults a mechanism whose true ε is 10 % above its claim is typically not
caught; one that is 2× its claim (or misses a sensitivity factor) is.

Random numbers: the function may draw from the ``rng`` it is given, or from
numpy's global generator or Python's ``random`` — dpaudit seeds those per chunk
and restores them afterwards, so the test stays deterministic.  A function with
a fixed internal seed (e.g. ``np.random.default_rng(12345)`` inside) raises
:class:`~dpaudit.errors.MechanismError` instead of a misleading verdict; one that
draws OS entropy runs, and the returned result has ``reproducible = False``.
A declared ``log_prob`` that the sampler contradicts is listed in
``result.declaration_findings`` (see :mod:`dpaudit.auditors.core.declarations`).

An audit that could not have seen a violation of the claim's size is
*inconclusive*, not a pass: ``assert_no_violation`` then emits an
:class:`InconclusiveAuditWarning` whose message is the verdict with the power
statement (what the audit could have flagged, and the samples it would need).
A word mechanism (:class:`~dpaudit.mechanisms.word.base.WordMechanism`) is
audited pair by pair against its metric claim
(:func:`dpaudit.auditors.metric.auditor.audit_metric`), with the same messages.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpaudit.adapters.callable import FunctionMechanism
from dpaudit.adapters.reclaim import ReclaimedMechanism, as_mechanism
from dpaudit.api import audit
from dpaudit.auditors.blackbox.auditor import AuditConfig
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.metric.auditor import MetricAuditConfig
from dpaudit.claims import PrivacyClaim
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.word.base import WordMechanism
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.testing.conformance import check_mechanism
from dpaudit.testing.results import CheckResult, ConformanceError, ConformanceReport
from dpaudit.validation import check_int
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

#: Outputs per input for the selection stage; the final estimate uses twice as many.
DEFAULT_SAMPLES = 20_000
#: Outputs per input to train classifiers and fix the threshold grid.
DEFAULT_TRAIN_SAMPLES = 10_000


class PrivacyViolationError(AssertionError):
    """The audit proved the claim false; ``result`` is the full audit, ``witness`` the proof."""

    def __init__(self, result: AuditResult) -> None:
        self.result = result
        self.witness: Witness | None = result.witness
        super().__init__(describe_violation(result))


class InconclusiveAuditWarning(UserWarning):
    """No violation found, but the audit could not have seen one of the claim's size."""


def describe_violation(result: AuditResult) -> str:
    """The verdict and the witness in a few lines (the error message)."""
    if result.kind is AuditorKind.METRIC:
        worst = [p.describe() for p in result.detail.pairs[:3]]
        return "\n".join(
            [result.verdict_text, f"claim: {result.claim}", *worst, result.confidence_statement]
        )
    lines = [result.verdict_text, f"claim: {result.claim}"]
    w = result.witness
    if w is not None:
        x, xp = w.shown_inputs() if w.values is not None else (list(w.x), list(w.x_prime))
        lines += [
            f"witness: x = {x}, x' = {xp} ({w.pair_origin})",
            # Categorical outputs as their values (``{'GREEN'}``), threshold sets as thresholds.
            f"  S = {w.output_set or '{y : ' + w.event + '}'}"
            + (f" ({w.attack.family})" if w.attack else ""),
            f"  Pr[M(x) ∈ S] ≥ {w.p1.bound:.6g} ({w.p1.hits}/{w.p1.samples}), "
            f"Pr[M(x') ∈ S] ≤ {w.p2.bound:.6g} ({w.p2.hits}/{w.p2.samples})",
        ]
    lines.append(f"seed {result.seed}; {result.confidence_statement}")
    return "\n".join(lines)


def assert_no_violation(
    mechanism: Mechanism | WordMechanism | Callable[..., Any],
    claim: PrivacyClaim | float | None = None,
    *,
    samples: int = DEFAULT_SAMPLES,
    final_samples: int | None = None,
    train_samples: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    pairs: Sequence[tuple[Any, Any]] = (),
    workers: int = 1,
) -> AuditResult:
    """Audit ``mechanism`` against ``claim``; raise :class:`PrivacyViolationError` if it is broken.

    Arguments: ``mechanism`` and ``claim`` as in :func:`as_mechanism`;
    ``samples`` outputs per input for choosing the attack, ``final_samples``
    (default ``2 × samples``) for the final estimate, ``train_samples``
    (default ``min(samples, 10000)``) for training; ``confidence`` of the
    bound; ``seed`` (fixed, so the test is deterministic); extra input
    ``pairs`` ``[(x, x'), ...]`` to try besides the generated patterns;
    ``workers`` processes (1 = in-process, which also works for lambdas).

    Returns the :class:`~dpaudit.results.audit.AuditResult` when no violation is
    found (for a word mechanism its ``detail`` is a
    :class:`~dpaudit.auditors.metric.result.MetricDetail`, whose ``pairs`` are
    ``(w, w')`` words); an inconclusive audit also
    warns (:class:`InconclusiveAuditWarning`, the message says what it could see).
    Example (a correct mechanism passes; claiming ε = 0.1 for it fails)::

        >>> from dpaudit.mechanisms import make_mechanism
        >>> lap = make_mechanism("laplace", epsilon=1.0)
        >>> assert_no_violation(lap).violation
        False
        >>> try:
        ...     assert_no_violation(lap, 0.1)
        ... except AssertionError as exc:
        ...     print(exc.result.violation, exc.witness is not None)
        True True
    """
    samples = check_int("samples", samples, minimum=1)
    final = check_int("final_samples", final_samples or 2 * samples, minimum=1)
    if isinstance(mechanism, WordMechanism):
        word_config = MetricAuditConfig(
            samples=samples,
            final_samples=final,
            confidence=confidence,
            seed=seed,
            pairs=tuple((str(a), str(b)) for a, b in pairs),
        )
        execution = ExecutionConfig(workers=workers)
        return _checked(audit(mechanism, config=word_config, execution=execution))
    mech = as_mechanism(mechanism, claim)
    train = check_int("train_samples", train_samples or min(samples, DEFAULT_TRAIN_SAMPLES))
    if isinstance(mech, FunctionMechanism) and mech.typed:
        # Typed values (ints, words, datasets...): validated by the domain, shown as indices.
        mech = dataclasses.replace(mech, extra_pairs=tuple((a, b) for a, b in pairs))
        input_pairs = tuple(InputPair(*p) for p in mech.given_pairs())
    else:
        input_pairs = tuple(InputPair(np.ravel(a), np.ravel(b), "given") for a, b in pairs)
    config = AuditConfig(
        samples=samples,
        final_samples=final,
        train_samples=train,
        confidence=confidence,
        seed=seed,
        pairs=input_pairs,
    )
    execution = ExecutionConfig(workers=check_int("workers", workers))
    return _checked(audit(mech, config=config, execution=execution))


def _checked(result: AuditResult) -> AuditResult:
    """Raise on a violation; warn, with what the audit could see, on an inconclusive result."""
    if result.violation:
        raise PrivacyViolationError(result)
    if result.verdict is Verdict.INCONCLUSIVE:
        power = [n for n in result.notes if n.startswith(("What this audit could see", "power:"))]
        text = "\n".join([result.verdict_text, *power])
        warnings.warn(InconclusiveAuditWarning(text), stacklevel=3)
    return result


__all__ = [
    "DEFAULT_SAMPLES",
    "CheckResult",
    "ConformanceError",
    "ConformanceReport",
    "InconclusiveAuditWarning",
    "PrivacyViolationError",
    "ReclaimedMechanism",
    "as_mechanism",
    "assert_no_violation",
    "check_mechanism",
]
