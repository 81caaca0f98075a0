"""The teacher's secret seed: made strong, kept out of what students receive, weak ones refused.

Each student's copy is drawn from ``sha256(seed, assignment, student)``
(:func:`mha_classroom.variants.values_for`). A student knows their own copy's numbers and their own
id, so they can try candidate seeds until one gives their copy, and then compute every classmate's:
the seed must be beyond search. ``release`` writes a new seed itself when ``--seed-file`` names a
file that does not exist yet (:func:`new_seed_file`: ``secrets.token_hex(32)``, 256 bits, the file
readable by its owner only), and refuses a seed the grader estimates under 128 bits
(:func:`estimate_bits`) unless the teacher forces it. Nothing that reaches a student depends on
the seed other than the drawn numbers themselves: not its length, its hash or where it is kept
(the seed file may not lie inside the folder handed out).

The estimate is deliberately rough and errs low. A seed that repeats a shorter part counts as
that part. A seed of hexadecimal digits and letters (``secrets.token_hex``) counts 4 bits a
character. Otherwise it is read as runs of letters, runs of digits and single other characters,
each distinct run counted once (a repeated run adds nothing):

* a run of letters in one case, or capitalised like a word, counts as one word of a list of 8,192
  (13 bits) at most, and all such words together count 64 bits at most: a passphrase or a sentence
  is guessable however long (``correct horse battery staple``);
* a run of letters whose case changes inside (``xKqP``) counts 5.7 bits a letter (random letters);
* a run of letters of another script counts 6.5 bits a letter, 13 bits at most per two letters,
  in the same 64-bit allowance for words;
* a run of digits counts 3.3 bits a digit, but a run of one repeated digit or of consecutive digits
  (``0000``, ``1234``, ``9876``) counts as one word (13 bits);
* any other character counts 5 bits (one of about 32 symbols), a space 1 bit.

So ``correct horse battery staple`` counts about 53 bits and is refused, and a 64-character
``secrets.token_hex(32)`` counts 256 bits.
"""

from __future__ import annotations

import math
import re
import secrets
from pathlib import Path

from mha_classroom.paths import lies_in, write_private

__all__ = ["MIN_BITS", "check_seed", "estimate_bits", "new_seed_file", "read_seed"]

MIN_BITS = 128
MAX_CHARS = 4_096
WORD_BITS = 13.0  # one word of a list of 8,192
WORDS_BITS = 64.0  # all the words of a passphrase together
_RUNS = re.compile(r"[^\W\d_]+|\d+|.", re.DOTALL)
_HEX = re.compile(r"(?=.*[0-9])(?=.*[a-fA-F])[0-9a-fA-F]+")


def _period(text: str) -> str:
    """The shortest part that ``text`` repeats (``text`` itself if it repeats none)."""
    for size in range(1, len(text) // 2 + 1):
        if all(text[i] == text[i - size] for i in range(size, len(text))):
            return text[:size]
    return text


def _letters_bits(run: str) -> tuple[float, bool]:
    """(bits, counted as a word)."""
    if not run.isascii():
        return min(6.5 * len(run), WORD_BITS * math.ceil(len(run) / 2)), True
    if run.islower() or run.isupper() or (run[0].isupper() and run[1:].islower()):
        return min(len(run) * math.log2(26), WORD_BITS), True
    return len(run) * math.log2(52), False


def _digits_bits(run: str) -> float:
    steps = {(int(b) - int(a)) % 10 for a, b in zip(run, run[1:], strict=False)}
    if len(run) > 2 and (steps <= {0, 1} or steps <= {0, 9}):
        return WORD_BITS
    return len(run) * math.log2(10)


def estimate_bits(seed: str) -> float:
    """A rough, low estimate of how many bits a search for ``seed`` must cover (rules above).

    Examples
    --------
    >>> estimate_bits("0123456789abcdef" * 4), estimate_bits("9a" * 40)
    (64.0, 8.0)
    >>> round(estimate_bits("correct horse battery staple"))
    53
    >>> estimate_bits("password") == estimate_bits("passwordpassword") == 13
    True
    """
    seed = _period(seed.strip())
    if _HEX.fullmatch(seed):
        return 4.0 * len(seed)
    bits, words = 0.0, 0.0
    for run in dict.fromkeys(_RUNS.findall(seed)):  # each distinct run once
        if run.isdigit():
            bits += _digits_bits(_period(run))
        elif run[0].isalpha():
            value, word = _letters_bits(_period(run))
            if word:
                words += value
            else:
                bits += value
        else:
            bits += 1.0 if run == " " else 5.0
    return bits + min(words, WORDS_BITS)


def check_seed(seed: str, source: str = "the seed", force: bool = False) -> str:
    """``seed`` stripped; ValueError naming ``source``, the estimate and the fix if it is weak."""
    seed = seed.strip()
    if not seed:
        raise ValueError(f"{source} is empty; delete it and let `mha-classroom release --seed-file` "
                         "write a strong one")
    if len(seed) > MAX_CHARS:
        raise ValueError(f"{source} holds {len(seed):,} characters, more than the {MAX_CHARS:,} of any "
                         "seed: is this the right file? A seed file holds one line")
    bits = estimate_bits(seed)
    if bits < MIN_BITS and not force:
        raise ValueError(
            f"{source} is too weak to keep the copies apart: about {bits:.0f} bits by the grader's "
            f"estimate (words count 13 bits at most), under the {MIN_BITS} needed. From their own "
            "copy a student could search for it and compute a classmate's. Fix: remove the file and "
            "run `mha-classroom release ... --seed-file` again, which writes a new 256-bit seed "
            "(secrets.token_hex(32)); or pass --force-weak-seed for copies already handed out")
    return seed


def read_seed(path: Path, force: bool = False, outside: tuple[Path, ...] = ()) -> str:
    """The seed in ``path``, checked (:func:`check_seed`); ``outside``: folders it must not be in."""
    path = Path(path)
    for folder in outside:
        if lies_in(path, folder):
            raise ValueError(f"{path}: the seed file lies inside {folder}, which students receive or "
                             "can read; move it to a folder of your own (e.g. ~/mha-seeds/) and "
                             "pass that path to --seed-file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such seed file; `mha-classroom release --seed-file {path}` "
                         "writes a new one, and grading needs the one the copies were made "
                         "with") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: the seed file cannot be read ({error})") from None
    return check_seed(text, f"{path}: the seed", force)


def new_seed_file(path: Path, outside: tuple[Path, ...] = ()) -> str:
    """Write a new 256-bit seed to ``path`` (which must not exist), readable by its owner only."""
    path = Path(path)
    for folder in outside:
        if lies_in(path, folder):
            raise ValueError(f"{path}: the seed file would lie inside {folder}, which students "
                             "receive; choose a path outside it (e.g. ~/mha-seeds/class.seed)")
    seed = secrets.token_hex(32)
    write_private(path, seed + "\n")
    return seed
