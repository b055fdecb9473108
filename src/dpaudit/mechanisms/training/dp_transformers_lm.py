"""dp-transformers 1.0.0 as released: ``OpacusDPTrainer`` fine-tuning a tiny causal LM, audited.

dp-transformers (Microsoft; PyPI ``dp-transformers``) wraps Hugging Face's ``Trainer`` with
Opacus: ``OpacusDPTrainer(model, args, train_dataset, privacy_args)`` clips per-sample
gradients (``opacus.GradSampleModule``, ``DPOptimizer``) and accounts with Opacus'
``RDPAccountant`` and the ``prv-accountant`` package.  Facts read from its code
(``dp_transformers/dp_utils.py``, ``sampler.py``, ``arguments.py``):

* **sampling** — the training loader's batches come from ``ShuffledAuthorSampler``: a
  ``BatchSampler(RandomSampler(...), batch_size, drop_last=True)``, i.e. fixed-size batches
  of a fresh permutation each epoch;
* **accounting** — at ``sampling_probability = batch_size / len(dataset)`` as *Poisson*
  sampling (``find_noise_multiplier``'s docstring: "probability of a record being in batch
  for Poisson sampling"; ``RDPAccountant.step(noise_multiplier, sample_rate)`` after each
  optimizer step, ``⌊N/B⌋`` per epoch, while the PRV accountant and the noise calibration
  assume ``num_steps = int(epochs · (1/q + 1))``): the accounted mechanism is not the one
  that runs (shuffled batches can be less private than the Poisson number: Chua et al.,
  ICML 2024), and every epoch drops ``len(dataset) mod batch_size`` random records;
* **environment** — it pins ``torch<=1.12.1`` (no wheel for Python 3.11) and its callbacks
  call ``optimizer.signal_skip_step``, which the ``AcceleratedOptimizer`` of transformers ≥
  4.29 does not have (``AttributeError`` on the first step, measured with 4.57.6).  It runs
  as released on transformers 4.28.1 with torch 2.13 and Opacus 1.6 (installed with
  ``--no-deps`` in its own environment, ``.venv-dpt``; extra ``dp-transformers``).

:class:`DPTransformersCausalLM` is the training contract around it: a one-layer GPT-2 from
a config (no download; a word-level tokenizer over the private texts' words), fine-tuned by
``OpacusDPTrainer`` exactly as its README shows, the canary's score minus its mean token
loss under the final model (black box).  Its claim is what the package's own RDP accountant
reports for the base data's size; more records (canaries) give a smaller q and a smaller ε,
so the base size's ε is the largest any run of the audit is accounted at.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import io
import logging
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims.curves import ApproxDP
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, OptionalDependencyError
from dpaudit.mechanisms.training.contract import TrainingMechanism
from dpaudit.mechanisms.training.synthetic import checked_texts, text_of
from dpaudit.random import seeded_global_state
from dpaudit.text.corpus import default_corpus
from dpaudit.validation import check_int, check_positive

_EXTRA = "dp-transformers"
#: How to make the environment it runs in (its pins clash with the main one's).
INSTALL = (
    "run it in its own environment: python3 -m venv .venv-dpt && .venv-dpt/bin/pip install "
    "'torch==2.13.0' && .venv-dpt/bin/pip install -e '.[dp-transformers]' && "
    ".venv-dpt/bin/pip install --no-deps dp-transformers==1.0.0, then .venv-dpt/bin/dpaudit"
)
_SPECIAL = ("[PAD]", "[UNK]", "[EOS]")


def require(module: str, extra: str, purpose: str) -> Any:
    """Import ``module`` or raise :class:`OptionalDependencyError` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise OptionalDependencyError(module.split(".")[0], extra, purpose, INSTALL) from None


def _default_texts() -> tuple[str, ...]:
    return tuple(default_corpus().sentences)


@dataclass(frozen=True, eq=False)
class TinyCausalLM:
    """What one run releases: the fine-tuned model and the tokenizer it reads text with."""

    model: Any
    tokenizer: Any


@dataclass(frozen=True, eq=False)
class DPTransformersCausalLM(TrainingMechanism):
    """dp-transformers' ``OpacusDPTrainer`` on a one-layer GPT-2, scored by canary loss.

    ``records``: the private texts (default: the bundled 1000 sentences); ``noise_multiplier``
    and ``max_grad_norm`` as ``PrivacyArguments`` takes them; ``batch_size``
    (``per_device_train_batch_size``), ``epochs``, ``learning_rate``; ``width`` and
    ``max_length`` of the GPT-2 config and the tokenised texts; ``model_seed`` fixes θ₀ (the
    same in every run); ``delta`` of the claim.
    """

    records: tuple[Any, ...] = field(default_factory=_default_texts, metadata={"spec": False})
    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    batch_size: int = 32
    epochs: int = 1
    learning_rate: float = 1e-3
    width: int = 32
    max_length: int = 24
    model_seed: int = 0
    delta: float = 1e-5

    name: ClassVar[str] = "dp-transformers"
    default_canary_kind: ClassVar[str | None] = "random-tokens"
    reference: ClassVar[str] = (
        "dp-transformers 1.0.0 OpacusDPTrainer (Opacus DP-SGD, Abadi et al., CCS 2016) "
        "on a tiny causal LM"
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "records", checked_texts(self.records))
        check_positive("noise_multiplier", self.noise_multiplier)
        check_positive("max_grad_norm", self.max_grad_norm)
        check_int("batch_size", self.batch_size, minimum=1, maximum=max(1, len(self.records)))
        check_int("epochs", self.epochs, minimum=1, maximum=1000)
        check_positive("learning_rate", self.learning_rate)
        check_int("width", self.width, minimum=2, maximum=4096)
        check_int("max_length", self.max_length, minimum=2, maximum=1024)
        check_int("model_seed", self.model_seed, minimum=0, maximum=2**31 - 1)
        if not (isinstance(self.delta, int | float) and 0.0 < self.delta < 1.0):
            raise InvalidArgumentError("delta", self.delta, "a number in the open interval (0, 1)")

    # -- the claim -------------------------------------------------------------------------

    def accounted_epsilon(self, size: int) -> float:
        """ε the package's RDP accountant reports after a run on ``size`` records."""
        opacus = require("opacus", _EXTRA, "the dp-transformers trainer")
        q = int(self.batch_size) / size
        # DPCallback steps the accountant once per optimizer step: ⌊N/B⌋ per epoch (the
        # sampler drops the last partial batch), not the num_steps the PRV accountant gets.
        steps = int(self.epochs) * (size // int(self.batch_size))
        accountant = opacus.accountants.RDPAccountant()
        accountant.history = [(float(self.noise_multiplier), q, steps)]
        return float(accountant.get_epsilon(float(self.delta)))

    @functools.cached_property
    def claim(self) -> ApproxDP:
        """``(ε, delta)`` of the package's RDP accountant at the base data's size."""
        return ApproxDP(self.accounted_epsilon(len(self.records)), float(self.delta))

    @property
    def base(self) -> tuple[Any, ...]:
        return self.records

    def with_base(self, records: Sequence[Any]) -> DPTransformersCausalLM:
        return dataclasses.replace(self, records=tuple(records))

    # -- training --------------------------------------------------------------------------

    @functools.cached_property
    def vocabulary(self) -> dict[str, int]:
        """Word-level vocabulary: the special tokens, then the base texts' case-folded words."""
        words = sorted({w for r in self.records for w in text_of(r).casefold().split()})
        return {w: i for i, w in enumerate([*_SPECIAL, *words])}

    def _tokenizer(self) -> Any:
        tokenizers = require("tokenizers", _EXTRA, "the dp-transformers trainer")
        transformers = require("transformers", _EXTRA, "the dp-transformers trainer")
        inner = tokenizers.Tokenizer(tokenizers.models.WordLevel(self.vocabulary, "[UNK]"))
        inner.normalizer = tokenizers.normalizers.Lowercase()
        inner.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
        return transformers.PreTrainedTokenizerFast(
            tokenizer_object=inner, pad_token="[PAD]", unk_token="[UNK]", eos_token="[EOS]"
        )

    def _encode(self, tokenizer: Any, texts: Sequence[str]) -> dict[str, Any]:
        return tokenizer(
            [f"{t} [EOS]" for t in texts],
            padding="max_length",
            max_length=int(self.max_length),
            truncation=True,
        )

    def train(self, dataset: Any, rng: np.random.Generator) -> TinyCausalLM:
        """One ``OpacusDPTrainer.train()`` on ``dataset``; all randomness from ``rng``."""
        if not isinstance(rng, np.random.Generator):
            raise InvalidTypeError("rng", rng, "a numpy.random.Generator")
        torch = require("torch", _EXTRA, "the dp-transformers trainer")
        transformers = require("transformers", _EXTRA, "the dp-transformers trainer")
        datasets = require("datasets", _EXTRA, "the dp-transformers trainer")
        dp_utils = require("dp_transformers.dp_utils", _EXTRA, "the dp-transformers trainer")
        arguments = require("dp_transformers.arguments", _EXTRA, "the dp-transformers trainer")
        texts = [text_of(r) for r in dataset]
        tokenizer = self._tokenizer()
        encoded = self._encode(tokenizer, texts)
        data = datasets.Dataset.from_dict(dict(encoded))
        seed = int(rng.integers(2**31 - 1))
        with (
            seeded_global_state(int(rng.integers(2**63 - 1))),
            torch.random.fork_rng(devices=[]),
            tempfile.TemporaryDirectory() as scratch,
            _quiet(transformers),
        ):
            torch.manual_seed(int(self.model_seed))  # θ₀: the same in every run
            config = transformers.GPT2Config(
                vocab_size=len(self.vocabulary),
                n_positions=int(self.max_length),
                n_embd=int(self.width),
                n_layer=1,
                n_head=2,
            )
            model = transformers.GPT2LMHeadModel(config)
            args = arguments.TrainingArguments(
                output_dir=scratch,
                per_device_train_batch_size=int(self.batch_size),
                num_train_epochs=int(self.epochs),
                learning_rate=float(self.learning_rate),
                save_strategy="no",
                logging_strategy="no",
                report_to=[],
                no_cuda=True,
                disable_tqdm=True,
                remove_unused_columns=False,
                seed=seed,
            )
            privacy = arguments.PrivacyArguments(
                noise_multiplier=float(self.noise_multiplier),
                per_sample_max_grad_norm=float(self.max_grad_norm),
                target_delta=float(self.delta),
            )
            trainer = dp_utils.OpacusDPTrainer(
                model=model,
                args=args,
                train_dataset=data,
                privacy_args=privacy,
                data_collator=dp_utils.DataCollatorForPrivateCausalLanguageModeling(tokenizer),
            )
            trainer.train()
        model.eval()
        return TinyCausalLM(model, tokenizer)

    def score(self, model: Any, records: Sequence[Any]) -> np.ndarray:
        """Minus each record's mean token loss under the released model (black box)."""
        if not isinstance(model, TinyCausalLM):
            raise InvalidTypeError("model", model, "a TinyCausalLM from train")
        torch = require("torch", _EXTRA, "the dp-transformers trainer")
        encoded = self._encode(model.tokenizer, [text_of(r) for r in records])
        ids = torch.tensor(encoded["input_ids"])
        mask = torch.tensor(encoded["attention_mask"])
        with torch.no_grad():
            logits = model.model(input_ids=ids, attention_mask=mask).logits[:, :-1]
            targets = ids[:, 1:]
            keep = mask[:, 1:].to(logits.dtype)
            losses = torch.nn.functional.cross_entropy(
                logits.transpose(1, 2), targets, reduction="none"
            )
            mean = (losses * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
        return -mean.double().numpy()

    def spec(self) -> dict[str, Any]:
        """Name and parameters (the records by their number)."""
        out = super().spec()
        out["params"] = {"records": len(self.records), **out["params"]}
        return out


@contextlib.contextmanager
def _quiet(transformers: Any) -> Any:
    """Silence the trainer's progress prints and the libraries' warnings for one run."""
    level = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    logging.getLogger("opacus").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        transformers.logging.set_verbosity(level)


__all__ = ["DPTransformersCausalLM", "TinyCausalLM"]
