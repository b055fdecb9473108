"""The execution engine every sampling command runs on.

A *work unit* is a small picklable value; a module-level function turns it into
sufficient statistics that merge by addition.  The engine runs units on local
processes or Ray (:mod:`.executor`, :mod:`.ray_backend`, sharing
:mod:`.batches`), stops slow ones (:mod:`.timeout`) and, when a checkpoint
session travels in the :class:`~dpaudit.engine.config.ExecutionConfig`,
stores each result as it arrives (:mod:`.checkpoint`, :mod:`.unit_codec`).
The single entry point is :func:`dpaudit.engine.executor.run_units`.

Import rule: the engine knows nothing about statistics or mechanisms — nothing
here imports ``dpaudit.auditors``, ``dpaudit.mechanisms``, ``dpaudit.attacks``,
``dpaudit.text``, ``dpaudit.reproduce``, ``dpaudit.report`` or ``dpaudit.cli``
(enforced by ``tests/test_architecture.py``).
"""
