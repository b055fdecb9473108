"""``dpaudit reproduce FIGURE``: re-derive a seed paper's figure (or ``all``), then the report.

Each figure is written to ``DIR/<figure>/`` (results.json, results.csv,
figure.png, README.md); ``DIR/report.html`` and ``DIR/report.md`` come last.
Completed work units are stored as they finish (``DIR/<figure>/checkpoint``):
after an interruption, ``--resume`` keeps finished figures and reuses the
stored units of the interrupted one, giving the uninterrupted run's results.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dpaudit.cli.common import (
    add_execution_args,
    add_json,
    add_output_dir,
    add_seed,
    emit,
    execution_config,
    prepare_output_dir,
)
from dpaudit.cli.main import command_help
from dpaudit.engine.checkpoint import resume_summary
from dpaudit.errors import InvalidArgumentError
from dpaudit.reproduce.common import SCALES, check_scale, require_matplotlib
from dpaudit.reproduce.registry import ALL, figure_names, get_figure, resolve_figures
from dpaudit.validation import check_seed


def register(sub: Any) -> None:
    """Add the ``reproduce`` sub-command."""
    p = sub.add_parser(
        "reproduce",
        help=command_help("reproduce"),
        description=__doc__,
    )
    p.add_argument(
        "figure",
        metavar="FIGURE",
        help=f"one of {', '.join([*figure_names(), ALL])}",
    )
    p.add_argument(
        "--scale",
        default="quick",
        metavar="|".join(SCALES[1:]),
        help="'paper': the papers' sample sizes; 'quick' (default): `all` in minutes on 2 "
        "cores, every finding shown except the word-level violations of mldp-text's own code "
        "(needs 'paper' in the mldp environment); 'tiny': pipeline smoke test, proves nothing",
    )
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="corpus for hoho-fig1 (UCI 'sentence<TAB>label' file, e.g. yelp_labelled.txt; "
        "default: the offline corpus shipped with dpaudit)",
    )
    add_output_dir(p)
    add_seed(p)
    add_execution_args(p)
    add_json(p)
    p.set_defaults(func=run)


def _render(result: dict[str, Any]) -> str:
    took = f"{result['seconds']:.0f} s"
    earlier = result.get("earlier_seconds") or 0.0
    if earlier > 0:  # a resume: the work's time, not only this run's
        took += f"; {result['work_seconds']:.0f} s of work, {earlier:.0f} s of it in earlier runs"
    lines = [f"reproduced into {result['out']} ({result['status']}, {took})"]
    for fig in result["figures"]:
        mark = fig.get("findings_summary") or (
            "findings shown" if fig["findings_hold"] else "some findings not shown"
        )
        seconds = fig["seconds"]
        note = ""
        if fig["resumed"]:
            seconds = fig.get("work_seconds", seconds)
            note = " (kept from the earlier run in this directory)"
        if fig["units_reused"]:
            note = f" ({fig['units_reused']} work units reused from the interrupted run)"
        lines.append(f"  {fig['figure']}: {mark}, {seconds:.0f} s{note} -> {fig['directory']}")
    lines.append(f"report: {result['report_html']}")
    lines.append(f"        {result['report_markdown']}")
    return "\n".join(lines)


def _check_resumable(out: str, force: bool) -> None:
    """``--resume`` needs an earlier run in ``out``: never a silent fresh start."""
    from dpaudit.reproduce.runner import read_run_status
    from dpaudit.rundir.layout import RUN_STATUS

    if force:
        raise InvalidArgumentError("--force", True, "either --force or --resume, not both")
    if read_run_status(Path(out)) is None:
        raise InvalidArgumentError(
            "--resume",
            out,
            f"a directory holding an earlier reproduce run ({RUN_STATUS}); "
            "nothing to resume there (start without --resume)",
        )


def run(args: argparse.Namespace) -> int:
    """Validate everything, prepare ``--out``, run the figures and write the report."""
    from dpaudit.reproduce.runner import reproduce

    # All checks come before --out is touched: bad input leaves nothing behind.
    names = resolve_figures(args.figure)
    scale = check_scale(args.scale)
    seed = check_seed(args.seed, "--seed")
    execution = execution_config(args)
    if args.out is None:
        raise InvalidArgumentError("--out", None, "a directory path for the results")
    if args.data is not None:
        readers = [n for n in names if get_figure(n).uses_data]
        if not readers:
            users = [n for n in figure_names() if get_figure(n).uses_data]
            raise InvalidArgumentError("--data", args.data, f"used only with {', '.join(users)}")
        if not Path(args.data).is_file():
            raise InvalidArgumentError("--data", args.data, "an existing, readable corpus file")
        from dpaudit.text.corpus import load_corpus

        load_corpus(args.data)  # a malformed corpus fails now, not after the other figures
    if args.resume:
        _check_resumable(args.out, args.force)
    require_matplotlib()
    out = prepare_output_dir(args.out, force=args.force, resume=args.resume)
    summary = reproduce(
        args.figure,
        out,
        scale=scale,
        seed=seed,
        execution=execution,
        data=args.data,
        resume=args.resume,
    )
    for o in summary.figures:
        note = resume_summary(o.units_reused, o.units_computed, o.units_unreadable)
        if note:
            sys.stderr.write(f"dpaudit reproduce: {o.figure}: {note}\n")
    payload = {
        "out": summary.directory,
        "status": summary.status,
        "scale": summary.config.scale,
        "seed": summary.config.seed,
        "seconds": summary.seconds,
        "work_seconds": summary.work_seconds,
        "earlier_seconds": summary.earlier_seconds,
        "figures": [
            {
                "figure": o.figure,
                "directory": o.directory,
                "findings_hold": o.findings_hold,
                "findings_summary": o.findings_summary,
                "seconds": o.seconds,
                "work_seconds": o.work_seconds,
                "resumed": o.resumed,
                "units_reused": o.units_reused,
                "units_computed": o.units_computed,
                "units_unreadable": o.units_unreadable,
            }
            for o in summary.figures
        ],
        "report_html": summary.report_html,
        "report_markdown": summary.report_markdown,
    }
    emit(args, payload, _render)
    return 0
