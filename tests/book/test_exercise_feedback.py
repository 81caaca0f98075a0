"""Every exercise gives feedback before its solution: a check the learner runs on their own code, or a
question answered in the page (and in a notebook through its check). Read from the chapters' sources."""

import re

import pytest

from book.toc import notebook_pages
from mha import checks
from tests.chapters.harness import ROOT

EXERCISE = re.compile(r"^```\{exercise\}.*?\n:label: (?P<label>[\w-]+)\n", re.MULTILINE)
SOLUTION = r"^````\{{solution(?:-start)?\}} {label}$"
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)
PAGES = [page for page in notebook_pages(ROOT).values() if page.parent.name == "chapters"]


def _exercises(page):
    """(label, the text between the exercise and its solution) for every exercise of a page."""
    text = page.read_text(encoding="utf8")
    for found in EXERCISE.finditer(text):
        solution = re.compile(SOLUTION.format(label=re.escape(found["label"])), re.MULTILINE).search(text)
        assert solution, f"{page.name}: exercise {found['label']} has no solution"
        yield found["label"], text[found.end():solution.start()]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_each_exercise_is_checked_before_its_solution_opens(page):
    for label, before in _exercises(page):
        cells = [cell["body"] for cell in CELL.finditer(before)]
        called = [name for cell in cells for name in re.findall(r"\b(check_\w+)\(", cell)]
        assert called, f"{page.name}: exercise {label} gives no feedback before its solution"
        for name in called:
            assert name in checks.__all__, f"{page.name}: {label} calls {name}, which mha.checks lacks"
        asked = [name for cell in cells for name in re.findall(r"\bquiz\((check_\w+)\)", cell)]
        for name in asked:
            assert hasattr(getattr(checks, name), "question"), f"{page.name}: {name} asks no question"


def test_the_chapters_ask_every_question_the_checks_hold():
    text = "".join(page.read_text(encoding="utf8") for page in PAGES)
    asked = set(re.findall(r"\bquiz\((check_\w+)\)", text))
    held = {name for name in checks.__all__ if hasattr(getattr(checks, name), "question")}
    assert asked == held
