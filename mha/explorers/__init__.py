"""The course's widgets: each one a thin wrapper that hands a pure plot function from :mod:`mha.plotting`
and its slider values to :func:`mha.widgets.frame_explorer`. One module per topic.
"""

__all__: list[str] = []
