"""Adapters: other libraries' mechanisms and users' own code, audited as black boxes.

Each adapter is a :class:`~dpaudit.mechanisms.Mechanism` whose ``sample`` calls
the library and whose ``claim`` is read from the library object where the
library exposes it.  Library adapters are registered only when their library is
installed (each is in its own extra; ``dpaudit[adapters]`` installs all):

========================  ==============  ==========================================
name                      extra           library call / where the claim comes from
========================  ==============  ==========================================
``opendp-laplace``        ``opendp``      measurement call / its privacy map
``diffprivlib-laplace``   ``diffprivlib`` ``Laplace.randomise`` / ``epsilon``, ``delta``
``pureldp-de``            ``pureldp``     ``DEClient.privatise`` / ``client.epsilon``
``pureldp-ue``            ``pureldp``     ``UEClient.privatise`` / ``client.epsilon``
``callable``              (core)          ``module:callable`` / the command line
========================  ==============  ==========================================

Adapters whose library takes no seed declare ``externally_seeded = True``
(see :mod:`dpaudit.adapters.opendp`): their results are valid but not
bit-reproducible from dpaudit's seed.
"""

from __future__ import annotations

from dpaudit.adapters import callable as callable_adapter
from dpaudit.adapters import diffprivlib, opendp, pure_ldp
from dpaudit.errors import OptionalDependencyError

#: Adapter name → (Python package, extra that installs it).
ADAPTER_EXTRAS: dict[str, tuple[str, str]] = {
    "opendp-laplace": ("opendp", "opendp"),
    "diffprivlib-laplace": ("diffprivlib", "diffprivlib"),
    "pureldp-de": ("pure-ldp", "pureldp"),
    "pureldp-ue": ("pure-ldp", "pureldp"),
}


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
    "missing_adapter_error",
    "opendp",
    "pure_ldp",
]
