"""Widget: every head's QK and OV circuits, one frame per head (layer and head sliders, no kernel needed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mha.explorers.frames import FrameExplorer, frame_explorer
from mha.lab.heads_that_learn_circuits import head_circuits
from mha.plotting.heads_that_learn_circuits import plot_circuits

if TYPE_CHECKING:  # names for the annotations only: not imported at run time
    from mha.lab.models import AttentionOnlyModel

__all__ = ["circuits_explorer"]


def circuits_explorer(model: AttentionOnlyModel, token_names: Sequence[str], *,
                      previous: int | None = None) -> FrameExplorer:
    """Sliders for the layer and the head; each frame is :func:`mha.plotting.plot_circuits` of that head.

    Parameters
    ----------
    model : AttentionOnlyModel
    token_names : sequence of str
    previous : int, optional
        The layer-0 head whose output later layers' keys carry (e.g. the previous-token head): later
        layers' QK circuits are drawn through it (K-composition), and the explorer opens on it.

    Returns
    -------
    mha.explorers.frames.FrameExplorer

    Examples
    --------
    >>> from mha.lab import AttentionOnlyModel
    >>> model = AttentionOnlyModel(vocab_size=4, seq_len=6, d_model=8, n_heads=2, rng=0)
    >>> explorer = circuits_explorer(model, list("ABCD"), previous=0)
    >>> len(explorer.frames), list(explorer.sliders)
    (4, ['layer', 'head'])
    """
    names = list(token_names)
    if previous is not None and (isinstance(previous, bool) or previous not in range(model.n_heads)):
        raise ValueError(f"previous must be a head of layer 0, 0 to {model.n_heads - 1}, got {previous!r}")

    def render(layer, head):
        return plot_circuits(head_circuits(model, layer, head, previous=previous if layer else None), names)

    return frame_explorer(
        render,
        {"layer": list(range(len(model.layers))), "head": list(range(model.n_heads))},
        initial={"layer": 0, "head": previous} if previous is not None else None,
        title="Each head's circuits: where it looks (QK) and what it writes (OV)",
        caption="Top: the scores the head's weights alone give (layer 0: positions; later layers: the "
                "query's token against the token before the key). Bottom: the logits each attended token "
                "raises.",
        dpi=100,
        colors=64,
    )
