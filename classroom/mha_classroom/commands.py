"""What each ``mha-classroom`` command does, once its arguments are read (:mod:`mha_classroom.__main__`).

Every error a teacher can meet is raised as ``ValueError``, :class:`AssignmentError` or
:class:`MissingExtra` with a message naming the file, the cause and the fix; the command line prints
it on one line and exits with status 2 (4 for a missing dependency, 3 for a sandbox that fails its
self-test, 1 when nothing could be graded).
"""

from __future__ import annotations

import argparse
import stat
import time
from pathlib import Path

from mha_classroom.batch import grade_batch
from mha_classroom.copies import ChanceModel, copies_csv, find_evidence, summary_line
from mha_classroom.grade import StudentResult
from mha_classroom.gradebook import load_scores
from mha_classroom.needs import check_needs
from mha_classroom.records import record_key
from mha_classroom.release import export_nbgrader, release, write_atomically
from mha_classroom.reports import write_reports
from mha_classroom.roster import Roster, read_roster
from mha_classroom.rubrics import export_written
from mha_classroom.sandbox import Limits, get_sandbox
from mha_classroom.seeds import new_seed_file, read_seed
from mha_classroom.source import Assignment, AssignmentError, load_assignment
from mha_classroom.validate import validate
from mha_classroom.variants import draws, for_student, variant_source

__all__ = ["NothingGraded", "grade_command", "release_command", "validate_command", "written_command"]


class NothingGraded(Exception):  # noqa: N818 - a run that graded no submission, said as it is
    """No submission was graded (an empty folder, or every entry refused): exit status 1."""


def _release_seed(args: argparse.Namespace) -> str | None:
    """The seed of a per-student release: read, or made when the file does not exist yet."""
    if args.students is None and args.seed_file is None:
        return None
    if args.students is None:
        raise ValueError("--seed-file needs --students (the class list: whose copies to write)")
    if args.seed_file is None:
        raise ValueError("--students needs --seed-file PATH: the secret the copies are drawn from. "
                         "Name a file that does not exist yet and release writes a strong one there "
                         "(keep it: grading needs it)")
    if not args.seed_file.exists():
        seed = new_seed_file(args.seed_file, outside=(args.out,))
        print(f"wrote a new secret seed to {args.seed_file} (256 bits, readable by you only): keep it, "
              "grading needs it; never hand it out")
        return seed
    _warn_if_shared(args.seed_file)
    return read_seed(args.seed_file, args.force_weak_seed, outside=(args.out,))


def _warn_if_shared(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRGRP | stat.S_IROTH):
        print(f"warning: {path} is readable by other users of this machine; `chmod 600 {path}` keeps "
              "the seed yours")


def release_command(args: argparse.Namespace) -> int:
    """``release`` and ``nbgrader``: the student notebooks (one per student with a seed), or the
    instructor notebooks for nbgrader's source folder."""
    seed = _release_seed(args) if args.command == "release" else None
    roster = read_roster(args.students) if seed is not None else None
    for source in args.sources:
        assignment = load_assignment(source)
        if roster is None or seed is None:
            write = release if args.command == "release" else export_nbgrader
            print(f"wrote {write(assignment, args.out)}")
            continue
        if not draws(assignment):
            raise AssignmentError(f"{source}: no variant cell ('# variant' first line), so every "
                                  "student would get the same copy: release it without --students")
        for student in roster.ids:
            release(for_student(assignment, seed, student), args.out / student)
        print(f"wrote {len(roster.ids)} copies of {assignment.name} to {args.out}/<student>/")
    return 0


def validate_command(args: argparse.Namespace) -> int:
    """``validate``: full marks for the solution, zero for the stub, nothing leaked."""
    failures = 0
    sandbox = get_sandbox(args.trust_submissions)
    for source in args.sources:
        assignment = load_assignment(source)
        check_needs(assignment)
        problems = validate(assignment, sandbox=sandbox)
        failures += bool(problems)
        status = "ok" if not problems else "NOT READY"
        print(f"{source}: {status} ({len(assignment.tests)} tests, "
              f"{assignment.max_points:g} points)")
        for problem in problems:
            print(f"  - {problem}")
    return 1 if failures else 0


def limits_from(args: argparse.Namespace) -> Limits:
    """The run limits of ``grade``'s options, each checked under its option's name."""
    for option, value in (("--cell-timeout", args.cell_timeout), ("--timeout", args.timeout),
                          ("--memory-mb", args.memory_mb), ("--jobs", args.jobs)):
        if not value > 0:
            raise ValueError(f"{option} must be a positive number, got {value:g}")
    return Limits(cell_timeout=args.cell_timeout, probe_timeout=args.cell_timeout,
                  timeout=args.timeout, memory_mb=args.memory_mb)


def _evidence(assignment: Assignment, seed: str, roster: Roster, results: list[StudentResult],
              out: Path) -> str:
    """Write copies.csv and return the summary's line on it."""
    model = ChanceModel(assignment)
    released = {s: variant_source(for_student(assignment, seed, s)) or "" for s in roster.ids}
    matches = find_evidence(assignment, seed, roster.ids,
                            {r.student: dict(r.values) for r in results},
                            {r.student: r.variant for r in results}, released, model)
    write_atomically(out / "copies.csv", copies_csv(matches))
    return summary_line(matches, model, len(roster.ids))


def _extra_lines(assignment: Assignment, roster: Roster | None, seed: str | None,
                 results: list[StudentResult]) -> list[str]:
    lines = []
    if roster is not None:
        graded = {r.student for r in results}
        absent = [s for s in roster.ids if s not in graded]
        if absent:
            lines.append(f"- no submission graded for {len(absent)} students of the class list: "
                         f"{', '.join(absent)}")
    changed = [r for r in results if "variant_changed" in r.events]
    if seed is None and draws(assignment) and results and 2 * len(changed) >= len(results):
        lines.append(f"- {len(changed)} of {len(results)} submissions hold a variant cell other than "
                     "the plain release's: if each student was given a copy of their own, grade "
                     "again with --seed-file and --students")
    return lines


def grade_command(args: argparse.Namespace) -> int:
    """``grade``: every submission in the sandbox, the reports, the written answers, the evidence."""
    limits = limits_from(args)
    assignment = load_assignment(args.source)
    check_needs(assignment)
    if args.seed_file is not None and args.students is None:
        raise ValueError("--seed-file needs --students: the class list decides whose copy each "
                         "submission is graded against")
    roster = read_roster(args.students) if args.students is not None else None
    outside = (args.out, args.submissions)
    seed = read_seed(args.seed_file, args.force_weak_seed, outside) if args.seed_file else None
    key = record_key(args.record_key, outside)
    own = (lambda student: for_student(assignment, seed, student)) if seed else None
    sandbox = get_sandbox(args.trust_submissions)
    sandbox.check_private(args.out)
    start = time.perf_counter()
    batch = grade_batch(assignment, args.submissions, args.out, limits, sandbox, jobs=args.jobs,
                        resume=not args.fresh, assignment_for=own, key=key, roster=roster)
    results = batch.results
    extra = _extra_lines(assignment, roster, seed, results)
    if seed is not None and roster is not None:
        extra.append(_evidence(assignment, seed, roster, results, args.out))
    budget = sandbox.budget.describe(limits.memory_mb, limits.nproc) if sandbox.kind == "bubblewrap" else ""
    write_reports(assignment, results, args.out, sandbox.kind, skipped=batch.skipped, budget=budget,
                  students=False, extra=tuple(extra))
    export_written(assignment, args.submissions, args.out, roster)
    seconds = time.perf_counter() - start
    for result in results:
        print(f"{result.student}: {result.points:g} / {result.max_points:g}")
    if batch.resumed:
        print(f"{len(batch.resumed)} of them unchanged since an earlier run into {args.out}: results "
              "kept (--fresh grades them again)")
    if batch.refused:
        print(f"{len(batch.refused)} progress record(s) failed their check and were graded again: "
              f"{', '.join(f'{s} ({why})' for s, why in sorted(batch.refused.items()))}")
    if batch.skipped:
        print(f"{len(batch.skipped)} other entr{'y' if len(batch.skipped) == 1 else 'ies'} not graded: "
              f"see {args.out / 'summary.md'}")
    print(f"graded {len(results)} submission(s) in {seconds:.1f} s; wrote "
          f"{args.out / 'grades.csv'} and {args.out / 'summary.md'}")
    if not results:
        raise NothingGraded(f"{args.submissions}: no submission was graded ({len(batch.skipped)} "
                            f"entr{'y' if len(batch.skipped) == 1 else 'ies'} not graded, listed in "
                            f"{args.out / 'summary.md'}); put each student's notebook there as "
                            "<student>.ipynb or <student>/<assignment>.ipynb")
    if all("wrong_assignment" in r.events for r in results):
        raise NothingGraded(f"{args.submissions}: none of the {len(results)} submissions is "
                            f"{assignment.name} (their notebooks hold another assignment's tests): "
                            "check the source and the folder")
    return 0


def written_command(args: argparse.Namespace) -> int:
    """``written``: load the scores typed into answers.csv into nbgrader's gradebook."""
    loaded = load_scores(args.answers, args.to_nbgrader, args.assignment)
    for line in loaded.lines:
        print(line)
    print(f"{loaded.set} score(s) set in {args.to_nbgrader}, {loaded.blank} row(s) left blank, "
          f"{loaded.refused} refused")
    return 1 if loaded.refused else 0
