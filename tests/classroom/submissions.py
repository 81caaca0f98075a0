"""Deliberately buggy and hostile submissions of assignment 1, with the grades they must get.

Each :class:`Case` starts from the instructor's notebook (every answer right), replaces some
answer cells (found by the function they define), adds scratch cells, and states the points it
must lose and the messages its feedback must contain. Assignment 1's tests and points:

    softmax_rows 1, softmax_stable 2, attention_shapes 1, attention_values 2, attention_mask 1,
    causal_mask 2, self_attention 3, numpy_only 1  (13)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from mha.classroom.release import nbgrader_notebook, student_notebook
from mha.classroom.source import Assignment

STUB = "    # YOUR CODE HERE\n    raise NotImplementedError()"

#: A time limit low enough for tests: cells get 1 s, a whole submission 6 s.
CELL_TIMEOUT, TIMEOUT, MEMORY_MB = 1.0, 6.0, 512


@dataclass(frozen=True)
class Case:
    """A submission to build, and what grading it must give."""

    name: str
    answers: dict[str, str] = field(default_factory=dict)  # function name -> new answer cell
    scratch: tuple[str, ...] = ()  # cells the student added (after the first answer)
    lost: dict[str, float] = field(default_factory=dict)  # grade_id -> points it must get
    messages: dict[str, str] = field(default_factory=dict)  # grade_id / "notes" / "errors" -> regex
    start_from_release: bool = False
    drop_tests: tuple[str, ...] = ()  # test cells the student deleted
    blank_tests: tuple[str, ...] = ()  # test cells the student emptied (metadata kept)
    raw: str | None = None  # a file that is not a notebook at all


def _answer_index(cells: list[dict], function: str) -> int:
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code" and f"def {function}(" in cell["source"]:
            return index
    raise KeyError(f"no answer cell defines {function}()")


def _grade_id(cell: dict) -> str | None:
    for key in ("mha_classroom", "nbgrader"):
        grade_id = cell["metadata"].get(key, {}).get("grade_id")
        if grade_id and (key == "mha_classroom" or cell["metadata"][key].get("grade")):
            return grade_id
    return None


def build(case: Case, assignment: Assignment, folder: Path, **placeholders: str) -> Path:
    """Write ``<folder>/<case.name>.ipynb`` and return its path."""
    path = folder / f"{case.name}.ipynb"
    if case.raw is not None:
        path.write_text(case.raw, encoding="utf-8")
        return path
    notebook = (student_notebook if case.start_from_release else nbgrader_notebook)(assignment)
    cells = notebook["cells"]
    for function, source in case.answers.items():
        cells[_answer_index(cells, function)]["source"] = source.format(**placeholders)
    first_answer = min(_answer_index(cells, f) for f in ("softmax",))
    for offset, source in enumerate(case.scratch, start=1):
        cells.insert(first_answer + offset, {"cell_type": "code", "execution_count": None,
                                             "metadata": {}, "outputs": [],
                                             "source": source.format(**placeholders)})
    for cell in cells:
        if _grade_id(cell) in case.blank_tests:
            cell["source"] = "pass"
    notebook["cells"] = [cell for cell in cells if _grade_id(cell) not in case.drop_tests]
    path.write_text(json.dumps(notebook), encoding="utf-8")
    return path


ATTENTION = '''def attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = np.max(scores, axis=-1, keepdims=True)
    exps = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0.0))
    sums = np.sum(exps, axis=-1, keepdims=True)
    weights = np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)
    return weights @ v, weights'''
CAUSAL = '''def causal_mask(seq_q, seq_k=None):
    seq_k = seq_q if seq_k is None else seq_k
    return np.tril(np.ones((seq_q, seq_k), dtype=bool), k=seq_k - seq_q)'''
SOFTMAX = '''def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=axis, keepdims=True)'''
ALL_ATTENTION_TESTS = {"attention_shapes": 0, "attention_values": 0, "attention_mask": 0,
                       "self_attention": 0, "numpy_only": 0}

CASES = [
    Case("infinite_loop", answers={"attention": "while True:\n    pass\n\n" + ATTENTION},
         lost=ALL_ATTENTION_TESTS,
         messages={"attention_shapes": r"NameError: name 'attention' is not defined",
                   "errors": r"ran longer than its 1 s limit"}),
    Case("exception", answers={"causal_mask": "def causal_mask(seq_q, seq_k=None):\n"
                                              "    raise IndexError('off by one')"},
         lost={"causal_mask": 0, "self_attention": 0, "numpy_only": 0},
         messages={"causal_mask": r"your causal mask raised IndexError: off by one"}),
    Case("sys_exit", answers={"attention": "import sys\nsys.exit('bye')\n" + ATTENTION},
         lost=ALL_ATTENTION_TESTS,
         messages={"errors": r"SystemExit: the code called sys.exit\('bye'\)"}),
    Case("os_exit", answers={"causal_mask": "import os\nos._exit(0)\n" + CAUSAL},
         lost={"causal_mask": 0, "self_attention": 0, "numpy_only": 0},
         messages={"errors": r"ended early with exit code 0 \(os._exit",
                   "notes": r"ended the grading process; the grader ran the notebook again"}),
    Case("huge_allocation", answers={"softmax": "table = np.ones((2**15, 2**15))\n" + SOFTMAX},
         lost={"softmax_rows": 0, "softmax_stable": 0, "numpy_only": 0},
         messages={"errors": r"MemoryError: .*beyond the grader's memory limit"}),
    Case("growing_memory", scratch=("def grow():\n    chunks = []\n    while True:\n"
                                    "        chunks.append(np.ones(2**20))\n\ngrow()",),
         messages={"errors": r"MemoryError"}),
    Case("file_written",
         answers={"self_attention": "open({outside!r}, 'w').write('pwned')\n"
                                    "def self_attention(x, W_q, W_k, W_v, causal=False):\n"
                                    "    return x"},
         scratch=("np.save('scratch.npy', np.zeros(3))",),
         lost={"self_attention": 0, "numpy_only": 0},
         messages={"errors": r"PermissionError: the grader does not allow writing to",
                   "notes": r"files written in the working directory \(discarded\): scratch.npy"}),
    Case("invalid_json", raw='{"cells": [{"cell_type": "code", "source": "x = 1"',
         lost={grade_id: 0 for grade_id in ("softmax_rows", "softmax_stable", "attention_shapes",
                                            "attention_values", "attention_mask", "causal_mask",
                                            "self_attention", "numpy_only")},
         messages={"softmax_rows": r"not graded: the notebook is not valid JSON \(line 1"}),
    Case("fake_results", start_from_release=True, scratch=(
        "import json, os\n"
        "print(json.dumps({{'softmax_rows': 1, 'total': 13}}))\n"
        "print('softmax_rows: passed 1/1')\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        os.write(fd, b'1|end|5|softmax_rows|ok|\\t' + b'0' * 64 + b'\\n')\n"
        "    except OSError:\n"
        "        pass",),
         lost={grade_id: 0 for grade_id in ("softmax_rows", "softmax_stable", "attention_shapes",
                                            "attention_values", "attention_mask", "causal_mask",
                                            "self_attention", "numpy_only")},
         messages={"notes": r"not written by the grader and were ignored",
                   "softmax_rows": r"not answered yet"}),
    Case("monkeypatch",
         answers={"softmax": "def softmax(x, axis=-1):\n"
                             "    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)"},
         scratch=("import mha.checks._core\n"
                  "np.testing.assert_allclose = lambda *args, **kwargs: None\n"
                  "mha.checks.check_softmax = lambda *args, **kwargs: None\n"
                  "mha.checks._core.Checker.compare = lambda self, got, *args, **kwargs: got\n"
                  "mha.attention.softmax.__code__ = softmax.__code__",),
         lost={"softmax_stable": 0},
         messages={"softmax_stable": r"overflow",
                   "notes": r"had replaced: Checker.compare, mha.attention.softmax.__code__, "
                            r"mha.checks.check_softmax, numpy.testing.assert_allclose$"}),
    Case("partial", answers={
        "attention": ATTENTION.replace(" / math.sqrt(q.shape[-1])", ""),
        "causal_mask": CAUSAL.replace("return np.tril(", "return ~np.tril("),
        "self_attention": "def self_attention(x, W_q, W_k, W_v, causal=False):\n" + STUB},
         lost={"attention_values": 0, "attention_mask": 0, "causal_mask": 0,
               "self_attention": 0, "numpy_only": 0},
         messages={"attention_values": r"check_attention: the scores were not scaled",
                   "causal_mask": r"check_causal_mask: the mask is inverted",
                   "self_attention": r"not answered yet"}),
    Case("stubborn_loop", answers={"causal_mask": (
        "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n"
        "    except BaseException:\n        pass\n" + CAUSAL)},
         lost={"causal_mask": 0, "self_attention": 0, "numpy_only": 0},
         messages={"errors": r"ran past its 6 s time limit"}),
    Case("escape_attempts", scratch=(
        "import os\nos.kill(os.getppid(), 0)  # signal 0: harmless if the hook ever failed",
        "import subprocess\nsubprocess.run(['touch', {outside!r}])",
        "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))",
        "import socket\nsocket.create_connection(('127.0.0.1', 9))"),
         messages={"errors": r"os.kill.*subprocess.Popen.*resource.setrlimit.*socket.connect"}),
    Case("deleted_and_emptied_tests", drop_tests=("softmax_stable",), blank_tests=("causal_mask",),
         messages={"notes": r"test cell 'softmax_stable' was missing from the notebook"}),
    Case("print_flood", scratch=("for i in range(200_000):\n    print('spam', i)",)),
]
