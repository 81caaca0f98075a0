"""Grade a folder as the command line does: each student's files written as soon as they are done,
so that a crash or a kill loses nothing, and a second run resumes.

For every finished student :func:`grade_batch` writes ``feedback/<id>.md`` and ``.html``, a record in
``<out>/.progress/<id>.json`` and the CSVs and the summary of everyone finished so far. The record
holds a fingerprint of what decided the result (the assignment's source, the submission's bytes and
those of the ``.py`` files next to it, the limits, the sandbox, the grader's version) and is signed
with a key kept outside the output folder (:mod:`mha_classroom.records`); a later run on the same
folder uses the record instead of grading again only when its signature, its fingerprint, the
assignment's questions and points, and its scores all check out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from pathlib import Path

import mha_classroom
from mha_classroom.grade import StudentResult, grade_folder
from mha_classroom.intake import Found, scan_submissions, sibling_modules
from mha_classroom.records import check_record, result_from_json, sign_record
from mha_classroom.release import write_atomically
from mha_classroom.reports import write_reports, write_student
from mha_classroom.roster import Roster, file_stem
from mha_classroom.sandbox import Limits, Sandbox
from mha_classroom.source import Assignment
from mha_classroom.submission import InvalidSubmission, read_bytes

__all__ = ["Batch", "grade_batch", "fingerprint", "load_result"]

PROGRESS = ".progress"


def fingerprint(assignment: Assignment, found: Found, limits: Limits, sandbox: Sandbox) -> str:
    """A hash of everything that decides ``found``'s result."""
    digest = hashlib.sha256()
    parts: list[str | bytes] = [mha_classroom.__version__, sandbox.kind, repr(limits), found.student,
                                found.original, found.problem, assignment.path.read_bytes(),
                                *(cell.source for cell in assignment.cells if cell.role == "given")]
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode("utf-8", "backslashreplace"))
        digest.update(b"\x00")
    if found.path is not None:
        try:
            digest.update(read_bytes(found.path))
        except InvalidSubmission as error:
            digest.update(str(error).encode())
        if found.folder is not None:
            for name, data in sibling_modules(found.path, found.folder):
                digest.update(name.encode() + b"\x00" + data)
    return digest.hexdigest()


def load_result(path: Path) -> StudentResult | None:
    """The result a progress record holds, *unchecked* (for tests and tools that read their own
    records; a resumed run checks them: :func:`mha_classroom.records.check_record`)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        return result_from_json(record["result"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclasses.dataclass
class Batch:
    """What :func:`grade_batch` did: the results, the entries not graded, the students whose results
    came from a checked record, and those whose record failed its check (and why)."""

    results: list[StudentResult]
    skipped: list
    resumed: list[str]
    refused: dict[str, str]


def grade_batch(assignment: Assignment, submissions: Path, out: Path, limits: Limits,
                sandbox: Sandbox, jobs: int = 2, resume: bool = True, assignment_for=None,
                key: bytes | None = None, roster: Roster | None = None, extra=()) -> Batch:
    """Grade ``submissions`` into ``out``.

    ``assignment_for(student)``: each student's own copy (a variant), when there is one; ``key``:
    the key that signs the progress records (None: no record is written or read); ``roster``: the
    class list (only its ids are graded); ``extra``: summary lines of the caller.
    """
    found, skipped = scan_submissions(submissions, assignment.name, roster)
    progress = Path(out) / PROGRESS
    own = assignment_for or (lambda student: assignment)
    prints = {f.student: fingerprint(own(f.student), f, limits, sandbox) for f in found}
    budget = sandbox.budget.describe(limits.memory_mb, limits.nproc) \
        if sandbox.kind == "bubblewrap" else ""
    done: dict[str, StudentResult] = {}
    resumed: list[str] = []
    refused: dict[str, str] = {}
    lock = threading.RLock()

    def skip(item: Found) -> StudentResult | None:
        if not resume or key is None:
            return None
        try:
            text = (progress / f"{file_stem(item.student)}.json").read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        result, why = check_record(text, key, own(item.student), item.student, prints[item.student])
        if result is None:
            with lock:
                refused[item.student] = why
            return None
        resumed.append(item.student)
        finished(item, result)
        return result

    def finished(item: Found, result: StudentResult) -> None:
        with lock:
            if key is not None:  # the record keeps what was graded, not what this run found
                kept = dataclasses.replace(result, events=tuple(e for e in result.events
                                                                if e != "record_refused"))
                write_atomically(progress / f"{file_stem(item.student)}.json",
                                 sign_record(key, own(item.student), item.student,
                                             prints[item.student], kept))
            if item.student in refused:
                result = dataclasses.replace(result, events=tuple(sorted({*result.events,
                                                                          "record_refused"})))
            done[item.student] = result
            write_student(assignment, result, out)
            if len(done) < len(found):  # the files of everyone so far: a kill now loses nothing
                write_reports(assignment, list(done.values()), out, sandbox.kind, skipped=skipped,
                              budget=budget, progress=f"{len(done)} of {len(found)} graded so far",
                              students=False, extra=tuple(extra))

    results = grade_folder(assignment, submissions, limits, jobs=jobs, sandbox=sandbox,
                           on_result=finished, skip=skip, assignment_for=assignment_for,
                           found=found)
    results = [done.get(r.student, r) for r in results]
    write_reports(assignment, results, out, sandbox.kind, skipped=skipped, budget=budget,
                  students=False, extra=tuple(extra))
    return Batch(results, skipped, sorted(resumed), refused)
