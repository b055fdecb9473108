"""The search's rare-event combinations: from training outputs and a wider scan.

:func:`add_rare` turns the rare set :func:`~dpaudit.auditors.blackbox.rare.propose`
finds in one pair's outputs into one more (pair, ``rare`` score) combination with
its table; the ``train`` stage calls it on training outputs.  :class:`RareScan`
is the optional ``rare-scan`` stage of :mod:`dpaudit.auditors.blackbox.stages`:
the same rule on many more outputs of the best screened pairs, for leaks too
rare for training to see.  Like every stage before the final one it only
proposes.  Imports nothing above ``auditors/``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpaudit.auditors.blackbox.config import SearchConfig
from dpaudit.auditors.blackbox.rare import RareSetScore, propose
from dpaudit.auditors.blackbox.scores import TrainingData
from dpaudit.auditors.blackbox.selection import CandidateTable, SideStats
from dpaudit.auditors.blackbox.shortlist import Budget, Combo, Shortlist
from dpaudit.auditors.core.streams import StageKey


def looks_for_rare_sets(output_kind: str) -> bool:
    """Whether rare-event sets are proposed for outputs of this kind.

    Binary and categorical outputs are not: the histogram family already reads
    every outcome, however rare, as a set of its own.
    """
    return output_kind not in ("binary", "categorical")


def add_rare(
    combos: list[Combo], tables: list[CandidateTable], i: int, dx: TrainingData, dxp: TrainingData
) -> None:
    """Append pair ``i``'s rare-event score (if its outputs show one) and its table."""
    rare = propose(dx.rows, dxp.rows)
    if rare is None:
        return
    sx, sxp = rare(dx.rows), rare(dxp.rows)
    thr = np.array([0.5], dtype=np.float32)
    tables.append(
        CandidateTable.of(
            thr, SideStats.of(sx, thr, dx.counts, 0), SideStats.of(sxp, thr, dxp.counts, 0)
        )
    )
    combos.append(Combo(i, rare, thr))


@dataclass(frozen=True)
class RareScan:
    """Look for rare events again, on many more outputs of the best screened pairs.

    Training outputs see a leak of probability q only when about 5 of them hit it;
    here the ``pairs`` best screened pairs that training found no rare set for get
    up to ``samples`` fresh outputs per input (within ``values`` output values),
    searched by the same rule (:func:`~dpaudit.auditors.blackbox.rare.propose`).  A
    found set joins the combinations as one more ``rare`` score; like everything
    before the final stage it only proposes: the ranking counts confirm it and fresh
    final counts certify it.  Adds ``rare`` combinations on pairs already in and
    removes none: the one stage after ``train`` that adds candidates.
    """

    name: ClassVar[str] = "rare-scan"
    pairs: int
    values: int

    @classmethod
    def of(cls, search: SearchConfig) -> RareScan:
        return cls(search.rare_scan_pairs, search.rare_scan_values)

    def run(self, state: Shortlist, budget: Budget) -> Shortlist:
        cfg, mech = budget.config, budget.mechanism
        if not looks_for_rare_sets(mech.output_kind):
            return state
        have = {c.pair_index for c in state.combos if isinstance(c.score, RareSetScore)}
        pairs = list(dict.fromkeys(c.pair_index for c in state.combos if c.pair_index not in have))
        pairs = pairs[: self.pairs]
        size = max(1, math.prod(mech.output_shape))
        n = min(cfg.samples, self.values // max(1, 2 * len(pairs) * size))
        if not pairs or n <= state.samples.get("training", 0):
            return state
        draws = budget.sampler.pair_outputs(
            [(state.pairs[i].x, state.pairs[i].x_prime) for i in pairs],
            n,
            StageKey.RARE_SCAN,
            "rare-event scan",
        )
        combos, tables = list(state.combos), list(state.tables)
        for i, (dx, dxp) in zip(pairs, draws, strict=True):
            add_rare(combos, tables, i, dx, dxp)
        return dataclasses.replace(
            state,
            combos=tuple(combos),
            tables=tuple(tables),
            samples={**state.samples, "rare scan": n},
        )
