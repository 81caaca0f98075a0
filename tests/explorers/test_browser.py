"""mha.explorers.browser: one self-contained fragment per browser view, with the shared base inlined."""

import json
import re

import pytest

from mha.explorers.browser import static_text, view_html


def test_the_fragment_holds_data_styles_base_script_and_mount_in_that_order():
    html = view_html({"a": [1, 2]}, prefix="mha-x", script="quiz.js", mount="mhaQuiz.mount",
                     styles=["quiz.css", ".mha-x{color:red}"], element_id="x")
    assert html.startswith('<div class="mha-x" id="x"><style>')
    order = [html.index(part) for part in (static_text("quiz.css"), ".mha-x{color:red}",
                                           '<script type="application/json" class="mha-x-data">{"a":[1,2]}',
                                           static_text("view_base.js"), static_text("quiz.js"),
                                           'window.mhaQuiz.mount(document.getElementById("x"));')]
    assert order == sorted(order)  # the base defines what the view's script uses before it runs


def test_without_styles_there_is_no_style_element_and_the_noscript_text_is_escaped():
    html = view_html({}, prefix="mha-x", script="view_base.js", mount="f", needs="Needs <JS> & more",
                     element_id="x")
    assert "<style>" not in html
    assert "<noscript>Needs &lt;JS&gt; &amp; more</noscript>" in html


def test_data_cannot_close_its_script_and_ids_are_fresh_per_view():
    html = view_html({"t": "</script><i>"}, prefix="mha-x", script="view_base.js", mount="f")
    data = re.search(r'class="mha-x-data">(.*?)</script>', html, re.S).group(1)
    assert json.loads(data.replace("<\\/", "</")) == {"t": "</script><i>"}
    first = re.match(r'<div class="mha-x" id="(mha-x-[0-9a-f]{12})">', html)
    again = view_html({"t": "</script><i>"}, prefix="mha-x", script="view_base.js", mount="f")
    assert first and first.group(1) not in again


@pytest.mark.parametrize("name", ["view_base.js", "quiz.js", "quiz.css", "geometry_view.js",
                                  "geometry_view.css", "softmax_view.js"])
def test_every_shipped_file_is_readable_and_nothing_loads_from_the_network(name):
    text = static_text(name)
    assert len(text) > 200
    assert not re.search(r"\b(fetch|XMLHttpRequest|import\s*\(|@import)\b|https?://(?!www.w3.org/2000/svg)",
                         text)


def test_a_missing_static_file_is_an_error():
    with pytest.raises(FileNotFoundError):
        static_text("no_such_view.js")
