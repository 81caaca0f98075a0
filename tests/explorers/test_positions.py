"""mha.explorers.positions: the relative-bias, rotary and ALiBi explorers."""

import pytest

pytest.importorskip("matplotlib")

from mha.explorers.positions import relative_bias_explorer, render_rotary, rotary_explorer  # noqa: E402


def test_position_widgets_render_titled_frames():
    explorer = relative_bias_explorer(strengths=(0.0, 2.0), seq_lens=(6, 8))
    assert len(explorer.frames) == 4 and set(explorer.sliders) == {"strength", "seq_len"}
    assert len(rotary_explorer(d_heads=(8,), bases=(100.0, 10000.0)).frames) == 2
    fig = render_rotary(16, 1000.0)
    assert [ax.get_title() for ax in fig.axes] == ["pair wavelengths (base 1000)", "query · key, d_head = 16"]
    # the right panel is the normalised score: 1 at offset 0
    offsets, score = fig.axes[1].lines[0].get_data()
    assert score[list(offsets).index(0)] == pytest.approx(1.0)
