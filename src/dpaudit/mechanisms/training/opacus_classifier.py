"""Opacus as people run it: ``PrivacyEngine().make_private`` on a small text classifier.

:class:`OpacusClassifier` trains a two-class logistic regression on hashed bag-of-words
features (:class:`~dpaudit.text.hashed_features.HashedBagOfWords`) with Opacus' DP-SGD
(Yousefpour et al., "Opacus: user-friendly differential privacy library in PyTorch", 2021;
the algorithm of Abadi et al., CCS 2016): a ``torch.utils.data.DataLoader`` and a plain SGD
optimizer go through ``PrivacyEngine(accountant=...).make_private(module=..., optimizer=...,
data_loader=..., noise_multiplier=σ, max_grad_norm=C, poisson_sampling=True,
noise_generator=...)`` and the loop is the ordinary ``zero_grad / loss.backward / step``.

Sampling
    Opacus takes the sample rate from the loader, ``q = 1 / len(data_loader)``, and one
    epoch of its Poisson loader is ``int(1 / q)`` steps (``UniformWithReplacementSampler``).
    For a plain ``DataLoader(batch_size=B)`` over ``N`` records ``len = ⌈N/B⌉``, so the
    sample rate would follow the number of canaries an audit happens to include.  The
    add/remove accountant assumes one fixed ``q``; so every run here gets the loader length
    ``K = ⌈len(records)/batch_size⌉`` of the base data (a ``DataLoader`` with
    ``batch_size = ⌈N/K⌉`` where that has ``K`` batches, else one whose batch sampler is
    ``K`` equal slices of the data — Opacus only reads its length), and every run is the
    same accounted mechanism: ``q = 1/K``, ``steps = epochs · int(K)``, ``σ``.

Claim
    :attr:`OpacusClassifier.claim` is ``ApproxDP(ε, delta)`` with ε what Opacus' own
    accountant (``"rdp"``: ``RDPAccountant``, ``"prv"``: ``PRVAccountant``) returns for the
    history ``[(σ, q, steps)]`` — exactly the history ``make_private``'s step hook builds,
    so it equals ``privacy_engine.get_epsilon(delta)`` after any run (checked in
    ``tests/test_opacus_classifier.py``).  It is computed without training.

White box (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini & Terzis, "Tight
Auditing of Differentially Private Machine Learning", USENIX Security 2023)
    The threat model of DP-SGD's analysis is stronger than "sees the final model": every
    step's privatised gradient is released, and the adversary may insert records whose
    per-example gradient it chooses.  Nasr et al. audit it with *Dirac gradient canaries*,
    gradients on one coordinate no other record touches; then the privatised gradient
    along that coordinate is exactly the Gaussian mechanism's output (0 or ``C`` plus
    ``N(0, σ²C²)`` each step), and the audit is tight.  This trainer realises it *inside*
    Opacus rather than by injecting gradients: the network has a second layer
    ``nn.Linear(canary_coordinates, 2, bias=False)``, zero-initialised, in a parameter group
    with learning rate 0 (so it never moves), fed by a reserved input block that is zero for
    every text record.  A :class:`~dpaudit.mechanisms.training.contract.GradientCanary`
    ``(j, sign)`` is the input ``amplitude · e_j`` in that block, zero text features, label
    1 for ``sign > 0`` and 0 otherwise.  Its per-example gradient on column ``j`` is
    ``amplitude · (p − e_y)``, along ``u = s·(1, −1)/√2`` (``s = ±1`` by the label), while
    its only other gradient, on the text layer's bias, is at most ``√2`` — so after Opacus
    clips it to norm ``C`` it is ``C·u`` up to a relative ``~1/amplitude²``.  Assumptions:
    the adversary sees every step's privatised gradient of the canary layer (here recorded
    from ``p.grad`` after each ``optimizer.step()``) and may choose records' inputs and
    labels; the text data never touch the reserved block; and canaries use distinct
    coordinates (two on one column would add up).

    What ``p.grad`` holds (``opacus/optimizers/optimizer.py``, ``DPOptimizer.pre_step``):
    ``clip_and_accumulate`` sums the clipped per-sample gradients into ``p.summed_grad``,
    ``add_noise`` sets ``p.grad = p.summed_grad + N(0, (σC)²)``, and ``scale_grad`` (for the
    default ``loss_reduction="mean"``) divides it in place by ``expected_batch_size ·
    accumulated_iterations``; the original optimizer's step then reads it and nothing
    changes it until the next ``zero_grad``.  With Poisson sampling gradient accumulation
    is forbidden (``accumulated_iterations = 1``), so the trainer records
    ``p.grad · optimizer.expected_batch_size`` — the noisy clipped sum — after each step.

Scores
    A :class:`~dpaudit.mechanisms.training.contract.TextRecord` scores minus its
    cross-entropy under the final weights (black box).  A gradient canary ``(j, sign)``
    scores ``Σ_t ⟨g_t[:, j], u⟩ / C``, the privatised gradient sums of column ``j`` over all
    steps projected on the canary's own unit direction ``u``, over ``C``.  Each step's
    noise on the column is ``N(0, σ²C² I₂)`` and its projection on a unit vector is
    ``N(0, σ²C²)``, so an absent canary scores ``N(0, steps · σ² · 1)`` exactly (the factor
    derived is 1), and an included one adds ``Binomial(steps, q)`` (its clipped gradient is
    ``C·u`` in each step it is sampled): mean ``steps · q``, variance
    ``steps · (σ² + q(1 − q))``.

Speed (2026-12-01, a 2-core AMD EPYC VM, torch 2.13 CPU, opacus 1.6.0): one
:meth:`OpacusClassifier.train` on the 1000 bundled records plus 1000 gradient canaries (all
included: N = 2000, 1256 inputs), 1 epoch at batch 32 (32 Poisson steps of ~62 records),
white box, took 0.046-0.062 s (median of 10, three sessions; range 0.044-0.086 s) with
``threads=1`` — far under the 2 s bar, so no setting had to be cut.  One-off costs in a
process: importing torch and opacus (~2.5-3 s) and the first run's lazy set-up (~0.6 s).
With ``threads=2`` the median is the same (0.05 s) but, with other work on the two cores
(load ~1.8), single runs took up to 1.2 s and the first run after switching threads 2.4 s:
keep ``threads=1`` on small machines.  ``combine`` (hashing the sentences) takes 0.015 s,
the default 3 epochs 0.15 s, :attr:`~OpacusClassifier.claim` 0.04 s (rdp) / 0.08 s (prv).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import warnings
from collections.abc import Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from dpaudit.claims.curves import ApproxDP
from dpaudit.errors import InvalidArgumentError, InvalidTypeError, MechanismError
from dpaudit.mechanisms.training.contract import GradientCanary, TextRecord, TrainingMechanism
from dpaudit.mechanisms.training.initial import check_initialisation, pretrained_logistic
from dpaudit.mechanisms.training.trace_scores import TRACE_SCORES, trace_scores
from dpaudit.text.corpus import default_corpus
from dpaudit.text.hashed_features import HashedBagOfWords

#: Opacus' accountants this trainer can claim with (``PrivacyEngine(accountant=...)``).
ACCOUNTANTS = ("rdp", "prv")

_INSTALL = "pip install 'dpaudit[training]'"


def _import_training() -> tuple[Any, Any]:
    """``(torch, opacus)``, or a :class:`MechanismError` naming the extra to install."""
    try:
        import opacus
        import torch
    except ImportError as exc:
        raise MechanismError(
            f"the Opacus trainer needs torch and opacus ({exc.name or exc} is missing): {_INSTALL}"
        ) from None
    return torch, opacus


def _default_records() -> tuple[TextRecord, ...]:
    corpus = default_corpus()
    labels = corpus.labels if corpus.labels is not None else np.zeros(len(corpus), np.int64)
    return tuple(TextRecord(s, int(y)) for s, y in zip(corpus.sentences, labels, strict=True))


def _check_number(name: str, value: object, low: float, high: float, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgumentError(name, value, allowed)
    v = float(value)
    if not (math.isfinite(v) and low < v <= high):
        raise InvalidArgumentError(name, value, allowed)
    return v


def _check_integer(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(name, value, f"an integer in [{low}, {high}]")
    v = int(value)
    if not low <= v <= high:
        raise InvalidArgumentError(name, value, f"an integer in [{low}, {high}]")
    return v


def _text_record(record: Any, where: str) -> TextRecord | None:
    """``record`` as a TextRecord if it is one (or a ``(str, 0|1)`` pair); None otherwise."""
    if isinstance(record, GradientCanary):
        return None
    if isinstance(record, tuple) and len(record) == 2 and isinstance(record[0], str):
        label = record[1]
        integral = isinstance(label, numbers.Integral) and not isinstance(label, bool)
        if not integral or label not in (0, 1):
            raise InvalidArgumentError(where, record, "a TextRecord whose label is 0 or 1")
        return TextRecord(record[0], int(label))
    raise InvalidTypeError(where, record, "a TextRecord(text, label) or a GradientCanary")


@dataclasses.dataclass(frozen=True)
class OpacusDataset:
    """What :meth:`OpacusClassifier.train` takes: featurised records (numpy, picklable).

    ``features`` — ``(N, dimensions)`` float32 hashed bag-of-words rows (zero for gradient
    canaries); ``labels`` — ``(N,)`` int64 in {0, 1}; ``canary_columns`` — ``(N,)`` int64,
    the reserved coordinate of each gradient canary and −1 for text records.
    """

    features: np.ndarray
    labels: np.ndarray
    canary_columns: np.ndarray

    def __len__(self) -> int:
        return int(self.labels.shape[0])


@dataclasses.dataclass(frozen=True, eq=False)
class OpacusModel:
    """The released model of one run (numpy only, picklable).

    ``weight`` ``(2, dimensions)`` and ``bias`` ``(2,)``: the text layer's final parameters;
    ``canary_gradients``: ``(steps, 2 · canary_coordinates)`` float32, each step's
    privatised gradient *sum* of the canary layer (row-major weight: class 0's columns,
    then class 1's), or None when the run was not white box.
    """

    weight: np.ndarray
    bias: np.ndarray
    canary_gradients: np.ndarray | None
    steps: int
    sample_rate: float
    expected_batch_size: int


@dataclasses.dataclass(frozen=True, eq=False)
class OpacusClassifier(TrainingMechanism):
    """Opacus DP-SGD (Poisson sampling) on a hashed bag-of-words logistic regression.

    ``records`` — the private labelled sentences (default: the 1000 bundled yelp
    sentences); ``noise_multiplier`` σ and ``max_grad_norm`` C as Opacus takes them;
    ``batch_size`` — Opacus' expected batch: the loader has ``K = ⌈len(records) /
    batch_size⌉`` batches, sample rate ``1/K``; ``epochs``; ``learning_rate`` of plain SGD on
    the mean loss; ``dimensions`` of the hashed features; ``canary_coordinates`` — the
    reserved input block for gradient canaries; ``amplitude`` — a gradient canary's input
    value (large, so its gradient lies on its column); ``delta`` of the claim; ``accountant``
    — Opacus' ``"rdp"`` or ``"prv"`` (``PrivacyEngine()``'s own default is ``"prv"``, the
    tighter one); ``white_box`` — record every step's privatised canary-layer gradient;
    ``threads`` — ``torch.set_num_threads`` during training, restored after; ``initial`` —
    the text layer's θ₀, ``"zeros"`` or ``"pretrained"`` (the worst-case initialisation of
    :mod:`~dpaudit.mechanisms.training.initial`; the canary layer stays zero).
    The default 3 epochs at learning rate 1: at σ = 1 one epoch reached 0.64 accuracy on the
    bundled data (0.63-0.65 over 8 seeds), three 0.68 (0.65-0.70), at ε = 2.6 (rdp).
    See the module docstring for the threat model and the scores' distributions.
    """

    records: tuple[TextRecord, ...] = dataclasses.field(
        default_factory=_default_records, metadata={"spec": False}
    )
    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    batch_size: int = 32
    epochs: int = 3
    learning_rate: float = 1.0
    dimensions: int = 256
    canary_coordinates: int = 1000
    amplitude: float = 1e6
    delta: float = 1e-5
    accountant: str = "rdp"
    white_box: bool = True
    threads: int = 1
    initial: str = "zeros"

    name: ClassVar[str] = "opacus"
    gradient_scores: ClassVar[tuple[str, ...]] = TRACE_SCORES
    reference: ClassVar[str] = (
        "Opacus DP-SGD (Yousefpour et al., 2021), the algorithm of Abadi et al., CCS 2016; "
        "white-box gradient canaries after Nasr et al., USENIX Security 2023"
    )

    def __post_init__(self) -> None:
        if isinstance(self.records, (str, bytes)) or not isinstance(self.records, Sequence):
            raise InvalidArgumentError(
                "records", self.records, "a sequence of at least 2 TextRecord(text, label)"
            )
        records = []
        for record in self.records:
            text = _text_record(record, "records")
            if text is None:
                raise InvalidArgumentError(
                    "records", record, "TextRecords only (gradient canaries are canaries)"
                )
            records.append(text)
        if len(records) < 2:
            raise InvalidArgumentError(
                "records", f"<{len(records)} records>", "at least 2 TextRecord(text, label)"
            )
        object.__setattr__(self, "records", tuple(records))
        for name, high in (("noise_multiplier", 1e4), ("max_grad_norm", 1e6)):
            value = _check_number(
                name, getattr(self, name), 0.0, high, f"a number in (0, {high:g}]"
            )
            object.__setattr__(self, name, value)
        n = len(records)
        object.__setattr__(self, "batch_size", _check_integer("batch_size", self.batch_size, 1, n))
        object.__setattr__(self, "epochs", _check_integer("epochs", self.epochs, 1, 10_000))
        lr = _check_number("learning_rate", self.learning_rate, 0.0, 1e6, "a number in (0, 1e6]")
        object.__setattr__(self, "learning_rate", lr)
        dims = _check_integer("dimensions", self.dimensions, 2, 1 << 16)
        object.__setattr__(self, "dimensions", dims)
        cc = _check_integer("canary_coordinates", self.canary_coordinates, 1, 1 << 16)
        object.__setattr__(self, "canary_coordinates", cc)
        amp = _check_number("amplitude", self.amplitude, 1.0, 1e12, "a number in (1, 1e12]")
        object.__setattr__(self, "amplitude", amp)
        delta = _check_number("delta", self.delta, 0.0, 1.0, "a number in (0, 1)")
        if delta >= 1.0:
            raise InvalidArgumentError("delta", self.delta, "a number in (0, 1)")
        object.__setattr__(self, "delta", delta)
        if self.accountant not in ACCOUNTANTS:
            raise InvalidArgumentError("accountant", self.accountant, f"one of {ACCOUNTANTS}")
        if not isinstance(self.white_box, bool):
            raise InvalidArgumentError("white_box", self.white_box, "True or False")
        object.__setattr__(self, "threads", _check_integer("threads", self.threads, 1, 1024))
        check_initialisation(self.initial)

    # -- the schedule Opacus derives -------------------------------------------------------

    @property
    def loader_batches(self) -> int:
        """``K = ⌈len(records)/batch_size⌉``: every run's ``len(data_loader)``."""
        return -(-len(self.records) // self.batch_size)

    @property
    def sample_rate(self) -> float:
        """Opacus' ``sample_rate = 1 / len(data_loader)`` (``1/K``)."""
        return 1 / self.loader_batches

    @property
    def steps(self) -> int:
        """Optimizer steps of a run: ``epochs · int(1/sample_rate)``, as Opacus' sampler."""
        return self.epochs * int(1 / self.sample_rate)

    @cached_property
    def claim(self) -> ApproxDP:
        """``ApproxDP(ε, delta)``, ε from Opacus' accountant for ``[(σ, q, steps)]``."""
        _import_training()  # a MechanismError naming the extra if opacus is missing
        from opacus.accountants.utils import create_accountant

        accountant = create_accountant(mechanism=self.accountant)
        accountant.history = [(self.noise_multiplier, self.sample_rate, self.steps)]
        epsilon = float(accountant.get_epsilon(delta=self.delta))
        return ApproxDP(epsilon, self.delta)

    @property
    def access(self) -> str:
        """``"white-box"`` when every step's canary-layer gradient is recorded."""
        return "white-box" if self.white_box else "black-box"

    @property
    def base(self) -> tuple[TextRecord, ...]:
        """The private records."""
        return self.records

    def with_base(self, records: Sequence[Any]) -> OpacusClassifier:
        """The same trainer on other private records (the schedule follows their number)."""
        return dataclasses.replace(self, records=tuple(records))

    @cached_property
    def _base_data(self) -> OpacusDataset:
        return self._featurise(self.records)

    @cached_property
    def initial_text_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """θ₀ of the text layer, ``(weight (2, dimensions), bias (2,))`` float32.

        Zeros, or (``initial="pretrained"``) the binary fit to the base records split
        evenly between the two logits (softmax over two classes sees only their difference).
        """
        weight = np.zeros((2, self.dimensions), dtype=np.float32)
        bias = np.zeros(2, dtype=np.float32)
        if self.initial == "pretrained":
            data = self._base_data
            w, b = pretrained_logistic(data.features, data.labels)
            weight[0], weight[1], bias[:] = -w / 2, w / 2, (-b / 2, b / 2)
        return weight, bias

    def combine(self, base: Any, canaries: Sequence[Any]) -> OpacusDataset:
        """Featurised ``base + canaries`` (TextRecords and GradientCanaries)."""
        if base is self.records:
            extra = self._featurise(list(canaries))
            head = self._base_data
            return OpacusDataset(
                np.concatenate([head.features, extra.features]),
                np.concatenate([head.labels, extra.labels]),
                np.concatenate([head.canary_columns, extra.canary_columns]),
            )
        return self._featurise([*base, *canaries])

    def _featurise(self, records: Sequence[Any]) -> OpacusDataset:
        texts: list[str] = []
        rows: list[int] = []
        labels = np.zeros(len(records), dtype=np.int64)
        columns = np.full(len(records), -1, dtype=np.int64)
        for i, record in enumerate(records):
            text = _text_record(record, "records")
            if text is None:
                columns[i] = self._canary_column(record)
                labels[i] = 1 if record.sign > 0 else 0
            else:
                texts.append(text.text)
                rows.append(i)
                labels[i] = text.label
        features = np.zeros((len(records), self.dimensions), dtype=np.float32)
        if texts:
            features[rows] = HashedBagOfWords(self.dimensions)(texts)
        return OpacusDataset(features, labels, columns)

    def _canary_column(self, canary: GradientCanary) -> int:
        j = canary.coordinate
        if isinstance(j, bool) or not isinstance(j, numbers.Integral):
            raise InvalidArgumentError("coordinate", j, "an integer coordinate")
        if not 0 <= j < self.canary_coordinates:
            raise InvalidArgumentError(
                "coordinate", j, f"an integer in [0, {self.canary_coordinates - 1}]"
            )
        sign = canary.sign
        if not isinstance(sign, numbers.Real) or not math.isfinite(sign) or sign == 0:
            raise InvalidArgumentError("sign", sign, "a finite non-zero number")
        return int(j)

    # -- training --------------------------------------------------------------------------

    def train(self, dataset: Any, rng: np.random.Generator) -> OpacusModel:
        """One Opacus run on ``dataset`` (:class:`OpacusDataset` or records), seeded by ``rng``."""
        return self.train_with_engine(dataset, rng)[0]

    def train_with_engine(self, dataset: Any, rng: np.random.Generator) -> tuple[OpacusModel, Any]:
        """:meth:`train`, also returning the run's ``opacus.PrivacyEngine`` (to check claims)."""
        torch, opacus = _import_training()
        if not isinstance(rng, np.random.Generator):
            raise InvalidTypeError("rng", rng, "a numpy.random.Generator")
        data = dataset if isinstance(dataset, OpacusDataset) else self._featurise(list(dataset))
        if len(data) < self.loader_batches:
            raise MechanismError(
                f"{len(data)} records cannot fill the {self.loader_batches} batches of the base "
                "data; train on base plus canaries"
            )
        sampler_seed, noise_seed = (int(s) for s in rng.integers(0, 2**63 - 1, size=2))
        previous = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            with warnings.catch_warnings():
                # Deliberate: secure_mode=False is what makes a run reproducible from rng.
                warnings.filterwarnings("ignore", message="Secure RNG turned off")
                # Harmless: torch notes that the inputs (data) do not require gradients.
                warnings.filterwarnings("ignore", message="Full backward hook is firing")
                return self._run(torch, opacus, data, sampler_seed, noise_seed)
        finally:
            torch.set_num_threads(previous)

    def _run(
        self, torch: Any, opacus: Any, data: OpacusDataset, sampler_seed: int, noise_seed: int
    ) -> tuple[OpacusModel, Any]:
        nn = torch.nn
        n, d, cc = len(data), self.dimensions, self.canary_coordinates
        inputs = np.zeros((n, d + cc), dtype=np.float32)
        inputs[:, :d] = data.features
        canaries = np.flatnonzero(data.canary_columns >= 0)
        inputs[canaries, d + data.canary_columns[canaries]] = self.amplitude
        tensors = torch.utils.data.TensorDataset(
            torch.from_numpy(inputs), torch.from_numpy(data.labels)
        )
        sampler_generator = torch.Generator().manual_seed(sampler_seed)
        noise_generator = torch.Generator().manual_seed(noise_seed)
        loader = self._loader(torch, tensors, n, sampler_generator)

        net = _network(nn, d, cc)
        if self.initial != "zeros":
            weight, bias = self.initial_text_layer
            with torch.no_grad():
                net.text.weight.copy_(torch.from_numpy(weight))
                net.text.bias.copy_(torch.from_numpy(bias))
        optimizer = torch.optim.SGD(
            [
                {"params": list(net.text.parameters()), "lr": self.learning_rate},
                {"params": [net.canary.weight], "lr": 0.0},
            ],
            lr=self.learning_rate,
        )
        engine = opacus.PrivacyEngine(accountant=self.accountant, secure_mode=False)
        module, dp_optimizer, dp_loader = engine.make_private(
            module=net,
            optimizer=optimizer,
            data_loader=loader,
            noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.max_grad_norm,
            poisson_sampling=True,
            noise_generator=noise_generator,
        )
        steps = self.epochs * len(dp_loader)
        if steps != self.steps:  # pragma: no cover - Opacus changed its schedule
            raise MechanismError(f"Opacus ran {steps} steps where {self.steps} were accounted")
        criterion = nn.CrossEntropyLoss()
        canary_weight = net.canary.weight
        recorded = torch.zeros((steps, 2 * cc), dtype=torch.float32) if self.white_box else None
        step = 0
        for _ in range(self.epochs):
            for x, y in dp_loader:
                dp_optimizer.zero_grad(set_to_none=True)
                loss = criterion(module(x), y)
                loss.backward()
                dp_optimizer.step()
                if recorded is not None:
                    # p.grad = (clipped sum + noise) / expected_batch_size after step().
                    recorded[step] = canary_weight.grad.detach().reshape(-1)
                    recorded[step] *= dp_optimizer.expected_batch_size
                step += 1
        model = OpacusModel(
            weight=net.text.weight.detach().numpy().astype(np.float64),
            bias=net.text.bias.detach().numpy().astype(np.float64),
            canary_gradients=None if recorded is None else recorded.numpy().copy(),
            steps=step,
            sample_rate=float(dp_loader.sample_rate),
            expected_batch_size=int(dp_optimizer.expected_batch_size),
        )
        return model, engine

    def _loader(self, torch: Any, tensors: Any, n: int, generator: Any) -> Any:
        """A DataLoader of exactly ``K`` batches over ``n`` records (Opacus reads its length)."""
        k = self.loader_batches
        batch = -(-n // k)
        if -(-n // batch) == k:
            return torch.utils.data.DataLoader(tensors, batch_size=batch, generator=generator)
        slices = [chunk.tolist() for chunk in np.array_split(np.arange(n), k)]
        return torch.utils.data.DataLoader(tensors, batch_sampler=slices, generator=generator)

    # -- scores ----------------------------------------------------------------------------

    def scores(self, model: Any, records: Sequence[Any]) -> dict[str, np.ndarray]:
        """Gradient canaries: every white-box trace score (:data:`TRACE_SCORES`); else ``score``.

        The trace of canary ``(j, s)`` is its privatised gradient projected on its clipped
        direction ``s·(1, −1)/√2`` per step, over C; the likelihood ratio assumes Opacus'
        Poisson rate and noise multiplier.
        """
        records = list(records)
        texts = [r for r in records if _text_record(r, "records") is not None]
        if texts or not records or model.canary_gradients is None:
            return {"score": self.score(model, records)}
        cc = self.canary_coordinates
        cols = np.array([self._canary_column(r) for r in records])
        signs = np.array([1.0 if r.sign > 0 else -1.0 for r in records])
        g = np.asarray(model.canary_gradients, dtype=np.float64)
        trace = (g[:, cols] - g[:, cc + cols]) * (signs / (math.sqrt(2.0) * self.max_grad_norm))
        return trace_scores(trace, float(model.sample_rate), float(self.noise_multiplier))

    def score(self, model: Any, records: Sequence[Any]) -> np.ndarray:
        """Minus the loss of TextRecords; a gradient canary's privatised column sum over C."""
        if not isinstance(model, OpacusModel):
            raise InvalidTypeError("model", model, "an OpacusModel from OpacusClassifier.train")
        out = np.empty(len(records), dtype=np.float64)
        texts: list[str] = []
        labels: list[int] = []
        rows: list[int] = []
        sums: np.ndarray | None = None
        cc = self.canary_coordinates
        for i, record in enumerate(records):
            text = _text_record(record, "records")
            if text is not None:
                texts.append(text.text)
                labels.append(text.label)
                rows.append(i)
                continue
            j = self._canary_column(record)
            if model.canary_gradients is None:
                raise InvalidArgumentError(
                    "records",
                    record,
                    "TextRecords: gradient canaries are scored from the privatised gradients, "
                    "recorded only with white_box=True",
                )
            if sums is None:
                sums = model.canary_gradients.sum(axis=0, dtype=np.float64)
            s = 1.0 if record.sign > 0 else -1.0
            out[i] = s * (sums[j] - sums[cc + j]) / (math.sqrt(2.0) * self.max_grad_norm)
        if texts:
            x = HashedBagOfWords(self.dimensions)(texts)
            logits = x @ model.weight.T + model.bias
            top = logits.max(axis=1, keepdims=True)
            log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
            chosen = logits[np.arange(len(texts)), np.asarray(labels)]
            out[rows] = chosen - log_norm
        return out

    def spec(self) -> dict[str, Any]:
        """Name and parameters (the records by their number)."""
        out = super().spec()
        out["params"] = {"records": len(self.records), **out["params"]}
        return out


def _network(nn: Any, dimensions: int, canary_coordinates: int) -> Any:
    """Text layer ``Linear(dimensions, 2)`` plus the frozen canary layer, zero-initialised.

    ``skip_init`` builds the layers without drawing from torch's global generator.
    """

    class CanaryTextClassifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.text = nn.utils.skip_init(nn.Linear, dimensions, 2)
            self.canary = nn.utils.skip_init(nn.Linear, canary_coordinates, 2, bias=False)
            for p in self.parameters():
                nn.init.zeros_(p)

        def forward(self, x: Any) -> Any:
            return self.text(x[:, :dimensions]) + self.canary(x[:, dimensions:])

    return CanaryTextClassifier()


__all__ = ["ACCOUNTANTS", "OpacusClassifier", "OpacusDataset", "OpacusModel"]
