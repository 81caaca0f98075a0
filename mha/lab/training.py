"""Adam, a learning-rate schedule and a training loop for the lab's models (:mod:`mha.lab.models`).

:func:`train` asks a model for :meth:`~mha.lab.models.LanguageModel.loss_grads_and_logits` on a fresh batch
at every step, and records the loss, the accuracy and, at chosen steps, attention snapshots and
evaluations on held-out data.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mha.fast import blas_threads as blas_threads_limit
from mha.grad import cross_entropy
from mha.lab.models import CausalLanguageModel, LanguageModel
from mha.lab.tasks import Batch
from mha.typing import ArrayLike, BoolArray, FloatArray, IntArray, Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["Adam", "TrainingHistory", "evaluate", "learning_rates", "progress_bar", "train"]


def evaluate(model: CausalLanguageModel, batch: Batch, *,
             head_mask: ArrayLike | None = None) -> tuple[float, float]:
    """Loss (nats) and next-token accuracy on the positions of ``batch.loss_mask``.

    Examples
    --------
    >>> from mha.lab.models import AttentionOnlyModel
    >>> from mha.lab.tasks import repeated_tokens
    >>> model = AttentionOnlyModel(8, 10, d_model=8, n_heads=2, rng=0)
    >>> loss, accuracy = evaluate(model, repeated_tokens(4, 10, 8, min_period=3, max_period=4, rng=1))
    >>> 0 <= accuracy <= 1 and loss > 0
    True
    """
    return logits_quality(model(batch.tokens, head_mask=head_mask), batch)


def logits_quality(logits: FloatArray, batch: Batch | LabelledTokens) -> tuple[float, float]:
    """Loss (nats) and accuracy of ``logits`` ``(batch, seq, vocab)`` on ``batch.loss_mask``'s positions.

    :func:`evaluate` without the forward pass, for callers that need the logits for more.
    """
    loss, _ = cross_entropy(logits, batch.targets, batch.loss_mask)
    return loss, _accuracy(logits, batch)


def _accuracy(logits: FloatArray, batch: Batch | LabelledTokens) -> float:
    correct = logits.argmax(axis=-1) == batch.targets  # (batch, seq)
    return float(correct[batch.loss_mask].mean())


class LabelledTokens(Protocol):
    """What the measures read from a batch: a :class:`~mha.lab.Batch`, or a task's own batch with answers."""

    @property
    def tokens(self) -> IntArray: ...  # (batch, seq)
    @property
    def targets(self) -> IntArray: ...  # (batch, seq)
    @property
    def loss_mask(self) -> BoolArray: ...  # (batch, seq)


class Adam:
    """Adam with bias correction, updating the arrays of ``params`` in place.

    Parameters
    ----------
    params : dict of str to ndarray
        E.g. ``model.parameters()``; arrays are updated in place, so views into a layer work.
    lr : float, default 1e-2
    betas : (float, float), default (0.9, 0.99)
    eps : float, default 1e-8

    Examples
    --------
    >>> x = np.array([3.0])
    >>> opt = Adam({"x": x}, lr=0.1)
    >>> for _ in range(100):
    ...     opt.step({"x": 2 * x})  # minimise x**2
    >>> abs(float(x[0])) < 0.1
    True
    """

    def __init__(self, params: Mapping[str, FloatArray], *, lr: float = 1e-2,
                 betas: tuple[float, float] = (0.9, 0.99), eps: float = 1e-8) -> None:
        self.params = dict(params)
        self.lr, self.betas, self.eps = float(lr), tuple(betas), float(eps)
        self.m = {name: np.zeros_like(p) for name, p in self.params.items()}
        self.v = {name: np.zeros_like(p) for name, p in self.params.items()}
        self.t = 0

    def step(self, grads: Mapping[str, FloatArray], *, lr: float | None = None) -> None:
        """One update from ``grads`` (same names and shapes as ``params``)."""
        if set(grads) != set(self.params):
            missing, unexpected = sorted(set(self.params) - set(grads)), sorted(set(grads) - set(self.params))
            raise ValueError(f"grads must name exactly the parameters; missing {missing}, "
                             f"unexpected {unexpected}")
        self.t += 1
        lr = self.lr if lr is None else float(lr)
        beta1, beta2 = self.betas
        correct1, correct2 = 1 - beta1**self.t, 1 - beta2**self.t  # early averages are biased towards 0
        for name, p in self.params.items():
            g = grads[name]
            m, v = self.m[name], self.v[name]
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * g * g
            p -= lr * (m / correct1) / (np.sqrt(v / correct2) + self.eps)


@dataclass
class TrainingHistory:
    """What :func:`train` records: a loss and accuracy per step, and attention snapshots on a probe."""

    loss: list[float] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    #: step -> one (n_heads, seq, seq) weight array per layer, on the probe sequence
    snapshots: dict[int, list[np.ndarray]] = field(default_factory=dict)
    #: step -> (loss, accuracy) on the held-out batch, at the snapshot steps
    evaluations: dict[int, tuple[float, float]] = field(default_factory=dict)
    #: step -> what ``record(model)`` returned, at the snapshot steps
    records: dict[int, object] = field(default_factory=dict)
    seconds: float = 0.0


def train(model: LanguageModel, sample: Callable[[np.random.Generator], Any], *, steps: int, rng: Seed,
          lr: float = 1e-2, warmup: int = 50, probe: ArrayLike | None = None,
          snapshot_steps: Iterable[int] = (), held_out: Batch | None = None,
          record: Callable[[Any], object] | None = None, progress: bool = True,
          blas_threads: int | None = 1) -> TrainingHistory:
    """Train ``model`` with Adam on fresh batches from ``sample(rng)``, with a progress bar.

    The learning rate rises linearly over ``warmup`` steps, then decays along a cosine to a tenth.

    Parameters
    ----------
    model : LanguageModel
        :class:`~mha.lab.AttentionOnlyModel`, :class:`~mha.lab.TinyGPT` or :class:`~mha.lab.Seq2Seq`
        (``probe`` and ``held_out`` need one of the first two).
    sample : callable
        ``sample(rng) -> Batch``: a new batch per step (there is no fixed training set to overfit).
    steps : int
    rng : numpy.random.Generator or int
        Drives ``sample``; the same seed gives the same run.
    lr : float, default 1e-2
    warmup : int, default 50
    probe : int array_like, shape (seq,), optional
        A sequence whose attention weights are recorded at ``snapshot_steps`` (step 0 = before training).
    snapshot_steps : iterable of int
    held_out : Batch, optional
        Evaluated (loss and accuracy) at ``snapshot_steps``, into ``history.evaluations``.
    record : callable, optional
        ``record(model)`` is called at ``snapshot_steps``, into ``history.records`` (e.g. the largest
        attention logit).
    progress : bool, default True
        Show a tqdm progress bar (a widget in notebooks).
    blas_threads : int or None, default 1
        BLAS threads while training (see :func:`mha.lab.blas_threads`): the model's matrices are tiny, and
        waking threads costs more than they save. None leaves the setting alone.

    Returns
    -------
    TrainingHistory
    """
    steps = check_positive_int(steps, "steps")
    rng = as_generator(rng)
    snapshot_steps = set(snapshot_steps)
    if (probe is not None or held_out is not None) and not isinstance(model, CausalLanguageModel):
        raise TypeError(f"probe and held_out read next-token logits: {type(model).__name__} is not a causal "
                        "language model (use record=... to measure it at snapshot_steps)")
    if probe is not None:
        assert isinstance(model, CausalLanguageModel)  # checked above
        probe = model.check_tokens(np.asarray(probe)[None])
    elif snapshot_steps and held_out is None and record is None:
        raise ValueError("snapshot_steps need a probe sequence, a held_out batch or a record function")
    history = TrainingHistory()
    optimizer = Adam(model.parameters(), lr=lr)
    rates = learning_rates(lr, steps, warmup)
    start = time.perf_counter()
    # The bar counts training steps (not the final snapshot), so a finished run reads steps/steps.
    with blas_threads_limit(blas_threads), progress_bar(steps, progress) as bar:
        for step in range(steps + 1):
            if step in snapshot_steps and probe is not None:
                assert isinstance(model, CausalLanguageModel)
                _, weights = model(probe, return_weights=True)
                history.snapshots[step] = [w[0] for w in weights]  # (n_heads, seq, seq) per layer
            if step in snapshot_steps and held_out is not None:
                assert isinstance(model, CausalLanguageModel)
                history.evaluations[step] = evaluate(model, held_out)
            if step in snapshot_steps and record is not None:
                history.records[step] = record(model)
            if step == steps:
                break
            batch = sample(rng)
            loss, grads, logits = model.loss_grads_and_logits(batch)
            history.loss.append(loss)
            history.accuracy.append(_accuracy(logits, batch))
            optimizer.step(grads, lr=rates[step])
            bar.update(1)
    history.seconds = time.perf_counter() - start
    return history


def learning_rates(lr: float, steps: int, warmup: int = 50) -> np.ndarray:
    """The schedule :func:`train` follows: a linear warm-up, then a cosine decay to a tenth of ``lr``.

    Examples
    --------
    >>> learning_rates(1.0, 4, warmup=2).round(3)
    array([0.5  , 0.868, 0.55 , 0.232])
    """
    steps = check_positive_int(steps, "steps")
    warmup = check_positive_int(warmup, "warmup", minimum=0)
    step = np.arange(steps)
    rise = np.minimum(1.0, (step + 1) / warmup) if warmup else np.ones(steps)
    decay = 0.55 + 0.45 * np.cos(np.pi * step / steps)  # 1 at the start, 0.1 at the end
    return lr * rise * decay


class ProgressBar(Protocol):
    """What :func:`progress_bar` hands out: a context manager whose ``update(n)`` counts ``n`` steps done."""

    def __enter__(self) -> ProgressBar: ...
    def __exit__(self, *exc_info: object) -> bool | None: ...
    def update(self, n: int = 1) -> object: ...  # tqdm's returns whether it redrew; the stand-in's None


class _NoBar(contextlib.nullcontext):
    """Stands in for a tqdm bar when tqdm is missing (e.g. in a browser kernel): trains silently."""

    def __enter__(self) -> _NoBar:  # nullcontext would hand out None, which has no update()
        return self

    def update(self, n: int = 1) -> None:
        pass


def progress_bar(total: int, show: bool) -> ProgressBar:
    """A progress bar of ``total`` steps, used as a context manager: ``with progress_bar(n, True) as bar:``.

    A tqdm bar (a widget in notebooks, closed, hence green, at the end) when tqdm is installed; without
    tqdm (the NumPy-only install, a browser kernel) a silent stand-in whose ``update`` does nothing, so
    the training loops that call ``bar.update(1)`` run the same either way.

    Examples
    --------
    >>> with progress_bar(3, show=False) as bar:
    ...     for _ in range(3):
    ...         bar.update(1)
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _NoBar()
    if not show or os.environ.get("TQDM_DISABLE", "").lower() in {"1", "true", "yes"}:
        return _NoBar()
    return tqdm(total=total, desc="training", mininterval=0.5)
