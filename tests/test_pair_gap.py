"""benchmarks/pair_gap.py: the verdict that says whether the box search reached the --pair bound."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "pair_gap.py"
spec = importlib.util.spec_from_file_location("pair_gap", PATH)
pair_gap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pair_gap)


def _row(case, bounds, counts, first_seed=0):
    return {
        "case": case,
        "claimed_epsilon": 0.1,
        "first_seed": first_seed,
        "seeds": len(bounds),
        "epsilon_lcb": bounds,
        "witnesses": [f"logistic score(y) > 0 on [0.0]/[1.0] p1 {c} p2 {d}" for c, d in counts],
    }


def test_final_sd_is_the_delta_method_sd_of_the_log_ratio():
    k1, n, k2 = 40_000, 1_000_000, 36_000
    want = math.sqrt((1 - k1 / n) / k1 + (1 - k2 / n) / k2)
    assert pair_gap.final_sd(f"x p1 {k1}/{n} p2 {k2}/{n}") == pytest.approx(want, rel=1e-12)
    assert math.isnan(pair_gap.final_sd(None))
    assert math.isnan(pair_gap.final_sd("x p1 0/10 p2 3/10"))


@pytest.mark.parametrize(
    ("box", "verdict"),
    [([0.10, 0.11, 0.12], "yes"), ([0.10, 0.1095, 0.12], "tie"), ([0.10, 0.105, 0.12], "no")],
)
def test_verdict_against_twice_the_final_sd_at_the_median_pair_seed(box, verdict):
    # 4·10^6 / 3.6·10^6 hits of 10^7 at the --pair median: 2·sd ≈ 0.00115
    counts = [("4000000/10000000", "3600000/10000000")] * 3
    pair = _row("c", [0.09, 0.11, 0.13], counts)
    tol = 2 * pair_gap.final_sd(pair["witnesses"][1])
    assert 0.0005 < tol < 0.005  # so that -0.0005 is a tie and -0.005 is not
    r = pair_gap.compare(_row("c", box, counts), pair)
    assert r["verdict"] == verdict
    assert r["diff"] == pytest.approx(sorted(box)[1] - 0.11)


def test_runs_of_one_case_over_several_lines_are_joined_by_seed(tmp_path):
    f = tmp_path / "p.jsonl"
    c = ("5/10", "4/10")
    lines = [_row("svt4", [0.3], [c], first_seed=0), _row("svt4", [0.1, 0.2], [c, c], 1)]
    f.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    row = pair_gap.load(str(f))["svt4"]
    assert row["epsilon_lcb"] == [0.3, 0.1, 0.2]
    assert len(row["witnesses"]) == 3
