"""Progress records nobody can forge: whoever can write the output folder cannot make a resumed run
report scores the student did not earn, or scores the assignment cannot give."""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import stat

import pytest

from mha_classroom.grade import QuestionResult, StudentResult
from mha_classroom.records import check_record, record_key, sign_record

KEY = b"0" * 64
PRINT = "f" * 64


def _result(small, points: tuple[float, ...] = (0.0, 0.0)) -> StudentResult:
    questions = tuple(QuestionResult(test.test_id, got, test.points, "passed" if got else "failed")
                      for test, got in zip(small.tests, points, strict=True))
    return StudentResult("ann", questions, notes=("a note",), values=(("spread", 0.125),))


def _resign(record: dict, key: bytes) -> str:
    """A record re-signed as someone who does not hold ``KEY`` would have to."""
    record = {k: v for k, v in record.items() if k != "mac"}
    text = json.dumps(record, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()
    record["mac"] = hmac.new(key, text, hashlib.sha256).hexdigest()
    return json.dumps(record)


def test_a_signed_record_gives_back_its_result(small):
    result = _result(small, (2.0, 0.0))
    text = sign_record(KEY, small, "ann", PRINT, result)
    assert check_record(text, KEY, small, "ann", PRINT) == (result, "")


def test_every_forgery_is_refused_with_its_reason(small):
    honest = json.loads(sign_record(KEY, small, "ann", PRINT, _result(small)))
    full = dataclasses.asdict(_result(small, (2.0, 1.0)))
    forged = dict(honest, result=full)
    cases = {
        "signature": [json.dumps(forged),  # full marks written in, the old signature kept
                      _resign(forged, b"guessed key"), json.dumps({**forged, "mac": ""})],
        "no signature": [json.dumps({k: v for k, v in forged.items() if k != "mac"})],
        "another student's record": [sign_record(KEY, small, "bob", PRINT, _result(small, (2.0, 1.0)))],
        "the files changed": [sign_record(KEY, small, "ann", "0" * 64, _result(small, (2.0, 1.0)))],
        "not JSON": ["{", ""],
    }
    for why, texts in cases.items():
        for text in texts:
            assert check_record(text, KEY, small, "ann", PRINT) == (None, why), (why, text[:80])


def test_a_record_of_other_questions_or_points_or_of_impossible_scores_is_refused(small):
    other = dataclasses.replace(small, cells=tuple(
        dataclasses.replace(c, points=5.0) if c.role == "test" else c for c in small.cells))
    signed_for_other = sign_record(KEY, other, "ann", PRINT, _result(other, (5.0, 5.0)))
    assert check_record(signed_for_other, KEY, small, "ann", PRINT) == (
        None, "another assignment's questions or points")
    half = _result(small, (1.0, 0.5))  # a test cell scores all its points or none
    assert check_record(sign_record(KEY, small, "ann", PRINT, half), KEY, small, "ann", PRINT) == (
        None, "scores the assignment cannot give")
    too_many = _result(small, (2.0, 1.0))
    too_many = dataclasses.replace(too_many, questions=too_many.questions + too_many.questions[:1])
    assert check_record(sign_record(KEY, small, "ann", PRINT, too_many), KEY, small, "ann",
                        PRINT)[1] == "scores the assignment cannot give"


def test_the_key_lives_outside_the_output_folder_readable_by_its_owner_only(tmp_path):
    key = record_key(tmp_path / "home" / "record.key", outside=(tmp_path / "grades",))
    assert len(key) == 64 and stat.S_IMODE((tmp_path / "home" / "record.key").stat().st_mode) == 0o600
    assert record_key(tmp_path / "home" / "record.key", outside=()) == key  # made once, then read
    with pytest.raises(ValueError, match="lies inside .*grades.*could sign records"):
        record_key(tmp_path / "grades" / ".key", outside=(tmp_path / "grades",))
    (tmp_path / "short.key").write_text("abc")
    with pytest.raises(ValueError, match="3 characters long"):
        record_key(tmp_path / "short.key", outside=())
