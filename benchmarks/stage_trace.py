"""Which sets lead after each stage of the black-box search on a DP-Sniper suite row.

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/stage_trace.py [--pair] ROW SEED SAMPLES FINAL_SAMPLES [TOP]

Runs the dpaudit-mode search's stages in order on the row's box inputs (no
``--pair``; with ``--pair``, DP-Sniper's pairs given as ``--inputs box-pairs`` gives
them), as :func:`dpaudit.auditors.blackbox.auditor.audit` would, and after
``rank``, ``playoff`` and ``ladder`` prints the ``TOP`` (default 8) leading sets:
projected bound, log-ratio estimate, the counts behind them, score, pair and
orientation; after ``playoff`` also the leader's and its group's best projection
under the margin for every candidate the ranking compared, and the hedge the
search certifies beside the leader, if any; after ``ladder`` the winner's rung
candidates at face value and which of them the ladder kept.  Then it counts the
winner on 2M outputs per input drawn from an independent stream (the sampler's own
counting under a stage key no audit uses), so a winner that leads on lucky counts shows
as a gap between its stage counts and these (OneTimeRappor at 1/100 of DP-Sniper's sizes,
seed 0: ``benchmarks/results/pairs25_table.md``, Session 6).
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
from dpaudit.auditors.blackbox.outcome import final_counts  # noqa: E402
from dpaudit.auditors.blackbox.shortlist import (  # noqa: E402
    Budget,
    Entry,
    Shortlist,
    leading_group_under_ranking_margin,
)

#: Outputs per input for the winner's check, and the sampler stage key they are drawn under.
CHECK_OUTPUTS, CHECK_STAGE = 2_000_000, 99  # audits use stage keys 1-29


def _counts(state: Shortlist, e: Entry, index: int | None = None) -> str:
    """The counts behind entry ``e``'s set, or behind set ``index`` of ``e``'s table."""
    t, j = state.tables[e.combo], e.index if index is None else index
    return f"num {int(t.num[j])}/{int(t.n_num[j])}  den {int(t.den[j])}/{int(t.n_den[j])}"


def _leaders(state: Shortlist, top: int) -> None:
    for e in state.ranked[:top]:
        c = e.candidate
        counts = _counts(state, e)
        where = f"{type(c.score).__name__}  pair {c.pair_index}  x on top {c.numerator_is_x}"
        print(f"  {c.projected:8.4f}  est {c.selection_estimate:7.4f}  {counts}  {where}")


def _hedge(state: Shortlist, budget: Budget) -> None:
    """The leading group's sets under the whole ranking's margin: what the hedge compares."""
    careful = leading_group_under_ranking_margin(state, budget, state.tables, state.ranked)
    at = {e.key: e.candidate.projected for e in careful}
    if careful:
        lead = state.ranked[0]
        print(f"  under the whole ranking's margin: leader {at.get(lead.key, -np.inf):.4f}, "
              f"its group's best {careful[0].candidate.projected:.4f}")  # fmt: skip
    for e in state.hedges:
        print(f"  hedge: {e.candidate.projected:8.4f}  {_counts(state, e)}")


def _rungs(state: Shortlist, budget: Budget) -> None:
    """The winner's rung candidates at face value, and which of them the ladder kept."""
    if not state.ranked:
        return
    cfg, search = budget.config, budget.config.search
    win = state.ranked[0]
    t = state.tables[win.combo]
    picks = t.ladder_picks(win.index, search.ladder_rungs, search.ladder_step)
    face = t.face_projection([win.index, *picks], cfg.final_samples, budget.alpha_side,
                             budget.delta)  # fmt: skip
    # The ladder's own rule, then which of the rungs it passed the final stage already had.
    passed = set(t.ladder(win.index, cfg.final_samples, budget.alpha_side, budget.delta,
                          search.ladder_rungs, search.ladder_step,
                          bar=stages.rung_bar(search, win)))  # fmt: skip
    added = {e.index for e in state.rungs if e.combo == win.combo}
    print(f"  ladder: winner at face value {face[0]:.4f}  {_counts(state, win)}")
    for j, v in zip(picks, face[1:], strict=True):
        mark = "dropped" if j not in passed else "kept" if j in added else "kept, already proposed"
        print(f"  rung: face {v:.4f}  {_counts(state, win, j)}  {mark}")


def main(argv: list[str]) -> int:
    inputs = "box-pairs" if argv[:1] == ["--pair"] else "box"
    argv = argv[1:] if inputs == "box-pairs" else argv
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    name, seed, samples, final = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    top = int(argv[4]) if len(argv) == 5 else 8
    budget = dpsniper_suite.box_search_budget(name, seed, samples, final, inputs)
    if budget is None:
        print(f"unknown row {name!r}", file=sys.stderr)
        return 2
    progress.ENABLED = False
    state = Shortlist(samples={"training": 0, "selection": 0, "playoff": 0})
    for stage_name, stage in stages.stages_for(budget.config.search):
        state = stage(state, budget)
        if stage_name in ("rank", "playoff", "ladder"):
            print(f"after {stage_name}: {len(state.ranked)} sets ranked")
            _leaders(state, top)
        if stage_name == "playoff":
            _hedge(state, budget)
        if stage_name == "ladder":
            _rungs(state, budget)
    if not state.ranked:
        print("no set ranked")
        return 0
    c = state.ranked[0].candidate
    pair = budget.pairs[c.pair_index]
    print(f"winner: {c.tail} tail at {c.threshold:.9g} on {pair.x} / {pair.x_prime}; "
          f"{CHECK_OUTPUTS} fresh outputs per input (stage key {CHECK_STAGE}):")  # fmt: skip
    # The final stage's own counting, on a stream of its own: the same set rule and ties.
    job = ((c.score,), (np.array([c.threshold]),))
    num, den = (pair.x, pair.x_prime) if c.numerator_is_x else (pair.x_prime, pair.x)
    counted = budget.sampler.counts(
        [(num, *job), (den, *job)], CHECK_OUTPUTS, CHECK_STAGE, "check",
        tie_probabilities=[(c.tie_probability,)] * 2,
    )  # fmt: skip
    f = final_counts(c, *counted)
    print(f"  numerator {num}: {f.hits_x} of {f.samples_x}")
    print(f"  denominator {den}: {f.hits_x_prime} of {f.samples_x_prime}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
