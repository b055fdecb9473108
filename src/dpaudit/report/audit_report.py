"""The report of one audit (``dpaudit audit … --out DIR``, then ``dpaudit report DIR``).

The same blocks and renderers as a run's report: the verdict first (the claim,
its certified bound, the confidence), then the witness in words and its picture
(:mod:`dpaudit.report.audit_picture`: the two output distributions on the
witness set, the certified points against the claim's trade-off curve), the
pairs tried with every certified set, the power, and how it was run.  Read from
the directory's ``result.json`` (the audit's ``AuditResult.to_dict``) and
``config.json`` by field name, so it needs no auditor's types.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dpaudit.errors import InvalidArgumentError
from dpaudit.io import atomic_write_bytes, atomic_write_text
from dpaudit.report.audit_picture import audit_png
from dpaudit.report.blocks import Block, Bullets, Heading, Image, Table, Text
from dpaudit.report.bounds import bound_text, canary_bound_text, scrub_negative_bounds
from dpaudit.report.collect import as_float, fmt
from dpaudit.report.content import INCONCLUSIVE_MARK, VIOLATION_MARK
from dpaudit.report.html import render_blocks as html_blocks
from dpaudit.report.markdown import render_blocks as markdown_blocks
from dpaudit.rundir.layout import AUDIT_PNG, CONFIG_FILE, REPORT_HTML, REPORT_MD, RESULT_FILE
from dpaudit.serialization import from_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness


def is_audit_directory(directory: str | Path) -> bool:
    """True for a finished ``audit --out`` directory (its ``result.json`` is there)."""
    root = Path(directory)
    return (root / RESULT_FILE).is_file() and (root / CONFIG_FILE).is_file()


def load_audit(directory: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(result, config)`` of an audit directory, as JSON; refuses what is not an audit."""
    root = Path(directory)
    try:
        result = json.loads((root / RESULT_FILE).read_text("utf-8"))
        config = json.loads((root / CONFIG_FILE).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(
            "DIR", str(directory), f"a readable audit directory ({exc})"
        ) from None
    if not isinstance(result, dict) or "verdict" not in result or "kind" not in result:
        raise InvalidArgumentError(
            "DIR", str(directory), f"an audit directory whose {RESULT_FILE} holds an audit result"
        )
    return result, config if isinstance(config, dict) else {}


def _mechanism(result: Mapping[str, Any]) -> str:
    spec = result.get("mechanism") or {}
    params = spec.get("params") or {}
    name = params.get("target") or spec.get("mechanism") or "?"
    return str(name)


def _verdict_mark(verdict: str) -> str:
    if verdict == Verdict.VIOLATION.value:
        return VIOLATION_MARK
    return INCONCLUSIVE_MARK if verdict == Verdict.INCONCLUSIVE.value else verdict


def _bound(result: Mapping[str, Any]) -> str:
    detail = result.get("detail") or {}
    if result.get("kind") == "profile":
        claimed = as_float(result.get("claimed_epsilon"))
        mu = bound_text(detail.get("mu_lower_bound"), "μ_lcb")
        if claimed is None or math.isnan(claimed):
            return f"{mu}; {bound_text(result.get('epsilon_lower_bound'))} at the claim's δ"
    if result.get("kind") == "training":
        return canary_bound_text(result.get("epsilon_lower_bound"), detail)
    return bound_text(result.get("epsilon_lower_bound"))


def _witness(result: Mapping[str, Any]) -> Witness | None:
    try:
        return from_jsonable(Witness, result["witness"]) if result.get("witness") else None
    except (TypeError, ValueError, KeyError):
        return None


def _certified_rows(detail: Mapping[str, Any]) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Every set certified together, as a table (``certified``; a profile result written
    before the one statement record: ``sets``)."""
    if detail.get("sets"):
        headers = ("set S", "hits of M(x)", "hits of M(x′)", "Pr[M(x)∈S] ≥", "Pr[M(x′)∈S] ≤")
        rows = []
        for s in detail["sets"]:
            c = s.get("counts") or {}
            rows.append(
                (
                    str(s.get("description", "")),
                    f"{c.get('hits_x')}/{c.get('samples_x')}",
                    f"{c.get('hits_x_prime')}/{c.get('samples_x_prime')}",
                    fmt(s.get("p1_lower")),
                    fmt(s.get("p2_upper")),
                )
            )
        return headers, rows
    headers = ("role", "pair", "set S", "hits (numerator)", "hits (denominator)", "ε_lcb")
    rows = []
    for s in detail.get("certified") or ():
        n1 = s.get("p1_samples", s.get("samples"))
        n2 = s.get("p2_samples", s.get("samples"))
        h1 = s.get("p1_hits", s.get("hits_x"))  # the numerator's hits, whichever its name
        h2 = s.get("p2_hits", s.get("hits_x_prime"))
        rows.append(
            (
                str(s.get("role", "")),
                str(s.get("pair_index", "")),
                str(s.get("event", "")),
                f"{h1}/{n1}",
                f"{h2}/{n2}",
                bound_text(s.get("epsilon_lower_bound"), ""),
            )
        )
    return headers, rows


def _power(result: Mapping[str, Any]) -> list[str]:
    power = result.get("power") or {}
    if result.get("verdict") == Verdict.VIOLATION.value:
        return ["A violation was certified: the audit saw it, so its power is not in question."]
    items = []
    for key, value in power.items():
        if key == "ceiling":
            continue
        v = as_float(value)
        seen = f"ε ≥ {fmt(v, 3)}" if v is not None and math.isfinite(v) else "nothing"
        items.append(f"could have seen {seen} on a set of {key} (probability ≈ 90 %)")
    if "ceiling" in power:
        items.append(f"no bound above {fmt(power['ceiling'], 3)} can be certified at this size")
    return items or ["This auditor records no power; see the notes."]


def audit_blocks(
    result: Mapping[str, Any], config: Mapping[str, Any], png: bytes | None
) -> list[Block]:
    """The report of one audit as blocks (rendered by the run report's renderers)."""
    verdict = str(result.get("verdict", ""))
    detail = result.get("detail") or {}
    violation = verdict == Verdict.VIOLATION.value
    blocks: list[Block] = [
        Text(
            scrub_negative_bounds(str(result.get("verdict_text", verdict))),
            kind="status-bad" if violation else "note",
        ),
        Heading(2, "Verdict", "audit"),
        Table(
            ("mechanism", "claim", "certified bound", "confidence", "verdict"),
            (
                (
                    _mechanism(result),
                    str(result.get("claim", "")),
                    _bound(result),
                    fmt(result.get("confidence"), 3),
                    _verdict_mark(verdict),
                ),
            ),
            marks=4,
            css="claims",
        ),
        Text(str(result.get("confidence_statement", "")), kind="facts"),
    ]
    if result.get("kind") == "training":
        return [*blocks, *_training_blocks(detail), *_closing_blocks(result, config, detail)]
    blocks.append(Heading(3, "Witness"))
    witness = _witness(result)
    if witness is not None:
        a, b = witness.shown_inputs()
        lines = [
            f"x = {a}, x′ = {b}" + (f" ({witness.pair_origin})" if witness.pair_origin else "")
        ]
        lines.append(f"S = {witness.shown_set()}")
        if witness.p1 is not None and witness.p2 is not None:
            lines.append(f"Pr[M(x) ∈ S] {witness.p1.describe()}")
            lines.append(f"Pr[M(x′) ∈ S] {witness.p2.describe()}")
        blocks.append(Bullets(tuple(lines)))
    else:
        blocks.append(Text("No witness: no set separated the outputs."))
    if png is not None:
        alt = "The two output distributions on the witness set, and the certified points"
        blocks.append(Image("audit", png, alt, (("PNG", AUDIT_PNG),), path=AUDIT_PNG))
    blocks += _pairs_blocks(detail)
    blocks += _closing_blocks(result, config, detail)
    return blocks


def _rule_strength(rule: Mapping[str, Any]) -> tuple[bool, float, float]:
    """A rule's rank, as the auditor ranks them: curve refuted, then μ_lcb, then ε_lcb."""
    mu = rule.get("mu_lower_bound")
    return (
        bool(rule.get("refutes_curve")),
        float(mu) if mu is not None else 0.0,
        float(rule.get("epsilon_lower_bound", 0)),
    )


def _rule_row(name: str, rule: Mapping[str, Any], curve: bool, gdp: bool) -> tuple[str, ...]:
    counts = (rule.get("positive"), rule.get("negative"), rule.get("correct"))
    row = (name, *(str(c) for c in counts), fmt(rule.get("epsilon_lower_bound"), 4))
    if gdp:
        row += (fmt(rule.get("mu_lower_bound"), 4),)
    if curve:
        row += ("refuted" if rule.get("refutes_curve") else "not refuted",)
    return row


def _training_blocks(detail: Mapping[str, Any]) -> list[Block]:
    """A canary audit's witness: the canaries, the best guess rule per score, the assumptions."""
    rules = list(detail.get("rules") or ())
    best = rules[int(detail.get("best", 0))] if rules else {}
    per_score: dict[str, Mapping[str, Any]] = {}
    for rule in rules:
        name = str(rule.get("score"))
        kept = per_score.get(name)
        if kept is None or _rule_strength(rule) > _rule_strength(kept):
            per_score[name] = rule
    curve = detail.get("bound") == "f-dp"
    gdp = curve and any(r.get("mu_lower_bound") is not None for r in rules)
    runs = int(detail.get("runs", 1))
    facts = (
        f"{detail.get('canary_description', '')}; {runs} training run{'s' if runs > 1 else ''}, "
        f"{detail.get('included')} of {int(detail.get('canaries', 0)) * runs} included at random "
        f"(access: {detail.get('access')})",
        f"best rule, on score '{best.get('score')}': {best.get('positive')} guessed in, "
        f"{best.get('negative')} out, {best.get('correct')} correct; AUC of that score "
        f"{fmt(detail.get('auc'), 3)} (descriptive)",
        f"largest bound these canaries could give: {fmt(detail.get('ceiling'), 4)}"
        + (f" (μ: {fmt(detail.get('mu_ceiling'), 4)})" if gdp else ""),
    )
    headers = ("score", "guessed in", "guessed out", "correct", "ε_lcb")
    headers += ("μ_lcb",) * int(gdp) + ("claimed curve (f-DP test)",) * int(curve)
    blank = ("—",) * (int(gdp) + int(curve))
    table = Table(
        headers,
        tuple(
            _rule_row(name, r, curve, gdp)
            if _rule_strength(r) > (False, 0.0, 0.0)
            else (name, "—", "—", "—", "0 (no rule certified a bound)", *blank)
            for name, r in per_score.items()
        ),
        title="The best guess rule of each score (each rule certified at α/rules)"
        if not curve
        else "The best guess rule of each score (each rule tested twice, at α/(2·rules))",
    )
    assumed = tuple(str(a) for a in detail.get("assumptions") or ())
    return [
        Heading(3, "Canaries and guesses"),
        Bullets(facts),
        table,
        Heading(3, "What the bound assumes"),
        Bullets(assumed),
    ]


def _pairs_blocks(detail: Mapping[str, Any]) -> list[Block]:
    """The pairs tried, every set certified together and (profile) the δ(ε) profile."""
    headers, rows = _certified_rows(detail)
    blocks: list[Block] = [Heading(3, "Pairs tried")]
    tried = detail.get("pairs_tried")
    facts = [f"{tried} input pair(s) searched" if tried is not None else "one input pair"]
    if detail.get("sets_compared") is not None:
        facts.append(f"{detail['sets_compared']} candidate sets compared on separate samples")
    if rows:
        facts.append(f"{len(rows)} set(s) certified together on the final samples (below)")
    blocks.append(Text("; ".join(facts) + "."))
    if rows:
        blocks.append(Table(headers, tuple(rows)))
    profile = detail.get("profile") or ()
    if profile:
        blocks.append(
            Table(
                ("ε", "claimed δ(ε)", "certified δ_lcb(ε)", "verdict"),
                tuple(
                    (
                        fmt(p.get("epsilon")),
                        fmt(p.get("claimed_delta")),
                        bound_text(p.get("delta_lower_bound"), ""),
                        _verdict_mark(str(p.get("verdict"))),
                    )
                    for p in profile
                ),
                title="The claim's δ(ε) against the certified δ_lcb(ε)",
                marks=3,
            )
        )
    return blocks


def _closing_blocks(
    result: Mapping[str, Any], config: Mapping[str, Any], detail: Mapping[str, Any]
) -> list[Block]:
    """The power, the notes and how the audit was run."""
    blocks: list[Block] = [Heading(3, "Power"), Bullets(tuple(_power(result)))]
    notes = [scrub_negative_bounds(str(n)) for n in result.get("notes") or ()]
    notes += [str(f) for f in detail.get("findings") or ()]
    notes += [
        f"finding: {f.get('summary')} ({f.get('evidence')})"
        for f in result.get("declaration_findings") or ()
    ]  # a declaration the real sampler contradicts
    if notes:
        blocks += [Heading(3, "Notes"), Bullets(tuple(notes))]
    samples = ", ".join(f"{k} {v:,}" for k, v in (result.get("samples") or {}).items())
    seconds = (result.get("timing") or {}).get("total")
    per = "" if result.get("kind") == "training" else " per input"
    run = f"Run: seed {result.get('seed')}; samples{per}: {samples}"
    if seconds is not None:
        run += f"; {float(seconds):.1f} s"
    version = config.get("dpaudit_version")
    blocks.append(Text(run + (f"; dpaudit {version}" if version else ""), kind="facts"))
    return blocks


def write_audit_report(directory: str | Path) -> tuple[Path, Path]:
    """Render an audit directory's report (and its picture) beside its result."""
    root = Path(directory)
    result, config = load_audit(root)
    png = audit_png(result)
    if png is not None:
        atomic_write_bytes(root / AUDIT_PNG, png)
    blocks = audit_blocks(result, config, png)
    title = f"dpaudit audit: {_mechanism(result)}"
    md_path, html_path = root / REPORT_MD, root / REPORT_HTML
    atomic_write_text(md_path, markdown_blocks(blocks, title))
    atomic_write_text(html_path, html_blocks(blocks, title))
    return md_path, html_path
