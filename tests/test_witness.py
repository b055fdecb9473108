"""One witness type for every auditor: analytic truth, sanity check and black-box audit."""

from __future__ import annotations

import json
import math

from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.pairs import InputPair
from dpaudit.auditors.sanity.check import sanity_check
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.mechanisms.registry import make_mechanism
from dpaudit.serialization import dumps
from dpaudit.witness import ProbabilityEstimate, ThresholdAttack, Witness, WitnessKind

COMMON_KEYS = {"kind", "x", "x_prime", "event", "epsilon_lower_bound", "confidence"}


def _json(w: Witness) -> dict:
    return json.loads(dumps(w))


def test_analytic_witness_is_exact_and_short() -> None:
    truth = make_mechanism("laplace", epsilon=1.0, dim=2).truth()
    w = truth.witness
    assert isinstance(w, Witness) and w.kind is WitnessKind.ANALYTIC
    assert w.confidence is None and w.p1 is None and w.attack is None
    assert w.epsilon_lower_bound == truth.true_epsilon
    data = _json(w)
    assert set(data) == COMMON_KEYS and data["kind"] == "analytic" and data["confidence"] is None
    assert "exactly" in w.describe() and "\n" not in w.describe()


def test_sanity_check_witness_has_pair_counts_and_seeds() -> None:
    mech = make_mechanism("dptext", epsilon=1.0, dim=8)  # violates: one-sided noise
    r = sanity_check(mech, 2000, seed=3, confidence=0.95)
    w = r.witness
    assert isinstance(w, Witness) and w.kind is WitnessKind.SANITY_CHECK
    assert len(w.x) == 8 and len(set(w.x)) == 1 and len(set(w.x_prime)) == 1
    assert w.x != w.x_prime and w.confidence == 0.95
    assert w.epsilon_lower_bound == r.epsilon_lower_bound
    assert w.p1.samples == w.p2.samples == 2000
    # The witness's counts are the result's table: numerator row x, column = the guess.
    guess = int(w.event.rsplit("= ", 1)[1])
    assert r.detail.counts[int(w.x[0])][guess] == w.p1.hits
    assert r.detail.counts[int(w.x_prime[0])][guess] == w.p2.hits
    assert w.seeds is not None and w.seeds.root_seed == 3
    assert w.seeds.p1_unit_key_prefix[-1] == int(w.x[0])
    data = _json(w)
    assert set(data) >= COMMON_KEYS and {"p1", "p2", "seeds"} <= set(data)
    assert "8" in w.describe() and "\n" not in w.describe()  # x = 1^8, not eight numbers


def test_black_box_witness_keeps_json_keys_and_short_repr() -> None:
    mech = make_mechanism("laplace", epsilon=0.5)
    pair = InputPair((0.0,), (1.0,), "given")
    cfg = AuditConfig(samples=5_000, final_samples=20_000, pairs=(pair,), use_patterns=False)
    w = audit(mech, cfg, ExecutionConfig(workers=1)).witness
    assert isinstance(w, Witness) and w.kind is WitnessKind.BLACK_BOX
    assert w.event == w.attack.set_description and w.confidence == cfg.confidence
    data = _json(w)
    assert {"pair_origin", "attack", "p1", "p2", "epsilon_estimate", "seeds"} <= set(data)
    assert set(data["seeds"]) == {"root_seed", "p1_unit_key_prefix", "p2_unit_key_prefix"}
    assert "\n" not in w.describe() and str(w) == w.describe()


def test_classifier_state_stays_out_of_repr() -> None:
    weights = {"coef": [[0.123456789] * 50]}
    attack = ThresholdAttack("logistic", "w·y", ((0.0,), (1.0,)), "upper", 0.5, 0.0, None, weights)
    w = Witness(
        WitnessKind.BLACK_BOX,
        (0.0,),
        (1.0,),
        attack.set_description,
        1.0,
        0.9,
        p1=ProbabilityEstimate(90, 100, 0.8, "lower", 0.01),
        p2=ProbabilityEstimate(10, 100, 0.2, "upper", 0.01),
        attack=attack,
    )
    assert "0.123456789" not in repr(w) and "0.123456789" not in str(w)
    assert _json(w)["attack"]["classifier"] == weights  # still serialised for re-checking
    assert w.summary()["p1 = Pr[M(x) ∈ S]"] == "90/100, lower bound 0.8"


def test_infinite_loss_prints_and_serialises() -> None:
    w = Witness.analytic((0.0,), (1.0,), math.inf, "S = {x}")
    assert "∞" in w.describe()
    assert _json(w)["epsilon_lower_bound"] == "inf"
