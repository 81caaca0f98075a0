import matplotlib
import numpy as np

matplotlib.use("Agg")

from mha.explorers import context_explorer, window_explorer  # noqa: E402
from mha.explorers.modern_attention import render_window  # noqa: E402


def test_window_explorer_has_one_frame_per_window_and_the_caches_differ_by_window():
    explorer = window_explorer(windows=(2, 16))
    assert sorted(explorer.frames) == [(2,), (16,)]
    assert explorer.frames[(2,)] != explorer.frames[(16,)]
    fig = render_window(16, seq=24)
    assert fig.axes[0].get_title() == "window 16: each query sees 16 keys"
    assert "2 layers reach 30 tokens back" in fig.axes[1].get_title()


def test_context_explorer_switches_between_the_methods_it_was_given():
    curves = {m: {64: np.linspace(2, 3 + i, 64)} for i, m in enumerate(("none", "ntk", "yarn"))}
    explorer = context_explorer(curves, original_context=32)
    assert sorted(explorer.frames) == [("none",), ("ntk",), ("yarn",)]
    assert len(set(explorer.frames.values())) == 3
