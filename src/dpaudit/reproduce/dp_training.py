"""DP training: claimed vs audited ε for the correct and each broken DP-SGD, and the bound's reach.

The trainer is dpaudit's numpy DP-SGD (:class:`~dpaudit.mechanisms.training.dpsgd.DPSGD`;
Abadi et al., CCS 2016, Alg. 1) at σ = 2 for 500 steps, q = 0.032, and its claim is always
what its own accountant reports (Mironov, Talwar & Zhang 2019): (1.694, 10⁻⁵)-DP, or 0.187
for ``wrong-rate``, whose accountant is told q/10.  Each planted flaw (:data:`FLAWS`) is an
implementation bug that audits of DP-SGD have found (sources in the trainer's docstring).

* **Panel A** — for the correct trainer and each flaw, the one-run audit (Steinke, Nasr &
  Jagielski, NeurIPS 2023; Dirac gradient canaries of Nasr et al., USENIX Security 2023) at
  several seeds: the claimed ε beside the spread of the certified ε_lcb (median, min–max —
  never the best seed), and one Opacus row (:class:`OpacusClassifier`, Yousefpour et al.
  2021) where Opacus imports; and shuffle-as-poisson once more, by the multi-run audit on
  a crafted background of gradient records opposite the canary
  (:mod:`~dpaudit.auditors.training.multi_run`; Chua et al., ICML 2024), where fixed-size
  batches show.
* **Panel B** — the correct trainer's ε_lcb and the grid's ceiling (all guesses right)
  against the number of canaries and of pooled runs, and the multi-run audit (Nasr et al.
  2021/2023: trainings with and without one canary, thresholds certified by Clopper–Pearson)
  at a few run counts.  A correct trainer's bound must stay below its claim; how close it
  comes is the audit's power, not its privacy.

Measured 2026-12-01 on 2 idle cores, ε_lcb median (min–max): quick (2 seeds, 1000
canaries; 26 s): none 0.34 (0.30–0.39) against the claimed 1.69; batch-clip, reused-noise and
accumulation-without-noise 4.07, unscaled-noise 3.99 (3.97–4.02), all violations, at the
ceiling of 4.07; wrong-rate 0.34 against its claimed 0.187 (violation); shuffle-as-poisson
0.11 (0.05–0.17), not flagged; Opacus 0.03 (0–0.06) against 0.72.  Paper (5 seeds,
5000 canaries; 120 s): none 0.36 (0.28–0.41); batch-clip, reused-noise and
accumulation-without-noise 3.91, unscaled-noise 3.83 (3.81–3.86), at that size's ceiling of
3.91 (the bound's 2mδ term lowers it as canaries grow); wrong-rate 0.36 against 0.187, flagged
on 5 of 5 seeds; shuffle-as-poisson 0.33 (0.28–0.36), not flagged; Opacus 0.08 against 0.72;
multi-run (thresholds on the likelihood-ratio trace score) ε ≥ 0.07, 0.20 and
0.19 at 300, 600 and 1200 runs.
The multi-run audit at 600 runs (≈ 1200 trainings) is left to the paper scale.  The
crafted-background audit of shuffle-as-poisson (1200 runs per world, the same audits as
seeds 0 and 1 of ``benchmarks/crafted_background.py``) certified ε ≥ 2.35 and 2.75 against
1.69 (2026-12-02); with it the quick scale took 45 s on 2 workers.

Every audit is one work unit (:func:`~dpaudit.engine.executor.run_units`), longest first, so
``--workers`` spreads them and a checkpointed run resumes per audit.
"""

from __future__ import annotations

import importlib.util
import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.auditors.profile import ProfileAuditConfig, ProfileAuditor
from dpaudit.auditors.training.claim_point import claimed_point
from dpaudit.auditors.training.multi_run import PREFERRED_SCORE, MultiRunConfig, plan_multi_run
from dpaudit.auditors.training.one_run import OneRunConfig, audit_one_run
from dpaudit.engine.config import ExecutionConfig
from dpaudit.engine.executor import run_units
from dpaudit.mechanisms.training.dpsgd import DPSGD, FLAWS
from dpaudit.mechanisms.training.opacus_classifier import OpacusClassifier
from dpaudit.reproduce import common
from dpaudit.reproduce.common import (
    INCONCLUSIVE,
    NOT_AT_THIS_SCALE,
    AuditRecord,
    FigureResult,
    FigureRun,
    Finding,
)
from dpaudit.reproduce.dp_training_plot import plot
from dpaudit.reproduce.dp_training_report import readme, spread_of, words
from dpaudit.reproduce.registry import FigureSpec
from dpaudit.results.audit import AuditResult
from dpaudit.verdicts import Verdict

NAME = "dp-training"
TITLE = "DP training: claimed vs audited ε of the correct and each broken DP-SGD"
PAPER = (
    "Steinke, Nasr & Jagielski, NeurIPS 2023 (one-run audit); Nasr et al., USENIX Security "
    "2021 and 2023 (multi-run audit, gradient canaries); Abadi et al., CCS 2016 (DP-SGD)"
)
NOISE, STEPS, DELTA, CONFIDENCE = 2.0, 500, 1e-5, 0.95
#: Extra trainer fields per flaw: the factor C is only missing when C ≠ 1, and
#: shuffle-as-poisson trains on shuffled batches.
VARIANTS: dict[str, dict[str, Any]] = {
    flaw: {
        "unscaled-noise": {"clip_norm": 10.0},
        "shuffle-as-poisson": {"sampling": "shuffle"},
    }.get(flaw, {})
    for flaw in FLAWS
}
#: Panel A's row of the multi-run audit of shuffle-as-poisson on the crafted background.
CRAFTED_LABEL = "dpsgd shuffle-as-poisson (multi-run, crafted background)"
#: Flaws whose loss the one-run audit should see at 1000 canaries (measured 2026-12-01).
VISIBLE = (
    "batch-clip",
    "unscaled-noise",
    "wrong-rate",
    "reused-noise",
    "accumulation-without-noise",
)


@dataclass(frozen=True)
class Sizes:
    """One scale: ``seeds`` per cell; ``canaries`` of panel A; panel B's canary counts,
    pooled runs (at ``canaries``) and multi-run trainings per world; DP-SGD ``steps``
    (500 except at the tiny smoke test); whether the Opacus row is run; ``crafted``: trainings
    per world of the multi-run audit of shuffle-as-poisson on the crafted opposing
    background (:mod:`dpaudit.auditors.training.multi_run`), 0 for none."""

    seeds: int
    canaries: int
    sweep: tuple[int, ...]
    pooled: tuple[int, ...]
    multi: tuple[int, ...]
    steps: int = STEPS
    opacus: bool = True
    crafted: int = 0


SIZES: dict[str, Sizes] = {
    "tiny": Sizes(1, 200, (100, 200), (1, 2), (300,), steps=10, opacus=False, crafted=300),
    "quick": Sizes(2, 1000, (250, 500, 1000, 2000), (1, 2, 4), (300,), crafted=1200),
    "paper": Sizes(
        5, 5000, (250, 500, 1000, 2000, 5000, 10000), (1, 2, 4), (300, 600, 1200), crafted=1200
    ),
}


@dataclass(frozen=True)
class Cell:
    """One audit: ``trainer`` (dpsgd or opacus) with ``flaw``, ``method`` one-run (with
    ``canaries`` per run, ``runs`` pooled) or multi-run (``runs`` trainings per world), on
    the trainer's own data or (``background="opposing"``) the crafted one."""

    trainer: str
    flaw: str
    method: str
    canaries: int
    runs: int
    seed: int
    steps: int
    background: str = "data"

    @property
    def label(self) -> str:
        """The variant's name in tables and the report."""
        if self.trainer == "opacus":
            return "opacus (correct)"
        if self.background == "opposing":
            return (
                CRAFTED_LABEL
                if self.flaw == "shuffle-as-poisson"
                else f"dpsgd {self.flaw} (crafted)"
            )
        return f"dpsgd {self.flaw}"


def trainer(cell: Cell) -> Any:
    """The trainer of ``cell``: canary coordinates enough for its canaries (one each)."""
    coords = 1 if cell.background == "opposing" else max(1000, cell.canaries)
    if cell.trainer == "opacus":
        return OpacusClassifier(noise_multiplier=NOISE, canary_coordinates=coords)
    return DPSGD(
        noise_multiplier=NOISE,
        steps=cell.steps,
        flaw=cell.flaw,
        canary_coordinates=coords,
        **VARIANTS[cell.flaw],
    )


def audit_cell(cell: Cell) -> dict[str, Any]:
    """Run one audit in this process (one worker): the result's JSON form and the seconds."""
    start = time.perf_counter()
    mech, inline = trainer(cell), ExecutionConfig(workers=1)
    if cell.method == "one-run":
        cfg = OneRunConfig(
            canaries=cell.canaries,
            runs=cell.runs,
            confidence=CONFIDENCE,
            seed=cell.seed,
            execution=inline,
        )
        result = audit_one_run(mech, None, cfg)
    else:  # what dpaudit.api.audit_training(method="multi-run") runs
        crafted = cell.background == "opposing"  # every trace score, and the fitted one
        multi = MultiRunConfig(
            runs=cell.runs,
            confidence=CONFIDENCE,
            seed=cell.seed,
            score=None if crafted else PREFERRED_SCORE,
            background=cell.background,
        )
        plan = plan_multi_run(mech, claimed_point(mech.claim, DELTA)[0], multi)
        auditor = ProfileAuditor(
            plan.x,
            plan.x_prime,
            plan.score,
            pair_origin=plan.pair_origin,
            claim_source="the trainer's accountant",
        )
        profile = ProfileAuditConfig(**plan.profile_sizes, execution=inline)
        result = auditor.audit(plan.game, mech.claim, profile, None)
    return {"audit": result.to_dict(), "seconds": time.perf_counter() - start}


def opacus_missing() -> str | None:
    """Why the Opacus row cannot run here, or None when torch and opacus import."""
    missing = [m for m in ("torch", "opacus") if importlib.util.find_spec(m) is None]
    return f"{' and '.join(missing)} not installed (extra opacus)" if missing else None


def cells(scale: str, seed: int) -> tuple[list[Cell], str | None]:
    """Every audit of ``scale`` (longest first, each once) and why Opacus is skipped, if it is."""
    s = SIZES[scale]
    seeds = [seed + i for i in range(s.seeds)]
    out = [Cell("dpsgd", "none", "multi-run", 1, r, seed, s.steps) for r in sorted(s.multi)[::-1]]
    skipped = None if s.opacus else "not run at the tiny scale (a smoke test)"
    skipped = skipped or opacus_missing()
    if skipped is None:
        out += [Cell("opacus", "none", "one-run", s.canaries, 1, k, s.steps) for k in seeds]
    out += [Cell("dpsgd", f, "one-run", s.canaries, 1, k, s.steps) for f in FLAWS for k in seeds]
    out += [
        Cell("dpsgd", "none", "one-run", s.canaries, r, k, s.steps) for r in s.pooled for k in seeds
    ]
    out += [Cell("dpsgd", "none", "one-run", m, 1, k, s.steps) for m in s.sweep for k in seeds]
    if s.crafted:  # long: first, so that they do not finish last
        crafted = [
            Cell("dpsgd", "shuffle-as-poisson", "multi-run", 1, s.crafted, k, s.steps, "opposing")
            for k in seeds
        ]
        out = crafted + out
    return list(dict.fromkeys(out)), skipped


def compute(run: FigureRun) -> FigureResult:
    """Every audit of the scale as one work unit each; rows, summaries and findings."""
    s = SIZES[run.scale]
    todo, skipped = cells(run.scale, run.seed)
    run.progress.start(len(todo))
    with run.stage("audits"):
        outs = run_units(audit_cell, todo, run.execution, desc="DP-SGD audits",
                         on_result=lambda _i, _r: run.progress.advance())  # fmt: skip
    audits = {c: AuditResult.from_dict(o["audit"]) for c, o in zip(todo, outs, strict=True)}
    rows = [_row(c, audits[c], o["seconds"], s) for c, o in zip(todo, outs, strict=True)]
    if skipped is not None:
        rows.append({"panel": "A", "variant": "opacus (correct)", "trainer": "opacus",
                     "method": "one-run", "verdict": "skipped", "skipped": skipped})  # fmt: skip
    variants = _variant_summary(rows)
    records = [_record(c, audits[c], variants) for c in todo if _is_record(c, run.seed, s)]
    return common.add_words(
        run.result(
            parameters={
                "trainer": f"DPSGD(noise_multiplier={NOISE:g}, steps={s.steps}), q = 0.032",
                "variants": {f: dict(kw) for f, kw in VARIANTS.items()},
                "delta": DELTA,
                "confidence": CONFIDENCE,
                "seeds": [run.seed + i for i in range(s.seeds)],
                "canaries_sweep": list(s.sweep),
                "pooled_runs": list(s.pooled),
                "multi_run_runs": list(s.multi),
                "crafted_background_runs": s.crafted,
                "opacus": skipped or "OpacusClassifier(2.0)",
            },
            sample_counts={"audits": len(todo), "canaries": s.canaries, "seeds": s.seeds},
            rows=tuple(rows),
            findings=tuple(_findings(variants, rows, skipped)),
            audits=tuple(records),
            notes=(f"Opacus row skipped: {skipped}",) if skipped else (),
            extra={"variants": variants},
        ),
        *words(),
    )  # fmt: skip


def _multi_ceiling(detail: Any, runs: int) -> float:
    """Largest ε the multi-run certifier could show at δ: every final run on the right side."""
    n = runs - runs // 3
    top = float(clopper_pearson_lower(n, n, detail.error_per_bound))
    bottom = float(clopper_pearson_upper(0, n, detail.error_per_bound))
    return math.log((top - DELTA) / bottom)


def _row(cell: Cell, audit: AuditResult, seconds: float, s: Sizes) -> dict[str, Any]:
    detail = audit.detail
    panels = []
    if cell.background == "opposing":
        panels.append("A")
    elif cell.method == "multi-run":
        panels.append("B-multi-run")
    else:
        if cell.runs == 1 and cell.canaries == s.canaries:
            panels.append("A")
        if cell.trainer == "dpsgd" and cell.flaw == "none":
            panels += ["B-canaries"] if cell.runs == 1 and cell.canaries in s.sweep else []
            panels += ["B-runs"] if cell.canaries == s.canaries and cell.runs in s.pooled else []
    one_run = cell.method == "one-run"
    true_event = None if cell.trainer == "opacus" else trainer(cell).true_event
    accounted = (
        None
        if true_event is None or true_event.sampling != "poisson"
        else (true_event.approx_claim(DELTA).epsilon)
    )
    return {
        "panel": " ".join(panels),
        "variant": cell.label,
        "trainer": cell.trainer,
        "flaw": cell.flaw,
        "method": cell.method,
        "background": cell.background,
        "seed": cell.seed,
        "canaries": cell.canaries if one_run else 1,
        "runs": cell.runs,
        "total_canaries": cell.canaries * cell.runs if one_run else 1,
        "claimed_epsilon": audit.claimed_epsilon,
        "epsilon_lower_bound": audit.epsilon_lower_bound,
        "ceiling": detail.ceiling if one_run else _multi_ceiling(detail, cell.runs),
        "mu_lower_bound": None if one_run else detail.mu_lower_bound,
        "verdict": audit.verdict.value,
        "violation": audit.verdict is Verdict.VIOLATION,
        "accounted_epsilon_of_true_training": accounted,
        "seconds": round(seconds, 3),
    }


def _variant_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per panel-A variant: claimed ε, ε_lcb's median/min/max over seeds, seeds flagged."""
    out: dict[str, dict[str, Any]] = {}
    labels = dict.fromkeys(r["variant"] for r in rows if "A" in r["panel"].split())
    # DP-SGD's one-run rows first, then the crafted background's, then Opacus
    for label in sorted(labels, key=lambda k: (k.startswith("opacus"), "crafted" in k)):
        mine = [r for r in rows if r["variant"] == label and "A" in r["panel"].split()]
        if mine[0].get("verdict") == "skipped":
            out[label] = {"skipped": mine[0]["skipped"]}
            continue
        out[label] = {
            "flaw": mine[0]["flaw"],
            "claimed_epsilon": mine[0]["claimed_epsilon"],
            "ceiling": mine[0]["ceiling"],
            "accounted_true": mine[0]["accounted_epsilon_of_true_training"],
            "seeds": len(mine),
            "flagged": sum(r["violation"] for r in mine),
            **spread_of([r["epsilon_lower_bound"] for r in mine]),
        }
    return out


def _is_record(cell: Cell, seed: int, s: Sizes) -> bool:
    """A report card for the first seed's panel-A audits and the largest multi-run audit."""
    if cell.background == "opposing":
        return cell.seed == seed
    if cell.method == "multi-run":
        return cell.runs == max(s.multi)
    return cell.seed == seed and cell.runs == 1 and cell.canaries == s.canaries


def _record(cell: Cell, audit: AuditResult, variants: dict[str, Any]) -> AuditRecord:
    detail = audit.detail
    if cell.method == "one-run":
        top = detail.rules[detail.best]
        v = variants[cell.label]
        lines = {
            "best guess rule": f"{top.positive} in / {top.negative} out on score {top.score!r}, "
            f"{top.correct} of {top.guesses} correct",
            "certified": f"ε ≥ {audit.epsilon_lower_bound:.3g} (ceiling {detail.ceiling:.3g})",
            "over seeds": f"median {v['median']:.3g} (min {v['min']:.3g} – max {v['max']:.3g}), "
            f"flagged in {v['flagged']} of {v['seeds']}; this card: seed {cell.seed}",
            "canaries": detail.canary_description,
        }
        method = "one-run audit, Dirac gradient canaries (Steinke, Nasr & Jagielski 2023)"
    else:
        lines = {
            "trainings": f"{cell.runs} with and {cell.runs} without one gradient canary"
            + (
                f", on {len(trainer(cell).base)} opposing gradient records"
                if cell.background == "opposing"
                else ""
            ),
            "certified": f"ε ≥ {audit.epsilon_lower_bound:.3g}, μ ≥ {detail.mu_lower_bound:.3g}",
        }
        method = "multi-run audit, thresholds certified by Clopper–Pearson (Nasr et al. 2023)"
    params = {
        "flaw": cell.flaw,
        "method": cell.method,
        "seed": cell.seed,
        "runs": cell.runs,
        "canaries": cell.canaries,
        "background": cell.background,
        **VARIANTS.get(cell.flaw, {}),
    }
    return AuditRecord(
        mechanism=f"{cell.label}"
        + ("" if cell.method == "one-run" else f" (multi-run, {cell.runs} runs)"),
        parameters=params,
        true_epsilon=None,
        truth_method=None,
        method=method,
        audit=audit,
        witness_lines=lines,
    )


def _crafted_finding(variants: dict[str, Any], spread: Any) -> Finding:
    statement = "shuffle-as-poisson on a crafted background (multi-run) is flagged at every seed"
    crafted = variants.get(CRAFTED_LABEL)
    if crafted is None:
        return Finding(statement, False, "not run at this scale", status=NOT_AT_THIS_SCALE)
    seen = crafted["flagged"] == crafted["seeds"]
    return Finding(
        statement,
        seen,
        spread(crafted) + "; 1000 gradient records opposite the canary, trace score fitted on "
        "pilot runs (Chua et al., ICML 2024 build their lower bounds on such data)",
        status="" if seen else INCONCLUSIVE,
    )


def _findings(
    variants: dict[str, Any], rows: list[dict[str, Any]], skipped: str | None
) -> list[Finding]:
    def v(flaw: str) -> dict[str, Any]:
        return variants[f"dpsgd {flaw}"]

    def spread(x: dict[str, Any]) -> str:
        return (
            f"ε_lcb median {x['median']:.3g} (min {x['min']:.3g}, max {x['max']:.3g}) vs "
            f"claimed {x['claimed_epsilon']:.3g}, flagged in {x['flagged']}/{x['seeds']}"
        )

    good = v("none")
    out = [
        Finding("the correct DP-SGD is not flagged at any seed", good["flagged"] == 0, spread(good))
    ]
    for flaw in VISIBLE:
        x = v(flaw)
        out.append(
            Finding(
                f"{flaw} over-claims and is flagged at every seed",
                x["flagged"] == x["seeds"],
                spread(x),
            )
        )
    shuffle = v("shuffle-as-poisson")
    seen = shuffle["flagged"] == shuffle["seeds"]
    out.append(
        Finding(
            "shuffle-as-poisson (Chua et al., ICML 2024) is flagged by the one-run audit",
            seen,
            spread(shuffle)
            + "; on the trainer's own data its loss over the Poisson number is too small for "
            "these canaries (the crafted background's row)",
            status="" if seen else INCONCLUSIVE,
        )
    )
    out.append(_crafted_finding(variants, spread))
    correct = [r for r in rows if r.get("flaw") == "none" and r.get("trainer") == "dpsgd"]
    sweep = [r for r in correct if r["method"] == "one-run"]
    by_total = {t: [r for r in sweep if r["total_canaries"] == t] for t in
                sorted({r["total_canaries"] for r in sweep})}  # fmt: skip
    medians = ", ".join(
        f"{t}: {statistics.median(r['epsilon_lower_bound'] for r in rs):.3g}"
        for t, rs in by_total.items()
    )
    out.append(
        Finding(
            "the correct DP-SGD's one-run bound stays below its claim at every number of "
            "canaries and of pooled runs",
            not any(r["violation"] for r in sweep),
            f"median ε_lcb by canaries in the game {medians}; claimed "
            f"{good['claimed_epsilon']:.3g}; ceiling {min(r['ceiling'] for r in sweep):.3g}–"
            f"{max(r['ceiling'] for r in sweep):.3g}",
        )
    )
    multi = [r for r in correct if r["method"] == "multi-run"]
    out.append(
        Finding(
            "the multi-run audit does not flag the correct DP-SGD",
            not any(r["violation"] for r in multi),
            "; ".join(f"{r['runs']} runs: ε ≥ {r['epsilon_lower_bound']:.3g}" for r in multi),
        )
    )
    if skipped is None:
        o = variants["opacus (correct)"]
        out.append(
            Finding("Opacus (correct) is not flagged at any seed", o["flagged"] == 0, spread(o))
        )
    else:
        out.append(
            Finding(
                "Opacus (correct) is not flagged",
                False,
                f"skipped: {skipped}",
                status=NOT_AT_THIS_SCALE,
            )
        )
    return out


FIGURE = FigureSpec(
    NAME, TITLE, PAPER, compute, plot, readme, {"tiny": 3, "quick": 45, "paper": 200}
)
