"""InvisibleInk (``invink`` 0.1.0) as released: DP synthetic text from an LLM, audited.

Paper: Vinod, Pillutla & Thakurta, "InvisibleInk: High-Utility and Low-Cost Text
Generation with Differential Privacy", NeurIPS 2025.  Each token is one exponential
mechanism over the vocabulary (the paper's Algorithm 1; the package's ``generate``):

* the model is run on ``B`` prompts holding one private reference each and one public
  prompt (no reference); ``B = batch_size − 1``;
* **difference clipping** (package ``difference_clip``): each private logit vector becomes
  ``pub + clip(l_i − pub, −C, C)``; the ``B`` clipped vectors are averaged;
* **top-k+** (package ``get_topk``): tokens whose *public* logit is at least the k-th
  largest minus ``2C/B`` are kept, the rest set to ``−∞``;
* the token is drawn by ``np.random.choice(V, p=softmax(avg / τ))`` from numpy's global
  generator, which ``generate`` seeds itself with ``random_seed`` (default **42**).

Claim (package ``compute_rho`` / ``get_epsilon`` / ``get_clip``): each token is
``ρ = ½ (C / (B τ))²``-zCDP; ``max_toks`` tokens compose to ``max_toks·ρ``, converted to
``(ε, δ)``-DP per reference text (default ``δ = 1e-5``), with ``C`` solved from the target
``ε``.  A per-*document* (one reference) claim; generations on disjoint batches compose
in parallel (README).

Running it: ``generate`` takes a model *name* and loads it itself
(``AutoModelForCausalLM.from_pretrained``), with no way to pass a model object.  The one
shim (:func:`supplied_model`) replaces the two loader names in ``invink.generate``'s
namespace for the duration of the call, so the model and tokenizer come from the caller
(SmolLM2 or a tiny test model); nothing downloads.  ``import invink`` raises
``SyntaxError`` on Python < 3.12 (``utils.py`` line 349 nests double quotes inside an
f-string, PEP 701, although the package declares ``Requires-Python >=3.8``):
:func:`import_invink` then compiles the package's own two modules with that one
``print`` line's inner quotes made single, and nothing else changed.

What the audit sees: black box, the released text of ``M([x, refs…])`` against
``M([x', refs…])`` (replace-one of the first reference); against ``ε`` per document with
``δ``, a few hundred rewrites cannot certify more than ``ln(n)``-sized losses, so such a
black-box audit is *inconclusive*, not "no violation".  The instrumented call
(:func:`exact_step_laws`) reads the law ``np.random.choice`` is handed at every step, on
``x`` and, with ``x``'s tokens forced, on ``x'``: the exact per-token Rényi divergences,
set against the claim's ``α·ρ``, and the exact loss of each output.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpaudit.adapters._sequence_laws import StepLaws
from dpaudit.adapters._support import require, seeded_global_random
from dpaudit.claims import ApproxDP, TextClaim
from dpaudit.errors import InvalidArgumentError, MechanismError, OptionalDependencyError
from dpaudit.validation import check_delta, check_epsilon

#: The package's one line Python < 3.12 cannot compile (PEP 701 nested quotes), and its fix.
PEP701_LINE = '{"all devices" if device_map == "auto" else device_map}'
PEP701_FIX = "{'all devices' if device_map == 'auto' else device_map}"
#: A public dataset description (InvisibleInk needs one; it holds nothing private).
DATASET_DESC = "Short English sentences about everyday life."
#: The package's default seed: ``generate(random_seed=42)`` when none is given.
PACKAGE_DEFAULT_SEED = 42
SOURCE = "Vinod, Pillutla & Thakurta, InvisibleInk, NeurIPS 2025; invink 0.1.0 get_epsilon"


def _compile_patched(name: str, path: Path, package: str) -> types.ModuleType:
    """Module ``name`` from ``path``, with :data:`PEP701_LINE` quoted for Python < 3.12."""
    source = path.read_text(encoding="utf-8")
    if source.count(PEP701_LINE) > 1:
        raise MechanismError(f"{path}: the PEP 701 line occurs more than once; not patching")
    module = types.ModuleType(name)
    module.__file__ = str(path)
    module.__package__ = package
    sys.modules[name] = module
    exec(compile(source.replace(PEP701_LINE, PEP701_FIX), str(path), "exec"), module.__dict__)
    return module


def import_invink() -> types.ModuleType:
    """``invink.generate``, imported as released (Python ≥ 3.12) or compiled with the one fix.

    Raises:
        OptionalDependencyError: invink is not installed.
    """
    if "invink.generate" in sys.modules:
        return sys.modules["invink.generate"]
    spec = importlib.util.find_spec("invink")
    if spec is None or not spec.submodule_search_locations:
        raise OptionalDependencyError("invink", "text-packages", "the InvisibleInk adapter")
    if sys.version_info >= (3, 12):
        return require("invink.generate", "text-packages", "the InvisibleInk adapter")
    root = Path(next(iter(spec.submodule_search_locations)))
    package = types.ModuleType("invink")
    package.__path__ = [str(root)]
    package.__file__ = str(root / "__init__.py")
    sys.modules["invink"] = package
    _compile_patched("invink.utils", root / "utils.py", "invink")
    generate = _compile_patched("invink.generate", root / "generate.py", "invink")
    package.generate = generate.generate  # type: ignore[attr-defined]
    return generate


@contextlib.contextmanager
def supplied_model(module: Any, model: Any, tokenizer: Any) -> Iterator[None]:
    """``invink.generate``'s two loaders replaced by ones returning ``model`` and ``tokenizer``.

    The replacement tokenizer loader does what the package's does to what it loads:
    padding and truncation sides as asked, ``pad_token = eos_token`` when there is none.
    """

    def tokenizer_loader(*, padding_side: str = "left", truncation_side: str = "right", **_: Any):
        tokenizer.padding_side = padding_side
        tokenizer.truncation_side = truncation_side
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer

    saved = (module.load_hf_tokenizer, module.load_hf_model, tokenizer.padding_side)
    module.load_hf_tokenizer = tokenizer_loader
    module.load_hf_model = lambda **_: model.eval()
    try:
        yield
    finally:
        module.load_hf_tokenizer, module.load_hf_model, tokenizer.padding_side = saved


class _InvinkChoice:
    """Stands in for ``np.random`` in ``invink.generate``: records each law, draws or forces."""

    def __init__(self, rng: np.random.Generator, forced: Sequence[int] | None) -> None:
        self.rng = rng
        self.forced = forced
        self.laws: list[np.ndarray] = []
        self.tokens: list[int] = []

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None) -> Any:
        law = np.asarray(p, np.float64)
        if size is not None or law.ndim != 1 or len(np.asarray(a)) != law.size:
            raise MechanismError("invink drew in a way this recorder does not read")
        step = len(self.laws)
        self.laws.append(law)
        if self.forced is not None:
            token = int(self.forced[step])
        else:  # the package's own call, on numpy's global generator (seeded by the unit)
            token = int(np.random.choice(a, p=p))
        self.tokens.append(token)
        return np.int64(token)

    def __getattr__(self, name: str) -> Any:
        return getattr(np.random, name)


class _InvinkNumpy:
    """``np`` for ``invink.generate``: numpy itself, but ``random`` is the recorder."""

    def __init__(self, random: _InvinkChoice) -> None:
        self.random = random

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def _check_budget(epsilon: float, delta: float) -> None:
    """The ``(ε, δ)`` ``generate`` calibrates for: ε as any claim's, δ strictly positive."""
    check_epsilon(epsilon)
    check_delta(delta)
    if delta == 0.0:
        raise InvalidArgumentError("delta", delta, "δ in (0, 1): invink needs one")


def _invink_generate(settings: Any, texts: list[str], num: int | str, seed: int) -> Any:
    """``invink.generate`` on ``texts`` with the caller's model and settings, prints swallowed.

    ``settings`` is an :class:`InvisibleInkRewriter` or :class:`InvisibleInkSynthesizer`
    (both carry the model, tokenizer, dataset description and the package's parameters).
    """
    module = import_invink()
    sink = io.StringIO()
    with (
        supplied_model(module, settings.model, settings.tokenizer),
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
    ):
        return module.generate(
            texts,
            "dpaudit-supplied-model",
            settings.dataset_desc,
            epsilon=settings.epsilon,
            delta=settings.delta,
            batch_size=settings.batch_size,
            num=num,
            max_toks=settings.max_toks,
            topk=settings.topk,
            temperature=settings.temperature,
            device_map=-1,
            random_seed=seed,
        )


@dataclass
class InvisibleInkRewriter:
    """``invink.generate`` on ``[text, *references]`` as ``f(text, n, rng) -> n texts``.

    Attributes:
        model, tokenizer: a causal LM with a chat template and its tokenizer.
        epsilon, delta: the target ``(ε, δ)`` ``generate`` calibrates ``C`` for.
        max_toks: tokens per generation (the claim's ``max_toks``).
        batch_size: the package's ``batch_size`` (``B + 1``: B private references).
        references: the other ``B − 1`` private references, the same in ``x`` and ``x'``.
        topk, temperature: the package's ``topk`` and ``temperature``.
        seed: ``None``: each generation gets a fresh ``random_seed`` from ``rng``;
            an int: every call passes it (42 is what the package uses when none is given).
    """

    model: Any
    tokenizer: Any
    epsilon: float = 10.0
    delta: float = 1e-5
    max_toks: int = 8
    batch_size: int = 2
    references: tuple[str, ...] = ()
    topk: int = 100
    temperature: float = 1.0
    seed: int | None = None
    dataset_desc: str = DATASET_DESC
    last_outputs: list[Any] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        _check_budget(self.epsilon, self.delta)
        if len(self.references) != self.batch_size - 2:
            raise InvalidArgumentError(
                "references", len(self.references), f"batch_size − 2 = {self.batch_size - 2}"
            )

    @property
    def claim(self) -> TextClaim:
        """``(ε, δ)`` per document (one reference text), as ``generate`` is calibrated."""
        return TextClaim(self.epsilon, unit="document", delta=self.delta, source=SOURCE)

    def describe(self) -> str:
        """A one-line description for reports."""
        seed = "fresh seed per call" if self.seed is None else f"random_seed={self.seed} fixed"
        return (
            f"invink 0.1.0 generate(ε={self.epsilon:g}, δ={self.delta:g}, B={self.batch_size - 1}, "
            f"max_toks={self.max_toks}, topk={self.topk}, τ={self.temperature:g}; {seed})"
        )

    def clip_norm(self) -> float:
        """``C`` as the package computes it (``get_clip``) for this configuration."""
        utils = import_invink().get_clip.__globals__
        return float(
            utils["get_clip"](
                epsilon=self.epsilon,
                num_toks=self.max_toks,
                batch_size=self.batch_size,
                delta=self.delta,
                temp=self.temperature,
            )
        )

    def claimed_rho_per_token(self) -> float:
        """The package's per-token zCDP ``ρ`` (``compute_rho`` of one token, B = batch − 1)."""
        rho = import_invink().get_clip.__globals__["compute_rho"]
        return float(rho(1, self.clip_norm(), self.batch_size - 1, self.temperature))

    def _generate(self, text: str, seed: int) -> Any:
        return _invink_generate(self, [text, *self.references], 1, seed)

    def generate_once(self, text: str, rng: np.random.Generator) -> str:
        """One generation on ``[text, *references]``; global generators restored after."""
        torch = require("torch", "text-packages", "the InvisibleInk adapter")
        seed = int(rng.integers(2**32)) if self.seed is None else self.seed
        with seeded_global_random(rng), torch.random.fork_rng(devices=[]):
            out = self._generate(text, seed)
        self.last_outputs = [out]
        return str(out.texts[0])

    def __call__(self, text: str, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` independent generations: the ``f(text, n, rng)`` of ``audit-rewriter``."""
        if not isinstance(text, str):
            raise InvalidArgumentError("text", type(text).__name__, "a str")
        return [self.generate_once(text, rng) for _ in range(n)]

    def _recorded(
        self, text: str, rng: np.random.Generator, forced: Sequence[int] | None
    ) -> _InvinkChoice:
        module = import_invink()
        recorder = _InvinkChoice(rng, forced)
        saved = module.np
        module.np = _InvinkNumpy(recorder)
        try:
            self.generate_once(text, rng)
        finally:
            module.np = saved
        return recorder

    def exact_step_laws(self, x: str, x_prime: str, rng: np.random.Generator) -> StepLaws:
        """The laws ``np.random.choice`` gets on ``x`` (drawn) and on ``x'`` (``x``'s tokens)."""
        on_x = self._recorded(x, rng, None)
        on_x_prime = self._recorded(x_prime, rng, on_x.tokens)
        if len(on_x_prime.laws) != len(on_x.laws):
            raise MechanismError("invink stopped at a different step with the same tokens")
        return StepLaws(on_x.tokens, on_x.laws, on_x_prime.laws)


@dataclass
class InvisibleInkSynthesizer:
    """``invink.generate`` on a whole private set: the synthetic-text generator of the paper.

    ``generate(private_texts, ...)`` partitions the texts into disjoint batches of
    ``B = batch_size − 1`` references (``num="auto"``: ``len(texts) // B`` generations) and
    releases one text per batch; each is ``(ε, δ)``-DP in its batch and the batches compose
    in parallel, so the corpus is ``(ε, δ)``-DP per private text (:attr:`claim`).  Called as
    ``f(private_texts, rng) -> texts``, it is the generator of
    :class:`~dpaudit.mechanisms.training.synthetic.CallableSyntheticText`, audited with
    canaries in the private set and scores on the released corpus.  ``seed`` as for
    :class:`InvisibleInkRewriter`.
    """

    model: Any
    tokenizer: Any
    epsilon: float = 10.0
    delta: float = 1e-5
    max_toks: int = 8
    batch_size: int = 2
    topk: int = 100
    temperature: float = 1.0
    seed: int | None = None
    dataset_desc: str = DATASET_DESC

    def __post_init__(self) -> None:
        _check_budget(self.epsilon, self.delta)

    @property
    def claim(self) -> ApproxDP:
        """``(ε, δ)`` per private text, as ``generate`` is calibrated (parallel batches)."""
        return ApproxDP(self.epsilon, self.delta)

    def __call__(self, private_texts: Sequence[str], rng: np.random.Generator) -> list[str]:
        """The released corpus: one text per disjoint batch of references."""
        torch = require("torch", "text-packages", "the InvisibleInk adapter")
        texts = [str(t) for t in private_texts]
        if len(texts) < self.batch_size - 1:
            raise InvalidArgumentError(
                "private_texts", len(texts), f"at least batch_size − 1 = {self.batch_size - 1}"
            )
        seed = int(rng.integers(2**32)) if self.seed is None else self.seed
        with seeded_global_random(rng), torch.random.fork_rng(devices=[]):
            out = _invink_generate(self, texts, "auto", seed)
        return [str(t) for t in out.texts]
