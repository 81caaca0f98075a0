"""mha.explorers.frames: frames pre-rendered per slider combination, linked in the browser."""

import io
import itertools

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

from mha.explorers.frames import (  # noqa: E402
    MAX_FRAMES,
    FrameExplorer,
    frame_explorer,
    render_frames,
)
from mha.explorers.png import figure_to_png  # noqa: E402
from tests.bench_loader import load_benchmark  # noqa: E402

CONTROLS = {"n_heads": [1, 2, 4], "seq_len": [4, 8]}


def render_bars(n_heads, seq_len):
    """A tiny stand-in for a chapter's plot function: the picture depends on both inputs."""
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.bar(range(n_heads), np.arange(1, n_heads + 1) * seq_len)
    ax.set_ylim(0, 40)
    ax.set_title(f"{n_heads} heads, {seq_len} tokens")
    return fig


def render_table(n_heads, seq_len):
    return f"<table><tr><td>{n_heads}</td><td>{seq_len}</td></tr></table>"


def decode(png: bytes) -> np.ndarray:
    return plt.imread(io.BytesIO(png), format="png")


@pytest.fixture(autouse=True)
def no_open_figures():
    plt.close("all")
    yield
    plt.close("all")


def leaf(explorer: FrameExplorer, indices: tuple[int, ...]) -> widgets.Widget:
    """The frame widget the reader sees when the sliders sit at ``indices``."""
    node = explorer.stack
    for index in indices:
        node = node.children[index]
    return node


# --- frames ---------------------------------------------------------------------------------------


def test_one_frame_per_combination():
    explorer = frame_explorer(render_bars, CONTROLS)
    assert explorer.kind == "image"
    assert set(explorer.frames) == set(itertools.product(*CONTROLS.values()))


@pytest.mark.parametrize("controls", [{"n_heads": [1, 2, 4, 8]}, CONTROLS,
                                      {"a": [1, 2], "b": [3, 4, 5], "c": [6, 7]}])
def test_each_slider_position_shows_the_frame_rendered_for_its_values(controls):
    def render(**values):
        return f"<p>{values}</p>"

    explorer = frame_explorer(render, controls)
    names = list(controls)
    for indices in itertools.product(*(range(len(v)) for v in controls.values())):
        values = {name: controls[name][i] for name, i in zip(names, indices, strict=True)}
        assert leaf(explorer, indices).value == render(**values)


def test_frames_differ_wherever_inputs_differ():
    explorer = frame_explorer(render_bars, CONTROLS)
    pixels = {key: decode(png) for key, png in explorer.frames.items()}
    for a, b in itertools.combinations(pixels, 2):
        same_shape = pixels[a].shape == pixels[b].shape
        assert not (same_shape and np.array_equal(pixels[a], pixels[b])), (a, b)
    for indices in itertools.product(range(3), range(2)):
        key = (CONTROLS["n_heads"][indices[0]], CONTROLS["seq_len"][indices[1]])
        assert leaf(explorer, indices).value == explorer.frames[key]


def test_figures_are_closed_after_rendering():
    frame_explorer(render_bars, CONTROLS)
    assert plt.get_fignums() == []


def test_html_frames():
    explorer = frame_explorer(render_table, CONTROLS)
    assert explorer.kind == "html"
    assert isinstance(leaf(explorer, (2, 1)), widgets.HTML)
    assert leaf(explorer, (2, 1)).value == render_table(4, 8)


def test_png_background_is_white_for_dark_mode():
    fig, ax = plt.subplots(figsize=(1, 1), facecolor="black")
    ax.set_axis_off()
    corner = decode(figure_to_png(fig))[0, 0, :3]
    np.testing.assert_allclose(corner, 1.0)


def test_dpi_scales_the_frame():
    fig_small, _ = plt.subplots(figsize=(2, 2))
    fig_large, _ = plt.subplots(figsize=(2, 2))
    small = decode(figure_to_png(fig_small, dpi=40))
    large = decode(figure_to_png(fig_large, dpi=80))
    assert large.shape[0] == pytest.approx(2 * small.shape[0], abs=3)


# --- sliders and links ----------------------------------------------------------------------------


def _all_stacks(stack):
    yield stack
    for child in stack.children:
        if isinstance(child, widgets.Stack):
            yield from _all_stacks(child)


def test_every_stack_is_linked_to_its_slider():
    explorer = frame_explorer(render_table, CONTROLS)
    stacks = list(_all_stacks(explorer.stack))
    assert len(stacks) == 1 + 3  # the outer stack, one inner stack per n_heads value
    assert len(explorer.links) == len(stacks)
    targets = {id(link.target[0]): link for link in explorer.links}
    for stack in stacks:
        link = targets[id(stack)]
        assert link.target[1] == "selected_index"
        assert link.source[1] == "index"
        depth_slider = explorer.sliders["n_heads"] if stack is explorer.stack else (
            explorer.sliders["seq_len"])
        assert link.source[0] is depth_slider


def test_sliders_show_values_and_labels():
    explorer = frame_explorer(render_table, CONTROLS, labels={"n_heads": "heads"},
                              title="Shapes", caption="A caption")
    heads = explorer.sliders["n_heads"]
    assert isinstance(heads, widgets.SelectionSlider)
    assert heads.description == "heads"
    assert heads.readout
    assert list(heads.options) == [("1", 1), ("2", 2), ("4", 4)]
    assert explorer.sliders["seq_len"].description == "seq_len"
    texts = [child.value for child in explorer.children if isinstance(child, widgets.HTML)]
    assert "Shapes" in texts[0] and "A caption" in texts[-1]


def test_initial_values_select_matching_frames():
    explorer = frame_explorer(render_table, CONTROLS, initial={"n_heads": 4, "seq_len": 8})
    assert explorer.sliders["n_heads"].value == 4
    assert explorer.stack.selected_index == 2
    assert all(inner.selected_index == 1 for inner in explorer.stack.children)


def test_title_is_escaped():
    explorer = frame_explorer(render_table, {"n_heads": [1], "seq_len": [2]},
                              title="<script>x</script>")
    assert "<script>" not in explorer.children[0].value


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("controls", "error", "message"),
    [
        ({}, ValueError, "non-empty mapping"),
        ([1, 2], ValueError, "non-empty mapping"),
        ({"n": []}, ValueError, "no values"),
        ({"n": "1248"}, TypeError, "list of allowed values"),
        ({"n": 4}, TypeError, "list of allowed values"),
        ({"n": [1, 1]}, ValueError, "repeats"),
        ({"not a name": [1]}, ValueError, "identifiers"),
        ({"a": list(range(MAX_FRAMES)), "b": [1, 2]}, ValueError, "frames"),
    ],
)
def test_bad_controls(controls, error, message):
    with pytest.raises(error, match=message):
        frame_explorer(render_table, controls)


def test_bad_render_results():
    with pytest.raises(TypeError, match="expected a matplotlib Figure or an HTML str"):
        frame_explorer(lambda n: 42, {"n": [1]})
    with pytest.raises(TypeError, match="both"):
        frame_explorer(lambda n: render_bars(n, 4) if n == 1 else "<p/>", {"n": [1, 2]})
    with pytest.raises(TypeError, match="callable"):
        render_frames("plot", {"n": [1]})


def test_controls_must_match_render_parameters():
    with pytest.raises(TypeError, match=r"controls \['heads', 'seq_len'\]"):
        frame_explorer(render_table, {"heads": [1], "seq_len": [2]})


def test_bad_initial_and_labels():
    with pytest.raises(ValueError, match="not one of its values"):
        frame_explorer(render_table, CONTROLS, initial={"n_heads": 3})
    with pytest.raises(ValueError, match="unknown controls"):
        frame_explorer(render_table, CONTROLS, labels={"heads": "Heads"})


def test_bad_figure_arguments():
    with pytest.raises(TypeError, match="matplotlib Figure"):
        figure_to_png("not a figure")
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="dpi"):
        figure_to_png(fig, dpi=0)


# --- the redraw benchmark's helpers (no timing is asserted) ---------------------------------------


def _bench_module():
    return load_benchmark("bench_widgets")


def test_benchmark_loads_render_by_name_and_parses_values():
    bench = _bench_module()
    assert bench.load_render("mha.explorers.frames:frame_explorer") is frame_explorer
    assert bench.parse_values(["n_heads=8", "label=heads", "sizes=(1, 2)"]) == {
        "n_heads": 8, "label": "heads", "sizes": (1, 2)}
    with pytest.raises(ValueError, match="module:function"):
        bench.load_render("render_table")
    with pytest.raises(ValueError, match="name=value"):
        bench.parse_values(["n_heads"])


def test_benchmark_times_each_redraw_and_closes_figures():
    bench = _bench_module()
    times = bench.redraw_times(render_bars, {"n_heads": 2, "seq_len": 4}, repeat=3)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert plt.get_fignums() == []


# --- palette frames (colors=) -----------------------------------------------------------------------------


def render_lines(n_lines, seed=0):
    """Many translucent, overlapping lines: hundreds of distinct colours in a full-colour PNG."""
    rng = np.random.default_rng(seed)
    fig, ax = plt.subplots(figsize=(3, 2.5))
    for _ in range(n_lines):
        ax.plot([0, 1], rng.random(2), color=plt.cm.viridis(rng.random()), alpha=0.3,
                linewidth=1 + 3 * rng.random())
    ax.set_title("lines")
    return fig


def open_png(png: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(png))


def test_colors_gives_a_smaller_palette_png_of_the_same_picture():
    full = figure_to_png(render_lines(60))
    reduced = figure_to_png(render_lines(60), colors=64)
    assert reduced[:4] == b"\x89PNG"
    assert open_png(full).mode == "RGBA"
    image = open_png(reduced)
    assert image.mode == "P"
    assert len(image.getcolors(maxcolors=256)) <= 64
    assert len(open_png(full).convert("RGB").getcolors(maxcolors=100_000)) > 64
    assert len(reduced) < len(full)
    assert image.size == open_png(full).size
    before = decode(full)[..., :3]
    after = np.asarray(image.convert("RGB"), dtype=float) / 255
    assert np.abs(before - after).mean() < 0.02  # the same picture, a few shades merged
    np.testing.assert_allclose(after[0, 0], 1.0)  # still white around the plot
    assert plt.get_fignums() == []


@pytest.mark.parametrize("colors", [2, 16, 256])
def test_colors_bounds_the_palette(colors):
    image = open_png(figure_to_png(render_lines(30), colors=colors))
    assert image.mode == "P"
    assert 1 < len(image.getcolors(maxcolors=256)) <= colors


@pytest.mark.parametrize("colors", [0, 1, 257, -4, 2.5, 64.0, "64"])
def test_colors_out_of_range(colors):
    fig, _ = plt.subplots()
    message = r"colors must be an integer from 2 to 256 \(or None for full colour\)"
    with pytest.raises(ValueError, match=message):
        figure_to_png(fig, colors=colors)


def test_render_frames_and_frame_explorer_pass_colors_on():
    kind, frames = render_frames(render_bars, CONTROLS, colors=8)
    assert kind == "image"
    assert all(open_png(png).mode == "P" for png in frames.values())
    explorer = frame_explorer(render_bars, CONTROLS, colors=8)
    assert all(open_png(png).mode == "P" for png in explorer.frames.values())
    assert all(len(open_png(png).getcolors(maxcolors=256)) <= 8 for png in explorer.frames.values())
    assert leaf(explorer, (2, 1)).value == explorer.frames[(4, 8)]
    default = frame_explorer(render_bars, CONTROLS)
    assert all(open_png(png).mode == "RGBA" for png in default.frames.values())
    assert plt.get_fignums() == []


def test_colors_leaves_html_frames_alone():
    _, frames = render_frames(render_table, CONTROLS, colors=8)
    assert frames[(2, 8)] == render_table(2, 8)


def test_bad_colors_fail_through_the_explorer():
    with pytest.raises(ValueError, match="colors must be an integer"):
        frame_explorer(render_bars, CONTROLS, colors=300)


def test_every_head_of_a_6_by_12_model_fits_but_not_more_than_max_frames():
    assert MAX_FRAMES == 96
    explorer = frame_explorer(render_table, {"n_heads": list(range(6)), "seq_len": list(range(12))})
    assert len(explorer.frames) == 72
    largest = frame_explorer(render_table, {"n_heads": list(range(8)), "seq_len": list(range(12))})
    assert len(largest.frames) == 96
    with pytest.raises(ValueError, match="97 frames"):
        frame_explorer(render_table, {"n_heads": list(range(97)), "seq_len": [1]})


def test_frames_carry_alt_text_naming_their_control_values():
    from mha.plotting.style import png_description

    explorer = frame_explorer(render_bars, CONTROLS, title="Heads and tokens")
    assert png_description(explorer.frames[(4, 8)]) == "Heads and tokens (n_heads = 4, seq_len = 8)"
    palette = frame_explorer(render_bars, {"n_heads": [2], "seq_len": [4]}, colors=16)
    assert png_description(palette.frames[(2, 4)]) == "Figure (n_heads = 2, seq_len = 4)"


def test_a_figure_that_describes_itself_keeps_its_words_in_frame_alt_text():
    from mha.plotting.style import new_figure, png_description

    def render(d_k):
        fig = new_figure(2, 1, alt_text=f"Histogram of scores for d_k {d_k}")
        fig.add_subplot().plot([0, d_k])
        return fig

    _, frames = render_frames(render, {"d_k": [4]}, title="ignored")
    assert png_description(frames[(4,)]) == "Histogram of scores for d_k 4 (d_k = 4)"


def test_a_false_true_control_is_an_off_on_toggle_linked_like_a_slider():
    explorer = frame_explorer(lambda scaled, n: f"<p>{scaled} {n}</p>",
                              {"scaled": [False, True], "n": [1, 2]}, initial={"scaled": True})
    toggle = explorer.sliders["scaled"]
    assert isinstance(toggle, widgets.ToggleButtons)
    assert toggle._options_labels == ("off", "on") and toggle.index == 1
    assert isinstance(explorer.sliders["n"], widgets.SelectionSlider)
    assert any(link.source == (toggle, "index") for link in explorer.links)


def test_sliders_fit_a_phone_column():
    explorer = frame_explorer(render_table, CONTROLS)
    for slider in explorer.sliders.values():
        assert slider.layout.width == "100%" and slider.layout.max_width == "480px"


@pytest.mark.parametrize(("explorer", "argument"), [
    ("head_explorer", "seq_lens"), ("head_explorer", "head_counts"), ("cost_explorer", "d_model"),
    ("relative_bias_explorer", "strengths"), ("rotary_explorer", "bases"), ("alibi_explorer", "seq_lens"),
    ("scaling_explorer", "d_k_values"), ("shape_explorer", "batches"), ("diagram_explorer", "seqs"),
    ("stack_explorer", "depths"), ("alignment_explorer", "sentences"),
])
def test_an_explorer_refuses_an_empty_slider_with_a_sentence(explorer, argument):
    import mha.explorers

    with pytest.raises(ValueError, match=f"^{argument} is empty: its slider needs at least one value$"):
        getattr(mha.explorers, explorer)(**{argument: ()})


def test_slider_values_are_a_sequence():
    from mha.explorers.frames import slider_values

    assert slider_values("seq_lens", iter([4, 8])) == (4, 8)
    with pytest.raises(TypeError, match="seq_lens must be a sequence of slider values, got int 4"):
        slider_values("seq_lens", 4)
