"""Grade a folder as the command line does: each student's files written as soon as they are done,
so that a crash or a kill loses nothing, and a second run resumes.

For every finished student :func:`grade_batch` writes ``feedback/<id>.md`` and ``.html``, a record in
``<out>/.progress/<id>.json`` and the CSVs and the summary of everyone finished so far. The record
holds a fingerprint of what decided the result (the assignment's source, the submission's bytes and
those of the ``.py`` files next to it, the limits, the sandbox, the grader's version); a later run
on the same folder uses the record instead of grading again while the fingerprint matches.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from pathlib import Path

import mha_classroom
from mha_classroom.grade import QuestionResult, StudentResult, grade_folder
from mha_classroom.intake import Found, scan_submissions, sibling_modules
from mha_classroom.release import write_atomically
from mha_classroom.reports import write_reports, write_student
from mha_classroom.sandbox import Limits, Sandbox
from mha_classroom.source import Assignment
from mha_classroom.submission import InvalidSubmission, read_bytes

__all__ = ["grade_batch", "fingerprint", "load_result"]

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


def _to_json(result: StudentResult) -> dict:
    return dataclasses.asdict(result)


def _from_json(data: dict) -> StudentResult | None:
    try:
        questions = tuple(QuestionResult(**q) for q in data["questions"])
        fields = {key: tuple(data[key]) for key in ("notes", "cell_errors", "events", "used_mha")}
        values = tuple((name, value) for name, value in data.get("values") or ())
        return StudentResult(data["student"], questions, original=data["original"], values=values,
                             **fields)
    except (KeyError, TypeError, ValueError):
        return None


def load_result(path: Path) -> StudentResult | None:
    """The result a progress record holds (None if it is not one)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return _from_json(record.get("result") or {}) if isinstance(record, dict) else None


def _resumed(folder: Path, found: Found, print_: str) -> StudentResult | None:
    try:
        record = json.loads((folder / f"{found.student}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("fingerprint") != print_:
        return None
    return _from_json(record.get("result") or {})


def grade_batch(assignment: Assignment, submissions: Path, out: Path, limits: Limits,
                sandbox: Sandbox, jobs: int = 2, resume: bool = True, assignment_for=None):
    """Grade ``submissions`` into ``out``; returns (results, skipped entries, students resumed).

    ``assignment_for(student)``: each student's own copy (a variant), when there is one."""
    found, skipped = scan_submissions(submissions, assignment.name)
    progress = Path(out) / PROGRESS
    own = assignment_for or (lambda student: assignment)
    prints = {f.student: fingerprint(own(f.student), f, limits, sandbox) for f in found}
    budget = sandbox.budget.describe(limits.memory_mb, limits.nproc) \
        if sandbox.kind == "bubblewrap" else ""
    done: dict[str, StudentResult] = {}
    resumed, lock = [], threading.RLock()

    def skip(item: Found) -> StudentResult | None:
        result = _resumed(progress, item, prints[item.student]) if resume else None
        if result is not None:
            resumed.append(item.student)
            finished(item, result)
        return result

    def finished(item: Found, result: StudentResult) -> None:
        with lock:
            _write(item, result)

    def _write(item: Found, result: StudentResult) -> None:
        done[item.student] = result
        write_student(assignment, result, out)
        write_atomically(progress / f"{item.student}.json", json.dumps(
            {"fingerprint": prints[item.student], "result": _to_json(result)}, sort_keys=True))
        if len(done) < len(found):  # the files of everyone so far: a kill now loses nothing
            write_reports(assignment, list(done.values()), out, sandbox.kind, skipped=skipped,
                          budget=budget, progress=f"{len(done)} of {len(found)} graded so far",
                          students=False)

    results = grade_folder(assignment, submissions, limits, jobs=jobs, sandbox=sandbox,
                           on_result=finished, skip=skip, assignment_for=assignment_for)
    write_reports(assignment, results, out, sandbox.kind, skipped=skipped, budget=budget,
                  students=False)
    return results, skipped, sorted(resumed)
