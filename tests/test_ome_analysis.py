"""Exact worst-case ε of OME checked against brute force over every output, and HoHo's bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpaudit.analysis.ome import (
    METHOD,
    bit_loss_tables,
    directed_loss,
    domain_codes,
    hoho_bound_epsilon,
    ome_truth,
    ome_worst_case,
)
from dpaudit.errors import EncodingError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.ome import ENCODABLE_BOUND, bit_log_probabilities, encode

FULL = (-ENCODABLE_BOUND + 1e-9, ENCODABLE_BOUND - 1e-9)


def all_outputs(n_bits: int, start: int = 0, stop: int | None = None) -> np.ndarray:
    idx = np.arange(start, 2**n_bits if stop is None else stop)[:, None]
    return ((idx >> np.arange(n_bits - 1, -1, -1)) & 1).astype(np.uint8)


def brute_force_epsilon(
    inputs: np.ndarray, eps: float, lam: float, *, only_varying: bool = False
) -> float:
    """max over pairs and over every output y of |ln p(y|x) − ln p(y|x')|.

    Swapping the maxima, this is max_y [max_x ln p(y|x) − min_x ln p(y|x)], computed
    from the pmf alone (no use of the per-bit loss decomposition under test).  With
    ``only_varying`` the enumeration runs over the bits whose clean value differs between
    some inputs, the others fixed to 0: a bit with the same clean value under every input
    contributes the same factor to every p(y|x), so it cancels in every ratio.
    """
    clean = encode(inputs)  # (K, r*11)
    log_one, log_zero = bit_log_probabilities(clean, epsilon=eps, lam=lam)
    varying = np.arange(clean.shape[1])
    if only_varying:
        varying = np.flatnonzero(clean.min(axis=0) != clean.max(axis=0))
    fixed = np.setdiff1d(np.arange(clean.shape[1]), varying)
    highest = lowest = None
    for i in range(len(clean)):
        # ln p(y|x) for all 2^n outputs y (first bit most significant), one bit at a time;
        # the fixed bits are output as 0.
        lp = np.array([log_zero[i, fixed].sum()])
        for j in varying:
            lp = (lp[:, None] + np.array([log_zero[i, j], log_one[i, j]])).ravel()
        highest = lp if highest is None else np.maximum(highest, lp)
        lowest = lp if lowest is None else np.minimum(lowest, lp)
    return float((highest - lowest).max())


GRID = [(eps, lam) for eps in (0.001, 1.0) for lam in (1.0, 10.0, 100.0)]


@pytest.mark.parametrize(("eps", "lam"), [*GRID, (2.0, 0.5), (1.0, 3.0)])
@pytest.mark.parametrize("domain", [(-10.0, 10.0), (-0.5, 0.5), (-1.5, 1.0), (29.0, 31.9), FULL])
def test_exact_epsilon_matches_brute_force_r1(
    eps: float, lam: float, domain: tuple[float, float]
) -> None:
    _, reps = domain_codes(domain)
    brute = brute_force_epsilon(reps[:, None], eps, lam)
    wc = ome_worst_case(eps, lam, 1, domain)
    assert wc.true_epsilon == pytest.approx(brute, rel=1e-9, abs=1e-15)
    # The witness lies in the domain and attains the value under the mechanism's own loss.
    mech = make_mechanism("ome", epsilon=eps, **{"lambda": lam, "domain": domain})
    assert all(domain[0] <= v <= domain[1] for v in (*wc.x, *wc.x_prime))
    assert mech.privacy_loss(wc.x, wc.x_prime) == pytest.approx(wc.true_epsilon, rel=1e-12)


def test_domain_codes_are_all_reachable_and_complete() -> None:
    for domain in [(-10.0, 10.0), (-0.01, 0.3), (0.2, 0.23), FULL]:
        codes, reps = domain_codes(domain)
        assert np.array_equal(np.rint(reps * 32).astype(int), codes)
        assert np.all((reps >= domain[0]) & (reps <= domain[1]))
        grid = np.linspace(*domain, 20001)
        assert set(np.rint(grid * 32).astype(int)) == set(codes.tolist())
    assert len(domain_codes((-10.0, 10.0))[0]) == 641
    assert len(domain_codes(FULL)[0]) == 2047
    with pytest.raises(EncodingError):
        domain_codes((-40.0, 40.0))


def test_exact_epsilon_matches_brute_force_r2_over_all_2_22_outputs() -> None:
    # r = 2: every one of the 2^22 outputs; the second value's bits have the opposite parity.
    domain = (-0.07, 0.07)  # codes -2..2: the sign bit and two magnitude bits vary
    _, reps = domain_codes(domain)
    pairs = np.array([(a, b) for a in reps for b in reps])
    brute = brute_force_epsilon(pairs, 1.0, 100.0)
    wc = ome_worst_case(1.0, 100.0, 2, domain)
    assert wc.true_epsilon == pytest.approx(brute, rel=1e-9)


@pytest.mark.parametrize(("eps", "lam"), [*GRID, (2.0, 0.5)])
def test_exact_epsilon_matches_brute_force_r2_varying_bits(eps: float, lam: float) -> None:
    # Every pair of the 21×21 inputs of [-0.3, 0.3]^2 (codes -10..10).
    domain = (-0.3, 0.3)
    _, reps = domain_codes(domain)
    inputs = np.array([(a, b) for a in reps for b in reps])
    brute = brute_force_epsilon(inputs, eps, lam, only_varying=True)
    wc = ome_worst_case(eps, lam, 2, domain)
    assert wc.true_epsilon == pytest.approx(brute, rel=1e-9)
    assert wc.true_epsilon == pytest.approx(sum(wc.per_value_epsilon), rel=1e-12)


@pytest.mark.parametrize(("eps", "lam"), [(1.0, 100.0), (0.001, 1.0), (2.0, 0.5)])
def test_pair_losses_match_brute_force_r2_on_a_wide_subset(eps: float, lam: float) -> None:
    # A 441-input subset of [-1, 2.2]^2 (more magnitude bits vary): the largest exact pair loss
    # within the subset equals the brute-force value over the subset, and the search over the
    # whole domain is at least as large.
    domain = (-1.0, 2.2)
    _, reps = domain_codes(domain)
    sub = reps[::5]
    inputs = np.array([(a, b) for a in sub for b in sub])
    brute = brute_force_epsilon(inputs, eps, lam, only_varying=True)
    clean = encode(inputs)
    pairwise = directed_loss(clean[:, None, :], clean[None, :, :], epsilon=eps, lam=lam)
    assert pairwise.max() == pytest.approx(brute, rel=1e-9)
    assert ome_worst_case(eps, lam, 2, domain).true_epsilon >= brute * (1 - 1e-12)


def test_pair_loss_matches_brute_force_for_random_pairs() -> None:
    rng = np.random.default_rng(1)
    for lam in (0.3, 1.0, 10.0, 100.0):
        mech = make_mechanism("ome", epsilon=1.0, **{"lambda": lam, "domain": FULL})
        outputs = all_outputs(11)
        for _ in range(10):
            x, xp = rng.uniform(*FULL, size=2)
            diff = mech.log_prob(x, outputs) - mech.log_prob(xp, outputs)
            assert mech.privacy_loss(x, xp) == pytest.approx(np.abs(diff).max(), rel=1e-10)


def test_r3_is_sum_of_parity_worst_cases_and_witness_attains_it() -> None:
    wc = ome_worst_case(1.0, 100.0, 3, (-10.0, 10.0))
    even, odd = wc.per_value_epsilon
    assert wc.true_epsilon == pytest.approx(2 * even + odd, rel=1e-12)
    mech = make_mechanism("ome", epsilon=1.0, dim=3, **{"lambda": 100.0})
    assert mech.privacy_loss(wc.x, wc.x_prime) == pytest.approx(wc.true_epsilon, rel=1e-12)
    # Values at odd positions see the flipped pattern: their worst pair is mirrored.
    one = ome_worst_case(1.0, 100.0, 2, (-10.0, 10.0))
    assert one.x[1] != one.x[0] or one.x_prime[1] != one.x_prime[0]


def test_full_domain_lambda_one_closed_form_exceeds_hoho_bound() -> None:
    # λ = 1: p1 = p2 = 1/2, q = 1/(1+e^a), a = ε/11.  Every 11-bit pattern pair with c = 1 on
    # every bit (−1023/32) and c' = 0 (0.0) is encodable; per bit the sup is ln((1+e^a)/2),
    # so ε_true = 11·ln((1+e^{ε/11})/2) > ε/2 = HoHo's bound (AM–GM), if only by ≈ ε²/88.
    for eps in (0.001, 1.0, 5.0):
        wc = ome_worst_case(eps, 1.0, 1, FULL)
        closed = 11 * math.log((1 + math.exp(eps / 11)) / 2)
        assert wc.true_epsilon == pytest.approx(closed, rel=1e-12)
        assert wc.true_epsilon > wc.hoho_bound_epsilon
        assert {wc.x[0], wc.x_prime[0]} == {-1023 / 32, 0.0}


def test_full_domain_is_sum_of_per_bit_maxima() -> None:
    # On the full encodable range every pattern except '10000000000' is a code, so the worst
    # case is Σ_j max(A_j, B_j) whenever the maximising pattern pair avoids that one pattern.
    for lam in (0.5, 1.0, 10.0, 100.0):
        a, b = bit_loss_tables(1.0, lam, 11)
        x_bits = (a >= b).astype(int)
        if x_bits.tolist() in ([1] + [0] * 10, [0] + [1] * 10):
            continue
        wc = ome_worst_case(1.0, lam, 1, FULL)
        assert wc.true_epsilon == pytest.approx(np.maximum(a, b).sum(), rel=1e-12)


def test_hoho_bound_closed_form_and_comparison() -> None:
    assert hoho_bound_epsilon(1.0, 100.0, 1) == pytest.approx(11 * math.log(100) + 0.5)
    assert hoho_bound_epsilon(0.001, 10.0, 50) == pytest.approx(550 * math.log(10) + 0.0005)
    for eps in (0.001, 1.0):
        lam1 = ome_worst_case(eps, 1.0)
        assert lam1.true_epsilon <= eps  # λ = 1 keeps the claim on [−10, 10]
        assert lam1.true_epsilon < lam1.hoho_bound_epsilon
        assert "above" in lam1.comparison()
        for lam in (10.0, 100.0):
            wc = ome_worst_case(eps, lam)
            # Far beyond the claim and beyond DP-Sniper's ln(1/c) = ln(100) ceiling ...
            assert wc.true_epsilon > 5 * math.log(100)
            # ... and beyond HoHo's printed "bound" too: odd bits contribute ≈ 2·ln λ each.
            assert wc.true_epsilon > wc.hoho_bound_epsilon
            assert "BELOW" in wc.comparison()


def test_truth_object_and_mechanism_listing() -> None:
    mech = make_mechanism("ome", epsilon=1.0)
    truth = mech.truth()
    assert truth.method == METHOD
    assert truth.violates(mech.claim)
    assert truth.witness is not None
    assert truth.witness.epsilon_lower_bound == pytest.approx(truth.true_epsilon)
    assert any("HoHo" in note for note in truth.notes)
    assert truth == ome_truth(1.0, 100.0, 1, (-10.0, 10.0))
    honest = make_mechanism("ome", epsilon=1.0, **{"lambda": 1.0}).truth()
    assert not honest.violates(make_mechanism("ome", epsilon=1.0, **{"lambda": 1.0}).claim)
