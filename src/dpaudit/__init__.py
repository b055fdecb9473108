"""dpaudit: check whether a (text) privatisation mechanism really is as private as it claims.

Data flows one way: claim → samples → sufficient statistics → bound → verdict → report.

* :mod:`dpaudit.mechanisms` — samplers and their claims;
* :mod:`dpaudit.analysis` — the exact maths (sensitivities, privacy losses);
* :mod:`dpaudit.audit` — empirical statistics and one-sided ε lower bounds;
* :mod:`dpaudit.text`, :mod:`dpaudit.attacks` — the NLP side;
* :mod:`dpaudit.reproduce`, :mod:`dpaudit.report`, :mod:`dpaudit.cli` — on top.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpaudit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
