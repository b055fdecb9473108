"""dpaudit's black-box audit on DP-Sniper's evaluation suite, beside DP-Sniper's published bounds.

Usage (from the repository root)::

    .venv/bin/python benchmarks/dpsniper_suite.py [--only NAME,...] [--seeds 3] [--first-seed 0]
        [--samples 10700000] [--final-samples 200000000] [--mode dpaudit|dpsniper|both]
        [--workers 1] [--json FILE] [--inputs dpsniper|box|box-pairs]

Every mechanism of DP-Sniper's evaluation (Bichsel et al., S&P 2021, §6;
``dpsniper/experiments/exp_default.py``) is written as a plain function
``f(x, n, rng)`` in ``dpsniper_mechanisms.py`` and audited **black-box** — as
``dpaudit audit dpsniper_mechanisms:NAME`` (the ``callable`` adapter: no
density, no output encoding hints, nothing but samples) — on DP-Sniper's input
pairs: the StatDP patterns (base 1, steps ±1) its ``PatternGenerator`` makes
for the mechanism's input length and neighbourhood, given as ``--pair`` with
``--no-patterns``.  Confidence 0.9 as DP-Sniper; sample sizes default to
DP-Sniper's (10.7M per selection estimate, 200M final) and can be reduced.

Per mechanism the row gives the claimed ε, DP-Sniper's published ε lower bound
(the larger of its logistic-regression and neural-network runs), ours
(min / median / max over seeds F..F+S−1, F = 0 unless ``--first-seed``; never
the best seed), the verdict (violation: the lower bound exceeds the claim) and
whether ours ≥ DP-Sniper's.

Published numbers: ``eval_sp2021/reference-results/dd_search_reg_data.log``
(logistic regression) and ``dd_search_mlp_data.log`` (neural network) of
github.com/eth-sri/dp-sniper, key ``eps_lcb`` (confidence 0.9, 10.7M/200M
samples) — the data the paper's evaluation figures are drawn from.

``--inputs`` picks the inputs audited (default ``dpsniper``, the above).  ``box``
audits every case as a user would who knows only that any two inputs of the unit
box ``[0, 1]^dim`` are neighbours (``--domain 0,1 -p dim=N``, no ``--pair``: the
pairs are the auditor's own); ``box-pairs`` gives on that same box DP-Sniper's
pairs moved inside it (:func:`box_input_pairs`, with ``--no-patterns``), the
reference a pair search without ``--pair`` should reach.  For DP-Sniper's
component-wise neighbourhood (every entry moves by ≤ 1) and for one-entry inputs
the unit box is exactly a set of neighbours; for NoisyHist1/2 (5 entries,
one-entry neighbourhood) it is wider than DP-Sniper's (all 5 bins may move), so
their box bounds exceed the one-entry ε by design.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit import progress
from dpaudit.auditors.blackbox.auditor import (
    DPSNIPER_CONFIDENCE,
    DPSNIPER_FINAL_SAMPLES,
    DPSNIPER_SAMPLES,
    AuditConfig,
    SearchConfig,
    audit,
)
from dpaudit.auditors.blackbox.config import LADDER_BARS
from dpaudit.auditors.blackbox.pairs import InputPair, dedupe, statdp_patterns
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import make_mechanism
from dpaudit.serialization import dumps

HERE = Path(__file__).resolve().parent


@dataclasses.dataclass(frozen=True)
class Case:
    """One DP-Sniper experiment: mechanism, input length, domain, neighbours, published bounds."""

    name: str  # case name (--only); the function in dpsniper_mechanisms.py without "_true"
    dpsniper_name: str  # class name in DP-Sniper's code and logs
    dim: int
    domain: tuple[float, float]
    component_wise: bool  # PatternGenerator(…, component_wise_neighborhood)
    claimed: float
    published_reg: float  # eps_lcb, dd_search_reg_data.log
    published_mlp: float  # eps_lcb, dd_search_mlp_data.log
    truth: str  # what is known analytically

    @property
    def function(self) -> str:
        """Name of the mechanism's function in ``dpsniper_mechanisms.py``."""
        return self.name.removesuffix("_true")

    @property
    def published(self) -> float:
        """DP-Sniper's best published bound (the larger of its two classifiers)."""
        return max(self.published_reg, self.published_mlp)


_R = (-10.0, 10.0)
CASES: tuple[Case, ...] = (
    Case("laplace", "LaplaceMechanism", 1, _R, False, 0.1, 0.09680, 0.09763, "correct, ε = 0.1"),
    Case(
        "truncated_geometric", "TruncatedGeometricMechanism", 1, (0.0, 5.0), False, 0.1,
        0.11556, 0.11554, "ε = ln(9/8) = 0.1178 > 0.1 (Balcer–Vadhan Thm 4.7)",
    ),
    Case(
        "truncated_geometric_true", "TruncatedGeometricMechanism", 1, (0.0, 5.0), False,
        math.log(9 / 8), 0.11556, 0.11554, "the same mechanism against its true ε = ln(9/8)",
    ),
    Case("noisy_hist1", "NoisyHist1", 5, (0.0, 10.0), False, 0.1, 0.09779, 0.09770, "correct"),
    Case("noisy_hist2", "NoisyHist2", 5, (0.0, 10.0), False, 0.1, 4.60202, 4.60147, "ε = 10"),
    Case("rnm1", "ReportNoisyMax1", 5, _R, True, 0.1, 0.09225, 0.09250, "correct"),
    Case("rnm2", "ReportNoisyMax2", 5, _R, True, 0.1, 0.09750, 0.09792, "correct"),
    Case("rnm3", "ReportNoisyMax3", 5, _R, True, 0.1, 0.24782, 0.24881, "ε = ∞"),
    Case("rnm4", "ReportNoisyMax4", 5, _R, True, 0.1, 0.34634, 0.35344, "ε = ∞"),
    Case("svt1", "SparseVectorTechnique1", 10, _R, True, 0.1, 0.08580, 0.08578, "correct"),
    Case("svt2", "SparseVectorTechnique2", 10, _R, True, 0.1, 0.08593, 0.08525, "correct"),
    Case("svt3", "SparseVectorTechnique3", 10, _R, True, 0.1, 0.17157, 0.18217, "ε = ∞"),
    Case("svt4", "SparseVectorTechnique4", 10, _R, True, 0.1, 0.16868, 0.16957, "ε = 0.175"),
    Case("svt5", "SparseVectorTechnique5", 10, _R, True, 0.1, 1.76119, 1.76099, "ε = ∞"),
    Case("svt6", "SparseVectorTechnique6", 10, _R, True, 0.1, 0.27204, 0.26983, "ε = ∞"),
    Case("rappor", "Rappor", 1, _R, False, 0.40008, 0.29298, 0.30080, "correct (6 bits: 0.30)"),
    Case(
        "one_time_rappor", "OneTimeRappor", 1, _R, False, 0.80067, 0.59778, 0.59990,
        "correct (6 bits differ: 0.60)",
    ),
    Case("laplace_parallel", "LaplaceParallel", 1, _R, False, 0.1, 0.03495, 0.02987, "correct"),
    Case("svt34_parallel", "SVT34Parallel", 10, _R, True, 0.1, 0.26104, 0.26162, "ε = ∞"),
    Case("prefix_sum", "PrefixSum", 10, _R, True, 0.1, 0.50401, 0.57743, "ε = 1.0"),
    Case("numerical_svt", "NumericalSVT", 10, _R, True, 0.1, 0.03432, 0.03450, "correct"),
)  # fmt: skip


def dpsniper_input_pairs(case: Case) -> tuple[InputPair, ...]:
    """DP-Sniper's PatternGenerator pairs (unordered; the audit tries both directions).

    Single-entry neighbourhood: "first lowered" and "first raised" only; the
    component-wise one adds the other six StatDP shapes (Ding et al. 2018, §4.3).
    Values are clipped to the domain, as DP-Sniper does.
    """
    shapes = statdp_patterns(case.dim, 1.0, 2.0, 0.0)
    if not case.component_wise:
        shapes = shapes[:2]
    lo, hi = case.domain
    return tuple(
        InputPair(np.clip(a, lo, hi), np.clip(b, lo, hi), f"dp-sniper pattern: {name}")
        for name, a, b in shapes
    )


#: ``--inputs``: DP-Sniper's pairs on its domain; the unit box alone; DP-Sniper's pairs in it.
INPUTS = ("dpsniper", "box", "box-pairs")
#: The plain box of ``--inputs box`` / ``box-pairs``: any two of its points are neighbours.
UNIT_BOX = (0.0, 1.0)


def box_input_pairs(case: Case) -> tuple[InputPair, ...]:
    """DP-Sniper's pairs moved inside the unit box, keeping every entry's step ``x'_i − x_i``.

    A raised entry becomes ``(0, 1)``, a lowered one ``(1, 0)`` and an unchanged one
    keeps its value (clipped to the box): DP-Sniper's "first lowered, rest raised"
    ``(1,1,1,1,1)/(0,2,2,2,2)`` becomes ``(1,0,0,0,0)/(0,1,1,1,1)``.
    """
    lo, hi = UNIT_BOX
    out = []
    for p in dpsniper_input_pairs(case):
        a, b = np.asarray(p.x), np.asarray(p.x_prime)
        keep = np.clip(a, lo, hi)
        x = np.where(b > a, lo, np.where(b < a, hi, keep))
        xp = np.where(b > a, hi, np.where(b < a, lo, keep))
        out.append(InputPair(x, xp, p.origin + " (in the unit box)"))
    return tuple(dedupe(out, ordered=False))


def case_pairs(case: Case, inputs: str) -> tuple[InputPair, ...]:
    """The pairs given to the audit for ``--inputs`` (none for ``box``)."""
    if inputs == "box":
        return ()
    return box_input_pairs(case) if inputs == "box-pairs" else dpsniper_input_pairs(case)


def black_box(case: Case, inputs: str = "dpsniper") -> Any:
    """The mechanism as ``dpaudit audit dpsniper_mechanisms:NAME`` builds it (no density)."""
    import dpaudit.adapters.callable  # noqa: F401  (registers the ``callable`` adapter)

    return make_mechanism(
        "callable",
        epsilon=case.claimed,
        target=f"dpsniper_mechanisms:{case.function}",
        domain=case.domain if inputs == "dpsniper" else UNIT_BOX,
        dim=case.dim,
    )


def case_config(
    case: Case,
    inputs: str,
    samples: int,
    final: int,
    mode: str = "dpaudit",
    pair_search: bool = True,
    ladder_bar: str = SearchConfig.ladder_bar,
) -> AuditConfig:
    """The audit's settings for ``--inputs``: the given pairs, and patterns only without them."""
    given = case_pairs(case, inputs)
    return AuditConfig(
        samples,
        final,
        confidence=DPSNIPER_CONFIDENCE,
        mode=mode,
        pairs=given,
        use_patterns=not given,
        # DP-Sniper reads outputs as real numbers and its suite adds noise in bare float64,
        # so like with like: the values only (the float-bits sets would find ε = ∞).
        search=SearchConfig(pair_search=pair_search, ladder_bar=ladder_bar, representation=False),
    )


def command(case: Case, samples: int, final: int, mode: str, inputs: str = "dpsniper") -> str:
    """The CLI line that runs the same audit (from ``benchmarks/``)."""
    pairs = " ".join(
        "--pair '"
        + ",".join(f"{v:g}" for v in p.x)
        + ";"
        + ",".join(f"{v:g}" for v in p.x_prime)
        + "'"
        for p in case_pairs(case, inputs)
    )
    lo, hi = case.domain if inputs == "dpsniper" else UNIT_BOX
    m = "" if mode == "dpaudit" else f" --mode {mode}"
    given = f" {pairs} --no-patterns" if pairs else ""
    return (
        f"(cd benchmarks; dpaudit audit dpsniper_mechanisms:{case.function} "
        f"--epsilon {case.claimed:.6g} "
        f"--domain {lo:g},{hi:g} -p dim={case.dim}{given} --samples {samples} "
        f"--final-samples {final} --confidence {DPSNIPER_CONFIDENCE}{m} --workers 1 --seed S)"
    )


def run_case(
    case: Case,
    mode: str,
    samples: int,
    final: int,
    seeds: int,
    execution: ExecutionConfig,
    first_seed: int = 0,
    inputs: str = "dpsniper",
    pair_search: bool = True,
    ladder_bar: str = SearchConfig.ladder_bar,
) -> dict[str, Any]:
    """Audit ``case`` for seeds first_seed.. (``seeds`` of them) and summarise.

    The summary is min / median / max, never the best seed alone.
    """
    mech = black_box(case, inputs)
    cfg = case_config(case, inputs, samples, final, mode, pair_search, ladder_bar)
    bar = cfg.search.effective_ladder_bar(samples, final)  # "auto" resolved by the sizes
    bounds, walls, witnesses, certified, face_bar, stages = [], [], [], [], [], []
    for seed in range(first_seed, first_seed + seeds):
        t0 = time.perf_counter()
        r = audit(mech, dataclasses.replace(cfg, seed=seed), execution)
        walls.append(time.perf_counter() - t0)
        bounds.append(float(r.epsilon_lower_bound))
        w = r.witness
        witnesses.append(
            None
            if w is None
            else f"{w.attack.family} {w.attack.set_description} on {list(w.x)}/{list(w.x_prime)} "
            f"p1 {w.p1.hits}/{w.p1.samples} p2 {w.p2.hits}/{w.p2.samples}"
        )
        # Every set certified together, and (projected bar) the bound the face bar
        # would have given on the same seed: the same counts, without the rungs it drops.
        detail = r.to_dict()["detail"]
        certified.append(detail.get("certified", []))
        stages.append(r.timing)  # wall seconds per stage (and total): where the time goes
        if bar == "projected" and r.detail.certified:
            face_bar.append(
                r.detail.recertified(r.detail.kept_by_face_bar, cfg.confidence, r.claimed_delta)
            )
        print(
            f"  {case.name} [{mode}, {inputs}] seed {seed}: "
            f"ε_lcb {bounds[-1]:.5f}  {walls[-1]:.1f} s",
            flush=True,
        )
    med = statistics.median(bounds)
    row = {
        "case": case.name,
        "dpsniper_name": case.dpsniper_name,
        "kind": "black-box" if mode == "dpaudit" else "black-box (DP-Sniper mode)",
        "mode": mode,
        "inputs": inputs,
        "pair_search": pair_search,
        "ladder_bar": bar,
        "claimed_epsilon": case.claimed,
        "truth": case.truth,
        "samples": samples,
        "final_samples": final,
        "full_size": samples >= DPSNIPER_SAMPLES and final >= DPSNIPER_FINAL_SAMPLES,
        "confidence": DPSNIPER_CONFIDENCE,
        "seeds": seeds,
        "first_seed": first_seed,
        "epsilon_lcb": bounds,
        "epsilon_lcb_min": min(bounds),
        "epsilon_lcb_median": med,
        "epsilon_lcb_max": max(bounds),
        "violation_seeds": sum(b > case.claimed for b in bounds),
        "dpsniper_published": case.published,
        "dpsniper_published_reg": case.published_reg,
        "dpsniper_published_mlp": case.published_mlp,
        "dpsniper_violation": case.published > case.claimed,
        "min_at_least_dpsniper": min(bounds) >= case.published,
        "mean_wall_seconds": round(statistics.mean(walls), 1),
        "command": command(case, samples, final, mode, inputs),
        "witnesses": witnesses,
        "certified": certified,
        "stage_seconds": stages,
    }
    if face_bar:
        row["epsilon_lcb_face_bar"] = face_bar
    print(
        f"{case.name:20s} [{row['kind']}] claim {case.claimed:.4g}  DP-Sniper {case.published:.4f}"
        f"  ours min {min(bounds):.4f} med {med:.4f} max {max(bounds):.4f}  violation "
        f"{row['violation_seeds']}/{seeds} (DP-Sniper: {row['dpsniper_violation']})  "
        f"≥ DP-Sniper: {row['min_at_least_dpsniper']}  {row['mean_wall_seconds']} s/seed",
        flush=True,
    )
    return row


def markdown_table(path: str, peer_path: str | None = None) -> str:
    """Markdown table of the dpaudit-mode rows in ``path`` (JSON lines).

    With ``peer_path`` (rows of ``--mode dpsniper`` at the same sizes) a column
    gives our implementation of DP-Sniper's procedure beside ours.
    """
    import json

    def load(p: str) -> dict[str, dict[str, Any]]:
        with open(p) as fh:
            return {r["case"]: r for r in (json.loads(line) for line in fh if line.strip())}

    rows, peers = load(path), load(peer_path) if peer_path else {}
    head = (
        "| mechanism | truth | claimed ε | DP-Sniper published (reg / mlp) "
        "| ours: min / median / max | ours ≥ published (min) | violation: ours / DP-Sniper |"
    )
    rule = "|---|---|---|---|---|---|---|"
    if peers:
        head += " DP-Sniper mode, same sizes |"
        rule += "---|"
    lines = [head, rule]
    for r in rows.values():
        line = (
            f"| {r['dpsniper_name']} | {r['truth']} | {r['claimed_epsilon']:.4g} "
            f"| {r['dpsniper_published_reg']:.4f} / {r['dpsniper_published_mlp']:.4f} "
            f"| {r['epsilon_lcb_min']:.4f} / {r['epsilon_lcb_median']:.4f} / "
            f"{r['epsilon_lcb_max']:.4f} | {'yes' if r['min_at_least_dpsniper'] else 'no'} "
            f"| {r['violation_seeds']}/{r['seeds']} / "
            f"{'yes' if r['dpsniper_violation'] else 'no'} |"
        )
        if peers:
            p = peers.get(r["case"])
            line += f" {p['epsilon_lcb_median']:.4f} |" if p else " — |"
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the selected cases and print one summary line per case and mode."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [c.name for c in CASES]
    parser.add_argument("--only", default=",".join(names), help="comma-separated case names")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per case (default 3)")
    parser.add_argument(
        "--first-seed", type=int, default=0, help="seeds FIRST..FIRST+N-1 (default 0)"
    )
    parser.add_argument("--samples", type=int, default=DPSNIPER_SAMPLES)
    parser.add_argument("--final-samples", type=int, default=DPSNIPER_FINAL_SAMPLES)
    parser.add_argument("--mode", choices=("dpaudit", "dpsniper", "both"), default="dpaudit")
    parser.add_argument(
        "--inputs", choices=INPUTS, default="dpsniper", help="pairs audited (module docstring)"
    )
    parser.add_argument(
        "--no-pair-search",
        action="store_true",
        help="switch the adaptive pair search off (SearchConfig.pair_search)",
    )
    parser.add_argument(
        "--ladder-bar",
        choices=LADDER_BARS,
        default=SearchConfig.ladder_bar,
        help="what a ladder rung must beat to be certified (SearchConfig.ladder_bar; "
        "default %(default)s)",
    )
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--json", default=None, metavar="FILE", help="append rows as JSON lines")
    parser.add_argument(
        "--table",
        default=None,
        metavar="FILE[,PEER]",
        help="print FILE (and PEER, DP-Sniper-mode rows) as a Markdown table",
    )
    args = parser.parse_args(argv)
    if args.table:
        print(markdown_table(*args.table.split(",", 1)))
        return 0
    progress.ENABLED = False
    sys.path.insert(0, str(HERE))  # dpsniper_mechanisms importable by name
    only = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = set(only) - set(names)
    if unknown:
        parser.error(f"unknown case(s) {sorted(unknown)}; known: {', '.join(names)}")
    modes = ("dpaudit", "dpsniper") if args.mode == "both" else (args.mode,)
    ex = ExecutionConfig(workers=args.workers)
    missed = []
    for case in (c for c in CASES if c.name in only):
        for mode in modes:
            row = run_case(
                case,
                mode,
                args.samples,
                args.final_samples,
                args.seeds,
                ex,
                args.first_seed,
                args.inputs,
                not args.no_pair_search,
                args.ladder_bar,
            )
            if args.json:
                with open(args.json, "a") as fh:
                    fh.write(dumps(row, indent=None) + "\n")
            if mode == "dpaudit" and row["dpsniper_violation"] and not row["violation_seeds"]:
                missed.append(case.name)
    if missed:
        print(f"violations DP-Sniper finds, no seed found: {', '.join(missed)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
