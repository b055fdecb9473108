"""False alarms of whole-claim audits of correct mechanisms, and the single-point audit beside them.

Usage (from the repository root)::

    .venv/bin/python benchmarks/profile_false_alarms.py [--seeds 200] [--selection 20000]
                                                        [--final 200000] [--json FILE]

For each seed ``0 .. seeds−1`` the profile auditor
(:func:`dpaudit.auditors.profile.audit_profile`, confidence 0.95, one worker,
exact likelihood-ratio score, pair (0, 1)) audits correct mechanisms against
their exact claims:

* the analytic Gaussian at (ε, δ) = (1, 10⁻⁵) claimed as its exact privacy
  profile δ(ε) (Balle & Wang 2018, Thm. 8), as μ-GDP with μ = 1/σ, and as
  ρ-zCDP with ρ = μ²/2 (Bun & Steinke 2016, Prop. 1.6) — each the tightest
  true claim of its kind;
* the Laplace mechanism at ε = 1 claimed as pure 1-DP.

A false alarm is a VIOLATION verdict; the rate must be ≤ α = 0.05.  The row
gives the count, the rate and its exact one-sided 95 % Clopper–Pearson upper
bound.

Beside it, on the **same samples** (same seed, so the same work-unit streams),
the profile auditor restricted to one point — ``epsilons=(1,)``, no Rényi
orders — which certifies only the set best at ε = 1 (and the μ set selection
always adds).  Its single-point statement is the ε lower bound at δ = 10⁻⁵,
``ε_lcb = max_S ln((p1_lower − δ)/p2_upper)`` over its certified sets, the
bound ``dpaudit audit`` reports at one (ε, δ).  Both audits are put in one unit:
a certified ``δ(ε_lcb) > δ`` rules out every μ-GDP claim with
``δ_μ(ε_lcb) ≤ δ``, so the single point implies ``μ ≥ μ(ε_lcb, δ)`` (the μ whose
GDP profile meets δ at ε_lcb); the whole-claim audit certifies ``μ_lcb``
directly.  Rows print median and 5th–95th percentiles over seeds (never the
best seed), as a fraction of the true μ.  For Laplace the unit is ε:
``max_S ln(p1_lower/p2_upper)`` over the certified sets of each audit.

Third column: the black-box audit dpaudit runs today at one (ε, δ)
(:func:`dpaudit.auditors.blackbox.auditor.audit`, claim (1, 10⁻⁵) for the
Gaussian and 1 for Laplace, the same pair, the likelihood-ratio attack, the
same ``selection``/``final`` sizes) — on its *own* samples, since its stages
draw differently; its ε_lcb is converted to μ the same way.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import numpy as np
from scipy import optimize

from dpaudit import progress
from dpaudit.analysis.privacy_conversions import gdp_profile
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
from dpaudit.auditors.core.statistics import clopper_pearson_upper
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.claims import GaussianDP, PrivacyProfile, PureDP, ZeroConcentratedDP
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms.gaussian import GaussianMechanism
from dpaudit.mechanisms.laplace import LaplaceMechanism

ALPHA = 0.05
DELTA = 1e-5
ONE = ExecutionConfig(workers=1)


def implied_mu(eps_lcb: float, delta: float) -> float:
    """The μ whose GDP profile equals ``delta`` at ``eps_lcb`` (0 when ``eps_lcb`` ≤ 0).

    ``δ_μ(ε)`` grows with μ (Dong, Roth & Su 2022, Cor. 2.13), so the root is unique.
    """
    if not eps_lcb > 0:
        return 0.0
    f = lambda mu: float(gdp_profile([eps_lcb], mu)[0]) - delta  # noqa: E731
    return float(optimize.brentq(f, 1e-6, 100.0, xtol=1e-10))


def epsilon_bound(result, delta: float) -> float:
    """``max_S ln((p1_lower − δ)/p2_upper)`` over the result's certified sets (−inf if none)."""
    best = -math.inf
    for s in result.detail.certified:
        if s.p1_lower > delta and s.p2_upper > 0:
            best = max(best, math.log((s.p1_lower - delta) / s.p2_upper))
    return best


def _config(args, seed: int, single: bool) -> ProfileAuditConfig:
    extra = {"epsilons": (1.0,), "orders": ()} if single else {}
    return ProfileAuditConfig(
        selection_samples=args.selection,
        final_samples=args.final,
        confidence=1 - ALPHA,
        seed=seed,
        execution=ONE,
        **extra,
    )


def blackbox(args, mech, seed: int) -> tuple[float, bool]:
    """ε_lcb and the violation flag of today's single-point black-box audit of ``mech``."""
    cfg = AuditConfig(
        samples=args.selection,
        final_samples=args.final,
        confidence=1 - ALPHA,
        classifier="likelihood-ratio",
        pairs=(InputPair([0.0], [1.0], "given"),),
        use_patterns=False,
        seed=seed,
    )
    r = audit(mech, cfg, ONE)
    return r.epsilon_lower_bound, r.violation


def gaussian_seed(args, seed: int) -> dict:
    """Three claims and the single point for one seed of the analytic Gaussian."""
    mech = GaussianMechanism(epsilon=1.0, delta=DELTA)
    mu = 1.0 / mech.sigma
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    claims = {
        "profile": PrivacyProfile(lambda e: mech.privacy_profile(e, 0.0, 1.0), "exact"),
        "gdp": GaussianDP(mu),
        "zcdp": ZeroConcentratedDP(mu * mu / 2),
    }
    out = {}
    for name, claim in claims.items():
        r = audit_profile(mech, 0.0, 1.0, score, claim, _config(args, seed, False))
        out[name] = r.violation
        if name == "gdp":  # the certified μ (the same sets serve every claim of one seed)
            out["whole_mu"] = r.detail.mu_lower_bound / mu
    point = audit_profile(mech, 0.0, 1.0, score, claims["gdp"], _config(args, seed, True))
    out["point_mu"] = implied_mu(epsilon_bound(point, DELTA), DELTA) / mu
    out["point_violation"] = point.violation
    eps, out["blackbox_violation"] = blackbox(args, mech, seed)
    out["blackbox_mu"] = implied_mu(eps, DELTA) / mu
    return out


def laplace_seed(args, seed: int) -> dict:
    """Pure 1-DP and the single point for one seed of Laplace ε = 1."""
    mech = LaplaceMechanism(epsilon=1.0)
    score = LikelihoodRatioScore(mech, (0.0,), (1.0,))
    r = audit_profile(mech, 0.0, 1.0, score, PureDP(1.0), _config(args, seed, False))
    point = audit_profile(mech, 0.0, 1.0, score, PureDP(1.0), _config(args, seed, True))
    eps, flagged = blackbox(args, mech, seed)
    return {
        "pure": r.violation,
        "whole_eps": max(epsilon_bound(r, 0.0), 0.0),
        "point_eps": max(epsilon_bound(point, 0.0), 0.0),
        "point_violation": point.violation,
        "blackbox_eps": max(eps, 0.0),
        "blackbox_violation": flagged,
    }


def _spread(values: list[float]) -> str:
    q = np.quantile(values, [0.05, 0.95])
    return f"{statistics.median(values):.4f} [{q[0]:.4f}, {q[1]:.4f}]"


def _alarm_row(name: str, flags: list[bool]) -> dict:
    k, n = sum(flags), len(flags)
    upper = float(clopper_pearson_upper(k, n, ALPHA))
    return {"claim": name, "violations": k, "audits": n, "rate": k / n, "rate_upper_95": upper}


def main() -> None:
    """Run every seed and print two Markdown tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--selection", type=int, default=20_000)
    ap.add_argument("--final", type=int, default=200_000)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args()
    progress.ENABLED = False
    t0 = time.perf_counter()
    gauss = [gaussian_seed(args, s) for s in range(args.seeds)]
    lap = [laplace_seed(args, s) for s in range(args.seeds)]
    wall = time.perf_counter() - t0
    alarms = [
        _alarm_row("Gaussian, exact (ε, δ) profile", [g["profile"] for g in gauss]),
        _alarm_row("Gaussian, μ-GDP (μ = 1/σ)", [g["gdp"] for g in gauss]),
        _alarm_row("Gaussian, ρ-zCDP (ρ = μ²/2)", [g["zcdp"] for g in gauss]),
        _alarm_row("Laplace, pure 1-DP", [g["pure"] for g in lap]),
        _alarm_row("single point, Gaussian μ-GDP", [g["point_violation"] for g in gauss]),
        _alarm_row("single point, Laplace 1-DP", [g["point_violation"] for g in lap]),
        _alarm_row("black-box audit, Gaussian (1, 1e-5)", [g["blackbox_violation"] for g in gauss]),
        _alarm_row("black-box audit, Laplace 1", [g["blackbox_violation"] for g in lap]),
    ]
    print(f"{args.seeds} seeds, selection {args.selection}, final {args.final} per input, "
          f"α = {ALPHA}, wall {wall:.0f} s\n")  # fmt: skip
    print("| correct mechanism, claim | violations / audits | rate | 95 % upper bound |")
    print("|---|---|---|---|")
    for a in alarms:
        print(f"| {a['claim']} | {a['violations']} / {a['audits']} | {a['rate']:.3f} | "
              f"{a['rate_upper_95']:.3f} |")  # fmt: skip
    side = {
        "gaussian_whole_mu": [g["whole_mu"] for g in gauss],
        "gaussian_point_mu": [g["point_mu"] for g in gauss],
        "laplace_whole_eps": [g["whole_eps"] for g in lap],
        "laplace_point_eps": [g["point_eps"] for g in lap],
        "gaussian_blackbox_mu": [g["blackbox_mu"] for g in gauss],
        "laplace_blackbox_eps": [g["blackbox_eps"] for g in lap],
    }
    print("\n| mechanism, unit | whole-claim audit | profile audit at ε = 1 only (same samples) "
          "| black-box audit at one (ε, δ) (own samples) |")  # fmt: skip
    print("|---|---|---|---|")
    print(f"| Gaussian, certified μ / true μ | {_spread(side['gaussian_whole_mu'])} | "
          f"{_spread(side['gaussian_point_mu'])} | "
          f"{_spread(side['gaussian_blackbox_mu'])} |")  # fmt: skip
    print(
        f"| Laplace, certified ε (true 1) | {_spread(side['laplace_whole_eps'])} | "
        f"{_spread(side['laplace_point_eps'])} | {_spread(side['laplace_blackbox_eps'])} |"
    )
    print("(median [5th, 95th percentile] over seeds)")
    ok = all(a["rate"] <= ALPHA for a in alarms)
    print(f"\nfalse-alarm rate ≤ α = {ALPHA} for every claim: {'met' if ok else 'MISSED'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"args": vars(args), "alarms": alarms, "side_by_side": side,
                       "wall_s": wall}, fh, indent=2)  # fmt: skip


if __name__ == "__main__":
    main()
