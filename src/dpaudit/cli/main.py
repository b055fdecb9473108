"""Entry point of the ``dpaudit`` console script."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from dpaudit.cli.parser import EXIT_USAGE, OneLineParser
from dpaudit.errors import DPAuditError, InvalidArgumentError, MissingArgumentError

#: Sub-command name → (module in ``dpaudit.cli``, one-line help), in the order
#: ``dpaudit --help`` lists them.  Each module defines ``register(subparsers)``,
#: which adds the sub-command's parser (with ``help=command_help(name)``) and
#: sets ``func`` (returning an exit code).  Only the module of the sub-command
#: being run is imported, so ``dpaudit --help`` and usage errors answer at once.
COMMANDS: dict[str, tuple[str, str]] = {
    "mechanisms": ("cmd_mechanisms", "list mechanisms, their claims and analytic truth"),
    "analyze": ("cmd_analyze", "claimed ε vs the exact worst-case ε, with a witness pair"),
    "sensitivity": ("cmd_sensitivity", "exact sensitivity of f(r) = r·min(1, C/||r||_p) in norm q"),
    "reproduce": (
        "cmd_reproduce",
        "reproduce a figure of the seed papers (or all) and write the report",
    ),
    "report": (
        "cmd_report",
        "write a self-contained HTML and a Markdown report for a run directory",
    ),
    "sanity-check": (
        "cmd_sanity_check",
        "ACL 2022 reconstruction sanity check (zeros vs ones, majority vote)",
    ),
    "simulate-sensitivity": (
        "cmd_simulate_sensitivity",
        "EMNLP 2021 Fig. 1: fraction of clipped pairs exceeding the claimed sensitivity",
    ),
    "audit": (
        "cmd_audit",
        "black-box ε lower bound (DP-Sniper-style, without its ln(1/c) ceiling)",
    ),
    "audit-rewriter": (
        "cmd_audit_rewriter",
        "LM rewriters (DP-Prompt, DP-Paraphrase): exact token losses and certified bounds",
    ),
    "audit-training": (
        "cmd_audit_training",
        "DP training (DP-SGD, Opacus, your own): one-run and multi-run canary audits",
    ),
    "attack": ("cmd_attack", "attacks on privatised text encodings"),
    "utility": ("cmd_utility", "downstream accuracy of privatised text encodings"),
    "text-grid": ("cmd_text_grid", "privacy-utility table of OME/SUE/OUE on a corpus"),
}

EPILOG = """\
`dpaudit COMMAND --help` lists a command's options.  Counts may be written 1e6,
2.5e6 or 1_000_000; mechanism parameters go as -p NAME=VALUE (-p lambda=10).
Exit status: 0 ran (whatever the verdict), 1 violation with --fail-on-violation,
2 bad input (one line on stderr, nothing written)."""

QUIET_HELP = "no progress bars (also accepted after the sub-command)"


def command_help(name: str) -> str:
    """The one-line help of sub-command ``name`` (as ``dpaudit --help`` lists it)."""
    return COMMANDS[name][1]


def requested_command(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv`` (global options take no values), or None."""
    for token in argv:
        if not token.startswith("-"):
            return token if token in COMMANDS else None
    return None


def _add_quiet_everywhere(parser: argparse.ArgumentParser) -> None:
    """Accept ``-q`` after the sub-command too (``dpaudit audit ... -q``), at every level.

    ``default=SUPPRESS`` keeps a sub-parser from resetting a ``-q`` given before it.
    """
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                if "--quiet" not in child._option_string_actions:
                    child.add_argument(
                        "-q",
                        "--quiet",
                        action="store_true",
                        default=argparse.SUPPRESS,
                        help=QUIET_HELP,
                    )
                _add_quiet_everywhere(child)


class _VersionAction(argparse.Action):
    """``--version``: reads the installed version only when asked (importlib.metadata is slow)."""

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from dpaudit import __version__

        sys.stdout.write(f"dpaudit {__version__}\n")
        parser.exit()


def build_parser(command: str | None = None) -> OneLineParser:
    """The top-level parser; ``command`` (default: every one) gets its full sub-parser.

    The others are listed with their help only, without importing their modules.
    """
    parser = OneLineParser(
        prog="dpaudit",
        description="Audit whether a privatisation mechanism gives the DP guarantee it claims.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    parser.add_argument("-q", "--quiet", action="store_true", help=QUIET_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    sub.required = True
    for name, (module, summary) in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(f"dpaudit.cli.{module}").register(sub)
        else:
            sub.add_parser(name, help=summary)
    _add_quiet_everywhere(parser)
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


def _innermost_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the (sub-)sub-command ``args`` was parsed by (for its ``prog`` in errors)."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if not subs or name not in subs[0].choices:
            return parser
        parser = subs[0].choices[name]


def _parse_reporting_unknown_first(
    parser: argparse.ArgumentParser, tokens: Sequence[str]
) -> tuple[argparse.Namespace, list[str]]:
    """``parse_known_args``, but an unknown option wins over a missing required one.

    argparse reports ``--epsilon`` as missing before it looks at ``--epsilonn``;
    the typo is the real mistake, so a first pass with required options relaxed
    finds unrecognized tokens, and only a clean line is parsed for real.
    """
    required = [a for a in _all_actions(parser) if a.required and a.option_strings]
    for action in required:
        action.required = False
    try:
        args, extras = parser.parse_known_args(tokens)
    finally:
        for action in required:
            action.required = True
    if extras:
        return args, extras
    return parser.parse_known_args(tokens)


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every action of ``parser`` and of its (sub-)sub-parsers."""
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                actions += _all_actions(sub)
    return actions


def unrecognized_message(
    extras: Sequence[str], *, takes_params: bool, options: Sequence[str] = ()
) -> str:
    """argparse's "unrecognized arguments" message, with a hint to ``-p`` for ``--NAME VALUE``.

    ``dpaudit audit ome --lambda 10`` most likely meant the mechanism parameter
    ``-p lambda=10``; the hint is given where the command takes ``-p``.  A near
    miss of one of the command's own ``options`` (``--epsilonn``) is named first,
    since a typo is likelier than a mechanism parameter spelt as an option.
    """
    import difflib

    message = f"unrecognized arguments: {' '.join(extras)}"
    for i, token in enumerate(extras):
        if not token.startswith("--") or len(token) < 3:
            continue
        name, sep, value = token[2:].partition("=")
        close = difflib.get_close_matches(f"--{name}", list(options), n=1, cutoff=0.75)
        if close:
            return f"{message} (did you mean {close[0]}?)"
        if not sep and i + 1 < len(extras) and not extras[i + 1].startswith("-"):
            value = extras[i + 1]
        if takes_params:
            hint = f"-p {name}={value or '...'}"
            return f"{message} (mechanism parameters go as -p NAME=VALUE: {hint})"
        break
    return message


def _resume_hint(args: argparse.Namespace) -> str:
    """How to continue after Ctrl-C: ``--resume`` with the same ``--out``, or how to make it so."""
    if not hasattr(args, "resume"):  # the command keeps no work units to resume from
        return "nothing was kept; run the command again"
    if getattr(args, "out", None):
        return f"finished work is kept: rerun the same command with --resume --out {args.out}"
    return "finished work was not kept; pass --out DIR to make a run resumable with --resume"


def _flag_for(parser: argparse.ArgumentParser, args: argparse.Namespace, name: str) -> str | None:
    """The command-line spelling of the Python parameter ``name``, or None.

    The option whose value it is (``time_budget`` → ``--time-budget``), else the
    mechanism parameter given as ``-p NAME=VALUE`` (``lambda`` → ``-p lambda``).
    """
    for action in parser._actions:
        if action.dest == name and action.option_strings:
            return max(action.option_strings, key=len)
    for item in getattr(args, "param", None) or []:
        if isinstance(item, str) and item.partition("=")[0].strip() == name:
            return f"-p {name}"
    return None


def in_flag_terms(
    exc: DPAuditError, parser: argparse.ArgumentParser, args: argparse.Namespace
) -> str:
    """``exc``'s message, naming the flag where a check deep inside named its Python parameter.

    The library's checks name their parameters (``workers=0 is invalid: expected
    an integer in [1, 4096]``); on the command line the same value came from a
    flag, so the message names the flag (``--workers=0 is invalid: ...``) and
    keeps the allowed range.  Every command's errors pass through here.
    """
    if isinstance(exc, InvalidArgumentError) and not str(exc.argument).startswith("-"):
        flag = _flag_for(parser, args, str(exc.argument))
        if flag is not None:
            return str(InvalidArgumentError(flag, exc.value, exc.allowed))
    return str(exc)


def check_run_flags(args: argparse.Namespace) -> None:
    """Checks of ``--out``/``--resume`` every command shares, before any work or import."""
    if getattr(args, "resume", False) and not getattr(args, "out", None):
        raise MissingArgumentError(
            "--out", "--resume continues the run in --out DIR; give the --out of the run to resume"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns (and exits with) 0, 1 or 2."""
    tokens = attach_dash_values(sys.argv[1:] if argv is None else argv)
    parser = build_parser(requested_command(tokens) or "")
    args, extras = _parse_reporting_unknown_first(parser, tokens)
    if extras:
        command_parser = _innermost_parser(parser, args)
        options = [o for a in command_parser._actions for o in a.option_strings]
        command_parser.error(
            unrecognized_message(extras, takes_params=hasattr(args, "param"), options=options)
        )
    if args.quiet:
        from dpaudit import progress

        progress.ENABLED = False
    try:
        check_run_flags(args)
        code = int(args.func(args) or 0)
    except DPAuditError as exc:
        message = in_flag_terms(exc, _innermost_parser(parser, args), args)
        sys.stderr.write(f"dpaudit {args.command}: error: {message}\n")
        code = EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write(f"dpaudit: interrupted; {_resume_hint(args)}\n")
        code = 130
    sys.stdout.flush()
    return code


def run() -> None:  # pragma: no cover - console script wrapper
    """Console-script entry: exit with :func:`main`'s code."""
    raise SystemExit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
