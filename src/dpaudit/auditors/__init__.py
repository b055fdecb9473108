"""Auditors: turn samples into sufficient statistics, bounds and verdicts."""
