"""A tiny causal LM whose outputs move with its input, for the rewriter tests (extra lm).

The seed-0 tiny model's weights are small: its greedy output is "." whatever the document,
and its logits stay inside any clip.  With every weight redrawn from N(0, 1) its argmax
moves with the document, its softmaxes are close to one-hot and its logits lie far outside
a clip range, so exact losses come near their analytic worst cases.
"""

from __future__ import annotations

from typing import Any


def lively_causal(seed: int = 0) -> Any:
    """The tiny Llama of :func:`dpaudit.text.models.tiny_model` with N(0, 1) weights."""
    import torch

    from dpaudit.text.models import tiny_model

    loaded = tiny_model("causal", seed=0)
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for weight in loaded.model.parameters():
            weight.copy_(torch.randn(weight.shape, generator=generator))
    return loaded
