"""The typed records of ``results.json``: exact round trips, older layouts, clear errors.

Real results of every figure are round-tripped in ``test_reproduce_figures.py``
(on the ``--scale tiny`` run); here the records are built by hand, so that each
field, each witness kind and each older layout is exercised on its own.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from _cli import run_cli_quiet

from dpaudit.report.collect import load_run
from dpaudit.report.html import render_html
from dpaudit.report.markdown import render_markdown
from dpaudit.reproduce.common import FigureRun
from dpaudit.rundir.layout import REPORT_HTML, REPORT_MD, RESULTS_JSON, RUN_STATUS
from dpaudit.rundir.records import (
    AuditRecord,
    FigureResult,
    Finding,
    ReportTable,
    ResultsFormatError,
    load_figure_result,
)
from dpaudit.rundir.status import RunConfig, RunStatus, load_run_status
from dpaudit.serialization import dumps, from_jsonable, to_jsonable
from dpaudit.verdicts import Verdict
from dpaudit.witness import ProbabilityEstimate, ThresholdAttack, Witness, WitnessKind, WitnessSeeds

P1 = ProbabilityEstimate(731, 1000, 0.70, "lower", 0.025)
P2 = ProbabilityEstimate(0, 1000, 0.003, "upper", 0.025)
WITNESSES = {
    "black-box": Witness(
        WitnessKind.BLACK_BOX, [0.0, 1.0], [1.0, 1.0], "score(y) > 0.5", 5.4, 0.95,
        "given pair", P1, P2, math.inf,
        ThresholdAttack("logistic", "ratio", ((0.0, 1.0), (1.0, 1.0)), "upper", 0.5, 0.25, 0.1,
                        {"coef": [1.5, -2.0], "intercept": 0.25}),
        WitnessSeeds(7, (3, 0), (3, 1)),
    ),
    "sanity-check": Witness(WitnessKind.SANITY_CHECK, [0.0] * 32, [1.0] * 32,
                            "guess(y) = 0", math.inf, 0.95, p1=P1, p2=P2),
    "analytic": Witness.analytic([0.0], [1.0], math.inf, event="y = 0"),
    "word": Witness(WitnessKind.BLACK_BOX, "good", "bad", "3 output(s)", 0.5, 0.9, p1=P1, p2=P2),
}  # fmt: skip


@pytest.mark.parametrize("kind", sorted(WITNESSES))
def test_a_witness_round_trips_exactly_through_json(kind: str) -> None:
    witness = WITNESSES[kind]
    data = json.loads(dumps(witness))
    back = from_jsonable(Witness, data)
    assert back == witness  # typed equality: tuples, floats (∞ included), nested records
    assert to_jsonable(back) == data and dumps(back) == dumps(witness)


def _record(verdict: Verdict = Verdict.VIOLATION, **fields: Any) -> AuditRecord:
    """A record without a stored audit (its outcome in the ``row_*`` fields), as older files."""
    values: dict[str, Any] = dict(
        mechanism="ome", parameters={"lambda": 10.0, "domain": [-10.0, 10.0]},
        true_epsilon=math.inf, truth_method="support", method="black-box audit",
        row_claim="1-DP", row_claimed_epsilon=1.0, row_epsilon_lower_bound=5.4, row_confidence=0.95,
        row_verdict=verdict, row_verdict_text=f"{verdict.value}: ...",
        row_witness=WITNESSES["black-box"],
    )  # fmt: skip
    return AuditRecord(**(values | fields))


def _result(**fields: Any) -> FigureResult:
    run = FigureRun("fig-a", "A figure", "A paper, Fig. 1", "tiny", 3)
    result = run.result(
        parameters={"n": 10, "epsilons": [0.5, math.inf]},
        sample_counts={"runs": 1000},
        rows=({"x": 1.0, "bound": math.inf, "label": "a"},),
        comparison=({"quantity": "q", "paper": math.inf, "ours": 1.25},),
        findings=(
            Finding("it rises", True, "0.9", "1.0"),
            Finding("it is seen", False, "too few", status="inconclusive"),
        ),
        audits=(
            _record(),
            _record(Verdict.INCONCLUSIVE, row_witness=None, true_epsilon=None, truth_method=None),
            _record(Verdict.NO_VIOLATION_FOUND, witness_lines={"pair": ["a", "b"], "d": 1.5}),
        ),
        notes=("a note",),
        extra={"curves": {"a": [1.0, 2.0]}},
        shows="It shows **this**.",
        tables=(ReportTable("T", ("paper", "ours"), (("1", "∞"),), "note"),),
        scope="everything",
    )
    return replace(result, **fields)


def test_a_figure_result_round_trips_exactly_through_json() -> None:
    result = _result()
    text = dumps(result)
    data = json.loads(text)
    back = FigureResult.from_dict(data)
    assert to_jsonable(back) == data and dumps(back) == text  # byte for byte
    # Typed fields come back typed; ∞ in a typed field is a float again.
    assert back.findings == result.findings and back.tables == result.tables
    assert back.audits == result.audits
    assert back.audits[0].witness == WITNESSES["black-box"] and back.audits[0].violation
    assert back.audits[1].verdict is Verdict.INCONCLUSIVE and not back.audits[1].violation
    assert math.isinf(back.audits[0].true_epsilon or 0.0)


def test_the_card_shows_the_witness_unless_the_figure_words_it() -> None:
    worded, plain, none = _result().audits[2], _result().audits[0], _result().audits[1]
    assert worded.card_lines == {"pair": ["a", "b"], "d": 1.5}
    assert plain.card_lines == WITNESSES["black-box"].summary()
    assert none.card_lines == {}


def test_violation_follows_the_verdict_and_a_contradiction_is_refused() -> None:
    data = json.loads(dumps(_record()))
    assert data["violation"] is True and data["verdict"] == "violation"
    data["violation"] = False
    with pytest.raises(ResultsFormatError, match=r"results.json: field 'violation' contradicts"):
        AuditRecord.from_dict(data, RESULTS_JSON)


def _previous_layout(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the dpaudit before typed verdicts and witnesses wrote it (and older still)."""
    old = json.loads(json.dumps(data))
    for audit in old["audits"]:
        record = AuditRecord.from_dict(audit)
        audit["verdict"] = audit.pop("verdict_text")  # the sentence
        audit["witness"] = to_jsonable(record.card_lines)  # the card's lines
        audit.pop("witness_lines")
    del old["findings"][0]["status"]  # findings before their status was kept
    return old


def test_a_previous_layout_loads_with_the_same_verdicts_and_cards() -> None:
    new = json.loads(dumps(_result()))
    old = FigureResult.from_dict(_previous_layout(new))
    typed = FigureResult.from_dict(new)
    for a, b in zip(old.audits, typed.audits, strict=True):
        assert (a.verdict, a.verdict_text, a.violation) == (b.verdict, b.verdict_text, b.violation)
        assert a.witness is None  # display lines cannot be turned back into a witness
        assert to_jsonable(a.card_lines) == to_jsonable(b.card_lines)
    assert old.findings == typed.findings  # the status follows ``holds``
    oldest = Finding.from_dict({"statement": "s", "holds": False})  # before ``paper`` too
    assert (oldest.status, oldest.paper, oldest.detail) == ("not shown", "", "")


def _run_dir(root: Path, data: dict[str, Any]) -> Path:
    (root / "fig-a").mkdir(parents=True)
    (root / "fig-a" / RESULTS_JSON).write_text(json.dumps(data))
    record = {"status": "complete", "config": {"figures": ["fig-a"], "scale": "tiny", "seed": 3}}
    (root / RUN_STATUS).write_text(json.dumps(record))
    return root


def test_the_report_of_a_previous_layout_is_the_same_report(tmp_path: Path) -> None:
    """The report reads both layouts into the same typed records, so it says the same."""
    new = json.loads(dumps(_result()))
    runs = [load_run(_run_dir(tmp_path / "new", new)),
            load_run(_run_dir(tmp_path / "old", _previous_layout(new)))]  # fmt: skip
    assert render_markdown(runs[0]) == render_markdown(runs[1])
    assert render_html(runs[0]) == render_html(runs[1])
    assert "witness: kind:** black-box" in render_markdown(runs[0])  # the typed witness card


@pytest.mark.parametrize(
    ("where", "field"),
    [
        (lambda d: d.pop("seed"), "'seed' is missing"),
        (lambda d: d["audits"][1].pop("claimed_epsilon"), "'audits[1].claimed_epsilon' is missing"),
        (lambda d: d["findings"][0].update(holds="yes"), "'findings[0].holds' is malformed"),
        (lambda d: d["audits"][0]["witness"].pop("x"), "'audits[0].witness' is malformed"),
        (lambda d: d["tables"][0].update(rows=[[1]]), "'tables[0].rows' is malformed"),
    ],
)
def test_a_file_lacking_a_field_is_refused_naming_file_and_field(
    tmp_path: Path, where: Any, field: str
) -> None:
    data = json.loads(dumps(_result()))
    where(data)
    path = tmp_path / RESULTS_JSON
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsFormatError) as caught:
        load_figure_result(path)
    assert str(caught.value).startswith(f"{path}: field {field}")


def test_the_report_command_names_the_bad_file_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(dumps(_result()))
    del data["audits"][0]["verdict"]
    _run_dir(tmp_path, data)
    code, _, err = run_cli_quiet(capsys, "report", str(tmp_path))
    assert code == 2
    assert f"{tmp_path / 'fig-a' / RESULTS_JSON}: field 'audits[0].verdict' is missing" in err
    assert not (tmp_path / REPORT_MD).exists() and not (tmp_path / REPORT_HTML).exists()


def test_the_run_status_round_trips_and_older_ones_load(tmp_path: Path) -> None:
    status = RunStatus("complete", RunConfig(("a", "b"), "tiny", 3, None), "2026-11-25T06:00:00",
                       ("a", "b"), 12.5)  # fmt: skip
    data = json.loads(dumps(status))
    assert RunStatus.from_dict(data) == status and to_jsonable(RunStatus.from_dict(data)) == data
    assert "error" not in data and data["config"]["data"] is None
    first = {"status": "failed", "config": {"figures": ["a"], "scale": "quick", "seed": 0}}
    old = RunStatus.from_dict(first)  # before data, updated and figures_done were written
    assert (old.config.data, old.updated, old.figures_done, old.complete) == (None, "", (), False)
    del first["config"]["seed"]
    (tmp_path / RUN_STATUS).write_text(json.dumps(first))
    with pytest.raises(
        ResultsFormatError, match=r"run-status.json: field 'config.seed' is missing"
    ):
        load_run_status(tmp_path)
