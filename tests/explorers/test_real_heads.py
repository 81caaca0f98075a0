"""mha.explorers.real_heads: head view and model view explorers on hand-made encodings (no model)."""

import io
import itertools
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import ipywidgets as widgets  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

import mha.explorers.real_heads as real_heads  # noqa: E402
from mha.explorers.real_heads import head_view_explorer, model_view_explorer  # noqa: E402
from mha.plotting.real_heads import MIN_LINE_WEIGHT, plot_head_view  # noqa: E402
from mha.pretrained import Encoding  # noqa: E402

N_LAYERS, N_HEADS = 2, 3
TOKENS = ["[CLS]", "the", "cat", "the", "[SEP]"]


def make_encoding(tokens=TOKENS, n_layers=N_LAYERS, n_heads=N_HEADS, seed=0):
    """Random attention rows (each sums to 1), different in every head."""
    rng = np.random.default_rng(seed)
    seq = len(tokens)
    attentions = rng.dirichlet(np.full(seq, 0.3), size=(n_layers, n_heads, seq))
    ids = np.arange(seq, dtype=np.int64) + 100
    return Encoding(list(tokens), ids, rng.standard_normal((seq, 8)), attentions)


@pytest.fixture(autouse=True)
def no_open_figures():
    plt.close("all")
    yield
    assert plt.get_fignums() == []


@pytest.fixture
def calls(monkeypatch):
    """Record every call to a plot function through the explorers, still drawing the real figure."""
    recorded = []

    def spy(name):
        real = getattr(real_heads, name)

        def wrapper(*args, **kwargs):
            recorded.append((name, args, kwargs))
            return real(*args, **kwargs)

        monkeypatch.setattr(real_heads, name, wrapper)

    spy("plot_head_view")
    spy("plot_model_view")
    return recorded


def palette_png(frame: bytes) -> bool:
    image = Image.open(io.BytesIO(frame))
    return image.format == "PNG" and image.mode == "P"


# --- head view explorer -------------------------------------------------------------------------------------


def test_head_view_explorer_has_a_frame_per_layer_and_head_and_two_sliders():
    encoding = make_encoding()
    explorer = head_view_explorer(encoding)
    assert explorer.kind == "image"
    assert set(explorer.frames) == set(itertools.product(range(N_LAYERS), range(N_HEADS)))
    assert len(explorer.frames) == N_LAYERS * N_HEADS
    assert list(explorer.sliders) == ["layer", "head"]
    assert [v for _, v in explorer.sliders["layer"].options] == list(range(N_LAYERS))
    assert [v for _, v in explorer.sliders["head"].options] == list(range(N_HEADS))
    assert len(set(explorer.frames.values())) == N_LAYERS * N_HEADS  # every head looks different
    assert all(palette_png(frame) for frame in explorer.frames.values())  # small frames: a palette PNG
    frame = explorer.stack.children[1].children[2]  # layer 1, head 2
    assert isinstance(frame, widgets.Image) and frame.value == explorer.frames[(1, 2)]


def test_head_view_explorer_opens_on_the_chosen_head():
    explorer = head_view_explorer(make_encoding(), layer=1, head=2)
    assert explorer.sliders["layer"].value == 1 and explorer.sliders["head"].value == 2
    assert explorer.stack.selected_index == 1 and explorer.stack.children[1].selected_index == 2
    with pytest.raises(ValueError, match="layer"):
        head_view_explorer(make_encoding(), layer=N_LAYERS)


def test_head_view_explorer_draws_each_head_of_the_encoding(calls):
    encoding = make_encoding()
    head_view_explorer(encoding)
    assert len(calls) == N_LAYERS * N_HEADS
    seen = set()
    for name, args, kwargs in calls:
        assert name == "plot_head_view"
        layer, head = map(int, kwargs["title"].replace(",", "").split()[1::2])  # "layer l, head h"
        np.testing.assert_array_equal(args[0], encoding.attentions[layer, head])
        assert list(args[1]) == TOKENS
        assert kwargs["query"] is None
        seen.add((layer, head))
    assert seen == set(itertools.product(range(N_LAYERS), range(N_HEADS)))


def test_head_view_explorer_title_and_caption():
    explorer = head_view_explorer(make_encoding(n_layers=1, n_heads=1), title="My sentence")
    texts = [child.value for child in explorer.children if isinstance(child, widgets.HTML)]
    assert "My sentence" in texts[0]
    assert "0.02" in texts[-1]  # the caption states the drawing threshold
    assert str(MIN_LINE_WEIGHT) in texts[-1]
    default = head_view_explorer(make_encoding(n_layers=1, n_heads=1))
    assert "Head view" in default.children[0].value


def test_query_token_picks_its_first_occurrence(calls):
    head_view_explorer(make_encoding(), query="the")
    assert len(calls) == N_LAYERS * N_HEADS
    assert {kwargs["query"] for _, _, kwargs in calls} == {1}  # "the" is at 1 and 3: the first


def test_query_restricts_the_drawn_lines_to_its_row():
    encoding = make_encoding()
    weights = encoding.attentions[1, 0]
    position = encoding.index("cat")
    every = plot_head_view(weights, encoding.tokens).axes[0]
    assert len(every.lines) == int((weights >= MIN_LINE_WEIGHT).sum())
    one = plot_head_view(weights, encoding.tokens, query=position).axes[0]
    assert len(one.lines) == int((weights[position] >= MIN_LINE_WEIGHT).sum())
    assert 0 < len(one.lines) < len(every.lines)
    query_y = len(TOKENS) - 1 - position  # the first token is drawn at the top
    assert all(line.get_ydata()[0] == query_y for line in one.lines)


def test_query_frames_differ_from_the_full_view():
    encoding = make_encoding(n_layers=1, n_heads=2)
    full = head_view_explorer(encoding)
    cat = head_view_explorer(encoding, query="cat")
    assert all(cat.frames[key] != full.frames[key] for key in full.frames)


@pytest.mark.parametrize("query", ["dog", "The", "[PAD]"])
def test_unknown_query_token_raises(query):
    with pytest.raises(ValueError, match=rf"token {re.escape(repr(query))} appears 0 time"):
        head_view_explorer(make_encoding(), query=query)


# --- model view explorer ------------------------------------------------------------------------------------


def test_model_view_explorer_has_one_frame_per_sentence():
    short = make_encoding(["[CLS]", "hi", "[SEP]"], seed=1)
    long = make_encoding(["[CLS]", "the", "cat", "sat", "[SEP]"], seed=2)
    explorer = model_view_explorer({"short": short, "long": long})
    assert explorer.kind == "image"
    assert set(explorer.frames) == {("short",), ("long",)}
    assert list(explorer.sliders) == ["sentence"]
    assert [v for _, v in explorer.sliders["sentence"].options] == ["short", "long"]
    assert explorer.frames[("short",)] != explorer.frames[("long",)]
    assert all(palette_png(frame) for frame in explorer.frames.values())
    assert explorer.stack.children[1].value == explorer.frames[("long",)]
    assert "Model view" in explorer.children[0].value


def test_model_view_explorer_draws_each_encoding(calls):
    encodings = {"a": make_encoding(seed=3), "b": make_encoding(["[CLS]", "ok", "[SEP]"], seed=4)}
    model_view_explorer(encodings, title="Two sentences")
    assert [name for name, _, _ in calls] == ["plot_model_view"] * 2
    for (_, args, kwargs), encoding in zip(calls, encodings.values(), strict=True):
        np.testing.assert_array_equal(args[0], encoding.attentions)
        assert list(args[1]) == encoding.tokens
        assert kwargs["title"] == " ".join(encoding.tokens[1:-1])  # the words, without [CLS] and [SEP]


@pytest.mark.parametrize("encodings", [{}, [], None, [make_encoding()]])
def test_model_view_explorer_needs_a_non_empty_mapping(encodings):
    with pytest.raises(ValueError, match="non-empty mapping of label -> Encoding"):
        model_view_explorer(encodings)
