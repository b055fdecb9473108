"""``dpaudit mechanisms``: list every registered mechanism with its claim and analytic truth.

Vector mechanisms first (``dpaudit audit NAME``), then the word-level ones, the LM rewriters
(``dpaudit audit-rewriter NAME``) and the training algorithms (``dpaudit audit-training
NAME``).  Nothing heavy is loaded: no embedding, no language model, no torch.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from dpaudit.cli.common import add_json, emit
from dpaudit.cli.main import command_help
from dpaudit.mechanisms import make_mechanism, mechanism_class, mechanism_names
from dpaudit.mechanisms.registry import parameter_fields

#: ε used to instantiate each mechanism for the listing (the claim scales with it).
LISTING_EPSILON = 1.0


def register(sub: Any) -> None:
    """Add the ``mechanisms`` sub-command."""
    p = sub.add_parser("mechanisms", help=command_help("mechanisms"), description=__doc__)
    add_json(p)
    p.set_defaults(func=run)


def describe_all() -> list[dict[str, Any]]:
    """One record per mechanism, instantiated with its defaults at ε = 1."""
    rows = []
    for name in mechanism_names("vector"):
        cls = mechanism_class(name)
        mech = make_mechanism(name, epsilon=LISTING_EPSILON)
        truth = mech.truth()
        params = _parameters(cls)
        rows.append(
            {
                "name": name,
                "summary": cls.summary,
                "reference": cls.reference,
                "known_flawed": cls.known_flawed,
                "claim": mech.claim.describe(),
                "claimed_epsilon": LISTING_EPSILON,
                "true_epsilon": None if truth is None else truth.true_epsilon,
                "has_log_prob": mech.has_log_prob,
                "parameters": params,
            }
        )
    return rows


def _parameters(cls: type) -> dict[str, dict[str, Any]]:
    """``-p`` parameters of a mechanism class with default and doc (ε and data left out)."""
    return {
        key: {
            "default": None if f.default is dataclasses.MISSING else f.default,
            "doc": f.metadata.get("doc", ""),
        }
        for key, f in parameter_fields(cls).items()
        if key not in ("epsilon", "embedding") and not key.startswith("_")
    }


def _parameter_line(row: dict[str, Any]) -> list[str]:
    if not row["parameters"]:
        return []
    return [
        "    -p:    " + ", ".join(f"{k}={v['default']!r}" for k, v in row["parameters"].items())
    ]


def describe_word_mechanisms() -> list[dict[str, Any]]:
    """One record per word-level mechanism (metric-DP claims; nothing is instantiated)."""
    rows = []
    for name in mechanism_names("word"):
        cls = mechanism_class(name)
        params = _parameters(cls)
        rows.append(
            {
                "name": name,
                "summary": cls.summary,
                "reference": cls.reference,
                "known_flawed": cls.known_flawed,
                "parameters": params,
            }
        )
    return rows


def describe_rewriters() -> list[dict[str, Any]]:
    """One record per LM rewriter: its model kind, what it is, its keyword parameters."""
    import inspect

    from dpaudit.mechanisms.rewriters.catalogue import REWRITERS

    rows = []
    for name in sorted(REWRITERS):
        kind, build = REWRITERS[name]
        signature = inspect.signature(build)
        rows.append(
            {
                "name": name,
                "model": kind,
                "summary": (build.__doc__ or "").strip().splitlines()[0].replace("``", ""),
                "parameters": [
                    p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY
                ],
            }
        )
    return rows


def describe_trainers() -> list[dict[str, Any]]:
    """One record per built-in training algorithm of ``audit-training``."""
    from importlib import import_module

    from dpaudit.cli.cmd_audit_training import TRAINERS

    rows = []
    for name, (module, attribute) in TRAINERS.items():
        cls = getattr(import_module(module), attribute)
        rows.append(
            {
                "name": name,
                "summary": (cls.__doc__ or "").strip().splitlines()[0],
                "reference": getattr(cls, "reference", ""),
                "parameters": sorted(
                    f.name for f in dataclasses.fields(cls) if f.name != "records"
                ),
            }
        )
    return rows


def _heading(rows: list[Any], what: str) -> list[str]:
    """A section's heading line between blank lines (none for an empty section)."""
    return ["", f"{len(rows)} {what}", ""] if rows else []


def _render_more(result: dict[str, Any]) -> list[str]:
    """The rewriters' and trainers' sections of the listing."""
    rewriters = result.get("rewriters", [])
    lines = _heading(
        rewriters,
        "LM rewriters (text outputs; `dpaudit audit-rewriter NAME --epsilon E`, the embedded "
        "SmolLM2 or `--model DIR`)",
    )
    for row in rewriters:
        lines.append(f"{row['name']}  ({row['model']} model)")
        lines.append(f"    {row['summary']}")
        if row["parameters"]:
            lines.append("    Python keywords: " + ", ".join(row["parameters"]))
    trainers = result.get("trainers", [])
    lines += _heading(
        trainers,
        "training algorithms (canary audits; `dpaudit audit-training NAME`, or your own "
        "MODULE:TRAIN with --score)",
    )
    for row in trainers:
        lines.append(row["name"])
        lines.append(f"    {row['summary']}")
        lines.append(f"    ref:   {row['reference']}")
        lines.append("    -p:    " + ", ".join(row["parameters"]))
    return lines


def _render(result: dict[str, Any]) -> str:
    lines = [
        f"{len(result['mechanisms'])} mechanisms (claims shown at ε = {LISTING_EPSILON:g}, "
        "default parameters)",
        "",
    ]
    for row in result["mechanisms"]:
        true = row["true_epsilon"]
        true_text = "unknown" if true is None else f"{true:g}"
        flag = "  [KNOWN FLAWED]" if row["known_flawed"] else ""
        lines.append(f"{row['name']}{flag}")
        lines.append(f"    {row['summary']}")
        lines.append(f"    claim: {row['claim']};  true ε: {true_text}")
        lines.append(f"    ref:   {row['reference']}")
        lines += _parameter_line(row)
    words = result.get("word_mechanisms", [])
    if words:
        lines += [
            "",
            f"{len(words)} word-level mechanisms (metric-DP claims over word embeddings; "
            "`dpaudit audit NAME --epsilon E`, `--embeddings glove|PATH`)",
            "",
        ]
    for row in words:
        lines.append(f"{row['name']}{'  [KNOWN FLAWED]' if row['known_flawed'] else ''}")
        lines.append(f"    {row['summary']}")
        lines.append(f"    ref:   {row['reference']}")
        lines += _parameter_line(row)
    return "\n".join(lines + _render_more(result))


def run(args: argparse.Namespace) -> int:
    """Print the listing."""
    emit(
        args,
        {
            "mechanisms": describe_all(),
            "word_mechanisms": describe_word_mechanisms(),
            "rewriters": describe_rewriters(),
            "trainers": describe_trainers(),
        },
        _render,
    )
    return 0
