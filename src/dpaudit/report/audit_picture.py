"""The picture of one audit: the two output distributions on the witness set, and the claim.

Left: ``Pr[M(x) ∈ S]`` and ``Pr[M(x′) ∈ S]`` (and their complements) as bars,
with the one-sided bounds behind the certified ε.  Right: every certified
statement as a point ``(Pr[M(x′) ∈ S], Pr[M(x) ∈ S])`` beside the claim's
trade-off curve (the largest ``Pr[M(x) ∈ S]`` the claim allows for each
``Pr[M(x′) ∈ S]``); a certified corner above the curve refutes the claim.  For a
whole-claim (profile) audit the certified corners, joined, are its certified
trade-off curve.  Read from the result's JSON form by field name.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

from dpaudit.report.collect import as_float


def _claim_curve(data: Mapping[str, Any], grid: Sequence[float]) -> tuple[list[float], str]:
    """The claim's largest ``Pr[M(x) ∈ S]`` for each ``Pr[M(x′) ∈ S]`` in ``grid``, and its name."""
    claim = (data.get("detail") or {}).get("claim") if data.get("kind") == "profile" else None
    if isinstance(claim, Mapping) and claim.get("kind") == "gdp":
        mu, normal = float(claim["mu"]), NormalDist()
        curve = [normal.cdf(normal.inv_cdf(min(max(p, 1e-12), 1 - 1e-12)) + mu) for p in grid]
        return curve, f"claim: {mu:g}-GDP"
    eps = as_float(data.get("claimed_epsilon"))
    delta = as_float(data.get("claimed_delta")) or 0.0
    if eps is None or not math.isfinite(eps):
        return [], ""
    curve = [
        min(1.0, math.exp(eps) * p + delta, 1 - math.exp(-eps) * (1 - p - delta)) for p in grid
    ]
    return curve, f"claim: ({eps:g}, {delta:g})-DP"


def _points(data: Mapping[str, Any]) -> list[tuple[float, float]]:
    """Each certified statement's point estimate ``(Pr[M(x′) ∈ S], Pr[M(x) ∈ S])``."""
    detail = data.get("detail") or {}
    out = []
    for s in detail.get("sets") or detail.get("certified") or ():
        counts = s.get("counts") or s
        hx = counts.get("p1_hits", counts.get("hits_x"))
        hy = counts.get("p2_hits", counts.get("hits_x_prime"))
        nx = counts.get("p1_samples", counts.get("samples_x", counts.get("samples")))
        ny = counts.get("p2_samples", counts.get("samples_x_prime", counts.get("samples")))
        if None not in (hx, hy, nx, ny) and nx and ny:
            out.append((hy / ny, hx / nx))
    return out


def _corners(data: Mapping[str, Any]) -> list[tuple[float, float]]:
    """The certified corners ``(p2_upper, p1_lower)`` where the result records them."""
    detail = data.get("detail") or {}
    sets = detail.get("certified") or detail.get("sets") or ()
    return sorted((s["p2_upper"], s["p1_lower"]) for s in sets if "p2_upper" in s)


def audit_png(data: Mapping[str, Any]) -> bytes | None:
    """The audit's picture as PNG bytes; None without a witness with counts (or matplotlib)."""
    witness = data.get("witness") or {}
    p1, p2 = witness.get("p1"), witness.get("p2")
    if not (isinstance(p1, Mapping) and isinstance(p2, Mapping)):
        return None
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(10.4, 3.9), dpi=100)
    est = (p1["hits"] / p1["samples"], p2["hits"] / p2["samples"])
    colours = ("#b00020", "#1f4e9a")
    for i, (e, bound, colour) in enumerate(zip(est, (p1, p2), colours, strict=True)):
        left.bar([i * 3, i * 3 + 1], [e, 1 - e], color=colour, alpha=0.8, width=0.8)
        side = "≥" if bound["bound_side"] == "lower" else "≤"
        left.plot([i * 3 - 0.4, i * 3 + 0.4], [bound["bound"]] * 2, color="black", lw=2)
        text = f"{side} {bound['bound']:.3g}"
        left.annotate(text, (i * 3, bound["bound"]), textcoords="offset points",
                      xytext=(0, 4), ha="center", fontsize=8)  # fmt: skip
    left.set_xticks([0, 1, 3, 4], ["M(x) ∈ S", "M(x) ∉ S", "M(x′) ∈ S", "M(x′) ∉ S"], fontsize=8)
    left.set_ylim(0, 1.08)
    left.set_ylabel("probability (estimate; bar: certified bound)")
    left.set_title("The two output distributions on the witness set S", fontsize=10)
    grid = [i / 400 for i in range(401)]
    curve, name = _claim_curve(data, grid)
    if curve:
        right.plot(grid, curve, color="black", lw=1.2, label=name + " (largest allowed)")
    points = _points(data)
    if points:
        right.scatter(
            *zip(*points, strict=True), s=14, color="#888", label="certified sets (estimates)"
        )
    corners = _corners(data)
    if corners:
        right.plot(*zip(*corners, strict=True), color="#b00020", lw=1.5, marker=".",
                   label="certified trade-off curve (bounds)")  # fmt: skip
    right.scatter([p2["bound"]], [p1["bound"]], s=60, marker="*", color="#b00020", zorder=5,
                  label="witness: (Pr[M(x′)∈S] upper, Pr[M(x)∈S] lower)")  # fmt: skip
    right.set_xlim(0, 1), right.set_ylim(0, 1.02)
    right.set_xlabel("Pr[M(x′) ∈ S]"), right.set_ylabel("Pr[M(x) ∈ S]")
    right.set_title("Certified points against the claim", fontsize=10)
    right.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()
