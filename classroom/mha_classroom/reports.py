"""The files a teacher opens: ``grades.csv``, ``totals.csv``, ``summary.md``, and for each student
``feedback/<id>.md`` and ``feedback/<id>.html``.

Every text that came from a submission (messages, names) goes through :mod:`mha_classroom.exports`:
CSV fields quoted and neutralised (no formula, no DDE link), Markdown escaped or fenced so that
nothing inside can close its fence, HTML escaped, control, bidi and zero-width characters written as
visible escapes, every text capped with ``(cut: N characters)``. A student's files are named by
their id (:func:`mha_classroom.roster.file_stem`) inside ``feedback/``, a folder that holds nothing
else. Nothing depends on time or temporary paths, so grading the same submissions twice writes the
same bytes.
"""

from __future__ import annotations

from pathlib import Path

from mha_classroom.exports import csv_text, fenced, html_text, md_inline, md_name
from mha_classroom.grade import StudentResult
from mha_classroom.intake import Skipped
from mha_classroom.release import write_atomically
from mha_classroom.roster import file_stem
from mha_classroom.rubrics import AWAITS, written_questions
from mha_classroom.source import Assignment

CSV_FIELDS = ("student", "question", "points", "max_points", "feedback")
QUESTION_CHARS = 2_000  # one question's failure message in the feedback
LINE_CHARS = 600  # one error or note
MAX_LINES = 40  # errors, and notes, in one feedback file
EVENTS = {
    "invalid": "submissions not graded (unreadable, too large, not a notebook ...)",
    "wrong_assignment": "submissions of another assignment (not graded: 0 points, the feedback says "
                        "which notebook to hand in)",
    "timeout": "submissions with a cell or a run past its time limit",
    "killed": "runs killed (memory, CPU or file-size limit, or a crash)",
    "memory": "submissions that hit the memory limit (MemoryError)",
    "edited_tests": "submissions with edited test cells (the originals were run)",
    "deleted_tests": "submissions with deleted test cells (the originals were run)",
    "variant_changed": "submissions whose variant cell is not the one released to their id (graded "
                       "with the released one; copies.csv says if it is another student's)",
    "variant_missing": "submissions without their variant cell (graded with the one released to "
                       "their id)",
    "record_refused": "progress records of an earlier run that failed their check (signature, "
                      "assignment or scores) and were graded again",
    "grader_error": "submissions the grader failed on (please report)",
}


def _ids(students) -> str:
    """Student ids for a line of Markdown, each shown as it is unless it needs escaping."""
    return ", ".join(md_name(student) for student in students)


def grades_csv(results: list[StudentResult]) -> str:
    """One row per student and question, in a stable order; every field inert."""
    rows = [(r.student, q.grade_id, q.points, q.max_points, q.feedback)
            for r in sorted(results, key=lambda r: r.student) for q in r.questions]
    return csv_text(CSV_FIELDS, rows, limit=300)


def totals_csv(results: list[StudentResult]) -> str:
    """One row per student (``submitted_as``: the file or folder name, when the id differs)."""
    rows = [(r.student, r.points, r.max_points, " ".join(r.events), r.original)
            for r in sorted(results, key=lambda r: r.student)]
    return csv_text(("student", "points", "max_points", "events", "submitted_as"), rows, limit=300)


def _listed(items: tuple[str, ...]) -> str:
    kept = [" ".join(item.split()) for item in items[:MAX_LINES]]
    more = len(items) - len(kept)
    return "\n".join(kept + ([f"(and {more} more)"] if more > 0 else []))


def _sections(result: StudentResult) -> list[tuple[str, str, int]]:
    """(title, text, cap) of each part of the feedback below the table."""
    parts = [(q.grade_id, q.feedback, QUESTION_CHARS) for q in result.questions if q.points < q.max_points]
    for title, items in (("Errors in your own cells", result.cell_errors),
                         ("Notes from the grader", result.notes)):
        if items:
            parts.append((title, _listed(tuple(i[:LINE_CHARS] for i in items)), LINE_CHARS * MAX_LINES))
    return parts


def _verdict(points: float, max_points: float) -> str:
    return "passed" if points == max_points else "see below"


def feedback_markdown(assignment: Assignment, result: StudentResult) -> str:
    """The feedback file a student reads: score, a table, then each message in its own fence."""
    lines = [f"# {md_name(assignment.name)}: feedback for {_ids([result.student])}", "",
             f"Score: **{result.points:g} / {result.max_points:g}**", "",
             "| question | points | result |", "| --- | --- | --- |"]
    for q in result.questions:
        lines.append(f"| {md_name(q.grade_id)} | {q.points:g} / {q.max_points:g} | "
                     f"{_verdict(q.points, q.max_points)} |")
    for written in written_questions(assignment):  # never scored here: a teacher grades them
        lines.append(f"| {md_name(written.grade_id)} | – / {written.points:g} | {AWAITS} |")
    for title, text, cap in _sections(result):
        lines += ["", f"## {md_name(title)}", "", *fenced(text, cap)]
    return "\n".join(lines) + "\n"


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:1rem auto;padding:0 1rem}}
table{{border-collapse:collapse}}td,th{{border:1px solid #888;padding:.2rem .5rem}}
pre{{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.5rem}}</style>
</head><body>
{body}
</body></html>
"""


def feedback_html(assignment: Assignment, result: StudentResult) -> str:
    """The same feedback as a self-contained page: no script, nothing loaded, every text escaped."""
    title = html_text(f"{assignment.name}: feedback for {result.student}", 300)
    rows = "".join(f"<tr><td>{html_text(q.grade_id, 200)}</td><td>{q.points:g} / {q.max_points:g}"
                   f"</td><td>{_verdict(q.points, q.max_points)}</td></tr>" for q in result.questions)
    rows += "".join(f"<tr><td>{html_text(w.grade_id, 200)}</td><td>– / {w.points:g}</td>"
                    f"<td>{html_text(AWAITS)}</td></tr>" for w in written_questions(assignment))
    body = [f"<h1>{title}</h1>",
            f"<p>Score: <strong>{result.points:g} / {result.max_points:g}</strong></p>",
            f"<table><tr><th>question</th><th>points</th><th>result</th></tr>{rows}</table>"]
    for heading, text, cap in _sections(result):
        body += [f"<h2>{html_text(heading, 200)}</h2>", f"<pre>{html_text(text, cap)}</pre>"]
    return _PAGE.format(title=title, body="\n".join(body))


def _collisions(results: list[StudentResult]) -> list[str]:
    """Lines for names that several submissions share (once NFC-normalised and case-folded)."""
    by_name: dict[str, list[str]] = {}
    for result in results:
        by_name.setdefault((result.original or result.student).casefold(), []).append(result.student)
    lines = []
    for name, ids in sorted(by_name.items()):
        if len(ids) > 1:
            lines.append(f"- {len(ids)} submissions are named {md_inline(name, 80)} (the same letters, "
                         f"perhaps typed in other capitals or Unicode forms): graded apart as "
                         f"{_ids(sorted(ids))}")
    return lines


def summary_markdown(assignment: Assignment, results: list[StudentResult], sandbox_kind: str,
                     skipped: tuple[Skipped, ...] | list[Skipped] = (), budget: str = "",
                     progress: str = "", extra: tuple[str, ...] = ()) -> str:
    """What happened in the batch, for the teacher (``extra``: lines the caller adds, Markdown)."""
    lines = [f"# {md_name(assignment.name)}: grading summary", "",
             f"- submissions: {len(results)}" + (f" ({progress})" if progress else ""),
             f"- sandbox: {sandbox_kind}" + ("" if sandbox_kind == "bubblewrap" else
                                              " (submissions were run WITHOUT a sandbox)")]
    if budget:
        lines.append(f"- limits: {budget}")
    if results:
        totals = sorted(r.points for r in results)
        lines.append(f"- points: median {totals[len(totals) // 2]:g} of {results[0].max_points:g}")
    for event, meaning in EVENTS.items():
        who = sorted(r.student for r in results if event in r.events)
        if who:
            lines.append(f"- {len(who)} {meaning}: {_ids(who)}")
    users = [f"{_ids([r.student])} ({md_inline(', '.join(r.used_mha), 200)})"
             for r in sorted(results, key=lambda r: r.student) if r.used_mha]
    if users:
        lines.append(f"- {len(users)} submissions used the mha package (answers that needed it fail "
                     f"the NumPy-only test; cells that only compare with it do not): {'; '.join(users)}")
    lines += _collisions(results)
    written = written_questions(assignment)
    if written and results:
        names = ", ".join(f"{md_name(w.grade_id)} ({w.points:g} points)" for w in written)
        lines.append(f"- written answers, not in the points above, await your grade: {names}; "
                     "the answers with their rubrics are in written/ (answers.csv has nbgrader's "
                     "manual_score and manual_comment columns)")
    lines += list(extra)
    for entry in skipped:
        lines.append(f"- not graded: {md_inline(entry.name, 120)}: {md_inline(entry.reason, 400)}")
    return "\n".join(lines) + "\n"


def write_student(assignment: Assignment, result: StudentResult, out_dir: Path) -> None:
    """Write one student's feedback files, named by their id, in ``feedback/`` (students only)."""
    folder = Path(out_dir) / "feedback"
    name = file_stem(result.student)
    write_atomically(folder / f"{name}.md", feedback_markdown(assignment, result))
    write_atomically(folder / f"{name}.html", feedback_html(assignment, result))


def write_reports(assignment: Assignment, results: list[StudentResult], out_dir: Path,
                  sandbox_kind: str = "bubblewrap", *, skipped=(), budget: str = "",
                  progress: str = "", students: bool = True, extra: tuple[str, ...] = ()) -> Path:
    """Write the CSVs, the summary and (with ``students``) each student's feedback, atomically."""
    out_dir = Path(out_dir)
    write_atomically(out_dir / "grades.csv", grades_csv(results))
    write_atomically(out_dir / "totals.csv", totals_csv(results))
    write_atomically(out_dir / "summary.md", summary_markdown(assignment, results, sandbox_kind,
                                                              skipped, budget, progress, extra))
    if students:
        for result in results:
            write_student(assignment, result, out_dir)
    return out_dir / "grades.csv"
