"""DP-SGD training audits, timed against this machine's float64 matmul limit, in one run.

Measured (all in one process, except the figure, which runs as the CLI runs it):

(a) seconds per training run, median of ``--repeats`` (≥ 10) after one warm-up, of
    :class:`~dpaudit.mechanisms.training.dpsgd.DPSGD` at its defaults (σ = 1, 200 steps,
    q = 0.032; Abadi et al., CCS 2016, Alg. 1), of the ``dp-training`` figure's trainer
    (σ = 2, 500 steps) and of :class:`~dpaudit.mechanisms.training.opacus_classifier.
    OpacusClassifier` at its defaults (3 epochs of batch 32), each on the 1000 bundled
    sentences plus 1000 Dirac gradient canaries of which each is included with probability
    1/2, as in the one-run audit (Steinke, Nasr & Jagielski, NeurIPS 2023);
(b) the one-run audit's wall time at its defaults (1000 canaries, one run) for both trainers;
(c) ``dpaudit reproduce dp-training --scale quick`` in a fresh folder: wall seconds and the
    figure's work seconds (``run-status.json``);
(d) the machine's limit: float64 ``numpy`` matmul of two 2048×2048 matrices (2·n³ FLOPs),
    best of the rounds interleaved with (a), and DP-SGD's achieved GFLOP/s against it.

FLOPs of one DP-SGD step as implemented (``clipped_gradient_sum`` and the update), with B_t
text records and B_c canaries in the batch, d = 256 features, P = d + 1 + 1000 parameters:
logits ``x@w`` 2·B_t·d, the gradient sum ``residual@x`` 2·B_t·d, residuals, clipping and the
bias sum ~12·B_t, canary adds B_c, noise added P, the update 2·P — about 4·B_t·d + 3·P
(the normal draws are counted as none).  The dense equivalent (every per-example gradient
materialised on all P parameters, clipped and summed: ~4·P FLOPs per example) is stated too.

Run: ``PYTHONPATH=src python benchmarks/dp_training.py --json benchmarks/results/dp_training.json``
(about 2 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.auditors.training.canaries import draw_canaries
from dpaudit.auditors.training.one_run import OneRunConfig, audit_one_run
from dpaudit.engine.config import ExecutionConfig
from dpaudit.mechanisms.training.dpsgd import DPSGD
from dpaudit.rundir.layout import RUN_STATUS

CANARIES = 1000


def matmul_gflops(n: int = 2048, inner: int = 3) -> float:
    """GFLOP/s of ``inner`` float64 n×n numpy products (2·n³ FLOPs each)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a @ b  # warm-up: BLAS threads, page faults
    start = time.perf_counter()
    for _ in range(inner):
        a @ b
    return 2 * n**3 * inner / (time.perf_counter() - start) / 1e9


def _dataset(mech: Any, seed: int = 0) -> Any:
    """The base data plus the canaries one one-run audit would include (each with prob. 1/2)."""
    canaries = draw_canaries("gradient", CANARIES, mech.base, np.random.default_rng(seed))
    keep = np.random.default_rng(seed + 1).random(CANARIES) < 0.5
    inside = [c for c, k in zip(canaries.records, keep, strict=True) if k]
    return mech.combine(mech.base, inside), len(inside)


def time_runs(mech: Any, repeats: int, peaks: list[float]) -> list[float]:
    """Seconds of ``repeats`` trainings (after a warm-up), one matmul round between each two."""
    data, _ = _dataset(mech)
    rng = np.random.default_rng(2)
    mech.train(data, rng)
    out = []
    for i in range(repeats):
        start = time.perf_counter()
        mech.train(data, rng)
        out.append(time.perf_counter() - start)
        if i % 3 == 0:
            peaks.append(matmul_gflops())
    return out


def dpsgd_flops(mech: DPSGD, included: int) -> dict[str, float]:
    """Expected FLOPs of one :meth:`DPSGD.train` step and run (formula in the docstring)."""
    q, d, p = float(mech.sampling_rate), int(mech.dimensions), mech.parameter_count
    text, canaries = q * len(mech.records), q * included
    step = 4 * text * d + 12 * text + canaries + 3 * p
    dense = 4 * p * (text + canaries) + 3 * p
    return {"batch_text": text, "batch_canaries": canaries, "parameters": p,
            "per_step": step, "per_run": step * int(mech.steps),
            "dense_per_step": dense, "dense_per_run": dense * int(mech.steps)}  # fmt: skip


def audit_seconds(mech: Any) -> float:
    """Wall seconds of one one-run audit at its defaults, in this process, one worker."""
    start = time.perf_counter()
    audit_one_run(mech, None, OneRunConfig(execution=ExecutionConfig(workers=1)))
    return time.perf_counter() - start


def figure_quick() -> dict[str, Any]:
    """``dpaudit reproduce dp-training --scale quick`` in a fresh folder, as a user runs it."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "dpaudit.cli.main", "-q", "reproduce", "dp-training",
             "--scale", "quick", "--out", str(out)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        status = json.loads((out / RUN_STATUS).read_text()) if (out / RUN_STATUS).exists() else {}
    return {"exit_code": done.returncode, "wall_s": round(wall, 1),
            "work_s": status.get("work_seconds", {}).get("dp-training"),
            "stderr_tail": done.stderr[-2000:] if done.returncode else ""}  # fmt: skip


def _summary(seconds: list[float]) -> dict[str, Any]:
    return {"median_s": statistics.median(seconds), "min_s": min(seconds),
            "max_s": max(seconds), "runs": len(seconds)}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default=None)
    ap.add_argument("--repeats", type=int, default=12)
    ap.add_argument("--no-figure", action="store_true", help="skip the figure's quick run")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    peaks: list[float] = []
    trainers: dict[str, Any] = {"dpsgd_defaults": DPSGD(),
                                "dpsgd_figure": DPSGD(noise_multiplier=2.0, steps=500)}  # fmt: skip
    if importlib.util.find_spec("opacus") and importlib.util.find_spec("torch"):
        from dpaudit.mechanisms.training.opacus_classifier import OpacusClassifier

        trainers["opacus_defaults"] = OpacusClassifier()
    runs: dict[str, Any] = {}
    for name, mech in trainers.items():
        runs[name] = _summary(time_runs(mech, args.repeats, peaks))
        runs[name]["trainer"] = repr(mech.spec()["params"])
        if isinstance(mech, DPSGD):
            flops = dpsgd_flops(mech, _dataset(mech)[1])
            runs[name]["flops"] = flops
            runs[name]["achieved_gflops"] = flops["per_run"] / runs[name]["median_s"] / 1e9
    peak = max(peaks)
    for entry in runs.values():
        if "achieved_gflops" in entry:
            entry["fraction_of_matmul_peak"] = entry["achieved_gflops"] / peak
    audits = {name: audit_seconds(m) for name, m in trainers.items() if name != "dpsgd_figure"}
    result = {
        "measured": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "numpy": np.__version__,
        "load_1min_before": round(load_before, 2),
        "canaries": CANARIES,
        "seconds_per_training_run": runs,
        "one_run_audit_defaults_s": audits,
        "matmul_float64_2048_gflops_rounds": peaks,
        "matmul_float64_2048_peak_gflops": peak,
        "figure_quick": None if args.no_figure else figure_quick(),
        "load_1min_after": round(os.getloadavg()[0], 2),
    }
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
