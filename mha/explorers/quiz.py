"""A question answered in the page: the reader commits to a prediction before opening the solution.

:func:`quiz` draws a question of :mod:`mha.checks.questions` (multiple choice, a number, an order) as an
HTML output whose script (``static/quiz.js``) grades the answer in the reader's browser: no kernel, no
network, the same on the static website and in Jupyter. In a notebook the chapter's check function grades
the same question in Python, with the same hints.

**The key is sealed.** The page must grade offline, so it carries the key; but a reader who opens the
page source should not find it there (``"right": true`` beside an option), nor which options a hint
belongs to. :func:`sealed_payload` therefore hands the browser each piece of feedback XOR-ed with a key
stream derived from the answer that earns it:

- a choice: per option, one sealed verdict for "chosen" and one for "left out", keyed by the option's
  letter and that state, all padded to one length (the length of a blob says nothing);
- an order: a tag of the right order, the explanation keyed by that order, and each misconception's hint
  keyed by the pair of items it names (found by the tag of that pair);
- a number: its ranges sealed under the question's salt (a range cannot be keyed by one answer).

The salt (a digest of the question's name and prompt) makes the same answer seal differently in two
questions. This hides the key from reading, not from a program: any grader that runs in the page can be
run on every answer, which is fine for questions that are there to make a learner commit to a prediction.
The hash is FNV-1a with murmur3's finaliser, written out here and in ``quiz.js`` alike.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mha.checks.questions import LETTERS, Choice, Number, Order, Question
from mha.explorers.browser import view_html

__all__ = ["QuizView", "quiz", "sealed_payload", "unseal"]

_MASK = 0xFFFFFFFF


def _hash32(text: str, seed: int) -> int:
    """FNV-1a over the UTF-8 bytes of ``text`` (offset basis XOR ``seed``), then murmur3's finaliser."""
    h = 0x811C9DC5 ^ seed
    for byte in text.encode("utf8"):
        h = ((h ^ byte) * 0x01000193) & _MASK
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def _tag(key: str) -> str:
    """64 bits that stand for ``key`` (two seeds of :func:`_hash32`), as 16 hex digits."""
    return f"{_hash32(key, 1):08x}{_hash32(key, 2):08x}"


def _stream(key: str, n: int) -> bytes:
    """``n`` key-stream bytes: :func:`_hash32` of ``key|0``, ``key|1`` ..., four little-endian bytes each."""
    blocks = (_hash32(f"{key}|{j}", 3).to_bytes(4, "little") for j in range((n + 3) // 4))
    return b"".join(blocks)[:n]


def _seal(key: str, text: str, length: int = 0) -> str:
    """``text`` (space-padded to ``length`` bytes) XOR the key stream of ``key``, in base64."""
    data = text.encode("utf8").ljust(length, b" ")
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, _stream(key, len(data)), strict=True))).decode()


def unseal(key: str, sealed: str) -> str:
    """The text :func:`_seal` sealed under ``key`` (trailing padding removed); what ``quiz.js`` does.

    Under another key the bytes are noise: what is not UTF-8 in them reads as U+FFFD, as in the browser.

    Examples
    --------
    >>> unseal("k", _seal("k", "la clé", 16))
    'la clé'
    """
    data = base64.b64decode(sealed)
    plain = bytes(a ^ b for a, b in zip(data, _stream(key, len(data)), strict=True))
    return plain.decode("utf8", "replace").rstrip(" ")


def _salt(question: Question) -> str:
    return _tag(f"mha-quiz|{question.name}|{question.prompt}")


def _verdict(kind: str, message: str) -> str:
    return json.dumps({"v": kind, "m": message}, ensure_ascii=False, separators=(",", ":"))


def sealed_payload(question: Question) -> dict:
    """What the page carries: the question to draw, and its feedback sealed by the answers that earn it.

    Parameters
    ----------
    question : mha.checks.questions.Question

    Returns
    -------
    dict
        ``kind``, ``name``, ``prompt``, ``salt`` and what draws the question (``options`` text, ``items``,
        ``unit``), with the key and every hint sealed (see the module's docstring); ``quiz.js`` reads it.

    Examples
    --------
    >>> from mha.checks.questions import Option
    >>> q = Choice("check_demo", "2 + 2?", [Option("4", explains="count them."), Option("5", hint="no.")])
    >>> data = sealed_payload(q)
    >>> sorted(data["options"][0]), "count them" in json.dumps(data)
    (['chosen', 'left', 'text'], False)
    >>> unseal(f"{data['salt']}|a|chosen", data["options"][0]["chosen"])
    '{"v":"right","m":"count them."}'
    """
    salt = _salt(question)
    out: dict[str, Any] = {"kind": question.kind, "name": question.name, "prompt": question.prompt,
                           "salt": salt}
    if isinstance(question, Choice):
        blobs = []
        for option in question.options:
            chosen = (_verdict("right", option.explains or "") if option.right
                      else _verdict("wrong", option.hint or ""))
            # left out: a right option is missed; a wrong one is fine (its hint only pads the blob)
            left = _verdict("missing" if option.right else "fine", option.hint or "")
            blobs.append((option.text, chosen, left if question.several else ""))
        width = max(len(text.encode("utf8")) for _, *pair in blobs for text in pair)
        width += -width % 16
        out["several"] = question.several
        out["options"] = [{"text": text, "chosen": _seal(f"{salt}|{letter}|chosen", chosen, width),
                           "left": _seal(f"{salt}|{letter}|left", left, width) if left else ""}
                          for letter, (text, chosen, left) in zip(LETTERS, blobs, strict=False)]
    elif isinstance(question, Number):
        key = json.dumps({"answer": [question.answer.low, question.answer.high],
                          "wrong": [[r.low, r.high, r.hint] for r in question.wrong],
                          "otherwise": question.otherwise, "explanation": question.explanation},
                         ensure_ascii=False)
        out.update(unit=question.unit, sealed=_seal(f"{salt}|number", key))
    elif isinstance(question, Order):
        out.update(items=list(question.items), solved=_tag(f"{salt}|order|{question.answer}"),
                   explanation=_seal(f"{salt}|explain|{question.answer}", question.explanation),
                   mistakes=[[_tag(f"{salt}|before|{m.first}{m.then}"),
                              _seal(f"{salt}|hint|{m.first}{m.then}", m.hint)] for m in question.mistakes],
                   otherwise=question.otherwise)
    else:
        raise TypeError(f"no page form for a {type(question).__name__}")
    return out


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
        """What the browser reads: the question with its key sealed (:func:`sealed_payload`)."""
        return sealed_payload(self.question)

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
    >>> view.payload["options"][1]["text"], "right" in view.payload["options"][1]
    ('5', False)
    """
    question = check if isinstance(check, Question) else getattr(check, "question", None)
    if not isinstance(question, Question):
        raise TypeError("quiz() takes a check function that asks a question (made with "
                        f"mha.checks.questions.check_function) or a Question, got {type(check).__name__}")
    return QuizView(question)
