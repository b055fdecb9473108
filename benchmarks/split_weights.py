"""Would an uneven Bonferroni split have certified more?  Re-certify recorded runs offline.

The final stage certifies ``K`` sets at ``α/(2K)`` each (``dpaudit.auditors.core.certify``).
Any split fixed before the final samples is equally valid, e.g. the ranking's winner
(``certified[0]``, chosen before any final sample) at ``w·α/2`` and every other set
sharing ``(1 − w)·α/2``.  A set's final counts do not depend on the split, so each
``dpsniper_suite.py`` row that records its sets (``certified``, Session 15 on) gives
every split's bound on the same seed without a new sample.

For each recorded run this prints the bound under ``ladder_bar="face"`` (rungs kept
only above the winner's face value, the default until Session 19) and under
``ladder_bar="projected"`` (all recorded sets), each with the equal split and with
the winner weighted ``w`` for every ``--weights`` value; then the medians per row
and mode.  The equal-split columns are checked against the row's own
``epsilon_lcb_face_bar`` and ``epsilon_lcb``.

Usage (from the repository root, dpaudit installed)::

    .venv/bin/python benchmarks/split_weights.py benchmarks/results/pairs25o_bar_box.jsonl \
        benchmarks/results/pairs25o_bar_box-pairs.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import statistics

from dpaudit.auditors.blackbox.result import BlackBoxDetail, CertifiedSet
from dpaudit.auditors.core.certify import certify_one


def bound(recorded: CertifiedSet, error: float) -> float:
    """Certified bound of one recorded set with each one-sided estimate at ``error``."""
    return certify_one(recorded.final_counts, error).lower_bound


def split_bound(sets: list[CertifiedSet], alpha: float, winner_weight: float) -> float:
    """The run's bound (≥ 0) with ``sets[0]`` at ``winner_weight·α/2``, the rest sharing the rest.

    (The equal split is ``BlackBoxDetail.recertified``.)
    """
    k = len(sets)
    if k == 1:
        return max(0.0, bound(sets[0], alpha / 2))
    rest = (1.0 - winner_weight) * alpha / (2 * (k - 1))
    return max(0.0, bound(sets[0], winner_weight * alpha / 2), *(bound(s, rest) for s in sets[1:]))


def runs(paths: list[str]) -> dict[tuple[str, str, int], dict]:
    """The last recorded run of each (case, inputs, seed)."""
    found: dict[tuple[str, str, int], dict] = {}
    for path in paths:
        with open(path) as lines:
            for line in lines:
                row = json.loads(line)
                if row.get("certified") and row.get("seeds") == 1:
                    found[(row["case"], row["inputs"], row["first_seed"])] = row
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("jsonl", nargs="+", help="dpsniper_suite.py --json files")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.5, 0.75])
    args = parser.parse_args()
    columns = 1 + len(args.weights)
    names = ["equal"] + [f"w={w:g}" for w in args.weights]
    header = " ".join(f"{rule}:{n}" for rule in ("face", "proj") for n in names)
    print(f"{'case':20s} {'inputs':9s} seed K(face/proj) {header}")
    by_row: dict[tuple[str, str], list[list[float]]] = {}
    for (case, inputs, seed), row in sorted(runs(args.jsonl).items()):
        alpha = 1.0 - row["confidence"]
        every = [CertifiedSet(**entry) for entry in row["certified"][0]]
        detail = BlackBoxDetail("dpaudit", (), 0, 0, len(every), tuple(every))
        values, sizes = [], []
        for keep in (detail.kept_by_face_bar, lambda _: True):
            kept = [s for s in every if keep(s)]
            sizes.append(len(kept))
            values.append(detail.recertified(keep, row["confidence"]))
            values += [split_bound(kept, alpha, w) for w in args.weights]
        for mine, recorded in (
            (values[0], row.get("epsilon_lcb_face_bar")),
            (values[columns], row["epsilon_lcb"]),
        ):
            if recorded is not None and not math.isclose(
                mine, recorded[0], rel_tol=1e-12, abs_tol=1e-15
            ):
                raise SystemExit(
                    f"{case} {inputs} seed {seed}: re-certified {mine} != recorded {recorded[0]}"
                )
        by_row.setdefault((case, inputs), []).append(values)
        shown = " ".join(f"{v:.5f}" for v in values)
        print(f"{case:20s} {inputs:9s} {seed:4d} {sizes[0]:>4d}/{sizes[1]:<4d}      {shown}")
    print("\nmedians over seeds")
    for (case, inputs), values in by_row.items():
        medians = " ".join(
            f"{statistics.median(v[i] for v in values):.5f}" for i in range(len(values[0]))
        )
        print(f"{case:20s} {inputs:9s} n={len(values)} {medians}")


if __name__ == "__main__":
    main()
