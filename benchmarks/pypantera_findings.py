"""Findings of the pyPANTERA adapter: each mechanism audited at a README ε, and package probes.

Two parts, written to ``benchmarks/results/pypantera_findings.json``:

* **audits** — ``audit_metric`` of each ``pypantera:NAME`` (the 20 000 most
  frequent words of GloVe 6B 50-d, as the package loads them) at an ε of the
  README's grid (1, 5, 10, …, 50), with the pair search on, fixed seed: the
  verdict, the worst pair's ``ε_lcb`` against ``ε·d`` with its witness counts,
  and for SanText/CusText/TEM the exact losses read from the package's code
  (after their χ² check against the real draws);
* **probes** — what the package does on every input, measured directly:
  CusText's share of words whose every draw raises, TEM's outputs outside its
  γ-ball, SanText's outputs of probability exactly 0 (float32 underflow), and
  the words the package's loader drops for each core count 1–64.

Usage (from the repository root; about 16 minutes on 2 busy cores)::

    .venv/bin/python benchmarks/pypantera_findings.py [--rows CMP,TEM] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from multiprocessing.pool import ThreadPool
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.adapters.pypantera import PypanteraMechanism, embedding_file, import_pypantera
from dpaudit.analysis.word_embedding import glove_embedding
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.word.base import CRASH

#: (mechanism, ε, selection draws, final draws): ε from the README's grid.
ROWS = (
    ("CMP", 10.0, 500, 2000),
    ("Mahalanobis", 10.0, 500, 2000),
    ("VickreyCMP", 10.0, 500, 2000),
    ("VickreyMhl", 10.0, 500, 2000),
    ("SanText", 1.0, 1000, 4000),
    ("CusText", 1.0, 1000, 4000),
    ("TEM", 10.0, 1000, 4000),
)
SEED = 1
MAX_PAIRS = 4


def _num(x: float | None) -> float | str | None:
    if x is None:
        return None
    return "inf" if math.isinf(x) else round(float(x), 4)


def audit_row(name: str, eps: float, samples: int, final: int) -> dict[str, Any]:
    """One audit with the pair search; the worst pair's witness and the exact losses."""
    mech = PypanteraMechanism(epsilon=eps, mechanism=name)
    cfg = MetricAuditConfig(samples=samples, final_samples=final, seed=SEED, max_pairs=MAX_PAIRS)
    start = time.perf_counter()
    result = audit_metric(mech, cfg, ExecutionConfig(workers=1))
    seconds = time.perf_counter() - start
    pairs = [p for p in result.detail.pairs if math.isfinite(p.distance)]
    worst = max(pairs, key=lambda p: p.epsilon_lower_bound / max(p.allowed_loss, 1e-12))
    exact = [p for p in pairs if p.exact_loss is not None]
    command = (
        f"dpaudit audit pypantera:{name} --epsilon {eps:g} --samples {samples} "
        f"--final-samples {final} --max-pairs {MAX_PAIRS} --seed {SEED}"
    )
    return {
        "mechanism": f"pypantera:{name}",
        "epsilon": eps,
        "claim": result.claim,
        "verdict": result.verdict.value,
        "verdict_text": result.verdict_text,
        "confidence": result.confidence,
        "samples": {"selection": samples, "final": final},
        "worst_pair": {
            "w": worst.w,
            "w_prime": worst.w_prime,
            "d": _num(worst.distance),
            "eps_d": _num(worst.allowed_loss),
            "eps_lcb": _num(worst.epsilon_lower_bound),
            "set": list(worst.set_preview[:5]),
            "p1_hits": worst.p1.hits,
            "p2_hits": worst.p2.hits,
            "final_samples": worst.p1.samples,
            "verdict": worst.verdict.value,
            "exact_loss": _num(worst.exact_loss),
        },
        "pairs": len(pairs),
        "violating_pairs": sum(p.verdict.value == "violation" for p in pairs),
        "exact": {
            "pairs": len(exact),
            "above_eps_d": sum(p.exact_loss > p.allowed_loss * (1 + 1e-9) for p in exact),
            "infinite": sum(math.isinf(p.exact_loss) for p in exact),
            "law_check": result.detail.law_check,
        },
        "notes": list(result.notes),
        "seconds": round(seconds, 1),
        "command": command,
    }


def probe_custext(eps: float = 1.0, words: int = 2000) -> dict[str, Any]:
    """Share of the most frequent words on which every CusText draw raises."""
    mech = PypanteraMechanism(epsilon=eps, mechanism="CusText")
    v = mech.vocabulary.size
    crash = [w for w in mech.vocabulary.words[:words] if mech.output_log_probs(w)[v + CRASH] == 0.0]
    one = PypanteraMechanism(epsilon=eps, mechanism="CusText", k=1)
    k1 = int(np.sum(one.sample_codes("good", 20, np.random.default_rng(0)) == v + CRASH))
    return {
        "epsilon": eps,
        "words_checked": words,
        "always_raise": len(crash),
        "examples": crash[:8],
        "k1_good_crashes_of_20": k1,
    }


def probe_tem(eps: float = 10.0, words: int = 200) -> dict[str, Any]:
    """TEM's γ and, over the most frequent words, the law's mass outside the γ-ball."""
    mech = PypanteraMechanism(epsilon=eps, mechanism="TEM")
    lib, vocab = mech.library(), mech.vocabulary
    outside_mass, outside_words = [], []
    for w in vocab.words[:words]:
        p = np.exp(mech.output_log_probs(w))[: vocab.size]
        far = np.linalg.norm(vocab.matrix - vocab.vector(w), axis=1) > lib.gamma
        outside_mass.append(float(p[far].sum()))
        outside_words.append(int(far.sum()))
    return {
        "epsilon": eps,
        "gamma": float(lib.gamma),
        "words_checked": words,
        "max_law_mass_outside_ball": max(outside_mass),
        "median_words_outside_ball": float(np.median(outside_words)),
    }


def probe_santext(eps: float = 50.0, words: int = 200) -> dict[str, Any]:
    """Outputs with probability exactly 0 (float32 underflow of exp(−ε·d/2))."""
    mech = PypanteraMechanism(epsilon=eps, mechanism="SanText")
    zeros = [
        int(np.isneginf(mech.output_log_probs(w)[: mech.vocabulary.size]).sum())
        for w in mech.vocabulary.words[:words]
    ]
    return {"epsilon": eps, "words_checked": words, "median_zero_outputs": float(np.median(zeros))}


def probe_loader(size: int = 20_000) -> dict[str, Any]:
    """Words the package's ``Vocab`` drops, per core count (threads stand in for processes)."""
    vocab_module = sys.modules[import_pypantera("CMP").__module__.split(".")[0] + ".utils.vocab"]
    words = glove_embedding(size).words
    lost: dict[str, list[str]] = {}
    real_count, real_pool = vocab_module.mp.cpu_count, vocab_module.mp.Pool
    try:
        vocab_module.mp.Pool = ThreadPool
        for n in range(1, 65):
            vocab_module.mp.cpu_count = lambda n=n: n
            loaded = vocab_module.Vocab(str(embedding_file(size))).embeddings
            missing = [w for w in words if w not in loaded]
            if missing:
                lost[str(n)] = missing
    finally:
        vocab_module.mp.cpu_count, vocab_module.mp.Pool = real_count, real_pool
    return {"size": size, "core_counts_checked": "1-64", "lost_by_core_count": lost}


def main() -> None:
    """Run the rows and probes; write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(r[0] for r in ROWS))
    parser.add_argument("--json", default="benchmarks/results/pypantera_findings.json")
    args = parser.parse_args()
    chosen = set(args.rows.split(","))
    out: dict[str, Any] = {"library": "pypantera 1.0.2", "seed": SEED, "audits": []}
    for name, eps, samples, final in ROWS:
        if name in chosen:
            row = audit_row(name, eps, samples, final)
            print(json.dumps({k: row[k] for k in ("mechanism", "verdict", "worst_pair")}))
            out["audits"].append(row)
    out["probes"] = {
        "custext": probe_custext(),
        "tem": probe_tem(),
        "santext": probe_santext(),
        "loader": probe_loader(),
    }
    print(json.dumps(out["probes"], indent=1))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
