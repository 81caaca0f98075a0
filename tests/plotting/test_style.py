import numpy as np
import pytest

from mha.plotting import CourseFigure, plot_heads
from mha.plotting.style import new_figure, png_description, register_ipython_display


def test_alt_text_travels_inside_the_png_including_non_latin_text():
    fig = new_figure(2, 1, alt_text="Weights for √d_k — scaled")  # not latin-1: stored as iTXt
    assert png_description(fig.to_png(dpi=20)) == "Weights for √d_k — scaled"


def test_description_falls_back_to_titles_and_axis_labels():
    fig = new_figure(3, 2)
    ax = fig.add_subplot()
    ax.plot([0, 1], [1, 0])
    ax.set_title("Variance of q·k")
    ax.set_xlabel("d_k")
    fig.suptitle("Scaling")
    assert fig.describe() == "Figure: Scaling; Variance of q·k, x axis: d_k"


def test_plot_functions_describe_what_they_show():
    w = np.zeros((2, 3, 3))
    w[:, :, 1] = 1.0
    description = plot_heads(w, ["the", "cat", "sat"]).describe()
    assert "2 heatmaps" in description and "the to cat" in description


def test_ipython_shows_course_figures_as_png_with_alt(monkeypatch):
    IPython = pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell)
    register_ipython_display()
    fig = new_figure(2, 1, alt_text="A blank test figure")
    data, metadata = shell.display_formatter.format(fig)
    assert png_description(data["image/png"]) == "A blank test figure"
    assert metadata["image/png"] == {"alt": "A blank test figure"}
    assert isinstance(fig, CourseFigure)


def test_a_title_wider_than_its_panel_is_wrapped_not_clipped():
    import matplotlib

    matplotlib.use("Agg")
    from mha.plotting.style import new_figure

    long = "Peak memory of attention, 8 heads of 64, block_size = 256, measured and modelled"
    fig = new_figure(4.8, 3.6)
    left, right = fig.subplots(1, 2)
    fig.suptitle(long)
    left.set_title(long)
    right.set_title("short")
    fig.to_png(dpi=50)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    assert "\n" in left.get_title() and right.get_title() == "short"
    for text, room in ((fig._suptitle, fig.bbox.width), (left.title, fig.bbox.width / 2)):
        box = text.get_window_extent(renderer)
        assert box.width <= room and box.x0 >= 0 and box.x1 <= fig.bbox.width + 1
