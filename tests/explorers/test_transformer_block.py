"""mha.explorers.transformer_block: the residual-stream explorer."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mha.explorers.transformer_block import render_stack, stack_explorer  # noqa: E402
from mha.lab.transformer_block import stack_statistics  # noqa: E402


def test_stack_widget_statistics_are_cached_read_only_and_rendered():
    stats = stack_statistics(4, "post", False)
    assert stack_statistics(4, "post", False) is stats
    with pytest.raises(ValueError, match="read-only"):
        stats["rms"][0] = 5.0
    np.testing.assert_allclose(stats["rms"][1:], 1.0, rtol=1e-4)
    fig = render_stack(4, "scaled")
    assert fig.axes[0].get_legend_handles_labels()[1] == ["pre-norm", "post-norm"]
    with pytest.raises(ValueError, match="init must be"):
        render_stack(4, "huge")
    assert len(stack_explorer(depths=(2, 4)).frames) == 4


def test_every_frame_stacks_its_panels_with_no_text_on_text():
    """Three panels side by side, narrowed to the column, put each title on the x label above it and
    cut the y labels at the left edge; stacked and sharing the depth axis, nothing touches."""
    from mha.explorers.png import figure_to_png
    from mha.plotting.style import MAX_WIDTH_IN, PNG_DPI, png_facts

    for n_blocks in (4, 8, 16, 32, 48):
        for init in ("standard", "scaled"):
            fig = render_stack(n_blocks, init)
            lowest = min(fig.axes, key=lambda ax: ax.get_position().y0)
            assert [ax.xaxis.label.get_text() for ax in fig.axes if ax is not lowest] == ["", ""]
            facts = png_facts(figure_to_png(fig))
            assert facts["width"] <= MAX_WIDTH_IN * PNG_DPI + 1
            text = facts["text"]
            assert (text["TextOverlaps"], text["TextOutside"]) == ("0", "0"), text.get("TextProblems")
