"""Empirical sensitivity simulation: the share of input pairs that break a claimed sensitivity.

Imports :mod:`dpaudit.audit.core`, no other auditor.
"""
