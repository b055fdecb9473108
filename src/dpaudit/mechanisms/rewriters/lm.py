"""The two things every rewriter asks of a language model: next-token logits, batched.

PyTorch and transformers are imported lazily (extra ``lm``), so that the rest
of dpaudit imports without them.  Models are any Hugging Face model with a
tokenizer; :func:`dpaudit.text.models.load_model` gives the embedded default.
"""

from __future__ import annotations

import copy
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

    The prompt is run once and its key-value cache shared by every row (models
    whose cache can be repeated over a batch; others get the prompt in each
    row).  Continuations are right-padded into batches: a causal model's logits
    at a position do not depend on the padding after it.
    """
    torch = torch_module()
    if prompt.ndim != 1 or prompt.size == 0:
        raise InvalidArgumentError("prompt", prompt.shape, "a non-empty 1-d array of token ids")
    device = model_device(model)
    key = cache_keyword(model)
    with torch.inference_mode():
        head = model(input_ids=torch.from_numpy(prompt[None, :]).to(device), use_cache=True)
    prefix = returned_cache(head)
    first = head.logits[0, -1].float().cpu().numpy()  # predicts every continuation's token 0
    shared = hasattr(prefix, "batch_repeat_interleave")
    longest = max((len(c) for c in continuations), default=0)
    vocab = int(model.config.vocab_size)
    for chunk in row_chunks(len(continuations), max(1, longest) * vocab * 2):
        batch = continuations[chunk]
        width = max(1, max(len(c) for c in batch))
        if shared:
            logits = _continuation_logits(model, key, prefix, prompt.size, batch, width, device)
        else:
            logits = _full_logits(model, prompt, batch, width, device)
        for row, cont in enumerate(batch):
            yield chunk.start + row, np.concatenate([first[None, :], logits[row]])[: len(cont)]


def _padded(batch: list[np.ndarray], width: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.zeros((len(batch), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, cont in enumerate(batch):
        used = cont[:width]  # the last token of a row is predicted, never fed
        ids[row, : len(used)] = used
        mask[row, : len(used)] = 1
    return ids, mask


def _continuation_logits(
    model: Any, key: str, prefix: Any, start: int, batch: list, width: int, device: Any
) -> np.ndarray:
    """Logits after tokens ``0..width-2`` of each row, on a copy of the prompt's cache."""
    torch = torch_module()
    if width < 2:
        return np.zeros((len(batch), 0, int(model.config.vocab_size)), dtype=np.float32)
    ids, mask = _padded(batch, width - 1)
    cache = copy.deepcopy(prefix)
    cache.batch_repeat_interleave(len(batch))
    full_mask = np.concatenate([np.ones((len(batch), start), dtype=np.int64), mask], axis=1)
    with torch.inference_mode():
        out = model(
            input_ids=torch.from_numpy(ids).to(device),
            attention_mask=torch.from_numpy(full_mask).to(device),
            use_cache=True,
            **{key: cache},
        )
    return out.logits.float().cpu().numpy()


def _full_logits(
    model: Any, prompt: np.ndarray, batch: list, width: int, device: Any
) -> np.ndarray:
    """Logits after tokens ``0..width-2`` of each row, the prompt run in every row."""
    torch = torch_module()
    ids, mask = _padded(batch, width)
    ids = np.concatenate([np.tile(prompt, (len(batch), 1)), ids], axis=1)
    mask = np.concatenate([np.ones((len(batch), prompt.size), dtype=np.int64), mask], axis=1)
    with torch.inference_mode():
        out = model(
            input_ids=torch.from_numpy(ids).to(device),
            attention_mask=torch.from_numpy(mask).to(device),
        )
    return out.logits[:, prompt.size : prompt.size + width - 1].float().cpu().numpy()
