"""``dpaudit analyze``: a mechanism's claim beside its exact analytic truth and a witness pair."""

from __future__ import annotations

import argparse
import math
from typing import Any

from dpaudit.claims import Definition
from dpaudit.cli.common import add_json, add_mechanism_args, build_mechanism, emit, format_vector
from dpaudit.mechanisms import Mechanism
from dpaudit.serialization import to_jsonable


def register(sub: Any) -> None:
    """Add the ``analyze`` sub-command."""
    p = sub.add_parser(
        "analyze",
        help="claimed ε vs the exact worst-case ε, with a witness pair",
        description=(
            "Print the mechanism's claim, its exact worst-case ε over the claimed domain "
            "(key true_epsilon; 'inf' when unbounded), a pair of inputs attaining it and "
            "whether the claim is violated.  Purely analytic: no sampling."
        ),
    )
    add_mechanism_args(p)
    add_json(p)
    p.set_defaults(func=run)


def analyze(mech: Mechanism) -> dict[str, Any]:
    """The analysis record of one mechanism (JSON-ready apart from inf floats)."""
    claim = mech.claim
    truth = mech.truth()
    result: dict[str, Any] = {
        "mechanism": mech.name,
        "params": mech.params(),
        "reference": mech.reference,
        "known_flawed": mech.known_flawed,
        "claim": claim.describe(),
        "definition": claim.definition.value,
        "claimed_epsilon": claim.epsilon,
        "claimed_delta": claim.delta,
        "claimed_sensitivity": claim.sensitivity,
        "true_epsilon": None,
        "true_delta": None,
        "true_sensitivity": None,
        "sensitivity_norm": claim.sensitivity_norm,
        "method": None,
        "witness": None,
        "violation": None,
        "notes": [],
    }
    warning = mech.warning
    if warning is not None:
        result["warning"] = warning
    if truth is None:
        result["notes"] = ["no exact analysis is known for these parameters"]
        return to_jsonable(result)
    result.update(
        true_epsilon=truth.true_epsilon,
        true_delta=truth.true_delta,
        true_sensitivity=truth.true_sensitivity,
        method=truth.method,
        witness=truth.witness,
        violation=truth.violates(claim),
        notes=list(truth.notes),
    )
    if truth.sensitivity_norm is not None:
        result["sensitivity_norm"] = truth.sensitivity_norm
    result.update(mech.analysis_extras())
    return to_jsonable(result)


def _fmt(v: Any) -> str:
    if v is None:
        return "unknown"
    if isinstance(v, str):
        return {"inf": "∞", "-inf": "-∞"}.get(v, v)
    return "∞" if math.isinf(v) else f"{v:.10g}"


def _render(r: dict[str, Any]) -> str:
    lines = [f"{r['mechanism']}{'  [KNOWN FLAWED]' if r['known_flawed'] else ''}"]
    lines.append(f"  claim:        {r['claim']}")
    lines.append(f"  claimed ε:    {_fmt(r['claimed_epsilon'])}")
    lines.append(f"  true ε:       {_fmt(r['true_epsilon'])}")
    if r["definition"] == Definition.APPROXIMATE.value and r["true_delta"] is not None:
        lines.append(
            f"  true δ at ε:  {_fmt(r['true_delta'])} (claimed {_fmt(r['claimed_delta'])})"
        )
    if r["true_sensitivity"] is not None:
        lines.append(
            f"  sensitivity:  claimed {_fmt(r['claimed_sensitivity'])}, "
            f"true {_fmt(r['true_sensitivity'])} ({r['sensitivity_norm']})"
        )
    verdict = {True: "YES", False: "no", None: "unknown"}[r["violation"]]
    lines.append(f"  violation:    {verdict}")
    if r["method"]:
        lines.append(f"  method:       {r['method']}")
    w = r["witness"]
    if w:
        lines.append(f"  witness:      x  = {format_vector(w['x'])}")
        lines.append(f"                x' = {format_vector(w['x_prime'])}")
        lines.append(f"                loss {_fmt(w['privacy_loss'])}: {w['explanation']}")
    pc = r.get("paper_counterexample")
    if pc:
        p = pc["pair"]
        lines.append(
            f"  paper's pair: {format_vector(p['x'])} vs {format_vector(p['x_prime'])}: "
            f"loss {_fmt(p['privacy_loss'])} = {_fmt(pc['loss_over_epsilon'])}·ε"
        )
    if r.get("warning"):
        lines.append(f"  WARNING:      {r['warning']}")
    for note in r["notes"]:
        lines.append(f"  note:         {note}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Build the mechanism and print its analysis."""
    mech = build_mechanism(args)
    emit(args, analyze(mech), _render)
    return 0
