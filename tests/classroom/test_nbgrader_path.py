"""The nbgrader path, whole, with real nbgrader 0.9.6 (``pip install nbgrader==0.9.6``, in
requirements-test.txt; skipped where it is not installed).

A course made by ``mha-classroom nbgrader``; ``nbgrader generate_assignment``; students who work in
the notebooks ``mha-classroom release`` writes (their own copies, and the plain release) or in
nbgrader's own release; ``nbgrader validate``, ``autograde`` and ``generate_feedback``; then the
course grader on the same ``submitted/`` folder: every per-question score agrees, written answers
are found whether their marker is there or not, and the scores a teacher types into
``written/answers.csv`` reach nbgrader's gradebook with their manual-grade flag cleared.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mha_classroom import load_assignment
from mha_classroom.__main__ import main
from mha_classroom.variants import values_for
from tests.classroom.conftest import ROOT, TEST_LIMITS

pytestmark = pytest.mark.classroom
SOURCE = ROOT / "assignments" / "01-self-attention.md"
NAME = SOURCE.stem
SEED = "7a1c3e5f7b9d2e4f6a8c0b1d3f5e7a9c2b4d6f8e0a1c3e5b7d9f2a4c6e8b0d1f"
ANSWER = "Without the division the scores spread like sqrt(d_k), so the softmax saturates."
NAIVE_SOFTMAX = ("def softmax(x, axis=-1):\n    e = np.exp(x)\n"
                 "    return e / e.sum(axis=axis, keepdims=True)\n")


def _nbgrader(course: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course}"],
                          capture_output=True, text=True, cwd=course, check=False, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout + done.stderr


def _solutions(course: Path) -> dict[str, str]:
    """Each answer cell's code in the instructor notebook, without its markers."""
    source = json.loads((course / "source" / NAME / f"{NAME}.ipynb").read_text())
    return {c["metadata"]["nbgrader"]["grade_id"]: "\n".join(
        line for line in c["source"].splitlines() if line.strip() not in ("### BEGIN SOLUTION",
                                                                         "### END SOLUTION"))
            for c in source["cells"] if c["metadata"].get("nbgrader", {}).get("solution")
            and c["cell_type"] == "code"}


def _filled(path: Path, solutions: dict[str, str], written: str = "", typed_for: str = "",
            wrong: bool = False) -> dict:
    """A notebook worked in: every answer cell filled, the written answer typed over its stub;
    ``typed_for``: the predicted values typed as numbers for that student's own copy."""
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if isinstance(cell["source"], list):  # nbgrader writes a cell's lines as a list
            cell["source"] = "".join(cell["source"])
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if cell["cell_type"] == "code" and grade_id in solutions:
            cell["source"] = solutions[grade_id]
            if wrong and "def softmax(" in cell["source"]:
                cell["source"] = NAIVE_SOFTMAX
            if typed_for and "spread = math.sqrt(D_K) / D_K" in cell["source"]:
                d_k = values_for(load_assignment(SOURCE), SEED, typed_for)["D_K"]
                cell["source"] = cell["source"].replace("math.sqrt(D_K) / D_K", repr(d_k ** 0.5 / d_k)) \
                    .replace("shrink = math.sqrt(D_K)", f"shrink = {d_k ** 0.5!r}")
        elif cell["cell_type"] == "markdown" and written and "YOUR ANSWER HERE" in cell["source"]:
            cell["source"] = cell["source"].replace("YOUR ANSWER HERE", written)
    return notebook


def _course(root: Path):
    """The course, the students' work, nbgrader's runs and the course grader's, in ``root``."""
    course = root / "course"
    assert main(["nbgrader", str(SOURCE), "--out", str(course / "source")]) == 0
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    _nbgrader(course, "generate_assignment", NAME, "--force")
    (root / "copies.txt").write_text("ann\nbob\ncarol\n")
    (root / "plain.txt").write_text("dave\nerin\n")
    (root / "seed").write_text(SEED)
    (root / "seed").chmod(0o600)
    assert main(["release", str(SOURCE), "--students", str(root / "copies.txt"), "--seed-file",
                 str(root / "seed"), "--out", str(root / "copies")]) == 0
    assert main(["release", str(SOURCE), "--out", str(root / "plain")]) == 0
    solutions = _solutions(course)
    ours = root / "copies" / "{}" / f"{NAME}.ipynb"
    notebooks = {
        "ann": _filled(Path(str(ours).format("ann")), solutions, written=ANSWER),
        "bob": _filled(Path(str(ours).format("bob")), solutions, typed_for="bob", wrong=True),
        "carol": json.loads(Path(str(ours).format("carol")).read_text()),  # as released
        "dave": _filled(course / "release" / NAME / f"{NAME}.ipynb", solutions, written=ANSWER),
        "erin": _filled(root / "plain" / f"{NAME}.ipynb", solutions, typed_for=""),
    }
    for student, notebook in notebooks.items():
        path = course / "submitted" / student / NAME / f"{NAME}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(notebook))
    validated = {student: _validate(course, student) for student in ("ann", "carol")}
    _nbgrader(course, "autograde", NAME, "--force")
    _nbgrader(course, "generate_feedback", NAME, "--force", "--student=ann")
    limits = [f"--cell-timeout={TEST_LIMITS.cell_timeout}", f"--timeout={TEST_LIMITS.timeout * 2}",
              f"--record-key={root / 'key'}"]
    assert main(["grade", str(SOURCE), str(course / "submitted"), "--out", str(root / "graded-copies"),
                 "--students", str(root / "copies.txt"), "--seed-file", str(root / "seed"), *limits]) == 0
    assert main(["grade", str(SOURCE), str(course / "submitted"), "--out", str(root / "graded-plain"),
                 "--students", str(root / "plain.txt"), *limits]) == 0
    return root, course, validated


def _validate(course: Path, student: str) -> str:
    path = course / "submitted" / student / NAME / f"{NAME}.ipynb"
    done = subprocess.run([sys.executable, "-m", "nbgrader", "validate", str(path)], capture_output=True,
                          text=True, cwd=course, check=False, timeout=600)
    return done.stdout + done.stderr


def _ours(root: Path) -> dict[tuple[str, str], float]:
    scores = {}
    for folder in ("graded-copies", "graded-plain"):
        for row in csv.DictReader((root / folder / "grades.csv").open(encoding="utf-8")):
            scores[row["student"], row["question"]] = float(row["points"])
    return scores


def _same_scores(root: Path, course_dir: Path) -> None:
    """nbgrader and the course grader give every question the same score, copies included."""
    from nbgrader.api import Gradebook

    ours = _ours(root)
    tests = {test.test_id: test.points for test in load_assignment(SOURCE).tests}
    theirs = {}
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook:
        for student in ("ann", "bob", "carol", "dave", "erin"):
            notebook = gradebook.find_submission_notebook(NAME, NAME, student)
            theirs.update({(student, grade.name): grade.score for grade in notebook.grades
                           if grade.name in tests})
    assert theirs == ours and len(ours) == 5 * len(tests)
    full = sum(tests.values())
    totals = {s: sum(v for (who, _), v in ours.items() if who == s) for s in ("ann", "dave", "erin")}
    assert totals == dict.fromkeys(("ann", "dave", "erin"), full)
    assert ours["bob", "diagnose"] == tests["diagnose"]  # his own copy's numbers, typed
    assert ours["bob", "softmax_stable"] == 0 and sum(v for (s, _), v in ours.items() if s == "carol") == 0
    assert (course_dir / "feedback" / "ann" / NAME / f"{NAME}.html").is_file()


def _validated(validated: dict[str, str]) -> None:
    """``nbgrader validate`` fails an unanswered copy and passes an answered one."""
    assert "Success" not in validated["carol"] and "VALIDATION FAILED" in validated["carol"]
    assert "Success! Your notebook passes all the tests." in validated["ann"]


def _written_found(root: Path) -> None:
    """Written answers are found with or without their marker."""
    rows = {}
    for folder in ("graded-copies", "graded-plain"):
        for row in csv.DictReader((root / folder / "written" / "answers.csv").open(encoding="utf-8")):
            rows[row["student"]] = row["answer"]
    assert rows["ann"] == ANSWER  # the marker kept by this grader's release
    assert rows["dave"] == ANSWER  # nbgrader's release drops the marker: found by its grade_id
    assert rows["carol"] == rows["erin"] == "(not answered)"


def _scores_loaded(root: Path, course_dir: Path, capsys) -> None:
    """The scores typed into answers.csv reach nbgrader, the manual-grade flag cleared."""
    from nbgrader.api import Gradebook

    filled = root / "filled.csv"
    for folder, scores in (("graded-copies", {"ann": "3"}), ("graded-plain", {"dave": "2.5", "erin": "9"})):
        with (root / folder / "written" / "answers.csv").open(encoding="utf-8") as file:
            rows = list(csv.DictReader(file))
        for row in rows:
            row["manual_score"] = scores.get(row["student"], "")
            row["manual_comment"] = f"=cmd| comment for {row['student']}"
        with filled.open("w", encoding="utf-8", newline="") as file:
            writer = csv.DictWriter(file, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        capsys.readouterr()
        status = main(["written", str(filled), "--to-nbgrader", str(course_dir / "gradebook.db")])
        said = capsys.readouterr().out
        assert status == (1 if "erin" in scores else 0), said
    assert "manual_score 9 is not between 0 and 4; nothing set for erin why_scale" in said
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook:
        automatic = load_assignment(SOURCE).max_points
        for student, score in (("ann", 3.0), ("dave", 2.5)):
            grade = gradebook.find_grade("why_scale", NAME, NAME, student)
            assert (grade.manual_score, grade.needs_manual_grade) == (score, False)
            comment = gradebook.find_comment("why_scale", NAME, NAME, student)
            assert comment.manual_comment == f"=cmd| comment for {student}"
            submission = gradebook.find_submission(NAME, student)
            assert submission.score == automatic + score and not submission.needs_manual_grade
        erin = gradebook.find_grade("why_scale", NAME, NAME, "erin")
        assert erin.manual_score is None and erin.needs_manual_grade


def _graded_by_hand(course_dir: Path) -> None:
    """nbgrader keeps the written answer for the formgrader, with its points (before any is loaded)."""
    from nbgrader.api import Gradebook

    from book.assessment import WRITTEN_STUB, read_assignment

    written = [q for q in read_assignment(SOURCE).questions if q.kind == "written"]
    released = json.loads((course_dir / "release" / NAME / f"{NAME}.ipynb").read_text(encoding="utf-8"))
    answers = [c for c in released["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
               in {q.id for q in written}]
    assert [("".join(c["source"]), c["metadata"]["nbgrader"]["points"]) for c in answers] == \
        [(WRITTEN_STUB, q.points) for q in written]
    automatic = load_assignment(SOURCE).max_points
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook:
        record = gradebook.find_assignment(NAME)
        by_hand = sum(q.points for q in written)
        assert (record.max_code_score, record.max_written_score) == (automatic, by_hand)
        cell = gradebook.find_grade_cell(written[0].id, NAME, NAME)
        assert (cell.cell_type, cell.max_score) == ("markdown", written[0].points)
        for student in ("ann", "dave"):  # this grader's copy and nbgrader's release, both answered
            submission = gradebook.find_submission(NAME, student)
            assert submission.code_score == automatic and submission.needs_manual_grade
            grade = gradebook.find_grade(written[0].id, NAME, NAME, student)
            assert grade.needs_manual_grade and grade.auto_score is None


def test_the_nbgrader_path_is_whole(tmp_path, sandbox, capsys):
    """One test, so that the course is made once whichever worker runs it."""
    pytest.importorskip("nbgrader")
    root, course_dir, validated = _course(tmp_path)
    _validated(validated)
    _same_scores(root, course_dir)
    _written_found(root)
    _graded_by_hand(course_dir)
    _scores_loaded(root, course_dir, capsys)
