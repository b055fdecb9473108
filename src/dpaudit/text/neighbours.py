"""Neighbouring documents that matter when auditing a rewriter.

A rewriter's claim covers "any two documents", "documents of equal length" or
"documents one word apart" (:class:`~dpaudit.claims.text.Neighbours`).
The pairs below are the ones a reviewer tries first: the change a user would
want hidden (a sentiment word, a name), the smallest possible change (a
stopword, a full stop), a change of length, and a document with nothing to
rewrite.  Each pair carries its origin in words, for the witness.
"""

from __future__ import annotations

import re

from dpaudit.errors import InvalidArgumentError

# Small closed lists: the audit needs a handful of meaningful swaps, not a thesaurus.
SWAPS = {
    "good": "bad", "bad": "good", "great": "terrible", "terrible": "great", "love": "hate",
    "hate": "love", "loved": "hated", "hated": "loved", "best": "worst", "worst": "best",
    "excellent": "awful", "awful": "excellent", "nice": "poor", "poor": "nice",
    "recommend": "avoid", "happy": "unhappy", "not": "very",
}  # fmt: skip
NAMES = {"John": "Maria", "Maria": "John", "Alice": "Bob", "Bob": "Alice", "Anna": "Peter"}
STOPWORDS = {"the": "a", "a": "the", "an": "the", "this": "that", "that": "this", "is": "was"}
NEUTRAL_WORD = "something"
PAIR_KINDS = ("one_word", "stopword", "punctuation", "name", "length", "nothing_to_rewrite")
#: The document a rewriter audit starts from when none is given (``dpaudit audit-rewriter``,
#: ``dpaudit.audit`` on a rewriter), and the neighbour kinds built from it.
DEFAULT_DOCUMENT = "I loved this movie, the acting was good and John was great."
DEFAULT_PAIR_KINDS = ("one_word", "length")


def _replace_word(words: list[str], index: int, new: str) -> str:
    out = list(words)
    out[index] = new
    return " ".join(out)


def one_word_pair(document: str) -> tuple[str, str, str]:
    """Swap the first sentiment-bearing word (or replace the last content word)."""
    words = document.split()
    for i, w in enumerate(words):
        key = w.lower().strip(".,!?")
        if key in SWAPS:
            new = w.lower().replace(key, SWAPS[key])
            return document, _replace_word(words, i, new), f"one word: {w!r} → {new!r}"
    i = max(range(len(words)), key=lambda j: len(words[j]))
    return (
        document,
        _replace_word(words, i, NEUTRAL_WORD),
        f"one word: {words[i]!r} → {NEUTRAL_WORD!r}",
    )


def stopword_pair(document: str) -> tuple[str, str, str] | None:
    """Change one stopword (``the`` → ``a``, ...), or ``None`` when there is none."""
    words = document.split()
    for i, w in enumerate(words):
        if w.lower() in STOPWORDS:
            new = STOPWORDS[w.lower()]
            return document, _replace_word(words, i, new), f"stopword: {w!r} → {new!r}"
    return None


def punctuation_pair(document: str) -> tuple[str, str, str]:
    """Add or remove the final full stop."""
    if document.rstrip().endswith("."):
        return document, document.rstrip()[:-1].rstrip(), "punctuation: final '.' removed"
    return document, document.rstrip() + ".", "punctuation: final '.' added"


def name_pair(document: str) -> tuple[str, str, str] | None:
    """Swap a known first name, or ``None`` when the document names nobody we know."""
    for old, new in NAMES.items():
        if re.search(rf"\b{old}\b", document):
            return document, re.sub(rf"\b{old}\b", new, document), f"name: {old} → {new}"
    return None


def length_pair(document: str) -> tuple[str, str, str] | None:
    """Drop the last word (documents of different lengths), or ``None`` for one word."""
    words = document.split()
    if len(words) < 2:
        return None
    return document, " ".join(words[:-1]), f"length: last word {words[-1]!r} dropped"


def nothing_to_rewrite_pair(document: str) -> tuple[str, str, str]:
    """The document against a single full stop: an input with nothing to rewrite."""
    return document, ".", "nothing to rewrite: the document against '.'"


def neighbour_pairs(
    document: str, kinds: tuple[str, ...] = PAIR_KINDS
) -> list[tuple[str, str, str]]:
    """The pairs of ``kinds`` that apply to ``document``, as ``(x, x', origin)``."""
    if not isinstance(document, str) or not document.split():
        raise InvalidArgumentError("document", document, "a non-empty string")
    unknown = set(kinds) - set(PAIR_KINDS)
    if unknown:
        raise InvalidArgumentError("kinds", sorted(unknown), f"names from {PAIR_KINDS}")
    makers = {
        "one_word": one_word_pair,
        "stopword": stopword_pair,
        "punctuation": punctuation_pair,
        "name": name_pair,
        "length": length_pair,
        "nothing_to_rewrite": nothing_to_rewrite_pair,
    }
    pairs = [makers[k](document) for k in kinds]
    return [p for p in pairs if p is not None and p[0] != p[1]]
