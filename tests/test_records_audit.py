"""A figure's audit record stores its audit's own typed result (issue 21, item 2).

Each auditor kind ``reproduce`` uses is round-tripped inside a record: the
black-box audit (hoho-fig2), the ACL 2022 sanity check (habernal2022-fig2)
and the word-level metric audit (mldp-lrec2024) from real small seeded
audits; the LM-rewriter audit (lm-rewriters) from a hand-built white-box
result, since a real one needs a language model.  The row's own values (a
combined verdict, a family-wise confidence) survive the round trip; a row
value equal to the audit's own is the audit's.  A ``results.json`` written
before audits were stored (``tests/data/hoho_fig2_before_audit.json``: two
records of dpaudit 5b747cf's ``reproduce hoho-fig2 --scale tiny``) still
loads, and the report reads the same from both layouts.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _rewriter_results import rewriter_result

from dpaudit.analysis.word_embedding import WordEmbedding
from dpaudit.auditors.blackbox.auditor import AuditConfig, audit
from dpaudit.auditors.core.certify import Certificate
from dpaudit.auditors.metric.auditor import MetricAuditConfig, audit_metric
from dpaudit.auditors.rewriter.exact import ExactLoss, WorstToken
from dpaudit.auditors.rewriter.fidelity import FidelityCheck
from dpaudit.auditors.rewriter.result import (
    PairFindings,
    RewriterDetail,
    Statement,
)
from dpaudit.auditors.sanity.check import sanity_check
from dpaudit.claims import Neighbours, TextClaim, Unit
from dpaudit.engine.config import ExecutionConfig
from dpaudit.errors import InvalidArgumentError
from dpaudit.mechanisms import make_mechanism
from dpaudit.mechanisms.registry import make_word_mechanism
from dpaudit.mechanisms.rewriters.decoding import Decoding
from dpaudit.report.claims import OLDER_FILE
from dpaudit.report.collect import load_run
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown
from dpaudit.reproduce.common import FigureRun
from dpaudit.results.audit import AuditorKind, AuditResult, detail_type
from dpaudit.rundir.layout import RESULTS_JSON, RUN_STATUS
from dpaudit.rundir.records import AuditRecord, FigureResult, ResultsFormatError
from dpaudit.serialization import dumps, from_jsonable, to_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import ProbabilityEstimate, Witness, WitnessKind

ONE = ExecutionConfig(workers=1)
BEFORE_AUDIT = Path(__file__).parent / "data" / "hoho_fig2_before_audit.json"


def _rewriter() -> AuditResult:
    """A white-box rewriter result (finite losses; one certified statement)."""
    p1 = ProbabilityEstimate(90, 100, 0.8, "lower", 0.0125)
    p2 = ProbabilityEstimate(3, 100, 0.08, "upper", 0.0125)
    witness = Witness(WitnessKind.BLACK_BOX, "a b", "a c", "rewrite has 'b'", 2.3, 0.95, "one",
                      p1, p2)  # fmt: skip
    worst = WorstToken("b b", 1, "b", "b", 0.4, (0.1, 0.4))
    exact = ExactLoss(10, (0.1, 0.4), 0.4, -0.6, worst, 0.5)
    fidelity = FidelityCheck(40, 0, 0.1, 0.4, 1e-3)
    detail = RewriterDetail(
        mode="white-box",
        text_claim=TextClaim(1.0, Unit.TOKEN, neighbours=Neighbours.EQUAL_LENGTH),
        statements=(Statement(witness, Certificate(p1, p2, 2.3, 0.0, 2), 1.0, Verdict.VIOLATION),),
        best=0,
        ceiling=4.6,
        pairs=(PairFindings("a b", "a c", "one", exact, exact, fidelity),),
        decoding=Decoding(temperature=1.0),
        model_source="toy",
        code_under_audit="the rewriter's own sampler",
        fidelity_level=1e-3,
    )  # fmt: skip
    return rewriter_result("toy rewriter", detail, (50, 100), 0.95, 0, 0.5)


def _audited(kind: AuditorKind) -> AuditResult:
    """A small seeded audit of ``kind``, as the figure using that auditor runs it."""
    if kind is AuditorKind.BLACKBOX:
        return audit(make_mechanism("laplace", epsilon=1.0), AuditConfig(3_000, 6_000, seed=1), ONE)
    if kind is AuditorKind.SANITY:
        return sanity_check(make_mechanism("adept-acl22", epsilon=1.0, dim=2), 2_000, execution=ONE)
    if kind is AuditorKind.METRIC:
        rng = np.random.default_rng(0)
        emb = WordEmbedding(tuple(f"w{i}" for i in range(30)), rng.normal(size=(30, 4)))
        mech = make_word_mechanism("santext", emb, epsilon=2.0)
        cfg = MetricAuditConfig(samples=2_000, final_samples=4_000, max_pairs=2)
        return audit_metric(mech, cfg, ONE)
    return _rewriter()


KINDS = (AuditorKind.BLACKBOX, AuditorKind.SANITY, AuditorKind.METRIC, AuditorKind.REWRITER)


def _record(result: AuditResult, **row: Any) -> AuditRecord:
    return AuditRecord("mech", {"epsilon": result.claimed_epsilon}, 1.5, "closed form",
                       "an audit", audit=result, **row)  # fmt: skip


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_a_record_round_trips_its_typed_audit_exactly(kind: AuditorKind) -> None:
    result = _audited(kind)
    record = _record(result)
    text = dumps(record)
    data = json.loads(text)
    back = AuditRecord.from_dict(data)
    assert back == record and dumps(back) == text  # typed and byte for byte
    assert back.audit == result and isinstance(back.audit.detail, detail_type(kind))
    assert data["audit"] == json.loads(dumps(result.to_dict()))  # stored by to_dict, whole
    # The row is the audit's own: nothing of the row's, and the file says it resolved.
    assert (back.row_epsilon_lower_bound, back.row_verdict, back.row_witness) == (None,) * 3
    assert (back.claim, back.claimed_epsilon) == (result.claim, result.claimed_epsilon)
    assert (back.epsilon_lower_bound, back.confidence) == (
        result.epsilon_lower_bound,
        result.confidence,
    )
    assert (back.verdict, back.verdict_text, back.witness) == (
        result.verdict,
        result.verdict_text,
        result.witness,
    )
    assert data["verdict_text"] == result.verdict_text and data["violation"] == result.violation
    assert data["witness"] == to_jsonable(result.witness)


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_the_rows_own_values_survive_and_the_audits_stay_its_own(kind: AuditorKind) -> None:
    result = _audited(kind)
    other = Verdict.INCONCLUSIVE if result.violation else Verdict.VIOLATION
    record = _record(
        result,
        row_claim="ε = 1 per cell",
        row_epsilon_lower_bound=result.epsilon_lower_bound + 0.25,
        row_confidence=0.95 if result.confidence != 0.95 else 0.9,
        row_verdict=other,
        row_verdict_text="combined: …",
        row_witness=None,  # None is "the audit's own", never "no witness"
    )
    back = AuditRecord.from_dict(json.loads(dumps(record)))
    assert back == record
    assert back.verdict is other and back.violation == (other is Verdict.VIOLATION)
    assert back.audit is not None and back.audit.verdict is result.verdict
    assert back.epsilon_lower_bound == result.epsilon_lower_bound + 0.25
    assert back.witness == result.witness and back.verdict_text == "combined: …"
    assert back.claim == "ε = 1 per cell" and back.claimed_epsilon == result.claimed_epsilon


def test_a_row_value_equal_to_the_audits_own_is_the_audits() -> None:
    result = _audited(AuditorKind.BLACKBOX)
    same = _record(result, row_claim=result.claim, row_confidence=result.confidence,
                   row_verdict=result.verdict, row_witness=result.witness)  # fmt: skip
    assert same == _record(result) and same.row_confidence is None and same.row_witness is None
    assert same.row_claim is None


def test_a_record_needs_an_audit_or_the_whole_outcome() -> None:
    with pytest.raises(InvalidArgumentError, match="row values for claimed_epsilon, epsilon_l"):
        AuditRecord("m", {}, None, None, "method", row_claim="1-DP", row_verdict_text="…")


def test_a_malformed_stored_audit_names_the_field() -> None:
    data = json.loads(dumps(_record(_audited(AuditorKind.BLACKBOX))))
    data["audit"]["kind"] = "oracle"
    with pytest.raises(ResultsFormatError, match=r"field 'audits\[0\]\.audit' is malformed"):
        AuditRecord.from_dict(data, RESULTS_JSON, "audits[0].")


def test_a_results_json_written_before_audits_were_stored_loads() -> None:
    data = json.loads(BEFORE_AUDIT.read_text("utf-8"))
    result = FigureResult.from_dict(data, str(BEFORE_AUDIT))
    assert [a.verdict for a in result.audits] == [Verdict.NO_VIOLATION_FOUND, Verdict.VIOLATION]
    for record, stored in zip(result.audits, data["audits"], strict=True):
        assert record.audit is None  # not stored then: the row holds the whole outcome
        assert record.epsilon_lower_bound == stored["epsilon_lower_bound"]
        assert record.confidence == stored["confidence"]
        assert record.verdict_text == stored["verdict_text"]
        assert record.witness == from_jsonable(Witness, stored["witness"])
        assert record.card_lines == record.witness.summary()  # no worded lines: the witness's
        # Written again, it is the same row (and ``audit``: null, as nothing was stored).
        assert {k: v for k, v in to_jsonable(record).items() if k != "audit"} == stored
    assert math.isclose(result.audits[1].epsilon_lower_bound, 2.781672825761555)


def _run_dir(root: Path, data: dict[str, Any]) -> Path:
    (root / "fig-a").mkdir(parents=True)
    (root / "fig-a" / RESULTS_JSON).write_text(json.dumps(data))
    record = {"status": "complete", "config": {"figures": ["fig-a"], "scale": "tiny", "seed": 3}}
    (root / RUN_STATUS).write_text(json.dumps(record))
    return root


def test_the_report_reads_the_same_from_the_stored_audit_and_from_an_older_file(
    tmp_path: Path,
) -> None:
    """Rows and cards read through ``audit`` equal those an older file states itself."""
    results = [_audited(kind) for kind in KINDS]
    audits = [_record(r) for r in results[:3]]
    audits.append(_record(results[3], row_verdict_text="white box: …; certified: …",
                          witness_lines={"pair": "a b → a c"}))  # fmt: skip
    run = FigureRun("fig-a", "A figure", "A paper, Fig. 1", "tiny", 3)
    figure = run.result(parameters={}, sample_counts={}, rows=({"x": 1},))
    new = json.loads(dumps(replace(figure, audits=tuple(audits))))
    old = json.loads(json.dumps(new))
    for record in old["audits"]:
        del record["audit"]
    runs = [load_run(_run_dir(tmp_path / "new", new)), load_run(_run_dir(tmp_path / "old", old))]
    assert all(a.audit is not None for a in runs[0].figures[0].result.audits)
    # The same, but for what only a stored audit's detail can state (the samples that would
    # settle an inconclusive audit), which the older file says it does not record.
    for render in (render_markdown, render_html):
        pairs = list(zip(render(runs[0]).splitlines(), render(runs[1]).splitlines(), strict=True))
        differing = [(a, b) for a, b in pairs if a != b]
        assert all(OLDER_FILE in b and OLDER_FILE not in a for a, b in differing), differing
        assert len(differing) <= 1
