"""Grade a folder of submissions: one sandboxed run per student, a CSV and a feedback file each.

A submission is the student's notebook with their own cells kept as they are and every test cell
replaced by the instructor's full version (hidden tests included), found by its ``grade_id``
(cell metadata, else the ``# grade_id: ...`` header line). A test cell the student deleted is run
at the end. Each test cell scores all its points if it runs without an exception, none otherwise.
"""

from __future__ import annotations

import csv
import io
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from mha.classroom.release import write_atomically
from mha.classroom.sandbox import CellOutcome, Limits, ProgramCell, RunReport, run_cells
from mha.classroom.source import Assignment, AssignmentError, instructor_source, parse_header

MAX_SUBMISSION_BYTES = 50 * 2**20
DEFAULT_LIMITS = Limits()
CSV_FIELDS = ("student", "question", "points", "max_points", "feedback")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.@+-]")


class InvalidSubmission(ValueError):
    """A submission file that is not a readable notebook."""


@dataclass(frozen=True)
class QuestionResult:
    """One test cell's result for one student."""

    grade_id: str
    points: float
    max_points: float
    feedback: str


@dataclass(frozen=True)
class StudentResult:
    """All of one student's results, and notes for their feedback file."""

    student: str
    questions: tuple[QuestionResult, ...]
    notes: tuple[str, ...] = ()
    cell_errors: tuple[str, ...] = ()

    @property
    def points(self) -> float:
        return sum(question.points for question in self.questions)

    @property
    def max_points(self) -> float:
        return sum(question.max_points for question in self.questions)


def read_submission(path: Path) -> list[tuple[str, str, dict]]:
    """Return ``(cell_type, source, metadata)`` for each cell of a submitted ``.ipynb``.

    Raises InvalidSubmission with a message for the student when the file is not a notebook.
    """
    size = path.stat().st_size
    if size > MAX_SUBMISSION_BYTES:
        raise InvalidSubmission(f"the notebook is {size / 2**20:.0f} MiB, more than the "
                                f"{MAX_SUBMISSION_BYTES // 2**20} MiB the grader accepts")
    try:
        notebook = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise InvalidSubmission("the notebook is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise InvalidSubmission(
            f"the notebook is not valid JSON (line {error.lineno}, column {error.colno}: "
            f"{error.msg}); open it in Jupyter, save it, and submit again") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise InvalidSubmission("the file is JSON but not a Jupyter notebook (no 'cells' list)")
    cells = []
    for number, cell in enumerate(notebook["cells"], start=1):
        source = cell.get("source") if isinstance(cell, dict) else None
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str) or not isinstance(cell.get("cell_type"), str):
            raise InvalidSubmission(f"cell {number} of the notebook is malformed")
        metadata = cell.get("metadata")
        cells.append((cell["cell_type"], source, metadata if isinstance(metadata, dict) else {}))
    return cells


def _test_id(source: str, metadata: dict) -> str | None:
    for key in ("mha_classroom", "nbgrader"):
        entry = metadata.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("grade_id"), str):
            return entry["grade_id"]
    first_line = source.lstrip("\n").split("\n", 1)[0]
    try:
        header = parse_header(first_line)
    except AssignmentError:
        return None
    return header[0] if header else None


def build_program(assignment: Assignment, cells) -> tuple[list[ProgramCell], list[str]]:
    """The cells to run for one submission, and notes about tests that were moved or missing.

    Cells are numbered as in the student's notebook (1 = first cell, markdown included).
    """
    tests = {cell.grade_id: cell for cell in assignment.tests}
    program, notes, seen = [], [], set()
    for number, (cell_type, source, metadata) in enumerate(cells, start=1):
        if cell_type != "code":
            continue
        grade_id = _test_id(source, metadata)
        if grade_id in tests:
            if grade_id not in seen:
                program.append(ProgramCell(number, instructor_source(tests[grade_id]), grade_id))
                seen.add(grade_id)
        else:
            program.append(ProgramCell(number, source))
    for test in (test for test in assignment.tests if test.grade_id not in seen):
        program.append(ProgramCell(len(cells) + len(notes) + 1, instructor_source(test),
                                   test.grade_id))
        notes.append(f"the test cell {test.grade_id!r} was missing from the notebook; the "
                     "grader ran it after your last cell")
    return program, notes


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _score(assignment: Assignment, student: str, report: RunReport, notes) -> StudentResult:
    by_id = {o.grade_id: o for o in report.outcomes.values() if o.grade_id}
    questions = []
    for test in assignment.tests:
        outcome = by_id[test.grade_id]
        passed = outcome.status == "ok"
        questions.append(QuestionResult(test.grade_id, test.points if passed else 0.0,
                                        test.points, "passed" if passed else outcome.message))
    errors = [f"cell {o.index}: {o.message}" for o in sorted(report.outcomes.values(),
              key=lambda o: o.index) if o.grade_id is None and o.status != "ok"]
    return StudentResult(student, tuple(questions), tuple(notes + report.notes), tuple(errors))


def run_resilient(program: list[ProgramCell], limits: Limits, retries: int = 2) -> RunReport:
    """Run ``program``; if a cell ends the process (``os._exit``, a crash, the total time limit),
    run again without that cell, up to ``retries`` times, so the other questions still count."""
    replaced: dict[int, CellOutcome] = {}
    report = run_cells(program, limits)
    for _ in range(retries):
        culprit = next((o for o in report.outcomes.values() if o.status == "killed"), None)
        if culprit is None:
            break
        replaced[culprit.index] = culprit
        program = [ProgramCell(c.index, "raise RuntimeError('skipped')", c.grade_id)
                   if c.index == culprit.index else c for c in program]
        report = run_cells(program, limits)
    for index, outcome in replaced.items():
        report.outcomes[index] = outcome
        report.notes.append(f"cell {index} ended the grading process; the grader ran the "
                            "notebook again without it")
    if not any(o.status != "not run" for o in report.outcomes.values()) and report.stderr_head:
        report.notes.append("the grading process failed before the first cell: "
                            + _one_line(report.stderr_head, 500))
    return report


def grade_submission(assignment: Assignment, student: str, path: Path | None,
                     limits: Limits = DEFAULT_LIMITS, problem: str = "") -> StudentResult:
    """Grade one student's notebook in the sandbox; never raises for anything the student did."""
    try:
        if path is None:
            raise InvalidSubmission(problem or "no notebook found")
        program, notes = build_program(assignment, read_submission(path))
    except (InvalidSubmission, OSError) as error:
        message = f"not graded: {error}"
        return StudentResult(student, tuple(QuestionResult(t.grade_id, 0.0, t.points, message)
                                            for t in assignment.tests), (message,))
    return _score(assignment, student, run_resilient(program, limits), notes)


def find_submissions(folder: Path, assignment: Assignment) -> list[tuple[str, Path | None, str]]:
    """``(student, notebook or None, problem)`` for each ``<student>.ipynb`` or ``<student>/``.

    In a student's folder the notebook is ``<assignment>.ipynb`` (at any depth, as nbgrader's
    ``submitted/<student>/<assignment>/`` layout has it), else the only ``.ipynb`` there.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: expected a folder of submissions, found none")
    found: dict[str, tuple[Path | None, str]] = {}
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix == ".ipynb":
            student, notebook, problem = entry.stem, entry, ""
        elif entry.is_dir():
            student = entry.name
            candidates = sorted(p for p in entry.rglob("*.ipynb") if ".ipynb_checkpoints"
                                not in p.parts)
            named = [p for p in candidates if p.stem == assignment.name]
            chosen = named or candidates
            notebook = chosen[0] if len(chosen) == 1 else None
            problem = ("no notebook in the folder" if not chosen else
                       f"{len(chosen)} notebooks in the folder, expected {assignment.name}.ipynb")
        else:
            continue
        if student in found:
            raise ValueError(f"{folder}: two submissions for {student!r} (a file and a folder?)")
        found[student] = (notebook, "" if notebook else problem)
    return [(student, notebook, problem) for student, (notebook, problem) in found.items()]


def grade_folder(assignment: Assignment, folder: Path, limits: Limits = DEFAULT_LIMITS,
                 jobs: int = 2) -> list[StudentResult]:
    """Grade every submission in ``folder``, ``jobs`` sandboxes at a time, in student order."""
    if not (isinstance(jobs, int) and jobs >= 1):
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    submissions = find_submissions(folder, assignment)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda s: grade_submission(assignment, s[0], s[1], limits, s[2]),
                             submissions))


def _number(value: float) -> str:
    return f"{value:g}"


def grades_csv(results: list[StudentResult]) -> str:
    """The CSV text: one row per student and question, in a stable order."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for result in sorted(results, key=lambda r: r.student):
        for q in result.questions:
            writer.writerow([result.student, q.grade_id, _number(q.points),
                             _number(q.max_points), _one_line(q.feedback)])
    return buffer.getvalue()


def feedback_markdown(assignment: Assignment, result: StudentResult) -> str:
    """The feedback file a student reads: score, a table, then every message in full."""
    lines = [f"# {assignment.name}: feedback for {result.student}", "",
             f"Score: **{_number(result.points)} / {_number(result.max_points)}**", "",
             "| question | points | result |", "| --- | --- | --- |"]
    for q in result.questions:
        verdict = "passed" if q.points == q.max_points else _one_line(q.feedback, 80).replace(
            "|", "\\|")
        lines.append(f"| {q.grade_id} | {_number(q.points)} / {_number(q.max_points)} | "
                     f"{verdict} |")
    for q in result.questions:
        if q.points < q.max_points:
            lines += ["", f"## {q.grade_id}", "", "```text", q.feedback, "```"]
    for title, items in (("Errors in your own cells", result.cell_errors),
                         ("Notes from the grader", result.notes)):
        if items:
            lines += ["", f"## {title}", ""] + [f"- {_one_line(item, 1000)}" for item in items]
    return "\n".join(lines) + "\n"


def write_reports(assignment: Assignment, results: list[StudentResult], out_dir: Path) -> Path:
    """Write ``grades.csv``, ``totals.csv`` and ``feedback/<student>.md`` atomically."""
    out_dir = Path(out_dir)
    write_atomically(out_dir / "grades.csv", grades_csv(results))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("student", "points", "max_points"))
    for result in sorted(results, key=lambda r: r.student):
        writer.writerow([result.student, _number(result.points), _number(result.max_points)])
    write_atomically(out_dir / "totals.csv", buffer.getvalue())
    for result in results:
        name = _UNSAFE.sub("_", result.student) or "_"
        write_atomically(out_dir / "feedback" / f"{name}.md", feedback_markdown(assignment, result))
    return out_dir / "grades.csv"
