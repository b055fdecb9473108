"""The report's content, independent of the output format.

Both renderers (:mod:`dpaudit.report.markdown`, :mod:`dpaudit.report.html`)
walk the same sections built here, so the two files always say the same
thing.  Text is kept raw here; each renderer escapes it for its format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dpaudit.report.collect import RunContents, fmt
from dpaudit.verdicts import Verdict


@dataclass(frozen=True)
class Table:
    """A table: header cells and rows of already formatted cells."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


def status_line(run: RunContents) -> tuple[bool, str]:
    """``(complete, sentence)`` describing whether the run finished."""
    status = run.status or {}
    config = status.get("config", {})
    scale, seed = config.get("scale", "?"), config.get("seed", "?")
    if run.complete:
        seconds = status.get("seconds")
        took = f" in {float(seconds):.0f} s" if seconds is not None else ""
        return True, (
            f"Complete run: {len(run.figures)} figure(s) at scale '{scale}', "
            f"root seed {seed}{took}."
        )
    state = status.get("status", "unknown (no run-status.json)")
    missing = run.missing_figures
    text = f"INCOMPLETE RUN (status: {state}). The results below are partial."
    if missing:
        text += f" Missing figures: {', '.join(missing)}."
    if status.get("error"):
        text += f" Error: {status['error']}"
    return False, text


def params_text(params: dict[str, Any]) -> str:
    """Mechanism parameters as ``k=v, ...`` (ε shown separately, unset ones left out)."""
    shown = [f"{k}={_value(v)}" for k, v in params.items() if k != "epsilon" and v is not None]
    return ", ".join(shown) or "—"


def _value(v: Any) -> str:
    if isinstance(v, float | int) and not isinstance(v, bool):
        return fmt(v, 6)
    if isinstance(v, list | tuple):
        return "(" + ", ".join(_value(x) for x in v) + ")"
    return str(v)


def audit_summary_table(run: RunContents) -> Table:
    """One row per audited mechanism: claim, truth, empirical bound, verdict."""
    rows = []
    for figure, a in run.audits():
        bound = f"{fmt(a.get('epsilon_lower_bound'))} @ {fmt(a.get('confidence'), 3)}"
        rows.append(
            (
                figure,
                str(a.get("mechanism", "?")),
                params_text(a.get("parameters", {})),
                str(a.get("method", "?")),
                fmt(a.get("claimed_epsilon")),
                fmt(a.get("true_epsilon")),
                bound,
                Verdict.of(bool(a.get("violation"))).label,
            )
        )
    return Table(
        (
            "figure",
            "mechanism",
            "parameters",
            "method",
            "claimed ε",
            "true ε (analytic)",
            "ε lower bound @ confidence",
            "verdict",
        ),
        tuple(rows),
    )


def audit_details(audit: dict[str, Any]) -> list[tuple[str, str]]:
    """``(label, text)`` lines describing one audit (the witness is :func:`witness_items`)."""
    true_eps = audit.get("true_epsilon")
    truth = "not known in closed form"
    if true_eps is not None:
        truth = f"ε = {fmt(true_eps, 6)}"
        if audit.get("truth_method"):
            truth += f" ({audit['truth_method']})"
    return [
        ("claim", str(audit.get("claim", "?"))),
        ("analytic truth", truth),
        (
            "empirical ε lower bound",
            f"{fmt(audit.get('epsilon_lower_bound'), 6)} with confidence "
            f"{fmt(audit.get('confidence'), 4)} ({audit.get('method', '?')})",
        ),
        ("verdict", str(audit.get("verdict", "?"))),
    ]


def witness_items(witness: dict[str, Any]) -> list[tuple[str, str]]:
    """A witness as ``(key, value)`` lines; nested values as compact JSON."""
    items = []
    for key, value in (witness or {}).items():
        if isinstance(value, dict | list):
            text = json.dumps(value, separators=(", ", ": "), ensure_ascii=False)
        elif isinstance(value, float | int) and not isinstance(value, bool):
            text = fmt(value, 6)
        else:
            text = str(value)
        items.append((str(key), text))
    return items


def comparison_table(result: dict[str, Any]) -> Table | None:
    """The paper's numbers beside ours, if the figure has any."""
    rows = result.get("comparison") or []
    if not rows:
        return None
    keys: list[str] = []
    for row in rows:
        for k in row:
            if k not in keys:
                keys.append(k)
    body = tuple(tuple(_cell(row.get(k)) for k in keys) for row in rows)
    return Table(tuple(keys), body)


def _cell(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float | int):
        return fmt(v)
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return fmt(v)
    return str(v)


def findings(result: dict[str, Any]) -> list[tuple[bool, str]]:
    """``(holds, sentence)`` for each qualitative finding of a figure."""
    out = []
    for f in result.get("findings", []):
        detail = f" — {f['detail']}" if f.get("detail") else ""
        out.append((bool(f.get("holds")), f"{f.get('statement', '?')}{detail}"))
    return out


def run_facts(result: dict[str, Any]) -> str:
    """Scale, seed, timings and versions of one figure in one line."""
    timings = result.get("timings", {})
    total = timings.get("total_s")
    versions = ", ".join(f"{k} {v}" for k, v in result.get("versions", {}).items())
    took = f", {float(total):.1f} s" if total is not None else ""
    return f"scale {result.get('scale')}, seed {result.get('seed')}{took}; {versions}"
