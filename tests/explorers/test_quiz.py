"""mha.explorers.quiz: the question a check grades, drawn in the page with the script that grades it."""

import json
import re

import pytest

from mha import checks
from mha.checks.questions import LETTERS, Before, Choice, Number, Option, Order, Question, Range
from mha.explorers import quiz
from mha.explorers.browser import static_text
from mha.explorers.quiz import sealed_payload, unseal
from tests.checks.test_questions import QUESTIONS


def _payload(html: str) -> dict:
    found = re.search(r'<script type="application/json" class="mha-quiz-data">(.*?)</script>', html, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_page_carries_the_question_the_check_grades():
    view = quiz(checks.check_scores_mebibytes)
    html = view.to_html(element_id="q")
    assert _payload(html) == sealed_payload(checks.check_scores_mebibytes.question)
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


def _secrets(question) -> list[str]:
    """Every text that gives the key away: each hint, each reason, the explanation, a number's bounds."""
    texts = [question.explanation]
    if question.kind == "choice":
        texts += [t for o in question.options for t in (o.hint, o.explains) if t]
    elif question.kind == "number":
        texts += [question.otherwise] + [r.hint for r in question.wrong]
    else:
        texts += [m.hint for m in question.mistakes]
    return [t for t in texts if t]


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_the_page_carries_no_key_in_plain_sight(name):
    """No hint, reason or explanation, no "right" mark, no answer: only sealed blobs and the question."""
    question = QUESTIONS[name]
    html = quiz(question).to_html(element_id="q")
    data = _payload(html)
    for text in _secrets(question):  # (an order's "otherwise" stays plain: it names no pair)
        assert text not in html and json.dumps(text)[1:-1] not in html, text
    assert not {"right", "answer", "explanation", "hint", "explains", "wrong"} & set(data) - {"explanation"}
    assert '"right"' not in json.dumps(data) and '"hint"' not in json.dumps(data)
    if question.kind == "choice":
        assert all(set(o) == {"text", "chosen", "left"} for o in data["options"])
        blobs = [b for o in data["options"] for b in (o["chosen"], o["left"]) if b]
        assert len({len(b) for b in blobs}) == 1  # one length for every blob: the length says nothing
        assert all(bool(o["left"]) == question.several for o in data["options"])
    if question.kind == "order":
        assert question.answer not in {data["solved"], *(m[0] for m in data["mistakes"])}


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_each_sealed_verdict_opens_with_its_own_answer(name):
    """The keys quiz.js derives open the blobs into what Question.grade says (here in Python)."""
    question, data = QUESTIONS[name], sealed_payload(QUESTIONS[name])
    salt = data["salt"]
    if question.kind == "choice":
        for letter, option, sealed in zip(LETTERS, question.options, data["options"], strict=False):
            chosen = json.loads(unseal(f"{salt}|{letter}|chosen", sealed["chosen"]))
            assert chosen == ({"v": "right", "m": option.explains} if option.right
                              else {"v": "wrong", "m": option.hint})
            wrong_key = unseal(f"{salt}|{letter}|left", sealed["chosen"])
            assert (option.hint or option.explains) not in wrong_key  # another key opens nothing readable
    elif question.kind == "number":
        key = json.loads(unseal(f"{salt}|number", data["sealed"]))
        assert key["answer"] == [question.answer.low, question.answer.high]
    else:
        assert unseal(f"{salt}|explain|{question.answer}", data["explanation"]) == question.explanation


def test_the_same_question_under_another_name_seals_differently():
    options = [Option("x", explains="because."), Option("y", hint="no.")]
    one, two = (sealed_payload(Choice(name, "p", options)) for name in ("check_one", "check_two"))
    assert one["salt"] != two["salt"] and one["options"][0]["chosen"] != two["options"][0]["chosen"]
    assert sealed_payload(Choice("check_one", "p", options)) == one  # deterministic: the build reproduces


@pytest.mark.parametrize("text", ["", "é√·ᵀ — “quotes”", "</script><b>", "a" * 5000, "trailing  ",
                                  "\u2028\n"])
def test_hostile_texts_survive_the_seal(text):
    question = Choice("check_demo", "p", [Option("x", explains="e" + text),
                                          Option(text or "y", hint="h" + text)])
    data = sealed_payload(question)
    got = json.loads(unseal(f"{data['salt']}|b|chosen", data["options"][1]["chosen"]))
    assert got == {"v": "wrong", "m": ("h" + text)}  # inside JSON, the padding never eats a trailing space
    assert "</script>" not in quiz(question).to_html().replace("</script>", "", 2)


def test_every_kind_and_nothing_else_is_sealed():
    number = Number("check_n", "p", Range(1, 2), wrong=[Range(5, 6, "five")], otherwise="o", explanation="e")
    order = Order("check_o", "p", ["x", "y", "z"], "cab", mistakes=[Before("a", "c", "c first")],
                  otherwise="o", explanation="because")
    assert "five" not in json.dumps(sealed_payload(number))
    assert "c first" not in json.dumps(sealed_payload(order))
    with pytest.raises(TypeError, match="no page form"):
        sealed_payload(Question("check_x", "p"))
