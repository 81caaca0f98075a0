"""Command line: ``mha-classroom {release,grade,validate,nbgrader} --help``.

``python -m mha_classroom`` runs the same program, under the same name.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mha_classroom.batch import grade_batch
from mha_classroom.release import export_nbgrader, release, write_atomically
from mha_classroom.reports import write_reports
from mha_classroom.rubrics import export_written
from mha_classroom.sandbox import Limits, SandboxUnavailable, get_sandbox
from mha_classroom.source import AssignmentError, MissingExtra, load_assignment
from mha_classroom.validate import validate
from mha_classroom.variants import (
    apply_copies,
    check_seed,
    copies_csv,
    draws,
    find_copies,
    for_student,
    read_students,
)

EPILOG = """\
examples:
  mha-classroom release assignments/*.md --out release/
  mha-classroom release assignments/01-self-attention.md --students class.txt \
      --seed-file ~/secret-seed.txt --out release/
  mha-classroom grade assignments/01-self-attention.md submitted/ --out grades/
  mha-classroom validate assignments/*.md
  mha-classroom nbgrader assignments/*.md --out source/

The assignment format (nbgrader markers, '# grade_id: <id>  points: <n>' test headers) is described
in the teachers' guide: chapters/teachers.md.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mha-classroom", epilog=EPILOG,  # argparse would say "__main__.py" under -m
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Release and grade the course's assignments (nbgrader markers, no nbgrader).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rel = commands.add_parser(
        "release", help="write the student notebooks (solutions stubbed, hidden tests removed)",
        description="Write <out>/<assignment>.ipynb for each source: every solution region becomes "
                    "'# YOUR CODE HERE' + 'raise NotImplementedError()', hidden tests are removed. "
                    "Unbalanced or unknown markers are an error and nothing is written for that "
                    "source.")
    rel.add_argument("sources", nargs="+", type=Path, help="assignment sources (.md or .ipynb)")
    rel.add_argument("--out", type=Path, default=Path("release"), help="folder (default: release)")
    _variant_options(rel, "write <out>/<student>/<assignment>.ipynb, each student's own copy: the "
                          "variant cell's numbers drawn from the seed and the student id")

    grade = commands.add_parser(
        "grade", help="grade a folder of submissions into a CSV and feedback files",
        description="Run each submission's own cells (<student>.ipynb, or a <student>/ folder "
                    "holding <assignment>.ipynb) in a bubblewrap sandbox, where they only answer "
                    "the tests' calls; the tests, hidden ones included, run in the grader on those "
                    "answers. Writes <out>/grades.csv (student, question, points, max_points, "
                    "feedback), <out>/totals.csv, <out>/summary.md and "
                    "<out>/feedback/<student>.md and .html, each student's as soon as they are "
                    "graded; a second run into the same <out> grades only what changed.")
    grade.add_argument("source", type=Path, help="the assignment source (.md or .ipynb)")
    grade.add_argument("submissions", type=Path, help="folder of submissions")
    grade.add_argument("--out", type=Path, default=Path("grades"), help="folder (default: grades)")
    grade.add_argument("--jobs", type=int, default=2, help="submissions graded at once (default 2)")
    grade.add_argument("--cell-timeout", type=float, default=Limits.cell_timeout,
                       help="seconds per cell and per call of an answer (default %(default)s)")
    grade.add_argument("--timeout", type=float, default=Limits.timeout,
                       help="seconds per sandboxed run; a student gets at most 3 runs' worth "
                            "(default %(default)s)")
    grade.add_argument("--memory-mb", type=int, default=Limits.memory_mb,
                       help="memory per submission in MiB, all its processes together (default "
                            "%(default)s; summary.md says how it was enforced)")
    grade.add_argument("--fresh", action="store_true",
                       help="grade every submission again (by default a run into the same --out "
                            "resumes: unchanged submissions keep their results)")
    grade.add_argument("--trust-submissions", action="store_true",
                       help="run submissions WITHOUT a sandbox (only where bubblewrap is missing, "
                            "and only for code you trust)")
    _variant_options(grade, "grade each student against their own copy (the seed of the release); "
                            "value answers of another student's copy score 0 and are listed in "
                            "<out>/copies.csv (--students: whose copies count, default: everyone "
                            "graded)")

    val = commands.add_parser(
        "validate", help="check sources before release: full marks, zero for the stub, no leak",
        description="Grade each source's instructor version (must score every point) and "
                    "released version (must score 0) in the sandbox, and look for solution or "
                    "hidden-test lines in the released notebook. Exit status 1 if anything is off.")
    val.add_argument("sources", nargs="+", type=Path, help="assignment sources (.md or .ipynb)")
    val.add_argument("--trust-submissions", action="store_true",
                     help="run the two notebooks without a sandbox")

    nbg = commands.add_parser(
        "nbgrader", help="write instructor notebooks with nbgrader metadata",
        description="For teachers who use nbgrader: write <out>/<assignment>/<assignment>.ipynb "
                    "with nbgrader cell metadata (solution, grade + points, locked), markers kept, "
                    "ready for nbgrader's source/ folder.")
    nbg.add_argument("sources", nargs="+", type=Path, help="assignment sources (.md or .ipynb)")
    nbg.add_argument("--out", type=Path, default=Path("source"), help="folder (default: source)")
    return parser


def _variant_options(parser: argparse.ArgumentParser, what: str) -> None:
    group = parser.add_argument_group("a copy per student", what)
    group.add_argument("--students", type=Path, help="file of student ids, one a line")
    group.add_argument("--seed-file", type=Path,
                       help="file holding the teacher's secret seed (at least 8 characters; keep "
                            "it, and never hand it out)")


def _seed(args: argparse.Namespace) -> str | None:
    if args.seed_file is None:
        if args.command == "release" and args.students is not None:
            raise ValueError("--students needs --seed-file (the secret the copies are drawn from)")
        return None
    return check_seed(args.seed_file.read_text(encoding="utf-8"))


def _release(args: argparse.Namespace) -> int:
    seed = _seed(args) if args.command == "release" else None
    for source in args.sources:
        assignment = load_assignment(source)
        if seed is None:
            write = release if args.command == "release" else export_nbgrader
            print(f"wrote {write(assignment, args.out)}")
            continue
        if args.students is None:
            raise ValueError("--seed-file needs --students (whose copies to write)")
        if not draws(assignment):
            raise AssignmentError(f"{source}: no variant cell ('# variant' first line), so every "
                                  "student would get the same copy: release it without --seed-file")
        students = read_students(args.students)
        for student in students:
            release(for_student(assignment, seed, student), args.out / student)
        print(f"wrote {len(students)} copies of {assignment.name} to {args.out}/<student>/")
    return 0


def _copies(assignment, seed: str, students_file: Path | None, results: list, out: Path) -> list:
    """Find value answers of another student's copy, zero them and write copies.csv."""
    answers = {r.student: dict(r.values) for r in results if r.values}
    students = read_students(students_file) if students_file else [r.student for r in results]
    copies = find_copies(assignment, seed, answers, students)
    write_atomically(out / "copies.csv", copies_csv(copies))
    return apply_copies(results, copies)


def _validate(sources: list[Path], trust: bool) -> int:
    failures = 0
    sandbox = get_sandbox(trust)
    for source in sources:
        assignment = load_assignment(source)
        problems = validate(assignment, sandbox=sandbox)
        failures += bool(problems)
        status = "ok" if not problems else "NOT READY"
        print(f"{source}: {status} ({len(assignment.tests)} tests, "
              f"{assignment.max_points:g} points)")
        for problem in problems:
            print(f"  - {problem}")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command in ("release", "nbgrader"):
            return _release(args)
        if args.command == "validate":
            return _validate(args.sources, args.trust_submissions)
        limits = Limits(cell_timeout=args.cell_timeout, probe_timeout=args.cell_timeout,
                        timeout=args.timeout, memory_mb=args.memory_mb)
        assignment = load_assignment(args.source)
        seed = _seed(args)
        own = (lambda student: for_student(assignment, seed, student)) if seed else None
        sandbox = get_sandbox(args.trust_submissions)
        sandbox.check_private(args.out)
        start = time.perf_counter()
        results, skipped, resumed = grade_batch(assignment, args.submissions, args.out, limits,
                                                sandbox, jobs=args.jobs, resume=not args.fresh,
                                                assignment_for=own)
        if seed:
            results = _copies(assignment, seed, args.students, results, args.out)
            budget = sandbox.budget.describe(limits.memory_mb, limits.nproc) \
                if sandbox.kind == "bubblewrap" else ""
            write_reports(assignment, results, args.out, sandbox.kind, skipped=skipped,
                          budget=budget)
        export_written(assignment, args.submissions, args.out)
        seconds = time.perf_counter() - start
    except SandboxUnavailable as error:
        print(f"error: refusing to run submissions: {error}", file=sys.stderr)
        return 3
    except MissingExtra as error:
        print(f"error: {error}", file=sys.stderr)
        return 4
    except (AssignmentError, ValueError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for result in results:
        print(f"{result.student}: {result.points:g} / {result.max_points:g}")
    if resumed:
        print(f"{len(resumed)} of them unchanged since an earlier run into {args.out}: results "
              "kept (--fresh grades them again)")
    if skipped:
        print(f"{len(skipped)} other entr{'y' if len(skipped) == 1 else 'ies'} not graded: "
              f"see {args.out / 'summary.md'}")
    print(f"graded {len(results)} submission(s) in {seconds:.1f} s; wrote "
          f"{args.out / 'grades.csv'} and {args.out / 'summary.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
