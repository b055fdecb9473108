"""Exact pair losses beside the sampled metric audit, for mechanisms whose output law is known.

When a word mechanism gives its exact output law (``output_log_probs``: dpaudit's
exponential mechanisms, and mldp-text's TEM and SynTF read from the library's
own code by :mod:`dpaudit.adapters.mldp_exact`), the audit reports each pair's
exact loss ``max_y |ln p(y|w) − ln p(y|w')|``
(:func:`dpaudit.analysis.word_loss.pair_loss_of_laws`) beside its certified
bound.  The law is a declaration, never trusted: each audited word's law is
first tested against the sampler's own selection counts (which the audit drew
anyway) with the pooled χ² test of
:mod:`dpaudit.auditors.core.goodness_of_fit`, at error
:data:`~dpaudit.auditors.core.declarations.DECLARATION_ALPHA` Bonferroni over the
words.  A word whose law does not fit is a finding; the exact losses of its
pairs are then withheld.  Exact losses are information: verdicts rest on the
certified bounds alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpaudit.analysis.word_loss import pair_loss_of_laws
from dpaudit.auditors.core.declarations import DECLARATION_ALPHA
from dpaudit.auditors.core.goodness_of_fit import pooled_chi_square
from dpaudit.auditors.metric.pairs import WordPair
from dpaudit.mechanisms.word.base import WordMechanism


@dataclass(frozen=True)
class ExactTruth:
    """Per-pair exact losses (None where unknown) and the law check, for the result's JSON."""

    losses: tuple[float | None, ...]
    law_check: dict[str, Any]
    notes: tuple[str, ...]


def exact_beside(
    mechanism: WordMechanism,
    pairs: list[WordPair],
    distances: np.ndarray,
    counts: dict[str, np.ndarray],
) -> ExactTruth:
    """Exact losses of ``pairs`` where the law is known and fits ``counts`` (selection draws)."""
    none = ExactTruth(tuple(None for _ in pairs), {}, ())
    if not pairs or mechanism.output_log_probs(pairs[0].w) is None:
        return none
    # A law the code cannot be read for on some word (a draw this reading does not know,
    # a crash after a draw) leaves that word's pairs without an exact loss.
    read = {w: mechanism.output_log_probs(w) for w in counts}
    laws = {w: np.asarray(law, dtype=np.float64) for w, law in read.items() if law is not None}
    if not laws:
        return none
    level = DECLARATION_ALPHA / len(laws)
    fits = {w: pooled_chi_square(counts[w], laws[w]) for w in laws}
    bad = sorted(w for w, f in fits.items() if f.p_value < level)
    unread = {w for w, law in read.items() if law is None}
    losses = tuple(
        None
        if {p.w, p.w_prime} & (set(bad) | unread)
        else pair_loss_of_laws(
            mechanism, p.w, p.w_prime, (laws[p.w], laws[p.w_prime]), float(d)
        ).loss
        for p, d in zip(pairs, distances, strict=True)
    )
    check = {
        "test": "pooled χ² of each word's selection counts against its exact law",
        "alpha": DECLARATION_ALPHA,
        "words": len(laws),
        "words_without_a_law": sorted(unread),
        "smallest_p_value": min(f.p_value for f in fits.values()),
        "mismatches": {w: fits[w].describe() for w in bad},
    }
    notes = tuple(
        f"the exact output law of {w!r} does not match its sampler ({fits[w].describe()}; "
        f"error ≤ {DECLARATION_ALPHA:g} Bonferroni over {len(laws)} words): its exact losses "
        f"are withheld"
        for w in bad
    )
    return ExactTruth(losses, check, notes)


def exact_notes(rows: list[tuple[str, str, float, float | None, str]]) -> tuple[str, ...]:
    """Pairs whose exact loss exceeds ``ε·d`` but were not certified.

    ``rows``: ``(w, w', ε·d, exact loss, verdict)`` per pair.
    """
    missed = [
        r for r in rows if r[3] is not None and r[3] > r[2] * (1 + 1e-9) and r[4] != "violation"
    ]
    if not missed:
        return ()
    w, wp, allowed, loss, verdict = max(missed, key=lambda r: _ratio(r[3], r[2]))
    return (
        f"exact loss exceeds ε·d for {len(missed)} pair(s) the sampled audit did not certify, "
        f"e.g. ({w!r}, {wp!r}): exact loss {_fmt(loss)} > ε·d = {_fmt(allowed)} "
        f"(verdict: {verdict}): a violation not certified at these sample sizes",
    )


def _ratio(loss: float | None, allowed: float) -> float:
    if loss is None:
        return 0.0
    return math.inf if allowed == 0 else loss / allowed


def _fmt(v: float | None) -> str:
    return "?" if v is None else ("inf" if math.isinf(v) else f"{v:.4g}")
