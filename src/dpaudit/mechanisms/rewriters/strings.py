"""Output strings numbered in order of first use: the vocabulary of a rewriter whose outputs
are whole strings (a released DP-MLM's cased words, a candidate set's sentences).

The numbers are local to the process that met the strings: a rewriter using a table says
so (``ids_are_local``), and its audit units stay in that process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class StringTable:
    """Output strings numbered in order of first use; ``decode`` as a tokenizer would."""

    strings: list[str] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)

    def add(self, text: str) -> int:
        """The number of ``text``, a new one at the end when it is new."""
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """The strings of ``ids`` joined by single spaces (a tokenizer's signature)."""
        return " ".join(self.strings[int(i)] for i in ids)

    def __len__(self) -> int:
        """How many strings are numbered."""
        return len(self.strings)


__all__ = ["StringTable"]
