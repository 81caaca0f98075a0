"""Tests of mha/checks/questions.py and of every question the chapters ask before a solution.

The machinery: malformed questions are refused when written, malformed answers get an error naming the form
expected, and grading follows its rules (a wrong option's own hint; a missed right option's hint; a number's
range; the first misplaced pair of an order). Every question in the book: each answer a learner can give is
graded by those rules, and the kernel check agrees with the grade.
"""

import itertools
import re

import pytest

from mha import checks
from mha.checks import CheckFailed
from mha.checks.questions import (
    LETTERS,
    Before,
    Choice,
    Number,
    Option,
    Order,
    Question,
    Range,
    check_function,
    missing_message,
)

QUESTIONS = {name: getattr(checks, name).question for name in checks.__all__
             if hasattr(getattr(checks, name), "question")}


def test_the_book_asks_a_question_for_each_predict_or_explain_exercise():
    assert len(QUESTIONS) == 29  # the 23 exercises that had only a folded solution, and 6 written since
    assert {q.kind for q in QUESTIONS.values()} == {"choice", "number", "order"}
    assert any(q.kind == "choice" and q.several for q in QUESTIONS.values())


def _choice(**kwargs) -> Choice:
    options = kwargs.pop("options", [Option("right", explains="why"), Option("wrong", hint="misconception")])
    return Choice("check_demo", "prompt", options, **kwargs)


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Choice("demo", "p", [Option("a", explains="e"), Option("b", hint="h")]),
     "named after its check"),
    (lambda: _choice(options=[Option("a", explains="e")]), "2 to 8 options"),
    (lambda: _choice(options=[Option("a", hint="h"), Option("b", hint="h")]), "exactly one option"),
    (lambda: _choice(options=[Option("a", explains="e"), Option("b", explains="e")]), "exactly one option"),
    (lambda: _choice(options=[Option("a", explains="e"), Option("b")]), "needs a hint"),
    (lambda: _choice(options=[Option("a", explains="e"), Option("b", hint="h")], several=True),
     "needs a hint"),
    (lambda: Number("check_n", "p", Range(1, 1), otherwise="o", explanation="e"), "non-empty"),
    (lambda: Number("check_n", "p", Range(1, 2), wrong=[Range(1.5, 3, "h")], otherwise="o", explanation="e"),
     "overlaps"),
    (lambda: Order("check_o", "p", ["x", "y"], "ab", mistakes=[], otherwise="o", explanation="e"),
     "out of order"),
    (lambda: Order("check_o", "p", ["x", "y"], "aa", mistakes=[], otherwise="o", explanation="e"),
     "every item"),
    (lambda: Order("check_o", "p", ["x", "y"], "ba", mistakes=[Before("b", "a", "h")], otherwise="o",
                   explanation="e"), "makes the mistake"),
])
def test_a_malformed_question_is_refused_when_written(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize(("answer", "message"), [
    (2, "option letters"), ("z", "the options are 'a', 'b'"), ("", "the options are"), ("ab", "choose one"),
    (["a", 1], "option letters"),
])
def test_a_malformed_choice_answer_names_the_form_expected(answer, message):
    with pytest.raises(ValueError, match=message):
        _choice().grade(answer)


@pytest.mark.parametrize("answer", ["4", True, float("nan"), float("inf"), None])
def test_a_number_question_takes_finite_numbers_only(answer):
    question = Number("check_n", "p", Range(1, 2), otherwise="o", explanation="e")
    with pytest.raises(ValueError, match="takes a finite number"):
        question.grade(answer)


def test_an_order_must_place_every_item_once():
    question = Order("check_o", "p", ["x", "y", "z"], "cba", mistakes=[], otherwise="o", explanation="e")
    for answer in ("cb", "cbb", "cbaa"):
        with pytest.raises(ValueError, match="order every item once"):
            question.grade(answer)
    assert question.grade(["c", "b", "a"]).correct and question.grade("C, B, A").correct


def test_several_right_options_each_name_what_leaving_them_out_misses_on_the_next_try():
    question = _choice(options=[Option("p", explains="e1", hint="missed p"), Option("q", hint="not q"),
                                Option("r", explains="e2", hint="missed r"),
                                Option("s", explains="e3", hint="missed s")], several=True)
    assert question.grade("acd").correct and question.grade({"c", "a", "d"}).correct
    assert question.grade("abc").message == "not q"  # a wrong pick is named before a miss
    assert question.grade("abc", told_missing=True).message == "not q"
    first = question.grade("ac")  # first told that a true option is missing, not which
    assert (first.correct, first.missing, first.message) == (False, 1, missing_message(1))
    assert "missed" not in first.message and "one more option is true" in first.message
    assert question.grade("ac", told_missing=True).message == "missed s"
    assert question.grade("c").message == missing_message(2)
    assert "2 more options are true" in missing_message(2)
    assert question.grade("c", told_missing=True).message == "missed p"  # the first one left out


def test_a_notebook_check_names_the_missing_option_on_the_next_try(capsys):
    question = _choice(options=[Option("p", explains="e1", hint="missed p"), Option("q", hint="not q"),
                                Option("r", explains="e2", hint="missed r")], several=True)
    check = check_function(question, "tests", "demo")
    with pytest.raises(CheckFailed, match="not q"):  # a wrong pick: nothing is told about the others
        check("ab")
    with pytest.raises(CheckFailed) as first:
        check("a")
    assert "missed r" not in str(first.value) and "one more option is true" in str(first.value)
    with pytest.raises(CheckFailed, match="missed r"):
        check("a")
    check("ac")
    assert capsys.readouterr().out == "✔ check_demo passed: e1 e2\n"


def _all_answers(question: Question):
    """Every answer a learner can give (numbers: a point inside each range, and one outside them all)."""
    n = len(getattr(question, "options", getattr(question, "items", ())))
    if question.kind == "choice" and question.several:
        return ["".join(c) for size in range(1, n + 1) for c in itertools.combinations(LETTERS[:n], size)]
    if question.kind == "choice":
        return list(LETTERS[:n])
    if question.kind == "order":
        return ["".join(p) for p in itertools.permutations(LETTERS[:n])]
    ranges = [question.answer, *question.wrong]
    far = max(abs(r.low) + abs(r.high) for r in ranges) * 10 + 1
    return [(r.low + r.high) / 2 for r in ranges] + [far, -far]


def _expected(question: Question, answer, told_missing: bool = False):
    """The rule each kind of question states, written out independently of grade()."""
    if question.kind == "choice":
        picked = {LETTERS.index(c) for c in answer}
        wrong = [o for i, o in enumerate(question.options) if i in picked and not o.right]
        missed = [o for i, o in enumerate(question.options) if i not in picked and o.right]
        if wrong:
            return False, wrong[0].hint
        if missed:
            return False, missed[0].hint if told_missing else missing_message(len(missed))
        return True, question.explanation
    if question.kind == "number":
        if question.answer.low <= answer < question.answer.high:
            return True, question.explanation
        return False, next((r.hint for r in question.wrong if r.low <= answer < r.high), question.otherwise)
    if answer == question.answer:
        return True, question.explanation
    swapped = [m for m in question.mistakes if answer.index(m.first) < answer.index(m.then)]
    return False, swapped[0].hint if swapped else question.otherwise


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_every_answer_to_every_question_gets_the_feedback_its_rule_gives(name):
    question = QUESTIONS[name]
    answers = _all_answers(question)
    verdicts = []
    for answer in answers:
        for told in (False, True):
            feedback = question.grade(answer, told_missing=told)
            assert (feedback.correct, feedback.message) == _expected(question, answer, told), (answer, told)
            assert feedback.message and feedback.message[-1] in ".)?", f"{answer!r}: {feedback.message!r}"
        verdicts.append(feedback.correct)
    assert verdicts.count(True) == 1  # one right answer (for a number: one right range)
    wrong_messages = {question.grade(a, told_missing=told).message
                      for a, right in zip(answers, verdicts, strict=True) if not right
                      for told in (False, True)}
    assert question.explanation not in wrong_messages


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_every_hint_can_be_reached(name):
    """A hint no answer produces is a misconception nobody is told about: a slip in the question."""
    question = QUESTIONS[name]
    reached = {question.grade(a, told_missing=True).message for a in _all_answers(question)}
    if question.kind == "choice":
        written = {o.hint for o in question.options if o.hint and (question.several or not o.right)}
    elif question.kind == "number":
        written = {r.hint for r in question.wrong} | {question.otherwise}
    else:
        written = {m.hint for m in question.mistakes}
    assert written <= reached


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_the_kernel_check_agrees_with_the_grade(name, capsys):
    check, question = getattr(checks, name), QUESTIONS[name]
    assert check.__module__.startswith("mha.checks.") and check.__name__ == name
    question.told_missing = told = False  # a fresh kernel
    for answer in _all_answers(question):
        feedback = question.grade(answer, told_missing=told)
        told = told or feedback.missing > 0
        if feedback.correct:
            check(answer)
            assert capsys.readouterr().out == f"✔ {name} passed: {feedback.message}\n"
        else:
            with pytest.raises(CheckFailed, match=re.escape(feedback.message)):
                check(answer)
    question.told_missing = False  # as other tests find it


def test_an_untouched_answer_is_not_done_yet_and_fails_when_grading(capsys):
    check = check_function(_choice(), "tests", "demo")
    check(...)
    assert "check_demo: not done yet" in capsys.readouterr().out
    with checks.strict(), pytest.raises(CheckFailed, match="not done yet"):
        check(...)
    with pytest.raises(TypeError, match="takes a Question"):
        check_function("check_demo", "tests", "demo")
