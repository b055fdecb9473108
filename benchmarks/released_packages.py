"""Audit the released dpmlm and privfill packages as they run, at the papers' ε values.

Runs in ``.venv-released`` (extra ``released-lm``; see docs/guide/lm-rewriters.md)::

    .venv-released/bin/python benchmarks/released_packages.py [--samples 200]
        [--final-samples 400] [--out benchmarks/results/released_packages.json]

The packages load their models themselves by name; nothing can be downloaded
here, so each runs on a tiny random checkpoint of the right architecture
(:func:`dpaudit.text.models.checkpoints.save_tiny_checkpoint`).  What the audit
finds is therefore about the *code* (what it copies, how it splits ε, which
outputs it can produce), not about a trained model's fluency.

* dpmlm 1.3.0 ``DPMLM.dpmlm_rewrite`` at ε = 10, 25, 50 per word (the paper's
  range; its README's example uses 25): white-box (its real draws scored exactly
  under a model built from the package object's own clip bounds and stopwords,
  with the declared-decoding check) and black-box.
* privfill 0.1.0 ``PrivFillDP`` (DP-Prompt) and ``PrivFillDPBart`` (DP-BART) at
  its README's ε = 10: black-box (reviewer checks and certified sets).

One line per (package, ε, pair) is printed and the whole is written as JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from dpaudit.adapters.released_lm import dpmlm_package, privfill_dp_bart, privfill_dp_prompt
from dpaudit.auditors.rewriter.blackbox import TextAuditConfig, audit_text_mechanism
from dpaudit.auditors.rewriter.whitebox import RewriterAuditConfig, audit_rewriter
from dpaudit.text.models import WORDS
from dpaudit.text.models.checkpoints import save_tiny_checkpoint
from dpaudit.text.neighbours import neighbour_pairs

DOCUMENT = "the doctor saw the patient today"
NAMED = ("Anna saw the doctor today", "anna saw the doctor today", "case: 'Anna' → 'anna'")
TWO_SENTENCES = "The doctor saw the patient. She was sick today."


def _dpmlm_rows(model_dir: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    pairs = [*neighbour_pairs(DOCUMENT, ("one_word", "stopword")), NAMED]
    for epsilon in (10.0, 25.0, 50.0):
        package = dpmlm_package(model_dir, epsilon)
        start = time.perf_counter()
        white = audit_rewriter(
            package.declared, pairs,
            RewriterAuditConfig(samples=args.samples, final_samples=args.final_samples),
            sampler=package.sampler,
        )  # fmt: skip
        for p in white.detail.pairs:
            rows.append({
                "package": package.name, "epsilon": epsilon, "pair": p.origin,
                "x": p.x, "x_prime": p.x_prime,
                "declared_matches_real_draws": p.fidelity.matches,
                "fidelity": p.fidelity.describe(),
                "exact_max_word_loss": max(p.forward.max_token_loss, p.backward.max_token_loss),
                "worst_output": p.forward.worst.output, "worst_word": p.forward.worst.token,
                "claim_per_word": epsilon,
            })  # fmt: skip
        rows.append({
            "package": package.name, "epsilon": epsilon, "pair": "all (certified, black box)",
            "white_box_verdict": white.detail.exact_verdict.value,
            "certified_verdict": white.verdict.value,
            "certified_lower_bound": white.detail.lower_bound, "ceiling": white.detail.ceiling,
            "witness": white.witness.describe(), "seconds": time.perf_counter() - start,
        })  # fmt: skip
    return rows


def _privfill_rows(bart_dir: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    pairs = [
        (TWO_SENTENCES, "The doctor saw the patient. He was sick today.", "one word: 'She' → 'He'"),
        (TWO_SENTENCES, "The doctor saw the patient.", "length: one sentence fewer"),
    ]
    config = TextAuditConfig(samples=args.samples, final_samples=args.final_samples)
    for build in (privfill_dp_prompt, privfill_dp_bart):
        package = build(bart_dir, 10.0)
        start = time.perf_counter()
        units = max(package.max_units(x) for pair in pairs for x in pair[:2])
        result = audit_text_mechanism(
            package.sampler, pairs, package.claim, max_units=units, config=config,
            name=package.name,
        )  # fmt: skip
        rows.append({
            "package": package.name, "epsilon": 10.0, "pair": "all (certified, black box)",
            "certified_verdict": result.verdict.value,
            "certified_lower_bound": result.detail.lower_bound, "ceiling": result.detail.ceiling,
            "allowed": package.claim.allowed_loss(units=units),
            "checks": [f for c in result.detail.checks for f in c.findings()],
            "witness": result.witness.describe(), "seconds": time.perf_counter() - start,
        })  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--final-samples", type=int, default=400)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        words = [w for w in WORDS if w.isalpha()]
        masked = save_tiny_checkpoint("masked", Path(tmp) / "masked", vocab=words)
        bart = save_tiny_checkpoint("seq2seq", Path(tmp) / "bart")
        rows = _dpmlm_rows(masked, args) + _privfill_rows(bart, args)
    for row in rows:
        print(json.dumps(row, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
