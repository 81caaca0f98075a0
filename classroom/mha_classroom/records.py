"""Progress records a second run can trust: signed with a key kept outside the output folder, and
checked against the assignment before use.

``grade`` writes ``<out>/.progress/<id>.json`` as each student finishes, so that a run stopped
half-way resumes (:mod:`mha_classroom.batch`). Anyone who can write the output folder (a student's
script on a shared machine, a synced folder) could otherwise rewrite a record and have the next run
report their scores. Each record therefore carries an HMAC-SHA256 of its content, keyed with a
secret that lives outside the output folder (:func:`record_key`: by default
``~/.config/mha-classroom/record.key``, made on first use, readable by its owner only). Before a
record is used, :func:`check_record` verifies, in this order: the signature; that it is this
student's record for these very files (the fingerprint of the source, the submission, the limits
and the grader's version); that the questions and their points are the assignment's; and that
every score is one the assignment can give (a test cell scores all its points or none). Any failure
grades the submission again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from mha_classroom.grade import QuestionResult, StudentResult
from mha_classroom.paths import lies_in, write_private
from mha_classroom.source import Assignment

__all__ = ["check_record", "default_key_path", "record_key", "sign_record"]

VERSION = 2
_TUPLES = ("notes", "cell_errors", "events", "used_mha")


def default_key_path() -> Path:
    """``$XDG_CONFIG_HOME/mha-classroom/record.key`` (``~/.config`` when the variable is unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "mha-classroom" / "record.key"


def record_key(path: Path | None, outside: tuple[Path, ...]) -> bytes:
    """The key that signs the records: read from ``path`` (default :func:`default_key_path`), or
    made there (32 random bytes, hex, mode 600) when the file does not exist.

    Raises ValueError naming the file, the cause and the fix when it lies inside one of
    ``outside`` (the output and submissions folders) or cannot be read or made.
    """
    path = Path(path) if path is not None else default_key_path()
    for folder in outside:
        if lies_in(path, folder):
            raise ValueError(f"{path}: the key that signs the progress records lies inside {folder}; "
                             "anyone who can write that folder could sign records of their own. Fix: "
                             "keep it elsewhere (--record-key, default ~/.config/mha-classroom/record.key)")
    try:
        if not path.exists():
            write_private(path, secrets.token_hex(32) + "\n")
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: the key that signs the progress records cannot be read or made "
                         f"({error}); fix: --record-key PATH to a file you can write, or --fresh to "
                         "grade everything without resuming") from None
    if len(text) < 32:
        raise ValueError(f"{path}: the record key is {len(text)} characters long, under the 32 of a "
                         "key the grader makes; delete the file and a new one is made (earlier "
                         "records are then graded again)")
    return text.encode("ascii")


def _canonical(record: dict) -> bytes:
    return json.dumps(record, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()


def _questions(assignment: Assignment) -> list[list]:
    return [[test.test_id, test.points] for test in assignment.tests]


def sign_record(key: bytes, assignment: Assignment, student: str, fingerprint: str,
                result: StudentResult) -> str:
    """The record of ``student``'s result, signed, as JSON text."""
    record = {"version": VERSION, "student": student, "fingerprint": fingerprint,
              "assignment": {"name": assignment.name, "questions": _questions(assignment)},
              "result": dataclasses.asdict(result)}
    record["mac"] = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    return json.dumps(record, sort_keys=True, ensure_ascii=True)  # escapes: `cat` shows no bidi


def result_from_json(data: dict) -> StudentResult:
    """A :class:`StudentResult` from its JSON form (KeyError, TypeError or ValueError if it is not one)."""
    questions = tuple(QuestionResult(**q) for q in data["questions"])
    fields = {key: tuple(data[key]) for key in _TUPLES}
    values = tuple((name, value) for name, value in data.get("values") or ())
    variant = data.get("variant")
    if not (variant is None or isinstance(variant, str)):
        raise TypeError("variant")
    return StudentResult(data["student"], questions, original=data["original"], values=values,
                         variant=variant, **fields)


def _scores_fit(result: StudentResult, assignment: Assignment) -> bool:
    tests = assignment.tests
    if len(result.questions) != len(tests):
        return False
    for question, test in zip(result.questions, tests, strict=True):
        if (question.grade_id, question.max_points) != (test.test_id, test.points):
            return False
        if question.points not in (0.0, test.points) or not isinstance(question.feedback, str):
            return False
    return all(isinstance(item, str) for key in _TUPLES for item in getattr(result, key))


def check_record(text: str, key: bytes, assignment: Assignment, student: str,
                 fingerprint: str) -> tuple[StudentResult | None, str]:
    """The result a record holds if every check passes, else ``(None, why)``."""
    try:
        record = json.loads(text)
    except ValueError:
        return None, "not JSON"
    if not isinstance(record, dict) or not isinstance(record.get("mac"), str):
        return None, "no signature"
    mac = record.pop("mac")
    if not hmac.compare_digest(mac, hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()):
        return None, "signature"
    if record.get("version") != VERSION or record.get("student") != student:
        return None, "another student's record"
    if record.get("fingerprint") != fingerprint:
        return None, "the files changed"
    if record.get("assignment") != {"name": assignment.name, "questions": _questions(assignment)}:
        return None, "another assignment's questions or points"
    try:
        result = result_from_json(record["result"])
    except (KeyError, TypeError, ValueError):
        return None, "not a result"
    if result.student != student or not _scores_fit(result, assignment):
        return None, "scores the assignment cannot give"
    return result, ""
