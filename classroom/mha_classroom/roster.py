"""The class list is the truth: who may hand in, under which id, and which copy each id was given.

A class list (``--students``) holds one id a line. Ids may be in any script (``José``, ``李雷``,
``मनोज``): letters, marks and digits of Unicode, and ``_ . @ -``, first a letter or digit, at most 100
characters, read in Unicode's NFC form. Ids that differ only in case (``Ann`` and ``ann``) are refused:
macOS and Windows would give them one file, and a submission named in other capitals could pass for
either.

With a class list, a submission is graded only when its name (the file's without ``.ipynb``, or the
folder's) is an id of the list, exactly, after NFC (:func:`match`). Every other entry gets a line in
the summary and is not graded: a name that differs from an id only in case, a name that is on no
list, and every submission of an id that has several. Each id names its files as it is (it is safe
by construction: :func:`file_stem`).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Roster", "check_student", "file_stem", "match", "read_roster", "safe_id"]

MAX_ID_CHARS = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_ID_PUNCTUATION = frozenset("_.@-")


def _id_problem(student: str) -> str:
    """Why ``student`` is not a valid id (``""`` if it is one)."""
    if not 0 < len(student) <= MAX_ID_CHARS:
        return f"an id has 1 to {MAX_ID_CHARS} characters"
    if not student[0].isalnum():
        return "an id starts with a letter or a digit"
    for char in student:
        if not (char.isalnum() or char in _ID_PUNCTUATION
                or unicodedata.category(char).startswith("M")):
            return f"{char!r} (U+{ord(char):04X}) is not a letter, digit or one of _ . @ -"
    return ""


def check_student(student: str) -> str:
    """``student`` in NFC form, checked as an id (ValueError naming the problem otherwise).

    Examples
    --------
    >>> check_student("li\\u0301")  # a combining accent, as typed on some systems
    'lí'
    >>> check_student("李雷"), check_student("ann.b@uni-x.org")
    ('李雷', 'ann.b@uni-x.org')
    """
    normal = unicodedata.normalize("NFC", student)
    problem = _id_problem(normal)
    if problem:
        raise ValueError(f"student id {student!r}: {problem}")
    return normal


def safe_id(name: str) -> str:
    """A file-name safe id: letters, digits, ``_ . -``; no leading dot or dash; at most 64 chars.

    Examples
    --------
    >>> safe_id("=cmd|' /C calc'!A0")
    'cmd_C_calc_A0'
    >>> safe_id("../../etc")
    'etc'
    >>> safe_id("José Núñez")  # accents dropped, so the id still reads as the name
    'Jose_Nunez'
    """
    ascii_text = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    text = _UNSAFE.sub("_", ascii_text).strip("._-")[:64].strip("._-")
    return text or "student"


def file_stem(student: str) -> str:
    """The name a student's files take: the id itself (ids are checked to be safe), or, for a
    name that is no valid id, its letters and a hash (two names never share it).

    Examples
    --------
    >>> file_stem("李雷"), file_stem("../etc")[:4], len(file_stem("../etc"))
    ('李雷', 'etc-', 12)
    """
    if not _id_problem(student) and unicodedata.is_normalized("NFC", student):
        return student
    digest = hashlib.sha256(student.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe_id(student)}-{digest}"


@dataclass(frozen=True)
class Roster:
    """A class list: its file and its ids, in the file's order."""

    path: Path
    ids: tuple[str, ...]

    def __contains__(self, student: object) -> bool:
        return student in self.ids

    def by_casefold(self) -> dict[str, str]:
        return {student.casefold(): student for student in self.ids}


def read_roster(path: Path) -> Roster:
    """The class list in ``path``: one id a line; blank lines and ``#`` comments skipped.

    Raises ValueError naming the file, the line and the fix for a missing file, an invalid id, an
    id listed twice or two ids that differ only in case.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file; --students expects the class list, one student id "
                         "a line (the ids the submissions are named after)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: the class list cannot be read ({error}); save it as UTF-8 text, "
                         "one student id a line") from None
    ids: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        try:
            ids.append(check_student(entry))
        except ValueError as error:
            raise ValueError(f"{path}, line {number}: {error}; fix that line") from None
    if not ids:
        raise ValueError(f"{path}: no student ids; write one id a line")
    twice = sorted({s for s in ids if ids.count(s) > 1})
    if twice:
        raise ValueError(f"{path}: student ids listed twice: {', '.join(twice)}; keep one line each")
    folded: dict[str, list[str]] = {}
    for student in ids:
        folded.setdefault(student.casefold(), []).append(student)
    clashes = [" and ".join(group) for group in folded.values() if len(group) > 1]
    if clashes:
        raise ValueError(f"{path}: ids that differ only in case: {'; '.join(clashes)}. macOS and "
                         "Windows would give them one file, and a submission named in other capitals "
                         "could pass for either: give these students ids that differ in more than case")
    return Roster(path, tuple(ids))


def match(names: list[str], roster: Roster) -> tuple[dict[int, str], dict[int, str]]:
    """Which of ``names`` (submission names, NFC) are graded, as which id, and why the others are not.

    Returns ``(graded, refused)``: index of a name -> its id, and index -> the reason it is not
    graded.
    """
    graded: dict[int, str] = {}
    refused: dict[int, str] = {}
    folded = roster.by_casefold()
    claims: dict[str, list[int]] = {}
    for index, name in enumerate(names):
        if name in roster:
            claims.setdefault(name, []).append(index)
        elif name.casefold() in folded:
            refused[index] = (f"named {name!r}, which differs from the class list's "
                              f"{folded[name.casefold()]!r} only in case; it is not graded, so that no "
                              "submission passes for another student's: rename it to the id exactly")
        else:
            refused[index] = (f"the class list ({roster.path.name}) has no id {name!r}: add the student "
                              "to the list, or rename the submission to the student's id")
    for student, indices in claims.items():
        if len(indices) == 1:
            graded[indices[0]] = student
            continue
        for index in indices:
            refused[index] = (f"one of {len(indices)} submissions for {student!r} (a file and a folder, "
                              "or names in other forms of the same letters): keep one and grade again")
    return graded, refused
