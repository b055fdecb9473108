"""What the lower ladder bar costs or earns at the sizes of the docs' examples.

``SearchConfig.ladder_bar="projected"`` offers the final stage every rung that beats
the winner's margin-discounted projection; ``"face"`` only those above the winner's
face value.  A projected run records every set it certified, and a set's final counts
do not depend on which other sets were certified, so the same run also gives the
face bar's bound on the same seed (``BlackBoxDetail.recertified`` with
``kept_by_face_bar``): the comparison needs one run per seed and has no sampling
noise between the two rules.

Cases: the examples of README.md, docs/tutorials/own-mechanism.md and
docs/guide/ci.md (final 2–5× the selection sample), a correct Laplace and the Gaussian
mechanism (whose ratio grows into the tail); ADePT and the Gaussian again at a final
sample 10× and 20× the selection sample, and ADePT at 5× with a 5× larger selection
sample (the ratio or the size?).  Each over ``--seeds`` seeds; printed per case: the
mean and the range of (projected − face) over the seeds, how many seeds lost, gained or
tied, and the mean number of sets certified under each rule.

Usage (from the repository root, dpaudit installed)::

    .venv/bin/python benchmarks/ladder_bar_small.py --seeds 20
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics

import numpy as np

from dpaudit import (
    AuditConfig,
    Definition,
    ExecutionConfig,
    InputDomain,
    PrivacyClaim,
    audit,
    make_mechanism,
)
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.testing import DEFAULT_SAMPLES, DEFAULT_TRAIN_SAMPLES, as_mechanism


def laplace_half(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace of scale 1/2: ε = 2 on [0, 1] (the docs' broken example)."""
    return x + rng.laplace(0.0, 0.5, size=(n, x.size))


def laplace_one(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace of scale 1: ε = 1 on [0, 1] (correct for a claim of 1)."""
    return x + rng.laplace(0.0, 1.0, size=(n, x.size))


ONE = ExecutionConfig(workers=1)
UNIT = InputDomain((1,), 0.0, 1.0)
BROKEN = as_mechanism(laplace_half, PrivacyClaim(Definition.PURE, 1.0, UNIT))
ADEPT = make_mechanism("adept", epsilon=1.0, dim=8)
GAUSSIAN = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
CASES = {
    # name: (mechanism, AuditConfig without seed)
    "readme-laplace-eps2": (BROKEN, AuditConfig(samples=20_000, final_samples=100_000)),
    "ci-laplace-eps2": (
        BROKEN,
        AuditConfig(
            samples=DEFAULT_SAMPLES,
            final_samples=2 * DEFAULT_SAMPLES,
            train_samples=min(DEFAULT_SAMPLES, DEFAULT_TRAIN_SAMPLES),
        ),
    ),
    "laplace-correct": (
        as_mechanism(laplace_one, PrivacyClaim(Definition.PURE, 1.0, UNIT)),
        AuditConfig(samples=20_000, final_samples=100_000),
    ),
    "adept-dim8": (ADEPT, AuditConfig(samples=20_000, final_samples=40_000)),
    "gaussian": (GAUSSIAN, AuditConfig(samples=20_000, final_samples=100_000)),
    # The same two with a final stage 10 and 20 times the selection sample (DP-Sniper's:
    # 18.7), where the ladder's premise holds: the final counts resolve smaller sets.
    **{
        f"{name}-final{ratio}x": (mech, AuditConfig(samples=20_000, final_samples=ratio * 20_000))
        for ratio in (10, 20)
        for name, mech in (("adept-dim8", ADEPT), ("gaussian", GAUSSIAN))
    },
    # Ratio or size?  A final sample larger than the 20× case's, at 5× selection.
    "adept-dim8-100k-final5x": (ADEPT, AuditConfig(samples=100_000, final_samples=500_000)),
}


def compare(name: str, seeds: int) -> dict:
    """Projected and face-bar bounds of one case over seeds 0..seeds-1, one run each."""
    mechanism, config = CASES[name]
    projected, face, k_projected, k_face = [], [], [], []
    for seed in range(seeds):
        cfg = dataclasses.replace(config, seed=seed, search=SearchConfig(ladder_bar="projected"))
        result = audit(mechanism, config=cfg, execution=ONE)
        detail = result.detail
        projected.append(float(result.epsilon_lower_bound))
        face.append(
            detail.recertified(detail.kept_by_face_bar, cfg.confidence, result.claimed_delta)
            if detail.certified
            else projected[-1]
        )
        k_projected.append(len(detail.certified))
        k_face.append(sum(map(detail.kept_by_face_bar, detail.certified)))
    diff = [p - f for p, f in zip(projected, face, strict=True)]
    return {
        "case": name,
        "seeds": seeds,
        "claimed": mechanism.claim.epsilon,
        "mean_projected": statistics.fmean(projected),
        "mean_face": statistics.fmean(face),
        "mean_diff": statistics.fmean(diff),
        "min_diff": min(diff),
        "max_diff": max(diff),
        "lower": sum(d < 0 for d in diff),
        "higher": sum(d > 0 for d in diff),
        "equal": sum(d == 0 for d in diff),
        "violations_projected": sum(p > mechanism.claim.epsilon for p in projected),
        "violations_face": sum(f > mechanism.claim.epsilon for f in face),
        "mean_k_projected": statistics.fmean(k_projected),
        "mean_k_face": statistics.fmean(k_face),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--only", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    args = parser.parse_args()
    print(
        f"{'case':20s} {'claim':>5s} {'mean proj':>9s} {'mean face':>9s} {'mean Δ':>9s} "
        f"{'min Δ':>9s} {'max Δ':>9s}  lower/higher/equal  K proj/face  violations proj/face"
    )
    for name in args.only:
        r = compare(name, args.seeds)
        print(
            f"{r['case']:20s} {r['claimed']:5g} {r['mean_projected']:9.5f} {r['mean_face']:9.5f} "
            f"{r['mean_diff']:+9.5f} {r['min_diff']:+9.5f} {r['max_diff']:+9.5f}  "
            f"{r['lower']:>5d}/{r['higher']:d}/{r['equal']:d}"
            f"{'':10s}{r['mean_k_projected']:4.2f}/{r['mean_k_face']:4.2f}"
            f"{'':6s}{r['violations_projected']}/{r['violations_face']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
