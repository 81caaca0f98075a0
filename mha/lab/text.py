"""Character-level text for the tiny GPT: the course's own prose, a vocabulary, batches, a bigram baseline.

The training text is the prose of the course's chapters with the code, maths and markup removed
(:func:`extract_prose`). A frozen copy ships with the package (``mha/lab/data/course_prose.txt``) so that
the numbers a chapter quotes do not move when a chapter is edited; :func:`extract_prose` rebuilds it.
"""

from __future__ import annotations

import re
from importlib import resources

import numpy as np

from mha.lab.tasks import Batch
from mha.typing import ArrayLike, IntArray, Seed
from mha.validation import as_generator, check_positive_int

__all__ = ["extract_prose", "course_text", "CharVocabulary", "text_batch", "text_windows",
           "bigram_loss", "unigram_loss"]

_ASCII = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": "-", "\u2013": "-",
          "\u2026": "...", "\u00a0": " ", "\u2212": "-"}
_FENCE = re.compile(r"^(`{3,}|:{3,})")


def _drop_blocks(lines):
    """Lines outside front matter, fenced code/directive blocks and $$ maths."""
    fence, in_math, kept = None, False, []
    start = 0
    if lines and lines[0].strip() == "---":  # front matter
        start = lines.index("---", 1) + 1 if "---" in lines[1:] else len(lines)
    for line in lines[start:]:
        stripped = line.strip()
        if fence is not None:
            if stripped == fence:
                fence = None
            continue
        if stripped.startswith("$$"):
            if stripped == "$$" or not stripped.endswith("$$"):  # "$$ x $$" on one line opens nothing
                in_math = not in_math
            continue
        if in_math:
            continue
        match = _FENCE.match(stripped)
        if match:
            fence = match.group(1)
            continue
        kept.append(stripped)
    return kept


def extract_prose(markdown: str) -> str:
    """The running prose of a MyST chapter: no front matter, code, maths, tables, links or emphasis marks.

    Paragraphs come out one per line, in plain ASCII.

    Examples
    --------
    >>> md = ("# Title\\n\\nSome *text* with `code` and $x^2$.\\n\\n"
    ...       "```python\\nprint(1)\\n```\\nA [link](u.md).")
    >>> print(extract_prose(md))
    Title
    Some text with code and .
    A link.
    """
    paragraphs: list[str] = []
    current: list[str] = []
    for line in _drop_blocks(markdown.splitlines()):
        if not line or line.startswith(("|", "<", "+++", "(")) and line.endswith((")=", "|", ">", "+++")):
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(line.lstrip("#>-*0123456789. ").strip() if re.match(r"^(#+|>|[-*]|\d+\.)\s", line)
                       else line)
    if current:
        paragraphs.append(" ".join(current))
    text = "\n".join(paragraphs)
    text = re.sub(r"\$[^$\n]*\$", "", text)  # inline maths
    text = re.sub(r"\{[a-z-]+\}`([^`]*)`", r"\1", text)  # {term}`x`, {ref}`x`
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images
    text = re.sub(r"[`*_]", "", text)
    for fancy, plain in _ASCII.items():
        text = text.replace(fancy, plain)
    text = text.encode("ascii", "ignore").decode()
    return "\n".join(re.sub(r"[ \t]+", " ", p).strip() for p in text.splitlines() if p.strip())


def course_text() -> str:
    """The frozen copy of the course's prose that ships with the package (about 110 000 characters)."""
    return resources.files("mha.lab").joinpath("data/course_prose.txt").read_text(encoding="ascii")


class CharVocabulary:
    """One id per distinct character of a text, in sorted order.

    Examples
    --------
    >>> vocab = CharVocabulary("hello")
    >>> vocab.size, vocab.encode("hole").tolist(), vocab.decode([3, 2, 1])
    (4, [1, 3, 2, 0], 'olh')
    """

    def __init__(self, text: str) -> None:
        self.chars = "".join(sorted(set(text)))
        if not self.chars:
            raise ValueError("the text is empty: there are no characters to build a vocabulary from")
        self._index = {c: i for i, c in enumerate(self.chars)}
        self.size = len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        unknown = sorted(set(text) - set(self._index))
        if unknown:
            raise ValueError(f"characters {unknown} are not in the vocabulary")
        return np.array([self._index[c] for c in text], dtype=np.int64)

    def decode(self, ids: ArrayLike) -> str:
        return "".join(self.chars[i] for i in np.asarray(ids).reshape(-1))

    def __repr__(self) -> str:
        return f"CharVocabulary(size={self.size})"


def _batch(tokens, targets) -> Batch:
    zeros = np.zeros(len(tokens), dtype=np.int64)
    return Batch(tokens, targets, np.ones(tokens.shape, dtype=bool), zeros, zeros)


def text_batch(ids: ArrayLike, batch: int, seq_len: int, rng: Seed) -> Batch:
    """``batch`` random windows of ``seq_len`` characters from ``ids``; each target is the next character.

    Examples
    --------
    >>> b = text_batch(np.arange(100), 2, 5, rng=0)
    >>> b.tokens.shape, bool(np.all(b.targets == b.tokens + 1))
    ((2, 5), True)
    """
    ids = np.asarray(ids)
    batch, seq_len = check_positive_int(batch, "batch"), check_positive_int(seq_len, "seq_len")
    if ids.size <= seq_len:
        raise ValueError(f"the text has {ids.size} characters; windows of {seq_len} need more")
    starts = as_generator(rng).integers(0, ids.size - seq_len, size=batch)  # (batch,)
    window = starts[:, None] + np.arange(seq_len)  # (batch, seq_len)
    return _batch(ids[window], ids[window + 1])


def text_windows(ids: ArrayLike, seq_len: int) -> Batch:
    """``ids`` cut into consecutive non-overlapping windows (the held-out set; a short tail is dropped).

    Examples
    --------
    >>> text_windows(np.arange(11), 5).tokens.tolist()
    [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    """
    ids = np.asarray(ids)
    n = (ids.size - 1) // check_positive_int(seq_len, "seq_len")
    if n == 0:
        raise ValueError(f"the text has {ids.size} characters; one window of {seq_len} needs {seq_len + 1}")
    tokens = ids[:n * seq_len].reshape(n, seq_len)  # (n_windows, seq_len)
    return _batch(tokens, ids[1:n * seq_len + 1].reshape(n, seq_len))


def bigram_loss(train_ids: IntArray, tokens: ArrayLike, targets: ArrayLike, vocab_size: int, *,
                smoothing: float = 0.1) -> float:
    """Held-out loss (nats per character) of next-character counts from ``train_ids``, add-``smoothing``.

    The strongest model that looks at one character only: what any longer context must beat.

    Examples
    --------
    >>> ids = np.array([0, 1, 0, 1, 0, 1])
    >>> round(bigram_loss(ids, np.array([0, 1]), np.array([1, 0]), 2, smoothing=1e-9), 6)
    0.0
    """
    counts = np.full((vocab_size, vocab_size), float(smoothing))
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1.0)
    log_probs = np.log(counts / counts.sum(axis=1, keepdims=True))  # (vocab_size, vocab_size)
    return float(-log_probs[np.asarray(tokens), np.asarray(targets)].mean())


def unigram_loss(train_ids: ArrayLike, targets: ArrayLike, vocab_size: int) -> float:
    """Held-out loss of the characters' frequencies alone (no context at all)."""
    counts = np.bincount(train_ids, minlength=vocab_size) + 0.1
    return float(-np.log(counts / counts.sum())[np.asarray(targets)].mean())
