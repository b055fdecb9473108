"""``dpaudit analyze``: a mechanism's claim beside its exact analytic truth and a witness pair.

For word-level mechanisms with a computable output law (tem, santext,
santext+, custext) the truth is the exact loss ``max_y |ln p(y|w) − ln p(y|w')|``
of word pairs against their allowed ``ε·d(w, w')``: over all pairs of a small
vocabulary, else over the pairs of the geometric search (a lower bound on the
worst case; the method says which).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from dpaudit.claims import Definition
from dpaudit.cli.common import (
    add_json,
    add_mechanism_args,
    build_mechanism,
    emit,
    format_vector,
    parse_params,
)
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import integer
from dpaudit.cli.word_args import add_word_args, build_word_mechanism, fmt, is_word_mechanism
from dpaudit.mechanisms import Mechanism
from dpaudit.serialization import to_jsonable


def register(sub: Any) -> None:
    """Add the ``analyze`` sub-command."""
    p = sub.add_parser(
        "analyze",
        help=command_help("analyze"),
        description=(
            "Print the mechanism's claim, its exact worst-case ε over the claimed domain "
            "(key true_epsilon; 'inf' when unbounded), a pair of inputs attaining it and "
            "whether the claim is violated.  Purely analytic: no sampling."
        ),
    )
    add_mechanism_args(p)
    add_word_args(p)
    p.add_argument(
        "--pair",
        action="append",
        default=[],
        metavar="A;B",
        help="word mechanisms: a word pair to evaluate too (repeatable)",
    )
    p.add_argument(
        "--max-pairs",
        type=integer,
        default=2000,
        metavar="N",
        help="word mechanisms: searched pairs evaluated when the vocabulary is large",
    )
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
        lines.append(f"                loss {_fmt(w['epsilon_lower_bound'])}: {w['event']}")
    pc = r.get("paper_counterexample")
    if pc:
        p = pc["pair"]
        lines.append(
            f"  paper's pair: {format_vector(p['x'])} vs {format_vector(p['x_prime'])}: "
            f"loss {_fmt(p['epsilon_lower_bound'])} = {_fmt(pc['loss_over_epsilon'])}·ε"
        )
    if r.get("warning"):
        lines.append(f"  WARNING:      {r['warning']}")
    for note in r["notes"]:
        lines.append(f"  note:         {note}")
    return "\n".join(lines)


def analyze_word(mech: Any, pairs: tuple[tuple[str, str], ...], max_pairs: int) -> dict[str, Any]:
    """The analysis record of a word-level mechanism (exact pair losses where computable).

    Small vocabularies are analysed over all pairs; larger ones over ``pairs``
    and up to ``max_pairs`` pairs of the geometric search.
    """
    from dpaudit.analysis.word_loss import EXHAUSTIVE_LIMIT, exact_metric_truth
    from dpaudit.auditors.metric.pairs import search_pairs

    claim = mech.claim
    result: dict[str, Any] = {
        "mechanism": mech.name,
        "spec": mech.spec(),
        "reference": mech.reference,
        "known_flawed": mech.known_flawed,
        "claim": claim.describe(),
        "definition": claim.definition.value,
        "claimed_epsilon": claim.epsilon,
        "method": None,
        "violation": None,
        "worst": None,
        "top": [],
        "notes": [],
    }
    probe = mech.vocabulary.words[0]
    if mech.output_log_probs(probe) is None:
        result["notes"] = ["the output distribution has no closed form: use `dpaudit audit`"]
        return to_jsonable(result)
    if mech.vocabulary.size > EXHAUSTIVE_LIMIT:
        found = search_pairs(mech, max_pairs, pairs, search_words=min(mech.vocabulary.size, 5000))
        pairs = tuple((p.w, p.w_prime) for p in found)
    truth = exact_metric_truth(mech, pairs)
    result.update(
        method=truth.method,
        violation=truth.violation,
        worst=truth.worst,
        worst_loss=truth.worst_loss,
        pairs_evaluated=truth.pairs_evaluated,
        violating_pairs=truth.violating_pairs,
        top=list(truth.top),
    )
    return to_jsonable(result)


def _render_word(r: dict[str, Any]) -> str:
    lines = [f"{r['mechanism']}{'  [KNOWN FLAWED]' if r['known_flawed'] else ''}"]
    lines.append(f"  claim:        {r['claim']}")
    verdict = {True: "YES", False: "no", None: "unknown"}[r["violation"]]
    lines.append(f"  violation:    {verdict}")
    if r["method"]:
        lines.append(f"  method:       {r['method']}")
        lines.append(
            f"  pairs:        {r['pairs_evaluated']} evaluated, {r['violating_pairs']} violate"
        )
    w = r["worst"]
    if w:
        lines.append(
            f"  worst ratio:  {w['w']!r} vs {w['w_prime']!r}: loss {fmt(w['loss'])} at output "
            f"{w['witness_output']!r}, ε·d = {fmt(w['allowed_loss'])} (d = "
            f"{fmt(w['distance'])}), ratio {fmt(w['ratio'])}"
        )
    for p in r["top"][1:6]:
        lines.append(
            f"                {p['w']!r} vs {p['w_prime']!r}: loss {fmt(p['loss'])}, "
            f"ε·d = {fmt(p['allowed_loss'])}, ratio {fmt(p['ratio'])}"
        )
    for note in r["notes"]:
        lines.append(f"  note:         {note}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Build the mechanism and print its analysis."""
    if is_word_mechanism(args.mechanism):
        from dpaudit.cli.word_args import parse_word_pair
        from dpaudit.errors import InvalidArgumentError

        if args.max_pairs < 1:
            raise InvalidArgumentError("--max-pairs", args.max_pairs, "an integer >= 1")
        pairs = tuple(parse_word_pair(t) for t in args.pair)
        word_mech = build_word_mechanism(args, parse_params(args.param))
        emit(args, analyze_word(word_mech, pairs, args.max_pairs), _render_word)
        return 0
    if args.pair:
        from dpaudit.errors import InvalidArgumentError

        raise InvalidArgumentError("--pair", args.pair[0], "used with a word mechanism only")
    mech = build_mechanism(args)
    emit(args, analyze(mech), _render)
    return 0
