"""TEMPORARY alias of :mod:`dpaudit.analysis.word_embedding` (moved); removed before the merge."""

from dpaudit.analysis.word_embedding import *  # noqa: F403
from dpaudit.analysis.word_embedding import WordEmbedding, glove_embedding  # noqa: F401
