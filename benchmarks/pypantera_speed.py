"""Speed of pyPANTERA's mechanisms alone beside the speed of auditing them (words per second).

For each ``pypantera:NAME`` (GloVe 6B 50-d's 20 000 most frequent words, as
the package loads them), in a fresh worker process whose BLAS/OpenMP pools are
pinned to one thread (``threadpoolctl``):

* **alone** — ``--draws`` calls of the package's own ``processText`` on the
  one-word text ``['good']`` (for CMP, Mahalanobis and Vickrey,
  ``processText(noisyEmb(['good']))``), after the object is built (build
  time reported apart): words per wall second;
* **audit** — ``audit_metric`` of the pair ``('good', 'great')`` with
  ``--samples`` selection and ``4 × --samples`` final draws per word, one
  worker: draws made (both words, both stages) per wall second of the whole
  audit (exact laws, set search and bounds included).

The ratio audit/alone is the share of the audit's time spent in the package.
Results go to ``benchmarks/results/pypantera_speed.json``.

Usage (from the repository root; about 1–2 minutes on 2 cores)::

    .venv/bin/python benchmarks/pypantera_speed.py [--draws 300] [--samples 200] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from dpaudit.adapters.pypantera import PANTERA_MECHANISMS, PypanteraMechanism, embedding_file
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.engine.config import ExecutionConfig

#: ε per mechanism (README grid); TEM and CusText as in the findings.
EPSILON = {"SanText": 1.0, "CusText": 1.0}
EMBEDDING_NOISE = ("CMP", "Mahalanobis", "VickreyCMP", "VickreyMhl")


def _pin() -> None:
    threadpool_limits(limits=1)


def measure(name: str, draws: int, samples: int) -> dict[str, Any]:
    """Build, time the package alone, then time one small audit (runs in a worker)."""
    eps = EPSILON.get(name, 10.0)
    mech = PypanteraMechanism(epsilon=eps, mechanism=name)
    t0 = time.perf_counter()
    lib = mech.library()
    build = time.perf_counter() - t0
    np.random.seed(0)
    t0 = time.perf_counter()
    for _ in range(draws):
        try:
            if name in EMBEDDING_NOISE:
                lib.processText(lib.noisyEmb(["good"]))
            else:
                lib.processText(["good"])
        except Exception:  # CusText raises on some words; the draw still counts
            pass
    alone = draws / (time.perf_counter() - t0)
    cfg = MetricAuditConfig(
        samples=samples, final_samples=4 * samples, pairs=(("good", "great"),), search=False
    )
    t0 = time.perf_counter()
    audit_metric(mech, cfg, ExecutionConfig(workers=1))
    wall = time.perf_counter() - t0
    made = 2 * (samples + 4 * samples)
    threads = sorted({p["num_threads"] for p in threadpool_info()})
    return {
        "mechanism": f"pypantera:{name}",
        "epsilon": eps,
        "build_s": round(build, 2),
        "alone_words_per_s": round(alone, 1),
        "audit_words_per_s": round(made / wall, 1),
        "audit_share_in_package": round((made / alone) / wall, 3),
        "audit_wall_s": round(wall, 2),
        "blas_threads_in_worker": threads,
    }


def main() -> None:
    """Measure every mechanism in its own pinned worker; write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--mechanisms", default=",".join(PANTERA_MECHANISMS))
    parser.add_argument("--json", default="benchmarks/results/pypantera_speed.json")
    args = parser.parse_args()
    embedding_file(20_000)  # written once, before the workers start
    rows = []
    for name in args.mechanisms.split(","):
        with ProcessPoolExecutor(max_workers=1, initializer=_pin) as pool:
            row = pool.submit(measure, name, args.draws, args.samples).result()
        print(json.dumps(row))
        rows.append(row)
    out = {
        "library": "pypantera 1.0.2",
        "vocabulary": "glove-6B-50d, 20000 words",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "draws_alone": args.draws,
        "audit_samples": {"selection": args.samples, "final": 4 * args.samples},
        "rows": rows,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
