"""The submissions folder: one entry per student, and for every other entry, why it is not graded.

A submission folder holds ``<student>.ipynb`` files or ``<student>/`` folders (searched a few
levels deep for ``<assignment>.ipynb``, as nbgrader's ``submitted/<student>/<assignment>/``
layout has it). The extension may be in capitals (``.IPYNB``), or carry the ``.txt`` or ``.json`` a
browser adds when it saves a notebook. Every other entry (a ``.zip``, a file or folder whose name
starts with a dot, ...) is listed with the reason it was not graded. Symbolic links are never
followed. Names are read in Unicode's NFC form, so that ``José`` typed on two systems is one name;
student ids are made file-name safe and unique. The ``.py`` files next to a notebook in a student's
folder are the student's own modules (:func:`sibling_modules`).
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from mha_classroom.roster import Roster, match, safe_id
from mha_classroom.submission import InvalidSubmission, read_bytes

__all__ = ["Found", "Skipped", "find_submissions", "notebook_stem", "safe_id", "scan_submissions",
           "sibling_modules", "unique_ids"]

MAX_ENTRIES = 10_000  # entries in the submissions folder
MAX_WALK = 500  # entries looked at inside one student's folder
MAX_LEVELS = 4
MAX_MODULES, MAX_MODULE_BYTES = 50, 2**20  # .py files handed in next to a notebook
#: Names a notebook may be saved under (compared in lower case): browsers add .txt or .json.
NOTEBOOK_SUFFIXES = (".ipynb", ".ipynb.txt", ".ipynb.json")
_NOT_A_NOTEBOOK = {
    (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar"):
        "an archive; unpack it into a folder named after the student and grade again",
    (".py",): "a Python file, not a notebook; a student's .py files go in their folder, next to "
              "the notebook",
    (".html", ".pdf", ".md", ".txt", ".json"): "not a notebook (an export of one?); the grader "
                                               "needs the .ipynb file",
}


@dataclass(frozen=True)
class Found:
    """One student's submission: a unique safe id, the original name (NFC), the notebook or a
    reason, and the student's folder when the submission is one."""

    student: str
    original: str
    path: Path | None
    problem: str = ""
    folder: Path | None = None


@dataclass(frozen=True)
class Skipped:
    """An entry of the submissions folder that is not a student's submission, and why."""

    name: str
    reason: str


def notebook_stem(name: str) -> str | None:
    """The student part of a notebook's file name, or None if it is not named as a notebook.

    Examples
    --------
    >>> notebook_stem("Ana.IPYNB"), notebook_stem("bo.ipynb.txt"), notebook_stem("c.zip")
    ('Ana', 'bo', None)
    """
    lower = name.lower()
    for suffix in NOTEBOOK_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return None


def _why_not(name: str) -> str:
    lower = name.lower()
    for suffixes, reason in _NOT_A_NOTEBOOK.items():
        if lower.endswith(suffixes):
            return reason
    return "not a notebook (no .ipynb in its name)"


def unique_ids(names: list[str]) -> list[str]:
    """A unique safe id for each name, in the same order (case-insensitively unique).

    Examples
    --------
    A name that is already a safe id keeps it (the first of several that differ only in case), so
    that a student named ``bob-2`` is never given another student's suffixed id; the others get the
    first ``-2``, ``-3`` ... that no id takes.

    >>> unique_ids(["bob", "Bob", "bob", "b o b", "b_o_b"])
    ['bob', 'Bob-2', 'bob-3', 'b_o_b-2', 'b_o_b']
    >>> unique_ids(["Bob", "bob", "bob-2"])
    ['Bob', 'bob-3', 'bob-2']
    >>> [len(i) for i in unique_ids(["x" * 70, "x" * 80])]
    [64, 64]
    """
    bases = [safe_id(name) for name in names]
    ids: list[str | None] = [None] * len(names)
    taken: set[str] = set()
    for i, (name, base) in enumerate(zip(names, bases, strict=True)):  # safe names keep theirs
        if base == name and base.lower() not in taken:
            ids[i] = base
            taken.add(base.lower())
    for i, base in enumerate(bases):
        if ids[i] is not None:
            continue
        candidate, number = base, 1
        while candidate.lower() in taken:
            number += 1
            suffix = f"-{number}"
            candidate = base[:64 - len(suffix)] + suffix  # still at most 64: safe_id keeps it whole
        taken.add(candidate.lower())
        ids[i] = candidate
    return [given for given in ids if given is not None]  # every name has one by now


def _walk(folder: Path, wanted: str) -> tuple[list[Path], str]:
    """Regular ``.ipynb`` files under ``folder`` (no symlinks followed), bounded."""
    found, seen, queue = [], 0, [(folder, 0)]
    while queue:
        current, level = queue.pop(0)
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_WALK:
                return [], f"the folder holds more than {MAX_WALK} entries"
            if entry.name.startswith(".") or entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False) and level < MAX_LEVELS:
                queue.append((Path(entry.path), level + 1))
            elif entry.name.lower().endswith(".ipynb") and entry.is_file(follow_symlinks=False):
                found.append(Path(entry.path))
    named = [p for p in found if notebook_stem(p.name) == wanted]
    chosen = named or found
    if len(chosen) == 1:
        return chosen, ""
    if not chosen:
        return [], "no notebook in the folder"
    return [], f"{len(chosen)} notebooks in the folder, expected {wanted}.ipynb"


def scan_submissions(folder: Path, assignment_name: str,
                     roster: Roster | None = None) -> tuple[list[Found], list[Skipped]]:
    """Every ``<student>.ipynb`` or ``<student>/`` in ``folder``, in id order, and every other
    entry with the reason it is not graded.

    With a class list (``roster``), a submission is graded only under an id of the list that its
    name matches exactly (:func:`mha_classroom.roster.match`); without one, ids are made from the
    names (file-name safe, unique)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: expected a folder of submissions, found none")
    entries = []
    with os.scandir(folder) as scan:
        for count, entry in enumerate(scan):
            if count >= MAX_ENTRIES:
                raise ValueError(f"{folder}: more than {MAX_ENTRIES} entries")
            entries.append(entry)
    items: list[tuple[str, Path | None, str, Path | None]] = []
    entry_names: list[str] = []  # what the teacher sees in the folder, for the summary
    skipped = []
    for entry in sorted(entries, key=lambda e: e.name):
        name = unicodedata.normalize("NFC", entry.name)
        stem = notebook_stem(name)
        path = Path(entry.path)
        if name.startswith("."):
            skipped.append(Skipped(name, "its name starts with a dot (hidden); rename it to grade it"))
        elif entry.is_symlink():
            items.append((stem or name, None, "the submission is a symbolic link (not accepted)", None))
            entry_names.append(name)
        elif entry.is_dir(follow_symlinks=False):
            chosen, problem = _walk(path, assignment_name)
            items.append((name, chosen[0] if chosen else None, problem, path))
            entry_names.append(name + "/")
        elif stem is not None:
            regular = entry.is_file(follow_symlinks=False)
            items.append((stem, path if regular else None,
                          "" if regular else "the submission is not a regular file", None))
            entry_names.append(name)
        else:
            skipped.append(Skipped(name, _why_not(name)))
    names = [name for name, _, _, _ in items]
    if roster is None:
        ids = dict(enumerate(unique_ids(names)))
    else:
        ids, refused = match(names, roster)
        skipped += [Skipped(entry_names[index], reason) for index, reason in refused.items()]
    found = [Found(ids[index], name, path, problem, student_folder)
             for index, (name, path, problem, student_folder) in enumerate(items) if index in ids]
    return sorted(found, key=lambda f: f.student), sorted(skipped, key=lambda s: s.name)


def find_submissions(folder: Path, assignment_name: str, roster: Roster | None = None) -> list[Found]:
    """Every ``<student>.ipynb`` or ``<student>/`` in ``folder`` that is graded, in id order."""
    return scan_submissions(folder, assignment_name, roster)[0]


def sibling_modules(notebook: Path, folder: Path) -> list[tuple[str, bytes]]:
    """The ``.py`` files next to ``notebook`` in the student's ``folder``: (name, contents), regular
    files with a module's name only, never through a link, capped in number and size."""
    parent = notebook.parent
    if not (parent == folder or folder in parent.parents):
        return []
    modules = []
    try:
        entries = sorted(os.scandir(parent), key=lambda e: e.name)
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if not (name.endswith(".py") and name[:-3].isidentifier() and name.isascii()):
            continue
        if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            continue
        try:
            modules.append((name, read_bytes(Path(entry.path), MAX_MODULE_BYTES)))
        except InvalidSubmission:
            continue
        if len(modules) >= MAX_MODULES:
            break
    return modules
