"""What the course promises and where it checks it, read from the chapters' and assignments' metadata.

A chapter lists its learning objectives in its front matter, one per bullet of its "you will be able
to" list, each with the exercises (by label) that check it::

    mha:
      objectives:
        - id: sa-softmax
          text: Write a softmax that cannot overflow, and say why the textbook formula does
          exercises: [ex-sa-check, ex-sa-shift]

An assignment maps each of its questions (a test cell's ``grade_id``, or a written answer's id) to
the objectives it assesses, and holds the rubric of each written answer::

    mha:
      assesses:
        softmax_rows: [sa-softmax]
        why_scale: [sa-scale]
      written:
        why_scale:
          points: 3
          criteria:
            - criterion: The cause
              points: 2
              levels:
                - {points: 2, example: ...}
                - {points: 1, example: ...}
                - {points: 0, example: ...}

A written answer is a Markdown cell of its own whose first line is
``<!-- written_answer: <id>  points: <n> -->`` and whose text is nbgrader's stub, ``YOUR ANSWER HERE``
(the teaching guide, ``chapters/teaching_guide.md``, describes the format for the grader's side).
:func:`problems` lists every way these disagree with each other or with the pages; the objectives
map of the teaching guide is drawn from them by :mod:`book.objectives_map`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from book.reading_time import minutes_for, page_time, round_minutes
from book.toc import front_matter, notebook_pages
from mha_classroom.source import WRITTEN_HEADER  # the grader's reading of the marker, shared

#: Pages of the toc that teach no objective of their own.
NOT_TAUGHT = ("intro", "chapters/run_locally", "chapters/teachers", "chapters/teaching_guide")
WRITTEN_STUB = "YOUR ANSWER HERE"
TEST_HEADER = re.compile(r"^#\s*grade_id:\s*(?P<id>[A-Za-z0-9_.-]+)\s+points:\s*(?P<points>\S+)\s*$")
QUESTION_HEADING = re.compile(r"^## (?P<number>\d+)\. (?P<title>.+?)(?: \([^()]*points?[^()]*\))?$",
                              re.MULTILINE)
EXERCISE_LABEL = re.compile(r"^`{3,}\{exercise\}\s*(?P<title>[^\n]*)\n:label:\s*(?P<label>\S+)", re.MULTILINE)
PROMISE = re.compile(r"you will be able to:?\s*\n\s*\n?(?P<bullets>(?:- .*\n(?: {2,}.*\n)*)+)")


@dataclass(frozen=True)
class Objective:
    """One thing a chapter promises its reader: ``id``, short ``text`` and the ``exercises`` checking it."""

    id: str
    text: str
    chapter: str
    exercises: tuple[str, ...]


@dataclass(frozen=True)
class Chapter:
    """A learner chapter: its docname, title, part, objectives, exercises and time box."""

    docname: str
    title: str
    part: str
    objectives: tuple[Objective, ...]
    promises: tuple[str, ...]
    exercises: dict[str, str]  # label -> title, in the chapter's order
    minutes: tuple[int, int]  # (read and run, exercises), everything in it, by book.reading_time's model


@dataclass(frozen=True)
class Question:
    """A graded part of an assignment: a test cell (``kind`` "auto") or a written answer ("written")."""

    id: str
    number: int
    title: str
    points: float
    kind: str
    objectives: tuple[str, ...]


@dataclass(frozen=True)
class Assignment:
    """An assignment source: its short name (``A1``), title, questions and written rubrics."""

    path: Path
    short: str
    title: str
    questions: tuple[Question, ...]
    rubrics: dict
    unmapped: tuple[str, ...]  # ids in ``assesses`` that name no question
    cells: tuple[tuple[str, str], ...]  # (cell_type, source) as jupytext reads them


@dataclass(frozen=True)
class Course:
    chapters: tuple[Chapter, ...]
    assignments: tuple[Assignment, ...]

    @property
    def objectives(self) -> dict[str, Objective]:
        return {o.id: o for chapter in self.chapters for o in chapter.objectives}

    def assessed_by(self, objective_id: str) -> list[tuple[Assignment, Question]]:
        """The assignment questions that assess one objective, in course order."""
        return [(a, q) for a in self.assignments for q in a.questions if objective_id in q.objectives]


def toc_parts(root: Path) -> list[tuple[str, list[str]]]:
    """``(caption, [docname, ...])`` for each part of ``_toc.yml``, in book order."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text(encoding="utf8"))
    return [(part["caption"], [str(Path(entry["file"]).with_suffix("")) if entry["file"].endswith(".md")
                               else entry["file"] for entry in part.get("chapters", [])])
            for part in toc.get("parts", [])]


def read_chapter(path: Path, docname: str, part: str) -> Chapter:
    """One chapter's objectives (front matter), promises (bullets), exercises and time box."""
    text = path.read_text(encoding="utf8")
    meta = front_matter(path).get("mha") or {}
    objectives = tuple(
        Objective(str(item.get("id", "")), str(item.get("text", "")).strip(), docname,
                  tuple(item.get("exercises") or ()))
        for item in meta.get("objectives") or ())
    found = PROMISE.search(text)
    promises = tuple(re.split(r"\n(?=- )", found["bullets"].strip())) if found else ()
    title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")), docname)
    page = page_time(path, docname)  # the reading-time model the "Before you start" boxes state
    minutes = (round_minutes(minutes_for(page.all_words, page.all_code_lines)),
               sum(exercise.minutes for exercise in page.exercises))
    exercises = {m["label"]: m["title"].strip() for m in EXERCISE_LABEL.finditer(text)}
    return Chapter(docname, title, part, objectives, promises, exercises, minutes)


def read_assignment(path: Path) -> Assignment:
    """An assignment's questions (test cells and written answers, under their ``## N.`` headings)."""
    import jupytext

    notebook = jupytext.read(path, fmt="md:myst")
    meta = notebook.metadata.get("mha") or {}
    assesses = meta.get("assesses") or {}
    questions, number, title = [], 0, ""
    cells = tuple((cell.cell_type, cell.source) for cell in notebook.cells)
    for cell_type, source in cells:
        first = source.splitlines()[0].strip() if source.strip() else ""
        header = (TEST_HEADER if cell_type == "code" else WRITTEN_HEADER).match(first)
        if cell_type == "markdown":
            for heading in QUESTION_HEADING.finditer(source):
                number, title = int(heading["number"]), heading["title"].strip()
        if header:
            questions.append(Question(header["id"], number, title, float(header["points"]),
                                      "auto" if cell_type == "code" else "written",
                                      tuple(assesses.get(header["id"]) or ())))
    heading = next((line[2:].strip() for _, s in cells for line in s.splitlines()
                    if line.startswith("# ")), path.stem)
    known = {q.id for q in questions}
    short = f"A{int(path.stem.split('-')[0])}" if path.stem[:2].isdigit() else path.stem
    return Assignment(path, short, heading, tuple(questions), dict(meta.get("written") or {}),
                      tuple(sorted(set(assesses) - known)), cells)


def read_course(root: Path) -> Course:
    """Every learner chapter of the toc (in book order) and every assignment in ``assignments/``."""
    root = Path(root)
    pages = notebook_pages(root)
    chapters = [read_chapter(pages[docname], docname, caption)
                for caption, docnames in toc_parts(root) for docname in docnames
                if docname in pages and docname not in NOT_TAUGHT]
    assignments = [read_assignment(path) for path in sorted((root / "assignments").glob("*.md"))]
    return Course(tuple(chapters), tuple(assignments))


def chapter_problems(chapter: Chapter) -> list[str]:
    """Objectives that do not match the chapter's promises or its exercises."""
    where, found = chapter.docname, []
    if not chapter.objectives:
        return [f"{where}: no 'mha: {{objectives: [...]}}' in the front matter"]
    if len(chapter.objectives) != len(chapter.promises):
        found.append(f"{where}: {len(chapter.objectives)} objectives in the front matter, but "
                     f"{len(chapter.promises)} bullets under 'you will be able to': one per bullet")
    for objective in chapter.objectives:
        if not re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", objective.id):
            found.append(f"{where}: objective id {objective.id!r} is not of the form 'prefix-words'")
        if not objective.text or len(objective.text) > 110:
            found.append(f"{where}: objective {objective.id!r} needs a text of 1 to 110 characters")
        for label in objective.exercises:
            if label not in chapter.exercises:
                found.append(f"{where}: objective {objective.id!r} names exercise {label!r}, "
                             "which this chapter does not define")
    mapped = {label for objective in chapter.objectives for label in objective.exercises}
    for label in chapter.exercises:
        if label not in mapped:
            found.append(f"{where}: exercise {label!r} checks no objective (add it to one)")
    return found


def written_problems(assignment: Assignment) -> list[str]:
    """Written answers whose cell, stub or rubric is missing or does not add up."""
    where, found = assignment.path.name, []
    written = {q.id: q for q in assignment.questions if q.kind == "written"}
    for cell_type, source in assignment.cells:
        lines = source.strip().splitlines()
        if cell_type == "markdown" and lines and WRITTEN_HEADER.match(lines[0].strip()):
            body = "\n".join(lines[1:]).strip()
            if body != WRITTEN_STUB:
                found.append(f"{where}: written answer {lines[0].strip()!r} must hold only "
                             f"{WRITTEN_STUB!r} under its marker (the release copies it as it is)")
        elif "written_answer" in source:
            found.append(f"{where}: a 'written_answer' marker must be the first line of a Markdown cell")
    for name in sorted(set(assignment.rubrics) - set(written)):
        found.append(f"{where}: rubric {name!r} has no written answer cell")
    for name, question in written.items():
        rubric = assignment.rubrics.get(name)
        if not isinstance(rubric, dict):
            found.append(f"{where}: written answer {name!r} has no rubric under mha.written.{name}")
            continue
        found += [f"{where}, rubric {name!r}: {problem}"
                  for problem in rubric_problems(rubric, question.points)]
    return found


def rubric_problems(rubric: dict, points: float) -> list[str]:
    """What is wrong with one rubric: its points, criteria and the example answers at each level."""
    found = []
    if rubric.get("points") != points:
        found.append(f"points {rubric.get('points')!r} differ from the answer cell's {points:g}")
    criteria = rubric.get("criteria") or []
    if not criteria:
        return [*found, "no criteria"]
    total = sum(c.get("points", 0) for c in criteria if isinstance(c, dict))
    if total != points:
        found.append(f"its criteria add up to {total:g} points, not {points:g}")
    for number, criterion in enumerate(criteria, start=1):
        if not isinstance(criterion, dict) or not str(criterion.get("criterion", "")).strip():
            found.append(f"criterion {number} needs a 'criterion' (what is judged)")
            continue
        levels = criterion.get("levels") or []
        awarded = [level.get("points") for level in levels if isinstance(level, dict)]
        if sorted(awarded, reverse=True) != awarded or len(set(awarded)) != len(awarded):
            found.append(f"criterion {number}: levels must go from the most points down, each once")
        if not awarded or awarded[0] != criterion.get("points") or awarded[-1] != 0:
            found.append(f"criterion {number}: levels must run from {criterion.get('points')!r} "
                         "points down to 0")
        if any(not str(level.get("example", "")).strip() for level in levels if isinstance(level, dict)):
            found.append(f"criterion {number}: every level needs an example answer")
    return found


def problems(course: Course) -> list[str]:
    """Every disagreement between objectives, pages, exercises, questions and rubrics ([] when none)."""
    found = [problem for chapter in course.chapters for problem in chapter_problems(chapter)]
    objectives, seen = course.objectives, set()
    for chapter in course.chapters:
        for objective in chapter.objectives:
            if objective.id in seen:
                found.append(f"objective id {objective.id!r} is used twice")
            seen.add(objective.id)
    for assignment in course.assignments:
        where = assignment.path.name
        found += [f"{where}: 'assesses' names {name!r}, which is no question of it"
                  for name in assignment.unmapped]
        for question in assignment.questions:
            if not question.number:
                found.append(f"{where}: {question.id!r} sits under no '## N. Title' heading")
            if question.id != "numpy_only" and not question.objectives:
                found.append(f"{where}: question {question.id!r} assesses no objective "
                             "(list it under mha.assesses)")
            found += [f"{where}: question {question.id!r} assesses {name!r}, which no chapter promises"
                      for name in question.objectives if name not in objectives]
        found += written_problems(assignment)
    for objective in objectives.values():
        if not objective.exercises and not course.assessed_by(objective.id):
            found.append(f"{objective.chapter}: objective {objective.id!r} is checked by no exercise "
                         "and assessed by no assignment question")
    return found
