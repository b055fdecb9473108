"""Empirical sensitivity simulation: the share of input pairs that break a claimed sensitivity.

Imports :mod:`dpaudit.auditors.core`, no other auditor.
"""
