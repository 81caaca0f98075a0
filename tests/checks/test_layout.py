"""Where the checks live: a learner who meets ``check_x`` in a chapter finds it in the module named
after the first chapter that uses it (``chapters/shapes.md`` -> ``mha/checks/shapes.py``)."""

import re
from pathlib import Path

import pytest

from book.toc import notebook_pages
from mha import checks

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = [page.removeprefix("chapters/") for page in notebook_pages(ROOT) if page.startswith("chapters/")]


def _page(chapter: str) -> str:
    return (ROOT / "chapters" / f"{chapter}.md").read_text(encoding="utf8")


def _assignments(chapter: str) -> str:
    """The graded assignments named after a chapter (``assignments/01-self-attention.md``)."""
    named = [p for p in sorted((ROOT / "assignments").glob("*.md")) if chapter.replace("_", "-") in p.stem]
    return "\n".join(page.read_text(encoding="utf8") for page in named)


def _first_chapter_using(name: str) -> str | None:
    # A chapter's page first; an assignment only for a check no page calls (check_causal_mask).
    calls = re.compile(rf"\b{name}\b")
    for text in (_page, _assignments):
        users = [chapter for chapter in CHAPTERS if calls.search(text(chapter))]
        if users:
            return users[0]
    return None


@pytest.mark.parametrize("name", [name for name in checks.__all__ if name.startswith("check_")])
def test_each_check_lives_in_the_module_of_the_first_chapter_that_uses_it(name):
    module = getattr(checks, name).__module__
    first = _first_chapter_using(name)
    assert first is not None, f"no chapter uses {name}"
    assert module == f"mha.checks.{first}", (
        f"{name} is defined in {module}, but the first chapter that uses it is chapters/{first}.md")
