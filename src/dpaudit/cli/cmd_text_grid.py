"""``dpaudit text-grid``: the whole privacy–utility table in one command.

For OME at every (ε, λ) and SUE/OUE at every ε (default: HoHo's grid,
ε ∈ {0.001, 1} × λ ∈ {1, 10, 100}): claimed ε, exact worst-case ε, linking AUC
and reconstruction accuracy of the HoHo and optimal attacks, and the sentiment
accuracy on privatised encodings beside clean encodings.  ``--out DIR`` also
writes ``grid.json`` and ``grid.md`` there (only after the run succeeded).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dpaudit.cli.cmd_attack import add_corpus_args, load_corpus_from_args
from dpaudit.cli.common import add_json, add_seed, emit, prepare_output_dir
from dpaudit.errors import InvalidArgumentError
from dpaudit.io import atomic_write_text
from dpaudit.serialization import dumps
from dpaudit.validation import check_epsilon, check_positive, check_seed


def register(sub: Any) -> None:
    """Add the ``text-grid`` sub-command."""
    from dpaudit.attacks.utility import CLASSIFIERS

    p = sub.add_parser(
        "text-grid", help="privacy-utility table of OME/SUE/OUE on a corpus", description=__doc__
    )
    add_corpus_args(p)
    p.add_argument(
        "--epsilons", default="0.001,1", metavar="E1,E2", help="claimed ε values (default 0.001,1)"
    )
    p.add_argument(
        "--lambdas", default="1,10,100", metavar="L1,L2", help="OME λ values (default 1,10,100)"
    )
    p.add_argument(
        "--schemes", default="ome,sue,oue", metavar="S1,S2", help="schemes (default ome,sue,oue)"
    )
    p.add_argument("--n-sentences", type=int, default=800, help="attack sample (default 800)")
    p.add_argument("--copies", type=int, default=100, help="encodings per target (default 100)")
    p.add_argument("--no-utility", action="store_true", help="attacks only (no classifier)")
    p.add_argument(
        "--classifier", choices=CLASSIFIERS, default="mlp", help="utility classifier (default mlp)"
    )
    p.add_argument("--out", default=None, metavar="DIR", help="also write grid.json and grid.md")
    p.add_argument("--force", action="store_true", help="overwrite a non-empty --out")
    add_seed(p)
    add_json(p)
    p.set_defaults(func=run)


def _numbers(option: str, text: str, check: Any) -> list[float]:
    values = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise InvalidArgumentError(option, text, "comma-separated numbers") from None
        values.append(check(value, option))
    if not values:
        raise InvalidArgumentError(option, text, "at least one number")
    return values


def _check_out(path: str, force: bool) -> None:
    """Refuse an unusable ``--out`` before the run, without creating anything."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InvalidArgumentError("--out", path, "a directory path (it is a file)")
    if out.exists() and any(out.iterdir()) and not force:
        raise InvalidArgumentError("--out", path, "an empty or new directory (or pass --force)")


def run(args: argparse.Namespace) -> int:
    """Validate every option, run the grid, print it and optionally write it."""
    from dpaudit.attacks.grid import default_grid, render_table, run_grid
    from dpaudit.attacks.schemes import SCHEME_NAMES

    epsilons = _numbers("--epsilons", args.epsilons, lambda v, n: check_epsilon(v, n))
    lambdas = _numbers("--lambdas", args.lambdas, lambda v, n: check_positive(n, v))
    schemes = [s.strip() for s in args.schemes.split(",") if s.strip()]
    for scheme in schemes:
        if scheme not in SCHEME_NAMES:
            raise InvalidArgumentError("--schemes", args.schemes, f"names from {SCHEME_NAMES}")
    seed = check_seed(args.seed, "--seed")
    if args.out is not None:
        _check_out(args.out, args.force)
    configs = default_grid(epsilons, lambdas, schemes)
    corpus = load_corpus_from_args(args)
    if not args.no_utility and not corpus.has_labels:
        raise InvalidArgumentError(
            "--data", corpus.source, "a labelled corpus for the utility columns (or --no-utility)"
        )
    result = run_grid(
        corpus,
        configs,
        seed=seed,
        n_sentences=args.n_sentences,
        copies=args.copies,
        embedder=args.embedder,
        utility=not args.no_utility,
        classifier=args.classifier,
    )
    table = render_table(result)
    if args.out is not None:
        out = prepare_output_dir(args.out, force=args.force)
        atomic_write_text(out / "grid.json", dumps(result) + "\n")
        atomic_write_text(out / "grid.md", table + "\n")
    emit(args, result, lambda _: table)
    return 0
