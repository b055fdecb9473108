"""benchmarks/split_weights.py: re-certifying recorded sets under a weighted Bonferroni split."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from dpaudit.auditors.blackbox.result import BlackBoxDetail, CertifiedSet
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "split_weights.py"
spec = importlib.util.spec_from_file_location("split_weights", PATH)
split_weights = importlib.util.module_from_spec(spec)
spec.loader.exec_module(split_weights)

N = 1_000_000


def _set(role, hits_x, hits_x_prime, face=0.1):
    return CertifiedSet(role, 0, True, "split", hits_x, hits_x_prime, N, 0.0, face)


SETS = [_set("best", 400_000, 370_000), _set("rung", 4_000, 3_300), _set("hedge", 500_000, 470_000)]


def _bound(s, error):
    lower = float(clopper_pearson_lower(s.hits_x, N, error))
    upper = float(clopper_pearson_upper(s.hits_x_prime, N, error))
    return math.log(lower / upper)


def test_an_even_weight_is_the_libraries_own_equal_split():
    # two sets: w = 1/2 gives each α/4 per estimate, the equal split of recertified
    detail = BlackBoxDetail("dpaudit", (), 0, 0, 2, tuple(SETS[:2]))
    want = detail.recertified(lambda c: True, confidence=0.9)
    assert split_weights.split_bound(SETS[:2], 0.1, 0.5) == pytest.approx(want, rel=1e-12)


def test_the_winner_gets_its_weight_and_the_rest_share_what_is_left():
    # winner at 0.75·α/2, each of the other two at 0.25·α/4 per one-sided estimate
    want = max(_bound(SETS[0], 0.75 * 0.05), *(_bound(s, 0.25 * 0.05 / 2) for s in SETS[1:]))
    assert split_weights.split_bound(SETS, 0.1, 0.75) == pytest.approx(want, rel=1e-12)
    # one set takes all of α whatever the weight
    assert split_weights.split_bound(SETS[:1], 0.1, 0.5) == pytest.approx(
        _bound(SETS[0], 0.05), rel=1e-12
    )


def test_a_set_with_no_evidence_gives_zero_not_a_negative_bound():
    assert split_weights.split_bound([_set("best", 10, 900)], 0.1, 0.5) == 0.0
