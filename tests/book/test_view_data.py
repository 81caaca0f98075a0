"""The site's attention views: large arrays and the views' script become files the page fetches."""

from __future__ import annotations

import json
from importlib import resources

from bs4 import BeautifulSoup

from book.view_data import INLINE_LIMIT, VIEWS, data_to_files, library_to_file
from mha.explorers.attention_view import AttentionView


def _page(tmp_path, n_views: int, data_chars: int = 10) -> str:
    payload = {"views": ["head_view"], "pad": "x" * data_chars + "</script>"}
    outputs = [AttentionView(payload).to_html(element_id=f"mha-av-{i}") for i in range(n_views)]
    return "<p>before</p>" + "<p>between</p>".join(outputs) + "<p>after</p>"


def _moved(function, html: str, tmp_path) -> tuple[str, int]:
    soup = BeautifulSoup(html, "html.parser")
    count = function(soup, tmp_path, _url)
    return str(soup), count


def _url(rel: str) -> str:
    return "../" + rel


def test_every_copy_of_the_views_script_becomes_one_file_and_each_output_keeps_its_own_call(tmp_path):
    page = _page(tmp_path, 3)
    library = resources.files("mha.explorers").joinpath("static", "attention_view.js").read_text("utf8")
    assert page.count(library) == 3
    body, moved = _moved(library_to_file, page, tmp_path)
    assert moved == 3 and library not in body
    files = list((tmp_path / VIEWS).glob("view-*.js"))
    assert len(files) == 1 and files[0].read_text("utf8") == library
    src = f'<script src="../{VIEWS}/{files[0].name}"></script>'
    assert body.count(src) == 3
    for i in range(3):  # the file first, then the call that draws this output
        call = f'<script>window.mhaAttentionView.mount(document.getElementById("mha-av-{i}"));</script>'
        assert body.count(src + call) == 1
    assert body.startswith("<p>before</p>") and body.endswith("<p>after</p>")


def test_a_page_without_views_is_left_as_it_is(tmp_path):
    page = "<p>no views</p><script>var x = 1;</script>"
    assert _moved(library_to_file, page, tmp_path) == (page, 0)
    assert _moved(data_to_files, page, tmp_path) == (page, 0)
    assert not (tmp_path / VIEWS).exists()


def test_only_large_view_data_moves_to_a_file(tmp_path):
    small, _ = _moved(data_to_files, _page(tmp_path, 1, data_chars=10), tmp_path)
    assert 'data-src="' not in small
    large, moved = _moved(data_to_files, _page(tmp_path, 1, data_chars=INLINE_LIMIT), tmp_path)
    assert moved == 1 and 'data-src="../_images/views/' in large and "x" * 100 not in large
    (stored,) = (tmp_path / VIEWS).glob("*.json")
    assert json.loads(stored.read_text("utf8"))["pad"].endswith("</script>")  # unescaped, as JSON.parse sees


def test_the_browser_views_scripts_move_too_one_file_per_kind_of_view(tmp_path):
    from mha.explorers.browser import view_html

    quiz = [view_html({"n": i}, prefix="mha-quiz", script="quiz.js", mount="mhaQuiz.mount",
                      element_id=f"q{i}") for i in range(2)]
    plane = view_html({"n": 9}, prefix="mha-gv", script="geometry_view.js", mount="mhaGeometryView.mount",
                      element_id="g0")
    body, moved = _moved(library_to_file, "".join(quiz) + plane, tmp_path)
    assert moved == 3 and "What the course's browser views share" not in body
    assert len(list((tmp_path / VIEWS).glob("view-*.js"))) == 2  # the quiz's and the plane's
    calls = (("q0", "mhaQuiz.mount"), ("q1", "mhaQuiz.mount"), ("g0", "mhaGeometryView.mount"))
    for element_id, mount in calls:
        assert f'<script>window.{mount}(document.getElementById("{element_id}"));</script>' in body
