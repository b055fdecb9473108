"""Adapter: any Python callable ``f(x, n, rng) -> n outputs`` with a claim from the user.

On the command line a MECHANISM containing ``:`` names such a callable::

    dpaudit audit mymod:my_mechanism --epsilon 1 --domain 0,1

``mymod`` is imported from the current directory or ``sys.path``; the
callable may be a dotted attribute (``mymod:Class.method``).  It receives the
input ``x`` as a float64 array of shape ``(dim,)``, the number of outputs
``n`` and a :class:`numpy.random.Generator` to draw from — or it may use
numpy's or Python's global generator, which dpaudit seeds from the work unit's
stream around every call (see :mod:`dpaudit.auditors.core.guard`; a fixed internal
seed is refused, OS entropy is run but marked not reproducible).  It returns
``n`` outputs: an array of shape ``(n, ...)`` (a 1-D array of length ``n`` is
``n`` scalar outputs), or a sequence of ``n`` values of any type — read by
:func:`dpaudit.adapters.encoding.encode_block`, the one reader of outputs for
real boxes and typed domains alike.  The claim comes from the command line:
``--epsilon``, ``--delta`` (default 0: pure ε-DP), ``--domain LOW,HIGH``
(default 0,1) and ``-p dim=N`` (default 1).

The adapter stores only the ``module:callable`` *name*, never the function
object, so it pickles to any worker: forked local workers inherit the import,
Ray workers import the module by name (it must be importable there, e.g. via
Ray's ``runtime_env`` working directory).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import inspect
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpaudit.adapters.encoding import OutputLayout, encode_block, layout_of
from dpaudit.claims import InputDomain, PrivacyClaim
from dpaudit.domains import Categories, Dataset, IntRange
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, MechanismError
from dpaudit.mechanisms.base import Mechanism, parameter
from dpaudit.mechanisms.domains import box_claim, check_box_domain
from dpaudit.mechanisms.output_grid import round_to_grid
from dpaudit.mechanisms.registry import register
from dpaudit.random import seeded_global_state, state_entropy
from dpaudit.validation import check_delta, check_epsilon, check_int

#: An input pair in the auditor's index space: ``((i,), (j,), origin)``.
IndexPair = tuple[tuple[float], tuple[float], str]

#: The example callable shown by ``dpaudit mechanisms`` (and used when no target is given).
DEFAULT_TARGET = "dpaudit.adapters.callable:unit_laplace"


def unit_laplace(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """Example user mechanism: ``x + Lap(1)`` per coordinate (1-DP on ``[0, 1]``, L1 sensitivity 1).

    The sum is rounded to a grid the input cannot move (:func:`dpaudit.round_to_grid`):
    without it, which float64 values can occur depends on ``x`` and the audit's
    representation sets find ε = ∞ (Mironov, CCS 2012).

    >>> import numpy as np
    >>> unit_laplace(np.zeros(1), 3, np.random.default_rng(0)).shape
    (3, 1)
    """
    return round_to_grid(x + rng.laplace(0.0, 1.0, size=(n, x.size)), 1.0)


def split_target(target: str, flag: str = "MECHANISM") -> tuple[str, str]:
    """``"pkg.mod:obj.attr"`` → ``("pkg.mod", "obj.attr")``, or raise naming ``flag``."""
    module, sep, attr = str(target).partition(":")
    if not sep or not module.strip() or not attr.strip() or ":" in attr:
        raise InvalidArgumentError(flag, target, "module:callable, e.g. mymod:my_mechanism")
    return module.strip(), attr.strip()


def import_target(target: str, flag: str = "MECHANISM") -> Callable[..., Any]:
    """The callable ``module:callable`` names (the current directory is searched first).

    Errors name ``flag`` (the argument the target came from); a module that raises while
    importing is the user's code failing, a :class:`MechanismError`.
    """
    module_name, attr = split_target(target, flag)
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise InvalidArgumentError(
            flag,
            target,
            f"module:callable with an importable module ({type(exc).__name__}: {exc})",
        ) from None
    except Exception as exc:  # the user's module failed while importing
        raise MechanismError(
            f"importing {module_name!r} for {'mechanism' if flag == 'MECHANISM' else flag} "
            f"{target!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InvalidArgumentError(
                flag, target, f"module:callable where {module_name} defines {attr}"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise InvalidArgumentError(flag, target, f"a callable ({attr} is a {type(obj).__name__})")
    return obj


@functools.lru_cache(maxsize=64)
def resolve_callable(target: str) -> Callable[..., Any]:
    """The mechanism ``module:callable`` names, checked to take ``f(x, n, rng)``."""
    obj = import_target(target)
    _check_signature(obj, target)
    return obj


def _check_signature(fn: Callable[..., Any], target: str) -> None:
    """Refuse, in one line, a callable that cannot be called as ``f(x, n, rng)``.

    Without this the first probe call fails with Python's own TypeError, which
    names neither the required signature nor the argument at fault.  Callables
    whose signature cannot be read (some builtins) are let through to the probe.
    """
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(None, None, None)
    except TypeError:
        raise InvalidArgumentError(
            "MECHANISM", target, f"a callable f(x, n, rng); {target} has signature {signature}"
        ) from None


def probe_layout(fn: Callable[..., Any], label: str, x: Any) -> OutputLayout:
    """The :class:`~dpaudit.adapters.encoding.OutputLayout` of ``fn``'s outputs, from one
    call ``fn(x, 2, rng)`` with a fixed generator (global generators seeded and restored)."""
    where = f"mechanism {label!r} on x = {_input_text(x)}"
    rng = np.random.default_rng(0)
    # Global generators seeded (and restored) as for every sample: a function that
    # draws from np.random / random must not consume the caller's streams here.
    with seeded_global_state(state_entropy(rng)):
        out = _call_naming(where, fn, copy.deepcopy(x), 2, rng)
    return layout_of(out, 2, where)


def probe_output_shape(fn: Callable[..., Any], label: str, x: tuple[float, ...]) -> tuple[int, ...]:
    """Shape of one encoded output of ``fn`` on the box point ``x`` (one call, ``n = 2``)."""
    return _box_layout(fn, label, x).shape


def _box_layout(fn: Callable[..., Any], label: str, x: tuple[float, ...]) -> OutputLayout:
    """:func:`probe_layout` at a box point, once per (function, label, point) and process."""
    key = (fn, label, json.dumps(x))
    if key not in _LAYOUTS:
        _LAYOUTS[key] = probe_layout(fn, label, np.asarray(x, dtype=np.float64))
    return _LAYOUTS[key]


@functools.lru_cache(maxsize=64)
def _probe_target(target: str, x: tuple[float, ...]) -> OutputLayout:
    return _box_layout(resolve_callable(target), target, x)


def _input_text(x: Any) -> str:
    if isinstance(x, np.ndarray):
        return str(x.ravel()[:4].tolist())
    text = repr(x)
    return text if len(text) <= 60 else text[:57] + "..."


def _call_naming(where: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``; an error of the user's code becomes a MechanismError saying ``where``."""
    try:
        return fn(*args)
    except MechanismError:
        raise
    except Exception as exc:  # the user's code failed: say whose and where
        raise MechanismError(f"{where} raised {type(exc).__name__}: {exc}") from exc


def call_user_function(
    fn: Callable[..., Any],
    label: str,
    x: Any,
    n: int,
    rng: np.random.Generator,
    layout: OutputLayout,
) -> np.ndarray:
    """``fn(x, n, rng)`` encoded by ``layout`` (:func:`~dpaudit.adapters.encoding.encode_block`),
    errors naming the mechanism and the input; on a box a 1-D array is ``(n, 1)``."""
    where = f"mechanism {label!r} on input {_input_text(x)}"
    return encode_block(_call_naming(where, fn, x, n, rng), n, layout, where)


class _RegistryOrTargetName:
    """``CallableMechanism.name``: ``"callable"`` on the class (the registry name), the
    ``module:callable`` target on an instance, so every message names the user's code."""

    def __get__(self, obj: Any, objtype: Any = None) -> str:
        return "callable" if obj is None else obj.target


@register
@dataclass(frozen=True)
class CallableMechanism(Mechanism):
    """A user callable ``f(x, n, rng)`` named ``module:callable``, with a user-given claim."""

    name: ClassVar[str] = _RegistryOrTargetName()  # type: ignore[assignment]
    reference: ClassVar[str] = "user code: f(x, n, rng) -> n outputs (an array or a sequence)"
    summary: ClassVar[str] = "any Python callable given as module:callable (claim from the CLI)"

    target: str = parameter(DEFAULT_TARGET, doc="module:callable with signature f(x, n, rng)")
    delta: float = parameter(0.0, doc="claimed δ in [0, 1) (0: pure ε-DP)")
    domain: tuple[float, float] = parameter(
        (0.0, 1.0), doc="input range [LOW, HIGH] per coordinate"
    )
    dim: int = parameter(1, doc="number of input coordinates")

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        check_delta(self.delta)
        check_int("dim", self.dim, minimum=1)
        split_target(self.target)
        check_box_domain(self.domain, finite=False)

    def spec(self) -> dict[str, Any]:
        """Registry name ``callable`` (the instance's ``name`` is its target)."""
        return {"mechanism": "callable", "params": self.params()}

    @property
    def function(self) -> Callable[..., Any]:
        """The user's callable (imported on first use in each process)."""
        return resolve_callable(self.target)

    def user_code(self) -> Any:
        """The function ``target`` names."""
        return resolve_callable(self.target)

    @property
    def claim(self) -> PrivacyClaim:
        return box_claim(self.epsilon, self.dim, self.domain, delta=self.delta)

    @property
    def output_layout(self) -> OutputLayout:
        """How the callable's outputs are read, fixed by one probe call at a domain point."""
        low, high = self.domain
        corner = min(max(0.0, low), high)  # a point of the domain: 0 when it is inside
        return _probe_target(self.target, (corner,) * self.dim)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.output_layout.shape

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return call_user_function(self.function, self.target, x, n, rng, self.output_layout)


@dataclass(frozen=True)
class FunctionMechanism(Mechanism):
    """A function object ``f(x, n, rng)`` with a :class:`PrivacyClaim`, for in-process use.

    Used by :func:`dpaudit.testing.assert_no_violation`.  Unlike
    :class:`CallableMechanism` it holds the function itself, so it reaches
    worker processes only if the function pickles (a module-level function).
    """

    name: ClassVar[str] = "function"
    reference: ClassVar[str] = "user code: f(x, n, rng) -> n outputs (an array or a sequence)"
    summary: ClassVar[str] = "a Python function object with a user-given claim"

    function: Callable[..., Any] = unit_laplace
    claimed: PrivacyClaim | None = None
    #: Typed domains only: pairs ``(a, b)`` of values the user asks to audit (``--pair``);
    #: their values join the index points, :meth:`given_pairs` gives them as index pairs.
    extra_pairs: tuple[tuple[Any, Any], ...] = field(default=(), hash=False)

    def __post_init__(self) -> None:
        check_epsilon(self.epsilon)
        if not callable(self.function):
            raise InvalidTypeError("mechanism", self.function, "a callable f(x, n, rng)")
        if not isinstance(self.claimed, PrivacyClaim):
            raise InvalidTypeError("claim", self.claimed, "a dpaudit.claims.PrivacyClaim")
        dom = self.claimed.domain
        if not isinstance(dom, InputDomain) and not callable(getattr(dom, "index_points", None)):
            raise InvalidTypeError("domain", dom, "an InputDomain or a dpaudit.domains domain")
        if self.extra_pairs and isinstance(dom, InputDomain):
            raise InvalidArgumentError("pairs", self.extra_pairs, "typed pairs with a typed domain")
        for a, b in self.extra_pairs:
            dom.validate(a, "x")
            dom.validate(b, "x_prime")
            if hasattr(dom, "are_neighbours") and not dom.are_neighbours(a, b):
                raise InvalidArgumentError(
                    "pair", (a, b), f"two {dom.neighbours} neighbours in {dom.describe()}"
                )

    def user_code(self) -> Any:
        """The function object."""
        return self.function

    def spec(self) -> dict[str, Any]:
        """JSON-ready description (the function by name; it is not rebuilt from this)."""
        claim = self.claimed
        assert claim is not None  # checked in __post_init__
        dom = claim.domain
        return {
            "mechanism": "function",
            "params": {
                "function": self.label,
                "epsilon": self.epsilon,
                "delta": claim.delta,
                "domain": dom.describe(),
                "neighbouring": claim.neighbouring,
                "pairs": [[_short(a), _short(b)] for a, b in self.extra_pairs],
            },
        }

    @property
    def label(self) -> str:
        """The function's qualified name, for messages."""
        fn = self.function
        return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', repr(fn))}"

    @property
    def typed(self) -> bool:
        """True when the claim's domain is a typed :mod:`dpaudit.domains` domain."""
        return not isinstance(self.claimed.domain, InputDomain)  # type: ignore[union-attr]

    @property
    def claim(self) -> PrivacyClaim:
        """The user's claim; for a typed domain, the same claim over the *index* box.

        The black-box auditor works on float boxes: a typed domain's
        ``index_points()`` (any two of them neighbours) are shown to it as the
        integers ``0..K-1``, and :meth:`_sample` decodes the index to the typed value.
        """
        assert self.claimed is not None  # checked in __post_init__
        if not self.typed:
            return self.claimed
        dom = self.claimed.domain
        points = self.index_points()
        return dataclasses.replace(
            self.claimed,
            domain=InputDomain((1,), 0.0, float(len(points) - 1), integer=True),
            neighbouring=f"index i stands for point i of {dom.describe()}: "
            + "; ".join(repr(p)[:40] for p in points[:6]),
        )

    @property
    def claim_text(self) -> str:
        """The user's claim over the user's domain (the audit runs on its index box)."""
        assert self.claimed is not None  # checked in __post_init__
        return self.claimed.describe()

    def index_points(self) -> tuple[Any, ...]:
        """Typed domains: the values the auditor sees as indices ``0..K-1``.

        The user's pairs first, then the values of the domain's listed candidate
        pairs (:meth:`neighbouring_pairs`), else its ``index_points()``.  Computed once
        per instance (every sampling call reads it).
        """
        cached = self.__dict__.get("_index_points")
        if cached is None:
            cached = self._typed_points()
            object.__setattr__(self, "_index_points", cached)
            keys = {}
            for i, v in enumerate(cached):
                keys.setdefault(_value_key(v), i)
            object.__setattr__(self, "_index_keys", keys)
        return cached

    def _typed_points(self) -> tuple[Any, ...]:
        dom = self.claimed.domain  # type: ignore[union-attr]
        values = [v for p in self.extra_pairs for v in p]
        cands = _listed_candidates(dom)
        values += [v for p in cands for v in p] if cands is not None else list(dom.index_points())
        # Integers and categories are all neighbours: the input design may screen the
        # whole domain, so its points are all shown (the listed pairs' values first).
        if isinstance(dom, IntRange) and dom.high - dom.low < DESIGN_VALUES:
            values += list(range(dom.low, dom.high + 1))
        elif isinstance(dom, Categories):
            values += list(dom.values[:DESIGN_VALUES])
        elif isinstance(dom, Dataset):  # after the listed ones, whose indices stay as they were
            values += [v for p in dom.design_pairs(DESIGN_RECORDS) for v in p]
        return _unique_values(values)

    def design_neighbours(self) -> list[IndexPair] | None:
        """A typed dataset's design pairs (:meth:`dpaudit.domains.Dataset.design_pairs`) as
        index pairs, for the input design to screen; ``None`` for every other domain."""
        if not self.lists_only_neighbours:
            return None
        dom = self.claimed.domain  # type: ignore[union-attr]
        return [self._index_pair(a, b, "design: ") for a, b in dom.design_pairs(DESIGN_RECORDS)]

    @property
    def lists_only_neighbours(self) -> bool:
        """True when the listed pairs are the only neighbours (a dataset); for integers and
        categories they are the auditor's first guesses and any two points are neighbours."""
        return self.typed and isinstance(self.claimed.domain, Dataset)  # type: ignore[union-attr]

    def _index_of(self, value: Any) -> int:
        self.index_points()
        return self.__dict__["_index_keys"][_value_key(value)]

    def _index_pair(self, a: Any, b: Any, origin: str) -> IndexPair:
        """``(a, b)`` as indices; the origin names both values (a witness shows indices)."""
        i, j = self._index_of(a), self._index_of(b)
        return ((float(i),), (float(j),), f"{origin}index {i} = {_short(a)}, {j} = {_short(b)}")

    def input_value(self, x: Any) -> Any:
        """Typed domains: the user's value an index input ``(i,)`` stands for; else ``None``.

        Read by the black-box witness so that it shows ``x`` and ``x'`` as the user's
        values (:func:`dpaudit.auditors.blackbox.outcome.typed_inputs`).
        """
        if not self.typed:
            return None
        return copy.deepcopy(self.index_points()[int(np.ravel(x)[0])])

    @property
    def input_encoding(self) -> str:
        """The rule between the user's inputs and the numbers the auditor sampled (typed only)."""
        if not self.typed:
            return ""
        dom = self.claimed.domain  # type: ignore[union-attr]
        return (
            f"x and x' are values of {dom.describe()}; the auditor sampled them as indices "
            f"(x_encoded = [i]) into its {len(self.index_points())} points: the user's --pair "
            "values first, then the domain's candidate pairs' values (or its own points), in order"
        )

    def given_pairs(self) -> tuple[IndexPair, ...]:
        """The user's typed pairs as index pairs ``(x, x', origin)`` (for ``AuditConfig.pairs``,
        wrapped in :class:`~dpaudit.auditors.blackbox.pairs.InputPair`)."""
        return tuple(self._index_pair(a, b, "given: ") for a, b in self.extra_pairs)

    def neighbouring_pairs(self) -> list[IndexPair] | None:
        """Typed domains: the domain's own candidate pairs as index pairs; else ``None``.

        Read by :func:`dpaudit.auditors.blackbox.pairs.listed_pairs`: the auditor tries
        these (a dataset's neighbours are not any two of its index points).  ``None``
        for a large category set (its index points are all neighbours; the auditor
        picks among them) and for float boxes.
        """
        if not self.typed:
            return None
        cands = _listed_candidates(self.claimed.domain)  # type: ignore[union-attr]
        if cands is None:
            return None
        return [self._index_pair(a, b, "") for a, b in cands]

    @property
    def output_layout(self) -> OutputLayout:
        """How the function's outputs are read, on a box and a typed domain alike: fixed
        by one probe call at a domain point (a typed domain's first index point)."""
        if self.typed:
            point = self.index_points()[0]
            key = (self.function, self.label, _value_key(point))
            if key not in _LAYOUTS:
                _LAYOUTS[key] = probe_layout(self.function, self.label, point)
            return _LAYOUTS[key]
        x = tuple(float(v) for v in _domain_point(self.claim.domain).ravel())
        return _box_layout(self.function, self.label, x)

    @property
    def output_shape(self) -> tuple[int, ...]:
        return self.output_layout.shape

    def _sample(self, x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        value: Any = x
        if self.typed:
            value = copy.deepcopy(self.index_points()[int(x.ravel()[0])])
        return call_user_function(self.function, self.label, value, n, rng, self.output_layout)


#: The output layout per (function, label, probe point): one probe call per process.
_LAYOUTS: dict[tuple[Any, str, str], OutputLayout] = {}

#: A typed domain's candidate pairs are listed to the auditor when there are at most
#: this many (a dataset's always: its index points are not all neighbours).
MAX_LISTED_PAIRS = 32
#: Integers and categories shown to the auditor as index points at most (beyond the
#: listed pairs' values): every one of a domain this small, so the input design sees all.
DESIGN_VALUES = 128
#: Record values a dataset's design sweeps (one neighbouring pair each).
DESIGN_RECORDS = 64


def _listed_candidates(domain: Any) -> tuple[tuple[Any, Any], ...] | None:
    """The domain's candidate pairs the auditor should try, or ``None`` (pick among points)."""
    cands = tuple(domain.candidate_pairs())
    if isinstance(domain, Dataset) or len(cands) <= MAX_LISTED_PAIRS:
        return cands
    return None


def _value_key(value: Any) -> str:
    """Identity of a typed value (type-sensitive: ``1``, ``1.0``, ``True`` and ``"1"`` differ)."""
    return json.dumps([type(value).__name__, value], sort_keys=True, default=repr)


def _unique_values(values: list[Any]) -> tuple[Any, ...]:
    seen: set[str] = set()
    out = []
    for v in values:
        k = _value_key(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return tuple(out)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _domain_point(domain: InputDomain) -> np.ndarray:
    """A point of the domain: 0 where it lies inside, else the nearer end."""
    return np.full(domain.shape, min(max(0.0, domain.low), domain.high), dtype=np.float64)
