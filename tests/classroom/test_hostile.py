"""A student who has read the grader gains nothing: no points, no secrets, no way out, no crash.

One batch (``hostile.CASES``, ``hostile_round_two.CASES_ROUND_TWO`` and
``hostile_round_three.CASES_ROUND_THREE``, graded once per session by
the real command line in ``conftest.hostile_batch``): each hostile submission scores no more than
an empty one, honest ones score what they earn; the canary folder, the submissions, the outputs and
the teacher's keyring are untouched; no secret reaches any output; the grader's own memory stays
bounded; and the feedback on hidden tests is the same words whatever the code did on them.
"""

from __future__ import annotations

import csv
import os
import re
import time
from pathlib import Path

import pytest

from mha_classroom.intake import find_submissions
from mha_classroom.probes import HIDDEN_FAILED
from tests.classroom.conftest import KEY_SECRET, ROOT, SECRET, snapshot
from tests.classroom.hostile import CASES
from tests.classroom.hostile_round_three import CASES_ROUND_THREE
from tests.classroom.hostile_round_two import CASES_ROUND_TWO, SIDE_CHANNELS

pytestmark = pytest.mark.classroom
ALL_CASES = [*CASES, *CASES_ROUND_TWO, *CASES_ROUND_THREE]
FORBIDDEN_TEXT = (SECRET, KEY_SECRET, "CANARY-CONTENT-7c2e", "default_rng(2024)", "1e4 - 1.0",
                  "mha-teacher-ring", "kept-for-the-next-run")
#: The grader's own peak resident memory (VmHWM) over the whole batch. Python, NumPy, the course and
#: jupytext take about 150 MiB; each of the two runs at a time may send 16 MiB of arrays
#: (``wire.MAX_ARRAY_BYTES``), which the grader reads and copies once: about 215 MiB at most (168
#: measured, 2026-12). The first round's forged frames took the grader to 751 MB for one run.
GRADER_PEAK_MIB = 300
FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _result(batch, case):
    ids = {found.original: found.student for found in find_submissions(batch.submissions,
                                                                       "01-self-attention")}
    return batch.results[ids[case.original or case.name]]


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda case: case.name)
def test_each_submission_scores_what_it_earned_and_no_more(case, hostile_batch):
    result = _result(hostile_batch, case)
    got = {q.grade_id: q.points for q in result.questions}
    if case.points is not None:
        assert got == case.points, result
    else:
        assert all(points <= case.at_most.get(grade_id, 0) for grade_id, points in got.items()), \
            result


@pytest.mark.parametrize("case", [c for c in ALL_CASES if c.messages], ids=lambda case: case.name)
def test_each_submission_is_told_why(case, hostile_batch):
    result = _result(hostile_batch, case)
    texts = {q.grade_id: q.feedback for q in result.questions}
    texts.update(notes="\n".join(result.notes), errors="\n".join(result.cell_errors))
    for where, pattern in case.messages.items():
        assert re.search(pattern, texts[where]), (where, texts[where])


def test_a_copied_test_cell_is_not_an_edited_one(hostile_batch):
    result = _result(hostile_batch, next(c for c in CASES if c.name == "copied_test_cell"))
    # (this case starts from the instructor's notebook, whose other test cells hold hidden lines)
    assert not any("edited the test cell 'softmax_rows'" in note for note in result.notes)


def test_the_canary_the_submissions_and_the_teachers_keyring_are_untouched(hostile_batch):
    before, after = hostile_batch.before, hostile_batch.after
    assert {k: v for k, v in after.items() if k in before} == before
    assert all(Path(k).parts[0] == "grades" for k in after.keys() - before.keys())
    keyring = hostile_batch.keyring
    if not keyring.available:
        pytest.skip("this kernel has no keyrings")
    assert hostile_batch.keys_after == (1, KEY_SECRET.encode())  # one key, as it was: none added


def _runs_of_this_batch(batch) -> list[bytes]:
    """Command lines of live processes this batch started: its runners carry the grader's tag, and
    the survivors' ``sleep`` the batch's token (another grader's runs carry neither)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                command = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if batch.token.encode() in command or f"--run-of={batch.tag}".encode() in command:
                found.append(command)
    return found


def test_nothing_survives_the_batch_and_the_outputs_stay_as_written(hostile_batch):
    time.sleep(2.5)  # what a surviving child would wait before rewriting the outputs
    assert _runs_of_this_batch(hostile_batch) == []
    assert not list(hostile_batch.scratch.glob("mha-run-*"))  # temporary folders removed
    assert not list(hostile_batch.scratch.glob("mha-files-*"))
    out = hostile_batch.out
    assert snapshot(out) == {str(Path(k).relative_to("grades")): v
                             for k, v in hostile_batch.after.items()
                             if Path(k).parts[0] == "grades" and k != "grades"}
    names = {Path(key).name for key in snapshot(hostile_batch.root)}  # rglob recurses too deep
    assert not {name for name in names if name == "late.txt" or name.startswith("pwned")}


def test_a_submissions_processes_share_one_memory_budget(hostile_batch):
    """Six processes try to hold 300 MiB each under 768 MiB: at most two can (with a per-process
    limit, all six did). On a busy machine the cell may run out of time first; then it says so."""
    case = next(c for c in CASES_ROUND_TWO if c.name == "memory_in_many_processes")
    result = _result(hostile_batch, case)
    held = re.search(r"HELD (\d)", result.questions[0].feedback)
    if held:
        assert int(held[1]) * 300 <= 768
    else:
        assert any(("Timeout" in text or "memory" in text)
                   for text in result.cell_errors + result.notes), result
    if hostile_batch.budget_kind == "rlimit":
        assert held is None or int(held[1]) == 0


def test_the_graders_own_memory_stays_bounded(hostile_batch):
    peak = hostile_batch.peak_mib
    assert 0 < peak < GRADER_PEAK_MIB, f"the grader peaked at {peak:.0f} MiB"


def _outputs(batch):
    for path in batch.out.rglob("*"):
        if path.is_file():
            yield path, path.read_bytes()


def test_no_secret_and_no_host_path_reaches_any_output(hostile_batch):
    import sys

    import mha
    import mha_classroom

    host = {str(ROOT), os.path.realpath(sys.prefix), str(Path(mha_classroom.__file__).parent),
            str(Path(mha.__file__).parent), str(hostile_batch.scratch)}
    for path, data in _outputs(hostile_batch):
        text = data.decode("utf-8")
        for secret in (*FORBIDDEN_TEXT, *host):
            assert secret not in text, (path.name, secret)
    result = {case.name: _result(hostile_batch, case) for case in ALL_CASES}
    assert "LEAK" in result["snooping"].questions[0].feedback  # messages arrive, minus secrets
    thief = "\n".join(q.feedback for q in result["exfiltrate_hidden_inputs"].questions)
    assert "EXFIL" in thief and "9999" not in thief and "10000" not in thief
    keys = result["keyrings"].questions[0].feedback
    assert keys.startswith("ValueError: KEYS") and "mha-teacher-key" not in keys
    paths = result["host_paths"].questions[0].feedback
    assert "PATHS" in paths and "…" in paths  # the paths were there, and were taken out


def test_no_output_holds_a_control_bidi_or_zero_width_character(hostile_batch):
    hidden = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
    for path, data in _outputs(hostile_batch):
        text = data.decode("utf-8")
        assert not hidden.search(text), (path.name, hidden.search(text))
    with open(hostile_batch.out / "grades.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    row = next(row for row in rows if row[0] == "control_characters")
    assert "\\x1b[2K" in row[4] and "\\u202edeliaf" in row[4] and "\\x00 NUL" in row[4]  # escaped
    assert not any(row[0] == "forged" for row in rows)  # the forged line stays inside its cell


def test_hidden_tests_say_the_same_words_whatever_the_code_did_on_them(hostile_batch):
    """Exit, signal, stall, exception text, memory, ImportError, NameError or a wrong value on the
    hidden input: one feedback, word for word."""
    texts = {}
    for case in SIDE_CHANNELS:
        result = _result(hostile_batch, case)
        feedback = (hostile_batch.out / "feedback" / f"{result.student}.md").read_text()
        texts[case.name] = feedback.split("\n", 1)[1]  # after the title, which names the student
        assert result.notes == () and result.cell_errors == (), case.name
        assert {q.grade_id: q.feedback for q in result.questions}["softmax_stable"] == HIDDEN_FAILED
    assert len(set(texts.values())) == 1, texts


def test_csv_cells_never_start_like_a_formula(hostile_batch):
    for name in ("grades.csv", "totals.csv", "written/answers.csv"):
        with open(hostile_batch.out / name, newline="", encoding="utf-8") as file:
            for row in csv.reader(file):
                assert not any(cell[:1] in FORMULA or cell.lstrip()[:1] in FORMULA for cell in row), row


def test_ids_are_unique_file_name_safe_and_each_has_its_own_feedback(hostile_batch):
    ids = list(hostile_batch.results)
    assert len(ids) == len(set(i.lower() for i in ids)) == len(ALL_CASES)
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", i) for i in ids)
    for suffix in (".md", ".html"):
        files = sorted(p.stem for p in (hostile_batch.out / "feedback").glob(f"*{suffix}"))
        assert files == sorted(ids)
    assert {"Bob", "bob-2", "bob-3", "HYPERLINK_1", "2_3"} <= set(ids)


def test_student_text_cannot_escape_its_code_fence_or_its_html(hostile_batch):
    case = next(c for c in CASES if c.name == "markdown_injection")
    student = _result(hostile_batch, case).student
    text = (hostile_batch.out / "feedback" / f"{student}.md").read_text(encoding="utf-8")
    fence, outside = None, []
    for line in text.splitlines():
        if fence is None and re.fullmatch(r"`{3,}text", line):
            fence = line[:-4]
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            outside.append(line)
    assert fence is None and "# FULL MARKS" in text  # the student's text is there, fenced
    assert "# FULL MARKS" not in outside and not any("=1+1" in line for line in outside)
    page = (hostile_batch.out / "feedback" / f"{student}.html").read_text(encoding="utf-8")
    assert "<script" not in page and "# FULL MARKS" in page and "&lt;" not in page.split("<pre>")[0]


def test_the_summary_tells_the_teacher_what_happened(hostile_batch):
    summary = (hostile_batch.out / "summary.md").read_text(encoding="utf-8")
    assert "sandbox: bubblewrap" in summary
    assert re.search(r"- limits: 768 MiB .*(counted over all its processes|no control group)",
                     summary)
    lines = {line.split(" ", 2)[2].split(":")[0]: line for line in summary.splitlines()
             if line.startswith("- ") and line[2].isdigit()}
    assert "invalid_json" in lines["submissions not graded (unreadable, too large, not a notebook ...)"]
    assert "stubborn_loop" in lines["submissions with a cell or a run past its time limit"]
    edited = lines["submissions with edited test cells (the originals were run)"]
    assert "merged_cells" in edited and "honest" not in edited  # its hidden tests are no edit
    used = next(line for line in summary.splitlines() if "used the mha package" in line)
    assert "uses_mha (softmax)" in used and "honest" not in used
    assert "3 submissions are named bob" in summary


def test_a_slow_but_right_answer_goes_on_in_another_run_and_keeps_its_points(hostile_batch):
    case = next(c for c in CASES if c.name == "slow_but_correct")
    result = _result(hostile_batch, case)
    assert "timeout" in result.events  # its first run did run out of time ...
    assert result.points == result.max_points  # ... and no call was lost to it
