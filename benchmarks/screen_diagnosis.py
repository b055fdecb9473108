"""Where each pair of a DP-Sniper suite row stands at the black-box search's screen.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/screen_diagnosis.py ROW SEED SAMPLES FINAL_SAMPLES

Runs the ``train`` stage of the dpaudit-mode search on the row's box inputs (no
``--pair``), as :func:`dpaudit.auditors.blackbox.auditor.audit` would, and prints
every (pair, score) combination with its best projected bound under the margin
for every training candidate (what the screen ranks by), under its own
candidates' margin only, and that set's denominator rate, then which
combinations the ``screen`` stage keeps.  A pair whose sets would certify more
than the winner's but which projects nothing under the full margin is dropped
here, before any fresh sample sees it (SVT2 at 1/10 of DP-Sniper's sizes, seed 0:
``benchmarks/results/pairs25_table.md``, Session 4).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # dpsniper_suite, dpsniper_mechanisms

import dpsniper_suite  # noqa: E402

from dpaudit import progress  # noqa: E402
from dpaudit.auditors.blackbox import stages  # noqa: E402
from dpaudit.auditors.blackbox.shortlist import Shortlist  # noqa: E402


def _vector(v: tuple[float, ...]) -> str:
    return ",".join(f"{x:g}" for x in v)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    name, seed, samples, final = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    # The pairs, families and budget the audit itself would use.
    budget = dpsniper_suite.box_search_budget(name, seed, samples, final)
    if budget is None:
        print(f"unknown row {name!r}", file=sys.stderr)
        return 2
    progress.ENABLED = False
    state = stages.train(Shortlist(), budget)
    kept = {id(c) for c in stages.screen(state, budget).combos}
    print(f"{len(budget.pairs)} pairs, {len(state.combos)} combinations, "
          f"{state.compared} training candidates")  # fmt: skip
    rows = []
    for c, t in zip(state.combos, state.tables, strict=True):
        full = t.project(final, budget.alpha_side, budget.delta, state.compared)
        own = t.project(final, budget.alpha_side, budget.delta, t.size)
        j = int(np.argmax(own))
        rate = float(t.den[j] / max(t.n_den[j], 1))
        pair = budget.pairs[c.pair_index]
        rows.append((float(np.max(full)), float(own[j]), rate, type(c.score).__name__,
                     f"{_vector(pair.x)} / {_vector(pair.x_prime)}", id(c) in kept))  # fmt: skip
    rows.sort(key=lambda r: (-r[0], -r[1]))
    print("kept  full margin  own margin  set rate  score  pair")
    for full_b, own_b, rate, score, pair, keep in rows:
        mark = "yes" if keep else "   "
        print(f"{mark}   {full_b:11.4f}  {own_b:10.4f}  {rate:8.4f}  {score}  {pair}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
