"""The names of every file and folder a run directory holds, defined once.

A run of ``dpaudit reproduce`` (``--out DIR``)::

    DIR/run-status.json                 running | complete | failed | interrupted
    DIR/report.md, DIR/report.html      the report (written last)
    DIR/<figure>/results.json           the figure's typed result (dpaudit.rundir.records)
    DIR/<figure>/results.csv            its tidy rows
    DIR/<figure>/figure.png, figure.svg the plot
    DIR/<figure>/README.md              the figure's page
    DIR/<figure>/checkpoint/            its stored work units (a checkpoint run directory)

A checkpoint run directory (``dpaudit audit --out DIR``, or a figure's
``checkpoint/``; :mod:`dpaudit.engine.checkpoint`)::

    config.json                         configuration + dpaudit version (written first)
    units/c000/manifest.json            fingerprint of call 0's units
    units/c000/u000017.npz              the result of unit 17 of call 0
    result.json                         the final result; present only when complete
    report.md, report.html, audit.png   its report (``dpaudit report DIR``) and picture

Every writer and reader imports these names; ``tests/test_architecture.py``
fails when one of them is spelled out anywhere else in ``src``.
"""

from __future__ import annotations

# ------------------------------------------------------------ a reproduce run
#: The run's status record (``DIR/run-status.json``).
RUN_STATUS = "run-status.json"
#: The report, written last (``DIR/report.md``, ``DIR/report.html``).
REPORT_MD = "report.md"
REPORT_HTML = "report.html"
REPORT_FILES = (REPORT_HTML, REPORT_MD)

# ------------------------------------------------------------ one figure: DIR/<figure>/
#: The figure's typed result; written last, so its presence marks the figure done.
RESULTS_JSON = "results.json"
#: The tidy rows, one CSV line each.
RESULTS_CSV = "results.csv"
#: The plot as PNG (embedded in the report) and SVG (for zooming in and for papers).
FIGURE_PNG = "figure.png"
FIGURE_SVG = "figure.svg"
#: The figure's own page.
FIGURE_README = "README.md"
#: The folder holding the figure's stored work units (a checkpoint run directory).
CHECKPOINT_DIR = "checkpoint"
#: A figure's files the report links to, with their labels, in the order it lists them.
FIGURE_FILES = (
    (FIGURE_SVG, "SVG"),
    (FIGURE_PNG, "PNG"),
    (RESULTS_CSV, "CSV"),
    (RESULTS_JSON, "JSON"),
    (FIGURE_README, "README"),
)

# ------------------------------------------------------------ a checkpoint run directory
#: Full configuration + dpaudit version, written first.
CONFIG_FILE = "config.json"
#: The final result; present only when the run completed.
RESULT_FILE = "result.json"
#: An audit's picture: the two output distributions on the witness set, and the claim's
#: trade-off curve beside the certified points (``dpaudit report DIR`` of an audit).
AUDIT_PNG = "audit.png"
#: The folder of stored work units, one sub-folder per call.
UNITS_DIR = "units"
#: Inside a call's folder: the fingerprint of its units.
MANIFEST_FILE = "manifest.json"
#: Suffix of a stored unit's file (:mod:`dpaudit.engine.unit_codec`).
UNIT_SUFFIX = ".npz"
#: Prefixes of a call's folder (``c000``) and of a unit's file (``u000017.npz``).
CALL_PREFIX = "c"
UNIT_PREFIX = "u"


def call_folder(call: int) -> str:
    """The folder name of call ``call`` under :data:`UNITS_DIR` (``c000``)."""
    return f"{CALL_PREFIX}{call:03d}"


def unit_file(index: int) -> str:
    """The file name of unit ``index`` in its call's folder (``u000017.npz``)."""
    return f"{UNIT_PREFIX}{index:06d}{UNIT_SUFFIX}"


def call_index(folder_name: str) -> int | None:
    """The call number of a folder named by :func:`call_folder`; None for any other name."""
    digits = folder_name[len(CALL_PREFIX) :]
    return int(digits) if folder_name.startswith(CALL_PREFIX) and digits.isdigit() else None


def unit_index(file_name: str) -> int | None:
    """The unit number of a file named by :func:`unit_file`; None for any other name."""
    if not (file_name.startswith(UNIT_PREFIX) and file_name.endswith(UNIT_SUFFIX)):
        return None
    digits = file_name[len(UNIT_PREFIX) : -len(UNIT_SUFFIX)]
    return int(digits) if digits.isdigit() else None
