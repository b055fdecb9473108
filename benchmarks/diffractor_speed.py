"""Speed of the released dp-diffractor: the mechanism alone beside the audit, in words/s.

Writes ``benchmarks/results/diffractor_speed.json``.  Each measurement runs in a
fresh worker process with BLAS/OpenMP pinned to one thread (threadpoolctl) and
faiss to one thread:

* ``rewrite`` — the package as released: ``Diffractor(config).rewrite(texts)``,
  one one-word text per draw, through its own ``mp.Pool`` (one worker per list);
* ``in_process`` — the package's steps run in one process as the adapter runs
  them (``apply_privacy_mechanism`` per list, ``_pick_final_word``, detokenizer),
  NLTK's stopword file re-read on every call as the package does;
* ``in_process_stopwords_once`` — the same with the stopword list read once
  (the adapter's default; outputs identical, tested);
* ``audit`` — a metric audit (``audit_metric``) of one pair: draws per second of wall time.

Default lists: 2000 words (``glove:2000``); ``--lists glove`` for the full 33 792.
Default run ≈ 1 minute on 2 cores.

    .venv/bin/python benchmarks/diffractor_speed.py [--lists glove] [--draws 4000]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "results" / "diffractor_speed.json"


def _pin() -> None:
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    os.environ["OMP_NUM_THREADS"] = "1"


def _rewrite(lists: str, draws: int) -> float:
    from dpaudit.adapters.diffractor import embedding_file, import_diffractor

    pkg = import_diffractor()
    paths = [embedding_file(s) for s in lists.split(",")]
    pkg.core.ensure_embeddings = lambda names=None: paths
    pkg.utils.faiss.omp_set_num_threads(1)
    df = pkg.Diffractor(pkg.DiffractorConfig(epsilon=1.0, verbose=False))
    df.rewrite(["good"] * 50)
    t = time.perf_counter()
    df.rewrite(["good"] * draws)
    dt = time.perf_counter() - t
    df.close()
    return draws / dt


def _in_process(lists: str, draws: int, once: bool) -> float:
    from dpaudit.adapters.diffractor import DiffractorMechanism

    mech = DiffractorMechanism(epsilon=1.0, embeddings=lists, read_stopwords_once=once)
    mech.sample_codes("good", 50, np.random.default_rng(0))
    t = time.perf_counter()
    mech.sample_codes("good", draws, np.random.default_rng(1))
    return draws / (time.perf_counter() - t)


def _audit(lists: str, draws: int) -> float:
    from dpaudit.adapters.diffractor import DiffractorMechanism
    from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
    from dpaudit.engine.config import ExecutionConfig

    mech = DiffractorMechanism(epsilon=1.0, embeddings=lists)
    mech.sample_codes("good", 50, np.random.default_rng(0))
    cfg = MetricAuditConfig(
        samples=draws, final_samples=draws, pairs=(("good", "great"),), search=False
    )
    t = time.perf_counter()
    audit_metric(mech, cfg, ExecutionConfig(workers=1))
    return 4 * draws / (time.perf_counter() - t)  # 2 words × (selection + final)


def _measure(kind: str, lists: str, draws: int) -> float:
    _pin()
    if kind == "rewrite":
        return _rewrite(lists, draws)
    if kind == "audit":
        return _audit(lists, draws)
    return _in_process(lists, draws, once=kind.endswith("once"))


def main() -> None:
    """Measure each kind in its own pinned worker process; write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lists", default="glove:2000")
    ap.add_argument("--draws", type=int, default=4000)
    args = ap.parse_args()
    result: dict[str, object] = {"lists": args.lists, "draws": args.draws, "epsilon": 1.0}
    for kind in ("rewrite", "in_process", "in_process_stopwords_once", "audit"):
        with ProcessPoolExecutor(max_workers=1) as pool:
            rate = pool.submit(_measure, kind, args.lists, args.draws).result()
        result[f"{kind}_words_per_s"] = round(rate, 1)
        print(kind, round(rate, 1), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
