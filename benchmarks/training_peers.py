"""dpaudit's one-run bound and the peers' one-run estimators on the same canary scores.

Runs in ``.venv`` (opake-auditing installed); jax_privacy's estimators are added when
``jax_privacy.auditing`` imports (it needs jax, which ``.venv`` does not carry: the
measured results were produced by an interpreter that sees ``.venv`` plus jax-privacy
2.0.0, see docs/benchmarks.md)::

    .venv/bin/python benchmarks/training_peers.py [--seeds 5] [--null-seeds 200]
        [--out benchmarks/results/training_peers.json]

Part 1 (*score sets*): :func:`dpaudit.auditors.training.one_run.play` trains and scores
``m`` canaries once per seed on DPSGD (σ = 2, 500 steps) correct, with the ``batch-clip``
flaw and with the ``wrong-rate`` flaw (trains as the correct one; only its claim is
wrong), and on two null trainers whose scores ignore the data (i.i.d. normal, and one
constant score for every canary: the jax_privacy PR #270 case).  On each set dpaudit's
certified bound (:func:`certify_guesses`, Bonferroni over rules × scores) and every peer
method on every score are computed at the same confidence, δ and canaries, and timed.

Part 2 (*calibration*): on synthetic sets whose true ε is known — null scores (ε = 0) and
ε-randomised response on the inclusion bit (exactly ε-DP, δ = 0), binary or with
independent jitter (post-processing: still ε-DP) — the fraction of seeds on which each
method reports ε̂ above the true ε, at nominal α = 1 − confidence.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import platform
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import opake.auditing as opake_auditing
from scipy import stats

from dpaudit.auditors.training.one_run import OneRunConfig, certify_guesses, play
from dpaudit.claims import PureDP
from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.training import CallableTraining
from dpaudit.mechanisms.training.dpsgd import DPSGD

CONFIDENCE = 0.95
DELTA = 1e-5
ALPHA = 1.0 - CONFIDENCE
ONE = ExecutionConfig(workers=1)
RR_EPSILON = 1.0

try:  # jax_privacy's auditing module needs jax only through its package __init__
    import jax_privacy.auditing as jax_auditing

    JAX_PRIVACY = metadata.version("jax-privacy")
    JAX_PRIVACY_MISSING = None
except ImportError as exc:  # pragma: no cover - depends on the interpreter
    jax_auditing = None
    JAX_PRIVACY = None
    JAX_PRIVACY_MISSING = f"import jax_privacy.auditing failed: {exc}"

NOT_RUN = {
    "privacy-meter": (
        "privacy-meter 1.0.1 (the only release on the index, 2023-07) downloads and "
        "unpacks, but has no ε estimator: its Audit/metric API (PopulationMetric, "
        "ShadowMetric, ReferenceMetric) reports membership-inference ROC/accuracy from "
        "models and datasets, nothing that takes canary scores with inclusion bits and "
        "returns an ε bound; its wheel also declares no dependencies while importing "
        "tensorflow, torch, seaborn and jinja2"
    ),
}


# ------------------------------------------------------------------ the estimators


def _coin_flip(inside: np.ndarray) -> Any:
    """opake's partition for dpaudit's own bits (its factory would draw new ones)."""
    from opake.api.auditing._coin_flip import CoinFlip

    idx = np.arange(inside.size)
    return CoinFlip(
        num_canaries=int(inside.size),
        canary_indices=idx,
        _in_mask=inside.copy(),
        in_indices=idx[inside],
        out_indices=idx[~inside],
        dataset_size=int(inside.size),
    )


def _timed(fn: Callable[[], float]) -> tuple[float, float]:
    start = time.perf_counter()
    value = float(fn())
    return value, time.perf_counter() - start


def opake_methods(values: np.ndarray, inside: np.ndarray, gdp_grid: int) -> dict[str, Any]:
    """opake's eps_delta and gdp ε at (δ, α), the (r, u) its _best_r_u picked, seconds."""
    idx = np.arange(inside.size)
    t0 = time.perf_counter()
    est = opake_auditing.one_run(
        opake_auditing.canary_scores(values, canary_indices=idx), coin_flip=_coin_flip(inside)
    )
    setup = time.perf_counter() - t0
    r, u = est._best_r_u()
    ed, t_ed = _timed(lambda: est.eps_delta().epsilon_at(delta=DELTA, significance=ALPHA))
    gdp, t_gdp = _timed(
        lambda: est.gdp(grid_size=gdp_grid).epsilon_at(delta=DELTA, significance=ALPHA)
    )
    return {
        "opake_eps_delta": ed,
        "opake_gdp": gdp,
        "r": int(r),
        "u": int(u),
        "seconds": {"opake_eps_delta": setup + t_ed, "opake_gdp": setup + t_gdp},
    }


def jax_methods(values: np.ndarray, inside: np.ndarray) -> dict[str, Any]:
    """jax_privacy's one-run (Bonferroni over thresholds), one-run f-DP and GDP routes."""
    if jax_auditing is None:
        return {}
    aud = jax_auditing.CanaryScoreAuditor(values[inside], values[~inside])
    out: dict[str, Any] = {"seconds": {}}
    for name, fn in (
        ("jax_one_run", lambda: aud.epsilon_one_run(ALPHA, DELTA)),
        ("jax_one_run_fdp", lambda: aud.epsilon_one_run_fdp(ALPHA, DELTA)),
        ("jax_gdp", lambda: aud.epsilon_from_gdp(ALPHA, DELTA)),
    ):
        out[name], out["seconds"][name] = _timed(fn)
    return out


def dpaudit_bound(scores: dict[str, np.ndarray], inside: np.ndarray) -> dict[str, Any]:
    """dpaudit's certified ε_lcb on every offered score at once, its best rule, seconds."""
    start = time.perf_counter()
    rules, err, ceiling = certify_guesses(scores, inside, CONFIDENCE, DELTA)
    seconds = time.perf_counter() - start
    best = max(rules, key=lambda r: r.epsilon_lower_bound)
    per_score = {
        name: max(r.epsilon_lower_bound for r in rules if r.score == name) for name in scores
    }
    return {
        "dpaudit": best.epsilon_lower_bound,
        "best_rule": {
            "score": best.score,
            "positive": best.positive,
            "negative": best.negative,
            "correct": best.correct,
        },
        "error_per_rule": err,
        "rules": len(rules),
        "ceiling": ceiling,
        "per_score": per_score,
        "seconds": seconds,
    }


# ------------------------------------------------------------------ part 1: score sets


def _coordinate_score(model: np.ndarray, records: Any) -> np.ndarray:
    return np.array([model[r.coordinate] for r in records])


def _null_mechanism(canaries: int, constant: bool) -> CallableTraining:
    def train(dataset: Any, rng: np.random.Generator) -> np.ndarray:
        noise = rng.normal(0.0, 1.0, canaries)  # draws either way: the probe sees the seed
        return np.zeros(canaries) if constant else noise

    label = "null: constant score" if constant else "null: i.i.d. normal score"
    return CallableTraining(
        train, _coordinate_score, (), PureDP(0.1), label=label, declared_access="white-box"
    )


def score_sets(canaries: int) -> dict[str, tuple[Any, str]]:
    """Each set's mechanism and what is known of its true ε."""
    dpsgd = {f: DPSGD(noise_multiplier=2.0, steps=500, flaw=f) for f in ("none", "batch-clip")}
    wrong = DPSGD(noise_multiplier=2.0, steps=500, flaw="wrong-rate")
    return {
        "dpsgd-correct": (dpsgd["none"], "≤ claim (accountant of the true run)"),
        "dpsgd-batch-clip": (dpsgd["batch-clip"], "unbounded by the claim (sensitivity ≈ 2BC)"),
        "dpsgd-wrong-rate": (wrong, "as dpsgd-correct; the claim is too small"),
        "null-normal": (_null_mechanism(canaries, constant=False), "0"),
        "null-constant": (_null_mechanism(canaries, constant=True), "0"),
    }


def _spread(values: list[float]) -> dict[str, float]:
    arr = np.asarray(values, dtype=float)
    return {
        "median": float(np.median(arr)),
        "min": float(arr.min()),
        "max": float(arr.max()),
    }


def part_one(seeds: int, canaries: int, gdp_grid: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (mech, truth) in score_sets(canaries).items():
        runs = []
        for seed in range(seeds):
            start = time.perf_counter()
            game = play(mech, OneRunConfig(canaries=canaries, seed=seed, execution=ONE))
            play_s = time.perf_counter() - start
            row: dict[str, Any] = {"seed": seed, "play_seconds": play_s}
            row.update(dpaudit_bound(game.scores, game.inside))
            row["peers"] = {}
            for score, values in game.scores.items():
                peer = opake_methods(values, game.inside, gdp_grid)
                jax = jax_methods(values, game.inside)
                peer["seconds"].update(jax.pop("seconds", {}))
                peer.update(jax)
                row["peers"][score] = peer
            runs.append(row)
            print(
                f"{name} seed {seed}: dpaudit {row['dpaudit']:.4f}; "
                + "; ".join(
                    f"{s}: "
                    + ", ".join(f"{k} {v:.4f}" for k, v in p.items() if isinstance(v, float))
                    for s, p in row["peers"].items()
                ),
                flush=True,
            )
        out[name] = {
            "claim_epsilon": float(mech.claim.epsilon),
            "true_epsilon": truth,
            "scores": list(runs[0]["peers"]),
            "runs": runs,
            "summary": _summarise(runs),
        }
    return out


def _methods(peer: dict[str, Any]) -> list[str]:
    return [k for k, v in peer.items() if isinstance(v, float)]


def _summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per method: spread over seeds of its ε on each score and of its best score's ε."""
    first = next(iter(runs[0]["peers"].values()))
    summary: dict[str, Any] = {"dpaudit": _spread([r["dpaudit"] for r in runs])}
    summary["dpaudit_seconds"] = _spread([r["seconds"] for r in runs])
    for method in _methods(first):
        per = {
            score: _spread([r["peers"][score][method] for r in runs]) for score in runs[0]["peers"]
        }
        best = _spread([max(p[method] for p in r["peers"].values()) for r in runs])
        secs = _spread([sum(p["seconds"][method] for p in r["peers"].values()) for r in runs])
        summary[method] = {"best_score_uncorrected": best, "per_score": per, "seconds": secs}
    summary["opake_r_u"] = {
        score: [(r["peers"][score]["r"], r["peers"][score]["u"]) for r in runs]
        for score in runs[0]["peers"]
    }
    return summary


# ------------------------------------------------------------------ part 2: calibration


def synthetic(kind: str, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Bits, scores and the true ε of one synthetic score set."""
    inside = rng.random(m) < 0.5
    if kind == "null-normal":
        return inside, rng.normal(0.0, 1.0, m), 0.0
    if kind == "null-constant":
        return inside, np.zeros(m), 0.0
    keep = rng.random(m) < math.exp(RR_EPSILON) / (1.0 + math.exp(RR_EPSILON))
    bit = np.where(keep, inside, ~inside).astype(float)
    if kind == "rr-binary":
        return inside, bit, RR_EPSILON
    return inside, bit + 0.5 * rng.random(m), RR_EPSILON  # rr-jitter


CALIBRATION_SETS = ("null-normal", "null-constant", "rr-binary", "rr-jitter")


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    a = (1.0 - level) / 2.0
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1.0 - a, k + 1, n - k))
    return lo, hi


def _calibration_seed(job: tuple[str, int, int, int]) -> tuple[float, dict[str, float]]:
    kind, seed, m, gdp_grid = job
    rng = np.random.default_rng([7, CALIBRATION_SETS.index(kind), seed])
    inside, values, truth = synthetic(kind, m, rng)
    got = {"dpaudit": dpaudit_bound({"score": values}, inside)["dpaudit"]}
    for source in (opake_methods(values, inside, gdp_grid), jax_methods(values, inside)):
        got.update({k: source[k] for k in _methods(source)})
    return truth, got


def part_two(seeds: int, m: int, gdp_grid: int, workers: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in CALIBRATION_SETS:
        start = time.perf_counter()
        jobs = [(kind, seed, m, gdp_grid) for seed in range(seeds)]
        if workers > 1:
            with multiprocessing.get_context("spawn").Pool(workers) as pool:
                results = pool.map(_calibration_seed, jobs)
        else:
            results = [_calibration_seed(job) for job in jobs]
        truth = results[0][0]
        entry: dict[str, Any] = {"true_epsilon": truth, "seeds": seeds, "canaries": m}
        for method in results[0][1]:
            arr = np.asarray([got[method] for _, got in results])
            k = int(np.sum(arr > truth + 1e-9))
            lo, hi = clopper_pearson(k, seeds)
            entry[method] = {
                "exceed": k,
                "rate": k / seeds,
                "rate_ci95": [lo, hi],
                "median": float(np.median(arr)),
                "p95": float(np.quantile(arr, 0.95)),
                "max": float(arr.max()),
            }
        out[kind] = entry
        counts = ", ".join(
            f"{k} {v['exceed']}/{seeds}" for k, v in entry.items() if isinstance(v, dict)
        )
        print(f"{kind} ({time.perf_counter() - start:.0f} s): {counts}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="trainings per score set")
    parser.add_argument("--null-seeds", type=int, default=200, help="calibration seeds")
    parser.add_argument("--canaries", type=int, default=1000)
    parser.add_argument(
        "--gdp-grid", type=int, default=10_000, help="opake gdp grid on the score sets"
    )
    parser.add_argument(
        "--calibration-gdp-grid",
        type=int,
        default=1_000,
        help="opake gdp grid in the calibration (its floor; ~10x faster)",
    )
    parser.add_argument("--workers", type=int, default=2, help="processes for calibration")
    parser.add_argument("--out", default="benchmarks/results/training_peers.json")
    args = parser.parse_args()
    start = time.perf_counter()
    sets = part_one(args.seeds, args.canaries, args.gdp_grid)
    calibration = part_two(args.null_seeds, args.canaries, args.calibration_gdp_grid, args.workers)
    result = {
        "command": "benchmarks/training_peers.py "
        f"--seeds {args.seeds} --null-seeds {args.null_seeds} --canaries {args.canaries} "
        f"--gdp-grid {args.gdp_grid} --calibration-gdp-grid {args.calibration_gdp_grid}",
        "confidence": CONFIDENCE,
        "delta": DELTA,
        "versions": {
            "python": platform.python_version(),
            "dpaudit": metadata.version("dpaudit"),
            "opake-auditing": metadata.version("opake-auditing"),
            "jax-privacy": JAX_PRIVACY,
            "numpy": np.__version__,
        },
        "not_run": {
            **NOT_RUN,
            **({"jax-privacy": JAX_PRIVACY_MISSING} if JAX_PRIVACY_MISSING else {}),
        },
        "score_sets": sets,
        "calibration": calibration,
        "seconds": time.perf_counter() - start,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({result['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
