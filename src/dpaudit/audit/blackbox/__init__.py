"""The black-box auditor: input pairs and threshold sets for any mechanism it can sample.

:func:`~dpaudit.audit.blackbox.auditor.audit` runs DP-Sniper's search or
dpaudit's own (training, ranking, validation, playoff) and certifies the chosen
sets on fresh final samples.  Imports :mod:`dpaudit.audit.core`, no other auditor.
"""
