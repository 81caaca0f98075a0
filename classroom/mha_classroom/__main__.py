"""Command line: ``mha-classroom {release,grade,validate,nbgrader,written} --help``.

``python -m mha_classroom`` runs the same program, under the same name. What each command does is
in :mod:`mha_classroom.commands`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import mha
import mha_classroom
from mha_classroom.commands import (
    NothingGraded,
    grade_command,
    release_command,
    validate_command,
    written_command,
)
from mha_classroom.records import default_key_path
from mha_classroom.sandbox import Limits, SandboxUnavailable
from mha_classroom.source import AssignmentError, MissingExtra

EPILOG = """\
examples:
  mha-classroom release assignments/*.md --out release/
  mha-classroom release assignments/01-self-attention.md --students class.txt \
      --seed-file ~/mha-seeds/class.seed --out release/   # writes the seed file if missing
  mha-classroom grade assignments/01-self-attention.md submitted/ --out grades/
  mha-classroom validate assignments/*.md
  mha-classroom nbgrader assignments/*.md --out source/
  mha-classroom written grades/written/answers.csv --to-nbgrader course/gradebook.db

The assignment format (nbgrader markers, '# grade_id: <id>  points: <n>' test headers) is described
in the teachers' guide: chapters/teachers.md.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mha-classroom", epilog=EPILOG,  # argparse would say "__main__.py" under -m
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Release and grade the course's assignments (nbgrader markers, no nbgrader).")
    parser.add_argument("--version", action="version",
                        version=f"mha-classroom {mha_classroom.__version__} (mha-course "
                                f"{mha.__version__}, {Path(mha.__file__).parent})")
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
                          "variant cell's numbers drawn from the seed and the student id. The "
                          "notebooks carry nbgrader's metadata: nbgrader autograde grades them in a "
                          "course made with `mha-classroom nbgrader`, each copy on its own numbers")

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
    grade.add_argument("--record-key", type=Path,
                       help="the key that signs the progress records a run resumes from, kept "
                            f"outside --out (default {default_key_path()}, made on first use)")
    grade.add_argument("--trust-submissions", action="store_true",
                       help="run submissions WITHOUT a sandbox (only where bubblewrap is missing, "
                            "and only for code you trust)")
    _variant_options(grade, "grade each student against the copy released to their id (the seed "
                            "of the release, and the class list); answers that match another "
                            "student's copy on several independent values are listed, with the "
                            "chance of that, in <out>/copies.csv, for you only: points and "
                            "feedback do not change")

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
                    "with nbgrader cell metadata (solution, grade + points, locked; the variant "
                    "cell unlocked, so that per-student copies keep their numbers), markers kept, "
                    "ready for nbgrader's source/ folder. The notebooks `release` writes carry the "
                    "same metadata, so nbgrader autograde grades them in that course too.")
    nbg.add_argument("sources", nargs="+", type=Path, help="assignment sources (.md or .ipynb)")
    nbg.add_argument("--out", type=Path, default=Path("source"), help="folder (default: source)")

    written = commands.add_parser(
        "written", help="load the written-answer scores you typed into nbgrader's gradebook",
        description="Read <grades>/written/answers.csv with manual_score (and manual_comment) filled "
                    "in, and store each score in nbgrader's gradebook as the formgrader would: the "
                    "answer's grade gets the score and the comment, and no longer needs a manual "
                    "grade. Rows left blank are skipped; a row that is not a score between 0 and "
                    "max_score, or that matches no grade, is reported (exit status 1).")
    written.add_argument("answers", type=Path, help="the filled written/answers.csv")
    written.add_argument("--to-nbgrader", type=Path, required=True, metavar="GRADEBOOK",
                         help="the nbgrader course's gradebook.db")
    written.add_argument("--assignment", help="nbgrader's name of the assignment and notebook "
                                              "(default: the CSV's assignment column)")
    return parser


def _variant_options(parser: argparse.ArgumentParser, what: str) -> None:
    group = parser.add_argument_group("a copy per student", what)
    group.add_argument("--students", type=Path,
                       help="the class list: one student id a line (any script; ids that differ only "
                            "in case are refused); only its ids are graded")
    group.add_argument("--seed-file", type=Path,
                       help="the teacher's secret seed; release writes a new 256-bit one when the "
                            "file does not exist (keep it outside the folders students receive, "
                            "and never hand it out)")
    group.add_argument("--force-weak-seed", action="store_true",
                       help="accept a seed the grader estimates under 128 bits (only for copies "
                            "already handed out with it)")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = {"release": release_command, "nbgrader": release_command, "validate": validate_command,
                "grade": grade_command, "written": written_command}
    try:
        return commands[args.command](args)
    except SandboxUnavailable as error:
        print(f"error: refusing to run submissions: {error}", file=sys.stderr)
        return 3
    except MissingExtra as error:
        print(f"error: {error}", file=sys.stderr)
        return 4
    except NothingGraded as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except (AssignmentError, ValueError, OSError) as error:
        print(f"error: {_described(error)}", file=sys.stderr)
        return 2


def _described(error: Exception) -> str:
    """An OSError says which file and what to check; the others already say so."""
    if isinstance(error, OSError) and error.filename is not None:
        return (f"{error.filename}: {error.strerror or error}; check the path and that you may "
                "read (or write) it")
    return str(error)


if __name__ == "__main__":
    sys.exit(main())
