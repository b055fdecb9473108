"""The input design on datasets: neighbouring pairs that sweep the record domain.

A count mechanism over datasets of integers that leaks only when one interior record
value is present is flagged without ``--pair`` on 3 of 3 seeds; a correct count is not,
and the result says which datasets were screened.
"""

from __future__ import annotations

import pytest

import dpaudit
from dpaudit import AuditConfig, Definition, PrivacyClaim
from dpaudit.domains import Dataset, IntRange
from dpaudit.mechanisms.output_grid import round_to_grid

EPS = 1.0
DOMAIN = Dataset(IntRange(0, 63), max_size=20)
CLAIM = PrivacyClaim(Definition.PURE, EPS, DOMAIN)
SIZES = AuditConfig(samples=10_000, final_samples=50_000)


def count_leaking_37(d, n, rng):
    """A 1-DP noisy count, except that a dataset holding 37 gets 20× less noise."""
    scale = 0.05 / EPS if 37 in d else 1.0 / EPS
    return round_to_grid(len(d) + rng.laplace(0.0, scale, size=n), 0.05 / EPS)


def count(d, n, rng):
    return round_to_grid(len(d) + rng.laplace(0.0, 1.0 / EPS, size=n), 1.0 / EPS)


def test_design_pairs_sweep_every_record_value():
    pairs = DOMAIN.design_pairs()
    added = {tuple(b)[-1] for a, b in pairs}
    assert added == set(range(64)) and all(DOMAIN.are_neighbours(a, b) for a, b in pairs)
    replace = Dataset(IntRange(0, 9), neighbours="replace-one").design_pairs()
    assert all(
        Dataset(IntRange(0, 9), neighbours="replace-one").are_neighbours(a, b) for a, b in replace
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_leak_at_one_record_value_is_found_without_a_pair(seed: int):
    result = dpaudit.audit(
        count_leaking_37, CLAIM, config=AuditConfig(**{**SIZES.__dict__, "seed": seed})
    )
    assert result.violation, result.verdict_text
    assert 37 in result.witness.values[0] + result.witness.values[1]
    assert result.witness.pair_origin.startswith("design")


def test_a_correct_count_is_not_flagged_and_the_note_names_the_sweep():
    result = dpaudit.audit(count, CLAIM, config=SIZES)
    assert not result.violation
    note = next(n for n in result.notes if n.startswith("inputs looked at"))
    assert "neighbouring pairs" in note and "record value" in note
