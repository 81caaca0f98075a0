"""Widgets for the chapter on efficient attention: online softmax block by block, and shared KV heads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from mha.cost import format_bytes
from mha.explorers.frames import FrameExplorer, frame_explorer
from mha.plotting.efficient_attention import plot_online_softmax
from mha.plotting.heads import plot_heads
from mha.typing import ArrayLike, FloatArray

__all__ = ["online_softmax_explorer", "kv_sharing_explorer"]


def online_softmax_explorer(scores: ArrayLike, block_size: int, running_max: FloatArray,
                            running_sum: ArrayLike, estimates: ArrayLike, final: ArrayLike) -> FrameExplorer:
    """A slider over key blocks: what the online softmax knows after each one.

    Parameters are those of :func:`mha.plotting.plot_online_softmax` (without ``step``).

    Examples
    --------
    >>> explorer = online_softmax_explorer([0.0, 1.0, 3.0], 2, [1.0, 3.0], [1.4, 1.5], [[0.1], [0.2]], [0.2])
    >>> sorted(explorer.frames)
    [(1,), (2,)]
    """
    n_blocks = len(running_max)

    def render(blocks_seen):
        return plot_online_softmax(scores, block_size, running_max, running_sum, estimates, final,
                                   step=blocks_seen - 1)

    return frame_explorer(
        render, {"blocks_seen": list(range(1, n_blocks + 1))}, labels={"blocks_seen": "key blocks processed"},
        title="Online softmax, one key block at a time",
        caption="Blue: blocks already folded in; orange: the block just read; grey: not read yet. "
                "The estimate equals the exact output once every block has been read.",
    )


def kv_sharing_explorer(snapshots: Mapping[int, Mapping[int, Sequence[np.ndarray]]],
                        evaluations: Mapping[int, Mapping[int, tuple[float, float]]],
                        cache_bytes: Mapping[int, int], tokens: Sequence[str]) -> FrameExplorer:
    """Sliders for the number of key/value heads and the uptraining step; frames show every head.

    Parameters
    ----------
    snapshots : mapping n_kv_heads -> (mapping step -> list of per-layer (n_heads, seq, seq) weights)
        ``TrainingHistory.snapshots`` of each uptraining run.
    evaluations : mapping n_kv_heads -> (mapping step -> (loss, accuracy))
        ``TrainingHistory.evaluations`` of the same runs, at the same steps.
    cache_bytes : mapping n_kv_heads -> int
        KV cache bytes of each configuration (e.g. per sequence, all layers).
    tokens : sequence of str
        The probe sequence.

    Examples
    --------
    >>> w = [np.full((2, 3, 3), 1 / 3)] * 2
    >>> explorer = kv_sharing_explorer({2: {0: w}, 1: {0: w}}, {2: {0: (0.1, 0.9)}, 1: {0: (2.0, 0.3)}},
    ...                                {2: 96, 1: 48}, ["a", "b", "c"])
    >>> sorted(explorer.frames)
    [(1, 0), (2, 0)]
    """
    kv_options = sorted(snapshots, reverse=True)
    steps = sorted(next(iter(snapshots.values())))

    def render(n_kv_heads, step):
        weights = snapshots[n_kv_heads][step]
        n_heads = weights[0].shape[0]
        titles = [f"layer {layer} head {head}" for layer in range(len(weights)) for head in range(n_heads)]
        loss, accuracy = evaluations[n_kv_heads][step]
        title = (f"{n_kv_heads} key/value heads per layer (cache {format_bytes(cache_bytes[n_kv_heads])}), "
                 f"{step} uptraining steps: accuracy {accuracy:.3f}, loss {loss:.3f}")
        return plot_heads(np.concatenate(weights), tokens, head_titles=titles, ncols=n_heads, title=title)

    return frame_explorer(
        render, {"n_kv_heads": kv_options, "step": steps},
        labels={"n_kv_heads": "key/value heads", "step": "uptraining steps"},
        title="Sharing key/value heads, then uptraining",
        caption="Mean-pooling the key/value projections blurs the heads' patterns; a few dozen steps "
                "of training restore them.",
    )
