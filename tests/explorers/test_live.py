"""Live mode of the explorers: controls driven as a reader in a running kernel would move them.

Each explorer is built small, switched to live mode, and every live control is set to a value that no
pre-rendered frame has; the output must change and equal the package's own render at those values.
"""

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from mha.explorers import (  # noqa: E402
    alibi_explorer,
    alignment_explorer,
    cost_explorer,
    head_explorer,
    relative_bias_explorer,
    rotary_explorer,
    scaling_explorer,
    shape_explorer,
    stack_explorer,
    window_explorer,
)
from mha.explorers.frames import frame_explorer  # noqa: E402
from mha.explorers.modern_attention import render_window  # noqa: E402
from mha.explorers.multi_head import render_heads  # noqa: E402
from mha.explorers.positions import render_alibi, render_relative_bias, render_rotary  # noqa: E402
from mha.explorers.self_attention import render_scaling  # noqa: E402
from mha.explorers.shapes import render_shapes  # noqa: E402
from mha.explorers.transformer_block import render_stack  # noqa: E402


def pixels(png: bytes) -> np.ndarray:
    return plt.imread(io.BytesIO(png), format="png")


def same_picture(png: bytes, fig) -> bool:
    from mha.explorers.frames import figure_to_png

    a, b = pixels(png), pixels(figure_to_png(fig))
    return a.shape == b.shape and bool(np.array_equal(a, b))


@pytest.fixture(autouse=True)
def no_open_figures():
    plt.close("all")
    yield
    assert plt.get_fignums() == []


# --- the mechanism, on a tiny render ---------------------------------------------------------------------


def render_text(n, word=""):
    return f"<p>{n} {word}</p>"


def test_static_until_a_frontend_draws_it_then_live():
    explorer = frame_explorer(render_text, {"n": [1, 2]}, live={"word": widgets.Text()})
    live = explorer.live
    assert not explorer.live_mode and live.box.layout.display == "none"  # the build's saved state
    assert all(s.layout.display != "none" for s in explorer.sliders.values())
    assert explorer._view_count == 0  # frontends are asked to report their views
    explorer._view_count = 1  # what JupyterLab sends when it draws the explorer
    assert explorer.live_mode and live.box.layout.display is None
    assert explorer.stack.layout.display == "none"
    assert all(s.layout.display == "none" for s in explorer.sliders.values())


def test_every_change_redraws_one_output():
    explorer = frame_explorer(render_text, {"n": [1, 2]}, initial={"n": 2}, live={"word": widgets.Text()})
    live = explorer.live
    assert live.output.value == "<p>2 </p>"  # starts on the initial frame
    output = live.output
    live.controls["n"].value = 1
    live.controls["word"].value = "cats"
    assert live.output is output and live.output.value == "<p>1 cats</p>" and live.redraws == 2


def test_refused_values_are_explained_and_the_last_frame_stays():
    def render(n):
        if n > 2:
            raise ValueError(f"n={n} is too large")
        return f"<p>{n}</p>"

    explorer = frame_explorer(render, {"n": [1, 2]}, live={"n": widgets.IntSlider(min=1, max=5)})
    explorer.live.controls["n"].value = 4
    assert "n=4 is too large" in explorer.live.message.value
    assert explorer.live.output.value == "<p>1</p>"
    explorer.live.controls["n"].value = 2
    assert explorer.live.message.value == "" and explorer.live.output.value == "<p>2</p>"


def test_without_live_controls_nothing_changes():
    explorer = frame_explorer(render_text, {"n": [1, 2]})
    assert explorer.live is None and explorer._view_count is None


def test_a_live_control_render_cannot_take_is_named():
    with pytest.raises(TypeError, match="cannot be called with the controls"):
        frame_explorer(render_text, {"n": [1, 2]}, live={"colour": widgets.Text()})


# --- every explorer ---------------------------------------------------------------------------------------

CASES = [
    (lambda: head_explorer(head_counts=(1, 2), seq_lens=(4,)),
     {"n_heads": 16, "seq_len": 20, "d_model": 128, "text": "my own cat sat on my own mat"},
     lambda v: render_heads(16, 20, d_model=128, text=v["text"])),
    (lambda: scaling_explorer(d_k_values=(4, 16)), {"d_k": 100}, lambda v: render_scaling(100, False)),
    (lambda: scaling_explorer(d_k_values=(4, 16)), {"d_k": 300, "text": "the cat sat on the warm mat"},
     lambda v: render_scaling(300, False, text=v["text"])),
    (lambda: shape_explorer(batches=(1,), seqs=(3,), d_models=(64,), head_counts=(1,)),
     {"batch": 3, "seq": 5, "d_model": 96, "n_heads": 3}, lambda v: render_shapes(3, 5, 96, 3)),
    (lambda: stack_explorer(depths=(2,), inits=("standard",)), {"n_blocks": 3},
     lambda v: render_stack(3, "standard")),
    (lambda: relative_bias_explorer(strengths=(0.0,), seq_lens=(6,)), {"strength": 1.5, "seq_len": 9},
     lambda v: render_relative_bias(1.5, 9)),
    (lambda: rotary_explorer(d_heads=(8,), bases=(100.0,)), {"d_head": 12, "base": 1000.0},
     lambda v: render_rotary(12, v["base"])),
    (lambda: alibi_explorer(head_counts=(1,), seq_lens=(8,)), {"n_heads": 3, "seq_len": 10},
     lambda v: render_alibi(3, 10)),
    (lambda: window_explorer(windows=(2, 4)), {"window": 11}, lambda v: render_window(11)),
]


@pytest.mark.parametrize("build, values, expected", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_explorer_recomputes_values_beyond_its_frames(build, values, expected):
    explorer = build()
    explorer.go_live()
    live = explorer.live
    before = live.output.value
    for name, value in values.items():
        live.controls[name].value = value
    assert live.message.value == ""
    actual = {name: live.controls[name].value for name in values}
    assert live.output.value != before
    if explorer.kind == "html":
        assert live.output.value == expected(actual)
    else:
        assert same_picture(live.output.value, expected(actual))


def test_cost_and_alignment_explorers_go_live():
    for explorer, name, value in ((cost_explorer(n_heads=[1], seq_len=[128], d_model=[512]), "seq_len", 4000),
                                  (alignment_explorer(d_heads=(16,)), "d_head", 5)):
        before = explorer.live.output.value
        explorer.live.controls[name].value = value
        assert explorer.live.redraws == 1 and explorer.live.output.value != before


def test_head_explorer_says_why_heads_must_divide_d_model():
    explorer = head_explorer(head_counts=(2,), seq_lens=(4,))
    explorer.live.controls["n_heads"].value = 3
    assert "not divisible by n_heads=3" in explorer.live.message.value
