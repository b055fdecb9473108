"""Salem & Zanella-Béguelin (HoHo, 2021), Fig. 2: estimated ε of OME vs its claimed ε.

HoHo §4 runs DP-Sniper (Bichsel et al., S&P 2021) on OME for one scalar input
in [−10, 10] (r = 1, 11 output bits), ε ∈ {0.001, 1}, λ ∈ {1, 10, 100}, and
reports estimated ε of 4600× / 4.6× the claim for λ = 100 and 2900× / 2.8× for
λ = 10; λ = 1 satisfies the claim.  Both numbers for λ = 100 are DP-Sniper's
ceiling ln(1/c) ≈ 4.6 (c = 0.01), not OME's leakage.

For each configuration this module runs the black-box auditor
(:func:`dpaudit.audit.blackbox.audit`) twice — in DP-Sniper's mode (c = 0.01,
logistic regression, confidence 0.9 as DP-Sniper) and in dpaudit's mode (exact
likelihood-ratio attack, thresholds searched without a ceiling, confidence
0.95) — and sets both beside the exact worst-case ε of the analysis layer
(:func:`dpaudit.analysis.ome.ome_truth`) and HoHo's printed bound.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from dpaudit.analysis.ome import hoho_bound_epsilon
from dpaudit.audit.blackbox import (
    DPSNIPER_CONFIDENCE,
    DPSNIPER_FINAL_SAMPLES,
    DPSNIPER_SAMPLES,
    DPSNIPER_TARGET_MASS,
    AuditConfig,
    audit,
)
from dpaudit.audit.verdict import AuditResult
from dpaudit.mechanisms import make_mechanism
from dpaudit.reproduce import common
from dpaudit.reproduce.common import AuditRecord, FigureResult, FigureRun, Finding
from dpaudit.reproduce.registry import FigureSpec

NAME = "hoho-fig2"
TITLE = "OME on a scalar: estimated ε vs claimed ε (DP-Sniper mode and dpaudit mode)"
PAPER = "Salem & Zanella-Béguelin, 'Hop-on Hop-off: Attacking OME' (HoHo), 2021, §4, Fig. 2a–b"
EPSILONS = (0.001, 1.0)
LAMBDAS = (1.0, 10.0, 100.0)
DOMAIN = (-10.0, 10.0)
DPAUDIT_CONFIDENCE = 0.95
#: HoHo §4: estimated ε as a multiple of the claim (λ = 1: "satisfies the claim").
PAPER_FACTORS = {(0.001, 100.0): 4600.0, (1.0, 100.0): 4.6, (0.001, 10.0): 2900.0, (1.0, 10.0): 2.8}
MODES = ("dpsniper", "dpaudit")
MODE_LABELS = {
    "dpsniper": "DP-Sniper mode (c = 0.01, logistic regression)",
    "dpaudit": "dpaudit mode (exact likelihood ratio, no ceiling)",
}

#: Per scale and mode: (samples per estimate, final samples per input).
_SIZES: dict[str, dict[str, tuple[int, int]]] = {
    "tiny": {"dpsniper": (20_000, 50_000), "dpaudit": (20_000, 50_000)},
    "quick": {"dpsniper": (500_000, 2_000_000), "dpaudit": (500_000, 4_000_000)},
    "paper": {
        "dpsniper": (DPSNIPER_SAMPLES, DPSNIPER_FINAL_SAMPLES),
        "dpaudit": (DPSNIPER_SAMPLES, DPSNIPER_FINAL_SAMPLES),
    },
}


def _config(scale: str, mode: str, seed: int) -> AuditConfig:
    samples, final = _SIZES[scale][mode]
    if mode == "dpsniper":
        return AuditConfig(
            samples=samples,
            final_samples=final,
            confidence=DPSNIPER_CONFIDENCE,
            mode="dpsniper",
            classifier="logistic",
            target_mass=DPSNIPER_TARGET_MASS,
            seed=seed,
        )
    return AuditConfig(
        samples=samples,
        final_samples=final,
        confidence=DPAUDIT_CONFIDENCE,
        mode="dpaudit",
        classifier="auto",
        seed=seed,
    )


def compute(run: FigureRun) -> FigureResult:
    """Audit OME in both modes for every (ε, λ); rows hold bounds, estimates and exact ε."""
    configs = [(e, lam) for e in EPSILONS for lam in LAMBDAS]
    run.progress.start(len(configs) * len(MODES))
    rows: list[dict[str, Any]] = []
    audits: list[AuditRecord] = []
    for eps, lam in configs:
        mech = make_mechanism("ome", epsilon=eps, dim=1, domain=DOMAIN, **{"lambda": lam})
        with run.stage("exact ε (analysis)"):
            truth = mech.truth()
        for mode in MODES:
            with run.stage(f"audit {mode}"):
                result = audit(mech, _config(run.scale, mode, run.seed), run.execution)
            rows.append(_row(eps, lam, mode, result, truth.true_epsilon))
            audits.append(_audit_record(mech, mode, result, truth))
            run.progress.advance()
    sizes = _SIZES[run.scale]
    return run.result(
        parameters={
            "mechanism": "ome",
            "dim_r": 1,
            "output_bits": 11,
            "domain": list(DOMAIN),
            "epsilons": list(EPSILONS),
            "lambdas": list(LAMBDAS),
            "dpsniper": {
                "target_mass_c": DPSNIPER_TARGET_MASS,
                "classifier": "logistic regression",
                "confidence": DPSNIPER_CONFIDENCE,
            },
            "dpaudit": {"attack": "exact likelihood ratio", "confidence": DPAUDIT_CONFIDENCE},
        },
        sample_counts={
            f"{mode}_{kind}": n
            for mode in MODES
            for kind, n in zip(("samples", "final_samples"), sizes[mode], strict=True)
        },
        rows=tuple(rows),
        comparison=tuple(_comparison(rows)),
        findings=tuple(_findings(rows)),
        audits=tuple(audits),
        notes=(
            f"DP-Sniper's estimate cannot exceed about ln(1/c) = "
            f"{math.log(1 / DPSNIPER_TARGET_MASS):.2f} at c = {DPSNIPER_TARGET_MASS:g}: "
            "HoHo's '4600×' and '4.6×' for λ = 100 are this ceiling.",
        ),
    )


def _row(eps: float, lam: float, mode: str, result: AuditResult, true_eps: float) -> dict[str, Any]:
    w = result.witness
    return {
        "claimed_epsilon": eps,
        "lambda": lam,
        "mode": mode,
        "epsilon_lower_bound": result.epsilon_lower_bound,
        "epsilon_estimate": None if w is None else w.epsilon_estimate,
        "confidence": result.confidence,
        "violation": result.violation,
        "true_epsilon": true_eps,
        "hoho_printed_bound": hoho_bound_epsilon(eps, lam, 1),
        "paper_estimate": (
            None if (eps, lam) not in PAPER_FACTORS else PAPER_FACTORS[(eps, lam)] * eps
        ),
        "factor_over_claim": result.epsilon_lower_bound / eps,
        "x": None if w is None else w.x[0],
        "x_prime": None if w is None else w.x_prime[0],
        "p1_hits": None if w is None else w.p1.hits,
        "p2_hits": None if w is None else w.p2.hits,
        "final_samples": None if w is None else w.p1.samples,
        "seconds": result.timing.get("total"),
    }


def _audit_record(mech: Any, mode: str, result: AuditResult, truth: Any) -> AuditRecord:
    w = result.witness
    return AuditRecord(
        mechanism="ome",
        parameters=mech.params(),
        claim=mech.claim.describe(),
        claimed_epsilon=mech.epsilon,
        true_epsilon=truth.true_epsilon,
        truth_method=truth.method,
        epsilon_lower_bound=result.epsilon_lower_bound,
        confidence=result.confidence,
        method=f"black-box audit, {MODE_LABELS[mode]}",
        violation=result.violation,
        verdict=result.verdict,
        witness={} if w is None else w.summary(),
    )


def _find(rows: list[dict[str, Any]], eps: float, lam: float, mode: str) -> dict[str, Any]:
    for r in rows:
        if r["claimed_epsilon"] == eps and r["lambda"] == lam and r["mode"] == mode:
            return r
    raise KeyError((eps, lam, mode))


def _comparison(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for eps in EPSILONS:
        for lam in LAMBDAS:
            sniper, ours = _find(rows, eps, lam, "dpsniper"), _find(rows, eps, lam, "dpaudit")
            factor = PAPER_FACTORS.get((eps, lam))
            out.append(
                {
                    "claimed ε": eps,
                    "λ": lam,
                    "paper (DP-Sniper)": (
                        "≤ claim" if factor is None else f"{factor:g}× = {factor * eps:.3g}"
                    ),
                    "ours, DP-Sniper mode (ε_lcb)": sniper["epsilon_lower_bound"],
                    "ours, DP-Sniper mode (ε̂)": sniper["epsilon_estimate"],
                    "ours, dpaudit mode (ε_lcb)": ours["epsilon_lower_bound"],
                    "exact ε": ours["true_epsilon"],
                    "HoHo's printed bound": ours["hoho_printed_bound"],
                }
            )
    return out


def _findings(rows: list[dict[str, Any]]) -> list[Finding]:
    lam1 = [r for r in rows if r["lambda"] == 1.0]
    leaky = [r for r in rows if r["lambda"] >= 10.0]
    ceiling = math.log(1 / DPSNIPER_TARGET_MASS)
    sniper100 = [_find(rows, e, 100.0, "dpsniper") for e in EPSILONS]
    sniper10 = [_find(rows, e, 10.0, "dpsniper") for e in EPSILONS]
    ours100 = _find(rows, 1.0, 100.0, "dpaudit")
    sound = [r for r in rows if r["epsilon_lower_bound"] <= r["true_epsilon"] * (1 + 1e-9)]
    return [
        Finding(
            "λ = 1 satisfies the claim: no violation found in either mode",
            not any(r["violation"] for r in lam1),
            ", ".join(
                f"{r['mode']} ε={r['claimed_epsilon']:g}: {r['epsilon_lower_bound']:.3g}"
                for r in lam1
            ),
        ),
        Finding(
            "OME leaks for λ ≥ 10: violation at both ε in both modes",
            all(r["violation"] for r in leaky),
            f"{sum(r['violation'] for r in leaky)}/{len(leaky)} audits flagged",
        ),
        Finding(
            "DP-Sniper mode is stuck near its ceiling ln(1/c) ≈ 4.6 for λ = 100 (paper: 4.6)",
            all(ceiling - 0.5 <= r["epsilon_lower_bound"] <= ceiling + 0.05 for r in sniper100),
            ", ".join(f"{r['epsilon_lower_bound']:.3g}" for r in sniper100),
        ),
        Finding(
            "DP-Sniper mode lands near the paper's 2.8–2.9 for λ = 10",
            all(2.3 <= r["epsilon_lower_bound"] <= 3.3 for r in sniper10),
            ", ".join(f"{r['epsilon_lower_bound']:.3g}" for r in sniper10),
        ),
        Finding(
            "dpaudit mode breaks the ceiling: ε lower bound ≥ 8 for λ = 100, ε = 1",
            ours100["epsilon_lower_bound"] >= 8.0,
            f"{ours100['epsilon_lower_bound']:.3g} (exact ε {ours100['true_epsilon']:.3g})",
        ),
        Finding(
            "every empirical lower bound is at most the exact ε of the analysis layer",
            len(sound) == len(rows),
            f"{len(sound)}/{len(rows)}",
        ),
    ]


_FLOOR = 1e-5  # where a bound of exactly 0 is drawn (log axis)


def plot(result: FigureResult, path: Path) -> None:
    """Estimated ε vs claimed ε on log axes: both modes per λ, exact ε, the claim as a line."""
    plt = common.require_matplotlib()
    rows = list(result.rows)
    fig, ax = plt.subplots(figsize=(9.6, 5.0))
    colors = {1.0: "C2", 10.0: "C1", 100.0: "C3"}
    x = list(EPSILONS)
    zeros: list[tuple[float, str]] = []
    for lam in LAMBDAS:
        c = colors[lam]
        for mode, style, fill in (("dpsniper", "--s", "white"), ("dpaudit", "-o", c)):
            cells = [_find(rows, e, lam, mode) for e in EPSILONS]
            # A bound of 0 ("no violation evidence") has no place on a log axis: drawn apart.
            y = [
                r["epsilon_lower_bound"] if r["epsilon_lower_bound"] > 0 else math.nan
                for r in cells
            ]
            zeros += [(r["claimed_epsilon"], c) for r in cells if r["epsilon_lower_bound"] <= 0]
            label = f"λ = {lam:g}: {'DP-Sniper' if mode == 'dpsniper' else 'dpaudit'} mode"
            ax.plot(x, y, style, color=c, mfc=fill, label=label)
        ours = [_find(rows, e, lam, "dpaudit") for e in EPSILONS]
        ax.plot(x, [r["true_epsilon"] for r in ours], "*", color=c, ms=12, alpha=0.6)
        published = [(e, r["paper_estimate"]) for e, r in zip(x, ours, strict=True)]
        published = [(e, p) for e, p in published if p is not None]
        if published:
            ax.plot(*zip(*published, strict=True), "x", color=c, ms=10, mew=2)
    for eps, c in zeros:
        ax.plot([eps], [_FLOOR * 1.5], "v", color=c, ms=8)
    line = [1e-4, 3.0]
    ax.plot(line, line, ":", color="red", lw=2, label="claimed ε (y = x)")
    ax.axhline(
        math.log(1 / DPSNIPER_TARGET_MASS),
        color="0.5",
        lw=0.8,
        ls="-.",
        label="DP-Sniper ceiling ln(1/c) ≈ 4.6",
    )
    ax.plot([], [], "*", color="0.4", ms=12, label="exact ε (analysis)")
    ax.plot([], [], "x", color="0.4", ms=10, mew=2, label="published (HoHo, DP-Sniper)")
    ax.plot([], [], "v", color="0.4", ms=8, label="lower bound 0 (no violation found)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1e-4, 3.0)
    ax.set_ylim(_FLOOR, 200.0)
    ax.set_xlabel("theoretical (claimed) ε")
    ax.set_ylabel("estimated ε (lower confidence bound; log scale)")
    ax.grid(alpha=0.3, which="major")
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("OME on one scalar in [−10, 10] (r = 1, 11 bits)", fontsize=10)
    common.save_figure(fig, path)


def readme(result: FigureResult) -> str:
    """What was reproduced, the paper's numbers beside ours, and why they differ."""
    comp = [list(c.values()) for c in result.comparison]
    headers = list(result.comparison[0].keys()) if result.comparison else []
    ceiling = math.log(1 / DPSNIPER_TARGET_MASS)
    return common.readme_page(
        result,
        "OME encodes one value in [−10, 10] as 11 bits and flips them with probabilities "
        "set by ε, λ and the bit's parity. HoHo ran DP-Sniper on it and found estimated ε "
        "far above the claim for λ ≥ 10. We run the same experiment with dpaudit's "
        "black-box auditor twice per configuration: in DP-Sniper's mode (target mass "
        "c = 0.01, logistic regression, confidence 0.9) and in dpaudit's mode (exact "
        "likelihood-ratio attack, thresholds searched on separate samples, confidence "
        "0.95), and compare with the exact worst-case ε from the analysis layer.",
        [
            "## Paper beside ours\n\n" + common.markdown_table(headers, comp),
            common.findings_section(result),
        ],
        f"- **DP-Sniper's ceiling.** DP-Sniper thresholds its classifier so that "
        f"Pr[M(x') ∈ S] ≈ c; hence its estimate ln(p1/p2) ≤ ln(1/c) = {ceiling:.2f} "
        "(c = 0.01). The paper's '4600×' (ε = 0.001) and '4.6×' (ε = 1) for λ = 100 are "
        "both this ceiling, not OME's leakage; dpaudit's mode searches thresholds of "
        "the exact likelihood ratio without a fixed mass and reaches far higher bounds, "
        "limited only by the number of samples.\n"
        "- **Lower bounds, not estimates.** The HoHo paper plots DP-Sniper's ε; we plot "
        "lower confidence bounds (DP-Sniper's own ε_lcb in its mode) and list its point "
        "estimate ε̂ in the table.\n"
        "- **Exact ε.** The analysis layer computes OME's exact worst-case ε on the "
        "domain by searching all pairs of codes; HoHo's printed bound r·l·ln λ + ε/2 is "
        "shown beside it. Every empirical lower bound must stay below the exact ε.\n"
        "- **Sample sizes.** At `paper` scale both modes use DP-Sniper's defaults "
        f"(10.7M samples per estimate, 200M final); this run (`{result.scale}`) used "
        f"{common.fmt_number(result.sample_counts.get('dpsniper_samples'), 6)} / "
        f"{common.fmt_number(result.sample_counts.get('dpsniper_final_samples'), 6)} (DP-Sniper "
        f"mode) and {common.fmt_number(result.sample_counts.get('dpaudit_samples'), 6)} / "
        f"{common.fmt_number(result.sample_counts.get('dpaudit_final_samples'), 6)} (dpaudit "
        "mode) per input; fewer samples only widen the confidence intervals and lower "
        "the ceiling of zero-count bounds.",
    )


FIGURE = FigureSpec(
    NAME, TITLE, PAPER, compute, plot, readme, {"tiny": 10, "quick": 95, "paper": 1800}
)
