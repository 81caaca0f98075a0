"""Widgets for the chapter on heads that learn: attention through training, and heads pruned one by one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mha.explorers.frames import FrameExplorer, frame_explorer
from mha.plotting.heads import plot_heads
from mha.plotting.training import plot_pruning
from mha.typing import ArrayLike

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.lab.analysis import PruningCurve

__all__ = ["training_explorer", "pruning_explorer"]


def training_explorer(snapshots: Mapping[int, Sequence[np.ndarray]], tokens: Sequence[str]) -> FrameExplorer:
    """Sliders for training step and layer; each frame shows every head of that layer at that step.

    Parameters
    ----------
    snapshots : mapping of int to sequence of ndarray
        ``TrainingHistory.snapshots``: step -> one (n_heads, seq, seq) weight array per layer.
    tokens : sequence of str
        The probe sequence's tokens, for the axes.

    Returns
    -------
    FrameExplorer

    Examples
    --------
    >>> w = np.full((2, 3, 3), 1 / 3)
    >>> explorer = training_explorer({0: [w, w], 10: [w, w]}, ["a", "b", "c"])
    >>> sorted(explorer.frames)
    [(0, 0), (0, 1), (10, 0), (10, 1)]
    """
    steps = sorted(snapshots)
    if not steps:
        raise ValueError("snapshots is empty: train with probe=... and snapshot_steps=...")
    n_layers = len(snapshots[steps[0]])

    def render(step, layer):
        return plot_heads(snapshots[step][layer], tokens, title=f"Layer {layer} after {step} training steps")

    return frame_explorer(
        render, {"step": steps, "layer": list(range(n_layers))},
        labels={"step": "training step", "layer": "layer"},
        title="Attention patterns as the model learns",
        caption="Rows are queries, columns keys. Watch a diagonal appear in layer 0 and a second, "
                "shifted one in layer 1 once the loss drops.",
    )


def pruning_explorer(curve: PruningCurve, accuracy: ArrayLike | None = None, *,
                     metric: str = "loss (nats)") -> FrameExplorer:
    """A slider for the number of heads removed (least important first): which heads remain, and the cost.

    Parameters
    ----------
    curve : PruningCurve
        From :func:`mha.lab.analysis.pruning_curve`.
    accuracy : array_like, optional
        Accuracy along the same removal order.
    metric : str
        Label of ``curve.values``.

    Returns
    -------
    FrameExplorer

    Examples
    --------
    >>> from mha.lab.analysis import pruning_curve
    >>> curve = pruning_curve(lambda m: float(2 - m.sum()), np.array([0.2, 0.1]))
    >>> len(pruning_explorer(curve).frames)
    3
    """

    def render(n_removed):
        return plot_pruning(curve, accuracy, n_removed=n_removed, metric=metric)

    return frame_explorer(
        render, {"n_removed": list(range(len(curve.values)))},
        labels={"n_removed": "heads removed"},
        title="Pruning heads, least important first",
        caption="Left: the heads still switched on. Right: loss and accuracy after each removal.",
    )
