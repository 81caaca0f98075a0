"""mha.plotting.text_boxes and style.save_png: a figure sees its own overprinted or cut text.

Each case draws a small figure whose texts are placed on purpose (apart, touching, overlapping, turned,
hidden, off the canvas) and checks what the check says, then that the PNG a figure writes carries it.
"""

import io

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from mha.explorers.png import figure_to_png  # noqa: E402
from mha.plotting.style import TEXT_CHECK_KEYS, new_figure, png_facts, save_png  # noqa: E402
from mha.plotting.text_boxes import TextBox, drawn_texts, overlap_depth, text_problems  # noqa: E402


def _figure(width=4.0, height=3.0):
    fig = new_figure(width, height)
    fig.set_layout_engine(None)  # texts stay where they are put
    return fig


def test_texts_apart_or_just_touching_pass():
    fig = _figure()
    fig.text(0.1, 0.5, "left words")
    fig.text(0.6, 0.5, "right words")
    fig.text(0.1, 0.2, "under", fontsize=10)
    fig.text(0.1, 0.2 + 10.5 / 72 / 3.0, "over", fontsize=10)  # the next line, 10.5 pt higher
    assert text_problems(fig) == {"overlaps": [], "outside": []}


def test_two_texts_on_each_other_are_named_with_how_far_they_overlap():
    fig = _figure()
    fig.text(0.2, 0.5, "head 3", fontsize=10)
    fig.text(0.25, 0.5, "PyTorch's default: the mean", fontsize=10)
    problems = text_problems(fig)
    assert problems["outside"] == []
    [overlap] = problems["overlaps"]
    assert overlap.startswith("'head 3' overprints \"PyTorch's default: the mean\" by ")
    assert overlap.endswith(" pt")


@pytest.mark.parametrize(("x", "y", "ha", "va", "edge"), [
    (0.99, 0.5, "left", "center", "right"),
    (0.01, 0.5, "right", "center", "left"),
    (0.5, 0.995, "center", "bottom", "top"),
    (0.5, 0.005, "center", "top", "bottom"),
])
def test_a_text_past_any_edge_is_named_with_that_edge(x, y, ha, va, edge):
    fig = _figure()
    fig.text(x, y, "cut off", ha=ha, va=va)
    [outside] = text_problems(fig)["outside"]
    assert outside.startswith("'cut off' runs ") and outside.endswith(f"past the {edge} edge")


def test_turned_labels_side_by_side_do_not_overlap_though_their_upright_boxes_do():
    fig = _figure()
    for i in range(4):  # like tick labels turned 45 degrees: their bounding boxes overlap a lot
        fig.text(0.2 + 0.09 * i, 0.5, "a long tick label", rotation=45, ha="center", va="center")
    assert text_problems(fig)["overlaps"] == []
    crossing = _figure()
    crossing.text(0.5, 0.5, "a long tick label", rotation=45, ha="center", va="center")
    crossing.text(0.5, 0.5, "another long label", rotation=-45, ha="center", va="center")
    assert len(text_problems(crossing)["overlaps"]) == 1


def test_hidden_empty_and_undrawn_texts_are_not_counted():
    fig = new_figure(4.0, 3.0)
    ax = fig.add_subplot()
    ax.set_xticks([0, 0.5, 1, 5, 9])
    ax.set_xlim(0, 1)  # 5 and 9 now lie outside the view: matplotlib does not draw them
    ax.text(0.5, 0.5, "hidden", visible=False)
    ax.text(0.5, 0.5, "   ")
    ax.plot([0, 1], [0, 1], label="a line")
    legend = ax.legend()
    legend.set_visible(False)
    hidden_axes = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    hidden_axes.set_title("under everything")
    hidden_axes.set_visible(False)
    canvas = fig.add_axes((0.0, 0.0, 1.0, 1.0))  # a canvas for hand-placed marks: no axes drawn
    canvas.set_xlim(-5, 5)
    canvas.set_axis_off()
    fig.draw_without_rendering()
    words = [text.get_text() for text in drawn_texts(fig)]
    assert "hidden" not in words and "a line" not in words and "under everything" not in words
    assert not any(w.strip() == "" for w in words)
    assert not any(t in canvas.get_xticklabels() + canvas.get_yticklabels() for t in drawn_texts(fig))
    x_labels = [t.get_text() for t in drawn_texts(fig) if t in ax.get_xticklabels()]
    assert sorted(x_labels) == ["0.0", "0.5", "1.0"]
    assert text_problems(fig) == {"overlaps": [], "outside": []}


def test_an_annotation_counts_by_its_words_not_its_arrow():
    fig = _figure()
    fig.text(0.45, 0.45, "target")
    fig.add_artist(matplotlib.text.Annotation(
        "note", xy=(0.5, 0.47), xytext=(0.1, 0.9), xycoords="figure fraction",
        arrowprops={"arrowstyle": "->"}))
    assert text_problems(fig)["overlaps"] == []


def test_overlap_depth_of_turned_boxes():
    upright = TextBox(None, (0.0, 0.0), (10.0, 1.0), 0.0)
    turned = TextBox(None, (0.0, 0.0), (10.0, 1.0), np.pi / 2)  # a cross: they overlap by 2 px
    assert overlap_depth(upright, turned) == pytest.approx(2.0)
    apart = TextBox(None, (0.0, 12.0), (10.0, 1.0), np.pi / 4)  # its lowest corner is 4.2 px up
    assert overlap_depth(upright, apart) < 0


def test_the_png_records_what_the_drawing_it_holds_showed():
    fig = _figure()
    fig.text(0.2, 0.5, "√d_k scaled")
    fig.text(0.22, 0.5, "√d_k again")
    buffer = io.BytesIO()
    chunks = save_png(fig, buffer, dpi=50, description="two labels on each other")
    text = png_facts(buffer.getvalue())["text"]
    assert {key: text.get(key) for key in TEXT_CHECK_KEYS} == {key: chunks[key] for key in TEXT_CHECK_KEYS}
    assert text["TextOverlaps"] == "1" and text["TextOutside"] == "0"
    assert "'√d_k scaled' overprints '√d_k again'" in text["TextProblems"]
    clean = _figure()
    clean.text(0.2, 0.5, "alone")
    text = png_facts(clean.to_png(dpi=50))["text"]
    assert (text["TextOverlaps"], text["TextOutside"], "TextProblems" in text) == ("0", "0", False)


def test_widget_frames_record_the_check_in_full_colour_and_in_a_palette():
    import matplotlib.pyplot as plt

    for colors in (None, 16):
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.set_title("a title far wider than this small figure can hold")
        text = png_facts(figure_to_png(fig, colors=colors, dpi=50))["text"]
        assert int(text["TextOutside"]) >= 1, text
        assert "'a title far wider than this small figur…' runs" in text["TextProblems"]


def test_the_check_reads_the_drawing_saved_not_an_earlier_one():
    fig = _figure()
    label = fig.text(0.2, 0.5, "moving")
    fig.text(0.6, 0.5, "fixed")
    assert text_problems(fig)["overlaps"] == []
    label.set_x(0.62)  # moved onto the other after a first drawing
    assert png_facts(fig.to_png(dpi=50))["text"]["TextOverlaps"] == "1"


def test_optional_labels_are_kept_only_where_they_have_room():
    from mha.plotting.text_boxes import drop_overprinting

    fig = _figure()
    fig.text(0.5, 0.8, "a title that stays")
    wanted = fig.text(0.1, 0.5, "first")
    clash = fig.text(0.11, 0.5, "second")  # on the first
    under_title = fig.text(0.52, 0.8, "on the title")
    off_canvas = fig.text(0.98, 0.2, "past the edge")
    free = fig.text(0.6, 0.3, "free")
    kept = drop_overprinting(fig, [wanted, clash, under_title, off_canvas, free])
    assert kept == [wanted, free]
    assert [t.get_text() for t in fig.texts] == ["a title that stays", "first", "free"]
    assert text_problems(fig) == {"overlaps": [], "outside": []}
    assert drop_overprinting(fig, []) == []
