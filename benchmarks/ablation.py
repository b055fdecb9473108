"""What each black-box search stage contributes: the bound with it switched off, and its cost.

Usage (from the repository root)::

    .venv/bin/python benchmarks/ablation.py [--scale 100] [--seeds 3] [--only CASE,...]
        [--variants NAME,...] [--workers 1] [--json benchmarks/results/ablation.json]

Cases: black-box Laplace ε = 0.1 on inputs 0 and 1 (``audit_laplace:laplace_eps01``,
the pattern generator's pairs, as ``benchmarks/audit_laplace.py``'s ``bb-laplace``)
and DP-Sniper suite rows (``dpsniper_suite.py``: DP-Sniper's pairs, black-box):
ReportNoisyMax1, SVT1 and the truncated geometric mechanism (discrete outputs).
Sizes are DP-Sniper's (10.7M per selection estimate, 200M final, confidence 0.9)
divided by ``--scale``.

Variants (:class:`dpaudit.auditors.blackbox.config.SearchConfig` switches):
``full`` (defaults), ``no-validate`` (leaders ranked on the ranking counts, which
then get all of ``samples``), ``no-playoff`` (``playoff_groups=0``),
``no-runners-up`` (``playoff_tie_z=-inf``), ``no-ladder`` (``ladder_rungs=0``),
``no-fixed-mass`` (``fixed_mass=False``), ``no-extra-leaders`` (``validate_extra=0``),
``narrow-screen`` (``screen_pairs=4``).

Per (case, variant) the row gives min / median / max ε_lcb over seeds 0..S−1 (never
the best seed), ``K`` per seed, and per stage the outputs drawn, this process's
CPU seconds (median over seeds; ``--workers 1`` runs every work unit in-process)
and the CPU seconds numpy needs *only to draw* as many outputs of the same
mechanism function — measured in the same run, so the difference is what the
stage costs beyond sampling (scoring, counting, ranking).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit import progress
from dpaudit.auditors.blackbox.auditor import (
    DPSNIPER_CONFIDENCE,
    DPSNIPER_FINAL_SAMPLES,
    DPSNIPER_SAMPLES,
    AuditConfig,
    audit,
)
from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.sampler import Timer
from dpaudit.engine.executor import ExecutionConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # audit_laplace, dpsniper_mechanisms, dpsniper_suite

VARIANTS: dict[str, SearchConfig] = {
    "full": SearchConfig(),
    "no-validate": SearchConfig(validate=False),
    "no-playoff": SearchConfig(playoff_groups=0),
    "no-runners-up": SearchConfig(playoff_tie_z=-math.inf),
    "no-ladder": SearchConfig(ladder_rungs=0),
    "no-fixed-mass": SearchConfig(fixed_mass=False),
    "no-extra-leaders": SearchConfig(validate_extra=0.0),
    "narrow-screen": SearchConfig(screen_pairs=4),
}
CASES = ("bb-laplace", "rnm1", "svt1", "truncated_geometric")


@dataclasses.dataclass(frozen=True)
class Setup:
    """One case: the mechanism, its pairs (empty: the pattern generator's) and raw function."""

    name: str
    mechanism: Any
    pairs: tuple[Any, ...]
    function: Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
    x: np.ndarray
    claimed: float


def setup(name: str) -> Setup:
    """The case ``name`` as ``audit_laplace.py`` / ``dpsniper_suite.py`` build it."""
    import audit_laplace
    import dpsniper_mechanisms
    import dpsniper_suite

    if name == "bb-laplace":
        mech = audit_laplace._black_box("laplace_eps01", 1)
        return Setup(name, mech, (), audit_laplace.laplace_eps01, np.zeros(1), 0.1)
    case = next(c for c in dpsniper_suite.CASES if c.name == name)
    pairs = dpsniper_suite.dpsniper_input_pairs(case)
    fn = getattr(dpsniper_mechanisms, case.function)
    x = np.asarray(pairs[0].x, dtype=np.float64)
    return Setup(name, dpsniper_suite.black_box(case), pairs, fn, x, case.claimed)


def draw_seconds_per_output(s: Setup, n: int = 1 << 21, chunk: int = 1 << 16) -> float:
    """CPU seconds numpy needs per output of ``s``'s function alone (best of 3 passes)."""
    rng = np.random.default_rng(0)
    best = math.inf
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(n // chunk):
            s.function(s.x, chunk, rng)
        best = min(best, time.process_time() - t0)
    return best / n


def run(
    s: Setup, variant: str, samples: int, final: int, seeds: int, ex: ExecutionConfig
) -> dict[str, Any]:
    """Audit ``s`` under ``variant`` for seeds 0..seeds−1; min / median / max and stage costs."""
    cfg = AuditConfig(
        samples,
        final,
        confidence=DPSNIPER_CONFIDENCE,
        pairs=s.pairs,
        use_patterns=not s.pairs,
        search=VARIANTS[variant],
    )
    bounds, ks, cpu, drawn, walls = [], [], [], [], []
    for seed in range(seeds):
        timer = Timer()
        t0 = time.perf_counter()
        r = audit(s.mechanism, dataclasses.replace(cfg, seed=seed), ex, timer=timer)
        walls.append(time.perf_counter() - t0)
        bounds.append(float(r.epsilon_lower_bound))
        ks.append(r.detail.certified_proposals)
        cpu.append(dict(timer.cpu))
        drawn.append(dict(timer.drawn))
        print(
            f"  {s.name} {variant} seed {seed}: ε_lcb {bounds[-1]:.5f} K {ks[-1]} "
            f"{walls[-1]:.1f} s",
            flush=True,
        )
    stages = list(cpu[0])
    return {
        "case": s.name,
        "variant": variant,
        # Strict JSON: a non-finite switch (``playoff_tie_z=-inf``) as its name.
        "search": {
            k: v if not isinstance(v, float) or math.isfinite(v) else str(v)
            for k, v in dataclasses.asdict(VARIANTS[variant]).items()
        },
        "samples": samples,
        "final_samples": final,
        "confidence": DPSNIPER_CONFIDENCE,
        "claimed_epsilon": s.claimed,
        "seeds": seeds,
        "epsilon_lcb": bounds,
        "epsilon_lcb_min": min(bounds),
        "epsilon_lcb_median": statistics.median(bounds),
        "epsilon_lcb_max": max(bounds),
        "final_candidates": ks,
        "stage_cpu_s_median": {st: statistics.median(c.get(st, 0.0) for c in cpu) for st in stages},
        "stage_outputs_drawn": {st: drawn[0].get(st, 0) for st in stages},
        "wall_s_median": statistics.median(walls),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the ablation and write the rows as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=100, help="divide DP-Sniper's sizes by")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--only", default=",".join(CASES))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", default=str(HERE / "results" / "ablation.json"))
    args = parser.parse_args(argv)
    progress.ENABLED = False
    samples, final = DPSNIPER_SAMPLES // args.scale, DPSNIPER_FINAL_SAMPLES // args.scale
    ex = ExecutionConfig(workers=args.workers)
    command = "python benchmarks/ablation.py " + " ".join(argv or sys.argv[1:])
    out: dict[str, Any] = {"command": command.strip(), "rows": [], "draw_s_per_output": {}}
    for name in args.only.split(","):
        s = setup(name)
        per_output = draw_seconds_per_output(s)
        out["draw_s_per_output"][name] = per_output
        for variant in args.variants.split(","):
            row = run(s, variant, samples, final, args.seeds, ex)
            row["stage_numpy_draw_s"] = {
                st: n * per_output for st, n in row["stage_outputs_drawn"].items()
            }
            out["rows"].append(row)
            Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    print(markdown(out))
    return 0


def markdown(out: dict[str, Any]) -> str:
    """The bound table (min / median / max per case and variant) and the full variant's costs."""
    lines = ["| case | variant | ε_lcb min / median / max | K per seed |", "|---|---|---|---|"]
    for r in out["rows"]:
        lo, med, hi = r["epsilon_lcb_min"], r["epsilon_lcb_median"], r["epsilon_lcb_max"]
        ks = ",".join(map(str, r["final_candidates"]))
        lines.append(f"| {r['case']} | {r['variant']} | {lo:.4f} / {med:.4f} / {hi:.4f} | {ks} |")
    lines += ["", "| case | stage | outputs drawn | CPU s | numpy draw s |"]
    lines.append("|---|---|---|---|---|")
    for r in out["rows"]:
        if r["variant"] != "full":
            continue
        for st, c in r["stage_cpu_s_median"].items():
            n, d = r["stage_outputs_drawn"][st], r["stage_numpy_draw_s"][st]
            lines.append(f"| {r['case']} | {st} | {n:,} | {c:.2f} | {d:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
