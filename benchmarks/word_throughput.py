"""Sampling throughput of dpaudit's own word-level mechanisms, words per CPU second of one core.

For each registered word mechanism and vocabulary size (the most frequent
GloVe 6B 50-d words), draws ``--draws`` outputs for each of ``--repeats``
input words (one fresh seed each) in blocks of 16 384 — exactly as an audit
work unit does (:meth:`WordMechanism.sample_codes`) — with BLAS limited to one
thread, and reports the median and the min–max spread of the per-repeat rates
(never the best repeat).  Rates are per CPU second of this process
(``time.process_time``), so other load on a shared machine distorts them
less; wall rates are recorded beside.

Nearest-word mechanisms (cmp, mahalanobis, vickrey) cost one product of the
block's points with the ``W`` words that the triangle inequality leaves
possible (:meth:`WordEmbedding.nearest_from`): all ``V`` at small ε (the rate
falls like ``1/V``), few at large ε — so they are measured at several ε.  The
product is float32 (numpy BLAS) or, with PyTorch installed (extra ``fast``) on
a CPU with bfloat16 arithmetic, bfloat16 for full-vocabulary searches; either
way a rounding-error bound certifies the few candidates that are then ranked
in float64, so the words drawn are the same (:mod:`dpaudit.analysis.nearest_search`).
``DPAUDIT_NEAREST_SCREEN=float32`` measures the numpy-only rate;
exponential-mechanism ones (tem, santext, santext+, custext) compute one
``V``-vector per block and then draw by inverse CDF, so theirs barely depends
on ``V``.  Setup (embedding load, CusText's output sets, the truncated Gumbel
calibration's distance range) is timed separately and not in the rate.

Usage::

    python benchmarks/word_throughput.py [--sizes 2000,20000] [--draws 65536]
        [--repeats 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from typing import Any

import numpy as np

from dpaudit.analysis.bfloat16_screen import SCREEN_ENV
from dpaudit.analysis.word_embedding import glove_embedding
from dpaudit.mechanisms.registry import make_word_mechanism, mechanism_names

BLOCK = 1 << 14
#: ε per mechanism (truncated Gumbel's calibration needs a large one); nearest-word
#: mechanisms are measured at several ε because their search shrinks as ε grows.
EPSILONS = {
    "truncated-gumbel": (100.0,),
    "cmp": (5.0, 20.0, 50.0),
    "mahalanobis": (5.0, 20.0, 50.0),
    "vickrey": (5.0, 20.0, 50.0),
}
DEFAULT_EPSILON = 10.0
TARGET = 100_000  # words per second per core (issue 11)


def _one_thread() -> Any:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn brings it
        return None
    return threadpool_limits(limits=1)


def _blas_kernels() -> str:
    """The BLAS library, version and kernel set numpy uses (OpenBLAS's ``architecture``).

    The nearest-word rates scale with the float32 GEMM speed, which doubles on an
    AVX-512 CPU between OpenBLAS's ``Haswell`` (AVX2) and ``SkylakeX`` kernels; the
    kernel set follows the CPU and ``OPENBLAS_CORETYPE``, so it is printed and recorded.
    """
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - scikit-learn brings it
        return "unknown"
    libs = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return (
        ", ".join(
            f"{i.get('internal_api')} {i.get('version')} {i.get('architecture', '')}".strip()
            for i in libs
        )
        or "unknown"
    )


def _nearest_screen() -> str:
    """Which screen the exact nearest-word search uses at V = 20 000 (bfloat16 needs PyTorch)."""
    from dpaudit.analysis.bfloat16_screen import bfloat16_wanted, screen_choice

    if not bfloat16_wanted(20_000, 1):
        return f"float32 (numpy BLAS; {SCREEN_ENV}={screen_choice()})"
    import torch

    return f"bfloat16 (PyTorch {torch.__version__}, 1 thread; {SCREEN_ENV}={screen_choice()})"


def measure(name: str, size: int, epsilon: float, draws: int, repeats: int) -> dict[str, Any]:
    """Rates of ``name`` at vocabulary ``size`` over ``repeats`` input words."""
    emb = glove_embedding(size)
    t0 = time.perf_counter()
    mech = make_word_mechanism(name, emb, epsilon=epsilon)
    mech.sample_codes(emb.words[0], 16, np.random.default_rng(0))  # build caches
    setup = time.perf_counter() - t0
    cpu_rates, wall_rates = [], []
    for r in range(repeats):
        word = emb.words[(r * 97) % min(size, 1000)]
        rng = np.random.default_rng(1000 + r)
        c0, w0 = time.process_time(), time.perf_counter()
        done = 0
        while done < draws:
            n = min(BLOCK, draws - done)
            mech.sample_codes(word, n, rng)
            done += n
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        cpu_rates.append(draws / max(cpu, 1e-9))
        wall_rates.append(draws / max(wall, 1e-9))
    return {
        "mechanism": name,
        "vocabulary": size,
        "epsilon": epsilon,
        "draws_per_repeat": draws,
        "repeats": repeats,
        "words_per_cpu_s_median": statistics.median(cpu_rates),
        "words_per_cpu_s_min": min(cpu_rates),
        "words_per_cpu_s_max": max(cpu_rates),
        "words_per_wall_s_median": statistics.median(wall_rates),
        "setup_s": setup,
        "meets_target": statistics.median(cpu_rates) >= TARGET,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table (and JSON with ``--json``)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="2000,20000", help="vocabulary sizes (comma-separated)")
    ap.add_argument("--draws", type=int, default=1 << 16, help="draws per repeat")
    ap.add_argument("--repeats", type=int, default=5, help="input words (seeds) per figure")
    ap.add_argument("--only", default="", help="mechanisms to run (comma-separated)")
    ap.add_argument("--json", default=None, help="write the results to this file")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    names = [n for n in args.only.split(",") if n] or mechanism_names("word")
    limit = _one_thread()
    rows = []
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    blas = _blas_kernels()
    screen = _nearest_screen()
    print(
        f"load average (1 min) at start: {load:.2f}; BLAS: {blas}, 1 thread; "
        f"nearest-word screen: {screen}; target {TARGET} words/s"
    )
    print(
        f"{'mechanism':<18} {'V':>7} {'ε':>6} {'words/CPU s (median [min, max])':>38} "
        f"{'setup s':>8}"
    )
    try:
        for size in sizes:
            for name in names:
                for eps in EPSILONS.get(name, (DEFAULT_EPSILON,)):
                    r = measure(name, size, eps, args.draws, args.repeats)
                    rows.append(r)
                    rate = (
                        f"{r['words_per_cpu_s_median']:>12,.0f} "
                        f"[{r['words_per_cpu_s_min']:,.0f}, {r['words_per_cpu_s_max']:,.0f}]"
                    )
                    print(
                        f"{name:<18} {size:>7} {eps:>6g} {rate:>38} {r['setup_s']:>8.2f}",
                        flush=True,
                    )
    finally:
        if limit is not None:
            limit.unregister()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "load_average_1min": load,
                    "blas": blas,
                    "nearest_screen": screen,
                    "target": TARGET,
                    "rows": rows,
                },
                fh,
                indent=2,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
