"""The certification core every auditor shares.

Auditors *propose* input pairs and output sets with any heuristic on any
samples; this package holds what makes a bound valid whoever proposed it:
exact binomial bounds (:mod:`~dpaudit.auditors.core.statistics`), the projection
proposers rank by (:mod:`~dpaudit.auditors.core.projection`), and the checks that
trust nothing a foreign mechanism declares about itself
(:mod:`~dpaudit.auditors.core.guard`, :mod:`~dpaudit.auditors.core.declarations`,
:mod:`~dpaudit.auditors.core.goodness_of_fit`).
It imports no auditor.
"""
