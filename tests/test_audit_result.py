"""One typed result for every auditor, serialised once: ``AuditResult.to_dict`` / ``from_dict``.

Each auditor kind is round-tripped from a real (small, seeded) audit where
one is cheap, and from a hand-built result carrying the awkward values
(``inf``, ``-inf``, ``nan``, None, nested witnesses) where it is not.  The
round trip is exact: the rebuilt result equals the original (NaN aside,
which equals nothing, so those compare by their JSON, which must be
identical, and by ``math.isnan``).
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from _rewriter_results import rewriter_result

import dpaudit
from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.blackbox.result import BlackBoxDetail
from dpaudit.auditors.blackbox.scores import LikelihoodRatioScore
from dpaudit.auditors.core.certify import Certificate
from dpaudit.auditors.core.declarations import DeclarationFinding
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.auditors.metric.result import MetricDetail, PairResult
from dpaudit.auditors.profile import ProfileAuditConfig, audit_profile
from dpaudit.auditors.profile.result import ProfileDetail
from dpaudit.auditors.rewriter.exact import ExactLoss, WorstToken
from dpaudit.auditors.rewriter.fidelity import FidelityCheck
from dpaudit.auditors.rewriter.result import (
    PairFindings,
    RewriterDetail,
    Statement,
    summary,
)
from dpaudit.auditors.sanity.check import SanityDetail, sanity_check
from dpaudit.auditors.training.result import TrainingDetail
from dpaudit.claims import GaussianDP, Neighbours, TextClaim, Unit
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.results.audit import AuditorKind, AuditResult, detail_type
from dpaudit.serialization import dumps, from_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import ProbabilityEstimate, Witness, WitnessKind

ONE = ExecutionConfig(workers=1)


def _round_trip(result: AuditResult) -> AuditResult:
    """``result`` through strict JSON text and back; its JSON must come back identical."""
    text = dumps(result)
    back = AuditResult.from_json(text)
    assert dumps(back) == text
    assert json.loads(text) == result.to_dict()  # dumps writes to_dict, nothing else
    return back


def test_blackbox_round_trip_is_exact() -> None:
    r = audit(make_mechanism("laplace", epsilon=1.0), AuditConfig(3_000, 6_000, seed=1), ONE)
    assert r.kind is AuditorKind.BLACKBOX and r.witness is not None
    back = _round_trip(r)
    assert back == r and back.detail.certified_proposals >= 1
    assert len(back.detail.certified) == back.detail.certified_proposals
    assert back.witness.attack is not None and back.witness.seeds == r.witness.seeds


def test_sanity_round_trip_is_exact_with_an_infinite_loss() -> None:
    r = sanity_check(make_mechanism("dptext", epsilon=1.0, dim=4), 2_000, execution=ONE)
    assert isinstance(r.detail, SanityDetail) and r.detail.empirical_loss == math.inf
    data = r.to_dict()
    assert data["detail"]["empirical_loss"] == "inf" and data["kind"] == "sanity"
    assert _round_trip(r) == r


def test_metric_round_trip_is_exact() -> None:
    rng = np.random.default_rng(0)
    emb = WordEmbedding(tuple(f"w{i}" for i in range(30)), rng.normal(size=(30, 4)))
    mech = make_word_mechanism("santext", emb, epsilon=2.0)
    r = audit_metric(mech, MetricAuditConfig(samples=2_000, final_samples=4_000, max_pairs=3), ONE)
    assert isinstance(r.detail, MetricDetail) and r.detail.worst is r.detail.pairs[0]
    assert all(isinstance(p.verdict, Verdict) for p in r.detail.pairs)
    back = _round_trip(r)
    assert back == r and back.witness == r.witness


def test_profile_round_trip_keeps_a_nan_epsilon() -> None:
    mech = make_mechanism("gaussian", epsilon=1.0, delta=1e-5)
    score = LikelihoodRatioScore(mech, np.zeros(1), np.ones(1))
    cfg = ProfileAuditConfig(selection_samples=1_000, final_samples=4_000, execution=ONE)
    r = audit_profile(mech, 0.0, 1.0, score, GaussianDP(0.5), cfg)
    # A GDP claim has no ε: NaN, written "nan", read back as NaN.
    assert math.isnan(r.claimed_epsilon) and r.to_dict()["claimed_epsilon"] == "nan"
    back = _round_trip(r)
    assert math.isnan(back.claimed_epsilon)
    assert back.detail == r.detail and back.witness == r.witness and back.verdict is r.verdict


def _estimate(hits: int, n: int, bound: float, side: str) -> ProbabilityEstimate:
    return ProbabilityEstimate(hits, n, bound, side, 0.0125)


def _rewriter_result() -> AuditResult:
    """A white-box rewriter result with infinite losses and an uncovered pair."""
    p1, p2 = _estimate(90, 100, 0.8, "lower"), _estimate(0, 100, 0.03, "upper")
    witness = Witness(
        WitnessKind.BLACK_BOX, "a b", "a c", "rewrite has 'b'", 3.2, 0.95, "one", p1, p2
    )
    cert = Certificate(p1, p2, 3.2, 0.0, 2)
    worst = WorstToken("b b", 1, "b", "b", math.inf, (0.5, math.inf))
    exact = ExactLoss(10, (0.1, 0.5, 2.0, math.inf), math.inf, -math.inf, worst, math.inf)
    fidelity = FidelityCheck(40, 0, 0.12, 0.4, 1e-3)
    detail = RewriterDetail(
        mode="white-box",
        text_claim=TextClaim(1.0, Unit.TOKEN, neighbours=Neighbours.EQUAL_LENGTH),
        statements=(Statement(witness, cert, math.inf, Verdict.OUTSIDE_CLAIM),),
        best=0,
        ceiling=4.6,
        pairs=(PairFindings("a b", "a c", "one", exact, exact, fidelity, covered=False),),
        decoding=Decoding(temperature=2.0, clip=(-1.0, 1.0)),
        model_source="toy",
        code_under_audit="the rewriter's own sampler",
        fidelity_level=1e-3,
    )
    return rewriter_result("toy rewriter", detail, (50, 100), 0.95, 0, 0.5)


def test_rewriter_round_trip_is_exact_with_infinities() -> None:
    r = _rewriter_result()
    assert r.verdict is Verdict.OUTSIDE_CLAIM and r.epsilon_lower_bound == 3.2
    back = _round_trip(r)
    assert back == r
    assert back.detail.pairs[0].forward.max_excess == -math.inf
    assert back.detail.decoding.clip == (-1.0, 1.0) and back.detail.text_claim.unit is Unit.TOKEN
    assert "outside the claim" in summary(back)


def test_trust_notes_and_findings_round_trip() -> None:
    r = sanity_check(make_mechanism("laplace", epsilon=1.0, dim=2), 1_000, execution=ONE)
    finding = DeclarationFinding("noise_from_uniform", "laplace", "mismatch", "KS 0.3", 1e-6)
    noted = dataclasses.replace(
        r, declaration_findings=(finding,), notes=("n",), reproducible=False
    )
    back = _round_trip(noted)
    assert back.declaration_findings == (finding,) and not back.reproducible


def test_kind_selects_the_detail_type_and_bad_kinds_are_named() -> None:
    expected = {
        AuditorKind.BLACKBOX: BlackBoxDetail,
        AuditorKind.SANITY: SanityDetail,
        AuditorKind.METRIC: MetricDetail,
        AuditorKind.PROFILE: ProfileDetail,
        AuditorKind.REWRITER: RewriterDetail,
        AuditorKind.TRAINING: TrainingDetail,
    }
    assert {kind: detail_type(kind) for kind in AuditorKind} == expected
    with pytest.raises(InvalidArgumentError, match="kind"):
        detail_type("oracle")
    with pytest.raises(InvalidArgumentError, match="data"):
        AuditResult.from_dict({"verdict": "violation"})


def test_a_detail_of_the_wrong_kind_is_refused() -> None:
    r = _rewriter_result()
    with pytest.raises(InvalidArgumentError, match="detail"):
        dataclasses.replace(r, kind=AuditorKind.SANITY)


def test_the_decoder_restores_floats_tuples_enums_and_unions() -> None:
    assert from_jsonable(float, "-inf") == -math.inf and math.isnan(from_jsonable(float, "nan"))
    assert from_jsonable(tuple[float, ...], [1, "inf"]) == (1.0, math.inf)
    assert from_jsonable(tuple[float, ...] | str, "word") == "word"
    assert from_jsonable(tuple[float, ...] | str, [0, 1]) == (0.0, 1.0)
    assert from_jsonable(Verdict | None, None) is None
    assert from_jsonable(dict[str, float], {"a": "inf"}) == {"a": math.inf}
    pair = from_jsonable(PairResult, json.loads(dumps(_pair())))
    assert pair == _pair() and pair.verdict is Verdict.INCONCLUSIVE


def _pair() -> PairResult:
    p1, p2 = _estimate(3, 100, 0.01, "lower"), _estimate(1, 100, 0.05, "upper")
    return PairResult(
        "w0", "w1", "given", math.inf, math.inf, "w0", "one word", 1, ("w0",), p1, p2,
        math.log(3), -1.6, 0.0, "inconclusive", None, 0.01, math.inf, {"ceiling": 4.6}, None,
    )  # fmt: skip


def test_public_api_exports_the_typed_result() -> None:
    for name in (
        "AuditResult", "AuditorKind", "BlackBoxDetail", "SanityDetail", "MetricDetail",
        "PairResult", "ProfileDetail", "RewriterDetail", "Witness", "Verdict",
    ):  # fmt: skip
        assert name in dpaudit.__all__ and getattr(dpaudit, name) is not None
    assert dpaudit.AuditResult is AuditResult and dpaudit.RewriterDetail is RewriterDetail
    for gone in ("MetricAuditResult", "SanityCheckResult", "RewriterAuditResult"):
        assert gone not in dpaudit.__all__


def test_a_detail_type_loads_its_auditors_module_in_a_fresh_process() -> None:
    """A reader of stored results (``rundir``, the report) imports no auditor: ``detail_type``
    loads each kind's result module by name (``DETAIL_MODULES``) on first use."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from dpaudit.results.audit import AuditorKind, detail_type\n"
        "assert 'dpaudit.auditors.profile.result' not in sys.modules\n"
        "print(' '.join(detail_type(k).__name__ for k in AuditorKind))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [
        "BlackBoxDetail",
        "SanityDetail",
        "MetricDetail",
        "ProfileDetail",
        "RewriterDetail",
        "TrainingDetail",
    ]
