"""mha.plotting.self_attention_one_head: each step prints the numbers of its arrays, traces the query it is
given, and keeps one box for every step (the cells do not move as the reader steps)."""

import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha.lab.self_attention_one_head import STEPS, head_walkthrough  # noqa: E402
from mha.plotting.self_attention_one_head import plot_head_step  # noqa: E402
from mha.plotting.style import MAX_WIDTH_IN  # noqa: E402


def _cell_texts(fig):
    return [t.get_text().replace("\u2212", "-") for t in fig.axes[0].texts]


def _printed(array, fmt):
    return [format(v + 0.0, fmt).removeprefix("-") if float(format(v, fmt)) == 0 else format(v, fmt)
            for v in np.asarray(array).ravel()]


@pytest.mark.parametrize(("step", "arrays"), [
    ("embeddings", [("x", ".1f")]), ("projections", [("x", ".1f"), ("W_q", ".1f"), ("q", ".2f")]),
    ("scores", [("q", ".2f"), ("scores", ".2f")]), ("softmax", [("scores", ".2f"), ("weights", ".2f")]),
    ("weighted sum", [("weights", ".2f"), ("v", ".2f"), ("output", ".2f")]),
])
def test_every_number_of_the_steps_arrays_is_printed(step, arrays):
    head = head_walkthrough()
    texts = _cell_texts(plot_head_step(head, step, query=2))
    for name, fmt in arrays:
        for value in _printed(getattr(head, name), fmt):
            assert value in texts, f"{step}: {name} value {value} not printed"


def test_the_caption_writes_out_the_traced_querys_arithmetic():
    head = head_walkthrough()
    for query in range(4):
        fig = plot_head_step(head, "scores", query=query)
        caption = fig.texts[-1].get_text().replace("\u2212", "-")
        best = int(np.argmax(head.scores[query]))
        assert caption.startswith(f"3. Scores: {head.tokens[query]} · {head.tokens[best]}")
        assert caption.endswith(f"{head.scores[query, best]:.2f}")
        assert head.tokens[query] in fig.describe()


@pytest.mark.parametrize("step", STEPS)
def test_a_zero_is_printed_without_a_sign(step):
    head = head_walkthrough("the cat sat", rng=0)  # its embeddings hold a -0.0 (a small negative, rounded)
    assert (np.signbit(head.x) & (head.x == 0)).any()
    fig = plot_head_step(head, step, query=2)
    printed = _cell_texts(fig) + [fig.texts[-1].get_text().replace("\u2212", "-")]
    assert not [t for t in printed if re.search(r"-0\.0+(?!\d*[1-9])", t)]


def test_every_step_keeps_the_same_box():
    head = head_walkthrough()
    boxes = {(plot_head_step(head, s).axes[0].get_xlim(), plot_head_step(head, s).axes[0].get_ylim())
             for s in STEPS}
    assert len(boxes) == 1
    fig = plot_head_step(head, "softmax")
    assert fig.get_figwidth() == pytest.approx(MAX_WIDTH_IN)  # the column's width: 10-pt numbers stay >= 9 px
    assert fig.axes[0].get_title(loc="left") == "One head, step 4 of 5: softmax"


@pytest.mark.parametrize(("step", "query", "message"), [("logits", 0, "step must be"), ("scores", 4, "query"),
                                                          ("scores", -1, "query"), ("scores", 1.0, "query")])
def test_bad_step_or_query_is_named(step, query, message):
    with pytest.raises(ValueError, match=message):
        plot_head_step(head_walkthrough(), step, query)


def _lookup_figure(temperature, tokens=None, seed=0):
    from mha.lab import SENTENCES, tokenize, toy_embeddings
    from mha.lab.self_attention_one_head import soft_lookup
    from mha.plotting.self_attention_one_head import plot_lookup_temperature

    tokens = tokens or tokenize(SENTENCES["animal"])
    rng = np.random.default_rng(seed)
    x = toy_embeddings(tokens, 16)  # (seq, 16)
    keys, values = x @ rng.normal(size=(16, 8)) / 4, x @ rng.normal(size=(16, 8)) / 4  # (seq, 8) each
    query = 2.0 * keys[1] / np.linalg.norm(keys[1])
    curve_t = np.geomspace(0.05, 20, 50)
    curve = [soft_lookup(query, keys, values, t).sensitivity for t in curve_t]
    lookup = soft_lookup(query, keys, values, temperature)
    limit = float(np.abs(values).max())
    return plot_lookup_temperature(tokens, lookup, curve_t, curve, value_limit=limit), lookup


def _text_boxes(fig):
    """Every text the renderer draws (not ticks beyond an axis' limits), as boxes in display pixels, once
    the figure is fitted to the column and laid out as the book saves it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig.to_png(dpi=100)
    renderer = FigureCanvasAgg(fig).get_renderer()
    drawn = []
    draw_text = renderer.draw_text

    def recording(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if mtext is not None and s.strip():
            drawn.append(mtext)
        return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = recording
    fig.draw(renderer)
    return [(t.get_text(), t.get_window_extent(renderer)) for t in dict.fromkeys(drawn)]


@pytest.mark.parametrize("temperature", [0.05, 1.0, 20.0])
@pytest.mark.parametrize("tokens", [None, ["a", "rather_long_token", *"bcdefghijklm"]])
def test_the_lookup_figure_has_no_text_over_text_and_nothing_off_the_page(temperature, tokens):
    from mha.plotting.style import MAX_WIDTH_IN, MIN_FONT_PT, smallest_font_pt

    fig, _ = _lookup_figure(temperature, tokens)
    boxes = _text_boxes(fig)
    width, height = fig.bbox.width, fig.bbox.height
    assert fig.get_size_inches()[0] <= MAX_WIDTH_IN + 1e-6 and smallest_font_pt(fig) >= MIN_FONT_PT
    for text, box in boxes:
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, text
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            overlap_w = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            overlap_h = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            assert overlap_w <= 1 or overlap_h <= 1, f"{a!r} sits on {b!r}"


def test_the_lookup_figure_shows_the_weights_the_answers_and_this_temperature():
    fig, lookup = _lookup_figure(0.5)
    bars, answers, slope = fig.axes[:3]
    printed = [t.get_text() for t in bars.texts]
    assert printed == [f"{w:.2f}" for w in lookup.weights]
    assert [p.get_width() for p in bars.patches][:len(printed)] == pytest.approx(lookup.weights)
    np.testing.assert_allclose(answers.images[0].get_array(), np.stack([lookup.soft, lookup.hard]))
    marker = [line for line in slope.lines if line.get_marker() == "o"][0]
    assert (marker.get_xdata()[0], marker.get_ydata()[0]) == (0.5, pytest.approx(lookup.sensitivity))
    assert f"{lookup.weights.max():.2f}" in fig.describe() and "T = 0.5" in fig.describe()


def test_the_lookup_figure_refuses_mismatched_inputs():
    from mha.lab.self_attention_one_head import soft_lookup
    from mha.plotting.self_attention_one_head import plot_lookup_temperature

    lookup = soft_lookup([1.0, 0.0], np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match="one token per weight"):
        plot_lookup_temperature(["a"], lookup, [1.0], [0.1], value_limit=1.0)
    with pytest.raises(ValueError, match="of one length"):
        plot_lookup_temperature(["a", "b"], lookup, [1.0, 2.0], [0.1], value_limit=1.0)
    with pytest.raises(ValueError, match="positive"):
        plot_lookup_temperature(["a", "b"], lookup, [0.0], [0.1], value_limit=1.0)
    with pytest.raises(ValueError, match="value_limit"):
        plot_lookup_temperature(["a", "b"], lookup, [1.0], [0.1], value_limit=float("nan"))
