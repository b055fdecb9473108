"""What each black-box search stage contributes: the bound with it switched off, and its cost.

Usage (from the repository root)::

    .venv/bin/python benchmarks/ablation.py [--scale 100] [--seeds 3] [--first-seed 0]
        [--only CASE,...|suite] [--variants NAME,...] [--workers 1]
        [--json benchmarks/results/ablation.json] [--append] [--no-share] [--table FILE]

Cases: black-box Laplace ε = 0.1 on inputs 0 and 1 (``audit_laplace:laplace_eps01``,
the pattern generator's pairs, as ``benchmarks/audit_laplace.py``'s ``bb-laplace``)
and the rows of DP-Sniper's suite (``dpsniper_suite.py``: DP-Sniper's pairs,
black-box); ``--only`` takes names or ``suite`` (all of them).  Sizes are
DP-Sniper's (10.7M per selection estimate, 200M final, confidence 0.9) divided
by ``--scale``.

Variants (:class:`dpaudit.auditors.blackbox.config.SearchConfig` switches):
``full`` (defaults), ``no-playoff`` (``playoff_groups=0``), ``no-runners-up``
(``playoff_tie_z=-inf``), ``no-hedge`` (``playoff_hedge=False``), ``no-ladder``
(``ladder_rungs=0``), ``no-extra-leaders`` (``rank_extra=0``), ``narrow-screen``
(``screen_pairs=4``), ``no-rare-scan`` (``rare_scan_pairs=0``: no second look for
rare events).  Two stages were
measured and removed: ``validate`` (the leaders re-ranked on a fresh half of
``samples``) and DP-Sniper's fixed-mass sets in ``rank``; the rows of their
variants (``no-validate``, ``no-fixed-mass``, ``lean``: fixed-mass sets and extra
leaders off, ``lean-no-validate``) in ``results/ablation.json`` came from this
file at commit 85a66c6 on main's search (``benchmarks/README.md``, "Search ablation").

Per (case, variant) the row gives min / median / max ε_lcb over seeds F..F+S−1 (never
the best seed), ``K`` per seed, and per stage the outputs drawn, this process's
CPU seconds (median over seeds; ``--workers 1`` runs every work unit in-process)
and the CPU seconds numpy needs *only to draw* as many outputs of the same
mechanism function — measured in the same run, so the difference is what the
stage costs beyond sampling (scoring, counting, ranking).
"""

from __future__ import annotations

import argparse
import contextlib
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
    "no-playoff": SearchConfig(playoff_groups=0),
    "no-runners-up": SearchConfig(playoff_tie_z=-math.inf),
    "no-hedge": SearchConfig(playoff_hedge=False),
    "no-ladder": SearchConfig(ladder_rungs=0),
    "no-extra-leaders": SearchConfig(rank_extra=0.0),
    "narrow-screen": SearchConfig(screen_pairs=4),
    "no-rare-scan": SearchConfig(rare_scan_pairs=0),
}
#: The cases of the first measurement (``--only`` default).  ``--only suite`` adds every
#: other row of ``dpsniper_suite.py`` (``truncated_geometric_true`` is
#: ``truncated_geometric``'s mechanism under another claim: the same bounds, left out).
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


class SharedStages:
    """Reuse, across variants of one case, the stage results the variants cannot change.

    Every stage draws from its own key range ``(seed, stage key, unit)``, so what
    ``train``, ``screen`` and ``rare-scan`` return, and the counts ``count_combos``
    takes for given combinations, sample size and stage, depend only on the seed (and
    ``screen_pairs``, ``rare_scan_pairs``) and not on the switches of later stages.
    Running them once per seed and case therefore gives every variant exactly the
    bound its own uncomputed run would (``--no-share`` reruns everything; checked
    equal, see the README), at the cost of only the stages that differ.  Stage CPU
    seconds are read from the ``full`` variant, which runs first and computes
    everything itself.
    """

    def __init__(self) -> None:
        self.memo: dict[Any, Any] = {}
        self.keep: list[Any] = []  # cached combinations stay alive: their ids stay unique

    def __enter__(self) -> SharedStages:
        from dpaudit.auditors.blackbox import stages

        self._saved = (dict(stages.STAGES), stages.count_combos)
        count = stages.count_combos
        memo, keep = self.memo, self.keep

        def shared(cls: Any, key_of: Any) -> Any:
            # The stage's own class, its ``run`` memoised on ``key_of(stage, budget)``.
            class Shared(cls):  # type: ignore[misc, valid-type]
                def run(self, state: Any, budget: Any) -> Any:
                    key = key_of(self, budget)
                    if key not in memo:
                        memo[key] = super().run(state, budget)
                        keep.append(memo[key])
                    return memo[key]

            return Shared

        def shared_count(budget: Any, state: Any, ks: Any, n: int, st: int, label: str) -> Any:
            ids = tuple((k, id(state.combos[k])) for k in ks)
            key = ("count", budget.config.seed, st, n, label, ids)
            if key not in memo:
                memo[key] = count(budget, state, ks, n, st, label)
            return memo[key]

        # The rare scan's input is the shared screen's output and it draws from its own
        # stage key, so it too depends only on the seed and its own settings; sharing it
        # also keeps its new combinations' ids, which the count memo keys on.
        stages.STAGES.update(
            {
                "train": shared(stages.Train, lambda st, b: ("train", b.config.seed, st)),
                "screen": shared(stages.Screen, lambda st, b: ("screen", b.config.seed, st)),
                "rare-scan": shared(
                    stages.RareScan,
                    lambda st, b: ("rare-scan", b.config.seed, b.config.search.screen_pairs, st),
                ),
            }
        )
        stages.count_combos = shared_count
        return self

    def __exit__(self, *exc: object) -> None:
        from dpaudit.auditors.blackbox import stages

        stages.STAGES.update(self._saved[0])
        stages.count_combos = self._saved[1]


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
    s: Setup,
    variant: str,
    samples: int,
    final: int,
    seeds: range,
    ex: ExecutionConfig,
) -> dict[str, Any]:
    """Audit ``s`` under ``variant`` for ``seeds``; min / median / max and stage costs."""
    cfg = AuditConfig(
        samples,
        final,
        confidence=DPSNIPER_CONFIDENCE,
        pairs=s.pairs,
        use_patterns=not s.pairs,
        search=VARIANTS[variant],
    )
    bounds, ks, cpu, drawn, walls = [], [], [], [], []
    for seed in seeds:
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
        "seeds": len(seeds),
        "first_seed": seeds.start,
        "epsilon_lcb": bounds,
        "epsilon_lcb_min": min(bounds),
        "epsilon_lcb_median": statistics.median(bounds),
        "epsilon_lcb_max": max(bounds),
        "final_candidates": ks,
        "stage_cpu_s_median": {st: statistics.median(c.get(st, 0.0) for c in cpu) for st in stages},
        "stage_outputs_drawn": {st: drawn[0].get(st, 0) for st in stages},
        "wall_s_median": statistics.median(walls),
    }


def case_names(only: str) -> list[str]:
    """``--only``: names, or ``suite`` for bb-laplace and every distinct DP-Sniper-suite row."""
    import dpsniper_suite

    if only != "suite":
        return only.split(",")
    rows = [c.name for c in dpsniper_suite.CASES if c.name != "truncated_geometric_true"]
    return ["bb-laplace", *rows]


def main(argv: list[str] | None = None) -> int:
    """Run the ablation and write the rows as JSON (``--append``: into the file's rows)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, default=100, help="divide DP-Sniper's sizes by")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds F..F+S−1")
    parser.add_argument("--only", default=",".join(CASES), help="case names, or 'suite'")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", default=str(HERE / "results" / "ablation.json"))
    parser.add_argument("--append", action="store_true", help="keep the file's other rows")
    parser.add_argument("--no-share", action="store_true", help="rerun every stage per variant")
    parser.add_argument("--table", help="only write the markdown of --json's rows to this file")
    args = parser.parse_args(argv)
    if args.table:
        Path(args.table).write_text(markdown(json.loads(Path(args.json).read_text())) + "\n")
        return 0
    progress.ENABLED = False
    samples, final = DPSNIPER_SAMPLES // args.scale, DPSNIPER_FINAL_SAMPLES // args.scale
    ex = ExecutionConfig(workers=args.workers)
    command = "python benchmarks/ablation.py " + " ".join(argv or sys.argv[1:])
    out: dict[str, Any] = {"commands": [command.strip()], "rows": [], "draw_s_per_output": {}}
    path = Path(args.json)
    if args.append and path.exists():
        old = json.loads(path.read_text())
        out["commands"] = [*old.get("commands", [old.get("command", "")]), command.strip()]
        out["rows"], out["draw_s_per_output"] = old["rows"], old["draw_s_per_output"]
    # ``full`` first: it computes every stage itself (its CPU seconds are the cost column).
    variants = sorted(args.variants.split(","), key=lambda v: v != "full")
    for name in case_names(args.only):
        s = setup(name)
        per_output = draw_seconds_per_output(s)
        out["draw_s_per_output"][name] = per_output
        with contextlib.nullcontext() if args.no_share else SharedStages():
            for variant in variants:
                seeds = range(args.first_seed, args.first_seed + args.seeds)
                row = run(s, variant, samples, final, seeds, ex)
                row["shared_stages"] = not args.no_share and variant != "full"
                row["stage_numpy_draw_s"] = {
                    st: n * per_output for st, n in row["stage_outputs_drawn"].items()
                }
                same = _key(row)
                out["rows"] = [r for r in out["rows"] if _key(r) != same] + [row]
                path.write_text(json.dumps(out, indent=1) + "\n")
    print(markdown(out))
    return 0


def _key(row: dict[str, Any]) -> tuple[str, str, int, int, int]:
    """What makes two rows the same measurement (``--append`` replaces it)."""
    return (row["case"], row["variant"], row["samples"], row["seeds"], row.get("first_seed", 0))


def _cell(r: dict[str, Any]) -> str:
    """``min / median / max`` of a row's bounds."""
    return (
        f"{r['epsilon_lcb_min']:.4f} / {r['epsilon_lcb_median']:.4f} / {r['epsilon_lcb_max']:.4f}"
    )


def markdown(out: dict[str, Any]) -> str:
    """Bounds per case and variant (min / median / max over seeds) and the stage costs.

    "Δ median" is the variant's median minus its base's at the same sizes: ``full``'s,
    or for a variant named ``"BASE, switch"`` (a switch of another code, merged rows)
    ``BASE``'s; "spread" is the base's max − min over seeds, the seed noise a stage's
    effect is judged against.
    """
    rows = {(r["case"], r["samples"], r["variant"]): r for r in out["rows"]}
    head = "| case | samples / final | variant | seeds | ε_lcb min / median / max | Δ median "
    lines = [head + "| spread (base) | K per seed |", "|---|---|---|---|---|---|---|---|"]
    for r in out["rows"]:
        base = r["variant"].split(", ")[0] if ", " in r["variant"] else "full"
        f = rows.get((r["case"], r["samples"], base))
        diff = f"{r['epsilon_lcb_median'] - f['epsilon_lcb_median']:+.4f}" if f else ""
        spread = f"{f['epsilon_lcb_max'] - f['epsilon_lcb_min']:.4f}" if f else ""
        seeds = f"{r.get('first_seed', 0)}–{r.get('first_seed', 0) + r['seeds'] - 1}"
        ks = ",".join(map(str, r["final_candidates"]))
        size = f"{r['samples']:,} / {r['final_samples']:,}"
        lines.append(
            f"| {r['case']} | {size} | {r['variant']} | {seeds} | {_cell(r)} | {diff} "
            f"| {spread} | {ks} |"
        )
    # Costs of the searches that computed every stage themselves (not shared).
    lines += [
        "",
        "| case | samples | search | stage | outputs drawn | CPU s | numpy draw s | ratio |",
    ]
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in out["rows"]:
        if r["variant"] not in ("full", "after", "now"):  # the labelled full searches
            continue
        for st, c in r["stage_cpu_s_median"].items():
            n, d = r["stage_outputs_drawn"][st], r["stage_numpy_draw_s"][st]
            ratio = f"{c / d:.1f}×" if d > 0 else ""
            lines.append(
                f"| {r['case']} | {r['samples']:,} | {r['variant']} | {st} | {n:,} | {c:.2f} "
                f"| {d:.2f} | {ratio} |"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
