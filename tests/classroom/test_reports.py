"""Reports a teacher can trust: every file in the folder is accounted for, names are compared in
one Unicode form, text is shown as it is, and a batch stopped half-way loses nothing and resumes."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata

import pytest

from mha_classroom.batch import PROGRESS, grade_batch
from mha_classroom.exports import md_inline
from mha_classroom.grade import QuestionResult, StudentResult
from mha_classroom.intake import notebook_stem, scan_submissions
from mha_classroom.release import nbgrader_notebook, student_notebook, write_notebook
from mha_classroom.reports import feedback_html, grades_csv, summary_markdown
from mha_classroom.text import visible, without_paths
from tests.classroom.conftest import ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom
JOSE_NFC, JOSE_NFD = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")


def _folder(tmp_path, assignment):
    folder = tmp_path / "submitted"
    folder.mkdir()
    solution, stub = nbgrader_notebook(assignment), student_notebook(assignment)
    write_notebook(solution, folder / "Ana.IPYNB")  # Windows, caps lock
    write_notebook(solution, folder / "bea.ipynb.txt")  # a browser's download name
    write_notebook(stub, folder / f"{JOSE_NFC}.ipynb")
    write_notebook(solution, folder / f"{JOSE_NFD}.ipynb")  # the same name, typed on a Mac
    (folder / "carol.zip").write_bytes(b"PK\x03\x04")
    (folder / ".DS_Store").write_bytes(b"\x00")
    write_notebook(solution, folder / ".dan.ipynb")
    (folder / "notes.txt").write_text("grade these by Friday")
    return folder


def test_every_entry_gets_a_row_or_a_reason(tmp_path, assignment_1):
    found, skipped = scan_submissions(_folder(tmp_path, assignment_1), assignment_1.name)
    assert sorted(f.original for f in found) == sorted(["Ana", "bea", JOSE_NFC, JOSE_NFC])
    assert {f.original for f in found} == {"Ana", "bea", JOSE_NFC}  # one form of José, twice
    reasons = {entry.name: entry.reason for entry in skipped}
    assert set(reasons) == {"carol.zip", ".DS_Store", ".dan.ipynb", "notes.txt"}
    assert "archive" in reasons["carol.zip"] and "dot" in reasons[".dan.ipynb"]
    assert notebook_stem("x.ipynb.JSON") == "x" and notebook_stem(".ipynb") is None


def test_a_batch_accounts_for_every_file_and_names_shared_names(tmp_path, assignment_1, sandbox):
    folder = _folder(tmp_path, assignment_1)
    out = tmp_path / "grades"
    batch = grade_batch(assignment_1, folder, out, TEST_LIMITS, sandbox)
    points = {r.student: r.points for r in batch.results}
    assert points["Ana"] == points["bea"] == 15 and batch.resumed == []
    assert sorted([points["Jose"], points["Jose-2"]]) == [0, 15]  # two students, told apart
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert f"2 submissions are named {JOSE_NFC.casefold()}" in summary
    assert "graded apart as Jose, Jose-2" in summary
    for name in ("carol.zip", ".DS_Store", ".dan.ipynb", "notes.txt"):
        assert f"- not graded: {md_inline(name)}:" in summary
    assert "- limits: 768 MiB" in summary


def test_a_killed_batch_keeps_what_it_finished_and_a_second_run_resumes(tmp_path, assignment_1):
    """The command is killed after its first student; the second run grades only the rest."""
    folder = tmp_path / "submitted"
    folder.mkdir()
    for name in ("a1", "a2", "a3"):
        write_notebook(nbgrader_notebook(assignment_1), folder / f"{name}.ipynb")
    out = tmp_path / "grades"
    source = str(ROOT / "assignments" / "01-self-attention.md")
    command = [sys.executable, "-m", "mha_classroom", "grade", source, str(folder), "--out", str(out),
               "--jobs", "1", "--cell-timeout", "5", "--record-key", str(tmp_path / "key")]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if (out / PROGRESS / "a1.json").exists():
                break
            subprocess.run(["sleep", "0.1"], check=True)
    finally:
        first.kill()  # as the system's memory killer would
        first.wait()
    assert (out / "feedback" / "a1.md").is_file() and (out / "grades.csv").is_file()
    assert '"a1",' in (out / "grades.csv").read_text() and "graded so far" in (out / "summary.md").read_text()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "unchanged since an earlier run" in done.stdout and "a1: 15 / 15" in done.stdout
    summary = (out / "summary.md").read_text()
    assert "- submissions: 3\n" in summary and "so far" not in summary
    record = json.loads((out / PROGRESS / "a1.json").read_text())
    (folder / "a1.ipynb").write_text(json.dumps(student_notebook(assignment_1)))  # a resubmission
    again = subprocess.run(command, capture_output=True, text=True, check=True)
    assert "a1: 0 / 15" in again.stdout  # a changed submission is graded again
    assert json.loads((out / PROGRESS / "a1.json").read_text())["fingerprint"] != record["fingerprint"]


def _result(feedback: str) -> StudentResult:
    return StudentResult("s", (QuestionResult("q", 0.0, 1.0, feedback),), notes=(feedback,))


def test_invisible_and_control_characters_are_shown_as_escapes_everywhere():
    text = "a\x1b[31mb\u202ec\u200bd\x00e\ufefff\u2066g\x85h\u2028i"
    assert visible(text) == "a\\x1b[31mb\\u202ec\\u200bd\\x00e\\ufefff\\u2066g\\x85h\\u2028i"
    csv_text = grades_csv([_result(text)])
    page = feedback_html(type("A", (), {"name": "a1"})(), _result(text + "<script>"))
    for output in (csv_text, page):
        assert not any(ch in output for ch in "\x1b\u202e\u200b\x00\ufeff\u2066\x85\u2028")
    assert "&lt;script&gt;" in page and "<script>" not in page


def test_host_paths_leave_the_text():
    assert without_paths("at /srv/venv/lib/x.py and /srv/venv", ["/srv/venv/lib", "/srv/venv"]) == \
        "at …/x.py and …"


def test_the_summary_says_who_used_mha_and_where():
    used = StudentResult("ana", (), used_mha=("softmax", "cell 7"))
    text = summary_markdown(type("A", (), {"name": "a1"})(), [used, StudentResult("bo", ())],
                            "bubblewrap")
    assert "1 submissions used the mha package" in text and "ana (softmax, cell 7)" in text
