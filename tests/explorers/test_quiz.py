"""mha.explorers.quiz: the question a check grades, drawn in the page with the script that grades it."""

import json
import re

import pytest

from mha import checks
from mha.checks.questions import Choice, Option
from mha.explorers import quiz
from mha.explorers.browser import static_text


def _payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="mha-quiz-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_page_carries_the_question_the_check_grades():
    view = quiz(checks.check_scores_mebibytes)
    html = view.to_html(element_id="q")
    assert _payload(html) == checks.check_scores_mebibytes.question.payload()
    assert html.startswith('<div class="mha-quiz" id="q">')
    assert 'window.mhaQuiz.mount(document.getElementById("q"))' in html
    assert static_text("view_base.js") in html and static_text("quiz.js") in html  # inlined: nothing to fetch
    assert "check_scores_mebibytes(...)" in html  # the noscript line names the notebook's way
    assert not re.search(r"(src|href)=|https?://(?!www.w3.org/2000/svg)", html)  # an XML namespace only
    assert repr(view) == "QuizView(number: check_scores_mebibytes)"


def test_text_that_closes_a_script_cannot_escape_it():
    question = Choice("check_demo", "What does </script><b>x</b> print?",
                      [Option("</script>", explains="it is text."), Option("x", hint="it is not HTML.")])
    html = quiz(question).to_html(element_id="q")
    assert html.count("</script>") == 2  # the data's and the script's own, nothing from the question
    assert _payload(html)["prompt"] == question.prompt


def test_ids_differ_between_two_views_of_one_question():
    view = quiz(checks.check_score_shift)
    assert view.to_html() != view.to_html()


@pytest.mark.parametrize("thing", [print, "check_score_shift", checks.check_softmax])
def test_anything_but_a_question_is_refused(thing):
    with pytest.raises(TypeError, match="asks a question"):
        quiz(thing)
