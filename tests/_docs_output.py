"""The output a documentation page shows, and its comparison with the real output.

A page shows an example's output in a ```` ```text ```` block: it is the output of
the nearest code block before it (a ```` ```python ```` block: what that block
prints; a shell block: what its commands write to stdout, in order).  The
comparison is the one a careful reader makes:

* ``...`` in the shown text stands for any text, on one line or across lines
  (doctest's ELLIPSIS), so a page can leave out what does not matter;
* every other character must match, except that a run of white space matches
  any run of white space (or none, beside ``...``), and trailing blanks are ignored;
* a number is compared at the precision shown: ``1.97`` matches a real
  ``1.97124`` (rounded to the two decimals shown, it is 1.97) but not
  ``1.98``; ``52884`` matches only ``52884``;
* a block marked ``<!-- output: approximate REASON -->`` (sample sizes fitted to
  a time budget, timings) must match in every word, while its numbers may
  differ; REASON says why;
* a block marked ``<!-- output: unchecked REASON -->`` belongs to an example no
  test can run (REASON says why); any other output block must follow an
  example the tests run, so nothing shown as output is silently unchecked.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_FENCE = re.compile(r"(<!-- ?([\w-]+):? ?((?:(?!-->).)*?) ?-->\s*)?```(\w*)\n(.*?)```", re.S)
_NUMBER = r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_TOKENS = re.compile(rf"(\.\.\.|{_NUMBER}|\s+)")
SHELL = ("bash", "console", "sh")


@dataclass(frozen=True)
class Fence:
    """One fenced block of a page: its language, code and the marker just before it."""

    lang: str
    code: str
    mark: str  # "" when unmarked; else the marker's name (not-run, slow, file, output, no-run)
    reason: str


@dataclass(frozen=True)
class Shown:
    """An output block: the text a page shows, and how strictly it is compared."""

    text: str
    mode: str  # "exact", "approximate" or "unchecked"
    reason: str


def fences(page_text: str) -> list[Fence]:
    """Every fenced block of a page, in order, with the marker that precedes it."""
    return [
        Fence(lang, code, mark or "", reason.strip())
        for _, mark, reason, lang, code in _FENCE.findall(page_text)
    ]


def shown_after(blocks: list[Fence], index: int) -> Shown | None:
    """The output block that directly follows block ``index`` (none if the next is code)."""
    if index + 1 >= len(blocks) or blocks[index + 1].lang != "text":
        return None
    block = blocks[index + 1]
    if block.mark == "output":
        mode, _, reason = block.reason.partition(" ")
        return Shown(block.code, mode, reason.strip())
    return Shown(block.code, "exact", "")


def _clean(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _pattern(shown: str) -> tuple[re.Pattern[str], list[str]]:
    """A regex for the shown text (numbers captured) and the shown numbers in order."""
    regex, numbers = [], []
    tokens = [t for t in _TOKENS.split(_clean(shown)) if t]
    for k, token in enumerate(tokens):
        beside_ellipsis = "..." in tokens[max(k - 1, 0) : k + 2]
        if token == "...":
            regex.append(".*?")
        elif token.isspace():
            regex.append(r"\s*" if beside_ellipsis else r"\s+")
        elif re.fullmatch(_NUMBER, token):
            regex.append(f"({_NUMBER})")
            numbers.append(token)
        else:
            regex.append(re.escape(token))
    return re.compile("".join(regex), re.S), numbers


def _same_at_shown_precision(shown: str, real: str) -> bool:
    """Is ``real`` equal to ``shown`` when rounded to the digits ``shown`` has?"""
    mantissa, _, exponent = shown.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    unit = 10.0 ** (int(exponent or 0) - decimals)
    return abs(float(real) - float(shown)) <= 0.5 * unit * (1 + 1e-9)


def mismatch(shown: Shown, real: str) -> str | None:
    """Why the real output does not match the shown one, or ``None`` when it does."""
    pattern, numbers = _pattern(shown.text)
    found = pattern.fullmatch(_clean(real))
    diff = "\n".join(
        difflib.unified_diff(
            _clean(shown.text).splitlines(), _clean(real).splitlines(), "shown", "real", lineterm=""
        )
    )
    if found is None:
        return f"the words differ:\n{diff}"
    if shown.mode == "approximate":
        return None
    wrong = [
        f"{s} (real {r})"
        for s, r in zip(numbers, found.groups(), strict=True)
        if not _same_at_shown_precision(s, r)
    ]
    return f"numbers differ at the precision shown: {wrong}\n{diff}" if wrong else None
