"""Whole claims: the certified trade-off curve of a correct and a broken Gaussian mechanism.

Both mechanisms add Gaussian noise at the analytic calibration for
(ε, δ) = (2, 10⁻⁵) (Balle & Wang, ICML 2018, Alg. 1), and both claim the μ-GDP
curve of that noise, ``μ = Δ/σ`` (Dong, Roth & Su, JRSS-B 2022, Thm. 2.7).
The correct one calibrates σ to the true sensitivity of its inputs ``[0, 1]``
(Δ = 1).  The broken one calibrates σ to Δ = 1/2 — half the distance of two
of its inputs, the mistake of taking the sensitivity of one neighbouring
notion for another (Habernal, EMNLP 2021, found the same kind of slip in
ADePT) — so its true μ is twice the claimed one.

For each, on the input pair (0, 1) and the mechanism's exact likelihood-ratio
score:

* the **trade-off band** (:mod:`dpaudit.auditors.profile.tradeoff`): the
  type-I/type-II errors of every threshold test on fresh samples, with a
  Dvoretzky–Kiefer–Wolfowitz band valid for all thresholds and both
  directions at once; its upper-right edge is the certified curve, and the
  claim is refuted where that edge drops below the claimed ``T_μ``;
* the **profile audit** (:func:`dpaudit.auditors.profile.audit_profile`) on
  other fresh samples: certified ``δ_lcb(ε)`` on a grid and a certified lower
  bound on μ, judged against the claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.analysis.gaussian import gaussian_epsilon_for_delta
from dpaudit.analysis.privacy_conversions import gaussian_tradeoff
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.auditors.profile.tradeoff import tradeoff_band
from dpaudit.claims.parse import parse_claim
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.reproduce import common
from dpaudit.reproduce.common import AuditRecord, FigureResult, FigureRun, Finding
from dpaudit.reproduce.registry import FigureSpec
from dpaudit.verdicts import Verdict

NAME = "whole-claims"
TITLE = "Whole claims: certified trade-off curves of a correct and a broken Gaussian mechanism"
PAPER = (
    "Dong, Roth & Su, JRSS-B 2022 (f-DP, μ-GDP); Nasr et al., USENIX Security 2023 (auditing "
    "GDP through the trade-off curve); Balle & Wang, ICML 2018 (analytic Gaussian)"
)
EPSILON, DELTA = 2.0, 1e-5
CLAIM = f"gaussian-analytic:{EPSILON:g},{DELTA:g}"
CONFIDENCE = 0.95
#: Per scale: (band samples per input, profile selection samples, profile final samples).
SIZES: dict[str, tuple[int, int, int]] = {
    "tiny": (20_000, 5_000, 50_000),
    "quick": (1_000_000, 100_000, 1_000_000),
    "paper": (10_000_000, 1_000_000, 10_000_000),
}
#: (key, label, L2 sensitivity σ is calibrated to) — the pair (0, 1) is 1 apart.
CASES = (
    ("correct", "σ calibrated to the true Δ = 1", 1.0),
    ("broken", "σ calibrated to Δ = 1/2 (true Δ = 1)", 0.5),
)


def compute(run: FigureRun) -> FigureResult:
    """Band and profile audit for both mechanisms."""
    band_n, selection, final = SIZES[run.scale]
    claim = parse_claim(CLAIM).claim
    run.progress.start(len(CASES))
    rows, curves, audits = [], {}, []
    for key, label, sensitivity in CASES:
        mech = GaussianMechanism(epsilon=EPSILON, delta=DELTA, sensitivity=sensitivity)
        score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
        with run.stage(f"band {key}"):
            band = tradeoff_band(
                mech, (0.0,), (1.0,), score, band_n,
                confidence=CONFIDENCE, seed=run.seed, execution=run.execution,
            )  # fmt: skip
        cfg = ProfileAuditConfig(
            selection_samples=selection,
            final_samples=final,
            confidence=CONFIDENCE,
            seed=run.seed,
            execution=run.execution,
        )
        with run.stage(f"profile {key}"):
            audit = audit_profile(mech, 0.0, 1.0, score, claim, cfg)
        rows.append(_row(key, label, mech, claim.mu, band, audit))
        audits.append(_record(key, mech, audit))
        a, b = band.certified()
        lo_a, lo_b = band.lower_edge()
        curves[key] = {
            "type_one": list(band.type_one),
            "type_two": list(band.type_two),
            "certified": [a.tolist(), b.tolist()],
            "lower": [lo_a.tolist(), lo_b.tolist()],
        }
        run.progress.advance()
    return common.add_words(
        run.result(
            parameters={"claim": CLAIM, "claimed_mu": claim.mu, "pair": [0.0, 1.0],
                        "confidence": CONFIDENCE, "score": "exact log-likelihood ratio"},
            sample_counts={"band_samples": band_n, "selection_samples": selection,
                           "final_samples": final},
            rows=tuple(rows),
            findings=tuple(_findings(rows)),
            audits=tuple(audits),
            extra={"curves": curves},
        ),
        _shows, _method, _differences, _tables,
    )  # fmt: skip


def _row(key: str, label: str, mech: Any, mu: float, band: Any, result: Any) -> dict[str, Any]:
    audit = result.detail  # the profile audit's statements (ProfileDetail)
    worst = next(p for p in audit.profile if p.epsilon == audit.worst_epsilon)
    return {
        "mechanism": key,
        "label": label,
        "sigma": mech.sigma,
        "claimed_mu": mu,
        "true_mu": 1.0 / mech.sigma,
        "band_width": band.width,
        "claim_gap": band.claim_gap(lambda a: gaussian_tradeoff(a, mu)),
        "mu_lower_bound": audit.mu_lower_bound,
        "mu_estimate": audit.mu_estimate,
        "profile_verdict": result.verdict.value,
        "worst_epsilon": audit.worst_epsilon,
        "delta_lower_bound_at_worst": worst.delta_lower_bound,
        "claimed_delta_at_worst": worst.claimed_delta,
        "violation_epsilons": sum(p.verdict is Verdict.VIOLATION for p in audit.profile),
        "grid_points": len(audit.profile),
    }


def _record(key: str, mech: GaussianMechanism, result: Any) -> AuditRecord:
    """The profile audit as the report's claims table shows it (the band is the figure's)."""
    return AuditRecord(
        mechanism=f"Gaussian, {key} σ",  # the label is in its sensitivity parameter
        parameters=mech.params(),
        true_epsilon=gaussian_epsilon_for_delta(DELTA, mech.sigma, 1.0),
        truth_method=(
            f"exact ε at δ = {DELTA:g} of Gaussian noise σ = {mech.sigma:.4g} on inputs 1 apart "
            f"(Balle & Wang 2018, Thm. 8); true μ = 1/σ = {1.0 / mech.sigma:.4g}"
        ),
        method="whole-claim (profile) audit on the pair (0, 1), exact likelihood-ratio score",
        audit=result,  # the row states the audit's own claim, bound, verdict and witness
    )


def _findings(rows: list[dict[str, Any]]) -> list[Finding]:
    good, bad = rows
    return [
        Finding(
            "the correct Gaussian is not flagged (trade-off band and profile audit)",
            good["claim_gap"] <= 0 and good["profile_verdict"] != "violation",
            f"certified dip below T_μ {good['claim_gap']:.2g} (≤ 0: none); μ ≥ "
            f"{good['mu_lower_bound']:.3f}, claimed {good['claimed_mu']:.3f}",
        ),
        Finding(
            "σ calibrated to half the sensitivity is refuted: certified curve below T_μ, "
            "certified μ above the claim",
            bad["claim_gap"] > 0 and bad["mu_lower_bound"] > bad["claimed_mu"],
            f"dip {bad['claim_gap']:.2g}; μ ≥ {bad['mu_lower_bound']:.3f} > claimed "
            f"{bad['claimed_mu']:.3f} (true {bad['true_mu']:.3f}); δ(ε) refuted at "
            f"{bad['violation_epsilons']} of {bad['grid_points']} ε",
        ),
    ]


def _shows(result: FigureResult) -> str:
    mu = result.parameters["claimed_mu"]
    return (
        "Each panel is one Gaussian mechanism on the input pair (0, 1). Both claim the μ-GDP "
        f"curve of the analytic Gaussian at (ε, δ) = ({EPSILON:g}, {DELTA:g}), μ = {mu:.3f} "
        "(black dashed: the claimed trade-off curve T_μ — every test of x against x′ must have "
        "type-II error at least T_μ of its type-I error). The shaded band holds the type-I and "
        "type-II errors of every threshold test on the likelihood-ratio score at once, at "
        f"confidence {CONFIDENCE:g}; its upper-right edge (solid) is the certified curve: some "
        "test really does at least that well. Where the solid line lies *below* the dashed "
        "one (red), the claim is refuted. Left: σ calibrated to the true sensitivity — the "
        "certified curve stays above the claim. Right: σ calibrated to half the sensitivity — "
        "the certified curve falls well below it. The dotted line is the mechanism's exact curve. "
        "The lower row shows each curve minus the claimed T_μ, where the band's width "
        "becomes visible: the claim is refuted where the solid line is below 0."
    )


def _method(result: FigureResult) -> str:
    n = result.sample_counts
    return (
        f"Band: {n['band_samples']} fresh outputs per input, scored by the exact log-likelihood "
        "ratio; the Dvoretzky–Kiefer–Wolfowitz inequality with Massart's constant bounds both "
        f"empirical CDFs at error {(1 - CONFIDENCE) / 2:g} each. Profile audit: "
        f"{n['selection_samples']} selection and {n['final_samples']} final outputs per input, "
        "Clopper–Pearson bounds on the selected sets, Bonferroni over them; it certifies "
        "δ_lcb(ε) on a grid of ε and a lower bound on μ (Nasr et al. 2023, §3)."
    )


def _differences(result: FigureResult) -> str:
    return (
        "- Not a figure of one paper: it shows the audit of a whole claim (f-DP/GDP, Dong, Roth "
        "& Su 2022) that Nasr et al. (2023) use for DP-SGD, here on a mechanism whose exact "
        "curve is known, so the reader can check the band against the truth.\n"
        "- The broken mechanism is constructed (σ calibrated to half the sensitivity); the "
        "same slip in a published mechanism is what `habernal2021-fig1` re-derives."
    )


def _tables(result: FigureResult) -> tuple[common.ReportTable, ...]:
    rows = tuple(
        (
            r["label"], f"{r['claimed_mu']:.4f}", f"{r['true_mu']:.4f}",
            f"{r['mu_lower_bound']:.4f}", f"{r['claim_gap']:.3g}", f"{r['band_width']:.3g}",
            r["profile_verdict"],
        )
        for r in result.rows
    )  # fmt: skip
    return (
        common.ReportTable(
            "Claimed, exact and certified μ; certified dip of the trade-off curve below the claim",
            ("mechanism", "claimed μ", "exact μ", "certified μ ≥", "dip below T_μ (> 0 refutes)",
             "band half-width", "profile audit"),
            rows,
            f"Certified at confidence {CONFIDENCE:g}; exact μ = Δ/σ for the pair (0, 1).",
        ),
    )  # fmt: skip


def _panel(ax: Any, row: dict[str, Any], curve: dict[str, Any], mu: float) -> None:
    grid = np.linspace(0.0, 1.0, 401)
    claimed = gaussian_tradeoff(grid, mu)
    ax.plot([0, 1], [1, 0], color="0.75", lw=0.8)
    lo_a, lo_b = curve["lower"]
    cert_a, cert_b = (np.asarray(v) for v in curve["certified"])
    # The band: between the lower-left and the upper-right edge, drawn as one polygon.
    ax.fill(
        np.concatenate([lo_a, cert_a[::-1]]), np.concatenate([lo_b, cert_b[::-1]]),
        color="C0", alpha=0.25, lw=0, label=f"band at confidence {CONFIDENCE:g}",
    )  # fmt: skip
    ax.plot(cert_a, cert_b, color="C0", lw=1.6, label="certified curve (upper edge)")
    ax.plot(grid, gaussian_tradeoff(grid, row["true_mu"]), ":", color="0.2", lw=1,
            label=f"exact curve, μ = {row['true_mu']:.2f}")  # fmt: skip
    ax.plot(grid, claimed, "--", color="black", lw=1.4, label=f"claimed T_μ, μ = {mu:.2f}")
    below = cert_b < gaussian_tradeoff(cert_a, mu)
    if below.any():
        ax.fill_between(cert_a, cert_b, gaussian_tradeoff(cert_a, mu), where=below,
                        color="red", alpha=0.45, lw=0, label="claim refuted")  # fmt: skip
    verdict = "VIOLATION" if row["profile_verdict"] == "violation" else row["profile_verdict"]
    ax.set_title(
        f"{row['label']}\n{verdict}: certified μ ≥ {row['mu_lower_bound']:.3f}", fontsize=9
    )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("type-I error α (decide x on an output of x′)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=7, frameon=True)


def _gap_panel(ax: Any, row: dict[str, Any], curve: dict[str, Any], mu: float) -> None:
    """The same curves minus the claimed T_μ: the band becomes visible; below 0 refutes."""
    lo_a, lo_b = (np.asarray(v) for v in curve["lower"])
    cert_a, cert_b = (np.asarray(v) for v in curve["certified"])
    lo_gap = lo_b - gaussian_tradeoff(lo_a, mu)
    cert_gap = cert_b - gaussian_tradeoff(cert_a, mu)
    ax.fill(
        np.concatenate([lo_a, cert_a[::-1]]), np.concatenate([lo_gap, cert_gap[::-1]]),
        color="C0", alpha=0.25, lw=0,
    )  # fmt: skip
    ax.plot(cert_a, cert_gap, color="C0", lw=1.6)
    grid = np.linspace(0.0, 1.0, 401)
    exact = gaussian_tradeoff(grid, row["true_mu"]) - gaussian_tradeoff(grid, mu)
    ax.plot(grid, exact, ":", color="0.2", lw=1)
    ax.axhline(0.0, color="black", ls="--", lw=1.4)
    below = cert_gap < 0
    if below.any():
        ax.fill_between(cert_a, cert_gap, 0.0, where=below, color="red", alpha=0.45, lw=0)
    # Near α = 0 and 1 the claimed curve is steep and the band's gap explodes: scale the axis
    # to the middle, where the curves are compared (points beyond are clipped, not dropped).
    middle = (cert_a > 0.05) & (cert_a < 0.95)
    values = np.concatenate([cert_gap[middle], lo_gap[(lo_a > 0.05) & (lo_a < 0.95)], [0.0]])
    span = max(float(np.abs(values).max()), 1e-3)
    ax.set_ylim(min(values.min(), -0.25 * span) * 1.15, max(values.max(), 0.25 * span) * 1.15)
    ax.set_xlim(0, 1)
    ax.set_xlabel("type-I error α")
    ax.grid(alpha=0.3)
    ax.set_title("minus the claimed T_μ: refuted where the solid line is below 0", fontsize=9)


def plot(result: FigureResult, path: Path) -> None:
    """Per mechanism: band, certified, exact and claimed curves; below, each minus the claim."""
    plt = common.require_matplotlib()
    fig, axes = plt.subplots(2, 2, figsize=(10.0, 8.6), gridspec_kw={"height_ratios": (1.45, 1.0)})
    mu = result.parameters["claimed_mu"]
    for col, row in enumerate(result.rows):
        curve = result.extra["curves"][row["mechanism"]]
        _panel(axes[0, col], row, curve, mu)
        _gap_panel(axes[1, col], row, curve, mu)
    axes[0, 0].set_ylabel("type-II error β (decide x′ on an output of x)")
    axes[1, 0].set_ylabel("β − T_μ(α)")
    fig.tight_layout()
    common.save_figure(fig, path)


def readme(result: FigureResult) -> str:
    """What was audited and what it showed."""
    return common.readme_page(
        result, sections=[common.tables_section(result), common.findings_section(result)]
    )


FIGURE = FigureSpec(NAME, TITLE, PAPER, compute, plot, readme, {"tiny": 2, "quick": 2, "paper": 60})
