"""Entry point of the ``dpaudit`` console script."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from dpaudit.cli.common import EXIT_USAGE, OneLineParser
from dpaudit.errors import DPAuditError

#: Sub-command modules in ``dpaudit.cli``; each defines ``register(subparsers)``
#: which adds its parser and sets ``func`` (returning an exit code).
COMMANDS = (
    "cmd_mechanisms",
    "cmd_analyze",
    "cmd_sensitivity",
    "cmd_reproduce",
    "cmd_report",
    "cmd_sanity_check",
    "cmd_simulate_sensitivity",
    "cmd_audit",
    "cmd_attack",
    "cmd_utility",
    "cmd_text_grid",
)


def build_parser() -> OneLineParser:
    """The top-level parser with every sub-command registered."""
    from dpaudit import __version__

    parser = OneLineParser(
        prog="dpaudit",
        description="Audit whether a privatisation mechanism gives the DP guarantee it claims.",
    )
    parser.add_argument("--version", action="version", version=f"dpaudit {__version__}")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"dpaudit.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) 0, 1 or 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.quiet:
        from dpaudit import progress

        progress.ENABLED = False
    try:
        code = int(args.func(args) or 0)
    except DPAuditError as exc:
        sys.stderr.write(f"dpaudit {args.command}: error: {exc}\n")
        code = EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("dpaudit: interrupted\n")
        code = 130
    sys.stdout.flush()
    return code


def run() -> None:  # pragma: no cover - console script wrapper
    """Console-script entry: exit with :func:`main`'s code."""
    raise SystemExit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
