"""Mechanisms: how to sample and what they claim.

Importing this package registers every built-in mechanism; list them with
:func:`mechanism_names` and build one with :func:`make_mechanism`.  The LM rewriters
(output kind ``"text"``, extra ``lm``) are registered by the path of their constructor
(:data:`TEXT_FACTORIES`), so that importing the registry imports neither their modules nor
PyTorch.  Adapters
(other libraries' mechanisms, user callables) sit *above* this package:
importing :mod:`dpaudit.adapters` registers them (the CLI does).  Nothing here
imports ``adapters/``, ``auditors/`` or anything above; mechanisms may import
``analysis/`` (the maths behind their analytic truth), never the reverse.
"""

from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.registry import (
    from_spec,
    make_mechanism,
    mechanism_class,
    mechanism_names,
    register,
    register_factory,
)

# Built-in mechanisms register themselves on import.
from dpaudit.mechanisms import laplace  # noqa: F401  isort: skip
from dpaudit.mechanisms import gaussian  # noqa: F401  isort: skip
from dpaudit.mechanisms import randomized_response  # noqa: F401  isort: skip
from dpaudit.mechanisms import grr  # noqa: F401  isort: skip
from dpaudit.mechanisms import unary_encoding  # noqa: F401  isort: skip
from dpaudit.mechanisms import identity  # noqa: F401  isort: skip
from dpaudit.mechanisms import random_bits  # noqa: F401  isort: skip
from dpaudit.mechanisms import adept  # noqa: F401  isort: skip
from dpaudit.mechanisms import dptext  # noqa: F401  isort: skip
from dpaudit.mechanisms import ome  # noqa: F401  isort: skip
from dpaudit.mechanisms import textbook_float_laplace  # noqa: F401  isort: skip
from dpaudit.mechanisms import word  # noqa: F401  isort: skip  (word-level mechanisms)

#: The text mechanisms: name → constructor ``(model, epsilon, **params)``, as
#: ``mechanisms.rewriters.catalogue.FACTORY_PATHS`` (a test keeps the two equal).
TEXT_FACTORIES = {
    "dp-prompt": "dpaudit.mechanisms.rewriters.causal:dp_prompt",
    "dp-paraphrase": "dpaudit.mechanisms.rewriters.causal:dp_paraphrase",
    "dp-decoding": "dpaudit.mechanisms.rewriters.causal:dp_decoding",
    "dp-mlm": "dpaudit.mechanisms.rewriters.catalogue:dp_mlm_capped",
    "dp-bart": "dpaudit.mechanisms.rewriters.bart:dp_bart",
}
for _name, _target in TEXT_FACTORIES.items():
    register_factory(_name, "text", _target)

__all__ = [
    "TEXT_FACTORIES",
    "Mechanism",
    "from_spec",
    "make_mechanism",
    "mechanism_class",
    "mechanism_names",
    "parameter",
    "register",
    "register_factory",
]
