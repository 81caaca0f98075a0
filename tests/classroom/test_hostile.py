"""A student who has read the grader gains nothing: no points, no secrets, no way out, no crash.

One batch (``hostile.CASES``, graded once per session in ``conftest.hostile_batch``): each hostile
submission scores no more than an empty one, honest ones score what they earn, and the canary
folder, the submissions and the outputs are untouched.
"""

from __future__ import annotations

import csv
import os
import re
import time
from pathlib import Path

import pytest

from mha_classroom.submission import find_submissions
from tests.classroom.conftest import SECRET, snapshot
from tests.classroom.hostile import CASES

pytestmark = pytest.mark.classroom
FORBIDDEN_TEXT = (SECRET, "CANARY-CONTENT-7c2e", "default_rng(2024)", "1e4 - 1.0")


def _result(batch, case):
    ids = {found.original: found.student for found in find_submissions(batch.submissions,
                                                                       "01-self-attention")}
    return batch.results[ids[case.original or case.name]]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_each_submission_scores_what_it_earned_and_no_more(case, hostile_batch):
    result = _result(hostile_batch, case)
    got = {q.grade_id: q.points for q in result.questions}
    if case.points is not None:
        assert got == case.points, result
    else:
        assert all(points <= case.at_most.get(grade_id, 0) for grade_id, points in got.items()), \
            result


@pytest.mark.parametrize("case", [c for c in CASES if c.messages], ids=lambda case: case.name)
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


def test_the_canary_and_the_submissions_are_untouched(hostile_batch):
    before, after = hostile_batch.before, hostile_batch.after
    assert {k: v for k, v in after.items() if k in before} == before
    assert all(Path(k).parts[0] == "grades" for k in after.keys() - before.keys())


def _parent(pid: int) -> int:
    try:  # /proc/<pid>/stat: "pid (command) state ppid ..."; the command may hold spaces
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def _runs_for_another_test_process(pid: int) -> bool:
    """True for a live run started by a sibling pytest-xdist worker (grading at the same time).

    Workers are children of one controller (our parent). A run this batch left behind has no
    sibling worker among its ancestors: it is this process's descendant or an orphan.
    """
    ancestors = []
    while pid > 1:
        pid = _parent(pid)
        ancestors.append(pid)
    if os.getpid() in ancestors or os.getppid() not in ancestors:
        return False
    return ancestors.index(os.getppid()) > 0  # the ancestor just below the controller is a sibling


def test_nothing_survives_the_batch_and_the_outputs_stay_as_written(hostile_batch):
    time.sleep(2.5)  # what a surviving child would wait before rewriting the outputs
    leftovers = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                command = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if (b"31.41" in command or b"/opt/mha-runner/runner.py" in command) \
                    and not _runs_for_another_test_process(int(entry.name)):
                leftovers.append(command)
    assert leftovers == []
    assert not list(hostile_batch.scratch.glob("mha-run-*"))  # temporary folders removed
    out = hostile_batch.out
    assert snapshot(out) == {str(Path(k).relative_to("grades")): v
                             for k, v in hostile_batch.after.items()
                             if Path(k).parts[0] == "grades" and k != "grades"}
    names = {Path(key).name for key in snapshot(hostile_batch.root)}  # rglob recurses too deep
    assert not {name for name in names if name == "late.txt" or name.startswith("pwned")}


def test_no_secret_reaches_any_output(hostile_batch):
    for path in hostile_batch.out.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            for secret in FORBIDDEN_TEXT:
                assert secret not in text, (path.name, secret)
    snooper = next(c for c in CASES if c.name == "snooping")
    feedback = _result(hostile_batch, snooper).questions[0].feedback
    assert "LEAK" in feedback  # the snooper's message arrives, with nothing it should not have
    thief = next(c for c in CASES if c.name == "exfiltrate_hidden_inputs")
    feedback = "\n".join(q.feedback for q in _result(hostile_batch, thief).questions)
    assert "EXFIL" in feedback and "9999" not in feedback and "10000" not in feedback


def test_csv_cells_never_start_like_a_formula(hostile_batch):
    for name in ("grades.csv", "totals.csv"):
        with open(hostile_batch.out / name, newline="", encoding="utf-8") as file:
            for row in csv.reader(file):
                assert not any(cell[:1] in ("=", "+", "-", "@", "\t", "\r") for cell in row), row


def test_ids_are_unique_file_name_safe_and_each_has_its_own_feedback(hostile_batch):
    ids = list(hostile_batch.results)
    assert len(ids) == len(set(i.lower() for i in ids)) == len(CASES)
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", i) for i in ids)
    files = sorted(p.stem for p in (hostile_batch.out / "feedback").iterdir())
    assert files == sorted(ids)
    assert {"Bob", "bob-2", "bob-3", "HYPERLINK_1", "2_3"} <= set(ids)


def test_student_text_cannot_escape_its_code_fence(hostile_batch):
    case = next(c for c in CASES if c.name == "markdown_injection")
    text = (hostile_batch.out / "feedback" / f"{_result(hostile_batch, case).student}.md"
            ).read_text(encoding="utf-8")
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


def test_the_summary_tells_the_teacher_what_happened(hostile_batch):
    summary = (hostile_batch.out / "summary.md").read_text(encoding="utf-8")
    assert "sandbox: bubblewrap" in summary
    lines = {line.split(" ", 2)[2].split(":")[0]: line for line in summary.splitlines()
             if line.startswith("- ") and line[2].isdigit()}
    assert "invalid_json" in lines["submissions not graded (unreadable, too large, not a notebook ...)"]
    assert "stubborn_loop" in lines["submissions with a cell or a run past its time limit"]
    edited = lines["submissions with edited test cells (the originals were run)"]
    assert "merged_cells" in edited and "honest" not in edited  # its hidden tests are no edit


def test_a_slow_but_right_answer_goes_on_in_another_run_and_keeps_its_points(hostile_batch):
    case = next(c for c in CASES if c.name == "slow_but_correct")
    result = _result(hostile_batch, case)
    assert "timeout" in result.events  # its first run did run out of time ...
    assert result.points == result.max_points  # ... and no call was lost to it
