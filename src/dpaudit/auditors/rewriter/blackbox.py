"""Black-box audit of a text mechanism given only as ``f(text, n, rng) -> list[str]``.

No logits, no tokenizer: the proposer reads the rewrites as a reviewer would
(surface words, length, exact repeats, copying from the input, see
:mod:`.features`), picks for each input pair the sets whose training counts
separate the two inputs best, and hands them to the certification core, which
counts them on fresh rewrites.  The reviewer's first checks (is the output
deterministic, is the input returned unchanged, does the length follow the
input) are reported in plain words beside the certified statements.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.certify import split_error, verdict_for
from dpaudit.auditors.core.counting import FinalPlan, SeedListGenerators, Stream
from dpaudit.auditors.core.power import certifiable_ceiling
from dpaudit.auditors.core.procedure import Certified, Proposals, Reading, run_audit
from dpaudit.auditors.core.proposal import Proposal
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.core.streams import StageKey
from dpaudit.auditors.rewriter.features import (
    TextEvent,
    candidate_events,
    longest_copied_span,
    words,
)
from dpaudit.auditors.rewriter.result import (
    ReviewerChecks,
    RewriterDetail,
    Statement,
    TextSampler,
    best_covered,
    rewriter_reading,
)
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.results.audit import AuditorKind, AuditResult
from dpaudit.validation import check_int, check_probability_open
from dpaudit.witness import Witness, WitnessKind


@dataclass(frozen=True)
class TextAuditConfig:
    """Sample sizes of a black-box text audit.

    Attributes:
        samples: training rewrites per input (propose sets, reviewer checks).
        final_samples: fresh rewrites per input that certify the proposed sets.
        confidence: joint confidence of all certified statements.
        statements_per_pair: sets certified per input pair (the rest cost nothing).
        seed: root seed; each pair and stage draws from its own stream.
    """

    samples: int = 500
    final_samples: int = 2000
    confidence: float = 0.95
    statements_per_pair: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("samples", self.samples, minimum=10)
        check_int("final_samples", self.final_samples, minimum=10)
        check_int("statements_per_pair", self.statements_per_pair, minimum=1)
        check_probability_open("confidence", self.confidence)


def _draw(sampler: TextSampler, document: str, n: int, key: tuple[int, ...]) -> list[str]:
    return _checked(sampler, document, n, np.random.default_rng(list(key)))


def _checked(sampler: TextSampler, document: str, n: int, rng: np.random.Generator) -> list[str]:
    try:
        texts = sampler(document, n, rng)
    except Exception as exc:
        raise MechanismError(f"the text mechanism raised on input {document!r}: {exc!r}") from exc
    texts = list(texts) if not isinstance(texts, str) else [texts]
    if len(texts) != n or not all(isinstance(t, str) for t in texts):
        got = f"{len(texts)} outputs of types {sorted({type(t).__name__ for t in texts})}"
        raise MechanismError(
            f"the text mechanism must return {n} strings for n={n}; it returned {got}"
        )
    return texts


def _checks(x: str, x_prime: str, origin: str, ys: list[str], zs: list[str]) -> ReviewerChecks:
    return ReviewerChecks(
        x, x_prime, origin, len(ys), len(set(ys)), len(set(zs)),
        sum(y == x for y in ys), sum(z == x_prime for z in zs),
        float(np.mean([longest_copied_span(y, x) for y in ys])),
        float(np.mean([len(words(y)) for y in ys])), float(np.mean([len(words(z)) for z in zs])),
    )  # fmt: skip


def _propose(
    events: list[TextEvent], ys: list[str], zs: list[str], keep: int, error: float
) -> list:
    """The ``keep`` best ``(event, forward?)`` by a conservative bound on the training counts."""
    hy = np.array([int(e(ys).sum()) for e in events])
    hz = np.array([int(e(zs).sum()) for e in events])
    with np.errstate(divide="ignore"):
        fwd = np.log(clopper_pearson_lower(hy, len(ys), error)) - np.log(
            clopper_pearson_upper(hz, len(zs), error)
        )
        rev = np.log(clopper_pearson_lower(hz, len(zs), error)) - np.log(
            clopper_pearson_upper(hy, len(ys), error)
        )
    scored = [(fwd[i], i, True) for i in range(len(events))] + [
        (rev[i], i, False) for i in range(len(events))
    ]
    scored.sort(key=lambda s: (-s[0], s[1], not s[2]))
    return [(events[i], forward) for _, i, forward in scored[:keep]]


@dataclass(frozen=True)
class TextDraw:
    """The core's draw of a text sampler (:class:`~dpaudit.auditors.core.counting.OutputDraw`):
    ``sampler(text, n, rng)``, checked to return ``n`` strings."""

    sampler: TextSampler

    def __call__(self, document: str, rows: int, rng: np.random.Generator) -> list[str]:
        """``rows`` checked rewrites of ``document``."""
        return _checked(self.sampler, document, rows, rng)

    def describe(self, document: str) -> str:
        """What drawing on ``document`` runs, for messages."""
        return f"the text mechanism on input {document!r}"


@dataclass(frozen=True)
class _TextSelection:
    """What the text proposer keeps for its reading."""

    pairs: tuple[tuple[str, str, str], ...]
    claim: Any
    max_units: int
    config: TextAuditConfig
    checks: tuple[ReviewerChecks, ...]


def audit_text_mechanism(
    sampler: TextSampler,
    pairs: Sequence[tuple[str, str, str]],
    claim: Any,
    *,
    max_units: int,
    config: TextAuditConfig | None = None,
    name: str = "text mechanism",
    embedder: Any = None,
) -> AuditResult:
    """Audit ``sampler`` against ``claim`` on ``pairs`` of ``(x, x', origin)``, black box.

    ``max_units`` bounds the tokens (or words) one output releases, so that a
    per-token claim allows a set of outputs ``max_units·ε``.  ``embedder`` (a
    :class:`dpaudit.text.embedders.Embedder`) adds sets along a sentence-embedding
    direction fitted on the training rewrites.  The core runs the procedure
    (:func:`~dpaudit.auditors.core.procedure.run_audit`) on a :class:`TextAuditor`.
    """
    auditor = TextAuditor(tuple(pairs), max_units, embedder, name)
    return run_audit(auditor, sampler, claim, config)


def _propose_sets(
    sampler: TextSampler,
    pairs: tuple[tuple[str, str, str], ...],
    claim: Any,
    max_units: int,
    config: TextAuditConfig,
    names: tuple[str, Any],
) -> Proposals:
    """Reviewer checks and the best sets of each pair on training rewrites; the final plan."""
    if not pairs:
        raise InvalidArgumentError("pairs", pairs, "at least one (x, x', origin) pair")
    start = time.perf_counter()
    name, embedder = names
    error = split_error(1 - config.confidence, len(pairs) * config.statements_per_pair)
    checks, chosen = [], []
    for i, (x, x_prime, origin) in enumerate(pairs):
        ys = _draw(sampler, x, config.samples, (config.seed, i, StageKey.REWRITE_SELECT_X))
        zs = _draw(
            sampler, x_prime, config.samples, (config.seed, i, StageKey.REWRITE_SELECT_X_PRIME)
        )
        checks.append(_checks(x, x_prime, origin, ys, zs))
        events = candidate_events(x, x_prime, ys, zs, embedder)
        chosen.extend(
            Proposal(i, f, e, "text feature")
            for e, f in _propose(events, ys, zs, config.statements_per_pair, error)
        )
    streams = []
    for i, (x, x_prime, _) in enumerate(pairs):
        streams.append(Stream(x, (config.seed, i, StageKey.REWRITE_FINAL_X)))
        streams.append(Stream(x_prime, (config.seed, i, StageKey.REWRITE_FINAL_X_PRIME)))
    return Proposals(
        statements=tuple(chosen),
        plan=FinalPlan(
            TextDraw(sampler), tuple(streams), config.final_samples, SeedListGenerators(),
            in_process=True,
        ),
        pair_streams=tuple((2 * i, 2 * i + 1) for i in range(len(pairs))),
        chosen="",
        confidence=config.confidence,
        mechanism={"mechanism": name},
        seed=config.seed,
        samples={"selection": config.samples, "final": config.final_samples},
        delta=claim.delta,
        timing={"selection": round(time.perf_counter() - start, 4)},
        state=_TextSelection(pairs, claim, max_units, config, tuple(checks)),
    )  # fmt: skip


def text_pilot(
    sampler: TextSampler,
    pairs: Sequence[tuple[str, str, str]],
    config: TextAuditConfig,
    embedder: Any = None,
) -> Callable[[int], None]:
    """``run(n)``: the training stage's work on the first pair at ``n`` rewrites per document
    (drawn, checked, read into candidate sets, the sets counted), from a stream of its own
    and then discarded; it times the audit for
    :func:`~dpaudit.auditors.rewriter.sizing.plan_text_sizes`."""
    if not pairs:
        raise InvalidArgumentError("pairs", pairs, "at least one (x, x', origin) pair")
    x, x_prime, _ = pairs[0]

    def run(n: int) -> None:
        ys = _draw(sampler, x, n, (config.seed, 0, StageKey.REWRITE_PILOT, 0))
        zs = _draw(sampler, x_prime, n, (config.seed, 0, StageKey.REWRITE_PILOT, 1))
        events = candidate_events(x, x_prime, ys, zs, embedder)
        _propose(events, ys, zs, config.statements_per_pair, 0.05)  # timed, not kept

    return run


def _read_sets(proposals: Proposals, certified: Certified) -> Reading:
    """Each certified set as a statement against the claim's allowance for its pair."""
    sel: _TextSelection = proposals.state
    out = []
    for p, cert in zip(proposals.statements, certified.certificates, strict=True):
        x, x_prime, origin = sel.pairs[p.pair_index]
        allowed = sel.claim.allowed_loss(x, x_prime, units=sel.max_units)  # inf: not covered
        a, b = (x, x_prime) if p.forward else (x_prime, x)
        witness = Witness(
            WitnessKind.BLACK_BOX, a, b, f"rewrite {p.event.name}", cert.lower_bound,
            sel.config.confidence, origin, cert.p1, cert.p2,
        )  # fmt: skip
        out.append(Statement(witness, cert, allowed, verdict_for(cert.lower_bound, allowed)))
    statements = tuple(out)
    ceiling = certifiable_ceiling(sel.config.final_samples, certified.error)
    detail = RewriterDetail(
        "black-box", sel.claim, statements, best_covered(statements), ceiling,
        checks=sel.checks, max_units=sel.max_units,
    )  # fmt: skip
    return rewriter_reading(detail, sel.config.final_samples)


@dataclass(frozen=True)
class TextAuditor:
    """The black-box text audit as an :class:`~dpaudit.auditors.core.protocol.Auditor`.

    ``pairs`` of ``(x, x', origin)`` documents, ``max_units`` (tokens or words one output may
    release) and the optional sentence ``embedder`` as in :func:`audit_text_mechanism`.  The
    mechanism is a text sampler ``f(text, n, rng) -> list[str]``; the claim a text claim.
    """

    pairs: tuple[tuple[str, str, str], ...]
    max_units: int
    embedder: Any = None
    name: str = "text mechanism"

    kind = AuditorKind.REWRITER

    def supports(self, mechanism: object, claim: object) -> bool:
        """A callable text sampler and a claim with ``allowed_loss`` and ``covers``."""
        return callable(mechanism) and all(
            callable(getattr(claim, a, None)) for a in ("allowed_loss", "covers")
        )

    def propose(
        self, mechanism: Any, claim: Any, config: TextAuditConfig | None, execution: object
    ) -> Proposals:
        """Reviewer checks and the best text-feature sets of each pair, on training rewrites."""
        return _propose_sets(
            mechanism, self.pairs, claim, self.max_units, config or TextAuditConfig(),
            (self.name, self.embedder),
        )  # fmt: skip

    def read(self, proposals: Proposals, certified: Certified) -> Reading:
        """Each certified set judged against the claim's allowance for its pair."""
        return _read_sets(proposals, certified)

    def audit(
        self,
        mechanism: Any,
        claim: Any,
        config: TextAuditConfig | None,
        execution: object,
    ) -> AuditResult:
        """Run the core's procedure (text sampling stays in this process)."""
        return run_audit(self, mechanism, claim, config)
