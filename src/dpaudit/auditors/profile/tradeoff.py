"""A claim's trade-off curve tested on fresh scores: the DKW band's samples, drawn here.

The band itself, and why it covers every threshold at once, is the core's second
certifier, :mod:`dpaudit.auditors.core.dkw`; this module draws the scores of ``M(x)`` and
``M(x')`` for it on the profile auditor's streams.
"""

from __future__ import annotations

import numpy as np

from dpaudit.auditors.core.dkw import TradeoffBand, band_from_scores, dkw_width
from dpaudit.auditors.core.streams import StageKey
from dpaudit.auditors.profile.counting import Score, ScoreUnit, run_score_unit, split_samples
from dpaudit.engine.executor import ExecutionConfig, run_units
from dpaudit.mechanisms.base import Mechanism
from dpaudit.validation import check_int, check_seed


def tradeoff_band(
    mechanism: Mechanism,
    x: tuple[float, ...],
    x_prime: tuple[float, ...],
    score: Score,
    samples: int,
    *,
    confidence: float = 0.95,
    seed: int = 0,
    execution: ExecutionConfig | None = None,
) -> TradeoffBand:
    """Draw ``samples`` fresh outputs per input, score them, and return their band."""
    check_int("samples", samples, minimum=1)
    check_seed(seed)
    execution = execution or ExecutionConfig()
    parts = []
    for which, inp in enumerate((tuple(x), tuple(x_prime))):
        units = [
            ScoreUnit(mechanism, inp, score, n, seed, (StageKey.PROFILE_BAND, which, i))
            for i, n in enumerate(split_samples(samples))
        ]
        parts.append(np.concatenate(run_units(run_score_unit, units, execution, desc="band")))
    return band_from_scores(parts[0], parts[1], confidence)


__all__ = ["TradeoffBand", "band_from_scores", "dkw_width", "tradeoff_band"]
