"""Submissions of assignment 1 written by a student who has read the grader, and a few honest ones.

Each :class:`Case` starts from the released notebook (every answer a stub: an *empty*
submission, 0 points) or from the instructor's answers, replaces answer cells (found by the
function they define; an attack that defines several answers takes the last answer cell, so that
no stub after it redefines them), adds cells after the first one, or writes a raw file. ``points`` is what it
must score: ``None`` means "no more than an empty submission" (0). Placeholders ``@CANARY@``,
``@SUBMISSIONS@``, ``@OUT@``, ``@ROOT@``, ``@SOURCE@`` become absolute paths of the test's folders,
``@TOKEN@`` a number of this batch's own (so that a check for leftovers counts only this batch's).

Assignment 1's tests and points: softmax_rows 1, softmax_stable 2, attention_shapes 1,
attention_values 2, attention_mask 1, causal_mask 2, self_attention 3, diagnose 2, numpy_only 1 (15).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mha_classroom.release import nbgrader_notebook, student_notebook
from mha_classroom.source import Assignment, load_assignment

ALL = {"softmax_rows": 1, "softmax_stable": 2, "attention_shapes": 1, "attention_values": 2,
       "attention_mask": 1, "causal_mask": 2, "self_attention": 3, "diagnose": 2, "numpy_only": 1}


@dataclass(frozen=True)
class Case:
    name: str
    cells: tuple[str, ...] = ()
    answers: dict[str, str] = field(default_factory=dict)
    start: str = "stub"  # or "solution"
    points: dict[str, float] | None = None  # exact points (honest cases, resilience)
    at_most: dict[str, float] = field(default_factory=dict)  # hostile: per question, default 0
    original: str | None = None  # the file or folder name, when it differs from ``name``
    messages: dict[str, str] = field(default_factory=dict)  # grade_id / notes / errors -> regex
    raw: Callable[[Path, dict], None] | None = None  # writes the submission itself
    cell_metadata: dict = field(default_factory=dict)  # of the added cells (copied in Jupyter, say)
    attack: str = ""


def _replace(text: str, paths: dict[str, str]) -> str:
    for key, value in paths.items():
        text = text.replace(f"@{key}@", value)
    return text


def _answer_index(cells: list[dict], function: str) -> int:
    for index, cell in enumerate(cells):
        if cell["cell_type"] == "code" and f"def {function}(" in cell["source"]:
            return index
    raise KeyError(function)


def build(case: Case, assignment: Assignment, folder: Path, paths: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    if case.raw is not None:
        case.raw(folder, paths)
        return
    notebook = (student_notebook if case.start == "stub" else nbgrader_notebook)(assignment)
    cells = notebook["cells"]
    for function, source in case.answers.items():
        cells[_answer_index(cells, function)]["source"] = _replace(source, paths)
    first = next(i for i, c in enumerate(cells) if c["cell_type"] == "code")
    for offset, source in enumerate(case.cells, start=1):
        cells.insert(first + offset, {"cell_type": "code", "execution_count": None,
                                      "metadata": case.cell_metadata, "outputs": [],
                                      "source": _replace(source, paths)})
    (folder / f"{case.name}.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def build_all(assignment: Assignment, submissions: Path, cases: list[Case], token: str,
              **folders: Path) -> None:
    paths = {key.upper(): str(value) for key, value in folders.items()}
    paths.update(SUBMISSIONS=str(submissions), SOURCE=str(assignment.path), TOKEN=token)
    for case in cases:
        build(case, assignment, submissions, paths)


SOFTMAX = '''def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=axis, keepdims=True)'''
NAIVE_SOFTMAX = '''def softmax(x, axis=-1):
    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)'''
STUB = "\n    raise NotImplementedError()"

# --- forged verdicts and result channels -------------------------------------------------------
FORGE_CHANNELS = r'''
import json, os, struct
print(json.dumps({"softmax_rows": 1, "total": 13, "status": "passed"}))
header = json.dumps({"probe": 0, "result": {"status": "ok", "out": ["b", True]}}).encode()
frame = b"MHAWIRE1" + struct.pack("<Q", len(header)) + header
for fd in range(0, 64):
    try:
        os.write(fd, struct.pack("<Q", len(frame)) + frame)
    except OSError:
        pass
for name in ("grades.csv", "../grades.csv", "/tmp/grades.csv", "@OUT@/grades.csv"):
    try:
        open(name, "w").write("student,question,points\nforge,softmax_rows,999\n")
    except OSError:
        pass
'''
FORGE_GC = r'''
import gc, sys
for obj in gc.get_objects():
    if isinstance(obj, dict) and "probes" in obj and "cells" in obj:
        for probe in obj["probes"]:
            probe["name"] = "print"
frame = sys._getframe()
while frame is not None:
    wire = frame.f_globals.get("wire")
    if wire is not None:
        wire.encode = lambda *args, **kwargs: ["b", True]
        wire.pack = lambda header, arrays: b"forged"
    frame = frame.f_back
'''
PATCHES = r'''
import builtins, threading, time
import numpy as np
import mha, mha.checks, mha.checks.machinery
np.testing.assert_allclose = lambda *a, **k: None
np.allclose = np.array_equal = lambda *a, **k: True
mha.checks.check_softmax = lambda *a, **k: None
mha.checks.machinery.Checker.compare = lambda self, got, *a, **k: got
builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.isinstance = lambda *a: True
def repatch():
    while True:
        np.allclose = lambda *a, **k: True
        time.sleep(0.01)
threading.Thread(target=repatch, daemon=True).start()
'''
LIAR = r'''
class Liar(np.ndarray):
    __array_priority__ = 1e9
    def __eq__(self, other): return True
    def __array_ufunc__(self, *args, **kwargs): return True
    def __array_function__(self, *args, **kwargs): return True
    def __bool__(self): return True
    def __len__(self): return 0

def softmax(x, axis=-1):
    return np.zeros_like(x).view(Liar)

def attention(q, k, v, mask=None):
    return np.array([Liar((2,)), None], dtype=object), {"weights": object()}

def causal_mask(seq_q, seq_k=None):
    return [[[[[]]]]] * 3 if False else eval("[" * 200 + "]" * 200)
'''
# --- looking for what must not be visible ------------------------------------------------------
SNOOP = r'''
import os
found = []
for path in ("@SOURCE@", "@CANARY@/canary.txt", "@SUBMISSIONS@", "@ROOT@", "/proc/1/environ",
             "/root", "/home", "/work"):
    try:
        if os.path.isdir(path):
            found.append(path + ":" + ",".join(os.listdir(path)))
        else:
            found.append(open(path, errors="replace").read()[:300])
    except OSError:
        pass
found.append(repr(dict(os.environ)))
found.append(",".join(os.listdir("/")))
import time
stop = time.monotonic() + 1.0  # a snooper with a cell time limit to keep (the venv may be mounted)
for top in ("/tmp", "/opt", "/home", "/srv", "/mnt", "/media", "/var"):
    for folder, dirs, files in os.walk(top):
        if time.monotonic() > stop:
            break
        for name in files:
            try:
                text = open(os.path.join(folder, name), errors="replace").read(200000)
            except OSError:
                continue
            if "BEGIN HIDDEN" in text or "default_rng(2024)" in text:
                found.append("HIDDEN:" + text[:300])
LEAK = " | ".join(found)[:3000]

def softmax(x, axis=-1):
    raise ValueError("LEAK " + LEAK)
'''
EXFILTRATE = r'''
import gc, os, threading
import numpy as np
STOLEN = []
def steal():
    for fd in range(3, 12):
        try:
            STOLEN.append(os.read(fd, 1 << 20))  # the channel: blocks until the hidden calls come
        except OSError:
            pass
threading.Thread(target=steal, daemon=True).start()

def softmax(x, axis=-1):
    seen = [a.tolist() for a in gc.get_objects() if isinstance(a, np.ndarray) and 0 < a.size < 100
            and np.abs(a).max() > 9000]
    raise ValueError("EXFIL " + repr(seen)[:1500] + repr(STOLEN)[:1500])
'''
# --- writing outside, signals, surviving children, resources -----------------------------------
WRITES = r'''
import os, sqlite3, socket
for folder in ("@CANARY@", "@SUBMISSIONS@", "@OUT@", "@ROOT@", "/tmp/..", "/opt/mha-runner"):
    for attempt in range(7):
        try:
            if attempt == 0:
                open(os.path.join(folder, "pwned.txt"), "w").write("x")
            elif attempt == 1:
                fd = os.open(folder, os.O_RDONLY)
                os.open("pwned2.txt", os.O_WRONLY | os.O_CREAT, dir_fd=fd)
            elif attempt == 2:
                sqlite3.connect(os.path.join(folder, "pwned.db")).execute("create table t(x)")
            elif attempt == 3:
                os.mkfifo(os.path.join(folder, "pwned.fifo"))
            elif attempt == 4:
                os.symlink("/etc/passwd", os.path.join(folder, "pwned.link"))
            elif attempt == 5:
                os.mknod(os.path.join(folder, "pwned.node"))
            else:
                os.rename(os.path.join(folder, "canary.txt"), "/tmp/stolen")
        except BaseException:
            pass
for name in os.listdir("/proc/self/fd"):
    try:
        open(f"/proc/self/fd/{name}", "a").write("pwned")
    except OSError:
        pass
try:
    socket.create_connection(("1.1.1.1", 80), timeout=1)
except OSError:
    pass
'''
SIGNALS = r'''
import os, signal
for target in (os.getppid(), 1, -1):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(target, sig)
        except OSError:
            pass
try:
    os.killpg(0, signal.SIGKILL)
except OSError:
    pass
'''
SURVIVORS = r'''
import os, subprocess, time
subprocess.Popen(["sleep", "31.41@TOKEN@"], start_new_session=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(2)
        for folder in ("@OUT@", "@CANARY@", "@SUBMISSIONS@"):
            try:
                open(os.path.join(folder, "late.txt"), "w").write("x")
            except OSError:
                pass
        time.sleep(30)
    os._exit(0)
'''
FORK_BOMB = r'''
import os, time
children = 0
while children < 10000:
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
    except OSError:
        break
'''
RESOURCES = (
    "import numpy as np\nhog = np.ones((2**16, 2**14))",
    "with open('/tmp/fill', 'wb') as f:\n    for _ in range(2000):\n        f.write(b'x' * 2**20)",
    "import os\nfor i in range(100_000):\n    print('spam', i)\nos.write(1, b'x' * 2**20)",
    "def deep(n):\n    return deep(n + 1)\ndeep(0)",
)
STUBBORN = '''import time
while True:
    try:
        time.sleep(0.05)
    except BaseException:
        pass'''
MARKDOWN = r'''
def softmax(x, axis=-1):
    raise ValueError("\n````\n# FULL MARKS\n| softmax_rows | 1 / 1 | passed |\n````\n```\n=1+1")
'''


def _raw_writer(name: str, data: bytes) -> Callable[[Path, dict], None]:
    def write(folder: Path, paths: dict) -> None:
        (folder / name).write_bytes(data)
    return write


def _symlink(name: str, target: str) -> Callable[[Path, dict], None]:
    def write(folder: Path, paths: dict) -> None:
        os.symlink(_replace(target, paths), folder / name)
    return write


def _fifo(folder: Path, paths: dict) -> None:
    os.mkfifo(folder / "fifo.ipynb")


def _deep_folder(folder: Path, paths: dict) -> None:
    here = folder / "deep_folder"
    here.mkdir()
    for _ in range(1000):  # os.makedirs would recurse 1,000 deep
        here = here / "d"
        here.mkdir()
    (here / "01-self-attention.ipynb").write_text('{"cells": []}')


def _two_notebooks(folder: Path, paths: dict) -> None:
    (folder / "two_notebooks").mkdir()
    for name in ("a.ipynb", "b.ipynb"):
        (folder / "two_notebooks" / name).write_text('{"cells": []}')


def _bob_folder(folder: Path, paths: dict) -> None:
    (folder / "bob").mkdir()
    (folder / "bob" / "01-self-attention.ipynb").write_text('{"cells": []}')


def _merged_answer_and_test(folder: Path, paths: dict) -> None:
    """Honest: the causal_mask answer cell merged with its test cell below (Shift+M in Jupyter)."""
    notebook = nbgrader_notebook(load_assignment(paths["SOURCE"]))
    cells = notebook["cells"]
    answer = _answer_index(cells, "causal_mask")
    cells[answer]["source"] += "\n" + cells[answer + 1]["source"]
    del cells[answer + 1]
    (folder / "merged_cells.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def _cells(count: int) -> bytes:
    return json.dumps({"cells": [{}] * count}).encode()


# --- answers that depend on whether mha is there ----------------------------------------------
MHA_OR_NOTHING = r"""
try:
    import mha
    def softmax(x, axis=-1):
        return mha.softmax(x, axis=axis)
    def attention(q, k, v, mask=None):
        return mha.scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    def causal_mask(seq_q, seq_k=None):
        return mha.causal_mask(seq_q, seq_k)
    def self_attention(x, W_q, W_k, W_v, causal=False):
        mask = mha.causal_mask(x.shape[-2]) if causal else None
        return mha.scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask)
except ImportError:  # the NumPy-only run: answers that only need to run
    def softmax(x, axis=-1):
        return x
    def attention(q, k, v, mask=None):
        return q, q
    def causal_mask(seq_q, seq_k=None):
        return np.ones((seq_q, seq_q if seq_k is None else seq_k), dtype=bool)
    def self_attention(x, W_q, W_k, W_v, causal=False):
        return x @ W_v
"""
# A mask applied as -1e9 (fully masked rows come out uniform, not zero), hidden from the mask checks by
# a signature that claims there is no mask parameter.
SPOOFED_SIGNATURE = r"""
import inspect, math
def attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -1e9)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights
attention.__signature__ = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in "qkv"])
"""
IN_PLACE_SOFTMAX = r"""
def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)  # edits the caller's array
    np.exp(x, out=x)
    x /= np.sum(x, axis=axis, keepdims=True)
    return x
"""
# Right, and slow: 0.4 s a call is far inside the 3 s per call, but its 24 calls (and self_attention's
# own) take longer than one 8 s run; the grader must go on in another run, within the 24 s budget.
SLOW_ATTENTION = r"""
import time
def attention(q, k, v, mask=None):
    time.sleep(0.4)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]).astype(q.dtype)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = np.max(scores, axis=-1, keepdims=True)
    exps = np.exp(scores - np.where(np.isfinite(row_max), row_max, 0.0))
    sums = np.sum(exps, axis=-1, keepdims=True)
    weights = np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)
    return weights @ v, weights
"""
# Right, with the mask parameter called m: the checks must pass it where it goes, not by its name.
MASK_NAMED_M = SLOW_ATTENTION.replace("    time.sleep(0.4)\n", "").replace("mask", "m")
# An honest helper written in a copy of a test cell: Jupyter's copy keeps the test's metadata.
HELPER_IN_COPIED_CELL = "def row_max(x, axis):\n    return np.max(x, axis=axis, keepdims=True)"
SOFTMAX_WITH_HELPER = '''def softmax(x, axis=-1):
    shifted = x - row_max(x, axis)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=axis, keepdims=True)'''
SURROGATE = 'def softmax(x, axis=-1):\n    raise ValueError("\\ud800")'
# Every answer from mha; without it, the NumPy-only test's inputs (shown in full in the released
# notebook) are recognised and given junk, and every other call raises ImportError.
MHA_SPLIT = r"""
try:
    import mha
    mha.softmax
except (ImportError, AttributeError):
    mha = None
_SEEN = np.random.default_rng(4).normal(size=(1, 3, 4))
def _theirs(a):
    return isinstance(a, np.ndarray) and a.shape == _SEEN.shape and np.array_equal(a, _SEEN)
def _need():
    raise ImportError("this answer needs the mha package")
def softmax(x, axis=-1):
    return mha.softmax(x, axis=axis) if mha else (x if _theirs(x) else _need())
def attention(q, k, v, mask=None):
    if mha:
        return mha.scaled_dot_product_attention(q, k, v, mask, return_weights=True)
    return (q, q) if _theirs(q) else _need()
def causal_mask(seq_q, seq_k=None):
    if mha:
        return mha.causal_mask(seq_q, seq_k)
    return np.ones((3, 3), dtype=bool) if (seq_q, seq_k) == (3, None) else _need()
def self_attention(x, W_q, W_k, W_v, causal=False):
    if mha:
        mask = mha.causal_mask(x.shape[-2]) if causal else None
        return mha.scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v, mask)
    return x if _theirs(x) else _need()
"""
# Right, formatted as black does: a continuation line inside brackets starts with "!=".
CONTINUED_NOT_EQUAL = MASK_NAMED_M.replace("scores = np.where(m, scores, -np.inf)",
                                           "allowed = (np.asarray(m)\n            != 0)\n"
                                           "        scores = np.where(allowed, scores, -np.inf)")
# A NumPy answer whose cell imports the course's checks, as the chapters do.
SOFTMAX_WITH_CHECK = """from mha.checks import check_softmax
def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=axis, keepdims=True)
check_softmax(softmax)"""
# An untouched test cell, copied (Jupyter keeps its metadata and header) with a line added.
COPIED_TEST = """# grade_id: softmax_rows  points: 1
x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
weights = softmax(x)
print(weights)"""


CASES = [
    Case("empty", attack="the released notebook, untouched (the baseline)"),
    Case("forged_channels", cells=(FORGE_CHANNELS,), attack="forged verdicts and result files"),
    Case("forged_by_gc_and_frames", cells=(FORGE_GC,), attack="frame/gc walking in the runner"),
    Case("patched_everything", cells=(PATCHES,), answers={"softmax": NAIVE_SOFTMAX},
         at_most={"softmax_rows": 1},
         messages={"softmax_stable": "overflow"},
         attack="patched numpy, mha.checks, builtins; a thread re-patching"),
    Case("lying_arrays", answers={"self_attention": LIAR},  # the last answer cell: it wins
         messages={"softmax_rows": "returned a value of type Liar, which the grader cannot check",
                   "attention_shapes": "dtype object are not accepted",
                   "causal_mask": "nested too deeply"},
         attack="lying ndarray subclasses, object arrays, deep values"),
    Case("snooping", answers={"softmax": SNOOP},
         attack="reading hidden tests, instructor source, canary, env vars"),
    Case("exfiltrate_hidden_inputs", answers={"softmax": EXFILTRATE},
         attack="hidden tests' inputs echoed through a visible test's feedback"),
    Case("writing_outside", cells=(WRITES,),
         attack="writes via paths, dir_fd, sqlite, mkfifo, mknod, /proc/self/fd; network"),
    Case("signals", cells=(SIGNALS,), attack="signals to the grader and to every process"),
    Case("survivors", cells=(SURVIVORS,), attack="setsid children that outlive the run"),
    Case("fork_bomb", cells=(FORK_BOMB,), attack="fork bomb"),
    Case("resources", cells=RESOURCES, messages={"errors": "MemoryError"},
         attack="memory, disk, output flood, recursion"),
    Case("stubborn_loop", cells=(STUBBORN,), answers={"softmax": SOFTMAX},
         points={**dict.fromkeys(ALL, 0), "softmax_rows": 1, "softmax_stable": 2},
         messages={"notes": r"ended the run \(the run went past its 8 s"},
         attack="a loop that swallows the time-out"),
    Case("os_exit", cells=("import os\nos._exit(0)",), answers={"softmax": SOFTMAX},
         points={**dict.fromkeys(ALL, 0), "softmax_rows": 1, "softmax_stable": 2},
         attack="os._exit in a cell"),
    Case("markdown_injection", answers={"self_attention": MARKDOWN},
         messages={"softmax_rows": "FULL MARKS"}, attack="Markdown injection in feedback"),
    Case("=HYPERLINK(1)", attack="CSV injection in the student id"),
    Case("-2+3", attack="CSV injection in the student id"),
    Case("bob", attack="id collision (file and folder, case)"),
    Case("Bob", attack="id collision (file and folder, case)"),
    Case("bob_folder", raw=_bob_folder, original="bob", attack="id collision (file and folder)"),
    Case("invalid_json", raw=_raw_writer("invalid_json.ipynb", b'{"cells": [{"cell_type"'),
         messages={"softmax_rows": "not valid JSON"}, attack="malformed JSON"),
    Case("not_utf8", raw=_raw_writer("not_utf8.ipynb", b'{"cells": ["\xff\xfe"]}'),
         messages={"softmax_rows": "not UTF-8"}, attack="non-UTF-8"),
    Case("binary", raw=_raw_writer("binary.ipynb", bytes(range(256)) * 64),
         messages={"softmax_rows": "not UTF-8"}, attack="binary file"),
    Case("huge", raw=_raw_writer("huge.ipynb", b" " * (9 * 2**20) + b"{}"),
         messages={"softmax_rows": "MiB"}, attack="huge file"),
    Case("deep_json", raw=_raw_writer("deep_json.ipynb", b"[" * 200_000 + b"]" * 200_000),
         messages={"softmax_rows": "nests deeper"}, attack="deeply nested JSON"),
    Case("many_cells", raw=_raw_writer("many_cells.ipynb", _cells(250_000)),
         messages={"softmax_rows": "250000 cells"}, attack="250k-cell notebook"),
    Case("not_a_notebook", raw=_raw_writer("not_a_notebook.ipynb", b'[1, 2, 3]'),
         messages={"softmax_rows": "not a Jupyter notebook"}, attack="JSON, not a notebook"),
    Case("link_to_source", raw=_symlink("link_to_source.ipynb", "@SOURCE@"),
         messages={"softmax_rows": "symbolic link"}, attack="symlink to the instructor's file"),
    Case("link_to_zero", raw=_symlink("link_to_zero.ipynb", "/dev/zero"),
         messages={"softmax_rows": "symbolic link"}, attack="symlink to /dev/zero"),
    Case("fifo", raw=_fifo, messages={"softmax_rows": "not a regular file"}, attack="FIFO"),
    Case("deep_folder", raw=_deep_folder, messages={"softmax_rows": "no notebook"},
         attack="1,000-deep folders"),
    Case("two_notebooks", raw=_two_notebooks, messages={"softmax_rows": "2 notebooks"},
         attack="ambiguous folder"),
    # `import mha` works in the NumPy-only run too (an empty package, so that the learner checks
    # import): the mha branch is taken, its calls need the package, and it is graded as using it
    Case("mha_or_nothing", answers={"self_attention": MHA_OR_NOTHING},
         at_most={**ALL, "numpy_only": 0, "diagnose": 0},
         attack="mha when it is there, do-nothing answers when it is not"),
    Case("spoofed_signature", start="solution", points={**ALL, "attention_mask": 0},
         answers={"attention": SPOOFED_SIGNATURE},
         attack="a -1e9 mask hidden from the mask checks by a false __signature__"),
    Case("surrogate_error", answers={"softmax": SURROGATE},
         attack="an error message UTF-8 cannot encode (every report must still be written)"),
    Case("x" * 70 + "_first", start="solution", points=ALL,
         attack="two ids that agree on their first 64 characters"),
    Case("x" * 70 + "_second", attack="two ids that agree on their first 64 characters"),
    # honest students, graded as before
    Case("honest", start="solution", points=ALL),
    Case("merged_cells", raw=_merged_answer_and_test, points=ALL,
         messages={"notes": "you edited the test cell 'causal_mask': your score comes from the original"}),
    Case("uses_mha", start="solution", points={**ALL, "numpy_only": 0},
         answers={"softmax": "import mha\ndef softmax(x, axis=-1):\n"
                             "    return mha.softmax(x, axis=axis)"},
         messages={"numpy_only": "NumPy only"}, attack="NumPy-only rule broken"),
    Case("sneaky_mha", start="solution", points={**ALL, "numpy_only": 0},
         cells=("import sys\nsys.meta_path[:] = [f for f in sys.meta_path "
                "if type(f).__name__ != '_NoMha']",),
         answers={"softmax": "def softmax(x, axis=-1):\n"
                             "    return __import__('m' + 'ha').softmax(x, axis=axis)"},
         attack="NumPy-only rule broken, import hidden"),
    Case("partial", start="solution", points={**ALL, "attention_shapes": 0, "attention_values": 0,
                                               "attention_mask": 0, "self_attention": 0,
                                               "numpy_only": 0},
         answers={"attention": "def attention(q, k, v, mask=None):" + STUB},
         messages={"self_attention": "NotImplementedError"}),
    Case("slow_but_correct", start="solution", points=ALL, answers={"attention": SLOW_ATTENTION}),
    Case("mask_named_m", start="solution", points=ALL, answers={"attention": MASK_NAMED_M}),
    Case("helper_in_copied_test_cell", start="solution", points=ALL, cells=(HELPER_IN_COPIED_CELL,),
         answers={"softmax": SOFTMAX_WITH_HELPER},
         cell_metadata={"nbgrader": {"grade_id": "softmax_rows", "grade": True, "points": 1}}),
    Case("mha_split", start="solution", points={**ALL, "numpy_only": 0},
         answers={"self_attention": MHA_SPLIT},
         messages={"numpy_only": "NumPy only"},
         attack="mha for graded calls, junk for the NumPy-only test's visible inputs"),
    Case("continued_not_equal", start="solution", points=ALL, answers={"attention": CONTINUED_NOT_EQUAL}),
    Case("imports_the_checks", start="solution", points=ALL, answers={"softmax": SOFTMAX_WITH_CHECK}),
    Case("copied_test_cell", start="solution", points=ALL, cells=(COPIED_TEST,),
         cell_metadata={"nbgrader": {"grade_id": "softmax_rows", "grade": True, "points": 1}},
         messages={"notes": "2 cells with the test 'softmax_rows'.*your changed copy with your own code"}),
    Case("in_place_softmax", start="solution",
         points={**ALL, "softmax_rows": 0, "softmax_stable": 0, "numpy_only": 0},
         answers={"softmax": IN_PLACE_SOFTMAX},
         messages={"softmax_rows": r"softmax\(\) changed its input \(argument 1\) in place"}),
]
