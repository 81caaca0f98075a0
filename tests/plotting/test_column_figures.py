"""Figures the book's first checked build found with text on text or past the canvas, drawn again.

Each case draws a figure as its chapter does (data shaped like the chapter's, made up here), saves
it the way the book does (``CourseFigure.to_png`` or, for a widget frame, ``figure_to_png``) and reads
back what the PNG's own text check recorded: no two texts overlapping, none past an edge, and the
figure no wider than the column.
"""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha import cost  # noqa: E402
from mha.explorers.png import figure_to_png  # noqa: E402
from mha.explorers.positions import render_alibi, render_relative_bias, render_rotary  # noqa: E402
from mha.lab.analysis import pruning_curve  # noqa: E402
from mha.lab.self_attention_one_head import STEPS, head_walkthrough  # noqa: E402
from mha.plotting import (  # noqa: E402
    plot_cache_bars,
    plot_cost_breakdown,
    plot_first_token_weight,
    plot_head_kinds,
    plot_head_step,
    plot_heads,
    plot_masks,
    plot_online_softmax,
    plot_pattern_tradeoff,
    plot_pruning,
    plot_soft_lookup,
)
from mha.plotting.style import MAX_WIDTH_IN, PNG_DPI, png_facts  # noqa: E402

RNG = np.random.default_rng(0)
SENTENCE = "The animal didn't cross the street because it was too tired".split()


def _pruning(n_layers, n_heads, accuracy):
    curve = pruning_curve(lambda mask: float(3 - mask.sum()), RNG.random((n_layers, n_heads)))
    values = np.linspace(1, 0.2, len(curve.values)) if accuracy else None
    return curve, values


def _online_softmax(step):
    scores = RNG.standard_normal(12)
    running_max = np.maximum.accumulate([scores[i * 4:(i + 1) * 4].max() for i in range(3)])
    estimates = RNG.standard_normal((3, 3))
    return plot_online_softmax(scores, 4, running_max, [2.1, 3.5, 4.2], estimates, estimates[-1], step=step)


def _head_kinds():
    breadth, distance = RNG.uniform(0.2, 0.9, (6, 12)), RNG.uniform(3.0, 5.4, (6, 12))
    kinds = np.array([["[CLS]", "mixed", "broad"][i % 3] for i in range(72)], dtype=object).reshape(6, 12)
    kinds[0, 2], breadth[0, 2], distance[0, 2] = "previous token", 0.0, 1.0
    return plot_head_kinds(breadth, distance, kinds, title="72 heads of all-MiniLM-L6-v2")


FIGURES = {
    "cost breakdown, 64 heads": lambda: plot_cost_breakdown(
        cost.flops(1, 16384, 4096, 64), cost.memory_bytes(1, 16384, 4096, 64),
        title="64 heads of d_head = 64, 16384 tokens, d_model = 4096 (float32)"),
    "masks, four panels": lambda: plot_masks(
        [(name, np.tri(6, dtype=bool)) for name in ("padding, sequence 0", "causal", "combined, sequence 0",
                                                    "combined, sequence 1")],
        title="Padding (1, 1, seq_k) & causal (seq_q, seq_k) → (batch, 1, seq_q, seq_k)"),
    "one softmax's unit of weight": lambda: plot_pattern_tradeoff(
        np.linspace(0, 1, 9), np.linspace(0, 0.9, 9), np.linspace(0.9, 0, 9), label_a="previous token",
        label_b="same word", heads_point=(0.95, 0.95)),
    "KV cache bars": lambda: plot_cache_bars(
        {"MHA (64 heads)": 2 ** 21, "GQA, 8 groups": 2 ** 17, "MQA": 2 ** 14, "MLA (DeepSeek-V2)": 69120},
        title="KV cache per token of a 128k-token sequence (16-bit)"),
    "weight on the first token": lambda: plot_first_token_weight(
        {"tiny GPT (BOS)": RNG.random((2, 4)) * 0.3, "encoder ([CLS])": RNG.random((6, 12)) * 0.7}),
    "soft lookup": lambda: plot_soft_lookup(
        SENTENCE, RNG.dirichlet(np.ones(len(SENTENCE))), RNG.standard_normal((len(SENTENCE), 8)),
        query="it", title="“it” looks up the sentence: a blend, mostly animal's"),
    "72 heads by kind": _head_kinds,
    "switching 72 heads off": lambda: plot_pruning(
        _pruning(6, 12, False)[0], metric="paraphrase gap (cosine)",
        title="Switching heads off, least important first"),
    "long title over many heads": lambda: plot_heads(
        RNG.dirichlet(np.ones(8), size=(8, 8)) * 0.3, [str(i) for i in range(8)], ncols=4,
        head_titles=[f"layer {i // 4} head {i % 4}" for i in range(8)],
        title="2 key/value heads per layer (cache 6 KiB), 25 uptraining steps: accuracy 0.998, loss 0.012"),
}

FRAMES = {
    "online softmax, block 2": lambda: _online_softmax(1),
    "pruning beside the head grid": lambda: plot_pruning(*_pruning(2, 4, True), n_removed=3),
    "rotary, d_head 32": lambda: render_rotary(32, 10000.0),
    "relative bias, 32 tokens": lambda: render_relative_bias(0.0, 32),
    "alibi, 8 heads": lambda: render_alibi(8, 16),
    **{f"one head, {step}": (lambda step=step: plot_head_step(head_walkthrough(), step, query=2))
       for step in STEPS},
}


def _check(data: bytes) -> None:
    facts = png_facts(data)
    text = facts["text"]
    assert (text["TextOverlaps"], text["TextOutside"]) == ("0", "0"), text.get("TextProblems")
    assert facts["width"] <= MAX_WIDTH_IN * facts["dpi"] + 1


@pytest.mark.parametrize("name", FIGURES)
def test_figure_has_no_text_on_text_in_the_column(name):
    _check(FIGURES[name]().to_png(dpi=PNG_DPI // 2))


@pytest.mark.parametrize("name", FRAMES)
def test_widget_frame_has_no_text_on_text_in_the_column(name):
    _check(figure_to_png(FRAMES[name](), dpi=PNG_DPI // 2))


def test_a_scatter_names_the_heads_it_has_room_for_and_says_how_many():
    fig = _head_kinds()
    named = [t for t in fig.axes[0].texts if t.get_text().count(".") == 1]
    assert 0 < len(named) < 72
    assert f"{len(named)} of them labelled layer.head" in fig.describe()
    assert "0.2" in {t.get_text() for t in named}  # the only head of its kind is named first
