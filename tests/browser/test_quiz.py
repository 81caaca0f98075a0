"""The in-page questions in Chromium: graded as mha.checks grades them, answered by keyboard alone, on a
desktop and on a phone, with the network cut; and in the built book, where a chapter's questions work
offline.

The first tests need no built site: the questions' HTML is loaded into a blank page.
"""

from __future__ import annotations

import pytest

from mha import checks
from mha.explorers import quiz
from mha.explorers.quiz import sealed_payload
from tests.browser.test_pages import PROFILES, open_page, unexpected
from tests.checks.test_questions import QUESTIONS, _all_answers

pytestmark = pytest.mark.browser

#: One question of each kind: one answer, several answers, a number, an order.
KINDS = ["check_flat_mask", "check_average_tells", "check_scores_mebibytes", "check_ablation_order"]


def _offline_page(browser, profile: str, names):
    """A blank page holding the questions ``names``; every request is refused (no network at all)."""
    context = browser.new_context(**PROFILES[profile])
    page = context.new_page()
    errors = []
    page.route("**/*", lambda route: route.abort())
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    body = "".join(quiz(getattr(checks, name)).to_html(element_id=name) for name in names)
    page.set_content(f'<html lang="en"><head><meta name="viewport" content="width=device-width">'
                     f"<title>q</title></head><body><main>{body}</main></body></html>")
    return page, errors


def test_the_browser_grades_every_answer_as_the_check_does(browser):
    """From the sealed page data alone, on a first try and after being told that an option is missing."""
    page, errors = _offline_page(browser, "desktop", sorted(QUESTIONS))
    for name, question in QUESTIONS.items():
        answers = _all_answers(question)
        for told in (False, True):
            graded = page.evaluate("([q, answers, told]) => answers.map(a => mhaQuiz.grade(q, a, told))",
                                   [sealed_payload(question), answers, told])
            for answer, got in zip(answers, graded, strict=True):
                expected = question.grade(answer, told_missing=told)
                assert (got["correct"], got["message"], got["missing"]) == (
                    expected.correct, expected.message, expected.missing), (name, answer, told)
    assert page.evaluate("['4', '4.0', ' 4 ', '4,0', '\u22125', '1e3', '4,194,304', '.5']"
                         ".map(window.mhaQuiz.parseNumber)") == [4, 4, 4, 4, -5, 1000, 4194304, 0.5]
    assert page.evaluate("['', 'four', '4 MiB', '1/2'].map(t => isNaN(window.mhaQuiz.parseNumber(t)))") == [
        True] * 4
    assert errors == []
    page.context.close()


def _plain(message: str) -> str:
    """What the page shows of a message: `code` and *emphasis* marks become formatting."""
    return message.replace("`", "").replace("*", "")


def _feedback(page, name: str) -> tuple[str, str]:
    return page.get_attribute(f"#{name}", "data-state"), page.inner_text(f"#{name} .mha-quiz-feedback")


def _tab_to(page, selector: str, limit: int = 60) -> None:
    """Press Tab until ``selector`` has the focus, as a keyboard user would."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
    raise AssertionError(f"{selector} never took the focus")


@pytest.mark.parametrize("profile", PROFILES)
def test_each_kind_is_answered_wrong_then_right_by_keyboard_alone(browser, profile):
    page, errors = _offline_page(browser, profile, KINDS)
    flat, average, mebibytes, order = (checks.check_flat_mask.question, checks.check_average_tells.question,
                                       checks.check_scores_mebibytes.question,
                                       checks.check_ablation_order.question)
    # One answer: arrows move between options without grading; Check grades.
    _tab_to(page, "#check_flat_mask input[value=a]")
    page.keyboard.press("Space")
    assert _feedback(page, "check_flat_mask")[0] in (None, "")  # choosing is not answering
    assert _feedback(page, "check_flat_mask")[1] == ""
    _tab_to(page, "#check_flat_mask .mha-quiz-check")
    page.keyboard.press("Enter")
    state, text = _feedback(page, "check_flat_mask")
    assert state == "wrong" and _plain(flat.grade("a").message) in text and "Not quite" in text
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("ArrowDown")  # (b)
    assert _feedback(page, "check_flat_mask") == ("", "")  # a new choice clears the old verdict
    _tab_to(page, "#check_flat_mask .mha-quiz-check")
    page.keyboard.press("Enter")
    state, text = _feedback(page, "check_flat_mask")
    assert state == "right" and _plain(flat.grade("b").message) in text and "Right" in text

    # Several answers: a missing right option is said to be missing, named on the next try, then all pass.
    _tab_to(page, "#check_average_tells input[value=a]")
    page.keyboard.press("Space")
    _tab_to(page, "#check_average_tells .mha-quiz-check")
    page.keyboard.press("Enter")
    first = _feedback(page, "check_average_tells")[1]
    named = _plain(average.grade("a", told_missing=True).message)
    assert _plain(average.grade("a").message) in first and named not in first and "left out" in first
    page.keyboard.press("Enter")  # the same answer, checked again
    assert _feedback(page, "check_average_tells")[1].count(named) == 1
    _tab_to(page, "#check_average_tells input[value=c]")
    page.keyboard.press("Space")
    _tab_to(page, "#check_average_tells .mha-quiz-check")
    page.keyboard.press("Enter")
    assert _feedback(page, "check_average_tells")[0] == "right"

    # A number: Enter in the box checks it.
    _tab_to(page, "#check_scores_mebibytes input")
    page.keyboard.type("4.19")
    page.keyboard.press("Enter")
    assert _plain(mebibytes.grade(4.19).message) in _feedback(page, "check_scores_mebibytes")[1]
    page.keyboard.press("Control+A")
    page.keyboard.type("4")
    page.keyboard.press("Enter")
    assert _feedback(page, "check_scores_mebibytes")[0] == "right"

    # An order: the up/down buttons, reached by Tab, keep the focus on the item that moved.
    _tab_to(page, "#check_ablation_order .mha-quiz-check")
    page.keyboard.press("Enter")
    assert _feedback(page, "check_ablation_order") == ("wrong", _feedback(page, "check_ablation_order")[1])
    assert _plain(order.grade("abc").message) in _feedback(page, "check_ablation_order")[1]
    for _ in range(2):  # (c) to the top
        _tab_to(page, '#check_ablation_order button[aria-label="Move (c) up"]')
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Move (c) up"
    _tab_to(page, '#check_ablation_order button[aria-label="Move (b) up"]')
    page.keyboard.press("Enter")
    assert page.evaluate("[...document.querySelectorAll('#check_ablation_order li')]"
                         ".map(li => li.dataset.letter).join('')") == "cba"
    _tab_to(page, "#check_ablation_order .mha-quiz-check")
    page.keyboard.press("Enter")
    assert _feedback(page, "check_ablation_order")[0] == "right"

    width = 390 if profile == "phone" else 1366
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # nothing sticks out
    assert page.locator(".mha-quiz-feedback[aria-live=polite]").count() == len(KINDS)
    assert errors == []
    page.context.close()


@pytest.mark.parametrize("profile", PROFILES)
def test_a_chapters_questions_work_in_the_built_book(browser, site_url, site_pages, profile):
    html = site_pages["chapters/shapes"].read_text(encoding="utf8")
    assert html.count('class="mha-quiz" id=') == 2
    page, visit = open_page(browser, f"{site_url}/chapters/shapes.html", profile=profile)
    try:
        box = page.locator(".mha-quiz", has_text="MiB").first
        box.scroll_into_view_if_needed()
        box.locator("input[type=text]").fill("0.5")
        box.locator(".mha-quiz-check").click()
        assert box.get_attribute("data-state") == "wrong"
        assert "one head's worth" in box.locator(".mha-quiz-feedback").inner_text()
        box.locator("input[type=text]").fill("4")
        box.locator(".mha-quiz-check").click()
        assert box.get_attribute("data-state") == "right"
        choice = page.locator(".mha-quiz", has_text="(5, 2, 5, 5)").first
        choice.locator("label", has_text="as meant").click()
        choice.locator(".mha-quiz-check").click()
        assert choice.get_attribute("data-state") == "wrong"
        assert page.evaluate("document.documentElement.scrollWidth") <= PROFILES[profile]["viewport"]["width"]
        if profile == "phone":  # a finger's width: the Check button is at least 44 px tall
            assert box.locator(".mha-quiz-check").bounding_box()["height"] >= 43
    finally:
        page.context.close()
    assert visit.foreign == [] and visit.failed == []
    assert unexpected(visit.console_errors) == []
