"""How long does grading a class take? Twenty submissions of assignment 1, one sandbox each.

The class: 12 complete answers, 4 with one bug (the √d_k scale forgotten), 4 untouched releases.
Each is graded in its own process with the default limits; ``--loop`` adds one submission with an
endless loop, which costs its cell time limit (10 s by default). Times are wall-clock seconds of
one run each, for 1 and 2 parallel sandboxes, and their ratio.

Run: ``python benchmarks/bench_grading.py`` (``--jobs 1 2 4`` to try other widths).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from mha.classroom import grade_folder, load_assignment
from mha.classroom.release import nbgrader_notebook, student_notebook, write_notebook

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--loop", action="store_true", help="add a submission with an endless loop")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
