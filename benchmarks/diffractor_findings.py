"""Findings of the dp-diffractor audit: each row an audit of the released package, with witnesses.

Writes ``benchmarks/results/diffractor_findings.json``.  Rows: the geometric method
at ε = 0.5, 1, 2 and TEM at ε = 1 (pairs from the list geometry), the control
``sensitivity = 0.5`` (claim kept at ε·d: must be flagged), and a two-list
configuration whose lists hold different words (``glove,glove:20000``).  Each row
records the command that reproduces it.  ``--quick`` uses 2000-word lists and
smaller samples (≈ 2 minutes on 2 cores).

    .venv/bin/python benchmarks/diffractor_findings.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from dpaudit.adapters.diffractor import DiffractorMechanism
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig

OUT = Path(__file__).parent / "results" / "diffractor_findings.json"


def rows(lists: str, two: str) -> list[tuple[str, dict[str, object]]]:
    """(row name, mechanism parameters) of every finding."""
    base = {"embeddings": lists}
    return [
        ("geometric ε=0.5", {**base, "epsilon": 0.5}),
        ("geometric ε=1", {**base, "epsilon": 1.0}),
        ("geometric ε=2", {**base, "epsilon": 2.0}),
        ("TEM ε=1 γ=5", {**base, "epsilon": 1.0, "method": "TEM"}),
        ("control: sensitivity=0.5, ε=1", {**base, "epsilon": 1.0, "sensitivity": 0.5}),
        ("two lists, different words, ε=1", {"embeddings": two, "epsilon": 1.0}),
    ]


def command(params: dict[str, object], samples: int, final: int, pairs: int) -> str:
    """The CLI line reproducing one row."""
    method = str(params.get("method", "geometric")).lower()
    extra = " ".join(f"-p {k}={v}" for k, v in params.items() if k not in ("epsilon", "method"))
    return (
        f"dpaudit audit diffractor:{method} --epsilon {params['epsilon']} {extra} "
        f"--samples {samples} --final-samples {final} --max-pairs {pairs} --seed 0 --json"
    )


def main() -> None:
    """Run every row and write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    lists, two = (
        ("glove:2000", "glove:2000,glove:1000") if args.quick else ("glove", "glove,glove:20000")
    )
    samples, final, pairs = (2000, 10_000, 4) if args.quick else (4000, 20_000, 6)
    out = []
    for name, params in rows(lists, two):
        mech = DiffractorMechanism(**params)  # type: ignore[arg-type]
        cfg = MetricAuditConfig(samples=samples, final_samples=final, max_pairs=pairs, seed=0)
        t = time.perf_counter()
        res = audit_metric(mech, cfg, ExecutionConfig(workers=args.workers))
        detail = res.detail
        worst = detail.worst
        out.append(
            {
                "row": name,
                "params": params,
                "seconds": round(time.perf_counter() - t, 1),
                "violation": any(p.verdict == "violation" for p in detail.pairs),
                "worst": None
                if worst is None
                else {
                    "pair": [worst.w, worst.w_prime],
                    "verdict": worst.verdict,
                    "d": worst.distance,
                    "allowed_loss": worst.allowed_loss,
                    "epsilon_lcb": worst.epsilon_lower_bound,
                    "exact_loss": worst.exact_loss,
                    "witness_hits": [worst.p1.hits, worst.p2.hits],
                    "final_samples": final,
                    "confidence": cfg.confidence,
                },
                "verdicts": sorted({p.verdict for p in detail.pairs}),
                "law_check": detail.law_check,
                "command": command(params, samples, final, pairs),
            }
        )
        print(json.dumps(out[-1]["worst"]), name, flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"quick": args.quick, "rows": out}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
