"""A causal language model whose logits are known in closed form, for testing rewriters.

The logits predicting position ``i`` are ``Σ_{j ≤ i} W[ids_j]``: a running sum
of one row of ``W`` per token seen so far.  Every distribution a rewriter
draws from is therefore a short numpy expression, independent of the
transformer code paths, and a pair of documents can be built whose first
token's loss reaches the exponential mechanism's worst case.  The model speaks
the Hugging Face interface the rewriters use (``config.vocab_size``;
``forward(input_ids, attention_mask, use_cache, cache)`` returning ``logits``
and ``cache``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np


@dataclass
class ToyTokenizer:
    """Whitespace tokenizer over a fixed word list; id 0 is the end-of-sequence token."""

    words: tuple[str, ...]
    eos_token_id: int = 0
    chat_template: None = None
    _index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._index = {w: i for i, w in enumerate(self.words)}

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        unknown = [w for w in text.split() if w not in self._index]
        if unknown:
            raise ValueError(f"toy tokenizer: unknown words {unknown}")
        return {"input_ids": [self._index[w] for w in text.split()]}

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return " ".join(
            self.words[i] for i in ids if not (skip_special_tokens and i == self.eos_token_id)
        )


class ToyCausalLM:
    """Logits at position ``i`` are ``Σ_{j ≤ i} W[ids_j]`` (a PyTorch module in behaviour only)."""

    def __init__(self, weights: np.ndarray) -> None:
        import torch  # only here and in forward: the model stays picklable

        self.weights = torch.as_tensor(np.asarray(weights, dtype=np.float32))
        self.config = SimpleNamespace(vocab_size=int(self.weights.shape[1]))

    def forward(
        self,
        input_ids: Any,
        attention_mask: Any = None,
        use_cache: bool = False,
        cache: Any = None,
        logits_to_keep: int = 0,
    ) -> Any:
        import torch

        rows = self.weights[input_ids]  # (batch, length, vocab)
        if attention_mask is not None:
            mask = attention_mask[:, -input_ids.shape[1] :].to(rows.dtype)
            rows = rows * mask[..., None]
        logits = torch.cumsum(rows, dim=1)
        if cache is not None:
            logits = logits + cache[:, None, :]
        return SimpleNamespace(logits=logits, cache=logits[:, -1, :].clone(), past_key_values=None)

    __call__ = forward

    def eval(self) -> ToyCausalLM:
        return self


def toy_model(weights: np.ndarray, words: tuple[str, ...]) -> SimpleNamespace:
    """A loaded model (``.model``, ``.tokenizer``, ``.source``) around :class:`ToyCausalLM`."""
    if weights.shape != (len(words), len(words)):
        raise ValueError("weights must be a square matrix over the word list")
    return SimpleNamespace(
        model=ToyCausalLM(weights), tokenizer=ToyTokenizer(words), source="toy closed-form LM"
    )
