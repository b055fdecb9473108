"""The ``dpaudit`` command line: one module per sub-command, conventions in :mod:`.common`."""
