"""Questions a learner answers before opening a solution: multiple choice, a number, an order.

A predict-or-explain exercise asks the reader to commit to an answer first. Each such exercise gets one
:class:`Choice`, :class:`Number` or :class:`Order`, written in the module of its chapter's checks, and two
ways to answer it that grade the same way:

- in the page, with no kernel: :func:`mha.explorers.quiz` draws the question from :meth:`Question.payload`
  and the browser grades it (``mha/explorers/static/quiz.js`` is the line-by-line port of :meth:`grade`);
- in a notebook: the chapter's ``check_...`` function, made with :func:`check_function`, grades a letter,
  a number or a string of letters and fails with the hint of the misconception the answer reveals.

Every wrong answer gets a hint that names a misconception: a wrong option its own, a number in a known
wrong range that range's, an order the hint of the first pair it puts the wrong way round. A right answer
gets the short reason why. In a "select all" question, an answer whose every option is true but which leaves
a true one out is first told only that a true statement is missing (:data:`MISSING`), and which one on the
next such try: naming it at once would make the second try free.

Text is plain: `backticks` mark code (the page shows it as code), and maths is
written in Unicode (√, ·, ᵀ), so that no typesetting is needed.

>>> q = Choice("check_demo", "Where does softmax put most weight?", [
...     Option("on the largest score", explains="exp grows fastest there."),
...     Option("on the first score", hint="softmax does not look at positions, only at values.")])
>>> q.grade("b")
Feedback(correct=False, message='softmax does not look at positions, only at values.')
>>> q.grade("a").correct
True
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from mha.checks.machinery import CheckFailed, NotDone, learner_check, placeholder

__all__ = ["MISSING", "Before", "Choice", "Feedback", "Number", "Option", "Order", "Question", "Range",
           "check_function", "missing_message"]

LETTERS = "abcdefgh"
#: What a "select all" answer that leaves out ``n`` true options (and picks no false one) is told first;
#: ``mha/explorers/static/quiz.js`` words it the same.
MISSING = ("Everything you chose is true, but {count} true too: read the options you left out again "
           "(check once more to be told which).")


def missing_message(n: int) -> str:
    """:data:`MISSING` for ``n`` true options left out.

    >>> missing_message(1)[:48]
    'Everything you chose is true, but one more optio'
    """
    return MISSING.format(count="one more option is" if n == 1 else f"{n} more options are")


@dataclass(frozen=True)
class Feedback:
    """What a learner is told: whether the answer is right, and why (or which misconception it shows)."""

    correct: bool
    message: str
    #: True options the answer left out, when that (and no false pick) is why it is wrong; 0 otherwise.
    missing: int = field(default=0, repr=False, compare=False)


@dataclass(frozen=True)
class Option:
    """One option of a :class:`Choice`.

    Parameters
    ----------
    text : str
        What the option says.
    hint : str, optional
        For a wrong option: the misconception behind choosing it. For a right option of a question with
        several right options: what leaving it out misses. A right option of a one-answer question has none.
    explains : str, optional
        Only for right options: the reason it is right (the message a right answer gets).
    """

    text: str
    hint: str | None = None
    explains: str | None = None

    @property
    def right(self) -> bool:
        """A right option carries ``explains``; a wrong one a ``hint`` only."""
        return self.explains is not None


@dataclass(frozen=True)
class Range:
    """A half-open interval ``[low, high)`` of numbers, with what a number in it means."""

    low: float
    high: float
    hint: str = ""

    def __contains__(self, value: float) -> bool:
        return self.low <= value < self.high


class Question:
    """What every kind of question shares: the check's name, the prompt, the reason, grading, payload."""

    kind = ""

    def __init__(self, name: str, prompt: str, explanation: str = "") -> None:
        if not name.startswith("check_"):
            raise ValueError(f"a question is named after its check function (check_...), got {name!r}")
        self.name, self.prompt, self.explanation = name, prompt, explanation
        self.told_missing = False  # has check() told this kernel's learner that a true option is missing?

    def grade(self, answer: object, *, told_missing: bool = False) -> Feedback:
        """The feedback ``answer`` gets (a ValueError names what a well-formed answer looks like).

        ``told_missing``: whether the learner was already told, on an earlier try, that a true option is
        missing; only then does a "select all" answer that leaves one out get that option's own hint.
        """
        raise NotImplementedError

    def payload(self) -> dict:
        """The whole question as plain JSON, key included (the page seals it: :mod:`mha.explorers.quiz`)."""
        return {"kind": self.kind, "name": self.name, "prompt": self.prompt,
                "explanation": self.explanation, **self._payload()}

    def _payload(self) -> dict:
        raise NotImplementedError

    def check(self, answer: object, *, quiet: bool = False) -> None:
        """Print ``✔ <name> passed: <why>`` for a right answer; raise CheckFailed with the hint otherwise."""
        if placeholder(answer):
            raise NotDone(self.name)
        feedback = self.grade(answer, told_missing=self.told_missing)
        self.told_missing = self.told_missing or feedback.missing > 0
        if not feedback.correct:
            raise CheckFailed(f"{self.name}: not quite. {feedback.message}")
        if not quiet:
            print(f"✔ {self.name} passed: {feedback.message}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _letters(answer: object, n: int, name: str) -> str:
    """``answer`` as lower-case option letters: a string ("b", "ca") or a sequence of one-letter strings."""
    if isinstance(answer, str):
        letters = answer.replace(",", "").replace(" ", "").lower()
    elif isinstance(answer, Sequence | set | frozenset) and all(isinstance(a, str) for a in answer):
        letters = "".join(sorted(a.strip().lower() for a in answer) if isinstance(answer, set | frozenset)
                          else (a.strip().lower() for a in answer))
    else:
        raise ValueError(f"{name} takes option letters such as 'b' (or 'ac' for several), "
                         f"got {type(answer).__name__} {answer!r}")
    allowed = LETTERS[:n]
    unknown = sorted(set(letters) - set(allowed))
    if not letters or unknown:
        raise ValueError(f"{name}: the options are {', '.join(repr(c) for c in allowed)}; got {answer!r}")
    return letters


class Choice(Question):
    """Pick one option, or every right one (``several=True``: "select all that apply").

    Options are lettered a, b, c ... in the order given (the page shows them in that order too, so a
    letter means the same thing in the page and in a notebook).
    """

    kind = "choice"

    def __init__(self, name: str, prompt: str, options: Sequence[Option], *, several: bool = False) -> None:
        super().__init__(name, prompt)
        self.options, self.several = tuple(options), bool(several)
        right = [o for o in self.options if o.right]
        if not 2 <= len(self.options) <= len(LETTERS):
            raise ValueError(f"{name}: a choice needs 2 to {len(LETTERS)} options, got {len(self.options)}")
        if not right or (not several and len(right) != 1):
            raise ValueError(f"{name}: {'at least' if several else 'exactly'} one option must be right "
                             f"(have `explains`), got {len(right)}")
        missing = [o.text for o in self.options if (not o.right or several) and not o.hint]
        if missing:
            raise ValueError(f"{name}: every option a learner can get wrong needs a hint: {missing}")
        self.explanation = " ".join(o.explains or "" for o in right)  # right options explain

    def grade(self, answer: object, *, told_missing: bool = False) -> Feedback:
        letters = _letters(answer, len(self.options), self.name)
        if not self.several and len(letters) != 1:
            raise ValueError(f"{self.name}: choose one option, got {answer!r}")
        chosen = {LETTERS.index(c) for c in letters}
        for i, option in enumerate(self.options):  # a wrong choice first: it names a misconception
            if i in chosen and not option.right:
                return Feedback(False, option.hint or "")
        missed = [o for i, o in enumerate(self.options) if i not in chosen and o.right]
        if missed:  # then the right options left out: that there are some, and on the next try which
            message = (missed[0].hint or "") if told_missing else missing_message(len(missed))
            return Feedback(False, message, missing=len(missed))
        return Feedback(True, self.explanation)

    def _payload(self) -> dict:
        return {"several": self.several,
                "options": [{"text": o.text, "right": o.right, "hint": o.hint or ""} for o in self.options]}


class Number(Question):
    """Type a number; right when it falls in ``answer``, with a hint for each known wrong range."""

    kind = "number"

    def __init__(self, name: str, prompt: str, answer: Range, *, unit: str = "",
                 wrong: Sequence[Range] = (), otherwise: str, explanation: str) -> None:
        super().__init__(name, prompt, explanation)
        if not (math.isfinite(answer.low) and math.isfinite(answer.high) and answer.low < answer.high):
            raise ValueError(f"{name}: the right range must be finite and non-empty, got {answer}")
        self.answer, self.unit, self.wrong, self.otherwise = answer, unit, tuple(wrong), otherwise
        if any(r.high > answer.low and r.low < answer.high for r in self.wrong):
            raise ValueError(f"{name}: a wrong range overlaps the right one {answer}")

    def grade(self, answer: object, *, told_missing: bool = False) -> Feedback:
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real) or not math.isfinite(answer):
            raise ValueError(f"{self.name} takes a finite number{' in ' + self.unit if self.unit else ''}, "
                             f"got {type(answer).__name__} {answer!r}")
        value = float(answer)
        if value in self.answer:
            return Feedback(True, self.explanation)
        hint = next((r.hint for r in self.wrong if value in r), self.otherwise)
        return Feedback(False, hint)

    def _payload(self) -> dict:
        return {"unit": self.unit, "answer": [self.answer.low, self.answer.high],
                "wrong": [[r.low, r.high, r.hint] for r in self.wrong], "otherwise": self.otherwise}


@dataclass(frozen=True)
class Before:
    """A misconception in an ordering: putting item ``first`` before item ``then`` (letters)."""

    first: str
    then: str
    hint: str


class Order(Question):
    """Put items in order (first to last); a wrong order gets the hint of the first listed pair it swaps."""

    kind = "order"

    def __init__(self, name: str, prompt: str, items: Sequence[str], answer: str, *,
                 mistakes: Sequence[Before], otherwise: str, explanation: str) -> None:
        super().__init__(name, prompt, explanation)
        self.items, self.answer = tuple(items), answer
        self.mistakes, self.otherwise = tuple(mistakes), otherwise
        if sorted(answer) != list(LETTERS[:len(self.items)]):
            raise ValueError(f"{name}: the answer must order every item once, got {answer!r}")
        if answer == LETTERS[:len(self.items)]:
            raise ValueError(f"{name}: the page lists the items as given; list them out of order")
        wrong_way = [m for m in self.mistakes if answer.index(m.first) < answer.index(m.then)]
        if wrong_way:
            raise ValueError(f"{name}: the right order itself makes the mistake {wrong_way[0]}")

    def grade(self, answer: object, *, told_missing: bool = False) -> Feedback:
        letters = _letters(answer, len(self.items), self.name)
        if sorted(letters) != sorted(self.answer):
            raise ValueError(f"{self.name}: order every item once, e.g. {LETTERS[:len(self.items)]!r}; "
                             f"got {answer!r}")
        if letters == self.answer:
            return Feedback(True, self.explanation)
        hint = next((m.hint for m in self.mistakes if letters.index(m.first) < letters.index(m.then)),
                    self.otherwise)
        return Feedback(False, hint)

    def _payload(self) -> dict:
        return {"items": list(self.items), "answer": self.answer,
                "mistakes": [[m.first, m.then, m.hint] for m in self.mistakes], "otherwise": self.otherwise}


def check_function(question: Question, module: str, doc: str) -> Callable:
    """The chapter's ``check_...`` function that grades ``question`` (and carries it as ``.question``).

    A chapter's check module writes ``check_x = check_function(X, __name__, "Grade your answer to ...")``:
    the function is named after the question, belongs to that module (where a learner looks for it), prints
    "not done yet" for an untouched ``answer = ...`` (:func:`mha.checks.machinery.learner_check`), and carries
    the attribute :func:`mha.explorers.quiz` reads to draw the same question in the page.

    Examples
    --------
    >>> q = Choice("check_demo", "1 + 1?", [Option("2", explains="one and one."),
    ...                                     Option("11", hint="not text.")])
    >>> check_demo = check_function(q, "mha.checks.demo", "Grade 1 + 1.")
    >>> check_demo("a")
    ✔ check_demo passed: one and one.
    >>> check_demo(...)
    … check_demo: not done yet: write your answer where it says # YOUR CODE HERE (replacing the `...` or the \
`raise NotImplementedError`), then run this cell again.
    >>> check_demo.__module__, check_demo.question
    ('mha.checks.demo', Choice('check_demo'))
    """
    if not isinstance(question, Question):
        raise TypeError(f"check_function() takes a Question, got {type(question).__name__}")

    def check(answer: object, *, quiet: bool = False) -> None:
        question.check(answer, quiet=quiet)

    check.__name__ = check.__qualname__ = question.name
    check.__module__, check.__doc__ = module, doc
    checked = learner_check(check)
    checked.question = question  # type: ignore[attr-defined]  # the page's quiz reads it
    return checked
