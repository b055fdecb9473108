"""A reproduce run's status (``run-status.json``), typed: written by the runner, read by the report.

``run-status.json`` is written first (``running``) and rewritten after every
figure; ``complete`` only after every figure is on disk.  :class:`RunStatus`
is its one layout: :meth:`RunStatus.to_dict` writes it, :meth:`RunStatus.from_dict`
reads it back (``to_jsonable(from_dict(d)) == d`` for every file the runner
writes).  Fields the first layout lacked (``data``, ``updated``,
``figures_done``, ``work_seconds``, ``earlier_seconds``) default to empty;
a file without ``status`` or the configuration's ``figures``, ``scale`` and
``seed`` is refused with a :class:`~dpaudit.rundir.records.ResultsFormatError`
naming the file and field.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dpaudit.rundir.layout import RUN_STATUS
from dpaudit.rundir.records import ResultsFormatError

STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_FAILED = "failed"
STATUS_INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class RunConfig:
    """What determines a run's results (the execution backend and workers do not)."""

    figures: tuple[str, ...]
    scale: str
    seed: int
    data: str | None = None

    def describe(self) -> str:
        """E.g. ``figures a,b, scale quick, seed 0`` (and the corpus, when one was given)."""
        text = f"figures {','.join(self.figures)}, scale {self.scale}, seed {self.seed}"
        return text + (f", data {self.data}" if self.data else "")


@dataclass(frozen=True)
class RunStatus:
    """``run-status.json``: the run's state, its configuration, and what it has finished.

    ``seconds`` (the wall time of this invocation, a ``--resume`` included) is
    set once complete, ``error`` once failed; ``updated`` is when the file was
    written (ISO 8601, UTC).  ``work_seconds`` is each figure's work time,
    written when the figure finishes (or is interrupted) and carried over by
    ``--resume``, so a resume that had nothing left to do still tells how long
    the work took; ``earlier_seconds`` is the part of it done by earlier runs.
    ``estimated_seconds`` is each figure's estimate for this machine when it
    started (its idle estimate times :class:`~dpaudit.engine.pace.Pace`'s factor),
    and ``pace_probe`` the machine's slowness measured before the run (1.0: as
    fast as the idle reference machine).
    """

    status: str
    config: RunConfig
    updated: str = ""
    figures_done: tuple[str, ...] = ()
    seconds: float | None = None
    error: str | None = None
    work_seconds: Mapping[str, float] = field(default_factory=dict)
    earlier_seconds: float | None = None
    estimated_seconds: Mapping[str, float] = field(default_factory=dict)
    pace_probe: float | None = None

    @property
    def complete(self) -> bool:
        """True once the runner has written every figure (the files may still be gone)."""
        return self.status == STATUS_COMPLETE

    @property
    def total_work_seconds(self) -> float | None:
        """The work time of every figure, summed across runs; None if not recorded."""
        if not self.work_seconds:
            return None
        return round(sum(self.work_seconds.values()), 3)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; ``seconds``, ``error`` and the work times only when set."""
        config = self.config
        out: dict[str, Any] = {
            "status": self.status,
            "config": {"figures": list(config.figures), "scale": config.scale,
                       "seed": config.seed, "data": config.data},
            "updated": self.updated,
            "figures_done": list(self.figures_done),
        }  # fmt: skip
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.error is not None:
            out["error"] = self.error
        if self.work_seconds:
            out["work_seconds"] = dict(self.work_seconds)
        if self.earlier_seconds is not None:
            out["earlier_seconds"] = self.earlier_seconds
        if self.estimated_seconds:
            out["estimated_seconds"] = dict(self.estimated_seconds)
        if self.pace_probe is not None:
            out["pace_probe"] = self.pace_probe
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = RUN_STATUS) -> RunStatus:
        """Inverse of :meth:`to_dict` after JSON; errors name ``source`` and the field."""
        config = data.get("config")
        missing = [k for k in ("status", "config") if k not in data]
        if isinstance(config, Mapping):
            missing += [f"config.{k}" for k in ("figures", "scale", "seed") if k not in config]
        if missing:
            raise ResultsFormatError(source, missing[0], "is missing (every dpaudit wrote it)")
        if not isinstance(config, Mapping):
            raise ResultsFormatError(source, "config", "is not a JSON object")
        try:
            return cls(
                _text(data["status"]),
                RunConfig(
                    tuple(_text(f) for f in config["figures"]),
                    _text(config["scale"]),
                    _integer(config["seed"]),
                    _optional_text(config.get("data")),
                ),
                _text(data.get("updated", "")),
                tuple(_text(f) for f in data.get("figures_done", ())),
                None if data.get("seconds") is None else float(data["seconds"]),
                _optional_text(data.get("error")),
                {_text(k): float(v) for k, v in dict(data.get("work_seconds") or {}).items()},
                None if data.get("earlier_seconds") is None else float(data["earlier_seconds"]),
                {_text(k): float(v) for k, v in dict(data.get("estimated_seconds") or {}).items()},
                None if data.get("pace_probe") is None else float(data["pace_probe"]),
            )
        except (TypeError, ValueError) as exc:
            raise ResultsFormatError(source, "<file>", f"is malformed: {exc}") from None


def load_run_status(directory: str | Path) -> RunStatus | None:
    """The ``run-status.json`` of ``directory``; None when absent or not JSON at all."""
    path = Path(directory) / RUN_STATUS
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    return RunStatus.from_dict(data, str(path))


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {value!r}")
    return value


def _optional_text(value: Any) -> str | None:
    return None if value is None else _text(value)


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {value!r}")
    return value
