"""The words and tables of the ``dp-training`` figure (:mod:`dpaudit.reproduce.dp_training`).

Everything here reads the finished :class:`~dpaudit.reproduce.common.FigureResult` only:
scope, what the figure shows, the method, how it differs from the papers, the report's two
tables and the README with what each bound assumes.
"""

from __future__ import annotations

import statistics
from typing import Any

from dpaudit.auditors.training.one_run import ASSUMPTIONS
from dpaudit.reproduce import common
from dpaudit.reproduce.common import FigureResult


def spread_of(values: list[float]) -> dict[str, float]:
    """Median, min and max: the spread over seeds every table shows."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _scope(result: FigureResult) -> str:
    p, n = result.parameters, result.sample_counts
    return (
        f"{p['trainer']}; {n['seeds']} seeds per cell, {n['canaries']} canaries in panel A, "
        f"{n['audits']} audits in all. Opacus: {p['opacus']}."
    )


def _shows(result: FigureResult) -> str:
    return (
        "Panel A: for the correct DP-SGD and each planted flaw (one-run audits, and for "
        "shuffle-as-poisson also the multi-run audit on a crafted background), the black "
        "bar is the ε the trainer's own accountant claims; the triangles are the audit's "
        "certified *lower bounds* ε_lcb over the seeds (median, with the min–max range) — "
        f"the true ε is at least ε_lcb with probability {result.parameters['confidence']:g}, "
        "and may be far above it. Red marks a "
        "violation: ε_lcb above the claim proves the claim false. A bound below the claim "
        "proves nothing: the audit can show violations and never shows privacy. Panel B: the "
        "correct trainer's ε_lcb against the canaries in the one-run game (one training, "
        "or pooled trainings) and against the trainings of the multi-run audit, with the "
        "claimed ε and the ceiling — the largest ε_lcb those sizes could certify at all."
    )


def _method(result: FigureResult) -> str:
    p = result.parameters
    return (
        f"{p['trainer']} with Dirac gradient canaries, each in training with probability 1/2 "
        "(Steinke, Nasr & Jagielski 2023, Alg. 1); every white-box trace score is tried and "
        "every guess rule that never sees the inclusion bits (a grid fixed in advance and a "
        "split at the scores' widest gap), with Bonferroni over all of them (Thm. "
        "5.2). The multi-run audit trains R times with and R times without one canary; a "
        "third of the runs choose thresholds, the rest certify them (Clopper–Pearson, "
        f"Bonferroni); ε is read at δ = {p['delta']:g}. Seeds {p['seeds']}; each audit is one "
        "work unit."
    )


def _differences(result: FigureResult) -> str:
    return (
        "- Not one paper's figure: it applies the one-run audit (Steinke et al. 2023) and the "
        "multi-run audit (Nasr et al. 2023) to a small logistic-regression DP-SGD whose "
        "flaws are planted, so the reader knows which claims are false.\n"
        "- The papers train CNNs/WideResNets on CIFAR-10 with thousands of runs; here one "
        "training takes ~0.03 s, so the figure shows the seed-to-seed spread instead.\n"
        "- The bound is Bonferroni-adjusted over the guess grid and the scores; reporting the "
        "best rule unadjusted, as the paper's code does, would overstate the confidence."
    )


def _range(x: dict[str, Any]) -> str:
    return f"{x['median']:.3g} ({x['min']:.3g}–{x['max']:.3g})"


def _variant_cells(label: str, x: dict[str, Any]) -> tuple[str, ...]:
    if "skipped" in x:
        return (label, "skipped", "—", "—", x["skipped"], "—", "—")
    truth = x["accounted_true"]
    verdict = "mixed" if 0 < x["flagged"] < x["seeds"] else (
        "VIOLATION" if x["flagged"] else "no violation found")  # fmt: skip
    return (label, f"{x['claimed_epsilon']:.3g}", "—" if truth is None else f"{truth:.4g}",
            _range(x), f"{x['ceiling']:.3g}", f"{x['flagged']} of {x['seeds']}",
            verdict)  # fmt: skip


def _tables(result: FigureResult) -> tuple[common.ReportTable, ...]:
    variants = result.extra["variants"]
    a = tuple(_variant_cells(label, x) for label, x in variants.items())
    correct = [r for r in result.rows if r.get("flaw") == "none" and r.get("trainer") == "dpsgd"]
    b = []
    for method, canaries, runs in dict.fromkeys(
        (r["method"], r["canaries"], r["runs"]) for r in correct if r["panel"] != "A"
    ):
        mine = [
            r
            for r in correct
            if (r["method"], r["canaries"], r["runs"]) == (method, canaries, runs)
        ]
        x = spread_of([r["epsilon_lower_bound"] for r in mine])
        b.append(
            (
                method,
                str(canaries),
                str(runs),
                _range(x),
                f"{mine[0]['ceiling']:.3g}",
                f"{mine[0]['claimed_epsilon']:.3g}",
                str(len(mine)),
            )
        )
    b.sort(key=lambda t: (t[0], int(t[2]) * int(t[1])))
    return (
        common.ReportTable(
            "Panel A: claimed ε and certified ε_lcb per variant",
            (
                "variant",
                "claimed ε (accountant)",
                "accountant on what training does",
                "ε_lcb median (min–max)",
                "ceiling",
                "flagged",
                "verdict over seeds",
            ),
            a,
            f"ε_lcb holds at confidence {result.parameters['confidence']:g} per audit; never "
            "the best seed. "
            "Accountant on what training does: the same accountant at the true noise "
            "multiplier and rate (— where no subsampled-Gaussian event describes training).",
        ),
        common.ReportTable(
            "Panel B: the correct DP-SGD against canaries, pooled runs and multi-run trainings",
            (
                "audit",
                "canaries per run",
                "runs",
                "ε_lcb median (min–max)",
                "ceiling",
                "claimed ε",
                "seeds",
            ),
            tuple(b),
            "multi-run: runs = trainings per world (with / without the canary).",
        ),
    )


def _assumptions_section() -> str:
    one = "\n".join(f"  - {a}" for a in ASSUMPTIONS)
    return (
        "## What each bound assumes, and what it cannot show\n\n"
        f"- One-run (Steinke, Nasr & Jagielski 2023, Thm. 5.2):\n{one}\n"
        "- Multi-run (Nasr et al. 2023): the trainings are independent (each from its own "
        "stream of the seed) and the claim is about adding or removing the one canary.\n"
        "- Neither assumes anything about the score or the model: a weak score costs power, "
        "never validity. White-box gradient canaries assume the adversary sees every step's "
        "privatised gradient, the threat model of DP-SGD's analysis.\n\n"
        "The audit can show violations and never shows privacy: ε_lcb below the claim means "
        "only that these canaries and runs found no loss above it (see the ceiling, and "
        "shuffle-as-poisson: shuffled batches accounted as Poisson, which Chua et al., ICML "
        "2024, show can be far less private than claimed, are not flagged by the one-run "
        "audit on the trainer's own data; the multi-run audit on a crafted background of "
        "gradient records opposite the canary flags them)."
    )


def words() -> tuple[Any, ...]:
    """What :func:`dpaudit.reproduce.common.add_words` takes, in its order."""
    return (_shows, _method, _differences, _tables, _scope)


def readme(result: FigureResult) -> str:
    """Tables, assumptions, findings."""
    return common.readme_page(
        result,
        sections=[
            common.tables_section(result),
            _assumptions_section(),
            common.findings_section(result),
        ],
    )


__all__ = ["readme", "spread_of", "words"]
