"""``dpaudit sensitivity``: exact Lq-sensitivity of Lp norm clipping, with a witness pair."""

from __future__ import annotations

import argparse
from typing import Any

from dpaudit.analysis.sensitivity import clipping_sensitivity, norm_label
from dpaudit.cli.common import add_json, emit, format_vector
from dpaudit.cli.main import command_help
from dpaudit.cli.parser import integer


def register(sub: Any) -> None:
    """Add the ``sensitivity`` sub-command."""
    p = sub.add_parser(
        "sensitivity",
        help=command_help("sensitivity"),
        description=(
            "Exact L_q sensitivity of clipping f(r) = r·min(1, C/||r||_p) over all r in R^n, "
            "2·C·n^max(0, 1/q − 1/p), with a pair of inputs attaining it. "
            "ADePT (L2 clipping, L1 sensitivity) claimed 2C; the truth is 2C·sqrt(n)."
        ),
    )
    p.add_argument(
        "--clip-norm", default="2", metavar="P", help="clipping norm p: 1, 2 or inf (default 2)"
    )
    p.add_argument(
        "--norm", default="1", metavar="Q", help="sensitivity norm q: 1, 2 or inf (default 1)"
    )
    p.add_argument("--dim", type=integer, required=True, metavar="N", help="dimension n (>= 1)")
    p.add_argument(
        "--bound", type=float, default=1.0, metavar="C", help="clipping bound C > 0 (default 1)"
    )
    add_json(p)
    p.set_defaults(func=run)


def _render(result: dict[str, Any]) -> str:
    p = norm_label(float(result["clip_norm"]))
    q = norm_label(float(result["norm"]))
    w = result["witness"]
    return "\n".join(
        [
            f"{q} sensitivity of {p} clipping to C = {result['bound']:g} in n = "
            f"{result['dim']} dimensions: {result['sensitivity']:.12g}",
            f"  formula: {result['formula']}",
            f"  ADePT's claim 2C = {result['claimed_by_adept']:g}; "
            f"true / claimed = {result['ratio_to_claimed']:.6g}",
            f"  witness r1 = {format_vector(w['r1'])}",
            f"          r2 = {format_vector(w['r2'])}",
            f"  ||f(r1) − f(r2)||_{q[1:]} = {w['distance']:.12g}",
        ]
    )


def run(args: argparse.Namespace) -> int:
    """Compute and print the sensitivity."""
    result = clipping_sensitivity(args.clip_norm, args.norm, args.dim, args.bound)
    emit(args, result.to_dict(), _render)
    return 0
