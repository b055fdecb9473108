"""``reproduce --resume`` continues an interrupted figure from its stored work units.

Each figure computes inside a checkpoint session (``DIR/<figure>/checkpoint``),
so a run killed mid-figure keeps every unit finished so far, and ``--resume``
computes only the rest — with exactly the uninterrupted run's results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _killed_cli import dpaudit_argv, kill_9_when, run_to_end

from dpaudit.engine.executor import ExecutionConfig
from dpaudit.reproduce.runner import reproduce
from dpaudit.rundir.layout import (
    CALL_PREFIX,
    CHECKPOINT_DIR,
    CONFIG_FILE,
    FIGURE_PNG,
    FIGURE_README,
    RESULT_FILE,
    RESULTS_CSV,
    RESULTS_JSON,
    UNIT_PREFIX,
    UNIT_SUFFIX,
    UNITS_DIR,
)

FIGURE_FILES = (RESULTS_JSON, RESULTS_CSV, FIGURE_PNG, FIGURE_README)
UNIT_FILES = f"{UNITS_DIR}/{CALL_PREFIX}*/{UNIT_PREFIX}*{UNIT_SUFFIX}"


def _results(path: Path) -> dict[str, Any]:
    """results.json without wall-clock timings (the only parts that may differ)."""
    data = json.loads(path.read_text())
    data.pop("timings")
    for row in data["rows"]:
        row.pop("seconds", None)  # hoho-fig2 lists each audit's wall time
    for record in data.get("audits", []):
        if record.get("audit") is not None:
            record["audit"].pop("timing")  # each stored audit's wall time
    return data


def _unit_files(figure_dir: Path) -> list[Path]:
    return sorted((figure_dir / CHECKPOINT_DIR).glob(UNIT_FILES))


@pytest.mark.slow
def test_kill_9_mid_figure_then_resume_reuses_the_stored_units(tmp_path: Path) -> None:
    """hoho-fig2 at tiny scale: 12 black-box audits, many units over a few seconds."""
    base = dpaudit_argv("reproduce", "hoho-fig2", "--scale", "tiny", "--seed", "1",
                        "--workers", "1", "--json")  # fmt: skip
    out = tmp_path / "run"
    figure_dir = out / "hoho-fig2"
    # Killed after 40 of its 252 units are stored: well inside the figure.
    kill_9_when([*base, "--out", str(out)], lambda: len(_unit_files(figure_dir)) >= 40)
    stored = len(_unit_files(figure_dir))
    assert not (figure_dir / RESULTS_JSON).exists()  # killed mid-figure

    resumed = run_to_end([*base, "--out", str(out), "--resume"])
    assert resumed.returncode == 0, resumed.stderr
    (outcome,) = json.loads(resumed.stdout)["figures"]
    assert outcome["units_reused"] == stored and outcome["units_computed"] >= 1
    assert not outcome["resumed"]  # the figure itself was not complete
    assert f"hoho-fig2: resumed {stored} stored work units" in resumed.stderr

    reference = tmp_path / "reference"
    reproduce("hoho-fig2", reference, scale="tiny", seed=1, execution=ExecutionConfig(workers=1))
    assert _results(figure_dir / RESULTS_JSON) == _results(reference / "hoho-fig2" / RESULTS_JSON)


def test_resume_computes_only_the_missing_units_of_a_figure(tmp_path: Path) -> None:
    """habernal2022-fig2: lose half its units and every output, resume, same results."""
    out = tmp_path / "run"
    one = ExecutionConfig(workers=1)
    first = reproduce("habernal2022-fig2", out, scale="tiny", seed=2, execution=one)
    figure_dir = out / "habernal2022-fig2"
    before = _results(figure_dir / RESULTS_JSON)
    files = _unit_files(figure_dir)
    assert first.figures[0].units_computed == len(files) > 40  # grid + exact losses
    lost = files[::2]
    for path in lost:
        path.unlink()
    for name in FIGURE_FILES:
        (figure_dir / name).unlink()
    (figure_dir / CHECKPOINT_DIR / RESULT_FILE).unlink()

    summary = reproduce("habernal2022-fig2", out, scale="tiny", seed=2, execution=one, resume=True)
    (outcome,) = summary.figures
    assert (outcome.units_reused, outcome.units_computed) == (len(files) - len(lost), len(lost))
    assert _results(figure_dir / RESULTS_JSON) == before
    for name in FIGURE_FILES:
        assert (figure_dir / name).is_file()


def test_a_new_run_does_not_reuse_another_runs_units(tmp_path: Path) -> None:
    one = ExecutionConfig(workers=1)
    reproduce("habernal2021-fig1", tmp_path, scale="tiny", seed=3, execution=one)
    again = reproduce("habernal2021-fig1", tmp_path, scale="tiny", seed=4, execution=one)
    assert again.figures[0].units_reused == 0 and again.figures[0].units_computed > 0
    recorded = json.loads(
        (tmp_path / "habernal2021-fig1" / CHECKPOINT_DIR / CONFIG_FILE).read_text()
    )
    assert recorded["config"]["seed"] == 4


def test_the_lm_rewriters_figure_resumes_from_its_scored_rewrites(tmp_path: Path) -> None:
    """lm-rewriters (tiny): every white-box pair unit is stored, a resume after losing the
    outputs recomputes none of them, and the results are the uninterrupted run's.  The
    released DP-MLM numbers its outputs in its own process, so its cell is recomputed."""
    pytest.importorskip("torch", reason="the LM rewriters need PyTorch (extra lm)")
    pytest.importorskip("transformers", reason="the LM rewriters need transformers")
    out = tmp_path / "run"
    first = reproduce("lm-rewriters", out, scale="tiny", seed=0)
    figure_dir = out / "lm-rewriters"
    before = _results(figure_dir / RESULTS_JSON)
    files = _unit_files(figure_dir)
    assert first.figures[0].units_computed == len(files) > 0
    for name in FIGURE_FILES:
        (figure_dir / name).unlink()
    (figure_dir / CHECKPOINT_DIR / RESULT_FILE).unlink()
    summary = reproduce("lm-rewriters", out, scale="tiny", seed=0, resume=True)
    (outcome,) = summary.figures
    assert (outcome.units_reused, outcome.units_computed) == (len(files), 0)
    assert _results(figure_dir / RESULTS_JSON) == before
