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
