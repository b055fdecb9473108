"""Box search against DP-Sniper's own pairs: does the plain box reach the ``--pair`` bound?

Issue 25, item 6: audited on the plain box with no ``--pair``, every row of DP-Sniper's
suite should reach at least the bound dpaudit reaches when given DP-Sniper's pairs.
This reads two ``dpsniper_suite.py --json`` files of the same sizes and seeds (one
``--inputs box``, one ``--inputs box-pairs``) and prints, per row, both medians over
seeds, their difference and a verdict:

* ``yes``: the box median is at least the ``--pair`` median;
* ``tie``: it is lower by less than ``2·sd``, where ``sd`` is the standard deviation
  of one run's final log-ratio estimate at the ``--pair`` median seed's witness counts
  (delta method, ``dpaudit.auditors.core.projection.log_ratio_se``).  Two runs that
  certify the same set differ by about ``√2·sd`` from their final samples alone, so a
  smaller gap says nothing about the search;
* ``no``: lower by more.

Usage (from the repository root, dpaudit installed)::

    .venv/bin/python benchmarks/pair_gap.py BOX.jsonl PAIRS.jsonl

The table of ``docs/tuning.md`` (DP-Sniper's sizes, 3 seeds, measured 2026-11-28 to 29)
is this script's output on ``benchmarks/results/box_vs_pair_full_box.jsonl`` and
``benchmarks/results/box_vs_pair_full_box-pairs.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics

from dpaudit.auditors.core.projection import log_ratio_se

_COUNTS = re.compile(r"p1 (\d+)/(\d+) p2 (\d+)/(\d+)")


def load(path: str) -> dict[str, dict]:
    """Rows of ``dpsniper_suite.py --json`` files by case name.

    Runs of one case split over several lines (``--seeds 1 --first-seed S``) are
    joined, seed by seed; a seed run twice keeps its last run.
    """
    rows: dict[str, dict] = {}
    with open(path, encoding="utf-8") as fh:
        for row in map(json.loads, filter(str.strip, fh)):
            seeds = range(row["first_seed"], row["first_seed"] + row["seeds"])
            runs = rows.setdefault(row["case"], {**row, "runs": {}})["runs"]
            for s, bound, witness in zip(seeds, row["epsilon_lcb"], row["witnesses"], strict=True):
                runs[s] = (bound, witness)
    for row in rows.values():
        order = sorted(row["runs"])
        row["epsilon_lcb"] = [row["runs"][s][0] for s in order]
        row["witnesses"] = [row["runs"][s][1] for s in order]
    return rows


def final_sd(witness: str | None) -> float:
    """Standard deviation of the final log-ratio estimate behind ``witness`` (nan if none)."""
    m = _COUNTS.search(witness or "")
    if m is None:
        return math.nan
    k1, n1, k2, n2 = map(int, m.groups())
    return log_ratio_se(k1, n1, k2, n2) if k1 and k2 else math.nan


def compare(box: dict, pair: dict) -> dict:
    """Medians, difference, tie tolerance and verdict of one row."""
    b, p = box["epsilon_lcb"], pair["epsilon_lcb"]
    mb, mp = statistics.median(b), statistics.median(p)
    at = sorted(range(len(p)), key=lambda i: p[i])[(len(p) - 1) // 2]
    tol = 2.0 * final_sd(pair["witnesses"][at])
    diff = mb - mp
    verdict = "yes" if diff >= 0 else ("tie" if math.isfinite(tol) and -diff < tol else "no")
    return {
        "median_box": mb,
        "median_pair": mp,
        "diff": diff,
        "tolerance": tol,
        "verdict": verdict,
        "box": b,
        "pair": p,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("box", help="dpsniper_suite.py --inputs box --json file")
    ap.add_argument("pair", help="dpsniper_suite.py --inputs box-pairs --json file")
    args = ap.parse_args()
    box, pair = load(args.box), load(args.pair)
    print("| row | claim | box (no `--pair`) | `--pair` | box − `--pair` | 2·sd | reached |")
    print("|---|---|---|---|---|---|---|")
    for case in box:
        if case not in pair:
            continue
        r = compare(box[case], pair[case])

        def cell(v: list[float]) -> str:
            return f"{statistics.median(v):.4f} [{min(v):.4f}–{max(v):.4f}]"

        print(
            f"| {case} | {box[case]['claimed_epsilon']:.4g} | {cell(r['box'])} | "
            f"{cell(r['pair'])} | {r['diff']:+.5f} | {r['tolerance']:.5f} | {r['verdict']} |"
        )


if __name__ == "__main__":
    main()
