"""Candidate input pairs ``(x, x')`` for the black-box audit.

In local DP any two inputs of the domain are neighbours, so the auditor is free
to pick the pair; a good pair is one whose outputs are easy to tell apart.  We
generate a small set of structured pairs:

* **DP-Sniper / StatDP patterns** (Ding et al., CCS 2018, §4.3; reused by
  Bichsel et al., S&P 2021, §6): a base input of all ones against variants with
  the first coordinate raised (2) or lowered (0), "one raised, rest lowered",
  "one lowered, rest raised", "half raised, half lowered", all raised, all
  lowered, and the "X" pair ``(1..1 0..0, 0..0 1..1)``; values are clipped to
  the domain.  DP-Sniper also uses every pair swapped.
* **Box patterns** (dpaudit mode; :func:`dpaudit.domains.box_patterns`, the same
  generator typed real boxes use): the same shapes *placed inside* the box —
  moving entries going face to face, with still entries at the low face, the
  midpoint or the high face, and stepping from the midpoint to the faces in both
  directions (the reflections through the centre).  The opposite corners (largest
  distance in every norm — the worst case of additive-noise mechanisms) are the
  "all" shape; DP-Sniper's best ReportNoisyMax1 pair ``(1,1,1,1,1)/(0,2,2,2,2)``
  is ``(1,0,0,0,0)/(0,1,1,1,1)`` in the unit box.
* **Unbounded domains** (ADePT clips arbitrary real vectors): a finite box of
  radius ``R = Δ/2`` taken from the sensitivity the claim assumes (the diameter
  its calibration covers), plus the diagonal pair ``±R/√n·1`` (largest L1
  distance inside an L2 ball of radius R: ADePT's worst case, EMNLP 2021 App. B)
  and ``±R·e₁``.
* **Integer (categorical) domains**: pairs of distinct categories (all of them
  for up to 6 categories, otherwise first/second/middle/last).

The black-box attack scores both directions of every pair, so in ``dpaudit``
mode pairs are deduplicated without regard to order; ``dpsniper`` mode keeps
DP-Sniper's ordered pairs (its attack is one-directional).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from dpaudit.claims import InputDomain
from dpaudit.domains import box_patterns
from dpaudit.errors import DPAuditError, InvalidArgumentError
from dpaudit.mechanisms.base import Mechanism

#: Categorical domains with at most this many categories use every pair.
ALL_PAIRS_CATEGORIES = 6


@dataclass(frozen=True)
class InputPair:
    """Two inputs of a mechanism (flattened to tuples) and where the pair came from."""

    x: tuple[float, ...]
    x_prime: tuple[float, ...]
    origin: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", tuple(float(v) for v in np.ravel(self.x)))
        object.__setattr__(self, "x_prime", tuple(float(v) for v in np.ravel(self.x_prime)))

    def arrays(self, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Both inputs as float64 arrays of the mechanism's input shape."""
        return (
            np.asarray(self.x, dtype=np.float64).reshape(shape),
            np.asarray(self.x_prime, dtype=np.float64).reshape(shape),
        )

    def swapped(self) -> InputPair:
        """The same pair in the other order."""
        return InputPair(self.x_prime, self.x, f"{self.origin} (swapped)")


# ------------------------------------------------------------------ pattern shapes
def statdp_patterns(
    n: int, base: float, up: float, down: float
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """StatDP/DP-Sniper pattern shapes on ``n`` coordinates (Ding et al. 2018, §4.3).

    ``base`` is the value of every coordinate of the first input; ``up``/``down``
    the raised/lowered values.  DP-Sniper uses ``base, up, down = 1, 2, 0``.
    """
    half = n // 2
    b = np.full(n, base, dtype=np.float64)

    def vec(head: float, rest: float) -> np.ndarray:
        return np.array([head] + [rest] * (n - 1), dtype=np.float64)

    return [
        ("first lowered", b, vec(down, base)),
        ("first raised", b, vec(up, base)),
        ("first raised, rest lowered", b, vec(up, down)),
        ("first lowered, rest raised", b, vec(down, up)),
        ("half raised, half lowered", b, np.array([up] * half + [down] * (n - half))),
        ("all raised", b, np.full(n, up)),
        ("all lowered", b, np.full(n, down)),
        (
            "X shape",
            np.array([base] * half + [down] * (n - half)),
            np.array([down] * half + [base] * (n - half)),
        ),
    ]


def _clip_pairs(
    shapes: list[tuple[str, np.ndarray, np.ndarray]], low: float, high: float, prefix: str
) -> list[InputPair]:
    return [
        InputPair(np.clip(a, low, high), np.clip(b, low, high), f"{prefix}: {name}")
        for name, a, b in shapes
    ]


def dpsniper_pairs(domain: InputDomain) -> list[InputPair]:
    """DP-Sniper's ordered pairs: StatDP patterns on base 1 with steps ±1, clipped, and swapped."""
    pairs = _clip_pairs(
        statdp_patterns(domain.size, 1.0, 2.0, 0.0), domain.low, domain.high, "dp-sniper pattern"
    )
    out: list[InputPair] = []
    for p in pairs:
        out.extend([p, p.swapped()])
    return dedupe(out, ordered=True)


def pattern_box(domain: InputDomain, radius: float | None = None) -> tuple[float, float, float]:
    """``(low, high, mid)`` of the box patterns are placed in (and the pair search moves in).

    The domain's own box, or ``[−radius, radius]`` cut to it when it is unbounded;
    ``mid`` is rounded down on an integer domain.
    """
    if domain.bounded:
        low, high = float(domain.low), float(domain.high)
    else:
        r = 1.0 if radius is None else float(radius)
        low = max(domain.low, -r)
        high = min(domain.high, r)
    mid = (low + high) / 2.0
    if domain.integer:
        mid = math.floor(mid)
    return low, high, mid


def box_pairs(domain: InputDomain, radius: float | None = None) -> list[InputPair]:
    """StatDP patterns placed inside the box (or ``[−radius, radius]`` if unbounded).

    One pattern generator for typed and plain boxes:
    :func:`dpaudit.domains.box_patterns` — every shape with its moving entries
    going face to face (the still ones at the low face, the midpoint or the high
    face) and stepping from the centre to the faces in both directions (the
    reflections through the centre).  DP-Sniper's best pairs lie among them, e.g.
    ``(1,0,0,0,0)/(0,1,1,1,1)`` in the unit box for ReportNoisyMax1.  For an
    integer domain the midpoint is rounded down.
    """
    n = domain.size
    low, high, mid = pattern_box(domain, radius)
    pairs = [
        InputPair(a, b, f"box pattern: {name}") for name, a, b in box_patterns(low, high, n, mid)
    ]
    if not domain.bounded:
        diag = (high - low) / 2.0 / math.sqrt(n)
        pairs.append(InputPair(np.full(n, -diag), np.full(n, diag), "diagonal ±R/√n·1"))
        e1 = np.zeros(n)
        e1[0] = (high - low) / 2.0
        pairs.append(InputPair(-e1, e1, "axis ±R·e1"))
    return pairs


def categorical_pairs(domain: InputDomain) -> list[InputPair]:
    """Pairs of distinct categories of a one-coordinate integer domain."""
    low, high = int(domain.low), int(domain.high)
    k = high - low + 1
    if k <= ALL_PAIRS_CATEGORIES:
        values = list(range(low, high + 1))
    else:
        values = sorted({low, low + 1, (low + high) // 2, high})
    return [
        InputPair((a,), (b,), f"categories {a} and {b}")
        for a, b in itertools.combinations(values, 2)
    ]


def dedupe(pairs: list[InputPair], *, ordered: bool) -> list[InputPair]:
    """Drop pairs with ``x == x'`` and repeats (as ordered or unordered pairs); keep the first."""
    seen: set[tuple[tuple[float, ...], ...]] = set()
    out: list[InputPair] = []
    for p in pairs:
        if p.x == p.x_prime:
            continue
        key = (p.x, p.x_prime) if ordered else tuple(sorted((p.x, p.x_prime)))
        if key in seen:
            continue
        seen.add(key)
        out.append(p)
    return out


def pattern_radius(mechanism: Mechanism) -> float:
    """Half the sensitivity the claim assumes (the box an unbounded domain is audited on)."""
    sens = mechanism.claim.sensitivity
    if sens is not None and math.isfinite(sens) and sens > 0:
        return float(sens) / 2.0
    return 1.0


def listed_pairs(mechanism: Mechanism) -> list[InputPair] | None:
    """The neighbouring pairs a mechanism lists itself, or ``None`` when any two inputs are.

    A mechanism whose inputs are not all neighbours (a typed dataset domain shown to
    the auditor as indices, :class:`dpaudit.adapters.callable.FunctionMechanism`)
    defines ``neighbouring_pairs()``: the auditor tries those instead of patterns.
    """
    hook = getattr(mechanism, "neighbouring_pairs", None)
    if hook is None:
        return None
    listed = hook()
    if listed is None:
        return None
    return [p if isinstance(p, InputPair) else InputPair(p[0], p[1], p[2]) for p in listed]


def only_listed_are_neighbours(mechanism: Mechanism) -> bool:
    """True when a mechanism lists pairs and no others are neighbours (a typed dataset).

    A typed domain of integers or categories lists a few pairs as first guesses but any
    two of its points are neighbours (``lists_only_neighbours`` False): the input design
    may pair any of them.
    """
    if listed_pairs(mechanism) is None:
        return False
    return bool(getattr(mechanism, "lists_only_neighbours", True))


def generate_pairs(
    mechanism: Mechanism,
    *,
    mode: str = "dpaudit",
    user_pairs: tuple[InputPair, ...] = (),
    use_patterns: bool = True,
) -> list[InputPair]:
    """All pairs the audit tries: user pairs first, then the generated patterns.

    Every pair is validated against the mechanism's input domain.
    """
    domain = mechanism.input_domain
    generated: list[InputPair] = []
    listed = listed_pairs(mechanism)
    if use_patterns:
        if listed is not None:
            generated = listed
        elif mode == "dpsniper":
            generated = dpsniper_pairs(domain)
        elif domain.integer and domain.size == 1:
            generated = categorical_pairs(domain)
        else:
            generated = box_pairs(domain, radius=pattern_radius(mechanism))
    ordered = mode == "dpsniper"
    pairs = dedupe([*user_pairs, *generated], ordered=ordered)
    if not pairs:
        raise InvalidArgumentError(
            "pairs", "none", f"at least one pair of distinct inputs in {domain.describe()}"
        )
    for p in pairs:
        check_pair(mechanism, p)
    return pairs


def check_pair(mechanism: Mechanism, pair: InputPair) -> None:
    """Raise a clear error when either input of ``pair`` lies outside the domain."""
    shape = mechanism.input_shape
    for name, value in (("x", pair.x), ("x'", pair.x_prime)):
        arr = np.asarray(value, dtype=np.float64)
        if arr.size != mechanism.input_domain.size:
            raise InvalidArgumentError(
                f"pair {pair.origin!r} {name}",
                list(value),
                f"{mechanism.input_domain.size} numbers (input shape {shape})",
            )
        mechanism.validate_input(arr.reshape(shape), name=f"pair {pair.origin!r} {name}")


def parse_pair(text: str, mechanism: Mechanism) -> InputPair:
    """Parse ``"A;B"`` (each a comma-separated vector, or one number for every coordinate).

    A single number is broadcast to every coordinate (``"0;1"`` on ``[0,1]^20``
    is the all-zeros/all-ones pair).  Raises naming ``--pair`` on bad input.
    """
    parts = text.split(";")
    if len(parts) != 2:
        raise InvalidArgumentError("--pair", text, "two inputs separated by ';', e.g. '0;1'")
    size = mechanism.input_domain.size
    vectors = []
    for part in parts:
        try:
            vals = [float(v) for v in part.replace(" ", "").split(",") if v != ""]
        except ValueError:
            raise InvalidArgumentError("--pair", text, "numbers such as '0,0;1,1'") from None
        if len(vals) == 1:
            vals = vals * size
        if len(vals) != size or not all(math.isfinite(v) for v in vals):
            raise InvalidArgumentError(
                "--pair", text, f"two inputs of {size} finite numbers (or one each)"
            )
        vectors.append(vals)
    pair = InputPair(vectors[0], vectors[1], "given")
    if pair.x == pair.x_prime:
        raise InvalidArgumentError("--pair", text, "two different inputs")
    try:
        check_pair(mechanism, pair)
    except DPAuditError as exc:
        raise InvalidArgumentError(
            "--pair", text, f"inputs in the domain {mechanism.input_domain.describe()} ({exc})"
        ) from None
    return pair
