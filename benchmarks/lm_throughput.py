"""Teacher-forced scoring throughput of the default LM against this CPU's float32 matmul peak.

Measured in the same run, interleaved so that other load on a shared machine
hits both alike:

(a) the float32 matmul peak: ``torch.matmul`` of two 2048×2048 matrices,
    repeated, in GFLOP/s (2·n³ per product), best of ``--repeats`` rounds;
(b) scoring: B sequences of L tokens (random ids, all real tokens) through the
    model under ``torch.inference_mode``, and the log-probability of every
    token given its prefix (the rewriters' likelihood step).  Tokens scored per
    second = B·L / wall time, best of ``--repeats`` rounds after one warm-up.

Forward FLOPs per token (stated in the output)::

    2·N_nonembed                 every weight matrix of the blocks (one multiply-add each)
  + 2·d·V                        the output layer (tied to the embedding, so not in N_nonembed,
                                 but it is computed for every scored token)
  + 4·n_layer·d_attn·(L+1)/2     QKᵀ and AV over the causal context, averaged over positions

(Kaplan et al. 2020's C_forward = 2N + 2·n_layer·n_ctx·d_attn, with the output layer added
and the causal average of the context.)  Achieved fraction = FLOPs/token × tokens/s ÷ peak.

Two scoring paths are timed: ``logits`` (``model(ids).logits``, then log-softmax: B·L·V
floats are materialised, 200 MB at the defaults) and ``chunked`` (the backbone's hidden
states, then the output layer and log-sum-exp over row chunks of ``--chunk`` tokens).

The target applies to SmolLM2 (a tiny model measures only Python overhead); the exit
status is 1 when it is missed.

Usage::

    python benchmarks/lm_throughput.py [--model smollm2|tiny|DIR] [--batch 8] [--length 128]
        [--repeats 3] [--threads 2] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import numpy as np
import torch

from dpaudit.errors import DPAuditError
from dpaudit.mechanisms.rewriters import exponential_decoding, process_logits
from dpaudit.mechanisms.rewriters.lm import causal_logits
from dpaudit.text.models import LoadedModel, load_model, tiny_model

TARGET = 0.3  # achieved fraction of the matmul peak


def matmul_peak(n: int = 2048, inner: int = 5) -> float:
    """GFLOP/s of one round of ``inner`` float32 n×n products (2·n³ FLOPs each)."""
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen)
    b = torch.randn(n, n, generator=gen)
    torch.matmul(a, b)  # warm-up: thread pool, page faults
    start = time.perf_counter()
    for _ in range(inner):
        torch.matmul(a, b)
    return 2 * n**3 * inner / (time.perf_counter() - start) / 1e9


def flops_per_token(model: Any, length: int) -> dict[str, float]:
    """Forward FLOPs per scored token (formula in the module docstring)."""
    config = model.config
    embed = model.get_input_embeddings().weight
    total = sum(p.numel() for p in model.parameters())
    head = model.get_output_embeddings().weight
    tied = head.data_ptr() == embed.data_ptr()
    # Non-embedding parameters: everything but the token embedding (and an untied head).
    non_embed = total - embed.numel() - (0 if tied else head.numel())
    d_attn = config.num_attention_heads * getattr(
        config, "head_dim", config.hidden_size // config.num_attention_heads
    )
    dense = 2 * non_embed
    output = 2 * head.numel()
    attention = 4 * config.num_hidden_layers * d_attn * (length + 1) / 2
    return {
        "parameters": total,
        "non_embedding_parameters": non_embed,
        "dense": dense,
        "output_layer": output,
        "attention": attention,
        "total": dense + output + attention,
    }


def score_logits(model: Any, ids: torch.Tensor) -> torch.Tensor:
    """log p(token_t | tokens_<t) for t ≥ 1 via the full logits tensor."""
    logits = model(input_ids=ids).logits[:, :-1]
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    return logprobs.gather(-1, ids[:, 1:, None])[..., 0]


def score_chunked(model: Any, ids: torch.Tensor, chunk: int = 256) -> torch.Tensor:
    """The same log-probabilities, never holding more than ``chunk`` rows of logits."""
    hidden = model.get_decoder()(input_ids=ids).last_hidden_state[:, :-1]
    weight = model.get_output_embeddings().weight
    rows = hidden.reshape(-1, hidden.shape[-1])
    targets = ids[:, 1:].reshape(-1)
    out = torch.empty(rows.shape[0], dtype=torch.float32)
    for start in range(0, rows.shape[0], chunk):
        logits = rows[start : start + chunk] @ weight.T
        picked = logits.gather(-1, targets[start : start + chunk, None])[:, 0]
        out[start : start + chunk] = picked - torch.logsumexp(logits, dim=-1)
    return out.reshape(ids.shape[0], -1)


PROMPT_TOKENS = 16
DECODING = exponential_decoding(10.0, (-10.0, 10.0))  # DP-Prompt at ε = 10 per token


def score_rewriter(model: Any, ids: torch.Tensor) -> list[np.ndarray]:
    """dpaudit's white-box path (``CausalRewriter.token_log_probs``) after a shared prompt.

    What the audit really pays: the prompt's key-value cache shared over the batch
    (``causal_logits``), and the declared decoding (clip, temperature, log-softmax)
    applied in numpy (``process_logits``).
    """
    rows = ids.numpy()
    outputs = list(rows[:, PROMPT_TOKENS:])
    scored = []
    for i, logits in causal_logits(model, rows[0, :PROMPT_TOKENS], outputs):
        lp = process_logits(logits, DECODING)
        scored.append(lp[np.arange(len(outputs[i])), outputs[i]])
    return scored


def _load(name: str) -> LoadedModel:
    if name == "tiny":
        return tiny_model("causal")
    try:
        return load_model(None if name == "smollm2" else name)
    except (DPAuditError, ImportError) as error:
        print(f"{name} unavailable ({error}); using --model tiny")
        return tiny_model("causal")


def _timed(fn: Any, *args: Any) -> float:
    start = time.perf_counter()
    with torch.inference_mode():
        fn(*args)
    return time.perf_counter() - start


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Interleave matmul-peak rounds with scoring rounds; keep the best of each."""
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    loaded = _load(args.model)
    load_s = time.perf_counter() - start
    model = loaded.model
    gen = torch.Generator().manual_seed(1)
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (args.batch, args.length), generator=gen)
    with torch.inference_mode():  # the two paths agree (and warm up)
        diff = (score_logits(model, ids) - score_chunked(model, ids, args.chunk)).abs().max()
    ids[:, :PROMPT_TOKENS] = ids[0, :PROMPT_TOKENS]  # one document: every row shares its prompt
    peaks, times = [], {"logits": [], "chunked": [], "dpaudit_rewriter": []}
    for _ in range(args.repeats):
        peaks.append(matmul_peak())
        times["logits"].append(_timed(score_logits, model, ids))
        times["chunked"].append(_timed(score_chunked, model, ids, args.chunk))
        times["dpaudit_rewriter"].append(_timed(score_rewriter, model, ids))
    peak = max(peaks)
    flops = flops_per_token(model, args.length)
    tokens = args.batch * args.length
    paths = {}
    for name, seconds in times.items():
        # The rewriter path runs the shared prompt once: count the tokens the model ran.
        shared = PROMPT_TOKENS + args.batch * (args.length - PROMPT_TOKENS)
        ran = shared if name == "dpaudit_rewriter" else tokens
        rate = ran / min(seconds)
        paths[name] = {
            "seconds": seconds,
            "tokens_per_s": rate,
            "gflops": rate * flops["total"] / 1e9,
            "fraction_of_peak": rate * flops["total"] / 1e9 / peak,
        }
    return {
        "model": loaded.source,
        "load_s": load_s,
        "batch": args.batch,
        "length": args.length,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "matmul_gflops_rounds": peaks,
        "matmul_peak_gflops": peak,
        "flops_per_token": flops,
        "max_logprob_difference_between_paths": float(diff),
        "paths": paths,
        "target_fraction": TARGET,
        "target_applies": not loaded.source.startswith("tiny"),
    }


def _print(result: dict[str, Any]) -> None:
    f = result["flops_per_token"]
    print(f"model: {result['model']} (load {result['load_s']:.1f} s)")
    print(
        f"threads {result['threads']}, B={result['batch']}, L={result['length']}, "
        f"matmul peak {result['matmul_peak_gflops']:.1f} GFLOP/s "
        f"(rounds {', '.join(f'{g:.1f}' for g in result['matmul_gflops_rounds'])})"
    )
    print(
        f"FLOPs/token {f['total'] / 1e6:.1f} M = 2·N_nonembed {f['dense'] / 1e6:.1f} M"
        f" + output layer {f['output_layer'] / 1e6:.1f} M + attention {f['attention'] / 1e6:.2f} M"
    )
    print(f"{'path':<17} {'tokens/s':>10} {'GFLOP/s':>9} {'of peak':>8}")
    for name, p in result["paths"].items():
        rate, gflops, share = p["tokens_per_s"], p["gflops"], p["fraction_of_peak"]
        print(f"{name:<17} {rate:>10.0f} {gflops:>9.1f} {share:>8.2f}")
    best = result["paths"]["dpaudit_rewriter"]["fraction_of_peak"]
    verdict = "met" if best >= TARGET else "MISSED"
    if not result["target_applies"]:
        verdict = "n/a (a tiny model is all overhead)"
    print(f"target ≥ {TARGET} of peak for dpaudit's scorer: {verdict} ({best:.2f})")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print the table, write JSON to ``--out``; 1 if the target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--model", default="smollm2", help="smollm2, tiny or a local HF dir")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)
    result = measure(args)
    _print(result)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
    best = result["paths"]["dpaudit_rewriter"]["fraction_of_peak"]
    return 0 if best >= TARGET or not result["target_applies"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
