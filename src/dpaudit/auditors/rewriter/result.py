"""Typed, immutable results of a rewriter audit, serialised once."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.certify import Certificate
from dpaudit.auditors.rewriter.exact import ExactLoss
from dpaudit.auditors.rewriter.fidelity import FidelityCheck
from dpaudit.serialization import to_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

#: The code under audit as a plain function: ``f(document, n, rng)`` → ``n`` rewrites
#: (strings, or token-id arrays where the caller has them).
TextSampler = Callable[[str, int, np.random.Generator], Sequence[Any]]


@dataclass(frozen=True)
class PairFindings:
    """What the white-box scoring saw for one input pair.

    ``forward`` holds the exact losses of rewrites of ``x`` against ``x'``,
    ``backward`` those of rewrites of ``x'`` against ``x``; ``fidelity`` checks
    the rewrites of ``x`` against the declared decoding.
    """

    x: str
    x_prime: str
    origin: str
    forward: ExactLoss
    backward: ExactLoss
    fidelity: FidelityCheck
    covered: bool = True

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "x": self.x,
            "x_prime": self.x_prime,
            "origin": self.origin,
            "exact_loss_x_vs_x_prime": self.forward.to_dict(),
            "exact_loss_x_prime_vs_x": self.backward.to_dict(),
            "fidelity": self.fidelity.to_dict(),
            "covered_by_claim": self.covered,
        }


@dataclass(frozen=True)
class Statement:
    """One certified statement: a set of rewrites, its bound and the loss the claim allows it."""

    witness: Witness
    certificate: Certificate
    allowed_loss: float
    verdict: Verdict

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "witness": to_jsonable(self.witness.to_dict()),
            "lower_bound": self.certificate.lower_bound,
            "allowed_loss": self.allowed_loss,
            "verdict": self.verdict.value,
        }


def best_covered(statements: tuple[Statement, ...]) -> int:
    """Index of the largest bound among the pairs the claim covers (all, if it covers none)."""
    covered = [i for i, s in enumerate(statements) if not math.isinf(s.allowed_loss)]
    pool = covered or list(range(len(statements)))
    return max(pool, key=lambda i: statements[i].certificate.lower_bound)


def overall_verdict(statements: tuple[Statement, ...], ceiling: float) -> Verdict:
    """VIOLATION if any statement is one; *inconclusive* when no bound could reach the claim."""
    if any(s.verdict is Verdict.VIOLATION for s in statements):
        return Verdict.VIOLATION
    covered = [s.allowed_loss for s in statements if not math.isinf(s.allowed_loss)]
    if not covered:
        return Verdict.OUTSIDE_CLAIM
    allowed = min(covered)
    return Verdict.INCONCLUSIVE if ceiling <= allowed else Verdict.NO_VIOLATION_FOUND


class CertifiedStatements:
    """The bound and witness of a result's best statement (``statements[best]``)."""

    statements: tuple[Statement, ...]
    best: int

    @property
    def lower_bound(self) -> float:
        """The largest certified ε lower bound."""
        return self.statements[self.best].certificate.lower_bound

    @property
    def witness(self) -> Witness:
        """The witness of the largest bound."""
        return self.statements[self.best].witness

    @property
    def bound_text(self) -> str:
        """``ε ≥ b``, or that there is no evidence when the bound is not positive."""
        bound = self.lower_bound
        return f"ε ≥ {_fmt(bound)}" if bound > 0 else "no evidence of any loss (bound ≤ 0)"


@dataclass(frozen=True)
class RewriterAuditResult(CertifiedStatements):
    """The result of a white-box audit of an LM rewriter.

    ``statements`` are certified jointly at ``config.confidence``; ``best``
    indexes the largest bound; ``ceiling`` is the largest bound the final
    sample size could certify (a claim above it could not have been refuted:
    *inconclusive*).  ``pairs`` hold the exact, white-box findings.
    """

    mechanism: str
    model_source: str
    claim: Any
    decoding: Any
    pairs: tuple[PairFindings, ...]
    statements: tuple[Statement, ...]
    best: int
    verdict: Verdict
    ceiling: float
    config: Any
    seconds: float
    code_under_audit: str

    @property
    def max_exact_token_loss(self) -> float:
        """The largest exact per-token loss over the covered pairs (all, if none is covered)."""
        pairs = [p for p in self.pairs if p.covered] or list(self.pairs)
        return max(max(p.forward.max_token_loss, p.backward.max_token_loss) for p in pairs)

    @property
    def exact_verdict(self) -> Verdict:
        """The white-box verdict: VIOLATION when a scored rewrite's exact loss exceeds the claim.

        Exact arithmetic under the declared decoding, so it speaks for the code
        only where the declaration matched the real samples; a pair whose check
        found a mismatch does not count (its losses describe the declaration).
        """
        tol = 1e-6
        for p in self.pairs:
            excess = max(p.forward.max_excess, p.backward.max_excess)
            if p.covered and p.fidelity.matches and excess > tol:
                return Verdict.VIOLATION
        return Verdict.NO_VIOLATION_FOUND

    @property
    def declaration_matches(self) -> bool:
        """True when no pair's fidelity check found a mismatch."""
        return all(p.fidelity.matches for p in self.pairs)

    def summary(self) -> str:
        """A few lines a person reads first: the white-box and the certified verdict."""
        unit = self.claim.unit.value
        allowed = self.statements[self.best].allowed_loss
        checks = "; ".join(f"{p.origin}: {p.fidelity.describe()}" for p in self.pairs)
        return "\n".join(
            [
                f"{self.mechanism}",
                f"model: {self.model_source}; code under audit: {self.code_under_audit}",
                f"white-box (exact, under the decoding read from the code): "
                f"{self.exact_verdict.value.upper()}: largest loss of one token "
                f"{_fmt(self.max_exact_token_loss)}, the claim allows {self.claim.epsilon:g} per "
                f"{unit} (analytic worst case {_fmt(self.pairs[0].forward.analytic_token_bound)})",
                f"  declared decoding vs the real sampler: {checks}",
                f"black-box certificate (confidence {self.config.confidence:g}): "
                f"{self.verdict.value.upper()}: {self.bound_text}; the claim allows "
                f"{_fmt(allowed)} for this pair's rewrites ({self.claim.epsilon:g} per {unit} "
                "released), and "
                f"{self.config.final_samples} rewrites per input certify at most "
                f"{_fmt(self.ceiling)}",
                f"  witness: {self.witness.describe()}",
                *(
                    f"outside the claim ({self.claim.neighbours.value.replace('_', ' ')} "
                    f"neighbours): {p.origin}; largest exact loss of one token "
                    f"{_fmt(max(p.forward.max_token_loss, p.backward.max_token_loss))}"
                    for p in self.pairs
                    if not p.covered
                ),
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kind": "rewriter-audit",
            "mechanism": self.mechanism,
            "model_source": self.model_source,
            "code_under_audit": self.code_under_audit,
            "claim": self.claim.to_dict(),
            "decoding": self.decoding.to_dict(),
            "verdict": self.verdict.value,
            "exact_verdict": self.exact_verdict.value,
            "lower_bound": self.lower_bound,
            "ceiling": self.ceiling,
            "max_exact_token_loss": self.max_exact_token_loss,
            "declaration_matches": self.declaration_matches,
            "pairs": [p.to_dict() for p in self.pairs],
            "statements": [s.to_dict() for s in self.statements],
            "best": self.best,
            "config": {
                "samples": self.config.samples,
                "final_samples": self.config.final_samples,
                "confidence": self.config.confidence,
                "fidelity_level": self.config.fidelity_level,
                "seed": self.config.seed,
            },
            "seconds": self.seconds,
        }


def _fmt(v: float) -> str:
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.4g}"
