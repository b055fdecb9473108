"""The whole report of a run as blocks, in the order a reader needs them.

1. the run's status;
2. the answer (:mod:`dpaudit.report.claims`): the claims found false, then those
   that held with their power, then the inconclusive ones;
3. the reproduction scorecard (:func:`dpaudit.report.content.summary_blocks`);
4. one section per figure, then every audit's witness card.
"""

from __future__ import annotations

from dpaudit.report.blocks import Block
from dpaudit.report.claims import claims_blocks
from dpaudit.report.collect import RunContents
from dpaudit.report.content import figure_blocks, status_blocks, summary_blocks, witness_blocks


def build_document(run: RunContents) -> list[Block]:
    """The whole report: status, claims, scorecard, one section per figure, the witnesses."""
    blocks = status_blocks(run) + claims_blocks(run) + summary_blocks(run)
    for entry in run.figures:
        blocks += figure_blocks(entry)
    blocks += witness_blocks(run)
    return blocks
