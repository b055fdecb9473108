"""Conventions shared by every sub-command.

* ``--json`` prints exactly one JSON object on stdout (infinite values as "inf");
* ``--seed`` wherever randomness is involved;
* mechanism parameters as ``-p NAME=VALUE``; ε is ``--epsilon``, δ ``--delta``,
  the input domain ``--domain LOW,HIGH`` (for a ``module:callable`` also a typed
  domain of :mod:`dpaudit.domains`, e.g. ``int:0..10``, with ``--pair 'A|B'``);
* exit 0 = ran, 2 = usage or input error (one line on stderr, no traceback),
  1 = ``--fail-on-violation`` found a violation.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dpaudit.adapters import missing_adapter_error
from dpaudit.adapters.callable import FunctionMechanism, resolve_callable
from dpaudit.auditors.core.guard import preflight
from dpaudit.claims import Definition, PrivacyClaim
from dpaudit.cli.parser import (
    EXIT_OK,
    EXIT_VIOLATION,
    bounded_integer,
    integer,
    positive_seconds,
)
from dpaudit.domains import SYNTAX, Dataset, is_typed, parse_domain
from dpaudit.domains import parse_pair as parse_typed_pair
from dpaudit.engine.checkpoint import cli_run
from dpaudit.engine.config import BACKENDS, MAX_WORKERS, ExecutionConfig
from dpaudit.engine.timeout import DEFAULT_UNIT_TIMEOUT, check_timeout
from dpaudit.errors import InvalidArgumentError, MissingArgumentError
from dpaudit.mechanisms import make_mechanism, mechanism_names
from dpaudit.mechanisms.registry import mechanism_class, parameter_fields
from dpaudit.validation import check_delta, check_epsilon

if TYPE_CHECKING:
    from dpaudit.mechanisms import Mechanism

#: Longest the preflight waits for a small chunk of outputs (seconds).
PREFLIGHT_TIMEOUT = 60.0

T = TypeVar("T")


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: print one JSON object instead of text."""
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")


def add_seed(parser: argparse.ArgumentParser, default: int = 0) -> None:
    """``--seed S``: root seed of every random stream."""
    parser.add_argument(
        "--seed",
        type=bounded_integer(0),
        default=default,
        help=f"root random seed, a whole number >= 0 (default {default})",
    )


def add_mechanism_args(parser: argparse.ArgumentParser, epsilon_required: bool = True) -> None:
    """Positional MECHANISM plus ``-p NAME=VALUE``, ``--epsilon``, ``--delta``, ``--domain``."""
    parser.add_argument(
        "mechanism", metavar="MECHANISM", help="registered name (see `dpaudit mechanisms`)"
    )
    add_param(parser, "mechanism parameter, e.g. -p dim=8 -p lambda=10 (repeatable)")
    parser.add_argument("--epsilon", type=float, required=epsilon_required, help="claimed ε (> 0)")
    parser.add_argument("--delta", type=float, default=None, help="claimed δ in [0, 1)")
    parser.add_argument(
        "--dim",
        type=integer,
        default=None,
        metavar="N",
        help="input dimension n, for mechanisms with a dim parameter (same as -p dim=N)",
    )
    parser.add_argument(
        "--domain",
        default=None,
        metavar="LOW,HIGH|TYPED",
        help="input domain per coordinate, e.g. -10,10; for a module:callable also a typed "
        "domain whose values the callable receives as they are: int:0..10, bool, cat:a,b,c, "
        "str:w1,w2, real:0..1x5, vec:3:int:0..9, "
        "'dataset:int:0..100,max=20,neighbours=add-remove|replace-one'",
    )


def add_param(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``-p/--param NAME=VALUE`` (repeatable), read with :func:`parse_params`."""
    parser.add_argument(
        "-p", "--param", action="append", default=[], metavar="NAME=VALUE", help=help_text
    )


def add_execution_args(parser: argparse.ArgumentParser) -> None:
    """``--backend``, ``--workers``, ``--ray-address``."""
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="execution engine (default local processes)",
    )
    parser.add_argument(
        "--workers",
        metavar="N",
        type=bounded_integer(1, MAX_WORKERS),
        default=None,
        help=f"number of worker processes, 1 to {MAX_WORKERS} (default: core count)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="join an existing Ray cluster (with --backend ray)",
    )
    parser.add_argument(
        "--unit-timeout",
        type=positive_seconds,
        default=DEFAULT_UNIT_TIMEOUT,
        metavar="SECONDS",
        help=f"stop if one work unit runs longer (default {DEFAULT_UNIT_TIMEOUT:g} s)",
    )


def add_run_args(parser: argparse.ArgumentParser) -> None:
    """The tail of every command that runs work units: execution options, ``--out``, ``--json``."""
    add_execution_args(parser)
    add_output_dir(parser)
    add_json(parser)


def execution_config(args: argparse.Namespace) -> ExecutionConfig:
    """The :class:`ExecutionConfig` described by :func:`add_execution_args` options."""
    if args.ray_address and args.backend != "ray":
        raise InvalidArgumentError("--ray-address", args.ray_address, "used with --backend ray")
    return ExecutionConfig(backend=args.backend, workers=args.workers, ray_address=args.ray_address)


def parse_params(items: list[str]) -> dict[str, str]:
    """Turn ``["dim=8", "lambda=10"]`` into a dict, rejecting malformed items."""
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise InvalidArgumentError("-p", item, "NAME=VALUE")
        out[name.strip()] = value
    return out


def build_mechanism(args: argparse.Namespace) -> Mechanism:
    """Construct the mechanism named on the command line with its ``-p`` parameters.

    A name containing ``:`` is a user callable ``module:callable`` (see
    :mod:`dpaudit.adapters.callable`); an adapter whose library is missing names its extra.
    """

    params: dict[str, Any] = parse_params(args.param)
    if getattr(args, "epsilon", None) is not None:
        params["epsilon"] = check_epsilon(args.epsilon, "--epsilon")
    domain = getattr(args, "domain", None)
    if domain is not None and is_typed(domain):
        mechanism = build_typed_callable(args, params)
    else:
        mechanism = _build_registered(args, params)
    # Fail fast on a broken mechanism (NaN, wrong shape, raising, hanging, ignoring the rng,
    # too big for memory) before any output directory or work exists.
    timeout = check_timeout(getattr(args, "unit_timeout", None), "--unit-timeout")
    preflight(mechanism, timeout=min(timeout or PREFLIGHT_TIMEOUT, PREFLIGHT_TIMEOUT))
    return mechanism


#: What ``--domain`` takes, for messages: both forms, with an example of each.
DOMAIN_FORMS = (
    "LOW,HIGH for real inputs in a box (per coordinate, e.g. --domain 0,1) or a typed "
    f"domain whose values the callable receives as they are ({SYNTAX}; e.g. --domain "
    "int:0..1 for bits)"
)


def require_callable_domain(args: argparse.Namespace) -> None:
    """A ``module:callable`` names its inputs with ``--domain``: no silent [0, 1].

    The claim is judged over the domain, so a guessed one would audit a
    different claim (a bit-valued function fed reals in [0, 1] is no longer
    the mechanism the user wrote).  Word adapters (``mldp:NAME``) take words and
    need none.
    """
    name = getattr(args, "mechanism", "")
    if ":" not in str(name) or getattr(args, "domain", None) is not None:
        return
    if getattr(args, "metric", None) is not None:  # a word function: its inputs are words
        return
    from dpaudit.cli.word_args import is_word_mechanism

    if not is_word_mechanism(name):
        raise MissingArgumentError("--domain", f"{name} is audited on --domain: {DOMAIN_FORMS}")


def build_typed_callable(args: argparse.Namespace, params: dict[str, Any]) -> Mechanism:
    """``module:callable`` with a typed ``--domain``: called with values of their own type.

    The claim is (ε, δ)-DP over the typed domain and its neighbour relation; each
    ``--pair 'A|B'`` is parsed by the domain (:func:`dpaudit.domains.parse_pair`)
    and audited beside the domain's own candidate pairs.  ``--dim`` and ``-p`` do
    not apply (the domain fixes the input's shape).
    """
    name = args.mechanism
    if ":" not in name:
        raise InvalidArgumentError(
            "--domain", args.domain, "LOW,HIGH (a typed domain is for a module:callable)"
        )
    domain = parse_domain(args.domain, "--domain")
    if getattr(args, "dim", None) is not None:
        raise InvalidArgumentError("--dim", args.dim, "no --dim with a typed --domain")
    extra = sorted(set(params) - {"epsilon"})
    if extra:
        raise InvalidArgumentError(
            "-p", extra[0], "no -p parameters with a typed --domain (it fixes the input)"
        )
    delta = check_delta(args.delta if getattr(args, "delta", None) is not None else 0.0, "--delta")
    claim = PrivacyClaim(
        Definition.APPROXIMATE if delta > 0 else Definition.PURE,
        params["epsilon"],
        domain,
        delta=delta,
        neighbouring=_neighbouring(domain),
    )
    pairs = tuple(parse_typed_pair(domain, text, "--pair") for text in getattr(args, "pair", []))
    return FunctionMechanism(
        epsilon=claim.epsilon, function=resolve_callable(name), claimed=claim, extra_pairs=pairs
    )


def _is_low_high(text: str) -> bool:
    parts = str(text).split(",")
    try:
        return len(parts) == 2 and all(float(p) == float(p) for p in parts)
    except ValueError:
        return False


def _neighbouring(domain: Any) -> str:
    if isinstance(domain, Dataset):
        return f"{domain.neighbours} neighbours in {domain.describe()}"
    return f"any two inputs of {domain.describe()} (local DP)"


def _build_registered(args: argparse.Namespace, params: dict[str, Any]) -> Mechanism:
    """A registered mechanism (or the ``callable`` adapter) with its ``-p`` parameters."""
    name = args.mechanism
    if ":" in name:
        params["target"], name = name, "callable"
        domain = getattr(args, "domain", None)
        if domain is not None and not _is_low_high(domain):
            raise InvalidArgumentError("--domain", domain, DOMAIN_FORMS)
    elif name not in mechanism_names() and (missing := missing_adapter_error(name)):
        raise missing
    cls = mechanism_class(name)
    fields = parameter_fields(cls)
    for option in ("delta", "domain", "dim"):
        value = getattr(args, option, None)
        if value is None:
            continue
        if option not in fields:
            raise InvalidArgumentError(f"--{option}", value, f"no --{option} for {cls.name}")
        if option == "delta":
            value = check_delta(value, "--delta")
        given = params.get(option)
        if given is not None and str(given).strip() != str(value):
            raise InvalidArgumentError(
                f"--{option}", value, f"the same value as -p {option}={given}"
            )
        params[option] = value
    return make_mechanism(name, **params)


def emit(args: argparse.Namespace, result: Any, render_text: Callable[[Any], str]) -> None:
    """Print ``result`` as one JSON object (``--json``) or as text."""
    from dpaudit.serialization import dumps

    if getattr(args, "json", False):
        sys.stdout.write(dumps(result) + "\n")
    else:
        sys.stdout.write(render_text(result).rstrip("\n") + "\n")


def run_recorded(
    args: argparse.Namespace, command: str, compute: Callable[[ExecutionConfig], T]
) -> T:
    """``compute(execution)`` inside the ``--out`` run directory (if any), its result stored there.

    ``execution`` is :func:`execution_config` with the checkpoint session in it:
    pass it to the auditor.  The directory keeps finished units for
    ``--resume`` and is removed again when bad input or a broken mechanism stops
    the run (see :func:`dpaudit.engine.checkpoint.cli_run`); call this after
    every argument has been validated.
    """
    from dpaudit.mechanisms.fingerprint import code_fingerprint

    execution = execution_config(args)
    name = getattr(args, "mechanism", None)
    code = code_fingerprint(name) if isinstance(name, str) else None
    with cli_run(args, command, code) as state:
        result = compute(state.attach(execution))
        if state.directory is not None:
            state.directory.write_result(result)
    return result


def emit_verdict(
    args: argparse.Namespace, result: Any, render_text: Callable[[Any], str], violation: bool
) -> int:
    """:func:`emit` the result; exit status 1 for a violation with ``--fail-on-violation``."""
    emit(args, result, render_text)
    if args.fail_on_violation and violation:
        return EXIT_VIOLATION
    return EXIT_OK


def add_output_dir(parser: argparse.ArgumentParser) -> None:
    """``--out DIR`` (run directory) with ``--force`` and ``--resume``."""
    parser.add_argument("--out", default=None, metavar="DIR", help="run directory for results")
    parser.add_argument("--force", action="store_true", help="overwrite a non-empty --out")
    parser.add_argument(
        "--resume", action="store_true", help="continue an interrupted run in --out"
    )


def prepare_output_dir(path: str, *, force: bool, resume: bool = False) -> Path:
    """Check that ``path`` is a usable output directory and create it.

    An existing non-empty directory needs ``force`` (wipe) or ``resume`` (keep).
    """
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InvalidArgumentError("--out", path, "a directory path (it is a file)")
    if out.exists() and any(out.iterdir()) and not (force or resume):
        raise InvalidArgumentError("--out", path, "an empty or new directory (or pass --force)")
    if out.exists() and force and not resume:
        shutil.rmtree(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise InvalidArgumentError(
            "--out", path, f"a writable directory ({exc.strerror})"
        ) from None
    return out


def format_vector(v: list[Any]) -> str:
    """``(a, b, …)`` with at most six entries for text output (``"inf"`` strings as ``∞``)."""
    special = {"inf": "∞", "-inf": "-∞"}
    head = ", ".join(special.get(t, t) if isinstance(t, str) else f"{t:.6g}" for t in v[:6])
    return f"({head}{', …' if len(v) > 6 else ''})"


def as_dict(obj: Any) -> dict[str, Any]:
    """A dataclass as a shallow dict (for text rendering)."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
