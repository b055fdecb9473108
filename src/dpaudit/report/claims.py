"""The report's answer, first: every claim found false, then those that held, then the open ones.

A reader opens the report to learn which privacy claims are false.  So its
first section (:func:`claims_blocks`) is a table of every audited claim the run
found false: mechanism, claim, the certified bound (``ε_lcb``, ``δ_lcb`` or
``μ_lcb``; ``∞ exact`` with its reason where an exact analysis, not sampling,
refuted it), the confidence, the witness in words and a link to its evidence.
Then the claims that held, each with its power ("could have seen ε ≥ x"), and
the inconclusive ones with the samples that would settle them.  The
reproduction scorecard comes only after (:func:`dpaudit.report.content.summary_blocks`).

No bound here is ever negative: a lower bound at or below zero certifies
nothing and reads as such (:func:`bound_text`).  Everything is read from the
typed records of ``results.json``; an audit's auditor-specific detail is read
in its JSON form by field name, so this module needs no auditor's types.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from dpaudit.report.bounds import INFINITE_EXACT, bound_text, canary_bound_text
from dpaudit.report.collect import FigureEntry, RunContents, as_float, fmt
from dpaudit.report.content import (
    Block,
    Heading,
    Table,
    Text,
    audit_labels,
    audit_verdict,
    figure_label,
)
from dpaudit.rundir.layout import RESULTS_JSON
from dpaudit.rundir.records import AuditRecord
from dpaudit.serialization import to_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness, format_input

#: What a cell says that only a stored audit can fill, for a record from an older file.
OLDER_FILE = "not recorded in this older results file"


def anchor(figure: str, index: int) -> str:
    """The id of an audit's witness card in the HTML report."""
    return f"{figure}-w{index}"


# ------------------------------------------------------------------ reading one audit
def _detail(audit: AuditRecord) -> Mapping[str, Any]:
    """The audit's auditor-specific detail as JSON (empty without a stored audit)."""
    if audit.audit is None:
        return {}
    detail = to_jsonable(audit.audit.detail)
    return detail if isinstance(detail, Mapping) else {}


def _kind(audit: AuditRecord) -> str:
    return "" if audit.audit is None else str(audit.audit.kind)


def exact_loss(audit: AuditRecord) -> float | None:
    """The exact loss an analysis found: the analytic ε, else the largest exact token loss."""
    if audit.true_epsilon is not None:
        return as_float(audit.true_epsilon)
    losses = []
    for pair in _detail(audit).get("pairs", ()) or ():
        for side in ("forward", "backward"):
            found = pair.get(side) if isinstance(pair, Mapping) else None
            if isinstance(found, Mapping) and "max_token_loss" in found:
                losses.append(as_float(found["max_token_loss"]))
    losses = [v for v in losses if v is not None and not math.isnan(v)]
    if losses:
        return max(losses)
    clause = audit.verdict_text.split(";")[0]  # a record without its stored audit
    return math.inf if "exact" in clause and "∞" in clause else None


def certified(audit: AuditRecord) -> bool:
    """True when sampling certified the violation (the bound exceeds the claim)."""
    bound, claim = as_float(audit.epsilon_lower_bound), as_float(audit.claimed_epsilon)
    if _kind(audit) == "profile":
        return audit.audit is not None and audit.audit.verdict is Verdict.VIOLATION
    if _kind(audit) == "metric":  # each pair against its own allowed loss ε·d
        return any(p.get("verdict") == Verdict.VIOLATION.value for p in _detail(audit)["pairs"])
    return bound is not None and claim is not None and bound > claim


def _reason(audit: AuditRecord) -> str:
    """Why an exact analysis refutes the claim: the row's first clause, or the truth's method."""
    if audit.true_epsilon is not None and audit.truth_method:
        return audit.truth_method
    return audit.verdict_text.split(";")[0].strip()


def certified_bound(audit: AuditRecord) -> str:
    """The certified bound in the claim's own terms: ``ε_lcb``, ``δ_lcb`` (at ε) or ``μ_lcb``."""
    detail = _detail(audit)
    if _kind(audit) == "profile":
        claimed = as_float(audit.claimed_epsilon)
        if claimed is None or math.isnan(claimed):
            return bound_text(detail.get("mu_lower_bound"), "μ_lcb")
        worst = detail.get("worst_epsilon")
        point = next((p for p in detail.get("profile", ()) if p.get("epsilon") == worst), None)
        if point is not None and audit.violation:
            delta = bound_text(point.get("delta_lower_bound"), "δ_lcb")
            return f"{delta} at ε = {fmt(worst)} (claim: δ = {fmt(point.get('claimed_delta'))})"
    if _kind(audit) == "training":
        return canary_bound_text(audit.epsilon_lower_bound, detail)
    return bound_text(audit.epsilon_lower_bound)


def violation_bound(audit: AuditRecord) -> str:
    """A false claim's bound: certified, or ``∞ exact`` (or the exact value) with its reason."""
    exact = exact_loss(audit)
    if certified(audit):
        text = certified_bound(audit)
        if exact is not None and math.isinf(exact):
            text += f"; exact ε = ∞ ({_reason(audit)})"
        return text
    if exact is not None and exact > 0:
        value = INFINITE_EXACT if math.isinf(exact) else f"{fmt(exact)} exact"
        return f"{value} ({_reason(audit)})"
    return f"{certified_bound(audit)} ({_reason(audit)})"


def witness_words(audit: AuditRecord) -> str:
    """The witness in one line: the pair, the set and the two probabilities behind the bound."""
    lines = {str(k): v for k, v in to_jsonable(audit.card_lines).items()}
    if not certified(audit) and "worst token" in lines:  # an exact white-box finding
        pair = lines.get("pair", "")
        rewrite = str(lines.get("worst rewrite", ""))
        short = rewrite if len(rewrite) <= 50 else rewrite[:47] + "…"
        return f"{pair}: token {lines['worst token']} in the rewrite “{short}”"
    p1 = next((v for k, v in lines.items() if k.startswith("p1 = ")), None)
    p2 = next((v for k, v in lines.items() if k.startswith("p2 = ")), None)
    if "x" in lines and "x_prime" in lines and p1 is not None and p2 is not None:
        # The card's own lines: the same words whether the file stored the typed witness.
        event = lines.get("S") or lines.get("attack") or lines.get("event") or ""
        text = f"x = {_shown(lines['x'])}, x′ = {_shown(lines['x_prime'])}"
        return f"{text}; {event}: Pr[M(x) ∈ S]: {p1}; Pr[M(x′) ∈ S]: {p2}"
    witness = audit.witness
    if isinstance(witness, Witness):
        return describe_witness(witness)
    return "; ".join(f"{k} = {v}" for k, v in list(lines.items())[:3]) or "—"


def _shown(value: Any) -> str:
    if isinstance(value, list) and all(isinstance(v, int | float) for v in value):
        return format_input(tuple(float(v) for v in value))
    return str(value)


def describe_witness(witness: Witness) -> str:
    """``x = …, x′ = …; S = {…}: Pr[M(x) ∈ S] ≥ p1 (h/n), Pr[M(x′) ∈ S] ≤ p2 (h/n)``."""
    a, b = witness.shown_inputs()
    text = f"x = {a}, x′ = {b}"
    if witness.p1 is None or witness.p2 is None:
        return text + (f"; {witness.event}" if witness.event else "")
    return (
        f"{text}; S = {witness.shown_set()}: Pr[M(x) ∈ S] {witness.p1.describe()}, "
        f"Pr[M(x′) ∈ S] {witness.p2.describe()}"
    )


def power_text(audit: AuditRecord) -> str:
    """What the audit could have seen: ``could have seen ε ≥ x on a set of mass 0.1``.

    An exact analysis, where the figure has one, comes first: it says more than the power of
    the samples, and it reads the same from a record stored before audits carried power.
    """
    exact = exact_loss(audit)
    if exact is not None:
        return f"exact analysis: ε = {fmt(exact)} ({_reason(audit)})"
    power = dict(audit.audit.power) if audit.audit is not None else {}
    detail = _detail(audit)
    if not power and _kind(audit) == "metric":
        losses = [as_float(p.get("detectable_loss")) for p in detail.get("pairs", ())]
        finite = [v for v in losses if v is not None and math.isfinite(v)]
        if finite:
            return f"could have seen a loss ≥ {fmt(max(finite), 3)} on every pair"
    for mass in ("mass 0.1", "mass 0.5"):
        v = as_float(power.get(mass))
        if v is not None and math.isfinite(v):
            ceiling = as_float(power.get("ceiling"))
            tail = f"; no bound above {fmt(ceiling, 3)} certifiable" if ceiling else ""
            return f"could have seen ε ≥ {fmt(v, 3)} on a set of {mass}{tail}"
    return "not recorded by this auditor"


def samples_to_settle(audit: AuditRecord) -> str:
    """The samples per input that would settle an inconclusive audit, in words."""
    if audit.audit is None:  # a record from before audits were stored: its detail is gone
        return OLDER_FILE
    detail = _detail(audit)
    if _kind(audit) == "metric":
        open_pairs = [p for p in detail.get("pairs", ()) if p.get("verdict") == "inconclusive"]
        needed = [p.get("samples_needed") for p in open_pairs]
        if needed and all(isinstance(n, int) for n in needed):
            return f"≈ {max(needed):,} final samples per input (now {_final(audit)})"
        if needed:
            return "more final samples per input than the audit can draw"
    allowed = as_float(audit.claimed_epsilon)
    statements = detail.get("statements") or ()
    best = detail.get("best")
    if isinstance(best, int) and 0 <= best < len(statements):
        allowed = as_float(statements[best].get("allowed_loss")) or allowed
    witness = audit.witness
    error = witness.p1.bound_error if isinstance(witness, Witness) and witness.p1 else None
    error = error or (1 - audit.confidence) / 2
    if allowed is None or not math.isfinite(allowed) or error <= 0:
        return "not computable (no finite claim to test)"
    log10 = (allowed + math.log(math.log(1 / error))) / math.log(10)
    if log10 > 12:
        return f"≈ 10^{log10:.0f} per input (e^{fmt(allowed, 3)}·ln(1/α)): beyond any sampling"
    return f"≈ {10**log10:,.0f} final samples per input (e^ε·ln(1/α); now {_final(audit)})"


def _final(audit: AuditRecord) -> str:
    samples = {} if audit.audit is None else audit.audit.samples
    n = samples.get("final")
    return f"{n:,}" if isinstance(n, int) else "?"


# ------------------------------------------------------------------ the three sections
def _grouped(run: RunContents) -> list[tuple[FigureEntry, int, str, AuditRecord]]:
    out = []
    for entry in run.figures:
        audits = list(entry.result.audits)
        labels = audit_labels(audits)
        pairs = enumerate(zip(labels, audits, strict=True))
        out += [(entry, i, _short(label), a) for i, (label, a) in pairs]
    return out


def _short(label: str, limit: int = 60) -> str:
    return label if len(label) <= limit else label[: limit - 1] + "…"


def _group(entry: FigureEntry) -> str:
    return f"[{figure_label(entry)}](#{entry.name}): {entry.title}"


def _evidence(entry: FigureEntry, index: int) -> str:
    return f"[witness](#{anchor(entry.name, index)}) · [JSON]({entry.name}/{RESULTS_JSON})"


def claims_blocks(run: RunContents) -> list[Block]:
    """The report's first sections: claims found false, claims that held, inconclusive ones."""
    rows = _grouped(run)
    false = [r for r in rows if r[3].violation]
    open_ = [r for r in rows if audit_verdict(r[3]) == Verdict.INCONCLUSIVE.label]
    held = [r for r in rows if r not in false and r not in open_]
    return _false_blocks(false, len(rows)) + _held_blocks(held) + _open_blocks(open_)


Row = tuple[FigureEntry, int, str, AuditRecord]


def _false_blocks(false: list[Row], total: int) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Claims found false", "violations")]
    if not false:
        return [*blocks, Text(f"None of the {total} audited claims was found false.")]
    lead = (
        f"The audits found **{len(false)} of {total}** audited claims false. Each bound "
        "is one-sided: with the stated confidence the mechanism leaks at least this much."
    )
    headers = (
        "figure",
        "mechanism",
        "claim",
        "certified bound",
        "confidence",
        "witness",
        "evidence",
    )
    cells = [
        (
            e,
            i,
            (label, a.claim, violation_bound(a), _confidence(a), witness_words(a), _evidence(e, i)),
        )
        for e, i, label, a in false
    ]
    return [*blocks, Text(lead, markdown=True), _table(headers, cells, "claims violations")]


def _held_blocks(held: list[Row]) -> list[Block]:
    if not held:
        return []
    headers = ("figure", "mechanism", "claim", "certified bound", "confidence", "power")
    cells = [
        (e, i, (label, a.claim, certified_bound(a), _confidence(a), power_text(a)))
        for e, i, label, a in held
    ]
    lead = (
        "No violation found: not a proof of privacy, only what the audit could have "
        "seen (its power) and did not."
    )
    return [Heading(2, "Claims that held", "held"), Text(lead), _table(headers, cells, "claims")]


def _open_blocks(open_: list[Row]) -> list[Block]:
    if not open_:
        return []
    headers = (
        "figure",
        "mechanism",
        "claim",
        "certified bound",
        "confidence",
        "samples that would settle it",
    )
    cells = [
        (
            e,
            i,
            (
                label,
                a.claim,
                certified_bound(a),
                _confidence(a),
                samples_to_settle(a),
            ),
        )
        for e, i, label, a in open_
    ]
    lead = "Too few samples to see a violation of the claim even if there were one."
    return [
        Heading(2, "Inconclusive claims", "inconclusive"),
        Text(lead),
        _table(headers, cells, "claims"),
    ]


def _confidence(audit: AuditRecord) -> str:
    if audit.violation and not certified(audit) and exact_loss(audit) is not None:
        return "exact (no sampling)"
    return fmt(audit.confidence, 3)


def _table(
    headers: tuple[str, ...],
    rows: Sequence[tuple[FigureEntry, int, tuple[str, ...]]],
    css: str,
) -> Table:
    body = tuple((_group(e), *cells) for e, _, cells in rows)
    markdown = (len(headers) - 1,) if headers[-1] == "evidence" else ()
    return Table(headers, body, group_column=0, css=css, markdown_columns=markdown)
