"""``dpaudit report DIR`` of an ``audit --out`` directory: one audit's report, HTML and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpaudit.cli.main import main
from dpaudit.rundir.layout import AUDIT_PNG, CONFIG_FILE, REPORT_HTML, REPORT_MD, RESULT_FILE


def _p(hits: int, n: int, bound: float, side: str) -> dict:
    return {"hits": hits, "samples": n, "estimate": hits / n, "bound": bound,
            "bound_side": side, "bound_error": 0.0083}  # fmt: skip


def _audit_dir(directory: Path, verdict: str = "violation") -> Path:
    result = {
        "kind": "blackbox", "mechanism": {"mechanism": "callable", "params": {"target": "m51:f"}},
        "claim": "1-DP on [0, 1]^1", "claimed_epsilon": 1.0, "claimed_delta": 0.0,
        "epsilon_lower_bound": 1.9634, "confidence": 0.95, "verdict": verdict,
        "verdict_text": f"{verdict}: ε ≥ 1.96343 > claimed 1 at confidence 0.95",
        "witness": {"kind": "black-box", "x": [1.0], "x_prime": [0.0],
                    "pair_origin": "box pattern", "event": "score(y) <= -1.30673492",
                    "p1": _p(41255, 100000, 0.4088, "lower"),
                    "p2": _p(5563, 100000, 0.0574, "upper"),
                    "epsilon_lower_bound": 1.9634, "confidence": 0.95},
        "confidence_statement": "ε ≥ ε_lcb holds with probability ≥ 0.95",
        "seed": 0, "samples": {"final": 100000}, "timing": {"total": 3.8},
        "detail": {"mode": "dpaudit", "pairs_tried": 3, "sets_compared": 5448,
                   "certified": [{"role": "best", "pair_index": 0, "numerator_is_x": False,
                                  "event": "logistic score(y) <= -1.30673492", "hits_x": 41255,
                                  "hits_x_prime": 5563, "samples": 100000,
                                  "epsilon_lower_bound": 1.9634},
                                 {"role": "rung", "pair_index": 1, "numerator_is_x": True,
                                  "event": "logistic score(y) > 3", "hits_x": 10,
                                  "hits_x_prime": 9, "samples": 100000,
                                  "epsilon_lower_bound": -0.4}]},
        "notes": [], "power": {}, "violation": verdict == "violation",
    }  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    (directory / RESULT_FILE).write_text(json.dumps(result))
    (directory / CONFIG_FILE).write_text(json.dumps({"format": 1, "dpaudit_version": "0.1.0"}))
    return directory


def test_an_audit_out_folder_renders_in_html_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    folder = _audit_dir(tmp_path / "a1")
    assert main(["report", str(folder)]) == 0
    assert "violation: ε ≥ 1.96343" in capsys.readouterr().out
    page = (folder / REPORT_HTML).read_text()
    md = (folder / REPORT_MD).read_text()
    png = (folder / AUDIT_PNG).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    for text in (page, md):
        for words in ("Verdict", "m51:f", "1-DP on", "ε_lcb = 1.963", "VIOLATION", "Witness",
                      "x = (1), x′ = (0)", "41255/100000", "Pairs tried", "5448", "Power",
                      "rung"):  # fmt: skip
            assert words.replace("_", "\\_") in text or words in text, words
        assert "-0.4" not in text  # a set's negative bound certifies nothing
    assert 'src="data:image/png;base64,' in page and "<script" not in page
    assert f"]({AUDIT_PNG})" in md


def test_a_run_folder_without_an_audit_result_is_still_refused(tmp_path: Path) -> None:
    (tmp_path / CONFIG_FILE).write_text("{}")  # an interrupted audit: no result yet
    assert main(["report", str(tmp_path)]) == 2


def test_a_declaration_the_sampler_contradicts_is_in_the_reports_notes(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    folder = _audit_dir(tmp_path / "a2")
    result = json.loads((folder / RESULT_FILE).read_text())
    result["declaration_findings"] = [{
        "declaration": "log_prob", "mechanism": "m51:f", "alpha": 1e-6,
        "summary": "the declared log_prob does not match the sampler",
        "evidence": "KS D = 0.31 on 4096 outputs",
    }]  # fmt: skip
    (folder / RESULT_FILE).write_text(json.dumps(result))
    assert main(["report", str(folder)]) == 0
    md = (folder / REPORT_MD).read_text()
    assert "finding: the declared log\\_prob does not match the sampler" in md or (
        "finding: the declared log_prob does not match the sampler" in md
    )
