"""Command line: ``mha-classroom {release,grade,validate,nbgrader} --help``.

``python -m mha_classroom`` runs the same program, under the same name.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from mha_classroom.batch import grade_batch
from mha_classroom.release import export_nbgrader, release
from mha_classroom.sandbox import Limits, SandboxUnavailable, get_sandbox
from mha_classroom.source import AssignmentError, MissingExtra, load_assignment
from mha_classroom.validate import validate

EPILOG = """\
examples:
  mha-classroom release assignments/*.md --out release/
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
            write = release if args.command == "release" else export_nbgrader
            for source in args.sources:
                print(f"wrote {write(load_assignment(source), args.out)}")
            return 0
        if args.command == "validate":
            return _validate(args.sources, args.trust_submissions)
        limits = Limits(cell_timeout=args.cell_timeout, probe_timeout=args.cell_timeout,
                        timeout=args.timeout, memory_mb=args.memory_mb)
        assignment = load_assignment(args.source)
        sandbox = get_sandbox(args.trust_submissions)
        sandbox.check_private(args.out)
        start = time.perf_counter()
        results, skipped, resumed = grade_batch(assignment, args.submissions, args.out, limits,
                                                sandbox, jobs=args.jobs, resume=not args.fresh)
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
