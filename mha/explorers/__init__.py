"""The course's widgets: each one a thin wrapper that hands a pure plot function from :mod:`mha.plotting`
and its slider values to :func:`mha.widgets.frame_explorer`. One module per topic.
"""

from mha.explorers.cost import cost_explorer
from mha.explorers.cross import alignment_explorer

__all__ = ["alignment_explorer", "cost_explorer"]
