"""The reproduce runner, output files, run status and CLI bad-input handling.

A small figure defined here (a real, seeded computation: the coverage of a
Clopper–Pearson interval) exercises the runner without the cost of the papers'
figures; the real figures are covered end to end in test_reproduce_figures.py.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from _cli import run_cli_quiet

from dpaudit.engine.executor import ExecutionConfig
from dpaudit.errors import InvalidArgumentError, UnknownNameError
from dpaudit.report.build import write_report
from dpaudit.reproduce import registry, runner
from dpaudit.reproduce.common import (
    AuditRecord,
    FigureProgress,
    FigureResult,
    FigureRun,
    Finding,
    readme_page,
    require_matplotlib,
    rows_to_csv,
    save_figure,
)
from dpaudit.reproduce.runner import read_run_status, reproduce
from dpaudit.rundir.layout import (
    FIGURE_PNG,
    FIGURE_README,
    REPORT_HTML,
    REPORT_MD,
    RESULTS_CSV,
    RESULTS_JSON,
)
from dpaudit.verdicts import Verdict
from dpaudit.witness import Witness

CORPUS_LIKE = "<script>alert('x')</script> & \"quoted\" <b>bold</b>"


def _compute(run: FigureRun) -> FigureResult:
    """Coverage of a 95% interval for a coin's bias: a small seeded experiment."""
    rng = np.random.default_rng(run.seed)
    trials = {"tiny": 50, "quick": 200, "paper": 1000}[run.scale]
    run.progress.start(3)
    rows = []
    for step, p in enumerate((0.1, 0.5, 0.9)):
        with run.stage("simulate"):
            k = rng.binomial(100, p, size=trials)
        hat = k / 100
        se = np.sqrt(hat * (1 - hat) / 100)
        covered = float(np.mean(np.abs(hat - p) <= 1.96 * se + 1e-12))
        rows.append({"p": p, "coverage": covered, "trials": trials})
        run.progress.advance()
        assert step < 3
    if os.environ.get("DPAUDIT_TEST_FAIL_FIGURE") == "1":
        raise KeyboardInterrupt
    return run.result(
        parameters={"n": 100},
        sample_counts={"trials": trials},
        rows=tuple(rows),
        comparison=({"quantity": "coverage at p=0.5", "paper": 0.95, "ours": rows[1]["coverage"]},),
        findings=(Finding("coverage is near 95% at p = 0.5", rows[1]["coverage"] > 0.8),),
        audits=(
            AuditRecord(
                mechanism="laplace",
                parameters={"dim": 1},
                true_epsilon=1.0,
                truth_method="closed form",
                method="test",  # no auditor: the row states the whole outcome
                witness_lines={"x": [0.0], "x_prime": [1.0], "example": CORPUS_LIKE},
                row_claim="1-DP on [0, 1]^1",
                row_claimed_epsilon=1.0,
                row_epsilon_lower_bound=0.5,
                row_confidence=0.95,
                row_verdict=Verdict.NO_VIOLATION_FOUND,
                row_verdict_text="no violation found: ε_lcb = 0.5 ≤ 1",
                row_witness=Witness.analytic([0.0], [1.0], 0.5, event=CORPUS_LIKE),
            ),
        ),
        notes=(f"corpus text: {CORPUS_LIKE}",),
    )


def _plot(result: FigureResult, path: Path) -> None:
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([r["p"] for r in result.rows], [r["coverage"] for r in result.rows], "o-")
    ax.set_xlabel("p")
    ax.set_ylabel("coverage")
    save_figure(fig, path)


def _readme(result: FigureResult) -> str:
    return f"# {result.title}\n\nscale {result.scale}\n"


@pytest.fixture()
def fake_figure(monkeypatch: pytest.MonkeyPatch) -> str:
    module = types.ModuleType("dpaudit_tests.fake_figure")
    module.FIGURE = registry.FigureSpec(  # type: ignore[attr-defined]
        name="test-fig",
        title="Coverage of a Wald interval",
        paper="test paper",
        compute=_compute,
        plot=_plot,
        readme=_readme,
        expected_seconds={"tiny": 1},
    )
    monkeypatch.setitem(sys.modules, "dpaudit_tests.fake_figure", module)
    monkeypatch.setattr(registry, "FIGURE_MODULES", {"test-fig": "dpaudit_tests.fake_figure"})
    return "test-fig"


def test_run_writes_every_output_and_a_complete_report(fake_figure: str, tmp_path: Path) -> None:
    summary = reproduce(
        fake_figure, tmp_path, scale="tiny", seed=3, execution=ExecutionConfig(workers=1)
    )
    fig_dir = tmp_path / "test-fig"
    for name in (RESULTS_JSON, RESULTS_CSV, FIGURE_PNG, FIGURE_README):
        assert (fig_dir / name).is_file(), name
    data = json.loads((fig_dir / RESULTS_JSON).read_text())
    assert data["seed"] == 3 and data["scale"] == "tiny"
    assert {"python", "dpaudit", "numpy", "scipy"} <= set(data["versions"])
    assert data["sample_counts"] == {"trials": 50}
    assert "total_s" in data["timings"]
    with (fig_dir / RESULTS_CSV).open() as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["p"]) for r in rows] == [0.1, 0.5, 0.9]
    assert (fig_dir / FIGURE_PNG).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert getattr(read_run_status(tmp_path), "status", None) == "complete"
    assert summary.status == "complete"
    md = (tmp_path / REPORT_MD).read_text()
    html_text = (tmp_path / REPORT_HTML).read_text()
    assert "Complete run" in md and "INCOMPLETE" not in md
    assert "Complete run" in html_text and "INCOMPLETE" not in html_text


def test_same_seed_gives_identical_results(fake_figure: str, tmp_path: Path) -> None:
    for sub in ("a", "b"):
        reproduce(fake_figure, tmp_path / sub, scale="tiny", seed=11)
    a = json.loads((tmp_path / "a/test-fig" / RESULTS_JSON).read_text())
    b = json.loads((tmp_path / "b/test-fig" / RESULTS_JSON).read_text())
    assert a["rows"] == b["rows"]


def test_report_escapes_corpus_text_and_embeds_images(fake_figure: str, tmp_path: Path) -> None:
    reproduce(fake_figure, tmp_path, scale="tiny", seed=0)
    html_text = (tmp_path / REPORT_HTML).read_text()
    assert "<script>" not in html_text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html_text
    assert "<b>bold</b>" not in html_text
    assert 'src="data:image/png;base64,' in html_text
    md = (tmp_path / REPORT_MD).read_text()
    assert "<script>" not in md and "&lt;script&gt;" in md


def test_interrupted_run_leaves_no_complete_report(
    fake_figure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reproduce(fake_figure, tmp_path, scale="tiny", seed=0)
    assert (tmp_path / REPORT_HTML).exists()
    monkeypatch.setenv("DPAUDIT_TEST_FAIL_FIGURE", "1")
    with pytest.raises(KeyboardInterrupt):
        reproduce(fake_figure, tmp_path, scale="tiny", seed=1, resume=False)
    # The old report is gone and the status says the run was interrupted.
    assert not (tmp_path / REPORT_HTML).exists()
    assert not (tmp_path / REPORT_MD).exists()
    assert getattr(read_run_status(tmp_path), "status", None) == "interrupted"
    # A report regenerated from this directory says it is incomplete.
    md_path, html_path = write_report(tmp_path)
    assert "INCOMPLETE RUN (status: interrupted)" in md_path.read_text()
    assert "INCOMPLETE RUN" in html_path.read_text()


def test_resume_keeps_finished_figures_and_refuses_other_settings(
    fake_figure: str, tmp_path: Path
) -> None:
    reproduce(fake_figure, tmp_path, scale="tiny", seed=5)
    before = (tmp_path / "test-fig" / RESULTS_JSON).read_text()
    summary = reproduce(fake_figure, tmp_path, scale="tiny", seed=5, resume=True)
    assert summary.figures[0].resumed
    assert (tmp_path / "test-fig" / RESULTS_JSON).read_text() == before
    with pytest.raises(InvalidArgumentError, match="--resume"):
        reproduce(fake_figure, tmp_path, scale="tiny", seed=6, resume=True)


#: Seconds the slow fake figure sleeps: long enough to show in whole seconds.
_SLEEP = 1.2


@pytest.fixture()
def slow_figure(fake_figure: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fake figure, taking ``_SLEEP`` s (past its 1 s estimate at scale tiny)."""
    import time

    module = sys.modules["dpaudit_tests.fake_figure"]

    def compute(run: FigureRun) -> FigureResult:
        time.sleep(_SLEEP)
        return _compute(run)

    monkeypatch.setattr(module, "FIGURE", replace(module.FIGURE, compute=compute))
    return fake_figure


def test_a_resume_with_nothing_left_reports_the_earlier_works_time(
    slow_figure: str, tmp_path: Path
) -> None:
    """Not "Complete run … in 0 s": the banner sums each figure's work, kept across resumes."""
    first = reproduce(slow_figure, tmp_path, scale="tiny", seed=0)
    assert first.work_seconds >= _SLEEP and first.earlier_seconds == 0
    assert f"root seed 0 in {first.work_seconds:.0f} s." in (tmp_path / REPORT_MD).read_text()
    again = reproduce(slow_figure, tmp_path, scale="tiny", seed=0, resume=True)
    assert again.figures[0].resumed and again.seconds < _SLEEP
    assert again.work_seconds == again.earlier_seconds == first.figures[0].work_seconds
    status = read_run_status(tmp_path)
    assert status is not None and status.total_work_seconds == again.work_seconds
    banner = f"in {again.work_seconds:.0f} s of work, all of it in earlier runs; the last resume"
    for report in (REPORT_MD, REPORT_HTML):
        text = (tmp_path / report).read_text()
        assert banner in text and "in 0 s." not in text


def test_the_time_of_an_interrupted_figure_is_kept_for_its_resume(
    slow_figure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPAUDIT_TEST_FAIL_FIGURE", "1")
    with pytest.raises(KeyboardInterrupt):
        reproduce(slow_figure, tmp_path, scale="tiny", seed=0)
    status = read_run_status(tmp_path)
    assert status is not None and status.work_seconds["test-fig"] >= _SLEEP
    monkeypatch.delenv("DPAUDIT_TEST_FAIL_FIGURE")
    summary = reproduce(slow_figure, tmp_path, scale="tiny", seed=0, resume=True)
    assert summary.earlier_seconds == status.work_seconds["test-fig"]
    assert summary.work_seconds >= summary.earlier_seconds + _SLEEP
    assert "s of it in earlier runs and " in (tmp_path / REPORT_MD).read_text()


def test_a_figure_past_its_estimate_is_named_with_the_load(
    slow_figure: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dpaudit import progress

    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "HEARTBEAT", 0.3)
    monkeypatch.setattr(progress, "DELAY", 0.0)  # the figure's closing line shows too
    monkeypatch.setattr(os, "getloadavg", lambda: (7.2, 5.0, 3.0))
    monkeypatch.setattr(runner, "probe_pace", lambda: 1.0)  # as fast as the idle reference
    reproduce(slow_figure, tmp_path, scale="tiny", seed=0)
    err = capsys.readouterr().err
    late = [line for line in err.splitlines() if "past its 1 s estimate (" in line]
    assert late and late[0].startswith("reproduce test-fig [1/1]: ") and "load 7.2" in late[0]
    assert not any(e in err for e in ("\r", "\x1b"))  # a log: lines, no bar


def test_the_estimate_follows_the_machines_pace_and_is_recorded(
    slow_figure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine probed 3× slower than the reference expects 3× the idle estimate (1 s)."""
    monkeypatch.setattr(runner, "probe_pace", lambda: 3.0)
    reproduce(slow_figure, tmp_path, scale="tiny", seed=0)
    status = read_run_status(tmp_path)
    assert status is not None and status.pace_probe == 3.0
    assert status.estimated_seconds == {"test-fig": 3.0}
    kept = reproduce(slow_figure, tmp_path, scale="tiny", seed=0, resume=True)
    assert kept.figures[0].resumed  # a kept figure keeps the estimate it ran under
    assert read_run_status(tmp_path).estimated_seconds == {"test-fig": 3.0}


def test_a_terminal_gets_a_bar_naming_the_figure(
    fake_figure: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from dpaudit import progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(progress, "ENABLED", True)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    reproduce(fake_figure, tmp_path, scale="tiny", seed=0)
    text = stream.getvalue()
    assert "\r" in text and "reproduce test-fig [1/1]: " in text and "1/1 s(est)" in text
    # Its ETA: the estimate left at the run's average pace, not the last steps' pace.
    with progress.progress(10, "reproduce", unit=progress.ESTIMATED_SECONDS) as bar:
        assert bar.smoothing == 0.0


def test_figure_run_fills_identity_and_readme_page_lays_out_every_section() -> None:
    run = FigureRun("fig-x", "A title", "A paper (2021)", "tiny", 9)
    with run.stage("work"):
        pass
    result = run.result(
        parameters={"k": 1},
        sample_counts={"n": 5},
        rows=({"a": 1},),
        findings=(Finding("it shows", True),),
    )
    assert (result.figure, result.title, result.paper) == ("fig-x", "A title", "A paper (2021)")
    assert (result.scale, result.seed) == ("tiny", 9)
    assert set(result.timings) == {"work", "total_s"} and "numpy" in result.versions
    page = readme_page(result, "What it is.", ["## One\n\nfirst", "## Two"], "- because")
    parts = page.split("\n\n")
    assert parts[:2] == ["# A title", "Reproduces A paper (2021)."]
    assert parts[2].startswith("[![figure](figure.png)](figure.svg)")
    assert parts[3:6] == ["## How it was made", "What it is.", "## One"]
    assert page.index("## Two") < page.index("## Where and why this differs from the paper")
    assert page.index("- because") < page.index("## Run") and "--seed 9" in page
    # Without explicit words the page takes the result's own (shared with the report).
    worded = replace(result, shows="It shows X.", method="Made so.", differences="- Y")
    page = readme_page(worded, sections=["## One"])
    assert page.index("## What this shows\n\nIt shows X.") < page.index("![figure]")
    assert "Made so." in page and "differs from the paper\n\n- Y" in page


def test_progress_fractions_reach_one() -> None:
    seen: list[float] = []
    prog = FigureProgress(seen.append)
    prog.start(4)
    for _ in range(6):  # over-advancing is clamped
        prog.advance()
    assert seen[-1] == 1.0 and seen == sorted(seen)


def test_csv_writes_infinity_and_lists() -> None:
    text = rows_to_csv([{"a": float("inf"), "b": [1, 2]}, {"a": 0.5, "c": None}])
    assert text.splitlines() == ["a,b,c", "inf,1;2,", "0.5,,"]


def test_unknown_figure_is_rejected() -> None:
    with pytest.raises(UnknownNameError, match="figure"):
        registry.resolve_figures("fig-99")
    assert registry.resolve_figures("all") == registry.figure_names()


# ---------------------------------------------------------------- CLI bad input
def test_cli_unknown_figure_exits_2_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_cli_quiet(capsys, "reproduce", "no-such-figure", "--out", str(out))
    assert code == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and "figure" in err
    assert not out.exists()


def test_cli_unknown_scale_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli_quiet(
        capsys, "reproduce", "all", "--scale", "huge", "--out", str(tmp_path / "o")
    )
    assert code == 2 and "--scale" in err and len(err.strip().splitlines()) == 1


def test_cli_non_empty_out_without_force_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    code, _, err = run_cli_quiet(capsys, "reproduce", "habernal2021-fig1", "--out", str(tmp_path))
    assert code == 2 and "--force" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "keep.txt").read_text() == "precious"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_cli_unwritable_out_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run_cli_quiet(
            capsys, "reproduce", "habernal2021-fig1", "--out", str(locked / "sub")
        )
    finally:
        locked.chmod(0o700)
    assert code == 2 and "--out" in err


def test_cli_out_that_is_a_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    code, _, err = run_cli_quiet(capsys, "reproduce", "habernal2021-fig1", "--out", str(target))
    assert code == 2 and "--out" in err and len(err.strip().splitlines()) == 1


def test_cli_out_under_a_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Unwritable even for root: a path below a regular file cannot be created.
    target = tmp_path / "file.txt"
    target.write_text("x")
    code, _, err = run_cli_quiet(
        capsys, "reproduce", "habernal2021-fig1", "--out", str(target / "d")
    )
    assert code == 2 and "--out" in err and len(err.strip().splitlines()) == 1


def test_cli_missing_data_file_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli_quiet(
        capsys,
        "reproduce",
        "hoho-fig1",
        "--data",
        str(tmp_path / "missing.txt"),
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2 and "--data" in err
    assert not (tmp_path / "o").exists()


def test_cli_data_for_a_figure_without_corpus_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_text("good food\t1\nbad food\t0\n")
    code, _, err = run_cli_quiet(
        capsys,
        "reproduce",
        "habernal2021-fig1",
        "--data",
        str(corpus),
        "--out",
        str(tmp_path / "o"),
    )
    assert code == 2 and "hoho-fig1" in err
    assert not (tmp_path / "o").exists()


def test_cli_malformed_corpus_fails_before_any_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    corpus = tmp_path / "empty.txt"
    corpus.write_text("\n\n")
    out = tmp_path / "o"
    code, _, err = run_cli_quiet(
        capsys, "reproduce", "all", "--data", str(corpus), "--out", str(out)
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_report_on_missing_or_empty_dir_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = run_cli_quiet(capsys, "report", str(tmp_path / "nope"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = run_cli_quiet(capsys, "report", str(tmp_path))
    assert code == 2 and "no results" in err
    assert not (tmp_path / REPORT_HTML).exists()


def test_cli_reproduce_and_report_json(
    fake_figure: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    code, stdout, _ = run_cli_quiet(
        capsys, "reproduce", fake_figure, "--scale", "tiny", "--out", str(out), "--json"
    )
    assert code == 0
    payload = json.loads(stdout)
    assert payload["status"] == "complete" and payload["figures"][0]["figure"] == "test-fig"
    code, stdout, _ = run_cli_quiet(capsys, "report", str(out), "--json")
    assert code == 0
    data = json.loads(stdout)
    assert data["complete"] is True and data["audits"] == 1
    # --force wipes and reruns.
    code, _, _ = run_cli_quiet(
        capsys, "reproduce", fake_figure, "--scale", "tiny", "--out", str(out), "--force"
    )
    assert code == 0
