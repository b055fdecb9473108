"""Run one figure or all of them into a run directory, then write the report.

Layout of a run directory ``DIR`` (every name from :mod:`dpaudit.rundir.layout`)::

    DIR/run-status.json          running | complete | failed | interrupted
    DIR/<figure>/checkpoint/     the figure's finished work units (:mod:`dpaudit.engine.checkpoint`)
    DIR/<figure>/results.json    (+ results.csv, figure.png, figure.svg, README.md)
    DIR/report.md, DIR/report.html

Resume works per work unit: every figure computes inside a checkpoint session
(``DIR/<figure>/checkpoint``), so each unit its auditors finish is stored as
it arrives (atomically, no pickle).  ``--resume`` keeps figures that are
complete and, in the figure that was interrupted, reuses every stored unit and
computes only the rest — the result is the uninterrupted run's, because every
unit is seeded from (seed, key) alone.

``run-status.json`` is written first (``running``) and rewritten after every
figure; ``complete`` is written only after every figure is on disk, and the
report — written last, atomically — says "complete" only when the status
does.  Any report left from an earlier run is removed when a run starts, so an
interrupted run never leaves a report that claims to be complete.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dpaudit import progress as progress_module
from dpaudit.engine import checkpoint
from dpaudit.engine.executor import ExecutionConfig
from dpaudit.engine.pace import Pace, probe_pace
from dpaudit.errors import InvalidArgumentError
from dpaudit.io import atomic_write_text
from dpaudit.progress import ESTIMATED_SECONDS, progress
from dpaudit.report.build import write_report
from dpaudit.reproduce.common import (
    FigureProgress,
    FigureRun,
    check_scale,
    require_matplotlib,
    write_figure_outputs,
)
from dpaudit.reproduce.registry import FigureSpec, get_figure, resolve_figures
from dpaudit.rundir.layout import CHECKPOINT_DIR, REPORT_FILES, RESULTS_JSON, RUN_STATUS
from dpaudit.rundir.records import FigureResult, load_figure_result
from dpaudit.rundir.status import (
    STATUS_COMPLETE,
    STATUS_FAILED,
    STATUS_INTERRUPTED,
    STATUS_RUNNING,
    RunConfig,
    RunStatus,
    load_run_status,
)
from dpaudit.serialization import dumps
from dpaudit.validation import check_seed

#: Weight of a figure in the overall progress bar when it gives no estimate.
_DEFAULT_WEIGHT_S = 10.0


@dataclass(frozen=True)
class FigureOutcome:
    """One figure of a run: where it was written and whether its findings showed.

    ``seconds``: the time this run spent on it; ``resumed``: the figure was
    complete already and kept as it was.
    ``units_reused`` / ``units_computed``: work units taken from the figure's
    checkpoint / computed in this run; ``units_unreadable``: stored unit files
    that could not be read back and were recomputed.
    """

    figure: str
    directory: str
    findings_hold: bool
    seconds: float
    resumed: bool = False
    units_reused: int = 0
    units_computed: int = 0
    units_unreadable: int = 0
    #: :func:`~dpaudit.reproduce.common.summarise_findings` of the figure's findings.
    findings_summary: str = ""
    #: The figure's work time across runs: ``seconds`` plus what earlier runs spent on it
    #: (all of it for a figure kept as it was).
    work_seconds: float = 0.0


@dataclass(frozen=True)
class RunSummary:
    """The result of :func:`reproduce`."""

    directory: str
    status: str
    config: RunConfig
    figures: tuple[FigureOutcome, ...]
    report_markdown: str
    report_html: str
    #: Wall time of this invocation (0 s or so for a resume with nothing left to do).
    seconds: float
    #: Work time of every figure, summed across the runs of the directory, and its part
    #: done by earlier runs.
    work_seconds: float = 0.0
    earlier_seconds: float = 0.0


def read_run_status(directory: Path) -> RunStatus | None:
    """The ``run-status.json`` of ``directory``, or None if absent or not JSON."""
    return load_run_status(directory)


def _write_status(
    directory: Path,
    config: RunConfig,
    status: str,
    figures_done: list[str],
    seconds: float | None = None,
    error: str | None = None,
    clock: _WorkClock | None = None,
) -> None:
    now = datetime.now(UTC).isoformat(timespec="seconds")
    work = {} if clock is None else clock.recorded
    earlier = None if clock is None or status != STATUS_COMPLETE else round(clock.earlier, 3)
    estimates = {} if clock is None else clock.recorded_estimates
    probe = None if clock is None else clock.pace_probe
    record = RunStatus(
        status, config, now, tuple(figures_done), seconds, error, work, earlier, estimates, probe
    )
    atomic_write_text(directory / RUN_STATUS, dumps(record) + "\n")


def _figure_done(directory: Path, config: RunConfig) -> FigureResult | None:
    """The figure's result if a previous run left it complete with the same settings, else None.

    A result that cannot be read (absent, not JSON, lacking a field) is not done: recomputed.
    """
    try:
        previous = load_figure_result(directory / RESULTS_JSON)
    except (OSError, ValueError):
        return None
    same = previous.scale == config.scale and previous.seed == config.seed
    return previous if same else None


def reproduce(
    figure: str,
    out: Path,
    *,
    scale: str = "quick",
    seed: int = 0,
    execution: ExecutionConfig | None = None,
    data: str | None = None,
    resume: bool = False,
) -> RunSummary:
    """Compute ``figure`` (or ``all``) into the prepared directory ``out`` and write the report.

    ``out`` must exist and be writable (the CLI checks it with
    :func:`dpaudit.cli.common.prepare_output_dir`).  With ``resume``, figures
    already complete under the same scale and seed are kept, and the run
    refuses a directory written with a different configuration.
    """
    names = resolve_figures(figure)
    scale = check_scale(scale)
    seed = check_seed(seed)
    execution = execution or ExecutionConfig()
    if data is not None:
        data = str(Path(data).resolve())
    require_matplotlib()  # fail before any work if figure.png cannot be drawn
    out = Path(out)
    config = RunConfig(tuple(names), scale, seed, data)
    _check_resume(out, config, resume)
    for stale in REPORT_FILES:
        (out / stale).unlink(missing_ok=True)

    specs = [get_figure(name) for name in names]
    weights = [float(s.expected_seconds.get(scale, _DEFAULT_WEIGHT_S)) for s in specs]
    clock = _WorkClock(read_run_status(out) if resume else None)
    pace = Pace(probe=probe_pace())  # the idle estimates, scaled to this machine's load now
    clock.pace_probe = round(pace.probe, 3)
    started = time.perf_counter()
    outcomes: list[FigureOutcome] = []
    _write_status(out, config, STATUS_RUNNING, figures_done=[], clock=clock)

    def status(state: str, **extra: Any) -> None:
        done = [o.figure for o in outcomes]
        _write_status(out, config, state, done, clock=clock, **extra)

    try:
        with progress(round(sum(weights)), "reproduce", unit=ESTIMATED_SECONDS) as bar:
            for index, (spec, weight) in enumerate(zip(specs, weights, strict=True)):
                where = f"{spec.name} [{index + 1}/{len(specs)}]"
                bar.set_description(f"reproduce {where}")
                estimate = pace.estimate(weight)
                progress_module.expect(bar, estimate, spec.name)  # past it, the line says so
                clock.start(spec.name, estimate)
                outcome = _named_figure(where, spec, out, config, execution, resume, bar, weight)
                outcome = clock.finish(outcome)
                outcomes.append(outcome)
                if not outcome.resumed:
                    pace.observe(weight, outcome.seconds)
                    status(STATUS_RUNNING)
    except KeyboardInterrupt:
        clock.stop()
        status(STATUS_INTERRUPTED)
        raise
    except BaseException as exc:
        clock.stop()
        status(STATUS_FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    seconds = round(time.perf_counter() - started, 3)
    status(STATUS_COMPLETE, seconds=seconds)
    md_path, html_path = write_report(out)
    return RunSummary(
        str(out),
        STATUS_COMPLETE,
        config,
        tuple(outcomes),
        str(md_path),
        str(html_path),
        seconds,
        clock.total,
        clock.earlier,
    )


class _WorkClock:
    """Each figure's work time, across the runs of one directory (``--resume`` keeps it).

    A figure kept from an earlier run brings the time recorded for it then
    (``run-status.json``, else its ``results.json``); a figure that an earlier
    run interrupted brings the time spent on it before, to which this run's
    time is added.  ``earlier`` is the part of the total from earlier runs.
    """

    def __init__(self, previous: RunStatus | None) -> None:
        self._previous = dict(previous.work_seconds) if previous is not None else {}
        self._previous_estimates = dict(previous.estimated_seconds) if previous else {}
        self.work: dict[str, float] = {}
        self.estimates: dict[str, float] = {}
        self.earlier = 0.0
        self.pace_probe: float | None = None
        self._current: tuple[str, float, float] | None = None

    def start(self, name: str, estimate: float) -> None:
        """``name`` starts (or is checked for being kept) now, expected to take ``estimate`` s."""
        self._current = (name, time.perf_counter(), self._previous.get(name, 0.0))
        self.estimates[name] = round(estimate, 3)

    def finish(self, outcome: FigureOutcome) -> FigureOutcome:
        """Record the figure's work time; the outcome with ``work_seconds`` set."""
        assert self._current is not None
        name, _, prior = self._current
        self._current = None
        if outcome.resumed:  # all of it from an earlier run, estimated then
            work = self._previous.get(name, outcome.work_seconds)
            self.earlier += work
            if name in self._previous_estimates:
                self.estimates[name] = self._previous_estimates[name]
        else:
            work = prior + outcome.seconds
            self.earlier += prior
        self.work[name] = round(work, 3)
        return replace(outcome, work_seconds=round(work, 3))

    def stop(self) -> None:
        """The figure under way was interrupted: keep the time spent on it for a resume."""
        if self._current is not None:
            name, t0, prior = self._current
            self.work[name] = round(prior + time.perf_counter() - t0, 3)
            self.earlier += prior
            self._current = None

    @property
    def recorded(self) -> dict[str, float]:
        """What ``run-status.json`` keeps: this run's times, and earlier ones not yet reached."""
        return {**self._previous, **self.work}

    @property
    def recorded_estimates(self) -> dict[str, float]:
        """Each figure's estimate for this machine: this run's, and earlier ones not reached."""
        return {**self._previous_estimates, **self.estimates}

    @property
    def total(self) -> float:
        """The work time of every figure so far, in seconds."""
        return round(sum(self.work.values()), 3)


def _named_figure(where: str, spec: FigureSpec, out: Path, *args: Any) -> FigureOutcome:
    """:func:`_reproduce_figure` with every inner stage line naming ``where`` (the figure)."""
    progress_module.CONTEXT = f"{where} · "
    try:
        return _reproduce_figure(spec, out / spec.name, *args)
    finally:
        progress_module.CONTEXT = ""


def _reproduce_figure(
    spec: FigureSpec,
    directory: Path,
    config: RunConfig,
    execution: ExecutionConfig,
    resume: bool,
    bar: Any,
    weight: float,
) -> FigureOutcome:
    """Compute one figure into ``directory`` (or keep it when resuming a complete one)."""
    t0 = time.perf_counter()
    held = _figure_done(directory, config) if resume else None
    if held is not None:
        bar.update(round(weight))
        return FigureOutcome(
            spec.name,
            str(directory),
            held.all_findings_hold,
            0.0,
            True,
            findings_summary=held.findings_summary,
            work_seconds=held.total_seconds or 0.0,
        )
    share = _BarShare(bar, weight)
    with _figure_checkpoint(directory, spec.name, config, resume) as units:
        run = FigureRun(
            spec.name,
            spec.title,
            spec.paper,
            config.scale,
            config.seed,
            units.attach(execution),
            FigureProgress(share),
            config.data,
        )
        result = spec.compute(run)
        write_figure_outputs(result, directory, spec.plot, spec.readme)
    share(1.0)
    return FigureOutcome(
        spec.name,
        str(directory),
        result.all_findings_hold,
        round(time.perf_counter() - t0, 3),
        units_reused=units.reused,
        units_computed=units.computed,
        units_unreadable=units.unreadable,
        findings_summary=result.findings_summary,
    )


@contextmanager
def _figure_checkpoint(
    directory: Path, name: str, config: RunConfig, resume: bool
) -> Iterator[checkpoint.Session]:
    """Checkpoint every work unit the figure's auditors run into ``directory/checkpoint``.

    On ``resume`` an existing checkpoint is continued (its recorded figure
    configuration must match); otherwise, or when the figure never started, a
    new one is opened.  Completion is recorded in the checkpoint's
    ``result.json`` (a pointer to ``results.json`` and the unit counts).
    """
    path = directory / CHECKPOINT_DIR
    figure_config = {
        "figure": name,
        "scale": config.scale,
        "seed": config.seed,
        "data": config.data,
    }
    started = (path / checkpoint.CONFIG_FILE).is_file()
    run = checkpoint.RunDirectory.open(
        path, figure_config, resume=resume and started, force=not resume and started
    )
    with checkpoint.session(run) as state:
        yield state
        run.write_result(
            {
                "figure": name,
                "results": f"../{RESULTS_JSON}",
                "units_reused": state.reused,
                "units_computed": state.computed,
            }
        )


class _BarShare:
    """Moves the overall bar through one figure's share (its estimated seconds)."""

    def __init__(self, bar: Any, weight: float) -> None:
        self.bar, self.weight, self.shown = bar, weight, 0

    def __call__(self, fraction: float) -> None:
        target = round(fraction * self.weight)
        if target > self.shown:
            self.bar.update(target - self.shown)
            self.shown = target


def _check_resume(out: Path, config: RunConfig, resume: bool) -> None:
    if not resume:
        return
    previous = read_run_status(out)
    if previous is not None and previous.config != config:
        raise InvalidArgumentError(
            "--resume",
            str(out),
            f"the configuration of the run in that directory ({previous.config.describe()}); "
            "use a new --out or --force to start over",
        )
