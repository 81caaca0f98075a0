"""How the number of heads affects quality: the same small model trained with 1, 2, 4, ... heads.

At a fixed ``d_model``, more heads means narrower heads (``d_head = d_model / n_heads``) with the same
parameters and the same matrix products. What changes is how many attention distributions each query
gets. :func:`head_count_sweep` measures what that does to quality on a task that needs three relations
at every scored position, :func:`card_relations`:

Each token is a *card* with a colour and a number; every colour appears exactly twice per sequence. At
the second card of a colour, the model must name three numbers at once:

1. the number on the card just before (a relation by position: offset -1);
2. the number on the earlier card of the same colour (a relation by content);
3. the number on the first card of the sequence (a relation to a fixed place).

The answer is one class out of ``n_numbers ** 3`` (the three numbers as the digits of one id), read
from the residual stream by the model's linear readout. One head gives each query one distribution over
the cards, so it must blend the places it reads; separate heads can each fetch one.

How much a blend can carry: :func:`blend_margin` measures how far apart the blends of different answers
stay for given weights (one-hot values), and :func:`relation_margins` how confidently a trained model
names each number.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from mha.attention import softmax
from mha.lab.models import AttentionOnlyModel
from mha.lab.training import logits_quality, progress_bar, train
from mha.typing import ArrayLike, Seed
from mha.validation import as_generator, check_positive_int, check_positive_real

__all__ = ["RELATIONS", "CardBatch", "HeadCountSweep", "blend_margin", "card_relations", "card_vocab_size",
           "head_count_sweep", "relation_accuracy", "relation_margins"]

#: The three numbers each answer is made of, in the order of their digits in the answer id.
RELATIONS = ("previous card", "same colour", "first card")


@dataclass(frozen=True)
class CardBatch:
    """Cards, and the three-number answers expected at the second card of each colour.

    It has the ``tokens``, ``targets`` and ``loss_mask`` that :class:`~mha.lab.AttentionOnlyModel`
    trains on (like :class:`~mha.lab.Batch`), but ``targets`` are answers, not next tokens.

    Attributes
    ----------
    tokens : int ndarray, shape (batch, seq)
        Card ids, ``colour * n_numbers + number``.
    targets : int ndarray, shape (batch, seq)
        Answer ids, ``(previous * n_numbers + same_colour) * n_numbers + first``; 0 where not scored.
    loss_mask : bool ndarray, shape (batch, seq)
        True at the second card of each colour (position 0 never: it has no previous card).
    answers : int ndarray, shape (batch, seq, 3)
        The three numbers separately, in the order of :data:`RELATIONS`.
    """

    tokens: np.ndarray
    targets: np.ndarray
    loss_mask: np.ndarray
    answers: np.ndarray


def card_vocab_size(n_colours: int, n_numbers: int) -> int:
    """Ids the model needs: card ids (``n_colours * n_numbers``) and answer ids (``n_numbers ** 3``).

    Examples
    --------
    >>> card_vocab_size(8, 4)
    64
    """
    return max(n_colours * n_numbers, n_numbers ** len(RELATIONS))


def card_relations(batch: int, n_colours: int, n_numbers: int, *, rng: Seed) -> CardBatch:
    """Sequences of ``2 * n_colours`` cards, each colour twice in random order, random numbers.

    Parameters
    ----------
    batch : int
    n_colours : int
        At least 2; the sequence length is ``2 * n_colours``.
    n_numbers : int
        At least 2; answers are one of ``n_numbers ** 3`` ids.
    rng : numpy.random.Generator or int

    Returns
    -------
    CardBatch

    Examples
    --------
    >>> cards = card_relations(2, n_colours=3, n_numbers=4, rng=0)
    >>> cards.tokens.shape, cards.answers.shape, cards.loss_mask.sum(axis=1).tolist()
    ((2, 6), (2, 6, 3), [3, 3])
    >>> previous, _, first = cards.answers[0, 3]
    >>> bool(previous == cards.tokens[0, 2] % 4 and first == cards.tokens[0, 0] % 4)
    True
    """
    batch = check_positive_int(batch, "batch")
    n_colours = check_positive_int(n_colours, "n_colours", minimum=2)
    n_numbers = check_positive_int(n_numbers, "n_numbers", minimum=2)
    rng = as_generator(rng)
    seq = 2 * n_colours
    pairs = np.repeat(np.arange(n_colours), 2)  # (seq,): each colour twice
    colours = rng.permuted(np.tile(pairs, (batch, 1)), axis=1)  # (batch, seq)
    numbers = rng.integers(0, n_numbers, size=(batch, seq))  # (batch, seq)
    earlier = np.tri(seq, seq, -1, dtype=bool)  # (seq_q, seq_k): keys strictly before the query
    same = (colours[:, :, None] == colours[:, None, :]) & earlier  # (batch, seq_q, seq_k)
    loss_mask = same.any(axis=-1)  # (batch, seq): a second card (never position 0)
    match = same.argmax(axis=-1)  # (batch, seq): where the same colour was (0 when none)
    previous = np.concatenate([numbers[:, :1], numbers[:, :-1]], axis=1)  # (batch, seq)
    first = np.broadcast_to(numbers[:, :1], numbers.shape)  # (batch, seq)
    answers = np.stack([previous, np.take_along_axis(numbers, match, axis=1), first], axis=-1)
    # answers: (batch, seq, 3); their ids read the three numbers as base-n_numbers digits
    ids = (answers * n_numbers ** np.arange(len(RELATIONS))[::-1]).sum(axis=-1)  # (batch, seq)
    return CardBatch(colours * n_numbers + numbers, np.where(loss_mask, ids, 0), loss_mask, answers)


def relation_accuracy(logits: ArrayLike, cards: CardBatch, n_numbers: int) -> np.ndarray:
    """How often each of the three numbers in the predicted answer is right, on scored positions.

    Parameters
    ----------
    logits : ndarray, shape (batch, seq, vocab_size)
    cards : CardBatch
    n_numbers : int

    Returns
    -------
    ndarray, shape (3,)
        One accuracy per relation, in the order of :data:`RELATIONS`; chance is ``1 / n_numbers``.

    Examples
    --------
    >>> cards = card_relations(4, 3, 2, rng=0)
    >>> perfect = np.eye(8)[cards.targets]  # (batch, seq, 8): one-hot on the right answer
    >>> relation_accuracy(perfect, cards, 2).tolist()
    [1.0, 1.0, 1.0]
    """
    predicted = np.asarray(logits).argmax(axis=-1)  # (batch, seq), an answer id
    powers = n_numbers ** np.arange(len(RELATIONS))[::-1]  # (3,)
    digits = predicted[..., None] // powers  # (batch, seq, 3); the first may exceed n_numbers - 1
    digits[..., 1:] %= n_numbers
    return (digits == cards.answers)[cards.loss_mask].mean(axis=0)  # (3,)


def relation_margins(logits: ArrayLike, cards: CardBatch, n_numbers: int) -> np.ndarray:
    """How confidently the model names each number: median log-odds of the right one over the best wrong one.

    The answer's probabilities are summed over the other two numbers, giving one distribution over
    ``n_numbers`` per relation; the margin is ``log p(right) - log max p(wrong)`` at each scored position
    (positive when that number is right), and the median over positions is reported.

    Parameters
    ----------
    logits : ndarray, shape (batch, seq, vocab_size)
    cards : CardBatch
    n_numbers : int

    Returns
    -------
    ndarray, shape (3,)
        One margin per relation, in nats, in the order of :data:`RELATIONS`; about 0 for a guess.

    Examples
    --------
    >>> cards = card_relations(4, 3, 2, rng=0)
    >>> sure = 20.0 * np.eye(8)[cards.targets]  # (batch, seq, 8): the right answer 20 nats ahead
    >>> relation_margins(sure, cards, 2).round(1).tolist()  # log((e**20 + 3) / 4): 3 others share it
    [18.6, 18.6, 18.6]
    """
    logits = np.asarray(logits, dtype=np.float64)[..., :n_numbers ** len(RELATIONS)]
    probs = softmax(logits)  # (batch, seq, n_numbers ** 3)
    probs = probs[cards.loss_mask].reshape(-1, *(n_numbers,) * len(RELATIONS))  # (scored, n, n, n)
    rows = np.arange(probs.shape[0])
    margins = []
    for r in range(len(RELATIONS)):
        others = tuple(1 + j for j in range(len(RELATIONS)) if j != r)
        marginal = probs.sum(axis=others)  # (scored, n_numbers): this relation's number
        right = cards.answers[cards.loss_mask][:, r]  # (scored,)
        wrong = marginal.copy()
        wrong[rows, right] = 0.0
        tiny = np.finfo(np.float64).tiny  # log(0) would be -inf for a number the model rules out
        margins.append(np.median(np.log(marginal[rows, right] + tiny) - np.log(wrong.max(axis=1) + tiny)))
    return np.array(margins)


def blend_margin(weights: ArrayLike, n_numbers: int = 4) -> float:
    """How far apart one head's blends of different answers stay, for one-hot values.

    A head that puts weight ``weights[r]`` on the card of relation ``r`` outputs the blend
    ``sum_r weights[r] * onehot(number_r)``. Two answers that differ in any number give two blends; the
    margin is the smallest distance between the blends of two different answers, divided by ``√2`` so
    that one relation with all the weight has margin 1. Zero means two answers look the same.

    Parameters
    ----------
    weights : array_like of float, shape (n_relations,)
        Non-negative, at most 1 in total (the rest of the head's weight lands elsewhere).
    n_numbers : int, default 4

    Returns
    -------
    float

    Examples
    --------
    >>> blend_margin([1.0]), blend_margin([0.5, 0.5]), round(blend_margin([2 / 3, 1 / 3]), 3)
    (1.0, 0.0, 0.333)
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 1 or weights.size == 0 or (weights < 0).any() or weights.sum() > 1 + 1e-9:
        raise ValueError(f"weights must be a non-empty 1-D list of non-negative shares summing to at most 1, "
                         f"got {weights.tolist()}")
    n_numbers = check_positive_int(n_numbers, "n_numbers", minimum=2)
    answers = np.array(list(itertools.product(range(n_numbers), repeat=weights.size)))  # (n**k, k)
    blends = (np.eye(n_numbers)[answers] * weights[:, None]).sum(axis=1)  # (n**k, n_numbers)
    gaps = np.linalg.norm(blends[:, None] - blends[None], axis=-1) / math.sqrt(2)  # (n**k, n**k)
    return float(gaps[~np.eye(len(answers), dtype=bool)].min())


@dataclass(frozen=True)
class HeadCountSweep:
    """Held-out quality of models that differ only in their number of heads, over several seeds.

    Attributes
    ----------
    head_counts : int ndarray, shape (n_counts,)
    d_model : int
    loss : ndarray, shape (n_counts, n_seeds)
        Held-out cross-entropy in nats, on the scored positions.
    accuracy : ndarray, shape (n_counts, n_seeds)
        Share of scored positions whose whole answer (all three numbers) is right.
    relation_accuracy : ndarray, shape (n_counts, n_seeds, 3)
        Accuracy of each number separately, in the order of :data:`RELATIONS`.
    seconds : ndarray, shape (n_counts,)
        Training and evaluation time of all seeds, per head count.
    chance_loss : float
        The loss of a uniform guess over the answers, ``3 * log(n_numbers)``.
    models : tuple of tuple of AttentionOnlyModel
        The trained models, ``models[i][s]`` for head count ``i`` and seed ``s`` (see :meth:`model`).
    held_out : CardBatch or None
        The held-out cards every model was scored on.
    """

    head_counts: np.ndarray
    d_model: int
    loss: np.ndarray
    accuracy: np.ndarray
    relation_accuracy: np.ndarray
    seconds: np.ndarray
    chance_loss: float
    models: tuple = field(default=(), repr=False)
    held_out: CardBatch | None = field(default=None, repr=False)

    def model(self, n_heads: int, seed: int) -> AttentionOnlyModel:
        """The trained model with ``n_heads`` heads from seed number ``seed`` (0, 1, ...)."""
        where = np.flatnonzero(self.head_counts == n_heads)
        if where.size == 0 or not 0 <= seed < self.loss.shape[1]:
            raise ValueError(f"no run with n_heads={n_heads} and seed={seed}: the sweep has head counts "
                             f"{self.head_counts.tolist()} and seeds 0 to {self.loss.shape[1] - 1}")
        return self.models[int(where[0])][seed]

    @property
    def d_head(self) -> np.ndarray:
        """``d_model // n_heads`` per head count, shape (n_counts,)."""
        return self.d_model // self.head_counts

    def _metric(self, metric: str) -> np.ndarray:
        if metric not in ("loss", "accuracy", "relation_accuracy"):
            raise ValueError(f"metric must be 'loss', 'accuracy' or 'relation_accuracy', got {metric!r}")
        return getattr(self, metric)

    def mean(self, metric: str = "loss") -> np.ndarray:
        """Mean over seeds: shape (n_counts,), or (n_counts, 3) for ``"relation_accuracy"``."""
        return self._metric(metric).mean(axis=1)

    def std(self, metric: str = "loss") -> np.ndarray:
        """Standard deviation over seeds (ddof=1 when there are several), shaped like :meth:`mean`."""
        values = self._metric(metric)
        return values.std(axis=1, ddof=1 if values.shape[1] > 1 else 0)

    def best(self) -> int:
        """The head count with the lowest mean held-out loss."""
        return int(self.head_counts[np.argmin(self.mean("loss"))])


def _check_head_counts(head_counts, d_model: int) -> np.ndarray:
    counts = np.asarray(head_counts)
    if counts.ndim != 1 or counts.size == 0 or counts.dtype.kind not in "iu" or (counts < 1).any():
        raise ValueError(f"head_counts must be a non-empty 1-D sequence of positive integers, got "
                         f"{head_counts!r}")
    bad = counts[d_model % counts != 0]
    if bad.size:
        raise ValueError(f"every head count must divide d_model={d_model}; got {bad.tolist()} "
                         f"(d_head would be {', '.join(f'{d_model / h:.4g}' for h in bad)})")
    return counts.astype(int)


def head_count_sweep(head_counts: Sequence[int] = (1, 2, 4, 8, 16, 32), *, rng: Seed, d_model: int = 32,
                     n_seeds: int = 3, steps: int = 300, batch: int = 32, lr: float = 3e-2,
                     n_colours: int = 6, n_numbers: int = 4, n_held_out: int = 512,
                     qk_init_scale: float = 1.0, progress: bool = True) -> HeadCountSweep:
    """Train a one-layer :class:`~mha.lab.AttentionOnlyModel` per head count and seed; score held-out cards.

    Everything but the number of heads is the same across head counts: ``d_model``, the parameter count,
    the training batches (seed ``s`` draws the same batches for every head count), the initial weight
    matrices (seed ``s`` draws the same numbers, split into heads differently) and the held-out batch.

    Parameters
    ----------
    head_counts : sequence of int, default (1, 2, 4, 8, 16, 32)
        Each must divide ``d_model``.
    rng : numpy.random.Generator or int
        Draws the held-out batch and one seed per run; the same ``rng`` gives the same sweep.
    d_model : int, default 32
    n_seeds : int, default 3
    steps, batch : int, default 300, 32
        Adam steps per run, and fresh training sequences per step.
    lr : float, default 3e-2
        Peak learning rate of :func:`~mha.lab.train`'s warm-up and cosine schedule.
    n_colours, n_numbers : int, default 6, 4
        The task's size (see :func:`card_relations`).
    n_held_out : int, default 512
        Held-out sequences.
    qk_init_scale : float, default 1.0
        Multiplies the initial query and key weights: below 1, every head's attention starts closer to
        uniform (its scores closer to 0), so it commits to a key later.
    progress : bool, default True
        One progress bar over all runs.

    Returns
    -------
    HeadCountSweep

    Examples
    --------
    >>> sweep = head_count_sweep((1, 2), d_model=8, n_seeds=2, steps=3, n_colours=3, n_held_out=8,
    ...                          rng=0, progress=False)
    >>> sweep.loss.shape, sweep.relation_accuracy.shape, sweep.d_head.tolist()
    ((2, 2), (2, 2, 3), [8, 4])
    """
    d_model = check_positive_int(d_model, "d_model")
    counts = _check_head_counts(head_counts, d_model)
    n_seeds = check_positive_int(n_seeds, "n_seeds")
    steps, batch = check_positive_int(steps, "steps"), check_positive_int(batch, "batch")
    n_held_out = check_positive_int(n_held_out, "n_held_out")
    qk_init_scale = check_positive_real(qk_init_scale, "qk_init_scale")
    rng = as_generator(rng)
    held_out = card_relations(n_held_out, n_colours, n_numbers, rng=rng)
    run_seeds = rng.integers(0, 2**63, size=(n_seeds, 2))  # (n_seeds, 2): weights, batches
    vocab, seq = card_vocab_size(n_colours, n_numbers), 2 * n_colours

    def sample(data_rng):
        return card_relations(batch, n_colours, n_numbers, rng=data_rng)

    results = np.zeros((counts.size, n_seeds, 2 + len(RELATIONS)))  # loss, accuracy, per relation
    seconds = np.zeros(counts.size)
    models: list[list[AttentionOnlyModel]] = [[] for _ in counts]
    with progress_bar(counts.size * n_seeds, progress) as bar:
        for i, n_heads in enumerate(counts):
            start = time.perf_counter()
            for s, (weight_seed, data_seed) in enumerate(run_seeds):
                model = AttentionOnlyModel(vocab, seq, d_model=d_model, n_heads=int(n_heads), n_layers=1,
                                           rng=np.random.default_rng(weight_seed))
                if qk_init_scale != 1.0:
                    for layer in model.layers:  # in place: W_q and W_k may be views of one fused array
                        layer.W_q[...] *= layer.W_q.dtype.type(qk_init_scale)
                        layer.W_k[...] *= layer.W_k.dtype.type(qk_init_scale)
                train(model, sample, steps=steps, rng=np.random.default_rng(data_seed), lr=lr,
                      progress=False)
                logits = model(held_out.tokens)  # (batch, seq, vocab): one forward pass for both
                loss, accuracy = logits_quality(logits, held_out)
                parts = relation_accuracy(logits, held_out, n_numbers)
                results[i, s] = [loss, accuracy, *parts]
                models[i].append(model)
                bar.update(1)
            seconds[i] = time.perf_counter() - start
    return HeadCountSweep(counts, d_model, results[..., 0], results[..., 1], results[..., 2:], seconds,
                          len(RELATIONS) * math.log(n_numbers), tuple(map(tuple, models)), held_out)
