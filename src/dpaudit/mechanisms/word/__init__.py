"""Word-level mechanisms (metric local DP over word embeddings), as published.

Importing the package registers them; build one with
:func:`dpaudit.mechanisms.registry.make_word_mechanism`.
"""

from dpaudit.mechanisms.word.base import (
    N_SPECIAL,
    EmbeddingWordMechanism,
    StringWordMechanism,
    WordMechanism,
    encode_outputs,
)

from dpaudit.mechanisms.word import nearest  # noqa: F401  isort: skip
from dpaudit.mechanisms.word import tem  # noqa: F401  isort: skip
from dpaudit.mechanisms.word import santext  # noqa: F401  isort: skip
from dpaudit.mechanisms.word import custext  # noqa: F401  isort: skip
from dpaudit.mechanisms.word import truncated_gumbel  # noqa: F401  isort: skip

__all__ = [
    "N_SPECIAL",
    "EmbeddingWordMechanism",
    "StringWordMechanism",
    "WordMechanism",
    "encode_outputs",
]
