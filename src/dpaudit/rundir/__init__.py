"""A run directory: where each of its files lies (:mod:`.layout`) and what ``results.json`` holds.

Both sides of a run directory share this package: :mod:`dpaudit.reproduce` and
:mod:`dpaudit.engine.checkpoint` write it, :mod:`dpaudit.report` reads it.  It
is a basic package, so the report can read a run without importing the figure
machinery; besides other basics it imports only the audit result types
(:mod:`dpaudit.auditors`), because a figure's records store each audit's typed
result.
"""
