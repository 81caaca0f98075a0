"""Run a list of cells in a separate, limited Python process and read back what happened.

Nothing a student wrote runs in the grader's process: :func:`run_cells` starts ``runner.py`` in a
fresh temporary working directory, in its own session (so a time-out kills the whole process group),
with a minimal environment, and reads the signed records it wrote on a private descriptor. See
``runner.py`` for what the process does to itself (memory, file-size and CPU limits; audit hook).
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path

import mha

RUNNER = Path(__file__).with_name("runner.py")
PACKAGE_ROOT = str(Path(mha.__file__).resolve().parent.parent)


@dataclass(frozen=True)
class Limits:
    """Limits for one submission: seconds per cell, seconds in all, memory and file size in MiB."""

    cell_timeout: float = 10.0
    timeout: float = 60.0
    memory_mb: int = 1024
    file_mb: int = 16

    def __post_init__(self):
        for name in ("cell_timeout", "timeout", "memory_mb", "file_mb"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class ProgramCell:
    """A cell to run: its position in the notebook, its code, and its grade_id if it is a test."""

    index: int
    source: str
    grade_id: str | None = None


@dataclass
class CellOutcome:
    """What became of one cell: status is ok, error, exit, timeout or not run."""

    index: int
    grade_id: str | None
    status: str
    message: str = ""


@dataclass
class RunReport:
    """Everything the grader learnt about one run."""

    outcomes: dict[int, CellOutcome]
    notes: list[str] = field(default_factory=list)
    completed: bool = False
    stderr_head: str = ""


def _child_env(workdir: Path) -> dict[str, str]:
    return {
        "PATH": os.defpath, "HOME": str(workdir), "TMPDIR": str(workdir), "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONIOENCODING": "utf-8",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "MHA_NUM_THREADS": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(workdir / ".matplotlib"),
    }


def _read_records(raw: bytes, key: bytes) -> tuple[list[list[str]], int]:
    """Return the verified records in order, and how many lines were not the runner's."""
    records, rejected = [], 0
    for line in raw.decode("utf-8", "replace").splitlines():
        payload, _, mac = line.partition("\t")
        expected = hmac.new(key, payload.encode(), sha256).hexdigest()
        fields = payload.split("|")
        if (not hmac.compare_digest(mac, expected) or len(fields) != 6
                or fields[0] != str(len(records) + 1)):
            rejected += 1
            continue
        fields[5] = bytes.fromhex(fields[5]).decode("utf-8", "replace")
        records.append(fields[1:])
    return records, rejected


def _ending(returncode: int | None, timed_out: bool, limits: Limits) -> str:
    if timed_out:
        return f"the submission ran past its {limits.timeout:g} s time limit and was stopped"
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"the grading process was killed by {name} (a crash, or the memory limit)"
    return (f"the grading process ended early with exit code {returncode} "
            "(os._exit, or a crash) and nothing after this point ran")


def _outcomes(records, cells, ending: str) -> tuple[dict[int, CellOutcome], list[str], bool]:
    by_index = {cell.index: cell for cell in cells}
    outcomes, notes, running, done = {}, [], None, False
    for event, index, _grade_id, status, message in records:
        if event == "begin":
            running = int(index)
        elif event == "end":
            cell = by_index[int(index)]
            outcomes[cell.index] = CellOutcome(cell.index, cell.grade_id, status, message)
            running = None
        elif event == "note":
            notes.append(message)
        elif event == "done":
            done = True
    if running is not None:
        cell = by_index[running]
        outcomes[running] = CellOutcome(running, cell.grade_id, "killed", ending)
    for cell in cells:
        if cell.index not in outcomes:
            outcomes[cell.index] = CellOutcome(cell.index, cell.grade_id, "not run",
                                               f"not run: {ending}")
    return outcomes, notes, done


def _files_left(workdir: Path) -> list[str]:
    ignored = {".matplotlib"}
    return sorted(str(path.relative_to(workdir)) for path in workdir.rglob("*")
                  if path.is_file() and path.relative_to(workdir).parts[0] not in ignored)


def run_cells(cells: list[ProgramCell], limits: Limits | None = None) -> RunReport:
    """Run ``cells`` in a sandboxed Python process and report each cell's outcome.

    Parameters
    ----------
    cells : list of ProgramCell
        In execution order; test cells carry their ``grade_id``.
    limits : Limits
        Per-cell and total wall-clock seconds, address-space and file-size limits in MiB.

    Returns
    -------
    RunReport
        One :class:`CellOutcome` per cell (cells after an early end are "not run"), plus notes.

    Examples
    --------
    >>> report = run_cells([ProgramCell(1, "x = 1"), ProgramCell(2, "assert x == 2", "t")])
    >>> [(o.status, o.message) for o in report.outcomes.values()]
    [('ok', ''), ('error', 'AssertionError (cell 2, line 1)')]
    """
    limits = Limits() if limits is None else limits
    key = secrets.token_bytes(32)
    job = {
        "key": key.hex(), "package_root": PACKAGE_ROOT, "cell_timeout": limits.cell_timeout,
        "timeout": limits.timeout, "memory_mb": limits.memory_mb, "file_mb": limits.file_mb,
        "cells": [{"index": c.index, "source": c.source, "grade_id": c.grade_id} for c in cells],
    }
    with tempfile.TemporaryDirectory(prefix="mha-grade-") as root:
        workdir = Path(root, "work")
        workdir.mkdir()
        with open(Path(root, "results"), "w+b") as results, \
                open(Path(root, "stdout"), "w+b") as stdout, \
                open(Path(root, "stderr"), "w+b") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-s", "-B", str(RUNNER), str(results.fileno())],
                stdin=subprocess.PIPE, stdout=stdout, stderr=stderr, cwd=workdir,
                env=_child_env(workdir), pass_fds=(results.fileno(),), start_new_session=True,
            )
            timed_out = False
            try:
                process.communicate(json.dumps(job).encode(), timeout=limits.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # the whole group, even if it ended
                except ProcessLookupError:
                    pass
                process.wait()
            results.seek(0)
            records, rejected = _read_records(results.read(), key)
            stderr.seek(0)
            stderr_head = stderr.read(4000).decode("utf-8", "replace")
        ending = _ending(process.returncode, timed_out, limits)
        outcomes, notes, done = _outcomes(records, cells, ending)
        if rejected:
            notes.append(f"{rejected} line(s) on the grader's private result channel were not "
                         "written by the grader and were ignored")
        if left := _files_left(workdir):
            notes.append("files written in the working directory (discarded): "
                         + ", ".join(left[:10]) + (" …" if len(left) > 10 else ""))
    return RunReport(outcomes, notes, done, stderr_head)
