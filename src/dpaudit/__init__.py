"""dpaudit: check whether a (text) privatisation mechanism really is as private as it claims.

Data flows one way: claim → samples → sufficient statistics → bound → verdict → report.

* :mod:`dpaudit.analysis` — the exact maths (sensitivities, privacy losses);
* :mod:`dpaudit.mechanisms` — samplers and their claims (use ``analysis``);
* :mod:`dpaudit.adapters` — other libraries' mechanisms and user code, above ``mechanisms``;
* :mod:`dpaudit.engine` — runs work units (local pool, Ray, checkpoints, timeouts);
* :mod:`dpaudit.audit` — empirical statistics and one-sided ε lower bounds (on ``engine``);
* :mod:`dpaudit.text` (corpora, embeddings), :mod:`dpaudit.attacks` (HoHo attacks) — the NLP side;
* :mod:`dpaudit.reproduce`, :mod:`dpaudit.report`, :mod:`dpaudit.cli` — on top;
* basics used everywhere: ``errors``, ``validation``, ``claims``, ``random``,
  ``serialization``, ``io``, ``progress``, ``verdicts``.

The import rules are enforced by ``tests/test_architecture.py``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("dpaudit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = ["__version__"]
