"""A question answered in the page: the reader commits to a prediction before opening the solution.

:func:`quiz` draws a question of :mod:`mha.checks.questions` (multiple choice, a number, an order) as an
HTML output whose script (``static/quiz.js``) grades the answer in the reader's browser: no kernel, no
network, the same on the static website and in Jupyter. In a notebook the chapter's check function grades
the same question in Python, with the same hints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mha.checks.questions import Question
from mha.explorers.browser import view_html

__all__ = ["QuizView", "quiz"]


@dataclass(frozen=True)
class QuizView:
    """One question in the page; shown as HTML by Jupyter and the book.

    Attributes
    ----------
    question : mha.checks.questions.Question
    """

    question: Question

    @property
    def payload(self) -> dict:
        """What the browser reads (:meth:`Question.payload`)."""
        return self.question.payload()

    def to_html(self, *, element_id: str | None = None) -> str:
        """A self-contained HTML fragment: the question, its style and script, and the call that draws it."""
        return view_html(self.payload, prefix="mha-quiz", script="quiz.js", mount="mhaQuiz.mount",
                         styles=["quiz.css"], element_id=element_id,
                         needs=f"This question needs JavaScript; in a notebook, answer it with "
                               f"{self.question.name}(...).")

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return f"QuizView({self.question.kind}: {self.question.name})"


def quiz(check: Callable[..., object] | Question) -> QuizView:
    """The question a chapter's check function grades, drawn in the page.

    Parameters
    ----------
    check : callable or Question
        A check made with :func:`mha.checks.questions.check_function` (it carries ``.question``), or a
        question.

    Returns
    -------
    QuizView
        Displayed as the cell's value.

    Examples
    --------
    >>> from mha.checks.questions import Choice, Option
    >>> view = quiz(Choice("check_demo", "2 + 2?", [Option("4", explains="count them."),
    ...                                              Option("5", hint="one too many.")]))
    >>> view
    QuizView(choice: check_demo)
    >>> view.payload["options"][1]
    {'text': '5', 'right': False, 'hint': 'one too many.'}
    """
    question = check if isinstance(check, Question) else getattr(check, "question", None)
    if not isinstance(question, Question):
        raise TypeError("quiz() takes a check function that asks a question (made with "
                        f"mha.checks.questions.check_function) or a Question, got {type(check).__name__}")
    return QuizView(question)
