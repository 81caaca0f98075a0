"""The course's widgets: each one a thin wrapper that hands a pure plot function from :mod:`mha.plotting`
and its slider values to the frame machinery of :mod:`mha.explorers.frames` (live mode in a running kernel:
:mod:`mha.explorers.live`). One module per topic; the data they show comes from :mod:`mha.lab`. The real
model's head, model and query-key views are drawn in the browser instead
(:mod:`mha.explorers.attention_view`), and so are the temperature view
(:mod:`mha.explorers.self_attention_softmax`), the query-key plane
(:mod:`mha.explorers.self_attention_geometry`) and the questions a reader answers before opening a
solution (:mod:`mha.explorers.quiz`); they share :mod:`mha.explorers.browser`. Needs the ``widgets``
extra (matplotlib and ipywidgets).
"""

from mha.extras import require

require("mha.explorers", "widgets", "matplotlib", "ipywidgets")

from mha.explorers.cost import cost_explorer
from mha.explorers.cross_attention import alignment_explorer
from mha.explorers.efficient_attention import kv_sharing_explorer, online_softmax_explorer
from mha.explorers.encoder_decoder import learned_alignment_explorer
from mha.explorers.frames import FrameExplorer, frame_explorer
from mha.explorers.heads_that_learn_circuits import circuits_explorer
from mha.explorers.modern_attention import context_explorer, window_explorer
from mha.explorers.multi_head import head_explorer, render_heads
from mha.explorers.multi_head_diagram import diagram_explorer
from mha.explorers.positions import alibi_explorer, relative_bias_explorer, rotary_explorer
from mha.explorers.quiz import quiz
from mha.explorers.real_heads import head_view, model_view, query_key_view, sentence_explorer
from mha.explorers.self_attention import scaling_explorer
from mha.explorers.self_attention_geometry import geometry_view
from mha.explorers.self_attention_one_head import head_steps_explorer, lookup_explorer
from mha.explorers.self_attention_softmax import softmax_view
from mha.explorers.shapes import shape_explorer
from mha.explorers.tiny_gpt import sampling_explorer
from mha.explorers.training import pruning_explorer, training_explorer
from mha.explorers.transformer_block import stack_explorer

__all__ = [
    "frame_explorer",
    "FrameExplorer",
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
    "render_heads",
    "head_view",
    "model_view",
    "query_key_view",
    "sentence_explorer",
    "sampling_explorer",
    "learned_alignment_explorer",
    "softmax_view",
    "window_explorer",
    "context_explorer",
    "quiz",
    "head_steps_explorer",
    "lookup_explorer",
    "geometry_view",
    "circuits_explorer",
]
