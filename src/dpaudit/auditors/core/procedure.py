"""The audit procedure, owned by the core: the auditor proposes, the core certifies and answers.

An auditor that proposes (:class:`ProposingAuditor`) does two things of its own:

1. ``propose(mechanism, claim, config, execution) -> Proposals`` — choose, with any heuristic
   on samples of its own, the statements to certify (:class:`~.proposal.Proposal`: pair,
   direction, event, role) and say how fresh outputs are drawn (:class:`~.counting.FinalPlan`);
2. ``read(proposals, certified) -> Reading`` — say, in its own terms, what the certified
   statements mean for the claim: one :class:`~.answer.Judged` per question, the verdict's
   phrases, the witness, its typed detail.

Between the two, :func:`run_audit` does what is the same for every auditor: it draws the
final counts through the one counting unit (:func:`~.counting.count_final`), certifies all
``K`` statements jointly (:func:`~.certify.certify`: Clopper–Pearson at ``α/(2K)`` each,
the claim's δ inside each bound), and after the auditor's reading assembles the result
(:func:`~.answer.answer`: the one verdict rule, the confidence sentence, the trust fields
passed in, the timing).  Nothing the auditor chose can see the final samples: they are drawn
after ``propose`` has returned, from streams no selection stage uses.

An auditor may propose a guessing game (:mod:`~.game`, the one-run training audit) instead
of counted statements: the core then draws its inclusion bits, plays its rounds and
certifies its guess rules, and the rest of the procedure is the same.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from dpaudit.auditors.core.answer import Evidence, Judged, answer, joint_confidence
from dpaudit.auditors.core.certify import Certificate, FinalCounts, certify, split_error
from dpaudit.auditors.core.counting import (
    FinalPlan,
    Stream,
    count_final,
    final_units,
    run_event_unit,
)
from dpaudit.auditors.core.game import GameCertified, GamePlan, certify_game, game_statement
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.sequential import LookPlan, certify_sequentially
from dpaudit.auditors.core.trust import TrustReport
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units
from dpaudit.engine.timeout import with_timeout
from dpaudit.errors import InvalidArgumentError
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.results.findings import DeclarationFinding
from dpaudit.witness import Witness

__all__ = [
    "Certified",
    "Looks",
    "Proposals",
    "ProposingAuditor",
    "Reading",
    "certify_counts",
    "certify_proposals",
    "conclude",
    "run_audit",
    "run_audits",
]


@dataclass(frozen=True)
class Looks:
    """A sequential final stage (:mod:`~.sequential`): its looks, their keys, when to stop.

    ``plan``: the cumulative sizes and error shares; ``prefixes[l]``: what look ``l``'s
    unit keys start with (before the stream's key), so each look draws fresh outputs;
    ``refutes_above``: the audit stops at the first look whose best bound exceeds it, or
    at the first from which no statement could exceed it at the last look (futility).
    """

    plan: LookPlan
    prefixes: tuple[tuple[int, ...], ...]
    refutes_above: float

    def __post_init__(self) -> None:
        if len(self.prefixes) != len(self.plan.sizes):
            raise InvalidArgumentError("prefixes", self.prefixes, "one key prefix per look")


@dataclass(frozen=True)
class Proposals:
    """What an auditor hands the core before any final sample is drawn.

    ``statements``: the proposals to certify together (``K = len(statements)``);
    ``plan``: how their fresh outputs are drawn; ``pair_streams[i]``: the streams of pair
    ``i``'s ``x`` and ``x'`` in ``plan.streams`` (a forward statement counts ``x`` as its
    numerator), for every pair a statement names — a mapping, or a sequence read as pair
    ``i`` ↦ its ``i``-th item.  ``chosen``: how the statements were chosen, the head of the
    confidence sentence.  ``confidence``, ``delta``: the joint confidence and the δ inside
    each bound.  ``mechanism``: the mechanism's spec for the result; ``seed``, ``samples``: what the
    result records; ``timing``: the seconds the proposing stages took; ``trust``: what the
    auditor's trust call found; ``execution``: how the auditor runs its work units, which
    the final count uses too (None: the execution :func:`run_audit` was given);
    ``looks``: a sequential final stage (:class:`Looks`), None for one fixed-size look;
    ``state``: the auditor's own selection results, handed back to its ``read`` (never seen
    by the core).  ``game``: a guessing game to play and certify (:mod:`~.game`) in place of
    counted statements.  No statements and no game (nothing worth certifying) draws
    nothing: the auditor's ``read`` then says why.
    """

    statements: tuple[Proposal, ...]
    plan: FinalPlan | None
    pair_streams: Mapping[int, tuple[int, int]] | Sequence[tuple[int, int]]
    chosen: str
    confidence: float
    mechanism: dict[str, Any]
    seed: int
    samples: dict[str, int]
    delta: float = 0.0
    timing: dict[str, float] = field(default_factory=dict)
    trust: TrustReport | None = None
    execution: ExecutionConfig | None = None
    looks: Looks | None = None
    state: Any = None
    game: GamePlan | None = None

    def __post_init__(self) -> None:
        if self.game is not None and (self.statements or self.looks is not None):
            raise InvalidArgumentError("game", "a game", "a game alone, without statements")
        if self.statements and self.plan is None:
            raise InvalidArgumentError("plan", None, "a FinalPlan for the statements to count")
        streams = self.pair_streams
        named = dict(streams) if isinstance(streams, Mapping) else dict(enumerate(streams))
        object.__setattr__(self, "pair_streams", named)
        for p in self.statements:
            if p.pair_index not in named:
                raise InvalidArgumentError(
                    "pair_index", p.pair_index, f"a pair with streams ({sorted(named)})"
                )

    def oriented(self) -> list[tuple[int, int, Any]]:
        """Each statement as ``(numerator stream, denominator stream, event)``."""
        out = []
        for p in self.statements:
            sx, sxp = self.pair_streams[p.pair_index]
            out.append((sx, sxp, p.event) if p.forward else (sxp, sx, p.event))
        return out


@dataclass(frozen=True)
class Certified:
    """The proposals' final counts and their joint certificates (same order as proposed)."""

    counts: tuple[FinalCounts, ...]
    certificates: tuple[Certificate, ...]
    confidence: float
    #: The look a sequential final stage stopped at, and its plan (None: one look).
    look: int = 0
    looks: LookPlan | None = None
    #: The certified guessing game, when the proposals were one (:mod:`~.game`).
    game: GameCertified | None = None
    #: A sequential final stage stopped early for futility (:mod:`~.sequential`).
    futile: bool = False

    @property
    def error(self) -> float:
        """The error of each one-sided bound: ``α/(2K)``, or ``α_l/(2K)`` at look ``l``."""
        alpha = 1.0 - self.confidence if self.looks is None else self.looks.errors[self.look]
        return split_error(alpha, max(1, len(self.certificates)))

    @property
    def final_samples(self) -> int | None:
        """Outputs per input the certificates rest on (None: nothing was counted)."""
        return self.counts[0].samples_x if self.counts else None


@dataclass(frozen=True)
class Reading:
    """What an auditor reads off its certified statements (the core assembles the result).

    ``judged``: one per question the claim asks of the statements (the one verdict rule);
    ``evidence``: the verdict's phrases; ``bound``: the summary lower bound; ``witness``:
    the statement that stands for the audit; ``detail``: the auditor's typed detail;
    ``notes``, ``power``, ``findings``, ``level``: as :func:`~.answer.answer` takes them;
    ``claim_text``: the claim as the result prints it (default: ``claim.describe()``);
    ``final_work``: how much the final stage drew, by what it counts (``{"coordinates": N}``),
    which the result's timing states per second of the final stage; ``claim``: the claim as
    audited when the auditor resolved it itself (a default read from the mechanism), else
    None for the claim the audit was given.
    """

    judged: tuple[Judged, ...]
    evidence: Evidence
    bound: float
    witness: Witness | None
    detail: Any
    notes: tuple[str, ...] = ()
    power: dict[str, float] = field(default_factory=dict)
    findings: Sequence[DeclarationFinding] = ()
    claim_text: str | None = None
    level: str | None = None
    final_work: dict[str, float] = field(default_factory=dict)
    claim: Any = None


@runtime_checkable
class ProposingAuditor(Protocol):
    """An auditor whose procedure the core owns: it proposes, then reads (module docstring)."""

    kind: AuditorKind

    def supports(self, mechanism: Any, claim: Any) -> bool:
        """Whether this auditor can audit ``mechanism`` against ``claim`` (nothing sampled)."""
        ...

    def propose(self, mechanism: Any, claim: Any, config: Any, execution: Any) -> Proposals:
        """The statements to certify, chosen on samples of the auditor's own."""
        ...

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """What the certified statements say about the claim, in the auditor's terms."""
        ...


def certify_proposals(proposals: Proposals, execution: ExecutionConfig | None = None) -> Certified:
    """Draw the final counts of every proposal through the one counting unit; certify them
    (look by look for a sequential final stage).  A game is played and certified instead."""
    if proposals.game is not None:
        game = certify_game(
            proposals.game, proposals.confidence, proposals.delta, proposals.execution or execution
        )
        return Certified((), (), proposals.confidence, game=game)
    if not proposals.statements or proposals.plan is None:
        return Certified((), (), proposals.confidence)
    base = proposals.plan
    execution = proposals.execution or execution
    oriented = proposals.oriented()
    looks = proposals.looks
    if looks is None:
        return certify_counts(proposals, count_final(base, oriented, execution))

    def draw(look: int, more: int) -> tuple[FinalCounts, ...]:
        prefix = looks.prefixes[look]
        plan = dataclasses.replace(
            base,
            samples=more,
            streams=tuple(Stream(s.x, (*prefix, *s.key)) for s in base.streams),
        )
        return count_final(plan, oriented, execution)

    outcome = certify_sequentially(draw, looks.plan, looks.refutes_above, proposals.delta)
    return Certified(
        outcome.counts,
        outcome.certificates,
        proposals.confidence,
        outcome.look,
        looks.plan,
        futile=outcome.futile,
    )


def certify_counts(proposals: Proposals, counts: Sequence[FinalCounts]) -> Certified:
    """The joint certificates of the proposals' final ``counts`` (at the claim's δ)."""
    certificates = certify(counts, proposals.confidence, proposals.delta)
    return Certified(tuple(counts), certificates, proposals.confidence)


def run_audit(
    auditor: ProposingAuditor,
    mechanism: Any,
    claim: Any,
    config: Any = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """The procedure: ``propose``, count and certify on fresh samples, ``read``, answer."""
    start = time.perf_counter()
    proposals = auditor.propose(mechanism, claim, config, execution)
    proposed_at = time.perf_counter()
    certified = certify_proposals(proposals, execution)
    final = time.perf_counter() - proposed_at
    return conclude(auditor, claim, proposals, certified, final, start)


def run_audits(
    jobs: Sequence[tuple[ProposingAuditor, Any, Any, Any]],
    execution: ExecutionConfig | None = None,
    *,
    desc: str = "final",
) -> list[AuditResult]:
    """Several audits ``(auditor, mechanism, claim, config)`` whose final counts run as one
    batch of work units, so that workers stay busy across small and large audits.

    Each audit is certified and answered on its own, exactly as :func:`run_audit` would
    (its counts come from the same units); every result's ``final`` time is the batch's.
    """
    start = time.perf_counter()
    proposals = [a.propose(m, c, cfg, execution) for a, m, c, cfg in jobs]
    proposed_at = time.perf_counter()
    plans = [p.plan for p in proposals if p.statements and p.plan is not None]
    if any(p.looks is not None or p.game is not None for p in proposals) or any(
        plan.in_process for plan in plans
    ):
        raise InvalidArgumentError(
            "jobs", desc, "fixed-size audits whose final draws may leave the process"
        )
    timeouts = {plan.timeout for plan in plans}
    if len(timeouts) > 1:
        raise InvalidArgumentError("jobs", sorted(map(str, timeouts)), "one unit timeout for all")
    works = [
        final_units(p.plan, p.oriented()) if p.statements and p.plan is not None else None
        for p in proposals
    ]
    units = [u for w in works if w is not None for u in w.units]
    fn = with_timeout(run_event_unit, timeouts.pop() if timeouts else None)
    results = run_units(fn, units, execution or ExecutionConfig(), desc=desc)
    final = time.perf_counter() - proposed_at
    out, offset = [], 0
    for (auditor, _, claim, _), p, work in zip(jobs, proposals, works, strict=True):
        if work is None:
            certified = Certified((), (), p.confidence)
        else:
            part = results[offset : offset + len(work.units)]
            offset += len(work.units)
            certified = certify_counts(p, work.merge(part))
        out.append(conclude(auditor, claim, p, certified, final, start))
    return out


def conclude(
    auditor: ProposingAuditor,
    claim: Any,
    proposals: Proposals,
    certified: Certified,
    final_seconds: float,
    started: float,
) -> AuditResult:
    """The auditor's reading of its certified statements, assembled into the one result
    (``final_seconds``: the final count's time; ``started``: ``perf_counter()`` at the
    audit's start)."""
    reading = auditor.read(proposals, certified)
    timing = dict(proposals.timing)
    timing["final"] = round(final_seconds, 4)
    timing["total"] = round(time.perf_counter() - started, 4)
    for what, amount in reading.final_work.items():
        timing[f"{what}_per_second"] = amount / final_seconds if final_seconds > 0 else math.inf
    return answer(
        kind=auditor.kind,
        mechanism=proposals.mechanism,
        claim=claim if reading.claim is None else reading.claim,
        claim_text=reading.claim_text,
        judged=reading.judged,
        evidence=reading.evidence,
        bound=reading.bound,
        confidence=proposals.confidence,
        confidence_statement=_confidence_statement(proposals, certified),
        witness=reading.witness,
        seed=proposals.seed,
        samples=_samples(proposals, certified),
        timing=timing,
        detail=reading.detail,
        trust=proposals.trust,
        notes=reading.notes,
        power=reading.power,
        findings=reading.findings,
        level=reading.level,
    )


def _confidence_statement(proposals: Proposals, certified: Certified) -> str:
    """The confidence sentence: how the statements were chosen, the split, the looks."""
    if proposals.game is not None and certified.game is not None:
        return game_statement(proposals.game, certified.game, proposals.confidence)
    if not proposals.statements:
        return proposals.chosen or "nothing was proposed; nothing was re-estimated"
    plan = certified.looks
    sequential = plan is not None and len(plan.sizes) > 1
    text = joint_confidence(
        proposals.confidence,
        len(proposals.statements),
        proposals.chosen,
        plan.errors[certified.look] if plan is not None and sequential else None,
    )
    if plan is not None and sequential:
        text += " " + plan.describe(certified.look, certified.futile)
    return text


def _samples(proposals: Proposals, certified: Certified) -> dict[str, int]:
    """What the result records as drawn: the final size is where the certificates rest."""
    samples = dict(proposals.samples)
    if certified.looks is not None and certified.final_samples is not None:
        samples["final"] = certified.final_samples
    return samples
