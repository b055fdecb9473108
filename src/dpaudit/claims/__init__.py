"""What mechanisms *claim*, as immutable values that share one contract (:class:`Claim`).

* :mod:`~dpaudit.claims.protocol`: the :class:`Claim` protocol and :func:`claim_from_dict`;
* :mod:`~dpaudit.claims.point`: :class:`PrivacyClaim` (ε-DP or (ε, δ)-DP over an
  :class:`InputDomain` or a typed domain), :class:`Definition`;
* :mod:`~dpaudit.claims.curves`: :class:`PureDP`, :class:`ApproxDP`,
  :class:`PrivacyProfile`, :class:`GaussianDP`, :class:`RenyiDP`,
  :class:`ZeroConcentratedDP` and the f-DP :class:`TradeoffDP`;
* :mod:`~dpaudit.claims.metric`: :class:`MetricClaim` (ε·d over words);
* :mod:`~dpaudit.claims.text`: :class:`TextClaim` (ε per token, word or document),
  :class:`Unit`, :class:`Neighbours`;
* :mod:`~dpaudit.claims.parse`: claims written as short texts (``gdp:0.5``);
* :mod:`~dpaudit.claims.truth`: :class:`AnalyticTruth`, what is exactly true, to
  set beside a claim.

A basic module: it imports only errors, validation, witness, domains and the
two leaf maths modules :mod:`dpaudit.analysis.privacy_conversions` and
:mod:`dpaudit.analysis.gaussian` (``tests/test_architecture.py`` says why).
"""

from dpaudit.claims.curves import (
    RDP_CONVERSIONS,
    ZCDP_CONVERSIONS,
    ApproxDP,
    GaussianDP,
    PrivacyProfile,
    ProfileClaim,
    PureDP,
    RenyiDP,
    TradeoffDP,
    ZeroConcentratedDP,
)
from dpaudit.claims.metric import MetricClaim
from dpaudit.claims.point import Definition, InputDomain, PrivacyClaim
from dpaudit.claims.protocol import CLAIM_TYPES, Claim, claim_from_dict
from dpaudit.claims.text import Neighbours, TextClaim, Unit
from dpaudit.claims.truth import AnalyticTruth

__all__ = [
    "CLAIM_TYPES",
    "RDP_CONVERSIONS",
    "ZCDP_CONVERSIONS",
    "AnalyticTruth",
    "ApproxDP",
    "Claim",
    "Definition",
    "GaussianDP",
    "InputDomain",
    "MetricClaim",
    "Neighbours",
    "PrivacyClaim",
    "PrivacyProfile",
    "ProfileClaim",
    "PureDP",
    "RenyiDP",
    "TextClaim",
    "TradeoffDP",
    "Unit",
    "ZeroConcentratedDP",
    "claim_from_dict",
]
