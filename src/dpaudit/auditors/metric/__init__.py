"""The word-level metric-DP auditor: every word pair against its own allowed loss ε·d(w, w').

Imports :mod:`dpaudit.auditors.core`, no other auditor.
"""
