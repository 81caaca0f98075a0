"""The site's widget script (``assets/static-widgets.js``) against widget state ipywidgets itself saves.

Each test builds widgets in Python (ipywidgets and the package's frame explorer), saves their state
as the book's build does, and opens a page that loads the script from ``assets/``: what a reader
does with a slider, a toggle, a stack; readouts as ipywidgets formats them; links both ways; layout
and labels; and the one door to ipywidgets' own renderer for a model the script does not draw.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import ipywidgets as widgets
import pytest
from ipywidgets.embed import dependency_state, embed_data

from book.site_weight import serve
from mha.explorers.frames import frame_explorer

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"
DRAWN = "document.documentElement.dataset.mhaWidgets === 'loaded'"


def _page(views: list[widgets.Widget], links: list[widgets.Widget]) -> str:
    """An HTML page holding ``views`` and ``links`` as the built book holds its widgets (the state
    saved without default values, ipywidgets' most compact form)."""
    data = embed_data(views=views, state=dependency_state([*views, *links]))
    outputs = "".join(f'<div class="cell_output"><script type="{VIEW}">{json.dumps(spec)}</script></div>'
                      for spec in data["view_specs"])  # fmt: skip
    state = json.dumps(data["manager_state"]).replace("</", "<\\/")
    return (f'<!doctype html><html lang="en"><head><title>widgets</title><meta charset="utf-8">'
            f'<link rel="icon" href="data:,">'
            f'<link rel="stylesheet" href="_static/static-widgets.css">'
            f'<script defer src="_static/static-widgets.js"></script></head>'
            f'<body style="width: 600px">{outputs}'
            f'<script type="{STATE}">{state}</script></body></html>')  # fmt: skip


@pytest.fixture
def open_widgets(tmp_path, browser):
    """``open_widgets(*views)``: a page with those widgets, drawn; yields the Playwright page."""
    static = tmp_path / "_static"
    static.mkdir()
    for name in ("static-widgets.js", "static-widgets.css"):
        shutil.copy(ROOT / "assets" / name, static / name)
    url, server = serve(tmp_path)
    contexts = []

    def open_page(*views, links=(), manager: Path | None = None):
        if manager is not None:
            (static / "vendored" / "html-manager").mkdir(parents=True, exist_ok=True)
            shutil.copy(manager, static / "vendored" / "html-manager" / "embed.js")
        (tmp_path / "page.html").write_text(_page(list(views), list(links)), encoding="utf8")
        context = browser.new_context(viewport={"width": 800, "height": 900})
        contexts.append(context)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.goto(f"{url}/page.html")
        page.wait_for_function("document.documentElement.dataset.mhaWidgets", timeout=60_000)
        assert page.evaluate(DRAWN) and errors == [], errors
        return page

    yield open_page
    for context in contexts:
        context.close()
    server.shutdown()
    server.server_close()


def _frames(n: int) -> tuple[list[str], object]:
    words = [f"word{i}" for i in range(n)]
    return words, frame_explorer(lambda word: f"<p class='frame'>frame of {html.escape(word)}</p>",
                                 {"word": words}, title="Words")  # fmt: skip


def _open_explorer(open_widgets, explorer):
    return open_widgets(explorer, links=explorer.links)


def _shown(page) -> list[str]:
    return page.locator(".frame").evaluate_all("frames => frames.map((f) => f.textContent)")


def test_a_frame_explorer_moves_with_the_keyboard_and_shows_one_frame(open_widgets):
    words, explorer = _frames(12)
    page = _open_explorer(open_widgets, explorer)
    assert page.evaluate("document.documentElement.dataset.mhaRenderer") == "site"
    handle = page.locator(".noUi-handle")
    readout = page.locator(".widget-readout")
    assert _shown(page) == [f"frame of {words[0]}"] and readout.inner_text() == words[0]
    presses = [("ArrowRight", 1), ("ArrowUp", 2), ("PageUp", 7), ("ArrowLeft", 6), ("ArrowDown", 5),
               ("End", 11), ("PageUp", 11), ("ArrowRight", 11), ("Home", 0), ("PageDown", 0)]  # fmt: skip
    for key, index in presses:
        handle.press(key)
        assert readout.inner_text() == words[index], key
        assert _shown(page) == [f"frame of {words[index]}"], key
        assert handle.get_attribute("aria-valuetext") == words[index]
        assert float(handle.get_attribute("aria-valuenow")) == index
    assert handle.get_attribute("role") == "slider" and handle.get_attribute("aria-label") == "word"
    assert (handle.get_attribute("aria-valuemin"), handle.get_attribute("aria-valuemax")) == ("0.0", "11.0")


def test_a_tap_or_a_drag_on_the_track_moves_the_frames_with_the_pointer(open_widgets):
    words, explorer = _frames(5)
    page = _open_explorer(open_widgets, explorer)
    box = page.locator(".noUi-base").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.click(box["x"] + 0.74 * box["width"], y)  # nearest of 0, 1/4 ... 1 is 3/4
    assert _shown(page) == [f"frame of {words[3]}"]
    page.mouse.move(box["x"] + 0.74 * box["width"], y)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.1 * box["width"], y, steps=5)
    assert _shown(page) == [f"frame of {words[0]}"]  # the explorer's sliders update as they move
    page.mouse.move(box["x"] + 2 * box["width"], y, steps=5)  # past the end: the last value
    page.mouse.up()
    assert _shown(page) == [f"frame of {words[4]}"]
    assert page.evaluate("document.activeElement.classList.contains('noUi-handle')")  # as noUiSlider


def test_a_slider_saved_without_continuous_update_changes_its_links_on_release(open_widgets):
    leader, follower = widgets.IntSlider(continuous_update=False, description="a"), widgets.IntSlider()
    link = widgets.jslink((leader, "value"), (follower, "value"))
    page = open_widgets(widgets.VBox([leader, follower]), links=[link])
    box = page.locator(".noUi-base").first.bounding_box()
    y = box["y"] + box["height"] / 2
    readouts = page.locator(".widget-readout")
    page.mouse.move(box["x"] + 1, y)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.5 * box["width"], y, steps=5)
    assert readouts.all_inner_texts() == ["50", "0"]  # the readout follows the pointer, the link waits
    page.mouse.up()
    assert readouts.all_inner_texts() == ["50", "50"]


def test_a_stack_draws_a_frame_only_when_it_is_shown(open_widgets):
    words, explorer = _frames(30)
    page = _open_explorer(open_widgets, explorer)
    assert page.locator(".frame").count() == 1
    handle = page.locator(".noUi-handle")
    for _ in range(3):
        handle.press("ArrowRight")
    handle.press("Home")
    assert page.locator(".frame").count() == 1  # one in the page; the others kept aside
    assert _shown(page) == [f"frame of {words[0]}"]


def test_links_run_both_ways_and_toggle_buttons_press(open_widgets):
    frames = widgets.Stack([widgets.HTML(f"<p class='frame'>{name}</p>") for name in ("off", "on")],
                           selected_index=0)  # fmt: skip
    toggles = widgets.ToggleButtons(options=["off", "on"], description="scale")
    chooser = widgets.SelectionSlider(options=["off", "on"], description="again")
    links = [widgets.jslink((toggles, "index"), (frames, "selected_index")),
             widgets.jslink((chooser, "index"), (frames, "selected_index"))]
    page = open_widgets(widgets.VBox([toggles, chooser, frames]), links=links)
    buttons = page.locator(".widget-toggle-button")
    assert buttons.evaluate_all("bs => bs.map((b) => b.getAttribute('aria-pressed'))") == ["true", "false"]
    buttons.nth(1).click()
    assert _shown(page) == ["on"]
    assert page.locator(".widget-readout").inner_text() == "on"  # the other slider followed the stack
    assert buttons.evaluate_all("bs => bs.map((b) => b.classList.contains('mod-active'))") == [False, True]
    page.locator(".noUi-handle").press("Home")
    assert _shown(page) == ["off"]
    assert buttons.nth(0).get_attribute("aria-pressed") == "true"
    group = page.locator(".widget-toggle-buttons")
    assert (group.get_attribute("role"), group.get_attribute("aria-label")) == ("group", "scale")


def test_readouts_are_formatted_as_ipywidgets_formats_them(open_widgets):
    sliders = [widgets.IntSlider(value=7, min=0, max=48, description="tokens"),
               widgets.FloatSlider(value=2.0, min=0.0, max=8.0, step=0.1, description="bias"),
               widgets.FloatLogSlider(value=10_000, base=10, min=1, max=6, step=0.1, readout_format=".3g",
                                      description="base"),
               widgets.IntSlider(value=64, min=8, max=1024, step=8, description="d_model")]  # fmt: skip
    page = open_widgets(widgets.VBox(sliders))
    readouts = page.locator(".widget-readout")
    expected = [str(sliders[0].value), f"{sliders[1].value:.2f}", f"{sliders[2].value:.3g}", "64"]
    # Python's .3g writes 1e+04 where d3 (ipywidgets' formatter) writes 1.00e+4: compare as numbers.
    shown = readouts.all_inner_texts()
    assert shown[:2] == expected[:2] and float(shown[2]) == float(expected[2]) and shown[3] == expected[3]
    handles = page.locator(".noUi-handle")
    handles.nth(1).press("ArrowRight")
    assert readouts.nth(1).inner_text() == "2.10"  # not 2.1000000000000001
    handles.nth(2).press("ArrowLeft")
    assert float(readouts.nth(2).inner_text()) == pytest.approx(10 ** 3.9, rel=1e-2)
    handles.nth(3).press("PageUp")
    assert readouts.nth(3).inner_text() == str(64 + 5 * 8)


def test_layout_labels_and_hidden_boxes_follow_the_state(open_widgets):
    hidden = widgets.VBox([widgets.Text(description="sentence", placeholder="type")],
                          layout=widgets.Layout(display="none"))  # fmt: skip
    menu = widgets.Dropdown(options=["a", "b"], description="pick", style={"description_width": "initial"})
    slider = widgets.IntSlider(description="heads", layout=widgets.Layout(width="100%", max_width="480px"))
    page = open_widgets(widgets.VBox([slider, menu, hidden]))
    sizes = page.locator(".widget-slider").evaluate("e => [e.style.width, e.style.maxWidth]")
    assert sizes == ["100%", "480px"]
    assert page.locator(".widget-text input").is_hidden()
    label = page.locator(".widget-dropdown label")
    assert label.evaluate("l => l.control === l.parentElement.querySelector('select')")
    assert label.evaluate("l => l.style.width") == "initial"
    page.locator(".widget-dropdown select").select_option(label="b")
    assert page.locator(".widget-dropdown select").evaluate("s => s.selectedIndex") == 1


def test_a_model_it_does_not_draw_goes_to_the_manager(open_widgets, site):
    """A page with a checkbox (no chapter has one) is drawn whole by html-manager, fetched for it."""
    manager = site / "_static" / "vendored" / "html-manager" / "embed.js"
    page = open_widgets(widgets.VBox([widgets.Checkbox(description="on"), widgets.IntSlider()]),
                        manager=manager)  # fmt: skip
    assert page.evaluate("document.documentElement.dataset.mhaRenderer") == "manager"
    page.wait_for_selector(".widget-checkbox input", timeout=60_000)
    assert page.locator(".widget-subarea").count() == 1  # drawn once, by the manager alone
