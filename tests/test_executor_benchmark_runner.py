"""Smoke test of benchmarks/run_all.py: it runs a cheap section and writes both result files."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

RUN_ALL = Path(__file__).resolve().parents[1] / "benchmarks" / "run_all.py"


def _load_run_all():
    spec = importlib.util.spec_from_file_location("run_all_under_test", RUN_ALL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling look modules up here
    spec.loader.exec_module(module)
    return module


def test_quick_overhead_section_writes_markdown_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_all = _load_run_all()
    code = run_all.main(["--quick", "--only", "overhead", "--out", str(tmp_path)])
    assert code == 0
    data = json.loads((tmp_path / "results.json").read_text())
    (row,) = data["rows"]
    assert row["section"] == "overhead"
    assert row["details"]["pool"]["cpu_s"] > 0
    table = (tmp_path / "results.md").read_text()
    assert "| overhead |" in table
    assert table in capsys.readouterr().out


def test_unknown_section_is_rejected(tmp_path: Path) -> None:
    run_all = _load_run_all()
    with pytest.raises(SystemExit) as info:
        run_all.main(["--only", "no-such-section", "--out", str(tmp_path)])
    assert info.value.code == 2
    assert not (tmp_path / "results.json").exists()
