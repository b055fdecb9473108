"""A rewriter audit's result built from its detail alone, for tests of what results carry.

The auditors' own results come from the core's procedure
(:func:`dpaudit.auditors.core.procedure.run_audit`); a test that needs a result for a
hand-made :class:`~dpaudit.auditors.rewriter.result.RewriterDetail` builds it here, through
the same reading and the one construction (:func:`dpaudit.auditors.core.answer.answer`).
"""

from __future__ import annotations

from dpaudit.auditors.core.answer import answer, joint_confidence
from dpaudit.auditors.rewriter.result import RewriterDetail, rewriter_reading
from dpaudit.results.audit import AuditorKind, AuditResult


def rewriter_result(
    name: str,
    detail: RewriterDetail,
    samples: tuple[int, int],
    confidence: float,
    seed: int,
    seconds: float,
) -> AuditResult:
    """The shared result of a rewriter audit whose statements and findings are ``detail``.

    ``samples``: (training, final) rewrites per input; the reading is
    :func:`rewriter_reading`'s.
    """
    reading = rewriter_reading(detail, samples[1])
    return answer(
        kind=AuditorKind.REWRITER,
        mechanism={"mechanism": name},
        claim=detail.text_claim,
        judged=reading.judged,
        evidence=reading.evidence,
        bound=reading.bound,
        confidence=confidence,
        confidence_statement=joint_confidence(confidence, len(detail.statements)),
        witness=reading.witness,
        seed=seed,
        samples={"selection": samples[0], "final": samples[1]},
        timing={"total": seconds},
        detail=detail,
        trust=None,
        notes=reading.notes,
        level=reading.level,
        findings=reading.findings,
    )
