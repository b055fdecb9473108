"""The ACL 2022 reconstruction sanity check (Habernal, ACL 2022, §4).

Imports :mod:`dpaudit.auditors.core`, no other auditor.
"""
