"""Every dpaudit benchmark in one run: a Markdown table and a JSON file of ratios.

Usage (from the repository root)::

    .venv/bin/python benchmarks/run_all.py --out benchmarks/results [--quick] [--full]
                                           [--only NAME,...] [--skip NAME,...]

Absolute times drift on a shared machine, so every figure is printed next to a
ratio measured in the same run (a fill rate, a 1-worker time, a local time);
the load average at the start of each section is recorded beside it.

Sections (``--only``/``--skip`` take these names):

``sanity``     sanity-check throughput (output coordinates per CPU second of one
               core, attack included) at n ∈ {1, 8, 128}, against numpy's
               raw 32-bit fill rate (fused) or ``Generator.laplace`` (generic)
               measured in the same run (``sanity_throughput.py``);
``overhead``   executor overhead: many tiny units through the 2-process pool
               against the same units in-process;
``scaling``    the same sanity check with 2 workers against 1 worker (wall time);
``rss``        peak RSS (``resource.getrusage``) of fresh processes running the
               sanity check at N, 10 N and 100 N runs;
``blackbox``   Laplace ε = 0.1 at DP-Sniper's default sample sizes over 3 seeds,
               black-box (a plain function, no density) and white-box (registry
               ``laplace``): ε_lcb spread and wall time (``audit_laplace.py``);
``hoho``       HoHo grid wall time (``hoho_grid.py``);
``ray``        Ray on a local 2-CPU instance against the local backend, same work
               (≥ 30 s), bit-identical results checked;
``acl-grid``   the full ACL 2022 sanity-check grid at paper scale (10M runs per
               cell): wall time and peak RSS — only with ``--full`` (minutes);
``startup``    ``dpaudit --help`` and the first error paths a user meets, in fresh
               interpreters, against ``python -c "import numpy"`` (``startup.py``).

A section whose auditor is not in the package yet is reported as "not available".
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from dpaudit import progress
from dpaudit.engine import batches
from dpaudit.engine.executor import ExecutionConfig, default_workers, run_units
from dpaudit.io import atomic_write_text
from dpaudit.serialization import dumps

HERE = Path(__file__).resolve().parent
SECTIONS = (
    "sanity",
    "overhead",
    "scaling",
    "rss",
    "blackbox",
    "hoho",
    "ray",
    "acl-grid",
    "startup",
)


@dataclass
class Row:
    """One figure of the table."""

    section: str
    figure: str
    measured: str
    ratio: str = ""
    target: str = ""
    met: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- helpers
def load_benchmark(name: str) -> ModuleType | None:
    """Import ``benchmarks/<name>.py`` (owned by other parts of dpaudit), or None if absent."""
    path = HERE / f"{name}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"dpaudit_bench_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look modules up here
    spec.loader.exec_module(module)
    return module


def load_average() -> float:
    """1-minute load average (context for the timings)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def run_probe(code: str, *args: str, timeout: float = 3600) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; it prints one JSON object as its last line."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), *sys.path]))
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"probe failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """``(fn(), wall seconds, CPU seconds of this process and its finished children)``.

    The CPU figure lets a reader separate parallel overhead (more CPU for the same
    work) from contention with other load on the machine (less CPU per wall second).
    """
    before, wall = os.times(), time.perf_counter()
    value = fn()
    after, wall = os.times(), time.perf_counter() - wall
    cpu = sum(after[:4]) - sum(before[:4])  # user + system, self + children
    return value, wall, cpu


# Probe preamble: quiet progress, the sanity check, and peak RSS of self and children.
PROBE_HEAD = """
import json, resource, sys, time
from dpaudit import progress
progress.ENABLED = False
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms import make_mechanism
def peak_mib():
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, kids
"""


# ----------------------------------------------------------------- sections
def bench_sanity(quick: bool) -> list[Row]:
    """Sanity-check coords per CPU second, each path against its like.

    Fused path (white-box: the declared transform, 32-bit uniforms) against
    numpy's raw 32-bit fill; generic path (black-box: the real sampler) against
    ``Generator.laplace``.  Only coordinates actually drawn are counted.
    """
    st = load_benchmark("sanity_throughput")
    if st is None:
        return [Row("sanity", "sanity-check throughput", "not available (no sanity_throughput.py)")]
    seconds = 0.5 if quick else 2.0
    budget = 2e8 if quick else 2e9
    fill_before, lap_before = st.fill_rate(seconds), st.laplace_rate(seconds)
    measured = []
    for n in (1, 8, 128):
        measured.append(("fused", n, *st.throughput("laplace", n, budget, "fused")))
    measured.append(("generic", 128, *st.throughput("laplace", 128, budget / 10, "generic")))
    fill = (fill_before + st.fill_rate(seconds)) / 2
    lap = (lap_before + st.laplace_rate(seconds)) / 2
    rows = [
        Row(
            "sanity",
            "numpy raw 32-bit uniform fill (Generator.integers, 64-bit words), 1 core",
            f"{fill / 1e6:,.0f} M uniforms/CPU-s",
            "1.00 (fused-path reference)",
            details={"fill_rate": fill, "fill_before": fill_before},
        ),
        Row(
            "sanity",
            "numpy Generator.laplace (float64), 1 core",
            f"{lap / 1e6:,.0f} M variates/CPU-s",
            "1.00 (generic-path reference)",
            details={"laplace_rate": lap, "laplace_before": lap_before},
        ),
    ]
    for path, n, rate, wall_rate, runs in measured:
        reference, name = (
            (fill, "raw 32-bit fill") if path == "fused" else (lap, "Generator.laplace")
        )
        ratio = rate / reference
        target, met = "", None
        if path == "fused" and n == 128:
            target = "≥ 150 M/s and ≥ 0.40 of fill"
            met = rate >= 150e6 and ratio >= 0.40
        kind = (
            "fused transform, 32-bit uniforms, white-box"
            if path == "fused"
            else "generic, real sampler, black-box"
        )
        rows.append(
            Row(
                "sanity",
                f"sanity check laplace n = {n} ({kind}; attack incl.), coords drawn per core",
                f"{rate / 1e6:,.0f} M coords/CPU-s ({wall_rate / 1e6:,.0f} M/wall-s)",
                f"{ratio:.2f} of {name}",
                target,
                met,
                {
                    "n": n,
                    "path": path,
                    "runs_per_input": runs,
                    "coords_per_cpu_s": rate,
                    "ratio": ratio,
                },
            )
        )
    return rows


def _busy_unit(k: int) -> int:
    """A tiny unit (~tens of µs): sum of a small seeded draw."""
    rng = np.random.default_rng(k)
    return int(rng.integers(0, 1000, size=64).sum())


def bench_overhead(quick: bool) -> list[Row]:
    """Cost per unit of the process pool for units far too small to parallelise."""
    units = list(range(20_000 if quick else 200_000))
    inproc, t1, c1 = timed(lambda: run_units(_busy_unit, units, ExecutionConfig(workers=1)))
    pooled, t2, c2 = timed(lambda: run_units(_busy_unit, units, ExecutionConfig(workers=2)))
    assert inproc == pooled
    excess_us = (c2 - c1) / len(units) * 1e6
    # The same without batching (one task per unit), on a tenth of the units.
    few = units[: len(units) // 10]
    saved, batches.TARGET_BATCH_SECONDS = batches.TARGET_BATCH_SECONDS, 0.0
    try:
        _, t3, c3 = timed(lambda: run_units(_busy_unit, few, ExecutionConfig(workers=2)))
    finally:
        batches.TARGET_BATCH_SECONDS = saved
    _, _, c4 = timed(lambda: run_units(_busy_unit, few, ExecutionConfig(workers=1)))
    unbatched_us = (c3 - c4) / len(few) * 1e6
    return [
        Row(
            "overhead",
            f"{len(units):,} tiny units (~{c1 / len(units) * 1e6:.0f} µs CPU each): "
            "2-process pool vs in-process",
            f"wall {t2:.2f} s vs {t1:.2f} s; CPU {c2:.2f} s vs {c1:.2f} s",
            f"CPU {c2 / c1:.2f}× in-process ({excess_us:+.1f} µs per unit; "
            f"{unbatched_us:+.0f} µs with one task per unit); wall speed-up {t1 / t2:.2f}×",
            "pool CPU overhead small against the unit",
            None,
            {
                "units": len(units),
                "in_process": {"wall_s": t1, "cpu_s": c1},
                "pool": {"wall_s": t2, "cpu_s": c2},
                "excess_cpu_us_per_unit": excess_us,
                "unbatched": {"units": len(few), "wall_s": t3, "cpu_s": c3, "in_process_cpu_s": c4},
                "unbatched_excess_cpu_us_per_unit": unbatched_us,
                "load_average_before": load_average(),
            },
        )
    ]


def _sanity_runs_for(seconds: float, n: int = 128) -> int:
    """Runs per input that take about ``seconds`` of one core's CPU for laplace at ``n``."""
    from dpaudit.auditors.sanity.check import sanity_check
    from dpaudit.mechanisms import make_mechanism

    mech = make_mechanism("laplace", epsilon=1.0, dim=n)
    probe_runs = 1_000_000
    t = time.process_time()  # CPU, not wall: the sizing must not depend on the machine's load
    sanity_check(mech, probe_runs, seed=1, execution=ExecutionConfig(workers=1))
    per_run = (time.process_time() - t) / probe_runs
    return max(probe_runs, int(seconds / per_run))


def _timed_sanity_unit(unit: Any) -> tuple[Any, float, float]:
    """A sanity-check unit with its wall and CPU seconds inside the worker."""
    from dpaudit.auditors.core.counting import run_event_unit

    wall, cpu = time.perf_counter(), time.process_time()
    counts = run_event_unit(unit)
    return counts, time.perf_counter() - wall, time.process_time() - cpu


def bench_scaling(quick: bool) -> list[Row]:
    """2 workers against 1 worker on the same sanity check (wall time).

    Besides the measured ratio, each run records how busy its workers were
    (seconds inside units / (workers × wall)) and how much of a core a unit got
    (CPU / wall inside the unit).  On a loaded machine the second falls below 1
    and the wall ratio says little about the executor; the *projected* ratio
    for two idle cores, 2 · (CPU₁ / CPU₂) · (busy₂ / busy₁), then shows what the
    executor itself costs.  The target is judged on the measured ratio only.
    """
    from dpaudit.auditors.sanity.check import plan_sanity_check
    from dpaudit.mechanisms import make_mechanism

    if default_workers() < 2:
        return [Row("scaling", "2 workers vs 1", "not available (one core)")]
    runs = _sanity_runs_for(3.0 if quick else 20.0)
    plan = plan_sanity_check(make_mechanism("laplace", epsilon=1.0, dim=128), runs, seed=2)
    load = load_average()
    stats: dict[int, dict[str, float]] = {}
    counts: dict[int, list[Any]] = {}
    for w in (1, 2):
        config = ExecutionConfig(workers=w)
        out, wall, cpu = timed(lambda c=config: run_units(_timed_sanity_unit, plan.units, c))
        counts[w] = [o[0].tolist() for o in out]
        busy = sum(o[1] for o in out)
        unit_cpu = sum(o[2] for o in out)
        stats[w] = {
            "wall_s": wall,
            "cpu_s": cpu,
            "busy": busy / (w * wall),
            "core_share": unit_cpu / busy,
            "unit_cpu_s": unit_cpu,
        }
    speedup = stats[1]["wall_s"] / stats[2]["wall_s"]
    projected = 2 * stats[1]["cpu_s"] / stats[2]["cpu_s"] * stats[2]["busy"] / stats[1]["busy"]
    s1, s2 = stats[1], stats[2]
    return [
        Row(
            "scaling",
            f"sanity check laplace n = 128, {runs:,} runs/input: 2 workers vs 1",
            f"1 / 2 workers: wall {s1['wall_s']:.1f} s / {s2['wall_s']:.1f} s; "
            f"CPU {s1['cpu_s']:.1f} s / {s2['cpu_s']:.1f} s; workers busy {s1['busy']:.0%} / "
            f"{s2['busy']:.0%}; core share {s1['core_share']:.0%} / {s2['core_share']:.0%}",
            f"{speedup:.2f}× wall; projected for 2 idle cores {projected:.2f}×",
            "≥ 1.8×",
            speedup >= 1.8,
            {
                "runs": runs,
                "units": len(plan.units),
                "stats": stats,
                "speedup": speedup,
                "projected_idle_speedup": projected,
                "identical_counts": counts[1] == counts[2],
                "load_average_before": load,
            },
        )
    ]


RSS_PROBE = (
    PROBE_HEAD
    + """
from dpaudit.auditors.sanity.check import sanity_check
runs = int(sys.argv[1])
t = time.perf_counter()
if runs:
    sanity_check(make_mechanism("laplace", epsilon=1.0, dim=128), runs, seed=1,
                 execution=ExecutionConfig(workers=1))
me, kids = peak_mib()
print(json.dumps({"rss_mib": me, "seconds": time.perf_counter() - t}))
"""
)


def bench_rss(quick: bool) -> list[Row]:
    """Peak RSS of fresh processes at N, 10 N, 100 N runs (laplace n = 128, 1 worker)."""
    base = 10_000 if quick else 100_000
    sizes = [0, base, 10 * base, 100 * base]
    probes = {n: run_probe(RSS_PROBE, str(n)) for n in sizes}
    rss_n = probes[base]["rss_mib"]
    rows = []
    for n in sizes[1:]:
        p = probes[n]
        factor = n // base
        rows.append(
            Row(
                "rss",
                f"peak RSS, sanity check n = 128, {n:,} runs/input ({factor}× N)",
                f"{p['rss_mib']:.0f} MiB ({p['seconds']:.1f} s)",
                f"{p['rss_mib'] / rss_n:.2f}× RSS at N",
                "flat (≈ 1.0×)" if factor > 1 else "",
                (p["rss_mib"] / rss_n <= 1.1) if factor > 1 else None,
                {"runs": n, **p, "import_only_mib": probes[0]["rss_mib"]},
            )
        )
    return rows


def bench_blackbox(quick: bool) -> list[Row]:
    """Laplace ε = 0.1, DP-Sniper's sizes, 3 seeds, black- and white-box (``audit_laplace.py``).

    ``audit_laplace.py --seeds 10`` gives the 10-seed spread quoted in the README.
    """
    bench = load_benchmark("audit_laplace")
    if bench is None:
        return [Row("blackbox", "audit laplace ε = 0.1", "not available")]
    with tempfile.TemporaryDirectory() as tmp:
        rows_file = Path(tmp) / "rows.jsonl"
        argv = ["--only", "bb-laplace,wb-laplace", "--seeds", "3", "--json", str(rows_file)]
        with contextlib.redirect_stdout(sys.stderr):  # stdout is for the final table
            bench.main([*argv, "--quick"] if quick else argv)
        found = [json.loads(line) for line in rows_file.read_text().splitlines()]
    dpsniper_wall = 162.0  # DP-Sniper on a 2-core machine like this one (issue 3), not re-run
    out = []
    for row in found:
        kind = row["kind"]
        low, mid, high = (row[f"epsilon_lcb_{k}"] for k in ("min", "median", "max"))
        wall = row["mean_wall_seconds"]
        out.append(
            Row(
                "blackbox",
                f"{kind} audit of Laplace ε = 0.1 ({row['case']}), DP-Sniper's sizes "
                f"(10.7M / 200M, conf. 0.9), {row['seeds']} seeds, 2 workers"
                + (" (quick: 1/100 sizes)" if quick else ""),
                f"ε_lcb min {low:.4f} / median {mid:.4f} / max {high:.4f}; "
                f"mean {wall:.1f} s wall; {row['false_alarms']} false alarms",
                f"DP-Sniper (black-box, published): 0.0982 in 162 s; "
                f"median {mid / 0.0982:.3f}×, wall {dpsniper_wall / wall:.1f}× less",
                row["goal"],
                row["met"],
                row,
            )
        )
    return out


def bench_hoho(quick: bool) -> list[Row]:
    """HoHo grid wall time, from ``benchmarks/hoho_grid.py``."""
    hoho = load_benchmark("hoho_grid")
    if hoho is None or not hasattr(hoho, "benchmark"):
        return [Row("hoho", "HoHo grid wall time", "not available (no hoho_grid.py)")]
    out = hoho.benchmark(quick=quick)
    out.pop("grid", None)  # the full grid is in hoho_grid.py's own output; keep the table
    met = None
    if not quick:
        met = out["seconds"] <= hoho.BUDGET_SECONDS and out["peak_rss_mb"] < hoho.RSS_BUDGET_MB
    return [
        Row(
            "hoho",
            f"HoHo grid (§3.1: {out['sentences']} sentences × {out['copies']} copies, "
            "OME/SUE/OUE, both attacks)",
            f"{out['seconds']:.1f} s wall ({out['cpu_seconds']:.1f} s CPU), "
            f"peak RSS {out['peak_rss_mb']:.0f} MB",
            out.get("ratio", ""),
            f"≤ {hoho.BUDGET_SECONDS:.0f} s, RSS < {hoho.RSS_BUDGET_MB / 1024:.0f} GB",
            met,
            out,
        )
    ]


RAY_PROBE = (
    PROBE_HEAD
    + """
import numpy as np
from dpaudit.engine.executor import prepare_backend, shutdown_ray
from dpaudit.auditors.sanity.check import sanity_check
backend, runs = sys.argv[1], int(sys.argv[2])
mech = make_mechanism("laplace", epsilon=1.0, dim=128)
config = ExecutionConfig(backend=backend, workers=2)
t0 = time.perf_counter()
prepare_backend(config)
t1 = time.perf_counter()
r = sanity_check(mech, runs, seed=5, execution=config)
t2 = time.perf_counter()
shutdown_ray()
print(json.dumps({"start_s": t1 - t0, "run_s": t2 - t1, "total_s": t2 - t0,
                  "counts": r.detail.counts, "bound": r.epsilon_lower_bound}))
"""
)


def bench_ray(quick: bool) -> list[Row]:
    """Ray (local 2-CPU instance) against the local backend on the same ≥ 30 s work.

    Local runs before and after the Ray run (their mean is the reference), so
    a change of machine load during the section shows as a gap between them.
    Overhead is the share of Ray's wall time not spent by the local backend,
    ``1 − T_local / T_ray``, with and without the ``ray.init`` start-up.
    """
    if importlib.util.find_spec("ray") is None:
        return [Row("ray", "Ray overhead", "not available (ray not installed)")]
    # 1-worker seconds → 2 workers take about half: aim the local run at ≥ 30 s wall.
    runs = _sanity_runs_for(6.0 if quick else 70.0)
    load = load_average()
    before = run_probe(RAY_PROBE, "local", str(runs))
    on_ray = run_probe(RAY_PROBE, "ray", str(runs))
    after = run_probe(RAY_PROBE, "local", str(runs))
    local_s = (before["total_s"] + after["total_s"]) / 2
    same = all(
        r["counts"] == on_ray["counts"] and r["bound"] == on_ray["bound"] for r in (before, after)
    )
    with_start = 1 - local_s / on_ray["total_s"]
    run_only = 1 - local_s / on_ray["run_s"]
    return [
        Row(
            "ray",
            f"sanity check laplace n = 128, {runs:,} runs/input, 2 CPUs: Ray vs local",
            f"local {before['total_s']:.1f} s / {after['total_s']:.1f} s (before / after); "
            f"Ray {on_ray['run_s']:.1f} s + {on_ray['start_s']:.1f} s ray.init",
            f"Ray overhead {with_start:.0%} of its wall time with ray.init, "
            f"{run_only:.0%} without; results identical: {'yes' if same else 'NO'}",
            "≤ 20% on a ≥ 30 s run; identical results",
            with_start <= 0.20 and same and local_s >= 30,
            {
                "runs": runs,
                "local_before": before,
                "local_after": after,
                "ray": on_ray,
                "identical": same,
                "overhead_share_with_start": with_start,
                "overhead_share_run_only": run_only,
                "load_average_before": load,
            },
        )
    ]


GRID_PROBE = (
    PROBE_HEAD
    + """
from dpaudit.reproduce.acl_grid import run_acl2022_grid
runs = int(sys.argv[1])
t = time.perf_counter()
rows = run_acl2022_grid(runs=runs, execution=ExecutionConfig(workers=2))
seconds = time.perf_counter() - t
me, kids = peak_mib()
print(json.dumps({"seconds": seconds, "cells": len(rows), "parent_mib": me,
                  "largest_worker_mib": kids}))
"""
)


def bench_acl_grid(quick: bool) -> list[Row]:
    """The ACL 2022 grid at paper scale (10M runs per cell), 2 workers: time and peak RSS."""
    runs = 100_000 if quick else 10_000_000
    p = run_probe(GRID_PROBE, str(runs))
    # Upper bound on the memory in use: parent plus two workers at their peaks
    # (forked pages shared with the parent are counted twice).
    total = p["parent_mib"] + 2 * p["largest_worker_mib"]
    return [
        Row(
            "acl-grid",
            f"ACL 2022 grid, {p['cells']} cells × {runs:,} runs/input, 2 workers",
            f"{p['seconds'] / 60:.1f} min, peak RSS ≤ {total:.0f} MiB",
            f"{p['seconds'] / 600:.2f} of the 10-min budget",
            "≤ 10 min, < 1 GB" if not quick else "(quick: 1/100 runs)",
            (p["seconds"] <= 600 and total < 1024) if not quick else None,
            {"runs": runs, **p, "peak_rss_upper_mib": total},
        )
    ]


def bench_startup(quick: bool) -> list[Row]:
    """``dpaudit --help`` and error paths against ``import numpy`` (``startup.py``)."""
    bench = load_benchmark("startup")
    if bench is None:
        return [Row("startup", "CLI start-up", "not available (no startup.py)")]
    out = bench.benchmark(repetitions=5 if quick else 15)
    by_case = {r["case"]: r for r in out["rows"]}
    errors = [r for r in out["rows"] if r["case"] not in ("dpaudit --help", "dpaudit --version")]
    slowest = max(errors, key=lambda r: r["median_s"])
    help_row = by_case["dpaudit --help"]
    return [
        Row(
            "startup",
            f"`dpaudit --help` and {len(errors)} other help/error paths, fresh processes, "
            f"median of {out['repetitions']}",
            f"--help {help_row['median_s']:.3f} s; slowest path ({slowest['case']}) "
            f"{slowest['median_s']:.3f} s; `import numpy` {out['reference_median_s']:.3f} s",
            f"--help {help_row['ratio']:.2f}×, worst {out['worst_ratio']:.2f}× `import numpy`",
            f"≤ {out['target_ratio']:g}× `import numpy`",
            out["met"],
            out,
        )
    ]


BENCHES: dict[str, Callable[[bool], list[Row]]] = {
    "sanity": bench_sanity,
    "overhead": bench_overhead,
    "scaling": bench_scaling,
    "rss": bench_rss,
    "blackbox": bench_blackbox,
    "hoho": bench_hoho,
    "ray": bench_ray,
    "acl-grid": bench_acl_grid,
    "startup": bench_startup,
}


# ------------------------------------------------------------------- output
def markdown(rows: list[Row], meta: dict[str, Any]) -> str:
    """The results as a Markdown document."""
    lines = [
        "# dpaudit benchmarks",
        "",
        f"Command: `{meta['command']}`  ",
        f"Date: {meta['date']}; machine: {meta['machine']}; "
        f"{meta['cores']} cores; load average at start {meta['load_average']:.1f}.",
        "",
        "| section | figure | measured | ratio (same run) | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        met = "" if r.met is None else ("yes" if r.met else "**no**")
        lines.append(
            f"| {r.section} | {r.figure} | {r.measured} | {r.ratio} | {r.target} | {met} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the selected sections and write ``results.md`` and ``results.json``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="benchmarks/results", help="output directory")
    parser.add_argument("--quick", action="store_true", help="short runs (smoke test)")
    parser.add_argument("--full", action="store_true", help="also the ACL 2022 grid at scale")
    parser.add_argument("--only", default=None, help="comma-separated sections to run")
    parser.add_argument("--skip", default="", help="comma-separated sections to skip")
    args = parser.parse_args(argv)
    chosen = list(SECTIONS) if args.only is None else args.only.split(",")
    unknown = [s for s in [*chosen, *filter(None, args.skip.split(","))] if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; known: {', '.join(SECTIONS)}")
    chosen = [s for s in chosen if s not in args.skip.split(",")]
    if "acl-grid" in chosen and args.only is None and not args.full:
        chosen.remove("acl-grid")
    progress.ENABLED = False
    meta = {
        "command": " ".join(
            ["python", "benchmarks/run_all.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "cores": default_workers(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "load_average": load_average(),
        "quick": args.quick,
    }
    rows: list[Row] = []
    for name in chosen:
        start = time.perf_counter()
        print(f"[{name}] running (load average {load_average():.1f}) ...", file=sys.stderr)
        try:
            section_rows = BENCHES[name](args.quick)
        except Exception as exc:  # one broken section must not lose the others
            traceback.print_exc()
            section_rows = [Row(name, name, f"failed: {type(exc).__name__}: {exc}")]
        for r in section_rows:
            r.details.setdefault("section_seconds", time.perf_counter() - start)
            print(f"  {r.figure}: {r.measured}  [{r.ratio}]", file=sys.stderr)
        rows.extend(section_rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = markdown(rows, meta)
    atomic_write_text(out / "results.md", text)
    atomic_write_text(
        out / "results.json", dumps({"meta": meta, "rows": [asdict(r) for r in rows]})
    )
    sys.stdout.write(text)
    return 0 if all(r.met is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
