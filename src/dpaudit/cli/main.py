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


#: Options whose values often start with '-' (``--domain -10,10``, ``--pair "-1;1"``).
DASH_VALUE_OPTIONS = ("--domain", "--pair")


def attach_dash_values(argv: Sequence[str]) -> list[str]:
    """Rewrite ``--domain -10,10`` as ``--domain=-10,10``.

    argparse takes a token that starts with '-' and is not a plain negative
    number for an option, so ``--domain -10,10`` would fail to parse.
    """
    out: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in DASH_VALUE_OPTIONS and i + 1 < len(tokens) and tokens[i + 1].startswith("-"):
            out.append(f"{token}={tokens[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) 0, 1 or 2."""
    parser = build_parser()
    args = parser.parse_args(attach_dash_values(sys.argv[1:] if argv is None else argv))
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
