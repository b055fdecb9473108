"""Language models for the LM-based rewriters: loading (offline) and tiny random test models."""

from dpaudit.text.models.loading import (
    DEFAULT_NAMES,
    KINDS,
    LMDependencyError,
    LoadedModel,
    load_model,
    models_cache_root,
    smollm2_gguf,
)
from dpaudit.text.models.tiny import WORDS, tiny_model, word_tokenizer

__all__ = [
    "DEFAULT_NAMES",
    "KINDS",
    "WORDS",
    "LMDependencyError",
    "LoadedModel",
    "load_model",
    "models_cache_root",
    "smollm2_gguf",
    "tiny_model",
    "word_tokenizer",
]
