"""Adapters: other libraries' mechanisms and users' own code, audited as black boxes.

Each adapter is a :class:`~dpaudit.mechanisms.Mechanism` whose ``sample`` calls
the library and whose ``claim`` is read from the library object where the
library exposes it.  Library adapters are registered only when their library is
installed (each is in its own extra; ``dpaudit[adapters]`` installs all):

========================  ==============  ==========================================
name                      extra           library call / where the claim comes from
========================  ==============  ==========================================
``opendp-laplace``        ``opendp``      measurement call / its privacy map
``opendp-gaussian``       ``opendp``      measurement call / its privacy maps (ρ, (ε, δ))
``diffprivlib-laplace``   ``diffprivlib`` ``Laplace.randomise`` / ``epsilon``, ``delta``
``diffprivlib-gaussian``  ``diffprivlib`` ``GaussianAnalytic``/``Gaussian.randomise`` /
                                          ``epsilon``, ``delta``, ``sensitivity``
``pureldp-de``            ``pureldp``     ``DEClient.privatise`` / ``client.epsilon``
``pureldp-ue``            ``pureldp``     ``UEClient.privatise`` / ``client.epsilon``
``callable``              (core)          ``module:callable`` / the command line
``mldp:NAME``             ``mldp``        ``replace_word`` of mldp-text's six word
                                          mechanisms / their papers (metric DP)
``pypantera:NAME``        ``pypantera``   pyPANTERA 1.0.2's word mechanisms (CMP,
                                          Mahalanobis, Vickrey, SanText, CusText, TEM)
                                          / its README and papers (metric DP)
``diffractor:NAME``       ``diffractor``  dp-diffractor 0.2.1 (1-Diffractor, geometric
                                          or TEM step) / its paper (ε·list distance)
========================  ==============  ==========================================

Adapters whose library takes no seed declare ``externally_seeded = True``
(see :mod:`dpaudit.adapters.opendp`): their results are valid but not
bit-reproducible from dpaudit's seed.  Adapters whose library states a whole
claim (a privacy map in zCDP, a Gaussian calibration) expose it as
``profile_claim`` (a value of :mod:`dpaudit.claims.curves`), with
``profile_claim_source`` saying where it was read: ``dpaudit audit NAME
--claim library`` audits it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from dpaudit.adapters import callable as callable_adapter
from dpaudit.adapters import diffprivlib, mldp, opendp, pure_ldp
from dpaudit.adapters import diffractor as diffractor_adapter
from dpaudit.adapters import pypantera as pypantera_adapter
from dpaudit.errors import OptionalDependencyError

#: Adapter name → (Python package, extra that installs it).
ADAPTER_EXTRAS: dict[str, tuple[str, str]] = {
    "opendp-laplace": ("opendp", "opendp"),
    "diffprivlib-laplace": ("diffprivlib", "diffprivlib"),
    "opendp-gaussian": ("opendp", "opendp"),
    "diffprivlib-gaussian": ("diffprivlib", "diffprivlib"),
    "pureldp-de": ("pure-ldp", "pureldp"),
    "pureldp-ue": ("pure-ldp", "pureldp"),
}


def word_adapter(name: str) -> Callable[..., Any] | None:
    """For a word adapter name (``mldp:``, ``pypantera:``, ``diffractor:NAME``), its factory.

    The factory is ``f(**params)``; None for any other name.

    The factory raises :class:`OptionalDependencyError` naming the extra when the
    library is not installed.
    """
    prefix, sep, _ = str(name).partition(":")
    if sep and prefix == mldp.PREFIX:
        return functools.partial(mldp.make_mldp, name)
    if sep and prefix == diffractor_adapter.PREFIX:
        return functools.partial(diffractor_adapter.make_diffractor, name)
    if sep and prefix == pypantera_adapter.PREFIX:
        return functools.partial(pypantera_adapter.make_pypantera, name)
    return None


def missing_adapter_error(name: str) -> OptionalDependencyError | None:
    """The error to raise for an adapter name whose library is not installed, else None."""
    if name not in ADAPTER_EXTRAS:
        return None
    package, extra = ADAPTER_EXTRAS[name]
    return OptionalDependencyError(package, extra, f"mechanism {name!r}")


__all__ = [
    "ADAPTER_EXTRAS",
    "callable_adapter",
    "diffprivlib",
    "diffractor_adapter",
    "missing_adapter_error",
    "mldp",
    "opendp",
    "pure_ldp",
    "pypantera_adapter",
    "word_adapter",
]
