"""The course's widgets: each one a thin wrapper that hands a pure plot function from :mod:`mha.plotting`
and its slider values to :func:`mha.widgets.frame_explorer`. One module per topic.
"""

from mha.explorers.block import stack_explorer
from mha.explorers.cost import cost_explorer
from mha.explorers.cross import alignment_explorer
from mha.explorers.diagram import diagram_explorer
from mha.explorers.efficient import kv_sharing_explorer, online_softmax_explorer
from mha.explorers.heads import head_explorer
from mha.explorers.positions import alibi_explorer, relative_bias_explorer, rotary_explorer
from mha.explorers.scaling import scaling_explorer
from mha.explorers.shapes import shape_explorer
from mha.explorers.training import pruning_explorer, training_explorer

__all__ = [
    "head_explorer",
    "scaling_explorer",
    "shape_explorer",
    "alignment_explorer",
    "cost_explorer",
    "training_explorer",
    "pruning_explorer",
    "online_softmax_explorer",
    "kv_sharing_explorer",
    "alibi_explorer",
    "relative_bias_explorer",
    "rotary_explorer",
    "stack_explorer",
    "diagram_explorer",
]
