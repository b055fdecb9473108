"""The names the black-box audit accepts for its mode and its attack (``--mode``, ``--classifier``).

Kept apart from :mod:`~dpaudit.auditors.blackbox.config` so that the command
line can offer them as choices without importing the mechanisms (start-up of an
argument error, ``benchmarks/startup.py``).
"""

from __future__ import annotations

#: ``dpaudit``: the search with its stages; ``dpsniper``: DP-Sniper as published
#: (Bichsel et al., CCS 2021).
MODES = ("dpaudit", "dpsniper")

#: The attacks: ``auto`` picks per mechanism (see ``AuditConfig.classifier``).
CLASSIFIERS = ("auto", "likelihood-ratio", "logistic", "mlp", "split", "histogram")
