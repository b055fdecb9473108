"""DP-SGD on a logistic-regression text classifier, in numpy, with optional planted flaws.

The built-in :class:`DPSGD` trainer follows Abadi et al. (CCS 2016, Alg. 1): each step
samples a Poisson batch (each record independently with probability ``q``), clips every
per-example gradient to L2 norm ``C``, adds ``N(0, σ²C²I)`` to the clipped sum and takes
``θ ← θ − lr·(sum + noise)/(q·N₀)`` with the *fixed* expected batch size ``q·N₀`` of the
base data (``N₀ = len(records)``, as Opacus' ``expected_batch_size``: a denominator that
depended on the trained dataset's size would itself leak it).  Its accountant is
:class:`~dpaudit.analysis.dpsgd_accounting.DPSGDEvent`.

The model is binary logistic regression on a data-independent
:class:`~dpaudit.text.hashed_features.HashedBagOfWords` (features of norm ≤ 1).  The
parameter vector is ``θ = (w ∈ R^dimensions, b, c ∈ R^canary_coordinates)``; the last
block is reserved for white-box *gradient canaries* (:class:`GradientCanary`, Nasr et al.,
USENIX Security 2023): no text record's gradient touches it, so a canary's coordinate of the
privatised gradient sum is its own contribution plus noise.  Per-example gradients:

* text record ``(x, y)``: ``(σ(w·x + b) − y)·(x, 1, 0, …, 0)``, norm ``≤ √2``;
* gradient canary ``(j, s)``: ``C·s·e_{dimensions+1+j}``, already at the clipping norm.

``flaw`` plants one of the implementation bugs that audits of DP-SGD have found; the claim
is always what the code's accountant reports — ``DPSGDEvent(σ, accounted rate, T,
"poisson").approx_claim(δ)`` — so a flawed trainer over-claims and an audit should say so:

``none``
    Abadi et al. (CCS 2016), Alg. 1, with Poisson sampling as the accountant assumes
    (Mironov, Talwar & Zhang 2019).
``batch-clip``
    The *mean* of the batch's raw gradients is clipped to C and multiplied back by the
    batch size B before ``N(0, σ²C²I)`` is added, so one record can move the sum by up to
    about ``2·B·C``, not C.  Clipping a (micro)batch mean is not per-example clipping:
    tensorflow/privacy#135 and #46, bargavj/EvaluatingDPML#22.
``unscaled-noise``
    Noise ``N(0, σ²I)``, missing the factor C (Abadi Alg. 1 adds ``N(0, σ²C²I)``); the true
    noise multiplier is ``σ/C`` (:attr:`DPSGD.true_event`), visible when ``clip_norm ≠ 1``.
    Noise scaled by the wrong clip norm: greenelab/SPRINT_gan#5, meta-pytorch/opacus#202.
``shuffle-as-poisson``
    Trains on fixed-size batches of ``round(q·N)`` from a fresh permutation each epoch
    (``sampling="shuffle"``) but accounts Poisson sampling at q; shuffled batches can be far
    less private than the Poisson number (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha &
    Zhang, "How Private are DP-SGD Implementations?", ICML 2024).
``wrong-rate``
    Trains correctly, but the accountant is run at ``accounted_rate`` (default ``q/10``):
    the accountant's sampling probability or step count disagreeing with what training
    did, as in google-deepmind/jax_privacy#234 and #288.
``reused-noise``
    One noise vector is drawn once and added at every step, so differences of steps are
    noise-free: the PRNG-key reuse of jax-ml/jax#3646; IBM/differential-privacy-library#31
    (one seed for many mechanisms correlates their noise).
``accumulation-without-noise``
    Only one step in every ``accumulation`` gets noise (the last of each group), yet every
    step updates θ and the accountant counts every step as noisy: gradient accumulation
    that releases noise-free partial sums (meta-pytorch/opacus#143, and the review of
    meta-pytorch/opacus#203 on steps taken without noise covering the accumulated data).

Speed (measured 2026-12-01 on a 2-core container, numpy float64): one :meth:`train`
at the defaults (1000 text records, 200 steps, q = 0.032) with 1000 gradient canaries takes
about 0.011 s (median of 10; featurising the 1000 base sentences once per trainer, in
:meth:`DPSGD.combine`, adds about 0.011 s), white box (the (200, 1257) gradient array kept)
or not.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy.special import expit

from dpaudit.analysis.dpsgd_accounting import DPSGDEvent
from dpaudit.claims.curves import ApproxDP
from dpaudit.errors import InvalidArgumentError, InvalidTypeError
from dpaudit.mechanisms.training.contract import GradientCanary, TextRecord, TrainingMechanism
from dpaudit.mechanisms.training.initial import check_initialisation, pretrained_logistic
from dpaudit.mechanisms.training.trace_scores import TRACE_SCORES, trace_scores
from dpaudit.text.corpus import default_corpus
from dpaudit.text.hashed_features import HashedBagOfWords
from dpaudit.validation import check_int, check_positive, check_real

#: Planted implementation flaws (see the module docstring for what each does and its source).
FLAWS = (
    "none",
    "batch-clip",
    "unscaled-noise",
    "shuffle-as-poisson",
    "wrong-rate",
    "reused-noise",
    "accumulation-without-noise",
)
#: Batch sampling: Poisson (what the accountant analyses) or shuffled fixed-size batches.
SAMPLINGS = ("poisson", "shuffle")


@functools.lru_cache(maxsize=1)
def _default_records() -> tuple[TextRecord, ...]:
    corpus = default_corpus()
    assert corpus.labels is not None
    values = [int(corpus.label_names[i]) for i in corpus.labels]
    return tuple(TextRecord(s, v) for s, v in zip(corpus.sentences, values, strict=True))


def default_records() -> tuple[TextRecord, ...]:
    """The bundled yelp corpus (1000 sentences, labels 0/1) as text records."""
    return _default_records()


@dataclass(frozen=True, eq=False)
class TrainingArrays:
    """A dataset as :meth:`DPSGD.train` takes it (built by :meth:`DPSGD.combine`).

    ``features`` (n, dimensions) and ``labels`` (n,) of the text records; ``row_scale`` is
    ``√(‖x‖² + 1)``, the norm of a text gradient per unit residual; ``canary_index`` the
    absolute parameter index each gradient canary writes to and ``canary_signs`` its sign.
    """

    features: np.ndarray
    labels: np.ndarray
    canary_index: np.ndarray
    canary_signs: np.ndarray
    row_scale: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        scale = np.sqrt(np.einsum("ij,ij->i", self.features, self.features) + 1.0)
        object.__setattr__(self, "row_scale", scale)

    @property
    def size(self) -> int:
        """Number of records, text and gradient canaries together."""
        return int(self.labels.size + self.canary_index.size)


@dataclass(frozen=True, eq=False)
class TrainedModel:
    """What :meth:`DPSGD.train` releases.

    ``parameters``: the final θ; ``gradients``: every step's privatised gradient sum,
    shape (steps, parameter count) — the white-box view — or None for a black-box trainer.
    """

    parameters: np.ndarray
    gradients: np.ndarray | None


def clipped_gradient_sum(
    arrays: TrainingArrays,
    theta: np.ndarray,
    text_rows: np.ndarray,
    canaries: np.ndarray,
    dimensions: int,
    clip_norm: float,
    per_example: bool = True,
    canary_amplitude: float | None = None,
) -> np.ndarray:
    """Sum of the batch's clipped gradients, before noise.

    ``per_example`` (Abadi et al. 2016, Alg. 1): each gradient ``g_i`` becomes
    ``g_i·min(1, C/‖g_i‖)``.  Otherwise (the ``batch-clip`` flaw) the raw sum is scaled so
    that the batch *mean* has norm at most C: ``Σg_i·min(1, C·B/‖Σg_i‖)``.
    ``text_rows`` index the text records, ``canaries`` the gradient canaries of ``arrays``;
    a gradient canary's raw gradient has norm ``canary_amplitude`` (default C), so per-example
    clipping brings it to ``min(amplitude, C)`` and batch clipping lets it dominate the mean.
    """
    out = np.zeros_like(theta)
    x = arrays.features[text_rows]
    residual = expit(x @ theta[:dimensions] + theta[dimensions]) - arrays.labels[text_rows]
    if per_example:
        norms = np.abs(residual) * arrays.row_scale[text_rows]
        with np.errstate(divide="ignore"):
            residual = residual * np.minimum(1.0, clip_norm / norms)
    out[:dimensions] = residual @ x
    out[dimensions] = residual.sum()
    raw = clip_norm if canary_amplitude is None else canary_amplitude
    size = min(raw, clip_norm) if per_example else raw
    np.add.at(out, arrays.canary_index[canaries], size * arrays.canary_signs[canaries])
    if not per_example:
        batch = text_rows.size + canaries.size
        norm = float(np.linalg.norm(out))
        if norm > clip_norm * batch:
            out *= clip_norm * batch / norm
    return out


def _check_rate(name: str, value: object) -> float:
    q = check_real(name, value)
    if not 0.0 < q <= 1.0:
        raise InvalidArgumentError(name, value, "a sampling rate in (0, 1]")
    return q


def _as_text_record(record: Any, where: str) -> TextRecord:
    ok = (
        isinstance(record, tuple)
        and len(record) == 2
        and isinstance(record[0], str)
        and not isinstance(record[1], bool)
        and isinstance(record[1], int | np.integer)
        and int(record[1]) in (0, 1)
    )
    if not ok:
        raise InvalidArgumentError(
            where, type(record).__name__, "TextRecord(text: str, label: 0 or 1) records"
        )
    return TextRecord(record[0], int(record[1]))


def _is_canary(record: Any) -> bool:
    if isinstance(record, GradientCanary):
        return True
    return (
        isinstance(record, tuple)
        and not isinstance(record, TextRecord)
        and len(record) == 2
        and isinstance(record[0], int | np.integer)
        and not isinstance(record[0], bool)
    )


@dataclass(frozen=True, eq=False)
class DPSGD(TrainingMechanism):
    """DP-SGD (Abadi et al., CCS 2016, Alg. 1) on logistic regression over hashed words.

    Fields (each checked; an error names the field and its range): ``records`` the base
    data (text records, label 0/1, default the bundled corpus; gradient records
    :class:`GradientCanary` may stand among them, a dataset the white-box adversary
    crafted), ``noise_multiplier`` σ > 0,
    ``clip_norm`` C > 0, ``sampling_rate`` q in (0, 1] (default 0.032: batches of 32 of
    1000 expected), ``steps`` T ≥ 1, ``learning_rate`` > 0, ``dimensions`` of the hashed
    features, ``canary_coordinates`` ≥ 0 reserved parameters, ``sampling`` (``poisson`` or
    ``shuffle``), ``flaw`` (one of :data:`FLAWS`), ``accounted_rate`` the rate the accountant
    is told (None: q, or q/10 for ``wrong-rate``), ``accumulation`` ≥ 1 (steps per noisy
    step for ``accumulation-without-noise``), ``delta`` of the claim, ``canary_amplitude`` the
    raw gradient norm of a gradient canary (≥ C; per-example clipping brings it to C, the
    ``batch-clip`` flaw does not), ``white_box``: whether the released model keeps every
    step's privatised gradient sum, and ``initial``: θ₀, ``"zeros"`` or ``"pretrained"`` (the
    worst-case initialisation of :mod:`~dpaudit.mechanisms.training.initial`).

    The accountant knows only Poisson sampling, so ``sampling="shuffle"`` is accounted as
    Poisson whatever ``flaw`` says (it then trains exactly as ``shuffle-as-poisson``);
    :attr:`true_event` records the shuffle.  Vary one field with ``dataclasses.replace``.
    """

    records: tuple[TextRecord, ...] = field(
        default_factory=default_records, metadata={"spec": False}
    )
    noise_multiplier: float = 1.0
    clip_norm: float = 1.0
    sampling_rate: float = 0.032
    steps: int = 200
    learning_rate: float = 2.0
    dimensions: int = 256
    canary_coordinates: int = 1000
    sampling: str = "poisson"
    flaw: str = "none"
    accounted_rate: float | None = None
    accumulation: int = 4
    delta: float = 1e-5
    white_box: bool = True
    canary_amplitude: float = 1000.0
    initial: str = "zeros"

    name: ClassVar[str] = "dpsgd"
    gradient_scores: ClassVar[tuple[str, ...]] = TRACE_SCORES
    reference: ClassVar[str] = (
        "Abadi, Chu, Goodfellow, McMahan, Mironov, Talwar & Zhang, CCS 2016, Alg. 1 "
        "(accountant: Mironov, Talwar & Zhang 2019; Canonne, Kamath & Steinke 2020)"
    )

    def __post_init__(self) -> None:
        if isinstance(self.records, str) or not isinstance(self.records, Sequence):
            raise InvalidTypeError("records", self.records, "a sequence of TextRecord")
        records = tuple(
            GradientCanary(*r) if _is_canary(r) else _as_text_record(r, "records")
            for r in self.records
        )
        if not records:
            raise InvalidArgumentError("records", "()", "at least one record")
        object.__setattr__(self, "records", records)
        check_positive("noise_multiplier", self.noise_multiplier)
        check_positive("clip_norm", self.clip_norm)
        _check_rate("sampling_rate", self.sampling_rate)
        check_int("steps", self.steps, minimum=1)
        check_positive("learning_rate", self.learning_rate)
        check_int("dimensions", self.dimensions, minimum=2, maximum=1 << 20)
        check_int("canary_coordinates", self.canary_coordinates, minimum=0, maximum=1 << 24)
        if self.sampling not in SAMPLINGS:
            raise InvalidArgumentError("sampling", self.sampling, f"one of {SAMPLINGS}")
        if self.flaw not in FLAWS:
            raise InvalidArgumentError("flaw", self.flaw, f"one of {FLAWS}")
        if self.accounted_rate is not None:
            _check_rate("accounted_rate", self.accounted_rate)
        check_int("accumulation", self.accumulation, minimum=1)
        d = check_real("delta", self.delta)
        if not 0.0 < d < 1.0:
            raise InvalidArgumentError("delta", self.delta, "a number in the open interval (0, 1)")
        if check_real("canary_amplitude", self.canary_amplitude) < float(self.clip_norm):
            raise InvalidArgumentError(
                "canary_amplitude",
                self.canary_amplitude,
                f"a number >= clip_norm = {self.clip_norm}",
            )
        if not isinstance(self.white_box, bool | np.bool_):
            raise InvalidTypeError("white_box", self.white_box, "True or False")
        check_initialisation(self.initial)

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_base_arrays", None)  # the caches are rebuilt on demand
        state.pop("initial_parameters", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ accountant
    @property
    def accounted_sampling_rate(self) -> float:
        """The rate the accountant is told: ``accounted_rate``, else q (q/10 for wrong-rate)."""
        if self.accounted_rate is not None:
            return float(self.accounted_rate)
        if self.flaw == "wrong-rate":
            return float(self.sampling_rate) / 10.0
        return float(self.sampling_rate)

    @property
    def effective_sampling(self) -> str:
        """How batches are really drawn (``shuffle-as-poisson`` implies ``shuffle``)."""
        return "shuffle" if self.flaw == "shuffle-as-poisson" else self.sampling

    @property
    def accountant(self) -> DPSGDEvent:
        """What the code's accountant analyses: Poisson sampling at the accounted rate."""
        return DPSGDEvent(
            float(self.noise_multiplier), self.accounted_sampling_rate, int(self.steps)
        )

    @property
    def claim(self) -> ApproxDP:
        """``accountant.approx_claim(delta)``: the (ε, δ) the code reports, whatever the flaw."""
        return self.accountant.approx_claim(float(self.delta))

    @property
    def true_event(self) -> DPSGDEvent | None:
        """What training really is, where a subsampled-Gaussian event describes it.

        ``none`` / ``wrong-rate``: σ at the true rate q; ``unscaled-noise``: multiplier
        ``σ/C``; shuffled batches: the event with ``sampling="shuffle"`` (recorded, not
        analysed by :class:`DPSGDEvent`).  None for ``batch-clip`` (sensitivity ≈ 2BC, not
        C), ``reused-noise`` (the steps' noise is one draw) and
        ``accumulation-without-noise`` (noise-free steps: no finite ε).
        """
        sigma, q, steps = float(self.noise_multiplier), float(self.sampling_rate), int(self.steps)
        if self.flaw in ("batch-clip", "reused-noise", "accumulation-without-noise"):
            return None
        if self.flaw == "unscaled-noise":
            sigma = sigma / float(self.clip_norm)
        return DPSGDEvent(sigma, q, steps, self.effective_sampling)

    @property
    def access(self) -> str:
        """``white-box`` when every step's privatised gradient is released, else ``black-box``."""
        return "white-box" if self.white_box else "black-box"

    @property
    def parameter_count(self) -> int:
        """``dimensions + 1 + canary_coordinates``."""
        return int(self.dimensions) + 1 + int(self.canary_coordinates)

    # ------------------------------------------------------------------ data
    @property
    def base(self) -> tuple[TextRecord, ...]:
        """The base records canaries are added to."""
        return self.records

    def with_base(self, records: Sequence[Any]) -> DPSGD:
        """The same trainer on other private records (canaries drawn from the data leave it)."""
        return dataclasses.replace(self, records=tuple(records))

    @functools.cached_property
    def _base_arrays(self) -> TrainingArrays:
        return self._arrays_of(self.records, "records")

    @functools.cached_property
    def initial_parameters(self) -> np.ndarray:
        """θ₀: zeros, or (``initial="pretrained"``) the non-private fit to the base records.

        The canary coordinates start at zero either way; read-only, copied by :meth:`train`.
        """
        theta = np.zeros(self.parameter_count)
        if self.initial == "pretrained" and self._base_arrays.labels.size:
            arrays = self._base_arrays
            weights, bias = pretrained_logistic(arrays.features, arrays.labels)
            theta[: int(self.dimensions)], theta[int(self.dimensions)] = weights, bias
        theta.flags.writeable = False
        return theta

    def _featurise(self, records: Sequence[TextRecord]) -> np.ndarray:
        features = HashedBagOfWords(int(self.dimensions))([r.text for r in records])
        return features.reshape(len(records), int(self.dimensions))

    def _text_arrays(self, records: Sequence[TextRecord]) -> TrainingArrays:
        labels = np.asarray([r.label for r in records], dtype=np.float64)
        empty = np.zeros(0, dtype=np.int64)
        return TrainingArrays(self._featurise(records), labels, empty, np.zeros(0))

    def _canary_arrays(self, canaries: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        coords = np.zeros(len(canaries), dtype=np.int64)
        signs = np.zeros(len(canaries), dtype=np.float64)
        for i, canary in enumerate(canaries):
            coordinate, sign = GradientCanary(*canary)
            if isinstance(coordinate, bool) or not 0 <= int(coordinate) < self.canary_coordinates:
                raise InvalidArgumentError(
                    "coordinate",
                    coordinate,
                    f"a canary coordinate in [0, {int(self.canary_coordinates) - 1}]",
                )
            if float(sign) not in (1.0, -1.0):
                raise InvalidArgumentError("sign", sign, "+1 or -1")
            coords[i], signs[i] = int(self.dimensions) + 1 + int(coordinate), float(sign)
        return coords, signs

    def _arrays_of(self, records: Sequence[Any], where: str) -> TrainingArrays:
        text = [_as_text_record(r, where) for r in records if not _is_canary(r)]
        arrays = self._text_arrays(text)
        coords, signs = self._canary_arrays([r for r in records if _is_canary(r)])
        return TrainingArrays(arrays.features, arrays.labels, coords, signs)

    def combine(self, base: Any, canaries: Sequence[Any]) -> TrainingArrays:
        """``base`` plus text and gradient canaries as :class:`TrainingArrays`.

        Either may hold both kinds of record: a base of gradient records is a dataset the
        white-box adversary crafted (the multi-run audit's ``background="opposing"``).  The
        base arrays are computed once per trainer (when ``base`` is :attr:`base`).
        """
        base_arrays = self._base_arrays if base is self.records else self._arrays_of(base, "base")
        if not canaries:
            return base_arrays
        extra = self._arrays_of(canaries, "canaries")
        return TrainingArrays(
            np.vstack([base_arrays.features, extra.features]),
            np.concatenate([base_arrays.labels, extra.labels]),
            np.concatenate([base_arrays.canary_index, extra.canary_index]),
            np.concatenate([base_arrays.canary_signs, extra.canary_signs]),
        )

    def _as_arrays(self, dataset: Any) -> TrainingArrays:
        if isinstance(dataset, TrainingArrays):
            if dataset.features.shape[1:] != (int(self.dimensions),):
                raise InvalidArgumentError(
                    "dataset", "<TrainingArrays>", f"features of {self.dimensions} dimensions"
                )
            return dataset
        if isinstance(dataset, str) or not isinstance(dataset, Sequence):
            raise InvalidTypeError("dataset", dataset, "TrainingArrays or a list of records")
        return self.combine((), list(dataset))

    # ------------------------------------------------------------------ training
    def _batches(self, size: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
        """One index array per step: Poisson at q, or consecutive slices of permutations."""
        q = float(self.sampling_rate)
        if self.effective_sampling == "poisson":
            while True:
                yield np.flatnonzero(rng.random(size) < q)
        batch = max(1, round(q * size))
        while True:
            order = rng.permutation(size)
            for start in range(0, size, batch):
                yield order[start : start + batch]

    def _noise_std(self) -> float:
        sigma = float(self.noise_multiplier)
        return sigma if self.flaw == "unscaled-noise" else sigma * float(self.clip_norm)

    def train(self, dataset: Any, rng: np.random.Generator) -> TrainedModel:
        """Run T steps on ``dataset`` (from :meth:`combine`, or a list of records).

        All randomness (batches, noise) comes from ``rng``, so a model is a deterministic
        function of the generator's state.
        """
        arrays = self._as_arrays(dataset)
        if not isinstance(rng, np.random.Generator):
            raise InvalidTypeError("rng", rng, "a numpy.random.Generator")
        n_text, dims, steps = arrays.labels.size, int(self.dimensions), int(self.steps)
        theta = self.initial_parameters.copy()
        gradients = np.zeros((steps, theta.size)) if self.white_box else None
        std, clip = self._noise_std(), float(self.clip_norm)
        step_size = float(self.learning_rate) / (float(self.sampling_rate) * len(self.records))
        reused = rng.normal(0.0, std, theta.size) if self.flaw == "reused-noise" else None
        per_example = self.flaw != "batch-clip"
        amplitude = float(self.canary_amplitude)
        every = int(self.accumulation) if self.flaw == "accumulation-without-noise" else 1
        batches = self._batches(arrays.size, rng)
        for t in range(steps):
            batch = next(batches)
            text_rows, canaries = batch[batch < n_text], batch[batch >= n_text] - n_text
            total = clipped_gradient_sum(
                arrays, theta, text_rows, canaries, dims, clip, per_example, amplitude
            )
            if reused is not None:
                total += reused
            elif (t + 1) % every == 0:
                total += rng.normal(0.0, std, theta.size)
            if gradients is not None:
                gradients[t] = total
            theta -= step_size * total
        return TrainedModel(theta, gradients)

    # ------------------------------------------------------------------ scoring
    def _logits(self, model: TrainedModel, features: np.ndarray) -> np.ndarray:
        dims = int(self.dimensions)
        return features @ model.parameters[:dims] + model.parameters[dims]

    def score(self, model: TrainedModel, records: Sequence[Any]) -> np.ndarray:
        """One score per record, high where it looks included.

        Text record: minus its logistic loss under the final parameters (black box).
        Gradient canary ``(j, s)``: ``s·Σ_t gradients[t, dimensions+1+j]/C`` (white box).
        """
        if not isinstance(model, TrainedModel):
            raise InvalidTypeError("model", model, "a TrainedModel from DPSGD.train")
        records = list(records)
        out = np.zeros(len(records))
        is_canary = np.asarray([_is_canary(r) for r in records], dtype=bool)
        text = [_as_text_record(r, "records") for r in records if not _is_canary(r)]
        canaries = [r for r in records if _is_canary(r)]
        if text:
            z = self._logits(model, self._featurise(text))
            signed = np.where(np.asarray([r.label for r in text]) == 1, z, -z)
            out[~is_canary] = -np.logaddexp(0.0, -signed)
        if canaries:
            if model.gradients is None:
                raise InvalidArgumentError(
                    "records",
                    "<GradientCanary>",
                    "text records only: a black-box DPSGD (white_box=False) keeps no "
                    "gradients to score a gradient canary",
                )
            coords, signs = self._canary_arrays(canaries)
            totals = model.gradients[:, coords].sum(axis=0)
            out[is_canary] = signs * totals / float(self.clip_norm)
        return out

    def scores(self, model: TrainedModel, records: Sequence[Any]) -> dict[str, np.ndarray]:
        """Gradient canaries: every white-box trace score (:data:`TRACE_SCORES`); else ``score``.

        The likelihood ratio assumes what the accountant assumes: Poisson sampling at the
        rate the code trains with and noise σC at every step.
        """
        records = list(records)
        if not records or not all(_is_canary(r) for r in records) or model.gradients is None:
            return {"score": self.score(model, records)}
        return trace_scores(
            self.trace(model, records), float(self.sampling_rate), float(self.noise_multiplier)
        )

    def trace(self, model: TrainedModel, records: Sequence[Any]) -> np.ndarray | None:
        """Each gradient canary's coordinate of every step's privatised gradient sum, times
        its sign, over C: shape (steps, canaries).  None for a black-box model."""
        if model.gradients is None:
            return None
        coords, signs = self._canary_arrays(list(records))
        return model.gradients[:, coords] * (signs / float(self.clip_norm))

    def accuracy(self, model: TrainedModel, records: Sequence[Any] | None = None) -> float:
        """Fraction of ``records`` (default: the base) whose label the final model predicts."""
        chosen = [
            _as_text_record(r, "records")
            for r in (self.records if records is None else records)
            if not _is_canary(r)
        ]
        if not chosen:
            return math.nan
        z = self._logits(model, self._featurise(chosen))
        labels = np.asarray([r.label for r in chosen])
        return float(np.mean((z > 0).astype(int) == labels))

    def spec(self) -> dict[str, Any]:
        """Name and parameters (the base data by its size)."""
        out = super().spec()
        out["params"] = {"records": len(self.records), **out["params"]}
        return out


__all__ = [
    "DPSGD",
    "FLAWS",
    "SAMPLINGS",
    "TrainedModel",
    "TrainingArrays",
    "clipped_gradient_sum",
    "default_records",
]
