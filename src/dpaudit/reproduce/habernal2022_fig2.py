"""Habernal (ACL 2022), Fig. 2: empirical privacy loss of the reconstruction sanity check.

For every mechanism × ε × n of the published grid, the sanity check
(:func:`dpaudit.reproduce.acl_grid.run_acl2022_grid`) gives n zeros and n ones
to the mechanism ``runs`` times each, rounds every coordinate at 0.5, takes a
majority vote and turns the 2×2 table into the paper's MLE loss
``max_g |ln(f0g/f1g)|`` and a one-sided Clopper–Pearson ε lower bound.

Beside the sampled numbers this module computes, for additive mechanisms, the
**exact loss of the attack** — the value the MLE converges to with infinitely
many runs: the per-coordinate probability of rounding to 1 is exact
(:func:`dpaudit.audit.decision_set.attack_decision_set`), and the majority vote
of n independent coordinates is binomial (ties vote 0, numpy's
round-half-to-even as in the reference).  It shows which "infinite" cells are
finite losses too large for the sample size.

Confidence: each cell's ε lower bound is Bonferroni-corrected over all cells
of the grid (``familywise=True``), so every verdict of the figure holds
simultaneously with probability ≥ 95%.  The drawn band's upper edge bounds
the attack's exact loss from above at the same per-cell level (Clopper–Pearson
on the four proportions, Bonferroni over their eight one-sided bounds).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special, stats

from dpaudit.audit.decision_set import attack_decision_set
from dpaudit.audit.sanity_check import sanity_epsilon_lower_bound
from dpaudit.audit.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.engine.executor import run_units
from dpaudit.mechanisms import make_mechanism
from dpaudit.reproduce import common
from dpaudit.reproduce.acl_grid import ACL2022_DIMS, ACL2022_EPSILONS, run_acl2022_grid
from dpaudit.reproduce.common import AuditRecord, FigureResult, FigureRun, Finding
from dpaudit.reproduce.reference_data import (
    ACL2022_DEFECT_ABOVE_N,
    acl2022_published,
    acl2022_published_runs,
)
from dpaudit.reproduce.registry import FigureSpec
from dpaudit.verdicts import verdict_text

NAME = "habernal2022-fig2"
TITLE = "Empirical privacy loss of the ACL 2022 sanity check vs dimension"
PAPER = (
    "Habernal, 'How reparametrization trick broke differentially-private text "
    "representation learning', ACL 2022, §4–5, Fig. 2"
)
CONFIDENCE = 0.95
#: Agreement with a published value: |ours − paper| within this many combined
#: standard errors.  At 4 SE a two-sided normal tail is 6.3e-5 per cell, so
#: over the ≤ 63 compared cells a false disagreement has probability < 0.5%.
AGREEMENT_SE = 4.0

#: Panel titles, in the paper's order (baselines first).
LABELS = {
    "identity": "copy input (no privacy)",
    "random-bits": "random bits (max. privacy)",
    "laplace": "vanilla Laplace",
    "adept-acl22": "ADePT (wrong sensitivity)",
    "dptext": "DPText (broken sampler)",
}
ORDER = ("identity", "random-bits", "laplace", "adept-acl22", "dptext")

#: (runs per dataset and cell, ε values, dims) per scale.  quick uses 1M runs:
#: what the published n > 16 cells actually rest on.
_SIZES: dict[str, tuple[int, tuple[float, ...], tuple[int, ...]]] = {
    "tiny": (20_000, (0.5, 5.0), (1, 32)),
    "quick": (1_000_000, ACL2022_EPSILONS, ACL2022_DIMS),
    "paper": (10_000_000, ACL2022_EPSILONS, ACL2022_DIMS),
}


# ------------------------------------------------------------------ statistics
def exact_attack_loss(mechanism: str, epsilon: float, dim: int) -> float | None:
    """The MLE loss the attack converges to with infinitely many runs, or None if unknown.

    Additive mechanisms: exact per-coordinate rounding probabilities q0, q1
    (on the sampler's 32-bit uniform grid), then the majority vote's
    probabilities ``P(Bin(n, q) > ⌊n/2⌋)`` (a tie votes 0).  A mechanism whose
    analytic ε is 0 (random bits) has loss 0 for every attack.
    """
    mech = make_mechanism(mechanism, epsilon=epsilon, dim=dim)
    truth = mech.truth()
    if truth is not None and truth.true_epsilon == 0.0:
        return 0.0
    if not mech.is_additive:
        return None
    d0, d1 = attack_decision_set(mech, 0.0), attack_decision_set(mech, 1.0)
    if d0 is None or d1 is None:
        return None
    log_votes = [_log_vote_probabilities(dim, d.probability) for d in (d0, d1)]
    loss = 0.0
    for g in (0, 1):
        a, b = log_votes[0][g], log_votes[1][g]
        if math.isinf(a) and math.isinf(b):
            continue  # a guess that never occurs carries no evidence (as in the MLE)
        if math.isinf(a) or math.isinf(b):
            return math.inf
        loss = max(loss, abs(a - b))
    return loss


def _exact_unit(cell: tuple[str, float, int]) -> float | None:
    """Work unit for the executor: the exact attack loss of one (mechanism, ε, n) cell."""
    return exact_attack_loss(*cell)


def _log_vote_probabilities(n: int, q: float) -> tuple[float, float]:
    """``(ln P(vote 0), ln P(vote 1))`` for ``n`` coordinates each 1 with probability ``q``."""
    if q <= 0.0:
        return 0.0, -math.inf
    if q >= 1.0:
        return -math.inf, 0.0
    k = np.arange(n + 1)
    logpmf = stats.binom.logpmf(k, n, q)
    half = n // 2  # counts > n/2 vote 1; a tie (n even, count = n/2) votes 0
    return float(special.logsumexp(logpmf[: half + 1])), float(
        special.logsumexp(logpmf[half + 1 :])
    )


def loss_upper_bound(counts: np.ndarray, runs: int, confidence: float) -> float:
    """Upper confidence bound on the attack's exact loss ``max_g |ln(p0g/p1g)|``.

    Each of the four proportions gets both one-sided Clopper–Pearson bounds at
    ``(1 − confidence)/8`` (Bonferroni), so all hold together with probability
    ≥ ``confidence`` and the max of the interval ends bounds the max loss.
    """
    alpha = (1.0 - confidence) / 8.0
    upper = 0.0
    for g in (0, 1):
        k0, k1 = int(counts[0][g]), int(counts[1][g])
        lo0, hi0 = clopper_pearson_lower(k0, runs, alpha), clopper_pearson_upper(k0, runs, alpha)
        lo1, hi1 = clopper_pearson_lower(k1, runs, alpha), clopper_pearson_upper(k1, runs, alpha)
        with np.errstate(divide="ignore"):
            upper = max(upper, float(np.log(hi0) - np.log(lo1)), float(np.log(hi1) - np.log(lo0)))
    return upper


def loss_standard_error(counts: np.ndarray, runs: int, other_runs: int) -> float | None:
    """Delta-method standard error of ``ours − published`` for the guess that gives our loss.

    ``Var ln(f0g/f1g) ≈ (1−p0)/(N p0) + (1−p1)/(N p1)``; the published value's
    variance is the same with its own number of runs.  None when a count is 0.
    """
    best_g, best = None, -1.0
    for g in (0, 1):
        k0, k1 = int(counts[0][g]), int(counts[1][g])
        if k0 == 0 or k1 == 0:
            continue
        loss = abs(math.log(k0 / k1))
        if loss > best:
            best_g, best = g, loss
    if best_g is None:
        return None
    p0, p1 = counts[0][best_g] / runs, counts[1][best_g] / runs
    shape = (1 - p0) / p0 + (1 - p1) / p1
    return math.sqrt(shape / runs + shape / other_runs)


# --------------------------------------------------------------------- compute
def compute(run: FigureRun) -> FigureResult:
    """Run the grid, attach exact losses, published values and the agreement check."""
    runs, epsilons, dims = _SIZES[run.scale]
    run.progress.start(3)
    with run.stage("sanity-check grid"):
        grid = run_acl2022_grid(
            runs,
            mechanisms=ORDER,
            epsilons=epsilons,
            dims=dims,
            seed=run.seed,
            confidence=CONFIDENCE,
            familywise=True,
            config=run.execution,
        )
    run.progress.advance()
    with run.stage("exact attack losses"):
        exact = run_units(
            _exact_unit,
            [(c.mechanism, c.epsilon, c.dim) for c in grid],
            run.execution,
            desc="exact attack losses",
        )
    published = acl2022_published()
    rows: list[dict[str, Any]] = []
    comparison: list[dict[str, Any]] = []
    with run.stage("comparison"):
        for cell, exact_loss in zip(grid, exact, strict=True):
            counts = np.array([[cell.f00, cell.f01], [cell.f10, cell.f11]])
            paper = published.get(cell.mechanism, {}).get(cell.epsilon, {}).get(cell.dim)
            paper_runs = acl2022_published_runs(cell.dim)
            row = {
                "mechanism": cell.mechanism,
                "epsilon": cell.epsilon,
                "dim": cell.dim,
                "runs": cell.runs,
                "f00": cell.f00,
                "f01": cell.f01,
                "f10": cell.f10,
                "f11": cell.f11,
                "empirical_loss": cell.empirical_loss,
                "epsilon_lower_bound": cell.epsilon_lower_bound,
                "loss_upper_bound": loss_upper_bound(counts, cell.runs, cell.confidence),
                "confidence": cell.confidence,
                "violation": cell.violation,
                "exact_attack_loss": exact_loss,
                "published_loss": paper,
                "published_runs": paper_runs,
                "path": cell.path,
            }
            rows.append(row)
            comparison.append(_compare(row, counts))
    run.progress.advance()
    audits = tuple(_audits(rows))
    run.progress.advance()
    return run.result(
        parameters={
            "mechanisms": list(ORDER),
            "epsilons": list(epsilons),
            "dims": list(dims),
            "neighbours": "n zeros vs n ones",
            "attack": "round each coordinate at 0.5, majority vote (tie → 0, round-half-even)",
            "confidence": CONFIDENCE,
            "confidence_correction": f"Bonferroni over all {len(grid)} cells (familywise)",
            "agreement_rule": f"|ours − published| ≤ {AGREEMENT_SE:g} combined standard errors",
        },
        sample_counts={
            "runs_per_dataset_per_cell": runs,
            "cells": len(grid),
            "mechanism_runs_total": 2 * runs * len(grid),
        },
        rows=tuple(rows),
        comparison=tuple(comparison),
        findings=tuple(_findings(rows, comparison)),
        audits=audits,
        notes=(
            "Published cells with n > 16 rest on 1,000,000 runs, not 10,000,000: the "
            "reference code assigned instead of adding the counts of its 10 chunks.",
            "Published 'infinite' ADePT cells are finite losses too large for the sample "
            "size; the exact attack loss column gives their value.",
        ),
    )


def _compare(row: dict[str, Any], counts: np.ndarray) -> dict[str, Any]:
    """Our loss beside the published one, with the agreement check where it applies."""
    ours, paper = row["empirical_loss"], row["published_loss"]
    n, paper_runs = row["dim"], row["published_runs"]
    out: dict[str, Any] = {
        "mechanism": row["mechanism"],
        "epsilon": row["epsilon"],
        "n": n,
        "paper": paper,
        "paper_runs": paper_runs,
        "ours": ours,
        "ours_runs": row["runs"],
        "exact": row["exact_attack_loss"],
        "z": None,
        "checked": False,
        "agrees": None,
    }
    if paper is None:
        out["note"] = "no published value"
        return out
    if math.isinf(paper) or math.isinf(ours):
        out["agrees"] = math.isinf(paper) == math.isinf(ours)
        out["note"] = "both infinite" if out["agrees"] else "infinite on one side only"
        return out
    se = loss_standard_error(counts, row["runs"], paper_runs)
    if se is None or se == 0.0:
        out["note"] = "no standard error"
        return out
    z = (ours - paper) / se
    out["z"] = z
    out["agrees"] = abs(z) <= AGREEMENT_SE
    out["checked"] = n <= ACL2022_DEFECT_ABOVE_N  # the acceptance check: 10M-run cells only
    out["note"] = (
        "finite, 10M runs: checked"
        if out["checked"]
        else "finite, published on 1M runs (reference defect): informational"
    )
    return out


def _cells(rows: list[dict[str, Any]], mechanism: str) -> list[dict[str, Any]]:
    return [r for r in rows if r["mechanism"] == mechanism]


def _findings(rows: list[dict[str, Any]], comparison: list[dict[str, Any]]) -> list[Finding]:
    adept = _cells(rows, "adept-acl22")
    adept_big = [r for r in adept if r["dim"] >= 8]
    grows = []
    for eps in sorted({r["epsilon"] for r in adept}):
        by_n = sorted((r["dim"], r["empirical_loss"]) for r in adept if r["epsilon"] == eps)
        grows.append(by_n[-1][1] > by_n[0][1] or math.isinf(by_n[0][1]))
    dptext, identity = _cells(rows, "dptext"), _cells(rows, "identity")
    correct = _cells(rows, "laplace") + _cells(rows, "random-bits")
    checked = [c for c in comparison if c["checked"]]
    agree = [c for c in checked if c["agrees"]]
    worst = max((abs(c["z"]) for c in checked), default=0.0)
    return [
        Finding(
            "ADePT violates its claim (ε lower bound > claimed ε) in every cell with n ≥ 8",
            bool(adept_big) and all(r["violation"] for r in adept_big),
            f"{sum(r['violation'] for r in adept)}/{len(adept)} cells flagged in all",
        ),
        Finding(
            "ADePT's empirical loss grows with the dimension (curse of dimensionality)",
            bool(grows) and all(grows),
            "loss at the largest n exceeds the loss at the smallest n for every ε",
        ),
        Finding(
            "DPText's empirical loss is infinite in every cell, and every cell is flagged",
            bool(dptext)
            and all(math.isinf(r["empirical_loss"]) and r["violation"] for r in dptext),
            f"{sum(math.isinf(r['empirical_loss']) for r in dptext)}/{len(dptext)} infinite",
        ),
        Finding(
            "copying the input has infinite loss in every cell",
            bool(identity) and all(math.isinf(r["empirical_loss"]) for r in identity),
        ),
        Finding(
            "correct mechanisms pass: vanilla Laplace and random bits are never flagged",
            bool(correct) and not any(r["violation"] for r in correct),
            f"{len(correct)} cells, largest ε_lcb/ε = "
            f"{max(r['epsilon_lower_bound'] / r['epsilon'] for r in correct):.3f}"
            if correct
            else "",
        ),
        Finding(
            "published values agree within sampling error (finite cells on 10M runs, n ≤ 16)",
            bool(checked) and len(agree) == len(checked),
            f"{len(agree)}/{len(checked)} cells within {AGREEMENT_SE:g} SE (largest |z| = "
            f"{worst:.2f})",
        ),
    ]


def _audits(rows: list[dict[str, Any]]) -> list[AuditRecord]:
    """One audit per mechanism: its most damning cell (largest ε lower bound / claimed ε)."""
    out = []
    for name in ORDER:
        cells = _cells(rows, name)
        if not cells:
            continue
        cell = max(cells, key=lambda r: (r["epsilon_lower_bound"] / r["epsilon"], r["dim"]))
        mech = make_mechanism(name, epsilon=cell["epsilon"], dim=cell["dim"])
        truth = mech.truth()
        counts = ((cell["f00"], cell["f01"]), (cell["f10"], cell["f11"]))
        bound, witness = sanity_epsilon_lower_bound(counts, cell["runs"], cell["confidence"])
        flagged = sum(r["violation"] for r in cells)
        # Each cell's bound holds at level 1 − α/cells, so all of them hold together at 1 − α.
        family = f"{CONFIDENCE:g} (family-wise over all {len(rows)} cells)"
        verdict = verdict_text(bound, cell["epsilon"], family) + (
            f"; flagged in {flagged}/{len(cells)} cells"
            if cell["violation"]
            else f"; none of {len(cells)} cells flagged, largest ε_lcb/ε = "
            f"{bound / cell['epsilon']:.3g}"
        )
        out.append(
            AuditRecord(
                mechanism=name,
                parameters=mech.params(),
                claim=mech.claim.describe(),
                claimed_epsilon=cell["epsilon"],
                true_epsilon=None if truth is None else truth.true_epsilon,
                truth_method=None if truth is None else truth.method,
                epsilon_lower_bound=bound,
                confidence=CONFIDENCE,
                method=(
                    f"ACL 2022 sanity check, {cell['runs']:,} runs per input; Clopper–Pearson, "
                    f"Bonferroni over 4 candidate events per cell and all {len(rows)} cells "
                    f"(per-cell level {cell['confidence']:.6g})"
                ),
                violation=bool(cell["violation"]),
                verdict=verdict,
                witness={
                    "x": f"{cell['dim']} zeros",
                    "x_prime": f"{cell['dim']} ones",
                    "attack": "round each coordinate at 0.5, majority vote (tie → 0)",
                    "counts f[true][guess]": [list(counts[0]), list(counts[1])],
                    "event": "none" if witness is None else witness.describe(),
                    "empirical_loss (MLE)": cell["empirical_loss"],
                },
            )
        )
    return out


# ------------------------------------------------------------------------ plot
_INF_Y = 60.0
_FLOOR_Y = 1e-4


def _y(v: float | None) -> float:
    if v is None:
        return math.nan
    if math.isinf(v):
        return _INF_Y
    return max(v, _FLOOR_Y)


def plot(result: FigureResult, path: Path) -> None:
    """One panel per mechanism: loss vs n per ε (ours: lines + band; published: ×)."""
    plt = common.require_matplotlib()
    rows = list(result.rows)
    epsilons = sorted({r["epsilon"] for r in rows})
    cmap = plt.get_cmap("viridis")
    colors = {e: cmap(i / max(1, len(epsilons) - 1)) for i, e in enumerate(epsilons)}
    mechanisms = [m for m in ORDER if any(r["mechanism"] == m for r in rows)]
    fig, axes = plt.subplots(1, len(mechanisms), figsize=(3.3 * len(mechanisms), 4.3), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, mech in zip(axes, mechanisms, strict=True):
        for eps in epsilons:
            cells = sorted(
                (r for r in rows if r["mechanism"] == mech and r["epsilon"] == eps),
                key=lambda r: r["dim"],
            )
            x = [r["dim"] for r in cells]
            c = colors[eps]
            ax.fill_between(
                x,
                [_y(r["epsilon_lower_bound"]) for r in cells],
                [_y(r["loss_upper_bound"]) for r in cells],
                color=c,
                alpha=0.15,
                lw=0,
            )
            ax.plot(x, [_y(r["empirical_loss"]) for r in cells], "-o", color=c, ms=3, lw=1.5)
            ax.plot(x, [_y(r["published_loss"]) for r in cells], "x", color=c, ms=7, mew=1.5)
            if mech not in ("identity", "random-bits"):
                ax.axhline(eps, color=c, ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.minorticks_off()  # fewer tick artists: drawing stays fast
        dims = sorted({r["dim"] for r in rows})
        ax.set_xticks(dims, [str(d) for d in dims])
        ax.set_yticks(
            [1e-4, 1e-3, 1e-2, 0.1, 1, 10, _INF_Y], ["1e-4", "1e-3", "0.01", "0.1", "1", "10", "∞"]
        )
        ax.set_ylim(_FLOOR_Y * 0.7, _INF_Y * 1.6)
        ax.axhline(_INF_Y, color="0.6", lw=0.6)
        ax.set_title(LABELS.get(mech, mech), fontsize=10)
        ax.set_xlabel("dimension n")
        ax.grid(alpha=0.25, which="major")
    axes[0].set_ylabel("empirical privacy loss (log scale; top line = ∞)")
    handles = [plt.Line2D([], [], color=colors[e], lw=2, label=f"ε = {e:g}") for e in epsilons] + [
        plt.Line2D([], [], color="k", marker="o", ms=3, lw=1.5, label="ours (dpaudit)"),
        plt.Line2D([], [], color="k", marker="x", ls="", ms=7, label="published (ACL 2022)"),
        plt.Line2D([], [], color="k", ls=":", lw=0.8, label="claimed ε"),
        plt.Rectangle((0, 0), 1, 1, color="k", alpha=0.15, label="95% confidence band"),
    ]
    fig.legend(handles=handles, loc="lower center", ncol=6, fontsize=8.5, frameon=False)
    fig.suptitle(
        f"ACL 2022 sanity check: {result.sample_counts['runs_per_dataset_per_cell']:,} runs per "
        "input and cell (published: 10M, 1M for n > 16)",
        fontsize=11,
    )
    fig.subplots_adjust(left=0.06, right=0.99, top=0.86, bottom=0.25, wspace=0.08)
    common.save_figure(fig, path)


# ---------------------------------------------------------------------- README
def readme(result: FigureResult) -> str:
    """What was reproduced, every published value beside ours, the agreement check."""
    rows = list(result.rows)
    dims = sorted({r["dim"] for r in rows})
    sections = [common.findings_section(result), _agreement_section(result)]
    for mech in ORDER:
        cells = [r for r in rows if r["mechanism"] == mech]
        if not cells:
            continue
        table = []
        for eps in sorted({r["epsilon"] for r in cells}):
            line: list[Any] = [f"{eps:g}"]
            for n in dims:
                r = next((c for c in cells if c["epsilon"] == eps and c["dim"] == n), None)
                line.append("—" if r is None else _cell_text(r))
            table.append(line)
        sections.append(
            f"### {LABELS[mech]} (`{mech}`)\n\nours / published / exact attack loss "
            "(∞ runs); **bold** = flagged (ε lower bound > claimed ε)\n\n"
            + common.markdown_table(["ε \\ n", *[str(n) for n in dims]], table)
        )
    return common.readme_page(
        result,
        "Two neighbouring inputs — n zeros and n ones — each go through the mechanism "
        f"{result.sample_counts['runs_per_dataset_per_cell']:,} times. The attacker rounds "
        "each output coordinate at 0.5 and takes a majority vote; the 2×2 table of true vs "
        "guessed input gives the paper's empirical loss max_g |ln(f0g/f1g)| (MLE). dpaudit "
        "adds a one-sided Clopper–Pearson ε lower bound per cell (Bonferroni-corrected over "
        "every cell, so all verdicts hold together at 95%) and the exact loss the attack "
        "converges to with infinitely many runs.",
        sections,
        "- **Overwritten counts for n > 16.** The reference code runs n > 16 in 10 chunks "
        "of 1,000,000 runs but *assigns* each chunk's counts instead of adding them, so "
        "the published cells for n ∈ {32, 64, 128} rest on 1M runs, not the stated 10M. "
        "dpaudit accumulates every chunk. Those cells are compared with the published "
        "value's own (1M-run) sampling error, for information only.\n"
        "- **Infinite cells that are finite with more runs.** A loss is reported as "
        "infinite when one count of the table is zero. For ADePT at large n·ε the true "
        "loss of the attack is finite but so large that its rare event never occurs in "
        "10M runs (see the exact-loss column: it often needs far more than 10^10 runs); "
        "an infinite cell here and a finite one in the paper (or the reverse) near that "
        "edge is sampling, not disagreement. DPText's and copy-input's losses are "
        "infinite for every number of runs: their rare event has probability exactly 0.\n"
        "- **Our scale.** At `quick` each cell uses 1M runs; at `paper` 10M, as published. "
        "Seeds differ from the reference (legacy numpy seed 1234), so individual values "
        "differ within sampling error.\n"
        "- **Verdicts are one-sided.** A cell that is not flagged does not show that the "
        "mechanism is private; it shows this attack found no violation.",
    )


def _cell_text(r: dict[str, Any]) -> str:
    text = (
        f"{common.fmt_number(r['empirical_loss'], 3)} / "
        f"{common.fmt_number(r['published_loss'], 3)} / "
        f"{common.fmt_number(r['exact_attack_loss'], 3)}"
    )
    return f"**{text}**" if r["violation"] else text


def _agreement_section(result: FigureResult) -> str:
    checked = [c for c in result.comparison if c["checked"]]
    info = [c for c in result.comparison if c["z"] is not None and not c["checked"]]
    both_inf = [c for c in result.comparison if c.get("note") == "both infinite"]
    one_inf = [c for c in result.comparison if c.get("note") == "infinite on one side only"]
    bad = [c for c in checked if not c["agrees"]]
    lines = [
        "## Agreement with the published values",
        "",
        f"Rule: |ours − published| ≤ {AGREEMENT_SE:g} combined standard errors (delta "
        "method on the counts, with each side's own number of runs). Checked on every cell "
        "where the published value is finite and rests on 10M runs (n ≤ 16).",
        "",
        f"- checked cells: {len(checked)}; within {AGREEMENT_SE:g} SE: {len(checked) - len(bad)}",
        f"- n > 16 (published on 1M runs, informational): {len(info)} cells, "
        f"{sum(bool(c['agrees']) for c in info)} within {AGREEMENT_SE:g} SE",
        f"- infinite on both sides: {len(both_inf)} cells; infinite on one side only: "
        f"{len(one_inf)} cells (see below)",
    ]
    if bad:
        lines += ["", "Cells outside the rule:", ""]
        lines.append(
            common.markdown_table(
                ["mechanism", "ε", "n", "ours", "published", "z"],
                [
                    [c["mechanism"], c["epsilon"], c["n"], c["ours"], c["paper"], c["z"]]
                    for c in bad
                ],
            )
        )
    if one_inf:
        lines += ["", "Infinite on one side only (exact attack loss shows the true value):", ""]
        lines.append(
            common.markdown_table(
                ["mechanism", "ε", "n", "ours", "published", "published runs", "exact"],
                [
                    [
                        c["mechanism"],
                        c["epsilon"],
                        c["n"],
                        c["ours"],
                        c["paper"],
                        f"{c['paper_runs']:,}",
                        c["exact"],
                    ]
                    for c in one_inf
                ],
            )
        )
    return "\n".join(lines)


FIGURE = FigureSpec(
    NAME, TITLE, PAPER, compute, plot, readme, {"tiny": 4, "quick": 90, "paper": 600}
)
