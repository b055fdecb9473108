"""Sequential certification: count the final sets in growing looks and stop once a claim falls.

A fixed final sample spends the whole budget on a violation the first tenth of it
already shows, and cannot stop early.  Here the final outputs are drawn in looks of
cumulative sizes ``n_1 < n_2 < … < n_L = final_samples`` (doubling, see
:meth:`LookPlan.of`).  After each look every proposed statement is certified as in
:func:`~dpaudit.auditors.core.certify.certify` — one-sided Clopper–Pearson bounds,
Bonferroni over the ``K`` statements and their two estimates — but at the look's own
share ``α_l`` of the error, with ``Σ_l α_l = α``.  The audit stops at the first look
whose best bound refutes the claim, or, *for futility*, at the first look after which no
statement could refute it even at the last look: the counts of every statement are
projected to the last look's size at optimistic rates (the upper Clopper–Pearson bound of
``p1`` and the lower of ``p2``, each at :data:`FUTILITY_ERROR`, from the look's counts),
and certified there at the last look's error; when none of those projected bounds exceeds
the claim, more looks are not worth drawing.

Why it is valid at a data-dependent stopping time: with probability at least
``1 − Σ_l α_l = 1 − α`` every statement's bounds hold at *every* look at once (a
union bound over the looks; no independence between looks is needed), so whichever
look the audit stops at, the bounds reported there hold (Wald's argument for a
finite sequential plan; see e.g. Howard et al., "Time-uniform, nonparametric,
nonasymptotic confidence sequences", Ann. Statist. 2021, for the continuous-time
version).  The final look carries half of α, so an audit that finds nothing ends
with bounds at error ``α/2`` instead of ``α``: the price of being able to stop early
(about 1–3 % of the bound at 10⁷ outputs per input; ``benchmarks/sequential.py``).

Stopping for futility never reports a violation, so it cannot raise the false-alarm rate;
what it may cost is power, only when a statement's true rates lie beyond the optimistic
ones, which happens with probability at most ``2·FUTILITY_ERROR`` per statement and look.

The proposals are fixed before the first look, so only the final sets are counted
here; the stages that choose them are untouched.  Imports only the core.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dpaudit.auditors.core.certify import (
    Certificate,
    FinalCounts,
    best,
    certify_one,
    split_error,
)
from dpaudit.auditors.core.statistics import clopper_pearson_lower, clopper_pearson_upper
from dpaudit.errors import InvalidArgumentError

#: Looks of a sequential final stage, at most (the sizes double from look to look).
DEFAULT_LOOKS = 6
#: Least outputs per input at the first look.
MIN_FIRST_LOOK = 1000
#: Share of α the last look carries; the earlier looks share the rest equally.
LAST_LOOK_SHARE = 0.5
#: Error of each optimistic rate a futility stop projects (module docstring).
FUTILITY_ERROR = 1e-3


@dataclass(frozen=True)
class LookPlan:
    """Cumulative outputs per input at each look, and each look's share of the error."""

    sizes: tuple[int, ...]
    errors: tuple[float, ...]

    @classmethod
    def of(cls, final_samples: int, alpha: float, looks: int = DEFAULT_LOOKS) -> LookPlan:
        """Doubling looks ending at ``final_samples``; the first holds ≥ :data:`MIN_FIRST_LOOK`.

        One look (the fixed-size plan, all of ``alpha`` on it) when ``final_samples`` is
        too small for two.
        """
        if not 0.0 < alpha < 1.0:
            raise InvalidArgumentError("alpha", alpha, "a probability in (0, 1)")
        if isinstance(looks, bool) or not isinstance(looks, int) or looks < 1:
            raise InvalidArgumentError("looks", looks, "an integer >= 1")
        sizes = sorted(
            {
                math.ceil(final_samples / 2**k)
                for k in range(looks)
                if final_samples / 2**k >= MIN_FIRST_LOOK or k == 0
            }
        )
        if len(sizes) == 1:
            return cls((final_samples,), (alpha,))
        early = alpha * (1.0 - LAST_LOOK_SHARE) / (len(sizes) - 1)
        return cls(tuple(sizes), (*([early] * (len(sizes) - 1)), alpha * LAST_LOOK_SHARE))

    def describe(self, stopped: int, futile: bool = False) -> str:
        """The plan and where it stopped, in words (for the confidence statement)."""
        shares = ", ".join(f"{e:.3g}" for e in self.errors)
        where = (
            f"it stopped at look {stopped + 1} of {len(self.sizes)} "
            f"({self.sizes[stopped]} of {self.sizes[-1]} final outputs per input)"
        )
        if futile:
            where += (
                ", for futility: projected to the last look at optimistic rates (each at "
                f"error {FUTILITY_ERROR:g}), no statement could have refuted the claim"
            )
        return (
            f"Sequential final stage: looks after {', '.join(map(str, self.sizes))} outputs "
            f"per input, each look's statements certified jointly at error {shares} "
            "respectively (union bound over the looks, so every look's bounds hold jointly "
            f"and stopping at any of them keeps the confidence); {where}."
        )


@dataclass(frozen=True)
class SequentialOutcome:
    """Where a sequential certification stopped, its counts and certificates there."""

    look: int
    counts: tuple[FinalCounts, ...]
    certificates: tuple[Certificate, ...]
    plan: LookPlan
    #: It stopped before the last look because no statement could refute the claim there.
    futile: bool = False


def added(a: FinalCounts, b: FinalCounts) -> FinalCounts:
    """The counts of two disjoint samples of one statement, pooled."""
    return FinalCounts(
        a.hits_x + b.hits_x,
        a.samples_x + b.samples_x,
        a.hits_x_prime + b.hits_x_prime,
        a.samples_x_prime + b.samples_x_prime,
    )


def projected(counts: FinalCounts, size: int) -> FinalCounts:
    """``counts`` grown to ``size`` outputs per input at optimistic rates: the upper
    Clopper–Pearson bound of ``p1`` and the lower of ``p2``, each at :data:`FUTILITY_ERROR`."""
    p1 = float(clopper_pearson_upper(counts.hits_x, counts.samples_x, FUTILITY_ERROR))
    p2 = float(clopper_pearson_lower(counts.hits_x_prime, counts.samples_x_prime, FUTILITY_ERROR))
    return FinalCounts(min(size, math.ceil(p1 * size)), size, math.floor(p2 * size), size)


def futile(counts: Sequence[FinalCounts], plan: LookPlan, above: float, delta: float = 0.0) -> bool:
    """Whether no statement, projected to the last look (:func:`projected`) and certified at
    its error, would give a bound above ``above``."""
    each = split_error(plan.errors[-1], len(counts))
    size = plan.sizes[-1]
    return all(
        certify_one(projected(c, size), each, delta, len(counts)).lower_bound <= above
        for c in counts
    )


def certify_sequentially(
    draw: Callable[[int, int], Sequence[FinalCounts]],
    plan: LookPlan,
    refutes_above: float,
    delta: float = 0.0,
) -> SequentialOutcome:
    """Draw the looks of ``plan`` until the best certified bound exceeds ``refutes_above``
    (the claim falls), or until no statement could exceed it at the last look (futility).

    ``draw(look, more)`` returns, per statement (always in the same order), the counts
    of ``more`` fresh outputs per input drawn for that look; it is called once per look.
    Every look's certificates hold at the look's error (:class:`LookPlan`), jointly.
    """
    pooled: list[FinalCounts] | None = None
    done = 0
    certs: tuple[Certificate, ...] = ()
    last = len(plan.sizes) - 1
    for look, (size, error) in enumerate(zip(plan.sizes, plan.errors, strict=True)):
        fresh = list(draw(look, size - done))
        pooled = (
            fresh if pooled is None else [added(a, b) for a, b in zip(pooled, fresh, strict=True)]
        )
        done = size
        each = split_error(error, len(pooled))  # Bonferroni over statements, as certify()
        certs = tuple(certify_one(c, each, delta, len(pooled)) for c in pooled)
        if certs[best(certs)].lower_bound > refutes_above:
            return SequentialOutcome(look, tuple(pooled), certs, plan)
        if look < last and futile(pooled, plan, refutes_above, delta):
            return SequentialOutcome(look, tuple(pooled), certs, plan, futile=True)
    assert pooled is not None  # a plan has at least one look
    return SequentialOutcome(last, tuple(pooled), certs, plan)
