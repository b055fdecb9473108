"""Adapter: the released DP-MLM and PrivFill packages, run as they are (extra ``released-lm``).

Later papers rerun these packages as baselines, so the audit runs *their* code:

=========================== ================================ =================================
builder                     released call                    claim audited
=========================== ================================ =================================
:func:`dpmlm_package`       ``dpmlm`` 1.3.0                  ε per word (Meisenbacher et al.,
                            ``DPMLM.dpmlm_rewrite``          Findings of ACL 2024, §3)
:func:`privfill_dp_prompt`  ``privfill`` 0.1.0               ε per generated token (DP-Prompt,
                            ``PrivFillDP.privatize``         Utpala et al. 2023, §3)
:func:`privfill_dp_bart`    ``privfill`` 0.1.0               (ε, δ = 1e-5) per document
                            ``PrivFillDPBart.privatize``     (DP-BART, Igamberdiev & Habernal
                                                             2023, §3)
=========================== ================================ =================================

Each builder returns a :class:`ReleasedPackage`: the package's own object
behind a :data:`~dpaudit.auditors.rewriter.result.TextSampler`, the claim, and
for DP-MLM a *declared* model of what the code computes
(:class:`~dpaudit.mechanisms.rewriters.dpmlm_released.ReleasedDPMLM`, built
from the values the package object itself holds: its clip bounds and its
stopword set).  The white-box audit scores the package's real rewrites
exactly under that model and checks the model against them (the declared-
decoding test), so a finding about the model is a finding about the code
only when that check passes.

How the packages are made to run offline (nothing is downloaded):

* **Models.**  Both take a Hugging Face model *name* and load it themselves;
  pass a local directory (a real checkpoint, or
  :func:`dpaudit.text.models.checkpoints.save_tiny_checkpoint` in tests).
* **NLTK data.**  :func:`dpaudit.adapters.nltk_offline.ensure_nltk_data`, and
  ``nltk.download`` refused while the packages are imported.
* **Randomness.**  ``dpmlm`` draws with numpy's global ``np.random.choice``
  and ``privfill``'s DP-BART noise with ``np.random``; ``privfill``'s DP-Prompt
  samples inside ``transformers`` with torch's global generator.  Each batch of
  rewrites runs with both seeded from the audit's generator (full width) and
  restored afterwards, so a seed reproduces the audit.
* **transformers < 5.**  ``PrivFillDP`` builds a ``text2text-generation``
  pipeline, which transformers 5 removed: the extra pins ``transformers<5``
  and therefore lives in its own environment, ``.venv-released``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from dpaudit.adapters._support import require, seeded_global_random
from dpaudit.adapters.nltk_offline import NltkData, ensure_nltk_data, no_downloads
from dpaudit.claims import Neighbours, TextClaim, Unit
from dpaudit.errors import InvalidArgumentError, MechanismError
from dpaudit.mechanisms.rewriters.dpmlm_released import ReleasedDPMLM
from dpaudit.mechanisms.rewriters.masked import dp_mlm
from dpaudit.validation import check_epsilon

#: The released versions this adapter was written against (their code was read).
VERSIONS = {"dpmlm": "1.3.0", "privfill": "0.1.0"}
#: privfill's DP-Prompt generates at most this many tokens per sentence (``privatize_dp``).
PRIVFILL_MAX_NEW_TOKENS = 32


def import_released(package: str) -> tuple[ModuleType, NltkData]:
    """Import ``dpmlm`` or ``privfill`` offline; refuse a version this adapter was not read for."""
    if package not in VERSIONS:
        raise InvalidArgumentError("package", package, f"one of {', '.join(VERSIONS)}")
    nltk_data = ensure_nltk_data()
    with no_downloads():
        module = require(package, "released-lm", f"auditing the released {package} package")
    found = metadata.version(package)
    if found != VERSIONS[package]:
        raise MechanismError(
            f"{package} {found} is installed; this adapter reproduces {package} "
            f"{VERSIONS[package]} (pip install '{package}=={VERSIONS[package]}')"
        )
    return module, nltk_data


@dataclass(frozen=True)
class PackageModel:
    """The model and tokenizer a package object loaded, as the rewriters expect them."""

    model: Any
    tokenizer: Any
    source: str
    kind: str = "masked"


@dataclass(frozen=True)
class ReleasedPackage:
    """A released package's rewrite call, its claim, and what the audit knows of its code.

    Attributes:
        name: what the report calls it (package, version and class).
        sampler: ``f(document, n, rng) -> list[str]`` running the package's own call.
        claim: the claim its paper and documentation state.
        max_units: ``document ↦`` tokens or words one rewrite may release (the claim's n).
        declared: a white-box model of what the code computes, or ``None`` (black box only).
        provenance: model directory, NLTK data, package version, for the report.
    """

    name: str
    sampler: Callable[[str, int, np.random.Generator], list[str]]
    claim: TextClaim
    max_units: Callable[[str], int]
    declared: Any
    provenance: str


@contextmanager
def _seeded(rng: np.random.Generator) -> Iterator[None]:
    """numpy's and torch's global generators seeded from ``rng``, restored afterwards."""
    torch = require("torch", "released-lm", "the released packages")
    with seeded_global_random(rng), torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**62)))
        yield


@dataclass(frozen=True)
class _CallSampler:
    """``n`` calls of ``call(document)`` under one seeding of the global generators."""

    call: Callable[[str], str]

    def __call__(self, document: str, n: int, rng: np.random.Generator) -> list[str]:
        if not isinstance(document, str):
            raise InvalidArgumentError("document", type(document).__name__, "a str")
        with _seeded(rng):
            out = [self.call(document) for _ in range(n)]
        bad = [type(y).__name__ for y in out if not isinstance(y, str)]
        if bad:
            raise MechanismError(f"the released call returned {bad[0]}, not str")
        return out


def _words(document: str) -> int:
    return max(1, len(document.split()))


def dpmlm_package(
    model_dir: str | Path, epsilon: float, *, calibration: dict[str, float] | None = None
) -> ReleasedPackage:
    """``dpmlm.DPMLM(MODEL=model_dir).dpmlm_rewrite(document, epsilon)``, claimed ε per word.

    ``calibration`` is passed to the package as it documents (``clip_min``,
    ``clip_max``, ``sensitivity``); ``None`` keeps its roberta-base defaults.  The
    declared model is DP-MLM with the clip bounds and stopword set read back from
    the constructed package object, copying case as its code does.
    """
    check_epsilon(epsilon)
    dpmlm, nltk_data = import_released("dpmlm")
    package = dpmlm.DPMLM(MODEL=str(model_dir), calibration=calibration)
    clip = (float(package.clip_min), float(package.clip_max))
    # The declared model scores with the very model and tokenizer the package loaded.
    loaded = PackageModel(package.lm_model, package.tokenizer, str(model_dir))
    declared = ReleasedDPMLM(
        dp_mlm(loaded, epsilon, clip=clip), stopwords=frozenset(dpmlm.core.stop)
    )

    def rewrite(document: str) -> str:
        return package.dpmlm_rewrite(document, epsilon)[0]

    return ReleasedPackage(
        f"dpmlm {VERSIONS['dpmlm']} DPMLM.dpmlm_rewrite",
        _CallSampler(rewrite),
        TextClaim(epsilon, Unit.WORD, neighbours=Neighbours.EQUAL_LENGTH,
                  source="Meisenbacher et al. 2024, §3; dpmlm README (ε per word)"),
        _words, declared,
        f"model {model_dir}; clip {clip}; {nltk_data.describe()}",
    )  # fmt: skip


def _sentences(document: str) -> int:
    nltk = require("nltk", "released-lm", "the released packages")
    return max(1, len(nltk.sent_tokenize(document)))


def privfill_dp_prompt(model_dir: str | Path, epsilon: float) -> ReleasedPackage:
    """``privfill.PrivFillDP(model_dir).privatize(document, epsilon)``, claimed ε per token.

    The package rewrites each sentence (the document with that sentence blanked
    out) at the full ε, up to 32 tokens each, so one rewrite releases at most
    ``32 × sentences`` tokens: the claim's ``n``.
    """
    check_epsilon(epsilon)
    privfill, nltk_data = import_released("privfill")
    package = privfill.PrivFillDP(model_checkpoint=str(model_dir))

    def rewrite(document: str) -> str:
        return package.privatize(document, epsilon)

    return ReleasedPackage(
        f"privfill {VERSIONS['privfill']} PrivFillDP.privatize (DP-Prompt)",
        _CallSampler(rewrite),
        TextClaim(epsilon, Unit.TOKEN, source="Utpala et al. 2023, §3; privfill README"),
        lambda document: PRIVFILL_MAX_NEW_TOKENS * _sentences(document),
        None,
        f"model {model_dir}; clip [{package.model.min_logit}, {package.model.max_logit}]; "
        f"{nltk_data.describe()}",
    )


def privfill_dp_bart(model_dir: str | Path, epsilon: float) -> ReleasedPackage:
    """``privfill.PrivFillDPBart(model_dir).privatize(document, epsilon)``, (ε, 1e-5) per document.

    The package splits ε evenly over the document's sentences and calls its
    ``DPBart.privatize_batch`` (analytic Gaussian noise by default).
    """
    check_epsilon(epsilon)
    privfill, nltk_data = import_released("privfill")
    package = privfill.PrivFillDPBart(model_checkpoint=str(model_dir))

    def rewrite(document: str) -> str:
        return package.privatize(document, epsilon)

    return ReleasedPackage(
        f"privfill {VERSIONS['privfill']} PrivFillDPBart.privatize (DP-BART)",
        _CallSampler(rewrite),
        TextClaim(epsilon, Unit.DOCUMENT, float(package.model.delta),
                  source="Igamberdiev & Habernal 2023, §3; privfill README"),
        lambda document: 1, None,
        f"model {model_dir}; {nltk_data.describe()}",
    )  # fmt: skip
