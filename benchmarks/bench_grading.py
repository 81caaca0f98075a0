"""How long does grading a class take? Twenty submissions of assignment 1, and the sandbox's share.

The class: 12 complete answers, 4 with one bug (the √d_k scale forgotten), 4 untouched releases.
Each submission's cells run in a bubblewrap sandbox (one run when it does not ask for ``mha``); the
tests are replayed in the grader. ``--loop`` adds one submission with an endless loop, which costs
its cell time limit (10 s by default). Printed: wall-clock seconds for 1 and 2 parallel sandboxes
and their ratio, then the per-run sandbox overhead: the same minimal Python + NumPy start measured
bare and inside the sandbox (its control group, seccomp filter and all), in alternating blocks.

``--compare FOLDER`` times this grader against another copy of it (``FOLDER/mha_classroom``, a
checkout's ``classroom/`` folder, say ``git archive <rev> classroom | tar -x -C /tmp/old``) in
alternating blocks, each grading of the class in a fresh process, and prints the ratio of medians.

Run: ``python benchmarks/bench_grading.py`` (``--jobs 1 2 4`` to try other widths).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line  # benchmarks/ is on sys.path when run

from mha_classroom import Limits, get_sandbox, grade_folder, load_assignment
from mha_classroom.release import nbgrader_notebook, student_notebook, write_notebook

SOURCE = Path(__file__).resolve().parent.parent / "assignments" / "01-self-attention.md"
# One timed grading of the class by whichever mha_classroom the import path finds first.
ONE_GRADING = """
import json, sys, time
from pathlib import Path
from mha_classroom import get_sandbox, grade_folder, load_assignment
from mha_classroom.grade import recording_for
assignment = load_assignment(sys.argv[1])
sandbox = get_sandbox()
recording_for(assignment)
start = time.perf_counter()
results = grade_folder(assignment, Path(sys.argv[2]), jobs=int(sys.argv[3]), sandbox=sandbox)
print(json.dumps([time.perf_counter() - start, sorted({r.points for r in results})]))
"""


def make_class(folder: Path, loop: bool) -> int:
    assignment = load_assignment(SOURCE)
    right, stub = nbgrader_notebook(assignment), student_notebook(assignment)
    unscaled = json.loads(json.dumps(right))
    for cell in unscaled["cells"]:
        cell["source"] = cell["source"].replace(" / math.sqrt(q.shape[-1])  # (..., seq_q, seq_k)", "")
    notebooks = [right] * 12 + [unscaled] * 4 + [stub] * 4
    if loop:
        looping = json.loads(json.dumps(right))
        looping["cells"].insert(3, {"cell_type": "code", "metadata": {}, "outputs": [],
                                    "execution_count": None, "source": "while True:\n    pass"})
        notebooks.append(looping)
    for number, notebook in enumerate(notebooks, start=1):
        write_notebook(notebook, folder / f"student{number:02d}.ipynb")
    return len(notebooks)


def sandbox_overhead(blocks: int = 5, per_block: int = 4) -> tuple[float, float]:
    """Median seconds of ``python -I -c 'import numpy'`` bare and in the sandbox (alternating)."""
    sandbox, limits = get_sandbox(), Limits()
    bare_command = [sys.executable, "-I", "-c", "import numpy"]
    bare, boxed = [], []
    for _ in range(blocks):
        for _ in range(per_block):
            start = time.perf_counter()
            subprocess.run(bare_command, check=True, capture_output=True, env={})
            bare.append(time.perf_counter() - start)
        for _ in range(per_block):
            start = time.perf_counter()
            done = sandbox.execute(sandbox.command(False, limits, ["-c", "import numpy"]), b"",
                                   limits)
            boxed.append(time.perf_counter() - start)
            assert done.status == 0, done.stderr
    return statistics.median(bare), statistics.median(boxed)


def compare(other: Path, folder: Path, jobs: int, blocks: int = 3) -> None:
    """This grader and the one in ``other``, alternating, each block a fresh process."""
    ours = str(Path(__file__).resolve().parent.parent / "classroom")
    seconds: dict[str, list[float]] = {"this": [], "other": []}
    for _ in range(blocks):
        for name, path in (("this", ours), ("other", str(other))):
            environment = {**os.environ, "PYTHONPATH": path}
            done = subprocess.run([sys.executable, "-c", ONE_GRADING, str(SOURCE), str(folder),
                                   str(jobs)], capture_output=True, text=True, env=environment,
                                  check=True)
            elapsed, scores = json.loads(done.stdout.splitlines()[-1])
            seconds[name].append(elapsed)
            print(f"  {name}: {elapsed:.2f} s, distinct scores {scores}")
    ratio = statistics.median(seconds["this"]) / statistics.median(seconds["other"])
    print(f"jobs={jobs}: this grader / {other}: {ratio:.2f} (medians of {blocks} alternating blocks)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--loop", action="store_true", help="add a submission with an endless loop")
    parser.add_argument("--compare", type=Path, help="a folder holding another mha_classroom")
    args = parser.parse_args()
    print(machine_line())
    assignment = load_assignment(SOURCE)
    with tempfile.TemporaryDirectory() as folder:
        count = make_class(Path(folder), args.loop)
        if args.compare:
            for jobs in args.jobs:
                compare(args.compare, Path(folder), jobs)
            return
        seconds = {}
        for jobs in args.jobs:
            start = time.perf_counter()
            results = grade_folder(assignment, Path(folder), jobs=jobs)
            seconds[jobs] = time.perf_counter() - start
            scores = sorted({r.points for r in results})
            print(f"jobs={jobs}: {count} submissions in {seconds[jobs]:.2f} s "
                  f"({seconds[jobs] / count:.3f} s each); distinct scores {scores}")
    first = args.jobs[0]
    for jobs in args.jobs[1:]:
        print(f"speed-up of jobs={jobs} over jobs={first}: {seconds[first] / seconds[jobs]:.2f}x")
    bare, boxed = sandbox_overhead()
    print(f"python + numpy start: {bare * 1000:.0f} ms bare, {boxed * 1000:.0f} ms in the sandbox; "
          f"overhead {1000 * (boxed - bare):.0f} ms per run ({boxed / bare:.2f}x)")


if __name__ == "__main__":
    main()
