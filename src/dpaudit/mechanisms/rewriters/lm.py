"""The two things every rewriter asks of a language model: next-token logits, batched.

PyTorch and transformers are imported lazily (extra ``lm``), so that the rest
of dpaudit imports without them.  Models are any Hugging Face model with a
tokenizer; :func:`dpaudit.text.models.load_model` gives the embedded default.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np

from dpaudit.errors import InvalidArgumentError, OptionalDependencyError


def torch_module() -> Any:
    """``torch``, or an error naming the extra to install."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise OptionalDependencyError("torch", "lm", "a language-model rewriter") from exc
    return torch


def cache_keyword(model: Any) -> str:
    """The keyword a model's ``forward`` takes its key-value cache by.

    transformers 5 renamed ``past_key_values`` to ``cache``; both are accepted.
    """
    params = inspect.signature(model.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


def returned_cache(output: Any) -> Any:
    """The key-value cache a forward pass returned, under either name."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def model_device(model: Any) -> Any:
    """The device a model's parameters live on (CPU for models without parameters)."""
    device = getattr(model, "device", None)
    return device if device is not None else "cpu"


def sample_rows(log_probs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One index per row of ``log_probs`` drawn with probability ``exp(log_probs)``.

    Inverse CDF with ``u ∈ (0, 1]`` so that a token of probability zero is never drawn.
    """
    probs = np.exp(log_probs)
    cdf = np.cumsum(probs, axis=-1)
    u = (1.0 - rng.random(log_probs.shape[0])) * cdf[:, -1]
    index = np.sum(cdf < u[:, None], axis=-1)
    return np.minimum(index, log_probs.shape[-1] - 1)


def row_chunks(rows: int, columns: int, budget: int = 8_000_000) -> Iterator[slice]:
    """Slices of ``rows`` such that one chunk holds at most ``budget`` float64 values."""
    step = max(1, budget // max(1, columns))
    for start in range(0, rows, step):
        yield slice(start, min(rows, start + step))


def causal_logits(
    model: Any, prompt: np.ndarray, continuations: list[np.ndarray]
) -> Iterator[tuple[int, np.ndarray]]:
    """Teacher-forced next-token logits of each continuation after ``prompt``.

    Yields ``(i, logits)`` with ``logits[t]`` the logits predicting
    ``continuations[i][t]`` given the prompt and ``continuations[i][:t]``.
    Continuations are right-padded into batches; a causal model's logits at a
    position do not depend on the padding after it.
    """
    torch = torch_module()
    if prompt.ndim != 1 or prompt.size == 0:
        raise InvalidArgumentError("prompt", prompt.shape, "a non-empty 1-d array of token ids")
    longest = max((len(c) for c in continuations), default=0)
    vocab = int(model.config.vocab_size)
    for chunk in row_chunks(len(continuations), max(1, longest) * vocab * 2):
        batch = continuations[chunk]
        width = max(1, max(len(c) for c in batch))
        ids = np.zeros((len(batch), prompt.size + width), dtype=np.int64)
        mask = np.zeros_like(ids)
        ids[:, : prompt.size] = prompt
        mask[:, : prompt.size] = 1
        for row, cont in enumerate(batch):
            ids[row, prompt.size : prompt.size + len(cont)] = cont
            mask[row, prompt.size : prompt.size + len(cont)] = 1
        with torch.inference_mode():
            device = model_device(model)
            out = model(
                input_ids=torch.from_numpy(ids).to(device),
                attention_mask=torch.from_numpy(mask).to(device),
            )
        logits = out.logits[:, prompt.size - 1 : prompt.size - 1 + width].float().cpu().numpy()
        for row, cont in enumerate(batch):
            yield chunk.start + row, logits[row, : len(cont)]
