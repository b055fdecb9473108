"""The plot of the ``dp-training`` figure (:mod:`dpaudit.reproduce.dp_training`).

Panel A: per DP-SGD variant, the claimed ε (black bar) and the certified lower bounds ε_lcb
over seeds as upward triangles (median, min–max range) — drawn as lower bounds, so that no
reader takes them for the true ε (Steinke, Nasr & Jagielski, NeurIPS 2023: ε ≥ ε_lcb at the
stated confidence).  Panel B: the correct trainer's ε_lcb and the ceiling against the canaries
of the one-run game and the trainings of the multi-run audit (Nasr et al. 2023).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from dpaudit.reproduce import common
from dpaudit.reproduce.common import FigureResult


def _lcb_marks(ax: Any, x: float, values: list[float], color: str, label: str | None) -> None:
    """Median ε_lcb as an upward triangle (a lower bound) with the min–max range over seeds."""
    med = statistics.median(values)
    ax.errorbar(
        [x],
        [med],
        yerr=[[med - min(values)], [max(values) - med]],
        fmt="^",
        color=color,
        ms=8,
        capsize=3,
        lw=1.2,
        label=label,
    )


def _panel_a(ax: Any, variants: dict[str, Any]) -> None:
    shown = set()
    for i, x in enumerate(variants.values()):
        if "skipped" in x:
            ax.text(i, 0.2, "skipped:\n" + x["skipped"], ha="center", fontsize=6.5, rotation=90)
            continue
        ax.hlines(
            x["claimed_epsilon"],
            i - 0.32,
            i + 0.32,
            color="black",
            lw=3,
            label=None if "c" in shown else "claimed ε (accountant)",
        )
        ax.hlines(
            x["ceiling"],
            i - 0.32,
            i + 0.32,
            color="0.6",
            lw=1,
            ls=":",
            label=None if "t" in shown else "ceiling (all guesses right)",
        )
        flagged = x["flagged"] == x["seeds"]
        kind = "v" if flagged else "n"
        name = "ε_lcb, VIOLATION (above the claim)" if flagged else "ε_lcb, no violation found"
        values = [x["min"], x["median"], x["max"]]
        _lcb_marks(ax, i, values, "red" if flagged else "C0", None if kind in shown else name)
        shown.update({"c", "t", kind})
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(
        [
            k.replace("dpsgd ", "")
            .replace("accumulation-", "accumulation-\n")
            .replace(" (multi-run, crafted background)", ",\ncrafted data\n(multi-run)")
            for k in variants
        ],
        fontsize=8,
        rotation=20,
    )
    ax.set_ylabel("ε (at δ = 1e-05)")
    ax.set_title(
        "A: claimed ε vs certified lower bound ε_lcb (median, min–max over seeds); "
        "true ε ≥ ε_lcb, not = ε_lcb",
        fontsize=9,
    )
    top = max([x.get("ceiling", 0.0) for x in variants.values()] + [1.0])
    ax.set_ylim(-0.2, top * 1.3)  # room above the ceiling for the legend
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, loc="upper center", ncol=4, frameon=True)


def _panel_b(ax: Any, rows: list[dict[str, Any]], method: str, key: str, xlabel: str) -> None:
    mine = [
        r
        for r in rows
        if r.get("trainer") == "dpsgd"
        and r.get("flaw") == "none"
        and r["method"] == method
        and any(p.startswith("B") for p in r["panel"].split())
    ]
    groups = ("B-canaries", "B-runs") if method == "one-run" else ("B-multi-run",)
    for g, group in enumerate(groups):
        part = [r for r in mine if group in r["panel"].split()]
        xs = sorted({r[key] for r in part})
        color = f"C{g}"
        name = {"B-canaries": "one training", "B-multi-run": "multi-run"}.get(
            group, f"pooled runs of {part[0]['canaries']} canaries"
        )
        ceil = [max(r["ceiling"] for r in part if r[key] == x) for x in xs]
        ax.plot(xs, ceil, ":", color=color, lw=1, label=f"ceiling, {name}")
        for j, x in enumerate(xs):
            values = [r["epsilon_lower_bound"] for r in part if r[key] == x]
            _lcb_marks(ax, x, values, color, f"ε_lcb, {name}" if j == 0 else None)
    claimed = mine[0]["claimed_epsilon"]
    ax.axhline(claimed, color="black", ls="--", lw=1.4, label=f"claimed ε = {claimed:.3g}")
    ax.set_xscale("log")
    ticks = sorted({r[key] for r in mine})
    ax.set_xticks(ticks, [str(t) for t in ticks], fontsize=7)
    ax.minorticks_off()
    ax.set_ylim(-0.2, max(r["ceiling"] for r in mine) * 1.45)
    ax.set_xlabel(xlabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", ncol=2, frameon=True)


def plot(result: FigureResult, path: Path) -> None:
    """Panel A per variant; panel B the correct trainer against canaries/runs and multi-run."""
    plt = common.require_matplotlib()
    fig = plt.figure(figsize=(10.0, 8.4))
    grid = fig.add_gridspec(2, 2, height_ratios=(1.1, 1.0), width_ratios=(1.6, 1.0))
    _panel_a(fig.add_subplot(grid[0, :]), result.extra["variants"])
    rows = list(result.rows)
    left, right = fig.add_subplot(grid[1, 0]), fig.add_subplot(grid[1, 1])
    _panel_b(
        left,
        rows,
        "one-run",
        "total_canaries",
        "canaries in the one-run game (canaries per run × pooled runs)",
    )
    left.set_ylabel("ε (at δ = 1e-05)")
    left.set_title("B: correct DP-SGD, one-run audit", fontsize=9)
    _panel_b(right, rows, "multi-run", "runs", "trainings per world (multi-run)")
    right.set_title("B: correct DP-SGD, multi-run audit", fontsize=9)
    fig.tight_layout()
    common.save_figure(fig, path)
