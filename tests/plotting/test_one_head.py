"""mha.plotting.one_head: each step prints the numbers of its arrays, traces the query it is given, and
keeps one box for every step (the cells do not move as the reader steps)."""

import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha.lab.one_head import STEPS, head_walkthrough  # noqa: E402
from mha.plotting.one_head import plot_head_step  # noqa: E402
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
