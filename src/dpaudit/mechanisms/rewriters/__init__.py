"""Text rewriters built on language models, as published, with the decoding their code uses.

* :mod:`~dpaudit.mechanisms.rewriters.decoding`: logits → per-token distribution.
* :mod:`~dpaudit.mechanisms.rewriters.claim`: ε per token, word or document.
* :mod:`~dpaudit.mechanisms.rewriters.causal`: DP-Prompt and DP-Paraphrase.
"""

from dpaudit.mechanisms.rewriters.causal import CausalRewriter, dp_paraphrase, dp_prompt
from dpaudit.mechanisms.rewriters.claim import Neighbours, TextClaim, Unit
from dpaudit.mechanisms.rewriters.decoding import Decoding, exponential_decoding, process_logits

__all__ = [
    "CausalRewriter",
    "Decoding",
    "Neighbours",
    "TextClaim",
    "Unit",
    "dp_paraphrase",
    "dp_prompt",
    "exponential_decoding",
    "process_logits",
]
