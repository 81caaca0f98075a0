"""The sandbox: a separate process per run, cell time limits, no writes outside, signed results."""

from __future__ import annotations

import hmac
from hashlib import sha256

import pytest

from mha.classroom.sandbox import Limits, ProgramCell, _read_records, run_cells

pytestmark = pytest.mark.classroom
FAST = Limits(cell_timeout=1.0, timeout=4.0, memory_mb=512)


def _run(*sources, grade_ids=None, limits=FAST):
    grade_ids = grade_ids or {}
    cells = [ProgramCell(i, source, grade_ids.get(i)) for i, source in enumerate(sources, start=1)]
    return run_cells(cells, limits)


def test_a_slow_cell_times_out_and_the_next_cells_still_run():
    report = _run("while True:\n    pass", "x = 41", "assert x + 1 == 42", grade_ids={3: "t"})
    assert [report.outcomes[i].status for i in (1, 2, 3)] == ["timeout", "ok", "ok"]
    assert report.completed


def test_a_run_past_the_total_limit_is_killed_and_later_cells_are_reported_not_run():
    stubborn = ("import time\nwhile True:\n    try:\n        time.sleep(0.05)\n"
                "    except BaseException:\n        pass")
    report = _run("x = 1", stubborn, "assert x == 1", limits=Limits(1.0, 2.0, 512))
    assert [report.outcomes[i].status for i in (1, 2, 3)] == ["ok", "killed", "not run"]
    assert "past its 2 s time limit" in report.outcomes[2].message
    assert not report.completed


def test_the_child_sees_no_secret_from_the_graders_environment(monkeypatch):
    monkeypatch.setenv("MHA_GRADER_SECRET", "hunter2")
    report = _run("import os\nassert 'MHA_GRADER_SECRET' not in os.environ, 'leaked'")
    assert report.outcomes[1].status == "ok", report.outcomes[1].message


def test_writes_inside_the_working_directory_only(tmp_path):
    outside = tmp_path / "outside.txt"
    report = _run(
        "open('inside.txt', 'w').write('ok')",
        f"open({str(outside)!r}, 'w')",
        f"import os\nos.open({str(outside)!r}, os.O_WRONLY | os.O_CREAT)",
        "import os\nos.symlink('/etc', 'etc-link')",
        "import mha\nopen(mha.__file__).read()",  # reading is fine
    )
    statuses = [report.outcomes[i].status for i in range(1, 6)]
    assert statuses == ["ok", "error", "error", "error", "ok"]
    assert "PermissionError: the grader does not allow writing to" in report.outcomes[2].message
    assert not outside.exists()
    assert any("inside.txt" in note for note in report.notes)


def test_messages_do_not_carry_memory_addresses_so_regrading_is_identical():
    report = _run("raise ValueError(repr(object()))")
    assert "<object object at 0x…>" in report.outcomes[1].message


def test_only_records_signed_with_this_runs_key_and_in_sequence_count():
    key = b"k" * 32

    def signed(payload):
        return f"{payload}\t{hmac.new(key, payload.encode(), sha256).hexdigest()}"

    good = ["1|begin|3|t|-|", "2|end|3|t|ok|"]
    lines = [signed(good[0]), "1|end|3|t|ok|\t" + "0" * 64,  # forged signature
             signed(good[0]), signed(good[1]),  # replayed line, then the real second line
             signed("3|end|3|t|ok|").replace("|ok|", "|ko|")]  # tampered after signing
    records, rejected = _read_records("\n".join(lines).encode(), key)
    assert records == [["begin", "3", "t", "-", ""], ["end", "3", "t", "ok", ""]]
    assert rejected == 3
