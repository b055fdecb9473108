"""What only a rewriter audit reports: :class:`RewriterDetail`, the ``detail`` of its result.

Both rewriter auditors — white box (:mod:`.whitebox`: exact token losses,
the declared-decoding check) and black box (:mod:`.blackbox`: a text
function read as a reviewer would) — return the shared
:class:`~dpaudit.results.audit.AuditResult` (kind ``rewriter``); its
bound and witness are those of the best certified :class:`Statement`.
:func:`rewriter_reading` reads it for the core, which assembles the result; :func:`summary`
states it in a few lines.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.auditors.core.answer import Evidence, Judged, judge
from dpaudit.auditors.core.certify import Certificate
from dpaudit.auditors.core.power import samples_for_loss
from dpaudit.auditors.core.procedure import Reading
from dpaudit.auditors.rewriter.declared import DeclarationCheck
from dpaudit.auditors.rewriter.exact import ExactLoss
from dpaudit.auditors.rewriter.features import words
from dpaudit.auditors.rewriter.fidelity import FidelityCheck
from dpaudit.auditors.rewriter.refutation import exact_refutation
from dpaudit.claims import TextClaim
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.results.audit import AuditorKind, AuditResult, register_detail
from dpaudit.results.statement import CertifiedStatement, statement_of
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

#: The code under audit as a plain function: ``f(document, n, rng)`` → ``n`` rewrites
#: (strings, or token-id arrays where the caller has them).
TextSampler = Callable[[str, int, np.random.Generator], Sequence[Any]]


#: The loss :func:`never_seen_note` plans for: a set never seen under x′ (e^-60 ≈ 0).
NEVER_SEEN_LOSS = 60.0


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


@dataclass(frozen=True)
class Statement:
    """One certified statement: a set of rewrites, its bound and the loss the claim allows it."""

    witness: Witness
    certificate: Certificate
    allowed_loss: float
    verdict: Verdict


def best_covered(statements: tuple[Statement, ...]) -> int:
    """Index of the largest bound among the pairs the claim covers (all, if it covers none)."""
    covered = [i for i, s in enumerate(statements) if not math.isinf(s.allowed_loss)]
    pool = covered or list(range(len(statements)))
    return max(pool, key=lambda i: statements[i].certificate.lower_bound)


def judged(statements: tuple[Statement, ...], ceiling: float) -> list[Judged]:
    """Each statement as the core judges it: refuted by its verdict, testable while the
    sample size's ``ceiling`` (the largest bound it can certify) exceeds the loss allowed."""
    return [
        Judged.of_bound(
            s.certificate.lower_bound if s.verdict is Verdict.VIOLATION else -math.inf,
            s.allowed_loss,
            testable=ceiling > s.allowed_loss,
        )
        for s in statements
    ]


@dataclass(frozen=True)
class ReviewerChecks:
    """What a reviewer sees first in the training rewrites of one pair (black box)."""

    x: str
    x_prime: str
    origin: str
    samples: int
    distinct_x: int
    distinct_x_prime: int
    unchanged_x: int
    unchanged_x_prime: int
    mean_copied_span_x: float
    mean_words_x: float
    mean_words_x_prime: float

    def findings(self) -> list[str]:
        """The checks that fired, in plain words (empty when none did)."""
        out = []
        for who, distinct in (("x", self.distinct_x), ("x'", self.distinct_x_prime)):
            if distinct == 1:
                out.append(f"deterministic: all {self.samples} rewrites of {who} are identical")
        for who, hits in (("x", self.unchanged_x), ("x'", self.unchanged_x_prime)):
            if hits:
                out.append(f"returns {who} unchanged in {hits} of {self.samples} rewrites")
        nx, nxp = len(words(self.x)), len(words(self.x_prime))
        if nx != nxp and (self.mean_words_x - self.mean_words_x_prime) * (nx - nxp) > 0:
            out.append(
                f"output length follows input length: {self.mean_words_x:.1f} vs "
                f"{self.mean_words_x_prime:.1f} words for inputs of {nx} and {nxp} words"
            )
        if self.mean_copied_span_x >= 2:
            out.append(f"copies on average {self.mean_copied_span_x:.1f} consecutive words of x")
        return out

    def to_dict(self) -> dict[str, Any]:
        """The fields, and the checks that fired in words (for a reader of the JSON)."""
        return {**self.__dict__, "findings": self.findings()}


@register_detail(AuditorKind.REWRITER)
@dataclass(frozen=True)
class RewriterDetail:
    """The statements of a rewriter audit and what the auditor saw beside them.

    ``mode``: ``white-box`` or ``black-box``.  ``statements`` were certified
    jointly at the result's confidence; ``best`` indexes the largest bound
    among the pairs the claim covers; ``ceiling`` is the largest bound the
    final sample size could certify (a claim above it could not have been
    refuted: *inconclusive*).  White box: ``pairs`` hold the exact findings,
    ``decoding`` the declared decoding, ``model_source`` and
    ``code_under_audit`` what was run, ``fidelity_level`` the declared-decoding
    check's level.  Black box: ``checks`` hold the reviewer's checks per pair,
    ``max_units`` the tokens (or words) one output releases at most.  ``declaration``: a
    recorded call's declared decoding set beside its recording (white box, when declared).
    ``recorded``: the losses were scored under the law recorded from the user's call, not
    under a declaration (so they are the code's own).  ``output_unit``: what one exact loss
    is of (``token``; ``rewrite`` where a whole rewrite is one draw, as from a candidate set).
    """

    mode: str
    text_claim: TextClaim
    statements: tuple[Statement, ...]
    best: int
    ceiling: float
    pairs: tuple[PairFindings, ...] = ()
    decoding: Decoding | None = None
    model_source: str = ""
    code_under_audit: str = ""
    fidelity_level: float | None = None
    checks: tuple[ReviewerChecks, ...] = ()
    max_units: int | None = None
    declaration: DeclarationCheck | None = None
    recorded: bool = False
    output_unit: str = "token"

    @property
    def lower_bound(self) -> float:
        """The largest certified ε lower bound (``−inf`` when no set saw any evidence)."""
        return self.statements[self.best].certificate.lower_bound

    @property
    def certified(self) -> tuple[CertifiedStatement, ...]:
        """The statements as every auditor's :class:`~dpaudit.results.CertifiedStatement`:
        ``pair_index`` numbers the audited pairs in order, ``forward`` says the statement's
        ``a`` is that pair's ``x``."""
        pairs = tuple((p.x, p.x_prime, p.origin) for p in (self.pairs or self.checks))
        return tuple(_as_certified(s, pairs) for s in self.statements)

    @property
    def witness(self) -> Witness:
        """The witness of the largest bound."""
        return self.statements[self.best].witness

    @property
    def bound_text(self) -> str:
        """``ε ≥ b``, or that there is no evidence when the bound is not positive."""
        bound = self.lower_bound
        return f"ε ≥ {_fmt(bound)}" if bound > 0 else "no evidence of any loss (bound ≤ 0)"

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


def _as_certified(s: Statement, pairs: tuple[tuple[str, str, str], ...]) -> CertifiedStatement:
    w, c = s.witness, s.certificate
    index = next(
        (i for i, (x, x_prime, origin) in enumerate(pairs)
         if origin == w.pair_origin and {x, x_prime} == {w.x, w.x_prime}),
        0,
    )  # fmt: skip
    role = "likelihood ratio" if "ln p(y|x)" in w.event else "text feature"
    forward = bool(pairs) and w.x == pairs[index][0]  # the witness's x is the statement's a
    return statement_of(index, forward, w.event, role, c.p1, c.p2, c.lower_bound)


def rewriter_reading(detail: RewriterDetail, final_samples: int) -> Reading:
    """What a rewriter audit's statements and findings (``detail``) say about its text claim.

    ``final_samples``: fresh rewrites per input.  The bound is the best statement's,
    floored at 0 (ε ≥ 0 always); the core judges the statements (:func:`judged`); an exact
    refutation of a recorded call stands beside them at level 1.
    """
    allowed = _fmt(detail.statements[detail.best].allowed_loss)
    said = f"{detail.bound_text}; the claim allows {allowed} for the best statement's rewrites"
    verdicts = judged(detail.statements, detail.ceiling)
    blind = (
        f"{detail.bound_text}; no bound above {_fmt(detail.ceiling)} can be certified "
        f"at {final_samples} final rewrites per input, and the claim allows {allowed}"
    )
    if detail.mode == "white-box" and not detail.declaration_matches:
        # The exact losses describe a declaration the code does not follow: never "no
        # violation found" on them (a certified refutation still stands).
        verdicts.append(Judged(refuted=False, testable=False))
        blind = f"{_mismatch_text(detail)}; {said}"
    witness, bound, level = detail.witness, detail.lower_bound, None
    refutation = exact_refutation(detail)
    if refutation is not None:  # exact, so it stands beside the certified statements
        verdicts.append(Judged(refuted=True))
        said, witness = refutation.text, refutation.witness
        bound = max(bound, witness.epsilon_lower_bound)
        level = "1 (exact arithmetic on the call's recorded law; no sampling error)"
    return Reading(
        judged=tuple(verdicts),
        evidence=Evidence(
            refuted=said,
            held=said,
            blind=blind,
            outside="the claim allows any loss for every audited pair of rewrites",
        ),
        bound=bound,
        witness=witness,
        detail=detail,
        notes=never_seen_note(detail),
        findings=detail.declaration.findings if detail.declaration is not None else (),
        level=level,
    )


def _mismatch_text(detail: RewriterDetail) -> str:
    which = ", ".join(p.origin for p in detail.pairs if not p.fidelity.matches)
    text = (
        f"the declared decoding does not match the real sampler's rewrites ({which}), so the "
        "exact losses describe the declaration, not the code"
    )
    if detail.decoding is not None:  # an LM's decoding: the call itself can be recorded
        text += "; record the call itself (f(model, tokenizer, text)) to score the code's own law"
    return text


def never_seen_note(detail: RewriterDetail) -> tuple[str, ...]:
    """What a set seen under one document and never under the other says, in full.

    Its counts are consistent with ε = ∞ (a rewrite one document produces and the other
    never does); the certified bound is what the sample size allows, and the note gives
    the draws per document at which the same frequencies would certify the claim's size
    (:func:`~dpaudit.auditors.core.power.samples_for_loss`, ≈ 90 % power).
    """
    s = detail.statements[detail.best]
    p1, p2 = s.certificate.p1, s.certificate.p2
    if p2.hits or not p1.hits:
        return ()
    allowed = s.allowed_loss
    need = ""
    if math.isfinite(allowed) and not s.certificate.lower_bound > allowed:
        n = samples_for_loss(NEVER_SEEN_LOSS, allowed, p1.bound_error, p1.hits / p1.samples)
        need = f"; about {n:,} draws per document would certify the claim's {_fmt(allowed)}"
    return (
        f"{s.witness.event}: seen in {p1.hits} of {p1.samples} rewrites of x and never in "
        f"{p2.samples} of x′ — consistent with ε = ∞; certified ε ≥ "
        f"{_fmt(max(0.0, s.certificate.lower_bound))} at {p1.samples} draws{need}",
    )


def summary(result: AuditResult) -> str:
    """A few lines a person reads first: the white-box and the certified verdict."""
    d: RewriterDetail = result.detail
    if d.mode == "black-box":
        return _black_box_summary(result)
    claim = d.text_claim
    unit = claim.unit.value
    allowed = d.statements[d.best].allowed_loss
    checks = "; ".join(f"{p.origin}: {p.fidelity.describe()}" for p in d.pairs)
    return "\n".join(
        [
            f"{result.mechanism['mechanism']}",
            f"model: {d.model_source}; code under audit: {d.code_under_audit}",
            f"white-box (exact, under {_read_from(d)}): "
            f"{d.exact_verdict.value.upper()}: largest loss of one {d.output_unit} "
            f"{_fmt(d.max_exact_token_loss)}, the claim allows {claim.epsilon:g} per "
            f"{unit} ({_analytic(d)})",
            *([f"  declared decoding vs the real sampler: {checks}"] if not d.recorded else []),
            *(
                [f"  declared decoding vs the recording: {d.declaration.describe()}"]
                if d.declaration is not None
                else []
            ),
            *(f"    {f.describe()}" for f in result.declaration_findings),
            f"black-box certificate (confidence {result.confidence:g}): "
            f"{judge(judged(d.statements, d.ceiling)).value.upper()}: {d.bound_text}; the "
            "claim allows "
            f"{_fmt(allowed)} for this pair's rewrites ({claim.epsilon:g} per {unit} "
            "released), and "
            f"{result.samples['final']} rewrites per input certify at most "
            f"{_fmt(d.ceiling)}",
            f"  witness: {d.witness.describe()}",
            *(
                f"outside the claim ({claim.neighbours.value.replace('_', ' ')} "
                f"neighbours): {p.origin}; largest exact loss of one token "
                f"{_fmt(max(p.forward.max_token_loss, p.backward.max_token_loss))}"
                for p in d.pairs
                if not p.covered
            ),
            *([f"verdict: {result.verdict_text}"] if exact_refutation(d) is not None else []),
        ]
    )


def _read_from(d: RewriterDetail) -> str:
    if d.recorded:
        return "the decoding recorded from the call as it ran"
    return "the decoding read from the code" if d.decoding is not None else "the declared law"


def _analytic(d: RewriterDetail) -> str:
    bound = d.pairs[0].forward.analytic_token_bound
    if math.isnan(bound) and d.declaration is not None:
        return "no analytic worst case: the declaration is compared with the recording, not scored"
    if math.isnan(bound):
        return "no analytic worst case: nothing was declared"
    return f"analytic worst case {_fmt(bound)}"


def _black_box_summary(result: AuditResult) -> str:
    """The black-box text audit's lines: verdict, bound against the claim, reviewer checks."""
    d: RewriterDetail = result.detail
    allowed = d.statements[d.best].allowed_loss
    per = (
        "for any output"
        if d.text_claim.unit.value == "document"
        else f"for outputs of ≤ {d.max_units} {d.text_claim.unit.value}s"
    )
    lines = [
        f"{result.mechanism['mechanism']} (black box); claim {result.claim}",
        f"verdict (confidence {result.confidence:g}): {result.verdict.value}; "
        f"{d.bound_text} (claim allows {allowed:.4g} {per}; at most {d.ceiling:.4g} was "
        "certifiable)",
        f"witness: {d.witness.describe()}",
    ]
    lines += [f"note: {n}" for n in result.notes]
    for c in d.checks:
        for f in c.findings():
            lines.append(f"check ({c.origin}): {f}")
    return "\n".join(lines)


def _fmt(v: float) -> str:
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    return f"{v:.4g}"
