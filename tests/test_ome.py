"""OME (Lyu et al. SIGIR 2020): encoding bit-exact with the reference rules, perturbation, pmf."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpaudit.errors import EncodingError, InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.ome import (
    ENCODABLE_BOUND,
    bit_log_probabilities,
    bits_to_codes,
    decode,
    encode,
    flip_probabilities,
    log_likelihood,
    one_probabilities,
    perturb,
    quantize,
)


def reference_code(x: float) -> str:
    """The reference code's rule, written with Python's round()/format() as the spec states."""
    return format(round(x * 2**5), "011b").replace("-", "1")


def as_string(bits: np.ndarray) -> str:
    return "".join(str(int(b)) for b in bits)


def all_outputs(n_bits: int) -> np.ndarray:
    """Every bit vector of length ``n_bits`` (row i is i in binary, MSB first)."""
    idx = np.arange(2**n_bits)[:, None]
    return ((idx >> np.arange(n_bits - 1, -1, -1)) & 1).astype(np.uint8)


# ------------------------------------------------------------------------------ encoding
@pytest.mark.parametrize(
    ("value", "code"),
    [(1, "00000100000"), (-1, "10000100000"), (2, "00001000000"), (10, "00101000000")],
)
def test_acceptance_encodings(value: float, code: str) -> None:
    assert as_string(encode(value)) == code


def test_forty_is_not_encodable_and_error_names_value_index_and_range() -> None:
    with pytest.raises(EncodingError) as info:
        encode([1.0, 2.0, 40.0])
    msg = str(info.value)
    assert "[2]=40.0" in msg
    assert "-31.984375 < x < 31.984375" in msg


@pytest.mark.parametrize("value", [31.984375, -31.984375, 32.0, -1e9, np.inf, np.nan])
def test_boundary_and_non_finite_values_are_rejected(value: float) -> None:
    # 31.984375·32 = 1023.5 rounds half-to-even to 1024, which collides with the sign bit.
    with pytest.raises(EncodingError):
        encode(value)


def test_largest_encodable_values() -> None:
    below = np.nextafter(ENCODABLE_BOUND, 0.0)
    assert as_string(encode(below)) == "01111111111" == reference_code(below)
    assert as_string(encode(-below)) == "11111111111" == reference_code(-below)


def test_tiny_negatives_encode_like_zero() -> None:
    # round(-0.01·32) = round(-0.32) = 0 and round(-0.5) = 0: Python ints have no -0.
    for value in (-0.01, -1 / 64, 1 / 64, -0.0, 0.0):
        assert as_string(encode(value)) == "0" * 11 == reference_code(value)


def test_bit_exact_with_reference_rules_on_ties_and_random_values() -> None:
    # Exact ties x·32 = odd/2 (round half to even matters), plus random values and float32s
    # as GloVe vectors are stored.
    ties = 0.015625 * np.arange(-2045, 2046, 14)  # 1/64 · odd
    assert np.all(np.abs(ties * 64) % 2 == 1)
    rng = np.random.default_rng(7)
    uniform = rng.uniform(-31.98, 31.98, size=200)
    small = rng.normal(0.0, 0.05, size=100)
    values = np.concatenate([ties, uniform, small])
    got = encode(values).reshape(len(values), 11)
    for v, bits in zip(values, got, strict=True):
        assert as_string(bits) == reference_code(float(v)), v
    glove_like = rng.normal(0.0, 1.5, size=100).astype(np.float32)
    got32 = encode(glove_like).reshape(-1, 11)
    for v, bits in zip(glove_like, got32, strict=True):
        assert as_string(bits) == reference_code(v), v  # numpy float32 scalar, as in the reference


def test_vector_encoding_is_concatenation_with_leading_axes() -> None:
    x = np.array([[1.0, -1.0, 2.0], [10.0, 0.0, -0.5]])
    bits = encode(x)
    assert bits.shape == (2, 33) and bits.dtype == np.uint8
    for row, values in zip(bits, x, strict=True):
        assert as_string(row) == "".join(reference_code(v) for v in values)
    assert encode(3.0).shape == (11,)


def test_decode_inverts_encode_on_every_code() -> None:
    codes = np.arange(-1023, 1024)
    values = codes / 32
    bits = encode(values)
    assert np.array_equal(quantize(values), codes)
    assert np.array_equal(decode(bits), values)
    assert np.array_equal(encode(decode(bits)), bits)
    # Rounding to the grid: decode(encode(x)) = rint(32x)/32.
    x = np.random.default_rng(3).uniform(-20, 20, size=(5, 4))
    assert np.array_equal(decode(encode(x)), np.rint(x * 32) / 32)
    assert decode(encode(x)).shape == (5, 4)


def test_every_11_bit_pattern_decodes_including_negative_zero() -> None:
    patterns = all_outputs(11)
    codes = bits_to_codes(patterns)[:, 0]
    assert codes[0b10000000000] == 0  # sign set, magnitude 0: only reachable by perturbation
    nonzero = np.arange(2048) != 0b10000000000
    assert np.array_equal(encode(codes[nonzero] / 32).reshape(-1, 11), patterns[nonzero])


def test_bad_bit_arrays_are_rejected() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidArgumentError, match="multiple of 11"):
        perturb(np.zeros(10, dtype=np.uint8), rng, epsilon=1.0, lam=10.0)
    with pytest.raises(InvalidArgumentError, match="0/1"):
        decode(np.full(11, 2, dtype=np.uint8))
    with pytest.raises(InvalidArgumentError, match="lambda"):
        flip_probabilities(1.0, 0.0, 11)


# -------------------------------------------------------------------------- perturbation
def test_flip_probabilities_closed_form() -> None:
    eps, lam = 1.0, 10.0
    clean = encode([1.0, -3.5, 7.25])  # r·l = 33 bits
    p1, p2, q = flip_probabilities(eps, lam, 33)
    assert p1 == pytest.approx(lam / (1 + lam), rel=1e-15)
    assert p2 == pytest.approx(1 / (1 + lam**3), rel=1e-15)
    assert q == pytest.approx(1 / (1 + lam * np.exp(eps / 33)), rel=1e-15)
    probs = one_probabilities(clean, epsilon=eps, lam=lam)
    even = np.arange(33) % 2 == 0
    assert np.all(probs[(clean == 1) & even] == p1)
    assert np.all(probs[(clean == 1) & ~even] == p2)
    assert np.all(probs[clean == 0] == q)
    # Huge λ stays finite (no overflow of λ³).
    p1, p2, q = flip_probabilities(eps, 1e200, 11)
    assert p1 == 1.0 and 0.0 <= p2 < 1e-300 and 0.0 < q < 1e-199


@pytest.mark.parametrize("lam", [2.0, 100.0])
def test_flip_frequencies_match_p1_p2_q(lam: float) -> None:
    # Clean bits contain 1s at even and odd global indices and 0s; the parity of a value's
    # bits alternates from one value to the next (l = 11 is odd).
    eps = 1.0
    values = np.array([1.0, -3.5, 7.25, 0.0, -9.96875])
    clean = encode(values)
    n = 40_000
    rng = np.random.default_rng(2024)
    out = perturb(np.broadcast_to(clean, (n, clean.size)), rng, epsilon=eps, lam=lam)
    p1, p2, q = flip_probabilities(eps, lam, clean.size)
    j = np.arange(clean.size)
    for mask, p in [
        ((clean == 1) & (j % 2 == 0), p1),
        ((clean == 1) & (j % 2 == 1), p2),
        (clean == 0, q),
    ]:
        trials = n * mask.sum()
        assert trials > 0
        freq = out[:, mask].sum() / trials
        # 5 binomial standard errors (plus a 1/trials floor for p2 ≈ 1e-6 at λ = 100).
        se = np.sqrt(p * (1 - p) / trials)
        assert abs(freq - p) <= 5 * se + 1.0 / trials, (p, freq)
    # Per position, also within 5 standard errors of its own probability.
    probs = one_probabilities(clean, epsilon=eps, lam=lam)
    se = np.sqrt(probs * (1 - probs) / n)
    assert np.all(np.abs(out.mean(axis=0) - probs) <= 5 * se + 1.0 / n)


def test_perturb_is_independent_of_chunking_and_matches_mechanism_sampler() -> None:
    clean = encode(np.random.default_rng(5).uniform(-5, 5, size=(300, 50)))
    whole = perturb(clean, np.random.default_rng(11), epsilon=1.0, lam=10.0)
    rng = np.random.default_rng(11)
    parts = [
        perturb(clean[a:b], rng, epsilon=1.0, lam=10.0) for a, b in [(0, 7), (7, 200), (200, 300)]
    ]
    assert np.array_equal(whole, np.concatenate(parts))
    assert whole.dtype == np.uint8 and whole.shape == clean.shape
    mech = make_mechanism("ome", epsilon=1.0, dim=3, **{"lambda": 10.0})
    x = np.array([1.5, -2.0, 0.25])
    sampled = mech.sample(x, 5000, np.random.default_rng(8))
    direct = perturb(
        np.broadcast_to(encode(x), (5000, 33)), np.random.default_rng(8), epsilon=1.0, lam=10.0
    )
    assert np.array_equal(sampled, direct)


# ------------------------------------------------------------------------------ the pmf
@pytest.mark.parametrize(("eps", "lam"), [(0.001, 1.0), (1.0, 10.0), (1.0, 100.0), (5.0, 0.5)])
def test_log_prob_sums_to_one_over_all_2048_outputs(eps: float, lam: float) -> None:
    mech = make_mechanism("ome", epsilon=eps, **{"lambda": lam})
    outputs = all_outputs(11)
    for x in (-9.5, -0.01, 0.0, 3.71875, 10.0):
        total = np.exp(mech.log_prob(x, outputs)).sum()
        assert total == pytest.approx(1.0, abs=1e-12)


def test_log_prob_matches_product_of_one_probabilities() -> None:
    clean = encode([2.5, -7.0])
    outputs = all_outputs(11)
    outputs = np.concatenate([outputs, outputs[::-1]], axis=1)  # 22-bit outputs
    p = one_probabilities(clean, epsilon=0.3, lam=7.0)
    expected = np.log(np.where(outputs == 1, p, 1 - p)).sum(axis=1)
    got = log_likelihood(outputs, clean, epsilon=0.3, lam=7.0)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    log_one, log_zero = bit_log_probabilities(clean, epsilon=0.3, lam=7.0)
    np.testing.assert_allclose(np.exp(log_one) + np.exp(log_zero), 1.0, rtol=1e-14)


def test_sampler_goodness_of_fit_over_all_2048_outputs() -> None:
    # Chi-square of 200k samples against exp(log_prob); cells with expected count < 5 are
    # pooled so the chi-square approximation holds.  At a fixed seed the test would fail with
    # probability 1e-4 if the sampler were exact.
    mech = make_mechanism("ome", epsilon=1.0, **{"lambda": 2.0})
    x = -3.40625  # sign, even and odd bits set
    n = 200_000
    samples = mech.sample(x, n, np.random.default_rng(99))
    index = samples.astype(np.int64) @ (1 << np.arange(10, -1, -1))
    observed = np.bincount(index, minlength=2048)
    expected = n * np.exp(mech.log_prob(x, all_outputs(11)))
    big = expected >= 5
    obs = np.append(observed[big], observed[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(obs, exp).pvalue > 1e-4


# ------------------------------------------------------------------------- the mechanism
def test_registry_cli_names_and_claim() -> None:
    mech = make_mechanism("ome", epsilon="1", **{"lambda": "10", "dim": "2", "domain": "-1,1"})
    assert mech.lam == 10.0 and mech.dim == 2 and mech.domain == (-1.0, 1.0)
    assert mech.output_shape == (22,) and mech.output_kind == "binary"
    assert mech.known_flawed
    assert mech.claim.epsilon == 1.0 and mech.claim.sensitivity == 22
    default = make_mechanism("ome", epsilon=1.0)
    assert (default.lam, default.dim, default.domain) == (100.0, 1, (-10.0, 10.0))


@pytest.mark.parametrize(
    ("params", "argument"),
    [
        ({"lambda": "0"}, "lambda"),
        ({"lambda": "-2"}, "lambda"),
        ({"domain": "-40,40"}, "domain"),
        ({"domain": "0,31.984375"}, "domain"),
        ({"dim": "0"}, "dim"),
    ],
)
def test_bad_parameters_name_the_argument(params: dict[str, str], argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        make_mechanism("ome", epsilon=1.0, **params)
    assert info.value.argument == argument


def test_input_outside_domain_is_rejected() -> None:
    mech = make_mechanism("ome", epsilon=1.0)
    with pytest.raises(InvalidArgumentError, match="x="):
        mech.sample(40.0, 3, np.random.default_rng(0))
