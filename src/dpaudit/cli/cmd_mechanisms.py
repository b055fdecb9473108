"""``dpaudit mechanisms``: list every registered mechanism with its claim and analytic truth."""

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
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Print the listing."""
    emit(
        args,
        {"mechanisms": describe_all(), "word_mechanisms": describe_word_mechanisms()},
        _render,
    )
    return 0
