"""Compare two output folders of ``run.sh``: every number must be the same, timings aside.

Usage: ``python benchmarks/bit_identity/compare.py BEFORE AFTER``.  Every ``*.json``
(outside checkpoints) is compared field by field with fields about time left out,
and every ``results.csv`` row by row without its timing columns.  Module names that
moved are mapped first (they appear in the figures' "method" texts), and so are
layouts that changed.  Exit status 1 when anything differs; the differing paths are
printed.

Audit results written in the one typed layout (``AuditResult.to_dict``: a ``kind``
tag, the shared fields, the auditor's own in ``detail``; since 2026-11-25) are
compared *by value* with a BEFORE in the older per-auditor layouts: every field of
BEFORE is looked up in AFTER under its new name (:data:`RENAMED`), at the top or
in ``detail``, and must be equal; the fields only AFTER has are listed, not
counted as differences.  A figure's audit records written before their verdict and
witness were typed (``verdict`` the sentence, ``witness`` the card's lines) are
compared with newer ones as the report reads both (:func:`previous_audit_layout`),
and the typed result a newer record stores (``audit``) is listed as new where
BEFORE's records have none (:func:`stored_audits`).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

#: Keys (or CSV columns) containing one of these words hold times or the machine's measured
#: pace (``run-status.json``'s ``pace_probe``), not results.
IGNORED = (
    "updated",
    "timing",
    "time",
    "seconds",
    "wall",
    "elapsed",
    "duration",
    "version",
    "pace",
)
#: Modules moved since 2026-11-24; their names appear in "method" texts.
RENAMES = {
    "dpaudit.audit.metric_audit": "dpaudit.auditors.metric.auditor",
    "dpaudit.audit.metric.auditor": "dpaudit.auditors.metric.auditor",
}


#: Auditor kinds of the typed layout (``dpaudit.results.audit.AuditorKind``).
KINDS = ("blackbox", "sanity", "metric", "profile", "rewriter")
#: Old field → where the typed layout keeps it (a path from the top).
RENAMED: dict[str, tuple[str | int, ...]] = {
    "verdict": ("verdict_text",),  # the sentence; ``verdict`` is now the typed word
    "candidates_compared": ("detail", "sets_compared"),
    "final_candidates": ("detail", "certified_proposals"),
    "candidates_final": ("detail", "certified_proposals"),
    "epsilon": ("claimed_epsilon",),  # the metric audit's claimed ε
    "worst": ("detail", "pairs", 0),  # the metric audit's worst pair, first of its pairs
}


def old_layout(after: Any, before: Any) -> tuple[Any, list[str]]:
    """``after`` (typed layout) with ``before``'s field names, and the fields only it has.

    ``kind`` is a tag whose words changed (``metric-audit`` → ``metric``): BEFORE's is kept.
    """
    if not (isinstance(after, dict) and after.get("kind") in KINDS and "detail" in after):
        return after, []
    if not isinstance(before, dict) or "detail" in before:
        return after, []
    out: dict[str, Any] = {}
    used: set[tuple[str | int, ...]] = set()
    for key in before:
        if key == "kind":
            out[key] = before[key]
            continue
        path = RENAMED.get(key) or ((key,) if key in after else ("detail", key))
        value: Any = after
        try:
            for step in path:
                value = value[step]
        except (KeyError, IndexError, TypeError):
            continue  # reported as "only in BEFORE"
        out[key] = value
        used.add(path[:2] if path[0] == "detail" else path[:1])
    new = [k for k in after if k != "detail" and (k,) not in used]
    new += [f"detail/{k}" for k in after["detail"] if ("detail", k) not in used]
    return out, new


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


def stored_audits(before: Any, after: Any) -> tuple[Any, list[str]]:
    """``after`` without the typed results its audit records store where ``before``'s have none.

    Since 2026-11-25 (record21) each record of a figure's ``audits`` stores its audit's own
    ``AuditResult`` under ``audit``, beside the row's fields every version writes; a BEFORE
    written earlier has no such field, so AFTER's is listed as new, not counted.
    """
    records = [after.get("audits"), before.get("audits")] if isinstance(after, dict) else []
    if not (isinstance(before, dict) and all(isinstance(r, list) for r in records)) or not records:
        return after, []
    if any(isinstance(r, dict) and "audit" in r for r in before["audits"]):
        return after, []
    audits = [{k: v for k, v in r.items() if k != "audit"} for r in after["audits"]]
    new = ["audits[].audit"] if any("audit" in r for r in after["audits"]) else []
    return {**after, "audits": audits}, new


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
        new: list[str] = []
        found = ["missing in AFTER"]
        if fb.exists():
            old = json.loads(fa.read_text())
            mapped, new = old_layout(json.loads(fb.read_text()), old)
            mapped, stored = stored_audits(old, mapped)
            new += stored
            found = differences(*same_layout(strip(old), strip(mapped)))
        print(f"{rel}: {'identical' if not found else f'{len(found)} differences'}")
        print("".join(f"  {d}\n" for d in found), end="")
        if new:
            print(f"  (typed layout; fields only in AFTER: {', '.join(new)})")
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
