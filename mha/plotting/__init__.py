"""Pure plotting functions: arrays in, a ``matplotlib.figure.Figure`` out.

Figures are :class:`~mha.plotting.style.CourseFigure` objects built without ``pyplot``, so nothing is
shown twice in a notebook and nothing needs closing; a notebook cell displays the returned figure, with
its alt text. Every figure has a
white background (readable on the site's dark theme), labelled axes, titled heads and a perceptual
colormap. One module per topic; the widgets in :mod:`mha.explorers` wrap these functions. A chapter
that draws a figure of its own starts from ``new_figure`` (at most ``MAX_WIDTH_IN`` wide: see
:mod:`mha.plotting.style`), so that it too is drawn for the book's column.
"""

from mha.extras import require

require("mha.plotting", "plot", "matplotlib")

from mha.plotting.charts import plot_curves, plot_matrix
from mha.plotting.cost import loglog_slope, plot_cost_breakdown, plot_growth, plot_heads_tradeoff
from mha.plotting.cross_attention import plot_alignment, plot_links
from mha.plotting.diagrams import plot_head_split, plot_mha_diagram, plot_soft_lookup
from mha.plotting.efficient_attention import (
    plot_decode_cost,
    plot_kv_tradeoff,
    plot_memory,
    plot_online_softmax,
)
from mha.plotting.heads import plot_attention, plot_heads
from mha.plotting.heads_that_learn import plot_blend_margins, plot_head_count_sweep
from mha.plotting.heads_that_learn_circuits import plot_circuits
from mha.plotting.modern_attention import (
    plot_cache_bars,
    plot_cache_growth,
    plot_context_losses,
    plot_first_token_weight,
    plot_logit_growth,
    plot_logit_ranges,
    plot_patterns,
    plot_receptive_field,
    plot_rotary_turns,
    plot_stream_losses,
)
from mha.plotting.multi_head import plot_pattern_tradeoff
from mha.plotting.positions import plot_bias_tables, plot_encoding, plot_scores_by_offset
from mha.plotting.real_heads import plot_grouped_bars, plot_head_kinds, plot_head_view, plot_model_view
from mha.plotting.self_attention import (
    plot_saturation,
    plot_scaling_frame,
    plot_score_variance,
    plot_scores_and_weights,
)
from mha.plotting.self_attention_one_head import plot_head_step, plot_lookup_temperature
from mha.plotting.shapes import (
    memory_layout_html,
    plot_head_assignment,
    plot_influence,
    plot_masks,
    shape_table_html,
)
from mha.plotting.style import MAX_WIDTH_IN, CourseFigure, new_figure, register_ipython_display
from mha.plotting.training import plot_head_scores, plot_pruning, plot_training_curve
from mha.plotting.transformer_block import plot_stack_statistics, plot_token_statistics

register_ipython_display()

__all__ = [
    "CourseFigure",
    "new_figure",
    "MAX_WIDTH_IN",
    "plot_attention",
    "plot_heads",
    "plot_curves",
    "plot_matrix",
    "plot_encoding",
    "plot_bias_tables",
    "plot_scores_by_offset",
    "plot_token_statistics",
    "plot_stack_statistics",
    "plot_scores_and_weights",
    "plot_score_variance",
    "plot_saturation",
    "plot_scaling_frame",
    "plot_pattern_tradeoff",
    "shape_table_html",
    "memory_layout_html",
    "plot_head_assignment",
    "plot_influence",
    "plot_masks",
    "plot_alignment",
    "plot_links",
    "plot_cost_breakdown",
    "plot_growth",
    "plot_heads_tradeoff",
    "plot_training_curve",
    "plot_head_scores",
    "plot_pruning",
    "plot_head_count_sweep",
    "plot_blend_margins",
    "plot_online_softmax",
    "plot_head_step",
    "plot_lookup_temperature",
    "plot_circuits",
    "plot_memory",
    "plot_decode_cost",
    "plot_kv_tradeoff",
    "plot_mha_diagram",
    "plot_soft_lookup",
    "plot_head_split",
    "loglog_slope",
    "plot_head_view",
    "plot_model_view",
    "plot_head_kinds",
    "plot_grouped_bars",
    "plot_patterns",
    "plot_cache_growth",
    "plot_receptive_field",
    "plot_first_token_weight",
    "plot_stream_losses",
    "plot_logit_ranges",
    "plot_logit_growth",
    "plot_context_losses",
    "plot_rotary_turns",
    "plot_cache_bars",
]
