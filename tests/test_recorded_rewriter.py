"""A user's own generation call, recorded as it runs (needs PyTorch and transformers: extra lm).

Every call below is written as a user writes one, with ``model.generate`` and its own
settings, on the tiny random Llama of ``dpaudit.text.models.tiny_model``; none is told to
dpaudit by a declaration.  The recording is checked against the closed form of the clipped
exponential mechanism (the same tokens teacher-forced under the declared decoding), and the
flaws of DP-Prompt code found in released rewriters are flagged by the exact loss:
greedy decoding, Hugging Face's default ``top_k=50``, unclipped logits, and a cap taken from
the input's length.  The correct clipped call is not flagged, on two seeds.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the recorder needs PyTorch (extra lm)")
transformers = pytest.importorskip("transformers", reason="the recorder needs transformers")

from _tiny_lm import lively_causal  # noqa: E402
from lm_threads import one_torch_thread  # noqa: E402, F401  (autouse fixture)

from dpaudit.auditors.rewriter import RewriterAuditConfig, audit_rewriter, summary  # noqa: E402
from dpaudit.auditors.rewriter.declared import ROW_TOLERANCE, check_declaration  # noqa: E402
from dpaudit.claims import TextClaim  # noqa: E402
from dpaudit.errors import MechanismError  # noqa: E402
from dpaudit.mechanisms.rewriters import dp_prompt  # noqa: E402
from dpaudit.mechanisms.rewriters.decoding import Decoding, exponential_decoding  # noqa: E402
from dpaudit.mechanisms.rewriters.recorded import (  # noqa: E402
    RecordedRewriter,
    RecordingError,
    decoding_seen,
)
from dpaudit.text.models import tiny_model  # noqa: E402
from dpaudit.verdicts import Verdict  # noqa: E402

EPSILON, CLIP, TOKENS = 2.0, (-1.0, 1.0), 6
TEMPERATURE = 2 * (CLIP[1] - CLIP[0]) / EPSILON
PAIRS = [("the patient was sick today", "the patient was happy today", "one word")]
SMALL = RewriterAuditConfig(samples=40, final_samples=60, seed=0)


class ClipThenTemper(transformers.LogitsProcessor):
    """The user's DP-Prompt processor: clip the logits, then divide by the temperature."""

    def __call__(self, input_ids, scores):
        return scores.clamp(*CLIP) / TEMPERATURE


def _inputs(tokenizer, text):
    return tokenizer(f"{text} .", return_tensors="pt")


def correct_call(model, tokenizer, text):
    return model.generate(
        **_inputs(tokenizer, text), do_sample=True, top_k=0, temperature=1.0,
        max_new_tokens=TOKENS,
        logits_processor=transformers.LogitsProcessorList([ClipThenTemper()]),
    )  # fmt: skip


def greedy_call(model, tokenizer, text):  # DP-Paraphrase code that set a temperature only
    inputs = _inputs(tokenizer, text)
    return model.generate(**inputs, temperature=TEMPERATURE, max_new_tokens=TOKENS)


def default_top_k_call(model, tokenizer, text):  # top_k left at transformers' default, 50
    return model.generate(
        **_inputs(tokenizer, text), do_sample=True, temperature=1.0, max_new_tokens=TOKENS,
        logits_processor=transformers.LogitsProcessorList([ClipThenTemper()]),
    )  # fmt: skip


def unclipped_call(model, tokenizer, text):  # the temperature of the claim, no clipping
    return model.generate(
        **_inputs(tokenizer, text), do_sample=True, top_k=0, temperature=TEMPERATURE,
        max_new_tokens=TOKENS,
    )  # fmt: skip


def input_cap_call(model, tokenizer, text):  # max_new_tokens = the prompt's length
    inputs = _inputs(tokenizer, text)
    return model.generate(
        **inputs, do_sample=True, top_k=0, temperature=1.0,
        max_new_tokens=int(inputs["input_ids"].shape[1]) - 4, min_new_tokens=0,
        logits_processor=transformers.LogitsProcessorList([ClipThenTemper()]),
    )  # fmt: skip


@pytest.fixture(scope="module")
def model():
    return tiny_model("causal", seed=0)


@pytest.fixture(scope="module")
def lively():
    """The tiny model with N(0, 1) weights (:func:`_tiny_lm.lively_causal`)."""
    return lively_causal()


def _recorded(model, call, tokens: int = TOKENS + 2) -> RecordedRewriter:
    claim = TextClaim(EPSILON, "token", source="the user's claim (per token)")
    return RecordedRewriter(call.__name__, model, call, claim, max_new_tokens=tokens)


def test_the_recording_is_the_clipped_exponential_mechanism(model) -> None:
    """Closed form: the same tokens teacher-forced under the declared DP-Prompt decoding (the
    processor's arithmetic in float32, so agreement to 1e-5 in log-probability)."""
    recorded = _recorded(model, correct_call)
    declared = dp_prompt(model, EPSILON, clip=CLIP, max_new_tokens=TOKENS, template="{document} .",
                         chat=False)  # fmt: skip
    document = PAIRS[0][0]
    outputs = recorded.sample_ids(document, 5, np.random.default_rng(3))
    for mine, theirs in zip(
        recorded.token_log_probs(document, outputs),
        declared.token_log_probs(document, outputs),
        strict=True,
    ):
        np.testing.assert_allclose(mine, theirs, atol=1e-5)
    seen = decoding_seen(recorded, document, np.random.default_rng(0))
    assert seen["kinds"] == ["sampled"] and seen["support_min"] == seen["vocabulary"]


def test_a_rewrite_is_a_function_of_the_audit_seed_and_torch_is_left_alone(model) -> None:
    recorded = _recorded(model, correct_call)
    before = torch.random.get_rng_state()
    one = recorded.sample_ids("the doctor was happy", 4, np.random.default_rng(7))
    two = recorded.sample_ids("the doctor was happy", 4, np.random.default_rng(7))
    assert all(np.array_equal(a, b) for a, b in zip(one, two, strict=True))
    assert torch.equal(before, torch.random.get_rng_state())


def test_greedy_decoding_is_recorded_as_a_point_mass(lively) -> None:
    seen = decoding_seen(_recorded(lively, greedy_call), PAIRS[0][0], np.random.default_rng(0))
    assert seen["kinds"] == ["greedy"] and seen["support_max"] == 1


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (greedy_call, "greedy: the other document's argmax differs"),
        (default_top_k_call, "top-k 50: the support depends on the document"),
    ],
)
def test_a_decoding_whose_support_depends_on_the_input_has_infinite_loss(
    lively, call, reason
) -> None:
    result = audit_rewriter(_recorded(lively, call), PAIRS, SMALL)
    detail = result.detail
    assert detail.exact_verdict is Verdict.VIOLATION, reason
    assert math.isinf(detail.max_exact_token_loss), reason
    # one rewrite of probability 0 under x′ refutes a pure claim exactly, whatever the counts
    assert result.verdict is Verdict.VIOLATION and math.isinf(result.epsilon_lower_bound)
    assert result.witness.kind.value == "analytic" and "position" in result.witness.event
    text = summary(result)
    assert "recorded from the call as it ran" in text and "verdict: violation" in text


def test_unclipped_logits_exceed_the_per_token_claim(lively) -> None:
    result = audit_rewriter(_recorded(lively, unclipped_call), PAIRS, SMALL)
    assert result.detail.exact_verdict is Verdict.VIOLATION
    assert EPSILON < result.detail.max_exact_token_loss < math.inf


def test_a_cap_taken_from_the_input_makes_longer_rewrites_impossible(lively) -> None:
    pairs = [("the patient was sick", "the patient was very sick today", "length")]
    result = audit_rewriter(_recorded(lively, input_cap_call), pairs, SMALL)
    assert result.detail.exact_verdict is Verdict.VIOLATION
    assert math.isinf(result.detail.max_exact_token_loss)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_correct_clipped_call_is_not_flagged(lively, seed: int) -> None:
    """On the lively model too: clipping bounds every token's loss by ε whatever the logits."""
    config = RewriterAuditConfig(samples=40, final_samples=60, seed=seed)
    result = audit_rewriter(_recorded(lively, correct_call), PAIRS, config)
    detail = result.detail
    assert detail.exact_verdict is Verdict.NO_VIOLATION_FOUND
    assert detail.max_exact_token_loss <= EPSILON + 1e-5
    assert result.verdict is not Verdict.VIOLATION


def test_a_call_that_draws_no_token_through_the_recorder_is_refused(model) -> None:
    def own_sampler(model, tokenizer, text):
        return text.upper()

    with pytest.raises(RecordingError, match="cannot be recorded"):
        _recorded(model, own_sampler).sample_ids("the day", 1, np.random.default_rng(0))


def test_a_batched_call_is_refused_with_the_reason(model) -> None:
    def two_at_once(model, tokenizer, text):
        return model.generate(**_inputs(tokenizer, text), do_sample=True, top_k=0,
                              max_new_tokens=3, num_return_sequences=2)  # fmt: skip

    with pytest.raises(RecordingError, match="one sequence per call"):
        _recorded(model, two_at_once).sample_ids("the day", 1, np.random.default_rng(0))


def test_a_call_that_raises_is_a_mechanism_error_naming_it(model) -> None:
    def broken(model, tokenizer, text):
        raise ValueError("no GPU here")

    with pytest.raises(MechanismError, match="broken raised ValueError: no GPU here"):
        _recorded(model, broken).sample_ids("the day", 1, np.random.default_rng(0))


def test_a_call_longer_than_the_audits_cap_is_refused(model) -> None:
    with pytest.raises(RecordingError, match="max_new_tokens = 2"):
        _recorded(model, correct_call, tokens=2).sample_ids("the day", 3, np.random.default_rng(1))


GENERATION_MODULE = """
import transformers


def call(model, tokenizer, text):  # top_k left at transformers' default
    inputs = tokenizer(text + " .", return_tensors="pt")
    return model.generate(**inputs, do_sample=True, temperature=4.0, max_new_tokens=5)
"""


def test_cli_records_a_generation_call_and_names_the_flaw(tmp_path, monkeypatch, capsys) -> None:
    from _cli import run_cli_quiet

    (tmp_path / "mygen.py").write_text(GENERATION_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = run_cli_quiet(
        capsys, "audit-rewriter", "mygen:call", "--model", "tiny", "--epsilon", "2",
        "--pair", "the patient was sick today", "the patient was happy today",
        "--samples", "30", "--final-samples", "40",
    )  # fmt: skip
    assert code == 0, out
    lines = out.splitlines()  # the lines docs/guide/lm-rewriters.md shows
    assert lines[0] == (
        "mygen:call: recorded from the call as it ran (≤ 16 tokens); claim ε = 2 per token "
        "(any documents)"
    )
    assert "code under audit: the user's generation call, recorded as it ran" in lines[1]
    assert lines[2].startswith(
        "white-box (exact, under the decoding recorded from the call as it ran): VIOLATION: "
        "largest loss of one token ∞"
    )
    assert lines[-1].startswith("verdict: violation: the call's own recorded law")
    assert "keeps only 50 of 237 tokens here and not this one: a truncation" in lines[-1]
    assert "at confidence 1 (exact" in lines[-1]


def test_cli_refuses_options_a_generation_call_does_not_take(tmp_path, monkeypatch, capsys):
    from _cli import run_cli_quiet

    (tmp_path / "mygen.py").write_text(GENERATION_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    for extra, flag in ((["--clip", "-1", "1"], "--clip"), (["--black-box"], "--black-box")):
        code, out, err = run_cli_quiet(
            capsys, "audit-rewriter", "mygen:call", "--model", "tiny", "--epsilon", "2", *extra
        )
        assert code == 2 and flag in err and out == ""


# --- a declaration set beside the recording -------------------------------------------------

DECLARED = exponential_decoding(EPSILON, CLIP, max_new_tokens=TOKENS)
DOCUMENTS = [PAIRS[0][0], PAIRS[0][1]]


class CopyFirstPromptToken(transformers.LogitsProcessor):
    """A user's 'keep the input's words' rule: every step copies the prompt's first token."""

    def __call__(self, input_ids, scores):
        kept = torch.full_like(scores, -math.inf)
        kept[:, input_ids[0, 0]] = 0.0
        return kept


def copy_call(model, tokenizer, text):
    return model.generate(
        **_inputs(tokenizer, text), do_sample=True, top_k=0, max_new_tokens=TOKENS,
        logits_processor=transformers.LogitsProcessorList([CopyFirstPromptToken()]),
    )  # fmt: skip


def hotter_call(model, tokenizer, text):  # temperature 2, declared as 1
    return model.generate(**_inputs(tokenizer, text), do_sample=True, top_k=0,
                          temperature=2.0, max_new_tokens=TOKENS)  # fmt: skip


def _check(model, call, declared=DECLARED):
    return check_declaration(_recorded(model, call), declared, DOCUMENTS, np.random.default_rng(5))


@pytest.mark.parametrize("seed", [0, 1])
def test_a_true_declaration_matches_its_recording_at_every_step(lively, seed: int) -> None:
    """Exact rows on both sides: agreement to float rounding (ROW_TOLERANCE, in total
    variation), on every step of every run."""
    check = check_declaration(
        _recorded(lively, correct_call), DECLARED, DOCUMENTS, np.random.default_rng(seed)
    )
    assert check.matches and check.runs == 4 and check.steps >= 4
    assert check.mismatched_steps == 0 and check.max_total_variation < ROW_TOLERANCE
    assert "matches the recording at all" in check.describe()


@pytest.mark.parametrize(
    ("call", "kind", "words", "declared"),
    [
        (greedy_call, "greedy", "(always the argmax)", DECLARED),
        (default_top_k_call, "truncation", "a top-k or top-p the declaration lacks", DECLARED),
        (unclipped_call, "unclipped", "not clipped as declared", DECLARED),
        (input_cap_call, "length", "stopped without an end token", DECLARED),
        (copy_call, "point mass", "a probability-1 copy", DECLARED),
        (
            hotter_call,
            "other law",
            "consistent with temperature 2 instead of the declared 1",
            Decoding(temperature=1.0, top_k=None, max_new_tokens=TOKENS),
        ),
    ],
)
def test_a_false_declaration_is_a_finding_that_says_what_and_where(
    lively, call, kind, words, declared
) -> None:
    check = _check(lively, call, declared)
    assert not check.matches
    found = {f.declaration: f for f in check.findings}
    assert f"decoding: {kind}" in found, check.describe()
    finding = found[f"decoding: {kind}"]
    assert words in finding.summary and finding.evidence.startswith("seen at document 1")
    assert finding.alpha == 0.0  # exact rows: no sampling error
    assert "MISMATCH" in check.describe()


def test_the_audit_scores_the_recording_and_reports_the_declaration_beside_it(lively) -> None:
    from dpaudit.results import AuditResult
    from dpaudit.serialization import dumps

    recorded = RecordedRewriter(
        "default_top_k_call", lively, default_top_k_call,
        TextClaim(EPSILON, "token", source="the user's claim (per token)"),
        max_new_tokens=TOKENS + 2, declared=DECLARED,
    )  # fmt: skip
    result = audit_rewriter(recorded, PAIRS, SMALL)
    assert result.verdict is Verdict.VIOLATION  # the recorded law, not the declaration
    kinds = [f.declaration for f in result.declaration_findings]
    assert kinds == ["decoding: truncation"]
    text = summary(result)
    assert "declared decoding vs the recording: MISMATCH" in text
    assert "finding: the call keeps" in text
    again = AuditResult.from_dict(json.loads(dumps(result)))
    assert again.detail.declaration == result.detail.declaration
    assert again.declaration_findings == result.declaration_findings


def test_cli_sets_a_declaration_beside_the_recording(tmp_path, monkeypatch, capsys) -> None:
    from _cli import run_cli_quiet

    (tmp_path / "mygen.py").write_text(GENERATION_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    base = ("audit-rewriter", "mygen:call", "--model", "tiny", "--epsilon", "2")
    code, out, _ = run_cli_quiet(
        capsys, *base, "--declare", "dp-prompt", "--clip", "-1", "1",
        "--pair", "the patient was sick today", "the patient was happy today",
        "--samples", "30", "--final-samples", "40",
    )  # fmt: skip
    assert code == 0, out
    assert "declared decoding vs the recording: MISMATCH" in out
    assert "top-k or top-p the declaration lacks" in out
    code, out, err = run_cli_quiet(capsys, *base, "--declare", "dp-prompt", "--clip", "1", "-1")
    assert code == 2 and "--clip" in err and out == ""


def penalised_call(model, tokenizer, text):  # transformers' repetition penalty, then the clip
    return model.generate(
        **_inputs(tokenizer, text), do_sample=True, top_k=0, temperature=1.0,
        max_new_tokens=TOKENS, repetition_penalty=1.5,
        logits_processor=transformers.LogitsProcessorList([ClipThenTemper()]),
    )  # fmt: skip


def test_a_repetition_penalty_is_recorded_in_the_order_transformers_runs_it(lively) -> None:
    """transformers applies its own processors (the penalty on the prompt's tokens) before a
    user's, so the clip still bounds every logit: the law is not the declared one (another
    law on the same support), yet each token's loss stays within ε."""
    check = _check(lively, penalised_call)
    assert [f.declaration for f in check.findings] == ["decoding: other law"]
    result = audit_rewriter(_recorded(lively, penalised_call), PAIRS, SMALL)
    assert result.detail.exact_verdict is Verdict.NO_VIOLATION_FOUND
    assert result.detail.max_exact_token_loss <= EPSILON + 1e-5


class CopyPromptWord(transformers.LogitsProcessor):
    """A user's 'keep the key word' rule: every step copies the prompt's third-last token
    (the word the pair's documents differ in)."""

    def __init__(self) -> None:
        self.word = None

    def __call__(self, input_ids, scores):
        if self.word is None:
            self.word = int(input_ids[0, -3])
        kept = torch.full_like(scores, -math.inf)
        kept[:, self.word] = 0.0
        return kept


def copy_word_call(model, tokenizer, text):
    return model.generate(
        **_inputs(tokenizer, text), do_sample=True, top_k=0, max_new_tokens=TOKENS,
        logits_processor=transformers.LogitsProcessorList([CopyPromptWord()]),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("call", "pairs", "reason"),
    [
        (greedy_call, PAIRS, "probability 1 on another token here: greedy decoding"),
        (copy_word_call, PAIRS, "probability 1 on another token here: greedy decoding or a copied"),
        (default_top_k_call, PAIRS, "a truncation (top-k, top-p) whose support depends on"),
        (
            input_cap_call,
            [("the patient was sick", "the patient was very sick today", "length")],
            "a length that depends on the input",
        ),
    ],
)
def test_the_verdict_names_the_flaw(lively, call, pairs, reason) -> None:
    result = audit_rewriter(_recorded(lively, call), pairs, SMALL)
    assert result.verdict is Verdict.VIOLATION
    assert reason in result.verdict_text and "at confidence 1 (exact" in result.verdict_text


def pipeline_call(model, tokenizer, text):  # the same decoding through a transformers pipeline
    pipe = transformers.pipeline("text-generation", model=model, tokenizer=tokenizer, device="cpu")
    return pipe(f"{text} .", do_sample=True, top_k=0, temperature=TEMPERATURE,
                max_new_tokens=TOKENS, return_full_text=False)  # fmt: skip


def test_a_pipeline_call_is_recorded_as_the_generate_call_it_makes(lively) -> None:
    """``pipeline("text-generation")`` calls ``generate`` inside: its recorded law is the
    one of the same settings given to ``generate`` directly (the unclipped call)."""
    document = PAIRS[0][0]
    piped, direct = _recorded(lively, pipeline_call), _recorded(lively, unclipped_call)
    outputs = piped.sample_ids(document, 3, np.random.default_rng(4))
    for a, b in zip(piped.token_log_probs(document, outputs),
                    direct.token_log_probs(document, outputs), strict=True):  # fmt: skip
        np.testing.assert_allclose(a, b, atol=1e-6)
