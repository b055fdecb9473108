"""Whole privacy claims written as one short text, e.g. ``gdp:0.5`` or ``approx:1,1e-5``.

The command line (``dpaudit audit --claim ...``) and scripts name a claim of
:mod:`dpaudit.claims.curves` this way.  The forms:

==================================  =================================================
``pure:EPS``                         ε-DP (:class:`PureDP`)
``approx:EPS,DELTA``                 (ε, δ)-DP (:class:`ApproxDP`)
``gdp:MU``                           μ-GDP (:class:`GaussianDP`)
``zcdp:RHO``                         ρ-zCDP (:class:`ZeroConcentratedDP`)
``renyi:ORDER=EPS,ORDER=EPS,...``    (α, ε(α))-RDP at the listed orders (:class:`RenyiDP`)
``gaussian-analytic:EPS,DELTA[,Δ]``  the curve of Gaussian noise at the analytic
                                     calibration for (ε, δ) and L2 sensitivity Δ
                                     (default 1): μ = Δ/σ-GDP (Balle & Wang, ICML
                                     2018, Alg. 1; Dong, Roth & Su 2022, Thm. 2.7)
``gaussian-classic:EPS,DELTA[,Δ]``   the same at the classic calibration
                                     σ = Δ·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014,
                                     Thm. A.1, proven for ε < 1 only)
==================================  =================================================

The two calibration forms state what a mechanism adding ``N(0, σ²)`` with
that σ gives: the whole μ-GDP curve of its noise.  They audit the *noise*
(its sampler, its σ), not the calibration's (ε, δ) promise: for the classic
calibration at ε ≥ 1 that promise can be false while the curve holds, so the
parsed value carries a note saying to audit ``approx:EPS,DELTA`` as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpaudit.analysis.gaussian import analytic_gaussian_sigma, classic_gaussian_sigma
from dpaudit.claims import (
    ApproxDP,
    GaussianDP,
    ProfileClaim,
    PureDP,
    RenyiDP,
    ZeroConcentratedDP,
)
from dpaudit.errors import InvalidArgumentError

#: The forms a claim text may take (printed in every error).
CLAIM_FORMS = (
    "pure:EPS",
    "approx:EPS,DELTA",
    "gdp:MU",
    "zcdp:RHO",
    "renyi:ORDER=EPS[,ORDER=EPS...]",
    "gaussian-analytic:EPS,DELTA[,SENSITIVITY]",
    "gaussian-classic:EPS,DELTA[,SENSITIVITY]",
)


@dataclass(frozen=True)
class ParsedClaim:
    """A claim value, the text it came from and a note on what it covers (or ``None``)."""

    claim: ProfileClaim
    text: str
    note: str | None = None


def _numbers(body: str, count: tuple[int, int]) -> list[float]:
    parts = [p.strip() for p in body.split(",")]
    if not count[0] <= len(parts) <= count[1]:
        raise ValueError("wrong count of numbers")
    return [float(p) for p in parts]


def _renyi(body: str) -> RenyiDP:
    pairs = []
    for item in body.split(","):
        order, sep, eps = item.partition("=")
        if not sep:
            raise ValueError("ORDER=EPS items")
        pairs.append((float(order), float(eps)))
    pairs.sort()
    return RenyiDP(tuple(a for a, _ in pairs), tuple(e for _, e in pairs))


def _calibrated(kind: str, body: str) -> ParsedClaim:
    eps, delta, *rest = _numbers(body, (2, 3))
    sensitivity = rest[0] if rest else 1.0
    sigma_of = analytic_gaussian_sigma if kind == "analytic" else classic_gaussian_sigma
    sigma = sigma_of(eps, delta, sensitivity)
    claim = GaussianDP.from_sigma(sigma, sensitivity)
    note = (
        f"the μ-GDP curve of Gaussian noise with σ = {sigma:.6g} (the {kind} calibration for "
        f"ε = {eps:g}, δ = {delta:g}, L2 sensitivity {sensitivity:g})"
    )
    if kind == "classic" and eps >= 1.0:
        note += (
            "; the classic calibration is proven only for ε < 1 (Dwork & Roth 2014, Thm. A.1), "
            f"so this curve need not imply ({eps:g}, {delta:g})-DP: audit "
            f"approx:{eps:g},{delta:g} to test that promise"
        )
    return ParsedClaim(claim, f"gaussian-{kind}:{body}", note)


def parse_claim(
    text: str, argument: str = "--claim", extra_forms: tuple[str, ...] = ()
) -> ParsedClaim:
    """The claim written as ``text`` (see the module's table).

    Errors name ``argument`` and list the forms, with ``extra_forms`` (those a
    caller handles itself, e.g. the command line's ``library``) among them.
    """
    kind, sep, body = str(text).strip().partition(":")
    kind, body = kind.strip().lower(), body.strip()
    forms = "one of " + ", ".join((*CLAIM_FORMS, *extra_forms))
    try:
        if not sep or not body:
            raise ValueError("")
        if kind == "pure":
            return ParsedClaim(PureDP(*_numbers(body, (1, 1))), text)
        if kind == "approx":
            return ParsedClaim(ApproxDP(*_numbers(body, (2, 2))), text)
        if kind == "gdp":
            return ParsedClaim(GaussianDP(*_numbers(body, (1, 1))), text)
        if kind == "zcdp":
            return ParsedClaim(ZeroConcentratedDP(*_numbers(body, (1, 1))), text)
        if kind == "renyi":
            return ParsedClaim(_renyi(body), text)
        if kind in ("gaussian-analytic", "gaussian-classic"):
            return _calibrated(kind.removeprefix("gaussian-"), body)
    except InvalidArgumentError as exc:  # a value out of range: say which, and the forms
        raise InvalidArgumentError(
            argument, text, f"{exc.argument} {exc.allowed}; the forms are {forms}"
        ) from None
    except ValueError:
        raise InvalidArgumentError(argument, text, forms) from None
    raise InvalidArgumentError(argument, text, forms)


__all__ = ["CLAIM_FORMS", "ParsedClaim", "parse_claim"]
