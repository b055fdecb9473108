"""The certification core every auditor shares.

Auditors *propose* input pairs and output sets with any heuristic on any
samples; this package holds what makes a bound valid whoever proposed it:
exact binomial bounds (:mod:`~dpaudit.audit.core.statistics`), the projection
proposers rank by (:mod:`~dpaudit.audit.core.projection`), and the checks that
trust nothing a foreign mechanism declares about itself
(:mod:`~dpaudit.audit.core.guard`, :mod:`~dpaudit.audit.core.declarations`).
It imports no auditor.
"""
