"""An (ε, δ) claim audited by the black-box search and the profile certifier under one budget.

Measures, for ``dpaudit.audit`` on a plain ``f(x, n, rng)``:

1. ``sizes``: the profile certifier alone (confidence 0.975, its share) on the classic
   Gaussian calibration at ε = 10, δ = 0.01 (σ = sqrt(2 ln(1.25/δ))/ε, exact δ(10) = 0.0406),
   δ_lcb(10) at 10⁷ and at 3·10⁷ final outputs per input, over seeds — the measurement
   behind ``dpaudit.api.PROFILE_FINAL_FACTOR``;
2. ``refuted``: the whole entry at the default sizes (10⁶ / 10⁷) on the same mechanism:
   verdict, which certifier refuted, the search's own ε_lcb, and the wall seconds;
3. ``false_alarms``: the entry on a correctly calibrated Gaussian ((1, 10⁻⁵)-DP, σ = 3.73)
   at 2·10⁴ / 10⁵ outputs, over seeds (every one must be "no violation found").

Run: ``PYTHONPATH=src python benchmarks/joint_certifiers.py --json
benchmarks/results/joint_certifiers.json`` (about 3 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import math
import time

import dpaudit
from dpaudit.adapters.reclaim import as_mechanism
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.auditors.profile.scores import ProjectionScore
from dpaudit.claims import ApproxDP, Definition, InputDomain, PrivacyClaim

CLASSIC_SIGMA = math.sqrt(2 * math.log(1.25 / 0.01)) / 10.0


def classic_gaussian(x, n, rng):
    return x + rng.normal(0.0, CLASSIC_SIGMA, size=(n, x.size))


def analytic_gaussian(x, n, rng):
    return x + rng.normal(0.0, 3.73, size=(n, x.size))


def _claim(epsilon: float, delta: float) -> PrivacyClaim:
    return PrivacyClaim(Definition.APPROXIMATE, epsilon, InputDomain((1,), 0.0, 1.0), delta=delta)


def sizes(seeds: int) -> dict[str, list[float]]:
    mech = as_mechanism(classic_gaussian, _claim(10.0, 0.01))
    score = ProjectionScore((1.0,), (0.0,))
    out: dict[str, list[float]] = {}
    for final in (10_000_000, 30_000_000):
        bounds = []
        for seed in range(seeds):
            cfg = ProfileAuditConfig(
                selection_samples=1_000_000,
                final_samples=final,
                confidence=0.975,
                epsilons=(10.0,),
                seed=seed + 2**32,
            )
            r = audit_profile(mech, (1.0,), (0.0,), score, ApproxDP(10.0, 0.01), cfg)
            bounds.append(round(r.detail.profile[0].delta_lower_bound, 5))
        out[str(final)] = bounds
    return out


def refuted(seeds: int) -> list[dict[str, object]]:
    rows = []
    for seed in range(seeds):
        start = time.perf_counter()
        r = dpaudit.audit(
            classic_gaussian, _claim(10.0, 0.01), config=dpaudit.AuditConfig(seed=seed)
        )
        search = [n for n in r.notes if n.startswith("black-box search")]
        rows.append(
            {
                "seed": seed,
                "verdict": r.verdict.value,
                "by": r.kind.value,
                "delta_lower_bound": round(r.detail.profile[0].delta_lower_bound, 5)
                if r.kind.value == "profile"
                else None,
                "search": search[0] if search else r.verdict_text,
                "seconds": round(time.perf_counter() - start, 1),
            }
        )
    return rows


def false_alarms(seeds: int) -> dict[str, int]:
    flagged = 0
    for seed in range(seeds):
        cfg = dpaudit.AuditConfig(samples=20_000, final_samples=100_000, seed=seed)
        flagged += dpaudit.audit(analytic_gaussian, _claim(1.0, 1e-5), config=cfg).violation
    return {"audits": seeds, "flagged": flagged}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--false-alarm-seeds", type=int, default=50)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    report = {
        "sizes": sizes(args.seeds),
        "refuted": refuted(3),
        "false_alarms": false_alarms(args.false_alarm_seeds),
    }
    text = json.dumps(report, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
