"""Typed input domains and their neighbour relations, as part of a privacy claim.

:class:`dpaudit.claims.InputDomain` describes a float/integer box whose points are
all neighbours (local DP).  Foreign code takes other inputs: an int, a bool, a
category, a word, a vector of these, or a *dataset* (a list of records) whose
neighbours differ by adding/removing one record or replacing one.  Each domain
here is an immutable value that

* ``validate(value, name)`` — returns the value or raises naming ``name`` and the
  allowed values;
* ``candidate_pairs()`` — neighbouring pairs *inside the domain* an auditor should
  try (extremes, StatDP/DP-Sniper patterns and their reflections);
* ``index_points()`` — a tuple of values any two of which are neighbours; the
  black-box auditor sees the integer index ``0..K-1`` of these points (see
  :class:`dpaudit.adapters.callable.FunctionMechanism`).

String syntax (:func:`parse_domain`, for ``--domain``)::

    real:LOW..HIGH[xDIM]     real box, e.g. real:0..1x5
    int:LOW..HIGH            integers LOW..HIGH
    bool                     False / True
    cat:a,b,c                one of the listed categories
    str:alice,bob            a word of the vocabulary
    vec:N:ELEMENT            N coordinates of ELEMENT, e.g. vec:3:int:0..9
    dataset:ELEMENT,max=M,neighbours=add-remove|replace-one

Values (:func:`parse_value`): JSON when it parses (``3``, ``true``, ``[1, 2]``),
else the plain text (a category or word).  A pair is ``A|B`` (:func:`parse_pair`).
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

from dpaudit.errors import InvalidArgumentError

#: At most this many categories get every pair; larger sets get a spread.
ALL_PAIRS_UP_TO = 8


def _dedupe(pairs: list[tuple[Any, Any]]) -> tuple[tuple[Any, Any], ...]:
    seen: set[str] = set()
    out: list[tuple[Any, Any]] = []
    for a, b in pairs:
        key = json.dumps([a, b], sort_keys=True, default=str)
        if a != b and key not in seen:
            seen.add(key)
            out.append((a, b))
    return tuple(out)


def _unique(values: list[Any]) -> tuple[Any, ...]:
    seen: set[str] = set()
    out: list[Any] = []
    for v in values:
        key = json.dumps(v, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return tuple(out)


def box_patterns(
    low: float, high: float, dim: int, mid: float | None = None
) -> list[tuple[str, list[float], list[float]]]:
    """StatDP/DP-Sniper input patterns *placed inside* ``[low, high]^dim``, named.

    StatDP's patterns (Ding et al., CCS 2018, §4.3; DP-Sniper, Bichsel et al.,
    S&P 2021, §6) are a base input and a copy with some entries raised and some
    lowered by the sensitivity: "first raised", "first raised, rest lowered",
    "half raised, half lowered", "all raised" (and their lowered twins).  Each is a
    sign vector ``s ∈ {−1, 0, +1}^dim``.  Clipping DP-Sniper's literal pairs (base 1,
    steps ±1) to a box loses most of them; here every shape is placed inside it:

    * *full steps*: a moving entry goes from one face to the other (``s = +1``:
      ``low → high``, ``−1``: ``high → low``) and a still entry sits at ``low``, the
      midpoint or ``high``.  DP-Sniper's best pair for ReportNoisyMax1,
      ``(1,1,1,1,1)/(0,2,2,2,2)``, has steps ``(−1,+1,+1,+1,+1)``: in the unit box
      it is ``(1,0,0,0,0)/(0,1,1,1,1)``;
    * *half steps*: the base is the midpoint and a moving entry steps to a face,
      for ``s`` and ``−s`` — the reflection of the pair through the box's centre.

    A pair and its swap are the same pair to the black-box audit (it scores both
    orientations), so ``s`` and ``−s`` of a full step are one pair.  ``mid`` is the
    still value (default the midpoint; integer domains pass it rounded).
    """
    lo, hi = float(low), float(high)
    centre = (lo + hi) / 2 if mid is None else float(mid)
    half = dim // 2
    shapes = [("first", [1] + [0] * (dim - 1))]
    if dim > 1:
        shapes += [
            ("first raised, rest lowered", [1] + [-1] * (dim - 1)),
            ("half raised, half lowered", [1] * max(half, 1) + [-1] * (dim - max(half, 1))),
            ("all", [1] * dim),
        ]

    out: list[tuple[str, list[float], list[float]]] = []
    for name, signs in shapes:
        bases = (("", lo),) if 0 not in signs else (("low", lo), ("mid", centre), ("high", hi))
        for where, base in bases:
            x = [base if s == 0 else (lo if s > 0 else hi) for s in signs]
            xp = [base if s == 0 else (hi if s > 0 else lo) for s in signs]
            label = f"{name} moves face to face" + (f", rest at {where}" if where else "")
            out.append((label, x, xp))
    for name, signs in shapes:
        for sign, word in ((1, "up"), (-1, "down")):
            xp = [centre if s == 0 else (hi if sign * s > 0 else lo) for s in signs]
            out.append((f"{name} steps {word} from the centre", [centre] * dim, xp))
    return out


@dataclass(frozen=True)
class RealBox:
    """Real vectors in ``[low, high]^dim`` (given to the function as a list of floats)."""

    low: float = 0.0
    high: float = 1.0
    dim: int = 1

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high) and self.low < self.high):
            raise InvalidArgumentError("domain", (self.low, self.high), "finite LOW < HIGH")
        if not isinstance(self.dim, int) or self.dim < 1:
            raise InvalidArgumentError("dim", self.dim, "an integer ≥ 1")

    def describe(self) -> str:
        return f"[{self.low:g}, {self.high:g}]^{self.dim}"

    def validate(self, value: Any, name: str = "x") -> list[float]:
        seq = [value] if isinstance(value, (int, float)) and self.dim == 1 else value
        try:
            vals = [float(v) for v in seq]
        except (TypeError, ValueError):
            raise InvalidArgumentError(
                name, value, f"{self.dim} numbers in {self.describe()}"
            ) from None
        if len(vals) != self.dim or any(not self.low <= v <= self.high for v in vals):
            raise InvalidArgumentError(name, value, f"{self.dim} numbers in {self.describe()}")
        return vals

    def candidate_pairs(self) -> tuple[tuple[Any, Any], ...]:
        """StatDP/DP-Sniper patterns placed inside the box, with their reflections."""
        return _dedupe([(a, b) for _, a, b in box_patterns(self.low, self.high, self.dim)])

    def index_points(self) -> tuple[Any, ...]:
        return _unique([v for p in self.candidate_pairs() for v in p])


@dataclass(frozen=True)
class IntRange:
    """Integers ``low..high`` inclusive."""

    low: int
    high: int

    def __post_init__(self) -> None:
        ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (self.low, self.high))
        if not ok or not self.low < self.high:
            raise InvalidArgumentError("domain", (self.low, self.high), "integers LOW < HIGH")

    def describe(self) -> str:
        return f"{{{self.low}..{self.high}}}"

    def validate(self, value: Any, name: str = "x") -> int:
        if isinstance(value, bool) or (not isinstance(value, int) and not _is_integral(value)):
            raise InvalidArgumentError(name, value, f"an integer in {self.describe()}")
        v = int(value)
        if not self.low <= v <= self.high:
            raise InvalidArgumentError(name, value, f"an integer in {self.describe()}")
        return v

    def candidate_pairs(self) -> tuple[tuple[Any, Any], ...]:
        lo, hi = self.low, self.high
        mid = (lo + hi) // 2
        return _dedupe([(lo, hi), (lo, lo + 1), (hi - 1, hi), (mid, mid + 1), (lo, mid)])

    def index_points(self) -> tuple[Any, ...]:
        return _unique([v for p in self.candidate_pairs() for v in p])


def _is_integral(value: Any) -> bool:
    try:
        return float(value) == int(value)
    except (TypeError, ValueError, OverflowError):
        return False


@dataclass(frozen=True)
class Categories:
    """One of finitely many values (strings, numbers, booleans...)."""

    values: tuple[Any, ...]
    kind: str = "category"

    def __post_init__(self) -> None:
        vals = tuple(self.values)
        object.__setattr__(self, "values", vals)
        if len(vals) < 2 or len(_unique(list(vals))) != len(vals):
            raise InvalidArgumentError("domain", vals, f"at least two distinct {self.kind} values")

    def describe(self) -> str:
        head = ", ".join(repr(v) for v in self.values[:6])
        return f"{self.kind} in {{{head}{', ...' if len(self.values) > 6 else ''}}}"

    def validate(self, value: Any, name: str = "x") -> Any:
        if not any(value == v and type(value) is type(v) for v in self.values):
            raise InvalidArgumentError(name, value, f"a {self.describe()}")
        return value

    def candidate_pairs(self) -> tuple[tuple[Any, Any], ...]:
        """Every pair for a few values; else each value against the first and its successor."""
        v = self.values
        if len(v) <= ALL_PAIRS_UP_TO:
            return _dedupe([(v[i], v[j]) for i in range(len(v)) for j in range(i + 1, len(v))])
        return _dedupe([(v[0], w) for w in v[1:]] + list(itertools.pairwise(v)))

    def index_points(self) -> tuple[Any, ...]:
        return self.values


def Boolean() -> Categories:  # noqa: N802 - reads as a type in a claim
    """``False`` / ``True``."""
    return Categories((False, True), kind="boolean")


def Words(vocabulary: tuple[str, ...] | list[str]) -> Categories:  # noqa: N802
    """A word (string) from ``vocabulary``."""
    vocab = tuple(vocabulary)
    if not all(isinstance(w, str) for w in vocab):
        raise InvalidArgumentError("vocabulary", vocab, "strings")
    return Categories(vocab, kind="word")


@dataclass(frozen=True)
class Vector:
    """``length`` coordinates, each in ``element`` (a list); all vectors are neighbours."""

    element: Any
    length: int

    def __post_init__(self) -> None:
        if not isinstance(self.length, int) or self.length < 1:
            raise InvalidArgumentError("length", self.length, "an integer ≥ 1")

    def describe(self) -> str:
        return f"({self.element.describe()})^{self.length}"

    def validate(self, value: Any, name: str = "x") -> list[Any]:
        if not isinstance(value, (list, tuple)) or len(value) != self.length:
            raise InvalidArgumentError(name, value, f"a list of {self.length} values")
        return [self.element.validate(v, f"{name}[{i}]") for i, v in enumerate(value)]

    def candidate_pairs(self) -> tuple[tuple[Any, Any], ...]:
        """Element extremes ``a, b`` in StatDP patterns and reflections: (b,a,a..) vs (a,b,b..)."""
        a, b = self.element.candidate_pairs()[0]
        n = self.length

        def vec(head: Any, rest: Any) -> list[Any]:
            return [head] + [rest] * (n - 1)

        return _dedupe(
            [(vec(a, a), vec(b, b)), (vec(b, a), vec(a, a)), (vec(b, a), vec(a, b)),
             (vec(a, b), vec(b, a))]
        )  # fmt: skip

    def index_points(self) -> tuple[Any, ...]:
        return _unique([v for p in self.candidate_pairs() for v in p])


NEIGHBOURS = ("add-remove", "replace-one")


@dataclass(frozen=True)
class Dataset:
    """Lists of at most ``max_size`` records of ``record``; neighbours by ``neighbours``.

    ``add-remove``: one list is the other with one record added; ``replace-one``:
    equal lengths, exactly one position differs.
    """

    record: Any
    max_size: int = 20
    neighbours: str = "add-remove"

    def __post_init__(self) -> None:
        if not isinstance(self.max_size, int) or self.max_size < 1:
            raise InvalidArgumentError("max", self.max_size, "an integer ≥ 1")
        if self.neighbours not in NEIGHBOURS:
            raise InvalidArgumentError("neighbours", self.neighbours, " or ".join(NEIGHBOURS))

    def describe(self) -> str:
        return (
            f"datasets of ≤ {self.max_size} records in {self.record.describe()}, "
            f"{self.neighbours} neighbours"
        )

    def validate(self, value: Any, name: str = "x") -> list[Any]:
        if not isinstance(value, (list, tuple)) or len(value) > self.max_size:
            raise InvalidArgumentError(name, value, f"a list of ≤ {self.max_size} records")
        return [self.record.validate(v, f"{name}[{i}]") for i, v in enumerate(value)]

    def are_neighbours(self, d1: list[Any], d2: list[Any]) -> bool:
        """True when ``d1`` and ``d2`` are neighbours under this domain's relation."""
        if self.neighbours == "replace-one":
            return len(d1) == len(d2) and sum(a != b for a, b in zip(d1, d2, strict=True)) == 1
        small, big = sorted((list(d1), list(d2)), key=len)
        if len(big) != len(small) + 1:
            return False
        return any(big[:i] + big[i + 1 :] == small for i in range(len(big)))

    def _base(self) -> tuple[Any, Any, list[Any]]:
        a, b = self.record.candidate_pairs()[0]
        return a, b, [a] * ((self.max_size - 1) // 2)

    def candidate_pairs(self) -> tuple[tuple[Any, Any], ...]:
        """Neighbouring datasets an auditor should try (the first is the small-base pair).

        With ``a, b`` the record's first candidate pair (its extremes), a small base
        of ``⌊(max−1)/2⌋`` copies of ``a`` and "full" datasets of ``max−1`` copies of
        one extreme:

        * add-remove — add ``b`` or ``a`` to the base; add each of the record's
          first four points to the empty dataset; remove from a full dataset its
          last record, the other extreme or the same one (a count and a sum
          mechanism have different worst pairs);
        * replace-one — replace ``r₁`` by ``r₂`` for each of the record's first
          three candidate pairs, alone and after the base; replace the last record
          of a full dataset by the other extreme.
        """
        recs = self.record.candidate_pairs()
        a, b, base = self._base()
        full_a, full_b = [a] * (self.max_size - 1), [b] * (self.max_size - 1)
        if self.neighbours == "replace-one":
            pairs = []
            for r1, r2 in recs[:3]:
                pairs += [([*base, r1], [*base, r2]), ([r1], [r2])]
            pairs += [([*full_b, b], [*full_b, a]), ([*full_a, a], [*full_a, b])]
        else:
            points = _unique([v for p in recs for v in p])[:4]
            pairs = [(base, [*base, b]), (base, [*base, a])]
            pairs += [([], [r]) for r in points]
            pairs += [(full_b, [*full_b, a]), (full_a, [*full_a, b])]
            pairs += [(full_a, [*full_a, a]), (full_b, [*full_b, b])]
        return _dedupe(pairs)

    def design_pairs(self, limit: int = 64) -> tuple[tuple[Any, Any], ...]:
        """Neighbouring datasets that sweep the record domain, for the input design to screen.

        The small base of :meth:`candidate_pairs` with one record ``r`` added (add-remove)
        or its last record replaced by ``r`` (replace-one), for ``r`` over
        :func:`record_design` (every integer or category up to ``limit``, else values
        spread over the range with its boundaries): a leak at one interior record value
        is visited.
        """
        a, _b, base = self._base()
        records = record_design(self.record, limit)
        if self.neighbours == "replace-one":
            pairs = [([*base, a], [*base, r]) for r in records if r != a]
        else:
            pairs = [(base, [*base, r]) for r in records]
        return _dedupe(pairs)[:limit]

    def index_points(self) -> tuple[Any, ...]:
        """Replace-one: the base plus one record of each record point (any two neighbours);
        add-remove: only the first candidate pair (a third dataset would not be a
        neighbour of both)."""
        _a, _b, base = self._base()
        if self.neighbours == "replace-one":
            return tuple([*base, r] for r in self.record.index_points())
        return self.candidate_pairs()[0]


TypedDomain = RealBox | IntRange | Categories | Vector | Dataset


def record_design(record: Any, limit: int) -> tuple[Any, ...]:
    """Records spread over a record domain: its candidate points, then every value of a
    small integer range or category set, else ``limit`` evenly spaced values of a range
    (integers rounded) including both ends; a vector's candidate points only."""
    points = list(record.index_points())
    if isinstance(record, IntRange):
        if record.high - record.low + 1 <= limit:
            points += list(range(record.low, record.high + 1))
        else:
            step = (record.high - record.low) / (limit - 1)
            points += [round(record.low + k * step) for k in range(limit)]
    elif isinstance(record, Categories):
        points += list(record.values[:limit])
    elif isinstance(record, RealBox) and record.dim == 1:
        step = (record.high - record.low) / (limit - 1)
        points += [[record.low + k * step] for k in range(limit)]  # records are lists
    return _unique(points)[:limit]


def _range(text: str, arg: str) -> tuple[str, str]:
    lo, sep, hi = text.partition("..")
    if not sep:
        raise InvalidArgumentError(arg, text, "LOW..HIGH, e.g. 0..10")
    return lo.strip(), hi.strip()


#: The kinds of :func:`parse_domain`'s syntax (``bool`` takes no ``:``).
KINDS = ("real", "int", "bool", "cat", "str", "vec", "dataset")
#: The syntax in one line, for error messages.
SYNTAX = (
    "real:LOW..HIGH[xDIM], int:LOW..HIGH, bool, cat:a,b,c, str:w1,w2, vec:N:ELEMENT or "
    "dataset:ELEMENT,max=M,neighbours=add-remove|replace-one"
)


def is_typed(text: str) -> bool:
    """True when ``text`` is written in this module's syntax (not ``LOW,HIGH``)."""
    t = str(text).strip()
    return t == "bool" or (t.partition(":")[0].strip() in KINDS and ":" in t)


def parse_domain(text: str, arg: str = "--domain") -> TypedDomain:
    """Parse the syntax of this module's docstring; errors name ``arg``."""
    t = str(text).strip()
    kind, _, rest = t.partition(":")
    try:
        if kind == "bool" and not rest:
            return Boolean()
        if kind == "int":
            lo, hi = _range(rest, arg)
            return IntRange(int(lo), int(hi))
        if kind == "real":
            rng, _, dim = rest.partition("x")
            lo, hi = _range(rng, arg)
            return RealBox(float(lo), float(hi), int(dim) if dim else 1)
        if kind in ("cat", "str"):
            vals = [v.strip() for v in rest.split(",") if v.strip()]
            return Words(vals) if kind == "str" else Categories(tuple(vals))
        if kind == "vec":
            n, _, elem = rest.partition(":")
            return Vector(parse_domain(elem, arg), int(n))
        if kind == "dataset":
            return _parse_dataset(rest, text, arg)
    except InvalidArgumentError as exc:
        if exc.argument == arg:
            raise
        raise InvalidArgumentError(arg, text, f"{SYNTAX} ({exc})") from None
    except ValueError as exc:
        raise InvalidArgumentError(arg, text, f"{SYNTAX} ({exc})") from None
    raise InvalidArgumentError(arg, text, SYNTAX)


def _parse_dataset(rest: str, text: str, arg: str) -> Dataset:
    """``ELEMENT,max=M,neighbours=R``: options are peeled from the end (ELEMENT may hold commas)."""
    parts = rest.split(",")
    opts: dict[str, str] = {}
    while parts and "=" in parts[-1]:
        k, _, v = parts.pop().partition("=")
        opts[k.strip()] = v.strip()
    if set(opts) - {"max", "neighbours"}:
        raise InvalidArgumentError(arg, text, "options max=N and neighbours=add-remove|replace-one")
    return Dataset(
        parse_domain(",".join(parts), arg),
        int(opts.get("max", 20)),
        opts.get("neighbours", "add-remove"),
    )


def parse_value(domain: TypedDomain, text: str, name: str = "x") -> Any:
    """A value of ``domain`` from text: JSON when it parses and validates, else the text."""
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    try:
        return domain.validate(value, name)
    except InvalidArgumentError:
        if isinstance(value, str):
            raise
        return domain.validate(text, name)  # e.g. the category "1" given as text


def parse_pair(domain: TypedDomain, text: str, arg: str = "--pair") -> tuple[Any, Any]:
    """``A|B`` → two validated values; for datasets also checks they are neighbours."""
    left, sep, right = str(text).partition("|")
    if not sep:
        raise InvalidArgumentError(arg, text, "two values separated by '|', e.g. 0|1")
    try:
        a = parse_value(domain, left.strip(), "x")
        b = parse_value(domain, right.strip(), "x_prime")
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(
            arg, text, f"two values of {domain.describe()} as 'A|B' ({exc.argument}: {exc.allowed})"
        ) from None
    if isinstance(domain, Dataset) and not domain.are_neighbours(a, b):
        raise InvalidArgumentError(arg, text, f"two {domain.neighbours} neighbours")
    return a, b
