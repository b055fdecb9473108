"""Auditing training algorithms (DP-SGD) with canaries: one-run here, multi-run via the profile.

* :mod:`~dpaudit.auditors.training.one_run` — m canaries, half in, one training (Steinke,
  Nasr & Jagielski, NeurIPS 2023), certified with Bonferroni over a fixed guess grid;
* multi-run — the canary game (:class:`dpaudit.mechanisms.training.game.CanaryGame`) audited
  by the whole-claim certifier (:mod:`dpaudit.auditors.profile`), see
  :func:`dpaudit.api.audit_training`;
* :mod:`~dpaudit.auditors.training.canaries` — the canary designs.
"""

from dpaudit.auditors.training.canaries import CANARY_KINDS, Canaries, draw_canaries
from dpaudit.auditors.training.one_run import OneRunConfig, audit_one_run

__all__ = ["CANARY_KINDS", "Canaries", "OneRunConfig", "audit_one_run", "draw_canaries"]
