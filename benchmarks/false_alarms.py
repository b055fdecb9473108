"""False-alarm study (issue 7): false alarms of correct mechanisms, power on flawed ones.

Usage (from the repository root; the ``adapters`` extra adds the library rows)::

    .venv/bin/python benchmarks/false_alarms.py [--audits 200] [--samples 20000]
        [--adapter-samples 5000] [--workers 2] [--json results.json]

Every audit is the black-box audit (:func:`dpaudit.auditors.blackbox.auditor.audit`) at
confidence 0.95 (α = 0.05) with the sizes of :func:`dpaudit.testing.assert_no_violation`
(``--samples`` per input for selection, twice that for the final estimate,
``min(samples, 10000)`` for training), seeds ``0 .. audits−1``, claimed ε = 1
(0.1 for the floating-point row).  The library adapters are slower (OpenDP
samples ≈ 3·10⁴/s) and run at ``--adapter-samples``.  The ``callable:`` rows are
foreign-style user code audited with no density, as ``dpaudit audit module:f``
would: the callable adapter's example and the three Laplace functions of
``foreign_mechanisms.py`` (numpy's global generator, Python's ``random``, an
OS-seeded generator).

For each **correct** mechanism it reports the false alarms ``k / audits``, the
exact two-sided 95 % Clopper–Pearson interval of the false-alarm rate and the
one-sided exact binomial test of H₀: rate ≤ α against rate > α (p-value from
:func:`scipy.stats.binomtest`); a valid auditor must not be rejected at 0.01.
For each **flawed** mechanism it reports the detection power (share of audits
that report a violation) with its interval; the issue requires 100 %.

The exit status is 1 when a correct mechanism is rejected at 0.01 or a
required flawed mechanism is detected in fewer than all audits.  Audits are
independent work units (one single-threaded audit each) on ``--workers``
processes.  (``audit_false_alarms.py`` is the shorter issue-3 study of the
black-box audit alone.)  ``--throughput`` instead prints each adapter's
sampling rate on one core beside numpy's fill rate measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

from scipy import stats

from dpaudit import progress
from dpaudit.adapters._support import library_available
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.mechanisms import make_mechanism

ALPHA = 0.05
REJECT_AT = 0.01

#: Module of the foreign-style mechanisms (this directory is on ``sys.path``).
_FOREIGN = "foreign_mechanisms"

#: Correct mechanisms: (label, registry name, parameters, library module or None).
CORRECT: tuple[tuple[str, str, dict[str, Any], str | None], ...] = (
    ("laplace", "laplace", {}, None),
    ("gaussian", "gaussian", {}, None),
    ("randomized-response", "randomized-response", {}, None),
    ("grr", "grr", {}, None),
    ("sue", "sue", {}, None),
    ("oue", "oue", {}, None),
    ("adept-l1", "adept-l1", {}, None),
    ("adept-fixed-scale", "adept-fixed-scale", {}, None),
    ("opendp-laplace", "opendp-laplace", {}, "opendp"),
    ("diffprivlib-laplace", "diffprivlib-laplace", {}, "diffprivlib"),
    # Foreign-style user code, audited black-box as `dpaudit audit module:f` (no density):
    # the callable adapter's example f(x, n, rng) = x + Lap(1), and the correct Laplace
    # mechanisms of foreign_mechanisms.py with their own random-number habits.
    ("callable: rng", "callable", {"target": "dpaudit.adapters.callable:unit_laplace"}, None),
    ("callable: np.random", "callable", {"target": f"{_FOREIGN}:global_numpy_laplace"}, None),
    ("callable: random", "callable", {"target": f"{_FOREIGN}:global_python_laplace"}, None),
    ("callable: OS entropy", "callable", {"target": f"{_FOREIGN}:os_entropy_laplace"}, None),
)

#: Flawed mechanisms: (label, name, parameters, claimed ε, power required by the issue).
FLAWED: tuple[tuple[str, str, dict[str, Any], float, bool], ...] = (
    ("adept n=8", "adept", {"dim": 8}, 1.0, True),
    ("adept-acl22 n=8", "adept-acl22", {"dim": 8}, 1.0, True),
    ("dptext", "dptext", {}, 1.0, True),
    ("ome λ=10", "ome", {"lambda": 10.0}, 1.0, True),
    ("ome λ=100", "ome", {"lambda": 100.0}, 1.0, True),
    ("identity", "identity", {}, 1.0, True),
    ("float-laplace bits", "textbook-float-laplace", {"features": "bits"}, 0.1, False),
)


@dataclass(frozen=True)
class AuditUnit:
    """One seeded audit of one mechanism."""

    label: str
    name: str
    params: tuple[tuple[str, Any], ...]
    epsilon: float
    seed: int
    samples: int


def run_audit(unit: AuditUnit) -> tuple[bool, float, float]:
    """(violation reported, ε lower bound, seconds) of one audit, run in-process."""
    progress.ENABLED = False
    start = time.perf_counter()
    if unit.name == "callable":
        import dpaudit.adapters.callable  # noqa: F401  (registers the callable adapter)
    mech = make_mechanism(unit.name, epsilon=unit.epsilon, **dict(unit.params))
    config = AuditConfig(
        samples=unit.samples,
        final_samples=2 * unit.samples,
        train_samples=min(unit.samples, 10_000),
        confidence=1 - ALPHA,
        seed=unit.seed,
    )
    result = audit(mech, config, ExecutionConfig(workers=1))
    return result.violation, result.epsilon_lower_bound, time.perf_counter() - start


def summarise(hits: int, n: int) -> dict[str, Any]:
    """Count, rate, exact 95 % interval and the one-sided binomial test against α."""
    test = stats.binomtest(hits, n, ALPHA, alternative="greater")
    # The interval is two-sided (a one-sided test's proportion_ci would be [low, 1]).
    ci = stats.binomtest(hits, n).proportion_ci(confidence_level=0.95, method="exact")
    return {
        "hits": hits,
        "audits": n,
        "rate": hits / n,
        "ci95": (float(ci.low), float(ci.high)),
        "p_value_rate_gt_alpha": float(test.pvalue),
    }


def throughput() -> None:
    """Outputs per second of each adapter on one core, beside numpy's uniform fill rate."""
    import numpy as np

    rng = np.random.default_rng(0)
    rng.random(10**6)
    start = time.perf_counter()
    rng.random(10**7)
    fill = 1e7 / (time.perf_counter() - start)
    print(f"numpy rng.random fill rate: {fill:.3g} values/s (same run)")
    cases = [
        ("laplace", None, 10**6, 0.5),
        ("callable", None, 10**6, 0.5),
        ("opendp-laplace", "opendp", 200_000, 0.5),
        ("diffprivlib-laplace", "diffprivlib", 200_000, 0.5),
        ("pureldp-de", "pure_ldp", 200_000, 1),
        ("pureldp-ue", "pure_ldp", 50_000, 1),
    ]
    for name, module, n, x in cases:
        if module and not library_available(module):
            print(f"  {name:20s} (library not installed)")
            continue
        mech = make_mechanism(name, epsilon=1.0)
        mech.sample(x, 10, rng)  # imports and one-off calibration outside the timing
        start = time.perf_counter()
        mech.sample(x, n, rng)
        rate = n / (time.perf_counter() - start)
        print(f"  {name:20s} {rate:10.3g} outputs/s  ({fill / rate:6.0f}× below the fill rate)")


def main(argv: list[str] | None = None) -> int:
    """Run the study, print the tables, return 0 if every requirement holds."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--audits", type=int, default=200)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--adapter-samples", type=int, default=5_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", default=None, help="comma-separated labels to run")
    parser.add_argument("--json", default=None, metavar="PATH", help="write the results here")
    parser.add_argument(
        "--throughput", action="store_true", help="only measure the adapters' sampling speed"
    )
    args = parser.parse_args(argv)
    if args.throughput:
        throughput()
        return 0
    progress.ENABLED = sys.stderr.isatty()
    only = None if args.only is None else set(args.only.split(","))

    units: list[AuditUnit] = []
    kinds: dict[str, tuple[str, bool]] = {}
    for label, name, params, module in CORRECT:
        if (only and label not in only) or (module and not library_available(module)):
            continue
        size = args.adapter_samples if module else args.samples
        kinds[label] = ("correct", True)
        units += [
            AuditUnit(label, name, tuple(params.items()), 1.0, s, size) for s in range(args.audits)
        ]
    for label, name, params, eps, required in FLAWED:
        if only and label not in only:
            continue
        kinds[label] = ("flawed", required)
        units += [
            AuditUnit(label, name, tuple(params.items()), eps, s, args.samples)
            for s in range(args.audits)
        ]
    start = time.perf_counter()
    results = run_units(run_audit, units, ExecutionConfig(workers=args.workers), desc="audits")
    wall = time.perf_counter() - start

    rows: dict[str, dict[str, Any]] = {}
    for unit, (violation, bound, seconds) in zip(units, results, strict=True):
        row = rows.setdefault(
            unit.label,
            {"kind": kinds[unit.label][0], "samples": unit.samples, "epsilon": unit.epsilon,
             "violations": 0, "bounds": [], "seconds": 0.0},
        )  # fmt: skip
        row["violations"] += int(violation)
        row["bounds"].append(bound)
        row["seconds"] += seconds
    ok = True
    print(
        f"calibration study: {args.audits} seeded audits per mechanism, α = {ALPHA}, "
        f"samples {args.samples} (adapters {args.adapter_samples}) per input, "
        f"final 2×, {args.workers} workers, {wall:.0f} s wall"
    )
    print("\ncorrect mechanisms (false alarms; binomial test H0: rate ≤ α, reject at 0.01)")
    for label, row in rows.items():
        if row["kind"] != "correct":
            continue
        s = summarise(row["violations"], len(row["bounds"]))
        row.update(s)
        rejected = s["p_value_rate_gt_alpha"] < REJECT_AT
        ok &= not rejected
        bounds = sorted(row["bounds"])
        print(
            f"  {label:22s} {s['hits']:3d}/{s['audits']}  rate {s['rate']:.3f}  "
            f"95% CI [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]  p = {s['p_value_rate_gt_alpha']:.3g}"
            f"  {'REJECTED' if rejected else 'ok'}  median ε_lcb {bounds[len(bounds) // 2]:.3f}"
            f"  ({row['seconds'] / len(bounds):.2f} s/audit)"
        )
    print("\nflawed mechanisms (detection power)")
    for label, row in rows.items():
        if row["kind"] != "flawed":
            continue
        s = summarise(row["violations"], len(row["bounds"]))
        row.update(s)
        required = kinds[label][1]
        full = s["hits"] == s["audits"]
        ok &= full or not required
        bounds = sorted(row["bounds"])
        print(
            f"  {label:22s} {s['hits']:3d}/{s['audits']}  power {s['rate']:.3f}  "
            f"95% CI [{s['ci95'][0]:.3f}, {s['ci95'][1]:.3f}]  claimed ε {row['epsilon']:g}, "
            f"min ε_lcb {bounds[0]:.3f}, median {bounds[len(bounds) // 2]:.3f}"
            f"{'' if full or not required else '  BELOW 100%'}"
        )
    print(f"\nall requirements met: {ok}")
    if args.json:
        for row in rows.values():
            row["bounds"] = [float(b) for b in row["bounds"]]
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"args": vars(args), "wall_seconds": wall, "rows": rows}, fh, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
