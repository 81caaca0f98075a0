"""The files a teacher opens: ``grades.csv``, ``totals.csv``, ``feedback/<id>.md``, ``summary.md``.

Every cell a spreadsheet could read as a formula (starting with ``= + - @``, tab or carriage
return) is prefixed with ``'``; student text in feedback sits in code fences longer than any run
of backticks inside it; each file is capped in size. Nothing depends on time or temporary paths,
so grading the same submissions twice writes the same bytes.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from mha_classroom.grade import StudentResult
from mha_classroom.release import write_atomically
from mha_classroom.source import Assignment
from mha_classroom.submission import safe_id

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
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fenced(text: str) -> list[str]:
    """``text`` in a code fence that nothing inside can close."""
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
            writer.writerow([neutral(result.student), neutral(q.grade_id), _number(q.points),
                             _number(q.max_points), neutral(one_line(q.feedback))])
    return buffer.getvalue()


def totals_csv(results: list[StudentResult]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("student", "points", "max_points", "events", "submitted_as"))
    for result in sorted(results, key=lambda r: r.student):  # submitted_as: when the id differs
        writer.writerow([neutral(result.student), _number(result.points),
                         _number(result.max_points), " ".join(result.events), neutral(result.original)])
    return buffer.getvalue()


def feedback_markdown(assignment: Assignment, result: StudentResult) -> str:
    """The feedback file a student reads: score, a table, then each message in a fence."""
    lines = [f"# {assignment.name}: feedback for {result.student}", "",
             f"Score: **{_number(result.points)} / {_number(result.max_points)}**", "",
             "| question | points | result |", "| --- | --- | --- |"]
    for q in result.questions:
        verdict = "passed" if q.points == q.max_points else "see below"
        lines.append(f"| {q.grade_id} | {_number(q.points)} / {_number(q.max_points)} | "
                     f"{verdict} |")
    for q in result.questions:
        if q.points < q.max_points:
            lines += ["", f"## {q.grade_id}", "", *fenced(q.feedback[:2000])]
    for title, items in (("Errors in your own cells", result.cell_errors),
                         ("Notes from the grader", result.notes)):
        if items:
            lines += ["", f"## {title}", "", *fenced("\n".join(one_line(i, 600) for i in items))]
    text = "\n".join(lines) + "\n"
    if len(text) > FEEDBACK_CHARS:
        text = text[:FEEDBACK_CHARS] + "\n\n(feedback cut: too long)\n"
        text += "`" * 40 + "\n"  # close any fence the cut left open
    return text


def summary_markdown(assignment: Assignment, results: list[StudentResult],
                     sandbox_kind: str) -> str:
    """What happened in the batch, for the teacher."""
    lines = [f"# {assignment.name}: grading summary", "",
             f"- submissions: {len(results)}",
             f"- sandbox: {sandbox_kind}" + ("" if sandbox_kind == "bubblewrap" else
                                              " (submissions were run WITHOUT a sandbox)")]
    if results:
        totals = sorted(r.points for r in results)
        lines.append(f"- points: median {_number(totals[len(totals) // 2])} of "
                     f"{_number(results[0].max_points)}")
    for event, meaning in EVENTS.items():
        who = sorted(r.student for r in results if event in r.events)
        if who:
            lines.append(f"- {len(who)} {meaning}: {', '.join(who)}")
    return "\n".join(lines) + "\n"


def write_reports(assignment: Assignment, results: list[StudentResult], out_dir: Path,
                  sandbox_kind: str = "bubblewrap") -> Path:
    """Write the CSVs, one feedback file per student and the summary, each atomically."""
    out_dir = Path(out_dir)
    write_atomically(out_dir / "grades.csv", grades_csv(results))
    write_atomically(out_dir / "totals.csv", totals_csv(results))
    write_atomically(out_dir / "summary.md", summary_markdown(assignment, results, sandbox_kind))
    for result in results:  # ids are unique and file-name safe (submission.unique_ids)
        write_atomically(out_dir / "feedback" / f"{safe_id(result.student)}.md",
                         feedback_markdown(assignment, result))
    return out_dir / "grades.csv"
