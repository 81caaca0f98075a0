"""How long does grading a class take? Twenty submissions of assignment 1, and the sandbox's share.

The class: 12 complete answers, 4 with one bug (the √d_k scale forgotten), 4 untouched releases.
Each submission's cells run in a bubblewrap sandbox (one run when it does not ask for ``mha``); the
tests are replayed in the grader. ``--loop`` adds one submission with an endless loop, which costs
its cell time limit (10 s by default). Printed: wall-clock seconds for 1 and 2 parallel sandboxes
and their ratio, then the per-submission sandbox overhead: the same minimal Python + NumPy start
measured bare and inside the sandbox, in alternating blocks, and their difference.

Run: ``python benchmarks/bench_grading.py`` (``--jobs 1 2 4`` to try other widths).
"""

from __future__ import annotations

import argparse
import json
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
    boxed_command = sandbox.command(False, limits, ["-c", "import numpy"])
    bare, boxed = [], []
    for _ in range(blocks):
        for command, times in ((bare_command, bare), (boxed_command, boxed)):
            for _ in range(per_block):
                start = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True, env={})
                times.append(time.perf_counter() - start)
    return statistics.median(bare), statistics.median(boxed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--loop", action="store_true", help="add a submission with an endless loop")
    args = parser.parse_args()
    print(machine_line())
    assignment = load_assignment(SOURCE)
    with tempfile.TemporaryDirectory() as folder:
        count = make_class(Path(folder), args.loop)
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
