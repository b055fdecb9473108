"""Compare two output folders of ``run.sh``: every number must be the same, timings aside.

Usage: ``python benchmarks/bit_identity/compare.py BEFORE AFTER``.  Every ``*.json``
(outside checkpoints) is compared field by field with fields about time left out,
and every ``results.csv`` row by row without its timing columns.  Module names that
moved are mapped first (they appear in the figures' "method" texts), and so are
layouts that changed: a figure's audit records written before their verdict and
witness were typed (``verdict`` the sentence, ``witness`` the card's lines) are
compared with newer ones as the report reads both (:func:`previous_audit_layout`).
Exit status 1 when anything differs; the differing paths are printed.
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


def previous_audit_layout(result: Any) -> Any:
    """A figure result's audits as written before typed verdicts and witnesses (2026-11-25).

    Only a layout difference is mapped: the typed audit becomes its sentence and
    the lines its witness card shows (what the report reads from either layout).
    """
    from dpaudit.rundir.records import AuditRecord
    from dpaudit.serialization import to_jsonable

    if not isinstance(result, dict) or not isinstance(result.get("audits"), list):
        return result
    audits = []
    for audit in result["audits"]:
        if isinstance(audit, dict) and "verdict_text" in audit:
            card = to_jsonable(AuditRecord.from_dict(audit).card_lines)
            sentence = audit["verdict_text"]
            audit = {k: v for k, v in audit.items() if k not in ("verdict_text", "witness_lines")}
            audit.update(verdict=sentence, witness=card)
        audits.append(audit)
    return {**result, "audits": audits}


def same_layout(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` in one layout: the previous one where only one of them has it."""
    typed = [
        isinstance(x, dict) and any("verdict_text" in r for r in x.get("audits") or [])
        for x in (a, b)
    ]
    if typed[0] == typed[1]:
        return a, b
    return previous_audit_layout(a), previous_audit_layout(b)


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
        found = ["missing in AFTER"]
        if fb.exists():
            pair = same_layout(strip(json.loads(fa.read_text())), strip(json.loads(fb.read_text())))
            found = differences(*pair)
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
