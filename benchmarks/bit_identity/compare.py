"""Compare two output folders of ``run.sh``: every number must be the same, timings aside.

Usage: ``python benchmarks/bit_identity/compare.py BEFORE AFTER``.  Every ``*.json``
(outside checkpoints) is compared field by field with fields about time left out,
and every ``results.csv`` row by row without its timing columns.  Module names that
moved are mapped first (they appear in the figures' "method" texts).  Exit status 1
when anything differs; the differing paths are printed.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

#: Keys (or CSV columns) containing one of these words hold times, not results.
IGNORED = ("updated", "timing", "time", "seconds", "wall", "elapsed", "duration", "version")
#: Modules moved since 2026-11-24; their names appear in "method" texts.
RENAMES = {
    "dpaudit.audit.metric_audit": "dpaudit.auditors.metric.auditor",
    "dpaudit.audit.metric.auditor": "dpaudit.auditors.metric.auditor",
}


def strip(value: Any) -> Any:
    """``value`` without timing fields, with moved module names mapped."""
    if isinstance(value, str):
        for old, new in RENAMES.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if not any(s in k.lower() for s in IGNORED)}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ, as ``path: a != b`` lines."""
    if type(a) is not type(b):
        return [f"{path}: type {type(a).__name__} != {type(b).__name__}"]
    if isinstance(a, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{path}/{key}: only in {'AFTER' if key not in a else 'BEFORE'}")
            else:
                out += differences(a[key], b[key], f"{path}/{key}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {str(a)[:80]!r} != {str(b)[:80]!r}"]


def csv_rows(path: Path) -> list[list[str]]:
    """The rows of a CSV file without its timing columns."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, h in enumerate(rows[0]) if not any(s in h.lower() for s in IGNORED)]
    return [[row[i] for i in keep] for row in rows]


def main(before: Path, after: Path) -> int:
    """Print the comparison of every file; 0 when everything is identical."""
    bad = 0
    for fa in sorted(before.rglob("*.json")):
        rel = fa.relative_to(before)
        if "checkpoint" in rel.parts:
            continue
        fb = after / rel
        found = (
            differences(strip(json.loads(fa.read_text())), strip(json.loads(fb.read_text())))
            if fb.exists()
            else ["missing in AFTER"]
        )
        print(f"{rel}: {'identical' if not found else f'{len(found)} differences'}")
        print("".join(f"  {d}\n" for d in found), end="")
        bad += len(found)
    for fa in sorted(before.rglob("results.csv")):
        fb = after / fa.relative_to(before)
        same = fb.exists() and csv_rows(fa) == csv_rows(fb)
        print(f"{fa.relative_to(before)}: {'identical' if same else 'DIFFERENT'}")
        bad += not same
    print("ALL IDENTICAL" if bad == 0 else f"{bad} DIFFERENCES")
    return int(bad > 0)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
