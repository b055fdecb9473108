"""The rewriters by name, with the kind of language model each one needs.

Every name here is also a text mechanism of the one registry
(:func:`dpaudit.mechanisms.make_mechanism`, output kind ``"text"``), registered by the
path of its constructor below, so that listing the registry imports none of these modules.
Each constructor takes ``(model, epsilon, **params)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpaudit.errors import UnknownNameError
from dpaudit.mechanisms.rewriters.bart import dp_bart
from dpaudit.mechanisms.rewriters.causal import dp_decoding, dp_paraphrase, dp_prompt
from dpaudit.mechanisms.rewriters.masked import dp_mlm


def dp_mlm_capped(
    model: Any, epsilon: float, *, clip: tuple[float, float], max_new_tokens: int
) -> Any:
    """DP-MLM at ``epsilon`` per word (Meisenbacher et al. 2024, §3), called with the causal
    rewriters' keywords: one replacement token per word, so the cap on released units is the
    word count."""
    return dp_mlm(model, epsilon, clip=clip, max_words=max_new_tokens)


#: name → (model kind, constructor(model, epsilon, **params)).
REWRITERS: dict[str, tuple[str, Callable[..., Any]]] = {
    "dp-prompt": ("causal", dp_prompt),
    "dp-paraphrase": ("causal", dp_paraphrase),
    "dp-decoding": ("causal", dp_decoding),
    "dp-mlm": ("masked", dp_mlm_capped),
    "dp-bart": ("seq2seq", dp_bart),
}
#: Where the registry finds each constructor (``"module:function"``; a test keeps it equal).
FACTORY_PATHS: dict[str, str] = {
    name: f"{build.__module__}:{build.__name__}" for name, (_, build) in REWRITERS.items()
}


def rewriter_names() -> list[str]:
    """Every registered rewriter name."""
    return sorted(REWRITERS)


def model_kind(name: str) -> str:
    """``causal``, ``masked`` or ``seq2seq``: the model rewriter ``name`` runs on."""
    if name not in REWRITERS:
        raise UnknownNameError("rewriter", name, rewriter_names())
    return REWRITERS[name][0]


def make_rewriter(name: str, model: Any, epsilon: float, **params: Any) -> Any:
    """Rewriter ``name`` on ``model`` at ``epsilon`` (its unit: see the rewriter's claim)."""
    if name not in REWRITERS:
        raise UnknownNameError("rewriter", name, rewriter_names())
    return REWRITERS[name][1](model, epsilon, **params)
