"""The black-box auditor: input pairs and threshold sets for any mechanism it can sample.

:func:`~dpaudit.auditors.blackbox.auditor.audit` runs DP-Sniper's search or
dpaudit's own (training, ranking, playoff) and certifies the chosen
sets on fresh final samples.  Imports :mod:`dpaudit.auditors.core`, no other auditor.
"""
