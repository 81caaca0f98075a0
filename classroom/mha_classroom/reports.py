"""The files a teacher opens: ``grades.csv``, ``totals.csv``, ``summary.md``, and for each student
``feedback/<id>.md`` and ``feedback/<id>.html``.

Every text that came from a submission (messages, names) is written with its control, bidi and
zero-width characters as visible escapes (:func:`mha_classroom.text.visible`): ``cat grades.csv``
shows what is there, and a row cannot hide another. Every cell a spreadsheet could read as a
formula (starting with ``= + - @``, tab or carriage return) is prefixed with ``'``; student text in
Markdown sits in code fences longer than any run of backticks inside it, and in HTML is escaped;
each file is capped in size. Nothing depends on time or temporary paths, so grading the same
submissions twice writes the same bytes.
"""

from __future__ import annotations

import csv
import html
import io
import re
from pathlib import Path

from mha_classroom.grade import StudentResult
from mha_classroom.intake import Skipped, safe_id
from mha_classroom.release import write_atomically
from mha_classroom.rubrics import AWAITS, written_questions
from mha_classroom.source import Assignment
from mha_classroom.text import visible

CSV_FIELDS = ("student", "question", "points", "max_points", "feedback")
FEEDBACK_CHARS = 20_000
EVENTS = {
    "invalid": "submissions not graded (unreadable, too large, not a notebook ...)",
    "timeout": "submissions with a cell or a run past its time limit",
    "killed": "runs killed (memory, CPU or file-size limit, or a crash)",
    "memory": "submissions that hit the memory limit (MemoryError)",
    "edited_tests": "submissions with edited test cells (the originals were run)",
    "deleted_tests": "submissions with deleted test cells (the originals were run)",
    "grader_error": "submissions the grader failed on (please report)",
    "copied_value": "submissions with a value answer of another student's variant, not their own "
                    "(those questions scored 0; see copies.csv)",
}


def neutral(value: str) -> str:
    """A CSV cell no spreadsheet runs as a formula.

    Examples
    --------
    >>> neutral("=HYPERLINK(\\"http://x\\")"), neutral("ok")
    ('\\'=HYPERLINK("http://x")', 'ok')
    """
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, its invisible characters escaped, at most ``limit`` characters."""
    text = visible(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cell(text: str) -> str:
    """A CSV cell from any text: one line, escapes visible, no formula."""
    return neutral(one_line(text))


def fenced(text: str) -> list[str]:
    """``text`` (escapes made visible) in a code fence that nothing inside can close."""
    text = visible(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", text, fence]


def _number(value: float) -> str:
    return f"{value:g}"


def grades_csv(results: list[StudentResult]) -> str:
    """One row per student and question, in a stable order."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for result in sorted(results, key=lambda r: r.student):
        for q in result.questions:
            writer.writerow([cell(result.student), cell(q.grade_id), _number(q.points),
                             _number(q.max_points), cell(q.feedback)])
    return buffer.getvalue()


def totals_csv(results: list[StudentResult]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("student", "points", "max_points", "events", "submitted_as"))
    for result in sorted(results, key=lambda r: r.student):  # submitted_as: when the id differs
        writer.writerow([cell(result.student), _number(result.points), _number(result.max_points),
                         cell(" ".join(result.events)), cell(result.original)])
    return buffer.getvalue()


def _sections(result: StudentResult) -> list[tuple[str, str]]:
    """(title, text) of each part of the feedback below the table."""
    parts = [(q.grade_id, q.feedback[:2000]) for q in result.questions if q.points < q.max_points]
    for title, items in (("Errors in your own cells", result.cell_errors),
                         ("Notes from the grader", result.notes)):
        if items:
            parts.append((title, "\n".join(" ".join(i.split())[:600] for i in items)))
    return parts


def feedback_markdown(assignment: Assignment, result: StudentResult) -> str:
    """The feedback file a student reads: score, a table, then each message in a fence."""
    lines = [f"# {assignment.name}: feedback for {result.student}", "",
             f"Score: **{_number(result.points)} / {_number(result.max_points)}**", "",
             "| question | points | result |", "| --- | --- | --- |"]
    for q in result.questions:
        verdict = "passed" if q.points == q.max_points else "see below"
        lines.append(f"| {q.grade_id} | {_number(q.points)} / {_number(q.max_points)} | "
                     f"{verdict} |")
    for written in written_questions(assignment):  # never scored here: a teacher grades them
        lines.append(f"| {written.grade_id} | – / {_number(written.points)} | {AWAITS} |")
    for title, text in _sections(result):
        lines += ["", f"## {title}", "", *fenced(text)]
    text = "\n".join(lines) + "\n"
    if len(text) > FEEDBACK_CHARS:
        text = text[:FEEDBACK_CHARS] + "\n\n(feedback cut: too long)\n"
        text += "`" * 40 + "\n"  # close any fence the cut left open
    return text


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
    """The same feedback as a self-contained page (no script, nothing loaded)."""
    def esc(text: str) -> str:
        return html.escape(visible(text))

    title = f"{assignment.name}: feedback for {result.student}"
    rows = "".join(f"<tr><td>{esc(q.grade_id)}</td><td>{_number(q.points)} / "
                   f"{_number(q.max_points)}</td><td>"
                   f"{'passed' if q.points == q.max_points else 'see below'}</td></tr>"
                   for q in result.questions)
    rows += "".join(f"<tr><td>{esc(w.grade_id)}</td><td>– / {_number(w.points)}</td>"
                    f"<td>{esc(AWAITS)}</td></tr>" for w in written_questions(assignment))
    body = [f"<h1>{esc(title)}</h1>",
            f"<p>Score: <strong>{_number(result.points)} / {_number(result.max_points)}</strong></p>",
            f"<table><tr><th>question</th><th>points</th><th>result</th></tr>{rows}</table>"]
    for heading, text in _sections(result):
        body += [f"<h2>{esc(heading)}</h2>", f"<pre>{esc(text)}</pre>"]
    return _PAGE.format(title=esc(title), body="\n".join(body))[:FEEDBACK_CHARS * 2]


def _collisions(results: list[StudentResult]) -> list[str]:
    """Lines for names that several submissions share (once NFC-normalised and case-folded)."""
    by_name: dict[str, list[str]] = {}
    for result in results:
        by_name.setdefault((result.original or result.student).casefold(), []).append(result.student)
    lines = []
    for name, ids in sorted(by_name.items()):
        if len(ids) > 1:
            lines.append(f"- {len(ids)} submissions are named {one_line(name, 80)} (the same letters, "
                         f"perhaps typed in other capitals or Unicode forms): graded apart as "
                         f"{', '.join(sorted(ids))}")
    return lines


def summary_markdown(assignment: Assignment, results: list[StudentResult], sandbox_kind: str,
                     skipped: tuple[Skipped, ...] | list[Skipped] = (), budget: str = "",
                     progress: str = "") -> str:
    """What happened in the batch, for the teacher."""
    lines = [f"# {assignment.name}: grading summary", "",
             f"- submissions: {len(results)}" + (f" ({progress})" if progress else ""),
             f"- sandbox: {sandbox_kind}" + ("" if sandbox_kind == "bubblewrap" else
                                              " (submissions were run WITHOUT a sandbox)")]
    if budget:
        lines.append(f"- limits: {budget}")
    if results:
        totals = sorted(r.points for r in results)
        lines.append(f"- points: median {_number(totals[len(totals) // 2])} of "
                     f"{_number(results[0].max_points)}")
    for event, meaning in EVENTS.items():
        who = sorted(r.student for r in results if event in r.events)
        if who:
            lines.append(f"- {len(who)} {meaning}: {', '.join(who)}")
    users = [f"{r.student} ({', '.join(r.used_mha)})" for r in sorted(results, key=lambda r: r.student)
             if r.used_mha]
    if users:
        lines.append(f"- {len(users)} submissions used the mha package (answers that needed it fail "
                     f"the NumPy-only test; cells that only compare with it do not): {'; '.join(users)}")
    lines += _collisions(results)
    written = written_questions(assignment)
    if written and results:
        names = ", ".join(f"{w.grade_id} ({_number(w.points)} points)" for w in written)
        lines.append(f"- written answers, not in the points above, await your grade: {names}; "
                     "the answers with their rubrics are in written/ (answers.csv has nbgrader's "
                     "manual_score and manual_comment columns)")
    for entry in skipped:
        lines.append(f"- not graded: `{one_line(entry.name, 120).replace('`', chr(39))}`: "
                     f"{entry.reason}")
    return "\n".join(lines) + "\n"


def write_student(assignment: Assignment, result: StudentResult, out_dir: Path) -> None:
    """Write one student's feedback files (their id is unique and file-name safe)."""
    folder = Path(out_dir) / "feedback"
    name = safe_id(result.student)
    write_atomically(folder / f"{name}.md", feedback_markdown(assignment, result))
    write_atomically(folder / f"{name}.html", feedback_html(assignment, result))


def write_reports(assignment: Assignment, results: list[StudentResult], out_dir: Path,
                  sandbox_kind: str = "bubblewrap", *, skipped=(), budget: str = "",
                  progress: str = "", students: bool = True) -> Path:
    """Write the CSVs, the summary and (with ``students``) each student's feedback, atomically."""
    out_dir = Path(out_dir)
    write_atomically(out_dir / "grades.csv", grades_csv(results))
    write_atomically(out_dir / "totals.csv", totals_csv(results))
    write_atomically(out_dir / "summary.md", summary_markdown(assignment, results, sandbox_kind,
                                                              skipped, budget, progress))
    if students:
        for result in results:
            write_student(assignment, result, out_dir)
    return out_dir / "grades.csv"
