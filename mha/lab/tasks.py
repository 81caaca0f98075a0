"""Synthetic sequence tasks whose solutions need attention heads with different jobs.

The main task, :func:`repeated_tokens`, is the one behind "induction heads": a random run of distinct
tokens followed by copies of itself, e.g. ``K D Q A  K D Q A  K D Q A ...`` with a period that changes
from sequence to sequence. Once a token has been seen, the next token is predictable: find where the
current token appeared before and copy what came after it. No fixed offset solves it (the period varies),
so a model has to *match content*. An attention-only model does it with two heads in two layers: a
"previous-token" head writes each token's predecessor into its position, and an "induction" head in the
next layer looks for the position whose predecessor equals the current token.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from mha.typing import Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["Batch", "repeated_tokens", "token_names"]


@dataclass(frozen=True)
class Batch:
    """Inputs and next-token targets of a batch of sequences.

    Attributes
    ----------
    tokens : int ndarray, shape (batch, seq_len)
    targets : int ndarray, shape (batch, seq_len)
        ``targets[:, t] = tokens[:, t + 1]``; the last position's target is a placeholder 0.
    loss_mask : bool ndarray, shape (batch, seq_len)
        True where the target is predictable from the past and counts in the loss and accuracy.
    period : int ndarray, shape (batch,)
        Length of each sequence's repeated run.
    start : int ndarray, shape (batch,)
        Where the run begins (the length of the random filler before it).
    """

    tokens: np.ndarray
    targets: np.ndarray
    loss_mask: np.ndarray
    period: np.ndarray
    start: np.ndarray

    def induction_targets(self) -> np.ndarray:
        """Where an induction head should look: keys whose *previous* token equals the query's token.

        Returns a bool array of shape (batch, seq_q, seq_k): ``[b, t, j]`` is True when ``j <= t`` and
        ``tokens[b, j - 1] == tokens[b, t]``, i.e. ``j`` holds what followed an earlier copy of the
        current token. Copying from any such ``j`` predicts the next token.

        Examples
        --------
        >>> b = Batch(np.array([[0, 1, 0, 1]]), np.zeros((1, 4), int), np.ones((1, 4), bool),
        ...           np.array([2]), np.array([0]))
        >>> b.induction_targets()[0].astype(int)
        array([[0, 0, 0, 0],
               [0, 0, 0, 0],
               [0, 1, 0, 0],
               [0, 0, 1, 0]])
        """
        tokens = self.tokens
        matches = np.zeros(tokens.shape + tokens.shape[-1:], dtype=bool)  # (batch, seq_q, seq_k)
        matches[:, :, 1:] = tokens[:, :, None] == tokens[:, None, :-1]  # tokens[t] == tokens[j - 1]
        seq = tokens.shape[1]
        return matches & np.tri(seq, seq, dtype=bool)  # only keys at or before the query


def token_names(vocab_size: int) -> list[str]:
    """Short printable names for token ids: ``A``, ``B``, ... then ``t26``, ``t27``, ...

    Examples
    --------
    >>> token_names(3)
    ['A', 'B', 'C']
    """
    vocab_size = check_positive_int(vocab_size, "vocab_size")
    letters = string.ascii_uppercase
    return [letters[i] if i < len(letters) else f"t{i}" for i in range(vocab_size)]


def repeated_tokens(batch: int, seq_len: int, vocab_size: int, *, min_period: int, max_period: int,
                    rng: Seed) -> Batch:
    """Random filler, then a run of distinct tokens repeated until ``seq_len`` is filled.

    Each sequence draws a period ``P`` from ``[min_period, max_period]``, a run of ``P`` distinct tokens,
    and a filler length ``L`` from ``[0, seq_len - 2P]``. The filler uses only tokens outside the run
    (repeats allowed); then position ``L + i`` holds ``run[i % P]``. The target at ``t`` is the next token;
    it counts in the loss from ``t = L + P`` on, once the current token has been seen followed by the answer.
    The random filler moves the run around, so every position may need to know its predecessor.

    Parameters
    ----------
    batch, seq_len, vocab_size : int
    min_period, max_period : int
        ``2 <= min_period <= max_period``, ``2 * max_period <= seq_len - 1`` (room for the run and one
        repeat) and ``max_period < vocab_size`` (the filler needs a token outside the run).
    rng : numpy.random.Generator or int

    Returns
    -------
    Batch

    Examples
    --------
    >>> b = repeated_tokens(2, 10, 6, min_period=3, max_period=3, rng=0)
    >>> start = int(b.start[0])
    >>> b.tokens[0, start:start + 3].tolist() == b.tokens[0, start + 3:start + 6].tolist()
    True
    >>> int(b.loss_mask[0].sum()) == 10 - 1 - start - 3
    True
    """
    batch = check_positive_int(batch, "batch")
    seq_len = check_positive_int(seq_len, "seq_len")
    vocab_size = check_positive_int(vocab_size, "vocab_size")
    min_period = check_positive_int(min_period, "min_period", minimum=2)
    max_period = check_positive_int(max_period, "max_period", minimum=2)
    if not (min_period <= max_period and 2 * max_period <= seq_len - 1 and max_period < vocab_size):
        raise ValueError(
            "need 2 <= min_period <= max_period, 2 * max_period <= seq_len - 1 and max_period < vocab_size; "
            f"got min_period={min_period}, max_period={max_period}, seq_len={seq_len}, "
            f"vocab_size={vocab_size}"
        )
    rng = as_generator(rng)
    period = rng.integers(min_period, max_period + 1, size=batch)  # (batch,)
    start = rng.integers(0, seq_len - 2 * period + 1)  # (batch,), filler length L
    # A random permutation of the vocabulary per sequence: the run is its first P entries, the filler
    # draws from the rest.
    order = rng.permuted(np.tile(np.arange(vocab_size), (batch, 1)), axis=1)  # (batch, vocab_size)
    t = np.arange(seq_len)[None, :]  # (1, seq_len)
    in_run = (t - start[:, None]) % period[:, None]  # (batch, seq_len), index into the run
    n_rest = vocab_size - period  # (batch,), tokens left for the filler
    filler = period[:, None] + (rng.random((batch, seq_len)) * n_rest[:, None]).astype(int)
    # filler: (batch, seq_len), uniform over positions P .. vocab_size - 1 of `order`
    index = np.where(t >= start[:, None], in_run, filler)  # (batch, seq_len), into `order`
    tokens = np.take_along_axis(order, index, axis=1)  # (batch, seq_len)
    targets = np.zeros_like(tokens)
    targets[:, :-1] = tokens[:, 1:]
    loss_mask = (t >= (start + period)[:, None]) & (t < seq_len - 1)  # (batch, seq_len)
    return Batch(tokens, targets, loss_mask, period, start)
