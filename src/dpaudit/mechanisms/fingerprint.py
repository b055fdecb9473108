"""Identify the code behind a mechanism, so a run directory can refuse stale results.

A run directory (:mod:`dpaudit.engine.checkpoint`) stores finished work units;
reusing them after the mechanism's code changed would mix two versions of the
code in one result.  :func:`code_fingerprint` names what the result depends on:

* ``module:callable`` (a user's function): the SHA-256 of the module's file
  (helpers it imports from other files are not covered);
* an adapter of an external library (a class in ``dpaudit.adapters.*``): the
  library's installed version;
* a built-in mechanism: the SHA-256 of the source files of every class in its
  hierarchy, so an edit of a shared base class counts too.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import sys
from pathlib import Path

from dpaudit.mechanisms.base import Mechanism
from dpaudit.mechanisms.registry import TEXT_KIND, mechanism_class, mechanism_names, output_kind

_ADAPTERS = ("dpaudit", "adapters")


def _sha256_file(path: str | None) -> str:
    if not path:
        return "<no file>"
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "<unreadable>"


def _module_file(module_name: str) -> str | None:
    module = sys.modules.get(module_name)
    origin = getattr(module, "__file__", None)
    if origin is not None:
        return str(origin)
    try:
        spec = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None else None


def code_fingerprint(mechanism: str) -> dict[str, str]:
    """``{what: digest or version}`` for a mechanism named as on the command line.

    Keys: ``callable_module_sha256``, ``library_version`` or
    ``class_source_sha256`` (see the module docstring).  Returns ``{}`` for a
    name that is neither a ``module:callable`` nor a registered mechanism.

    >>> sorted(code_fingerprint("laplace"))
    ['class_source_sha256']
    """
    if ":" in mechanism:
        module_name = mechanism.partition(":")[0].strip()
        return {"callable_module_sha256": _sha256_file(_module_file(module_name))}
    if mechanism not in mechanism_names() or output_kind(mechanism) == TEXT_KIND:
        return {}  # a text mechanism is built by a factory: no one class to hash
    cls = mechanism_class(mechanism)
    package = tuple(cls.__module__.split("."))
    if package[:2] == _ADAPTERS and len(package) > 2:
        library = package[2]
        try:
            return {"library_version": f"{library} {importlib.metadata.version(library)}"}
        except importlib.metadata.PackageNotFoundError:
            return {"library_version": f"{library} <not installed>"}
    digest = hashlib.sha256()
    for klass in cls.__mro__:
        if isinstance(klass, type) and issubclass(klass, Mechanism):
            digest.update(_sha256_file(_module_file(klass.__module__)).encode())
    return {"class_source_sha256": digest.hexdigest()}
