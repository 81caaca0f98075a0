"""Draw the teaching guide's tables from the chapters' and assignments' metadata.

The guide (``chapters/teaching_guide.md``) holds three generated regions, each between two MyST
comment lines, ``% <name> generated ...`` and ``% </name>``:

* ``chapters``: every learner chapter with its time box, its number of objectives and the
  assignments that assess it;
* ``objectives``: each chapter's objectives, numbered ``<chapter>.<objective>``, with the exercises that
  check them and the assignment questions that assess them;
* ``assignments``: each assignment's questions, points, how they are graded, and the objectives.

Run ``python -m book.objectives_map --write`` after changing an objective, an exercise label or an
assignment question; ``--check`` (what the tests run) exits with status 1 when the page is stale or
the metadata disagrees with the pages (:func:`book.assessment.problems`).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from book.assessment import Course, problems, read_course

ROOT = Path(__file__).resolve().parents[1]
GUIDE = Path("chapters") / "teaching_guide.md"
REGIONS = ("chapters", "objectives", "assignments")
_REGION = re.compile(r"(?P<head>^% <(?P<name>[a-z]+)> generated[^\n]*\n)(?P<body>.*?)"
                     r"(?P<tail>^% </(?P=name)>$)", re.MULTILINE | re.DOTALL)


def numbering(course: Course) -> dict[str, str]:
    """Objective id -> ``"<chapter>.<objective>"``, chapters counted in book order from 1."""
    return {objective.id: f"{c}.{o}" for c, chapter in enumerate(course.chapters, start=1)
            for o, objective in enumerate(chapter.objectives, start=1)}


def _doc(docname: str) -> str:
    return f"{{doc}}`/{docname}`"


def _exercise(title: str, label: str) -> str:
    """A link to an exercise that reads as its title (the label alone renders "Exercise 14")."""
    plain = title and not set(title) & set("`<>")
    return f"{{ref}}`{title} <{label}>`" if plain else f"{{ref}}`{label}`"


def _points(value: float) -> str:
    return f"{value:g}"


def _questions(course: Course, objective_id: str) -> str:
    """``A1 Q1, Q2; A5 Q3``: the assignment questions assessing one objective."""
    groups: dict[str, list[str]] = {}
    for assignment, question in course.assessed_by(objective_id):
        numbers = groups.setdefault(assignment.short, [])
        if f"Q{question.number}" not in numbers:
            numbers.append(f"Q{question.number}")
    return "; ".join(f"{short} {', '.join(numbers)}" for short, numbers in groups.items()) or "—"


def render_chapters(course: Course) -> str:
    """The course at a glance: one row per chapter, with the totals (three columns: a phone's width)."""
    rows = ["| Chapter | Read and run, exercises | Assessed in |", "| --- | --- | --- |"]
    read = practice = 0
    for number, chapter in enumerate(course.chapters, start=1):
        minutes = chapter.minutes
        read, practice = read + minutes[0], practice + minutes[1]
        shorts = sorted({a.short for o in chapter.objectives for a, _ in course.assessed_by(o.id)})
        rows.append(f"| {number} · {_doc(chapter.docname)} | {minutes[0]} + {minutes[1]} min | "
                    f"{', '.join(shorts) or '—'} |")
    rows.append(f"| **All {len(course.chapters)} chapters, {len(course.objectives)} objectives** | "
                f"**{read / 60:.1f} h + {practice / 60:.1f} h** | |")
    return "\n".join(rows) + "\n"


def render_objectives(course: Course) -> str:
    """One table per chapter: objective, the exercises that check it, the questions that assess it."""
    codes, blocks = numbering(course), []
    for number, chapter in enumerate(course.chapters, start=1):
        rows = [f"**{number} · {_doc(chapter.docname)}**", "",
                "| Objective | Checked by the exercises | Assessed in |", "| --- | --- | --- |"]
        for objective in chapter.objectives:
            exercises = "; ".join(_exercise(chapter.exercises.get(label, ""), label)
                                  for label in objective.exercises) or "—"
            rows.append(f"| {codes[objective.id]} {objective.text} | {exercises} | "
                        f"{_questions(course, objective.id)} |")
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks)


def render_assignments(course: Course) -> str:
    """One table per assignment: its questions, points, grading and objectives."""
    codes, blocks = numbering(course), []
    for assignment in course.assignments:
        auto = sum(q.points for q in assignment.questions if q.kind == "auto")
        by_hand = sum(q.points for q in assignment.questions if q.kind == "written")
        rows = [f"**{assignment.short} · {assignment.title}** (`{assignment.path.name}`): "
                f"{_points(auto)} points graded automatically, {_points(by_hand)} by hand", "",
                "| Q | Question | Points | Objectives |", "| --- | --- | --- | --- |"]
        by_number: dict[int, list] = {}
        for question in assignment.questions:
            by_number.setdefault(question.number, []).append(question)
        for number, parts in by_number.items():
            points = _points(sum(q.points for q in parts))
            graded = f"{points}, by hand" if all(q.kind == "written" for q in parts) else points
            objectives = {codes[o] for q in parts for o in q.objectives if o in codes}
            shown = ", ".join(sorted(objectives, key=lambda code: tuple(map(int, code.split("."))))) or "—"
            rows.append(f"| {number} | {parts[0].title} | {graded} | {shown} |")
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks)


def render(course: Course) -> dict[str, str]:
    """The body of each generated region, by name, between blank lines (so that MyST ends a table
    before the region's closing comment)."""
    bodies = {"chapters": render_chapters(course), "objectives": render_objectives(course),
              "assignments": render_assignments(course)}
    return {name: f"\n{body}\n" for name, body in bodies.items()}


def regions(text: str) -> dict[str, str]:
    """The generated regions found in a page, by name (their bodies, as written)."""
    return {match["name"]: match["body"] for match in _REGION.finditer(text)}


def update(text: str, bodies: dict[str, str]) -> str:
    """``text`` with each generated region's body replaced; every region must already be there."""
    missing = [name for name in bodies if name not in regions(text)]
    if missing:
        raise ValueError(f"the guide has no generated region {missing[0]!r}: add the two lines "
                         f"'% <{missing[0]}> generated ...' and '% </{missing[0]}>'")

    def body(match):
        return match["head"] + bodies[match["name"]] + match["tail"]

    return _REGION.sub(body, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m book.objectives_map", description=__doc__.split("\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="rewrite the guide's generated tables")
    action.add_argument("--check", action="store_true", help="exit 1 if the guide or the metadata is off")
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's folder (default: this clone)")
    args = parser.parse_args(argv)
    course = read_course(args.root)
    if found := problems(course):
        print("\n".join(f"- {problem}" for problem in found), file=sys.stderr)
        return 1
    path = args.root / GUIDE
    text = path.read_text(encoding="utf8")
    updated = update(text, render(course))
    if args.write:
        path.write_text(updated, encoding="utf8")
        print(f"wrote {GUIDE}")
        return 0
    if updated != text:
        stale = [name for name, body in render(course).items() if regions(text).get(name) != body]
        print(f"{GUIDE}: the generated tables {stale} are stale: run python -m book.objectives_map --write",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
