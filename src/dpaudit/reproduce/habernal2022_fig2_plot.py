"""Drawing Habernal (ACL 2022), Fig. 2 so that it reads at the report's width.

One panel per mechanism in a grid of three columns (the last cell holds the
legend), 10 inches wide: at ``figure.png``'s resolution that is the report's
text width, so nothing is shrunk.  Per ε: our MLE loss (line), the published
loss (×), the exact loss of the attack (dashed), and the 95% interval as a
thin bar nudged sideways per ε so that overlapping intervals stay apart.  ∞
and 0 have their own lines at the top and bottom of the log axis; a value of
0 (or below the bottom line) is drawn on it as ▼ (ours) or ▽ (published).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.reproduce import common
from dpaudit.reproduce.common import FigureResult

_INF_Y = 2000.0  # ∞ is drawn here: above every finite exact loss of the grid
_FLOOR_Y = 3e-5  # 0 (and anything smaller) is drawn here, marked ▼ / ▽


def _y(v: float | None) -> float:
    if v is None:
        return math.nan
    if math.isinf(v):
        return _INF_Y
    return max(v, _FLOOR_Y)


def _clipped(v: float | None) -> bool:
    return v is not None and not math.isinf(v) and v < _FLOOR_Y


def _all_infinite(cells: Sequence[Mapping[str, Any]]) -> bool:
    """True when our loss is ∞ in every cell: bars and lines there would say nothing."""
    return bool(cells) and all(
        isinstance(r["empirical_loss"], float) and math.isinf(r["empirical_loss"]) for r in cells
    )


def _draw_series(ax: Any, cells: Sequence[Mapping[str, Any]], c: Any, nudge: float) -> None:
    """One ε of one panel: interval bars, exact loss, our MLE (▼ at 0), published (×, ▽ at 0)."""
    x = np.array([r["dim"] for r in cells], dtype=float)
    ax.vlines(x * nudge, [_y(r["epsilon_lower_bound"]) for r in cells],
              [_y(r["loss_upper_bound"]) for r in cells], color=c, lw=2.2, alpha=0.35)  # fmt: skip
    ax.plot(x, [_y(r["exact_attack_loss"]) for r in cells], "--", color=c, lw=1.0, alpha=0.9)
    ours = np.array([_y(r["empirical_loss"]) for r in cells])
    ax.plot(x, ours, "-", color=c, lw=1.4)
    low = np.array([_clipped(r["empirical_loss"]) for r in cells], dtype=bool)
    ax.plot(x[~low], ours[~low], "o", color=c, ms=3)
    ax.plot(x[low], ours[low], "v", color=c, ms=6)
    _draw_published(ax, x, cells, c)


def _draw_published(ax: Any, x: np.ndarray, cells: Sequence[Mapping[str, Any]], c: Any) -> None:
    paper = [r["published_loss"] for r in cells]
    shown = np.array([p is not None and not _clipped(p) for p in paper], dtype=bool)
    ax.plot(x[shown], [_y(p) for p, s in zip(paper, shown, strict=True) if s], "x",
            color=c, ms=6, mew=1.4)  # fmt: skip
    zero = np.array([_clipped(p) for p in paper], dtype=bool)
    ax.plot(x[zero], [_FLOOR_Y] * int(zero.sum()), "v", color=c, mfc="white", ms=6)


def _panel(ax: Any, rows: list, mech: str, colors: dict, dims: list[int], title: str) -> None:
    """One mechanism: each ε's series, or one annotation where our loss is ∞ everywhere."""
    epsilons = list(colors)
    mine = [r for r in rows if r["mechanism"] == mech]
    infinite = _all_infinite(mine)
    for i, eps in enumerate(epsilons):
        cells = sorted((r for r in mine if r["epsilon"] == eps), key=lambda r: r["dim"])
        if infinite:  # only the published values, on the ∞ line or below it
            _draw_published(ax, np.array([r["dim"] for r in cells], float), cells, colors[eps])
        else:
            _draw_series(ax, cells, colors[eps], 2.0 ** ((i - (len(epsilons) - 1) / 2) * 0.07))
        if mech not in ("identity", "random-bits"):
            ax.axhline(eps, color=colors[eps], ls=":", lw=0.8)
    if infinite:
        ax.text(0.5, 0.5, "ours: ∞ at every n and ε\n(the exact attack loss is ∞ too)",
                transform=ax.transAxes, ha="center", va="center", fontsize=9.5,
                bbox={"boxstyle": "round", "fc": "white", "ec": "0.6"})  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.minorticks_off()  # fewer tick artists: drawing stays fast
    ax.set_xticks(dims, [str(d) for d in dims])
    ax.set_yticks([_FLOOR_Y, 1e-3, 1e-2, 0.1, 1, 10, 100, _INF_Y],
                  ["0", "1e-3", "0.01", "0.1", "1", "10", "100", "∞"])  # fmt: skip
    ax.set_ylim(_FLOOR_Y * 0.6, _INF_Y * 1.7)
    ax.axhline(_INF_Y, color="0.6", lw=0.6)
    ax.axhline(_FLOOR_Y, color="0.6", lw=0.6)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("dimension n", fontsize=9)
    ax.tick_params(labelsize=8.5)
    ax.grid(alpha=0.25, which="major")


def _legend(plt: Any, ax: Any, colors: dict) -> None:
    line = plt.Line2D
    handles = [line([], [], color=c, lw=2, label=f"ε = {e:g}") for e, c in colors.items()] + [
        line([], [], color="k", marker="o", ms=3, lw=1.4, label="ours (dpaudit), MLE"),
        line([], [], color="k", marker="x", ls="", ms=6, mew=1.4, label="published (ACL 2022)"),
        line([], [], color="k", ls="--", lw=1.0, label="exact loss of the attack (∞ runs)"),
        line([], [], color="k", lw=2.2, alpha=0.35, label="95% interval (ε_lcb to upper bound)"),
        line([], [], color="k", ls=":", lw=0.8, label="claimed ε"),
        line([], [], color="k", marker="v", ls="", ms=6, label="ours = 0 (drawn on the 0 line)"),
        line([], [], color="k", marker="v", mfc="white", ls="", ms=6, label="published = 0"),
    ]
    ax.axis("off")
    ax.legend(handles=handles, loc="center", fontsize=8.5, frameon=False, ncol=1)


def plot(result: FigureResult, path: Path, order: Sequence[str], labels: Mapping[str, str]) -> None:
    """One panel per mechanism of ``order`` (titled by ``labels``): loss vs n per ε."""
    plt = common.require_matplotlib()
    rows = list(result.rows)
    epsilons = sorted({r["epsilon"] for r in rows})
    cmap = plt.get_cmap("viridis")
    colors = {e: cmap(0.92 * i / max(1, len(epsilons) - 1)) for i, e in enumerate(epsilons)}
    mechanisms = [m for m in order if any(r["mechanism"] == m for r in rows)]
    ncols = 3
    nrows = (len(mechanisms) + 1 + ncols - 1) // ncols  # one cell left for the legend
    fig, grid = plt.subplots(nrows, ncols, figsize=(10.0, 3.35 * nrows), sharey=True)
    cells_ax = list(np.atleast_1d(grid).ravel())
    dims = sorted({r["dim"] for r in rows})
    for ax, mech in zip(cells_ax, mechanisms, strict=False):
        _panel(ax, rows, mech, colors, dims, labels.get(mech, mech))
    for ax in cells_ax[::ncols]:
        ax.set_ylabel("empirical privacy loss", fontsize=9)
    _legend(plt, cells_ax[len(mechanisms)], colors)
    for ax in cells_ax[len(mechanisms) + 1 :]:
        ax.axis("off")
    fig.suptitle(
        f"ACL 2022 sanity check: {result.sample_counts['runs_per_dataset_per_cell']:,} runs per "
        "input and cell (published: 10M, 1M for n > 16); top line = ∞, bottom line = 0",
        fontsize=10,
    )
    fig.subplots_adjust(left=0.08, right=0.99, top=0.9, bottom=0.09, wspace=0.08, hspace=0.42)
    common.save_figure(fig, path)


def scope(result: FigureResult) -> str:
    """What this scale audited (every cell of the figure) and how its runs differ from paper."""
    p, n = result.parameters, result.sample_counts
    return (
        f"**Audited: every panel and cell of the figure** — {', '.join(p.get('mechanisms', []))} "
        f"at ε ∈ {{{', '.join(f'{e:g}' for e in p.get('epsilons', []))}}} × "
        f"n ∈ {{{', '.join(str(d) for d in p.get('dims', []))}}} ({n.get('cells')} cells), "
        f"{n.get('runs_per_dataset_per_cell', 0):,} runs per input and cell. Nothing skipped"
        + (
            "."
            if result.scale == "paper"
            else "; the paper's 10M runs per cell run only with `--scale paper`, so the "
            "intervals here are wider."
        )
    )
