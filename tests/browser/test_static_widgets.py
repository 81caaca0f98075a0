"""The chapters' explorers as plain HTML (``book/static_widgets.py``) and the script that flips their
frames (``assets/static-widgets.js``), from widget state ipywidgets itself saves.

Each test builds an explorer in Python with the package's ``frame_explorer``, saves its state as the
book's build does, draws it with ``book.static_widgets.Page`` and opens it in Chromium: what a reader
does with a slider (keys, pointer), an off/on toggle and nested stacks, what a screen reader is told,
and which frame images the browser fetches. Hostile state (a model or link the page cannot draw) fails.
"""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import ipywidgets as widgets
import matplotlib
import pytest
from ipywidgets.embed import dependency_state, embed_data

from book.site_weight import serve
from book.static_widgets import Page
from mha.explorers.frames import frame_explorer

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[2]


def _state(*views: widgets.Widget, links=()) -> tuple[dict, list[str]]:
    data = embed_data(views=list(views), state=dependency_state([*views, *links]))
    return data["manager_state"], [spec["model_id"] for spec in data["view_specs"]]


def _draw(tmp_path: Path, *views, links=()) -> str:
    state, ids = _state(*views, links=links)
    page = Page(state, tmp_path, lambda path: path, "test")
    return "".join(f'<div class="widget-subarea">{page.draw(model_id)}</div>' for model_id in ids)


def _words(n: int):
    words = [f"word{i}" for i in range(n)]
    return words, frame_explorer(lambda word: f"<p class='frame'>frame of {html.escape(word)}</p>",
                                 {"word": words}, title="Words")  # fmt: skip


# --- drawn at build time --------------------------------------------------------------------------


def test_a_hidden_live_part_is_left_out_and_the_rest_is_plain_html(tmp_path):
    live = widgets.VBox([widgets.Text(description="sentence")], layout=widgets.Layout(display="none"))
    words, explorer = _words(3)
    markup = _draw(tmp_path, widgets.VBox([explorer, live]), links=explorer.links)
    assert "sentence" not in markup and "<script" not in markup
    assert markup.count('type="range"') == 1 and markup.count("frame of") == 3
    assert markup.count(" hidden>") == 2  # one frame shown


@pytest.mark.parametrize("widget", [widgets.Checkbox(description="on"), widgets.IntSlider(description="n")])
def test_a_widget_the_page_cannot_drive_fails_the_build(tmp_path, widget):
    with pytest.raises(ValueError, match="cannot draw"):
        _draw(tmp_path, widgets.VBox([widget]))


def test_a_stack_no_control_follows_or_a_foreign_link_fails_the_build(tmp_path):
    stack = widgets.Stack([widgets.HTML("a"), widgets.HTML("b")], selected_index=0)
    with pytest.raises(ValueError, match="follows no control"):
        _draw(tmp_path, widgets.VBox([stack]))
    slider, other = widgets.IntSlider(), widgets.IntSlider()
    with pytest.raises(ValueError, match="value -> value"):
        link = widgets.jslink((slider, "value"), (other, "value"))
        _draw(tmp_path, widgets.VBox([slider, other]), links=[link])


def test_a_state_missing_a_model_fails_the_build(tmp_path):
    words, explorer = _words(2)
    state, ids = _state(explorer, links=explorer.links)
    state["state"].pop(next(k for k, m in state["state"].items() if m["model_name"] == "StackModel"))
    with pytest.raises(ValueError, match="lacks"):
        Page(state, tmp_path, str, "test").draw(ids[0])


def test_image_frames_become_files_named_by_content_with_their_alt_text(tmp_path):
    import matplotlib.pyplot as plt

    def render(n):
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.plot(range(n))
        return fig

    explorer = frame_explorer(render, {"n": [2, 3]}, title="Lines")
    markup = _draw(tmp_path, explorer, links=explorer.links)
    files = sorted((tmp_path / "_images" / "frames").glob("*.png"))
    assert len([f for f in files if not f.name.endswith("-1x.png")]) == 2
    assert markup.count('class="widget-image"') == 2 and markup.count('loading="lazy"') == 2
    assert "(n = 2)" in markup and "(n = 3)" in markup  # each frame's alt text names its values


# --- in the browser -------------------------------------------------------------------------------



@pytest.fixture
def open_markup(tmp_path, browser):
    """``open_markup(markup)``: a page with it and the site's script and style; yields the page."""
    static = tmp_path / "_static"
    static.mkdir()
    for name in ("static-widgets.js", "static-widgets.css"):
        shutil.copy(ROOT / "assets" / name, static / name)
    url, server = serve(tmp_path)
    contexts, requests = [], []

    def open_page(markup: str):
        (tmp_path / "page.html").write_text(
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>w</title><link rel="icon" '
            'href="data:,"><link rel="stylesheet" href="_static/static-widgets.css"><script defer '
            f'src="_static/static-widgets.js"></script></head><body style="width:600px">{markup}</body>'
            "</html>",
            encoding="utf8")
        context = browser.new_context(viewport={"width": 800, "height": 900})
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(f"{url}/page.html", wait_until="load")
        assert errors == []
        page.requests = requests
        return page

    yield open_page
    for context in contexts:
        context.close()
    server.shutdown()
    server.server_close()


def _shown(page) -> list[str]:
    visible = "fs => fs.filter((f) => f.checkVisibility()).map((f) => f.textContent)"
    return page.locator(".frame").evaluate_all(visible)


@pytest.mark.browser
def test_a_slider_moves_its_frames_by_keyboard_and_says_the_value(open_markup, tmp_path):
    words, explorer = _words(12)
    page = open_markup(_draw(tmp_path, explorer, links=explorer.links))
    slider, output = page.locator("input[type=range]"), page.locator("output")
    assert _shown(page) == [f"frame of {words[0]}"] and output.inner_text() == words[0]
    assert page.get_by_label("word").count() == 1  # the label names the control
    for key, index in [("ArrowRight", 1), ("ArrowUp", 2), ("End", 11), ("ArrowRight", 11), ("Home", 0)]:
        slider.press(key)
        assert _shown(page) == [f"frame of {words[index]}"], key
        assert output.inner_text() == words[index] and slider.get_attribute("aria-valuetext") == words[index]


@pytest.mark.browser
def test_a_tap_on_the_track_and_a_drag_move_the_frames(open_markup, tmp_path):
    words, explorer = _words(5)
    page = open_markup(_draw(tmp_path, explorer, links=explorer.links))
    box = page.locator("input[type=range]").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.click(box["x"] + 0.95 * box["width"], y)
    assert _shown(page) == [f"frame of {words[4]}"]
    page.mouse.down()
    page.mouse.move(box["x"] + 2, y, steps=5)
    page.mouse.up()
    assert _shown(page) == [f"frame of {words[0]}"]


@pytest.mark.browser
def test_nested_stacks_and_an_off_on_toggle_follow_their_own_controls(open_markup, tmp_path):
    explorer = frame_explorer(lambda n, causal: f"<p class='frame'>{n} {'causal' if causal else 'full'}</p>",
                              {"n": [1, 2, 3], "causal": [False, True]}, title="Masks")  # fmt: skip
    page = open_markup(_draw(tmp_path, explorer, links=explorer.links))
    buttons = page.locator(".mha-toggles button")
    assert buttons.evaluate_all("bs => bs.map((b) => b.getAttribute('aria-pressed'))") == ["true", "false"]
    assert page.get_by_role("group", name="causal").count() == 1
    buttons.nth(1).click()
    assert _shown(page) == ["1 causal"]
    page.locator("input[type=range]").press("ArrowRight")
    assert _shown(page) == ["2 causal"]  # the inner stack of the new frame follows the toggle too
    buttons.nth(0).click()
    assert _shown(page) == ["2 full"] and buttons.nth(0).get_attribute("aria-pressed") == "true"


@pytest.mark.browser
def test_a_hidden_frame_image_is_fetched_only_when_shown(open_markup, tmp_path):
    import matplotlib.pyplot as plt

    def render(n):
        fig, ax = plt.subplots(figsize=(2, 1))
        ax.bar(range(n), range(n))
        return fig

    explorer = frame_explorer(render, {"n": [1, 2, 3, 4]}, title="Bars")
    page = open_markup(_draw(tmp_path, explorer, links=explorer.links))
    page.wait_for_load_state("networkidle")
    frames = {url for url in page.requests if "/_images/frames/" in url}
    assert len(frames) == 1, frames
    page.locator("input[type=range]").press("End")
    page.wait_for_function("[...document.images].some((i) => i.checkVisibility() && i.naturalWidth)")
    assert len({url for url in page.requests if "/_images/frames/" in url}) == 2
