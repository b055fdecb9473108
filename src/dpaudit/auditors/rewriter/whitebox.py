"""White-box audit of an LM rewriter: exact losses propose, fresh real samples certify.

For each input pair the auditor

1. draws rewrites of both inputs from the **real sampler** (the code under
   audit) and scores every one exactly under both inputs by teacher forcing
   with the *declared* decoding (:mod:`.exact`);
2. checks that the sampled tokens follow the declared distribution
   (:mod:`.fidelity`): a mismatch is a finding, and the exact losses are then
   facts about the declaration, not about the code;
3. proposes, per direction, the likelihood-ratio set ``S = {y : L(y) > c}``
   (the Neyman–Pearson optimal test, its threshold chosen on these samples);
4. hands the ``K = 2·pairs`` sets to the certification core, which counts them
   on *fresh* rewrites from the real sampler (:mod:`.final`: each document's own
   stream, scored exactly under both documents).  The sets are fixed functions of
   the text, so the certified bounds hold for the code whatever its
   declaration says.

A claim of ε per token allows a set of rewrites of at most ``m`` tokens a loss
of ``m·ε``, so a black-box bound rarely reaches it; the exact loss can, and the
report says which of the two saw what.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpaudit.auditors.core.certify import split_error, verdict_for
from dpaudit.auditors.core.counting import FinalPlan, SeedListGenerators, Stream
from dpaudit.auditors.core.power import certifiable_ceiling
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.core.streams import StageKey
from dpaudit.auditors.rewriter.declared import DeclarationCheck, check_declaration
from dpaudit.auditors.rewriter.exact import ExactLoss, summarise, token_losses
from dpaudit.auditors.rewriter.fidelity import FidelityCheck, check_fidelity, randomised_pit
from dpaudit.auditors.rewriter.final import LogRatioAbove, LogRatioDraw, drawer
from dpaudit.auditors.rewriter.result import (
    PairFindings,
    RewriterDetail,
    Statement,
    TextSampler,
    best_covered,
    rewriter_reading,
)
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.validation import check_int, check_probability_open
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness, WitnessKind


@dataclass(frozen=True)
class RewriterAuditConfig:
    """Sample sizes and confidence of a white-box rewriter audit.

    Attributes:
        samples: rewrites per input used to propose sets, score exact losses and
            check the declared decoding.
        final_samples: fresh rewrites per input that certify the proposed sets.
        confidence: joint confidence of all certified statements.
        fidelity_level: level of the declared-decoding check.
        seed: root seed; every stage draws from its own stream of it.
    """

    samples: int = 200
    final_samples: int = 1000
    confidence: float = 0.95
    fidelity_level: float = 1e-3
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("samples", self.samples, minimum=10)
        check_int("final_samples", self.final_samples, minimum=10)
        check_probability_open("confidence", self.confidence)
        check_probability_open("fidelity_level", self.fidelity_level)


@dataclass(frozen=True)
class ScoredRewrites:
    """Rewrites of ``x`` (``ys``), of ``x'`` (``zs``), and their losses ``ln p_x − ln p_x'``."""

    ys: list[np.ndarray]
    zs: list[np.ndarray]
    loss_y: list[np.ndarray]
    loss_z: list[np.ndarray]


def audit_rewriter(
    rewriter: Any,
    pairs: Sequence[tuple[str, str, str]],
    config: RewriterAuditConfig | None = None,
    *,
    sampler: TextSampler | None = None,
    execution: ExecutionConfig | None = None,
) -> AuditResult:
    """Audit ``rewriter``'s claim on ``pairs`` of ``(x, x', origin)`` documents.

    Each pair's drawing and scoring is one work unit of ``execution``: in this
    process by default, or spread by Ray (``ExecutionConfig(backend="ray")``; the
    model and sampler travel with each unit; a forked local pool is refused).
    Units are seeded by pair and stage, so the result does not depend on where
    they ran.

    ``sampler`` is the code under audit when it is not the rewriter itself (a
    released implementation); the rewriter then only *declares* the decoding
    that code is said to use.  A sampler returning token-id arrays is scored as
    drawn; one returning text is re-tokenised canonically, which can differ from
    the tokens it generated (then the declared-decoding check may report a
    mismatch that is the tokeniser's, not the sampler's: prefer ids).
    """
    auditor = RewriterAuditor(tuple(pairs), sampler)
    return run_audit(auditor, rewriter, rewriter.claim, config, execution)


@dataclass(frozen=True)
class _WhiteBoxSelection:
    """What the white-box proposer keeps for its reading."""

    rewriter: Any
    sampler: TextSampler | None
    pairs: tuple[tuple[str, str, str], ...]
    config: RewriterAuditConfig
    findings: tuple[PairFindings, ...]


def _propose_sets(
    rewriter: Any,
    pairs: tuple[tuple[str, str, str], ...],
    config: RewriterAuditConfig,
    sampler: TextSampler | None,
    execution: ExecutionConfig | None,
) -> Proposals:
    """Exact losses and the declared-decoding check on training rewrites; one
    likelihood-ratio set per pair and direction; the final plan."""
    if not pairs:
        raise InvalidArgumentError("pairs", pairs, "at least one (x, x', origin) pair")
    execution = _checked_execution(execution, rewriter)
    start = time.perf_counter()
    units = [
        _PairUnit(
            rewriter,
            sampler,
            x,
            x_prime,
            config.samples,
            (config.seed, i, StageKey.REWRITE_SELECT),
            config,
        )
        for i, (x, x_prime, _) in enumerate(pairs)
    ]
    scored_pairs = run_units(_score_unit, units, execution, desc="score rewrites (training)")
    findings, proposals = [], []
    for index, ((x, x_prime, origin), (scored, fidelity)) in enumerate(
        zip(pairs, scored_pairs, strict=True)
    ):
        exact = _exact_both(rewriter, scored, x, x_prime)
        covered = rewriter.claim.covers(x, x_prime)
        findings.append(PairFindings(x, x_prime, origin, exact[0], exact[1], fidelity, covered))
        proposals.extend(_propose(scored, index, config))
    # Each document of pair i draws its fresh rewrites from (seed, i, REWRITE_FINAL, side).
    streams = []
    for i, (x, x_prime, _) in enumerate(pairs):
        for side in (0, 1):
            key = (config.seed, i, StageKey.REWRITE_FINAL, side)
            streams.append(Stream((x, x_prime, side), key))
    return Proposals(
        statements=tuple(proposals),
        plan=FinalPlan(
            LogRatioDraw(rewriter, sampler), tuple(streams), config.final_samples,
            SeedListGenerators(), desc="score rewrites (final)",
        ),
        pair_streams=tuple((2 * i, 2 * i + 1) for i in range(len(pairs))),
        chosen="",
        confidence=config.confidence,
        mechanism={"mechanism": rewriter.describe()},
        seed=config.seed,
        samples={"selection": config.samples, "final": config.final_samples},
        delta=rewriter.claim.delta,
        timing={"selection": round(time.perf_counter() - start, 4)},
        execution=execution,
        state=_WhiteBoxSelection(rewriter, sampler, pairs, config, tuple(findings)),
    )  # fmt: skip


def _read_sets(proposals: Proposals, certified: Certified) -> Reading:
    """Each certified likelihood-ratio set against the claim's allowance for its pair, beside
    the exact losses, the fidelity checks and the declaration's check."""
    sel: _WhiteBoxSelection = proposals.state
    rewriter, config, pairs = sel.rewriter, sel.config, sel.pairs
    statements = _statements(rewriter, pairs, list(proposals.statements), certified, config)
    detail = RewriterDetail(
        mode="white-box",
        text_claim=rewriter.claim,
        statements=statements,
        best=best_covered(statements),
        ceiling=_ceiling(config, len(statements)),
        pairs=sel.findings,
        decoding=rewriter.decoding if isinstance(rewriter.decoding, Decoding) else None,
        model_source=_model_source(rewriter),
        code_under_audit=_code_under_audit(rewriter, sel.sampler),
        fidelity_level=config.fidelity_level,
        declaration=_declaration(rewriter, sel.sampler, pairs, config),
        recorded=bool(getattr(rewriter, "records_its_law", False)) and sel.sampler is None,
        output_unit=str(getattr(rewriter, "output_unit", "token")),
    )
    return rewriter_reading(detail, config.final_samples)


def _declaration(
    rewriter: Any,
    sampler: TextSampler | None,
    pairs: Sequence[tuple[str, str, str]],
    config: RewriterAuditConfig,
) -> DeclarationCheck | None:
    """A recorded call's declared decoding beside its recording, on every audited document
    (its own stream of the seed); ``None`` when nothing was declared beside a recording."""
    declared = getattr(rewriter, "declared", None)
    if declared is None or sampler is not None or not hasattr(rewriter, "record"):
        return None
    documents = list(dict.fromkeys(d for x, x_prime, _ in pairs for d in (x, x_prime)))
    rng = np.random.default_rng([config.seed, StageKey.REWRITE_DECLARED])
    return check_declaration(rewriter, declared, documents, rng)


def pilot(
    rewriter: Any,
    pairs: Sequence[tuple[str, str, str]],
    config: RewriterAuditConfig,
    *,
    sampler: TextSampler | None = None,
) -> Callable[[int], None]:
    """``run(n)``: one stage's work on the first pair at ``n`` rewrites per document (drawn,
    scored under both documents, checked), from a stream of its own and then discarded; it
    times the audit for :func:`~dpaudit.auditors.rewriter.sizing.plan_rewriter_sizes`."""
    x, x_prime, _ = pairs[0]
    draw = drawer(rewriter, sampler)

    def run(n: int) -> None:
        key = (config.seed, 0, StageKey.REWRITE_PILOT)
        _score(rewriter, draw, x, x_prime, n, key, config.fidelity_level)

    return run


def _model_source(rewriter: Any) -> str:
    """The model as reports name it (a rewriter without one says what it uses instead)."""
    own = getattr(rewriter, "model_source", None)
    if own is not None:
        return str(own)
    return str(getattr(rewriter.model, "source", type(rewriter.model.model).__name__))


def _code_under_audit(rewriter: Any, sampler: TextSampler | None) -> str:
    if sampler is not None:
        return "a separate sampler"
    return str(getattr(rewriter, "code_under_audit", "the rewriter's own sampler"))


def _checked_execution(execution: ExecutionConfig | None, rewriter: Any) -> ExecutionConfig:
    """In this process by default; Ray or one local worker, never a forked pool.

    PyTorch's thread pool does not survive ``fork`` once it has run (the children
    hang in their first matrix product), and the model already uses every core.  A
    rewriter whose output ids are local to this process (``ids_are_local``) runs here and
    unstored: its stored units could not be read by a later run.
    """
    if execution is None:
        return ExecutionConfig(workers=1)
    if execution.backend == "local" and execution.workers != 1:
        raise InvalidArgumentError(
            "execution", f"local backend, workers={execution.workers}",
            "workers=1 locally (the model uses every core) or backend='ray'",
        )  # fmt: skip
    if getattr(rewriter, "ids_are_local", False):
        if execution.backend != "local":
            raise InvalidArgumentError(
                "execution", f"backend={execution.backend!r}",
                f"the local backend for {rewriter.name}: its output ids are numbered in "
                "this process",
            )  # fmt: skip
        return replace(execution, session=None)
    return execution


def _ceiling(config: RewriterAuditConfig, statements: int) -> float:
    return certifiable_ceiling(config.final_samples, split_error(1 - config.confidence, statements))


@dataclass(frozen=True)
class _PairUnit:
    """One pair's draws and exact scores at one stage: a picklable work unit."""

    rewriter: Any
    sampler: TextSampler | None
    x: str
    x_prime: str
    n: int
    key: tuple[int, int, int]
    config: RewriterAuditConfig

    def describe(self) -> str:
        """What the unit does, for progress and timeout messages."""
        return f"{self.n} rewrites of {self.x!r} and {self.x_prime!r} (stage {self.key[2]})"


def _score_unit(unit: _PairUnit) -> tuple[ScoredRewrites, FidelityCheck]:
    draw = drawer(unit.rewriter, unit.sampler)
    return _score(
        unit.rewriter, draw, unit.x, unit.x_prime, unit.n, unit.key, unit.config.fidelity_level
    )


def _score(
    rewriter: Any, draw: Callable, x: str, x_prime: str, n: int, key: tuple, level: float
) -> tuple[ScoredRewrites, FidelityCheck]:
    """Draw, score exactly under both inputs, and check the rewrites of ``x`` (one pass each)."""
    ys = draw(x, n, np.random.default_rng([*key, 0]))
    zs = draw(x_prime, n, np.random.default_rng([*key, 1]))
    pit_rng = np.random.default_rng([*key, 2])
    lp_y_x: list[np.ndarray] = [np.zeros(0)] * len(ys)
    pits, impossible = [], 0
    for i, lp in rewriter.declared_log_probs(x, ys):
        drawn = lp[np.arange(len(ys[i])), ys[i]]
        lp_y_x[i] = drawn
        impossible += int(np.sum(np.isneginf(drawn)))
        pits.append(randomised_pit(lp, ys[i], pit_rng))
    loss_y = token_losses(lp_y_x, rewriter.token_log_probs(x_prime, ys))
    loss_z = token_losses(rewriter.token_log_probs(x, zs), rewriter.token_log_probs(x_prime, zs))
    fidelity = check_fidelity(np.concatenate(pits) if pits else np.zeros(0), impossible, level)
    return ScoredRewrites(ys, zs, loss_y, loss_z), fidelity


def _exact_both(
    rewriter: Any, scored: ScoredRewrites, x: str, x_prime: str
) -> tuple[ExactLoss, ExactLoss]:
    per_unit = rewriter.claim.allowed_loss(units=1)
    forward = summarise(rewriter, scored.ys, scored.loss_y, per_unit, other=x_prime)
    backward = summarise(rewriter, scored.zs, [-t for t in scored.loss_z], per_unit, other=x)
    return forward, backward


def _propose(scored: ScoredRewrites, index: int, config: RewriterAuditConfig) -> list[Proposal]:
    """One likelihood-ratio set per direction: ``{y : ln p(y|a) − ln p(y|b) > c}``, ``(a, b)``
    the pair in the statement's order."""
    ly = np.array([float(np.sum(t)) for t in scored.loss_y])
    lz = np.array([float(np.sum(t)) for t in scored.loss_z])
    error = split_error(1 - config.confidence, 2)
    out = []
    for forward in (True, False):
        num, den = (ly, lz) if forward else (-lz, -ly)
        candidates = np.unique(np.concatenate([num, den]))
        hits_num = np.array([np.sum(num > c) for c in candidates])
        hits_den = np.array([np.sum(den > c) for c in candidates])
        with np.errstate(divide="ignore"):
            score = np.log(clopper_pearson_lower(hits_num, len(num), error)) - np.log(
                clopper_pearson_upper(hits_den, len(den), error)
            )
        c = float(candidates[int(np.argmax(score))]) if candidates.size else 0.0
        out.append(
            Proposal(index, forward, LogRatioAbove(c, 1 if forward else -1), "likelihood ratio")
        )
    return out


def _statements(
    rewriter: Any,
    pairs: Sequence[tuple[str, str, str]],
    proposals: list[Proposal],
    certified: Certified,
    config: RewriterAuditConfig,
) -> tuple[Statement, ...]:
    """The certified sets as statements, each with the loss the claim allows its pair."""
    certificates = certified.certificates
    out = []
    for p, cert in zip(proposals, certificates, strict=True):
        x, x_prime, origin = pairs[p.pair_index]
        forward, threshold = p.forward, p.event.threshold
        # A pair the claim does not cover (other lengths under an equal-length claim) is
        # reported, never counted as a violation.
        units = max(_cap(rewriter, x), _cap(rewriter, x_prime))
        allowed = rewriter.claim.allowed_loss(x, x_prime, units=units)  # inf: not covered
        a, b = (x, x_prime) if forward else (x_prime, x)
        law = getattr(rewriter, "law_name", "declared decoding")
        event = f"rewrites y with ln p(y|x) − ln p(y|x') > {threshold + 0.0:.4g} ({law})"
        witness = Witness(
            WitnessKind.BLACK_BOX,
            a,
            b,
            event,
            cert.lower_bound,
            config.confidence,
            origin,
            cert.p1,
            cert.p2,
        )
        out.append(Statement(witness, cert, allowed, verdict_for(cert.lower_bound, allowed)))
    return tuple(out)


def _cap(rewriter: Any, document: str) -> int:
    """The most units (tokens, words) one rewrite of ``document`` can release."""
    cap = getattr(rewriter, "length_cap", None)
    return int(cap(document)) if cap is not None else int(rewriter.decoding.max_new_tokens)


def exact_violation(result: AuditResult) -> bool:
    """True when the white-box verdict is a violation (``RewriterDetail.exact_verdict``)."""
    return result.detail.exact_verdict is Verdict.VIOLATION


@dataclass(frozen=True)
class RewriterAuditor:
    """The white-box rewriter audit as an :class:`~dpaudit.auditors.core.protocol.Auditor`.

    ``pairs`` of ``(x, x', origin)`` documents and the optional ``sampler`` (the code under
    audit, when it is not the rewriter itself) as in :func:`audit_rewriter`.  It supports a
    rewriter (a declaration with ``claim``, ``decoding`` and ``model``) with its own text claim.
    """

    pairs: tuple[tuple[str, str, str], ...]
    sampler: Any = None

    kind = AuditorKind.REWRITER

    def supports(self, mechanism: object, claim: object) -> bool:
        """A rewriter declaration audited against its own text claim."""
        return (
            all(hasattr(mechanism, a) for a in ("claim", "decoding", "model"))
            and getattr(mechanism, "claim", None) == claim
        )

    def audit(
        self,
        mechanism: Any,
        claim: object,
        config: RewriterAuditConfig | None,
        execution: ExecutionConfig | None,
    ) -> AuditResult:
        """Run the core's procedure (:func:`~dpaudit.auditors.core.procedure.run_audit`)."""
        return run_audit(self, mechanism, claim, config, execution)

    def propose(
        self,
        mechanism: Any,
        claim: object,
        config: RewriterAuditConfig | None,
        execution: ExecutionConfig | None,
    ) -> Proposals:
        """Exact losses, fidelity checks and one likelihood-ratio set per pair and direction,
        on training rewrites (module docstring, 1–3)."""
        return _propose_sets(
            mechanism, self.pairs, config or RewriterAuditConfig(), self.sampler, execution
        )

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """The certified sets beside the exact losses (module docstring, 4)."""
        return _read_sets(proposals, certified)
