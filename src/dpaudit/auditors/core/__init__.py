"""The certification core every auditor shares.

Auditors *propose* input pairs and output sets with any heuristic on any
samples; this package holds what makes a bound valid whoever proposed it:
what an auditor proposes (:mod:`~dpaudit.auditors.core.proposal`), the procedure that
runs a proposer (:mod:`~dpaudit.auditors.core.procedure`) and its one counting unit of
final samples (:mod:`~dpaudit.auditors.core.counting`), exact binomial
bounds and their joint certification (:mod:`~dpaudit.auditors.core.statistics`,
:mod:`~dpaudit.auditors.core.certify`), beside them the DKW band that certifies a
whole trade-off curve at once (:mod:`~dpaudit.auditors.core.dkw`), the one verdict
rule, its sentences and the one
construction of every result (:mod:`~dpaudit.auditors.core.answer`), the projection
proposers rank by (:mod:`~dpaudit.auditors.core.projection`), and the checks that
trust nothing a foreign mechanism declares about itself
(:mod:`~dpaudit.auditors.core.guard`, :mod:`~dpaudit.auditors.core.declarations`,
:mod:`~dpaudit.auditors.core.goodness_of_fit`).
It imports no auditor.
"""
