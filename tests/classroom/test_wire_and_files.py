"""What crosses the sandbox boundary is plain data; what a teacher opens is safe. No sandbox needed."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

from mha_classroom import wire
from mha_classroom.exports import fenced, neutral
from mha_classroom.intake import find_submissions, unique_ids
from mha_classroom.submission import InvalidSubmission, read_notebook
from mha_classroom.wire import read_frames

pytestmark = pytest.mark.classroom


def test_values_round_trip_with_dtypes_and_shapes():
    value = {"w": np.arange(6, dtype=np.float32).reshape(2, 3).T, "n": (1, 2.5, None, True),
             "s": ["x", np.int64(3)], 4: np.float32, "dtype": np.dtype("int16")}
    arrays: list = []
    tree = wire.encode(value, arrays)
    _, back = wire.unpack(wire.pack({"tree": tree}, arrays), 10**6)
    again = wire.decode(tree, back)
    assert again["w"].dtype == np.float32 and np.array_equal(again["w"], value["w"])
    assert again["n"] == (1, 2.5, None, True) and again[4] is np.float32
    assert type(again["s"][1]) is np.int64 and again["dtype"] == np.int16


def test_containers_travel_as_what_they_hold_named_tuples_and_subclasses_included():
    from collections import OrderedDict, defaultdict, namedtuple
    from typing import NamedTuple

    for value in (OrderedDict(q=(2, 3)), defaultdict(list, q=(2, 3))):
        arrays: list = []
        assert wire.decode(wire.encode(value, arrays), arrays) == {"q": (2, 3)}

    class Pair(NamedTuple):
        output: np.ndarray
        weights: np.ndarray

    for value in (namedtuple("Result", "output weights")(np.ones(2), np.zeros(3)),
                  Pair(np.ones(2), np.zeros(3))):
        arrays = []
        output, weights = back = wire.decode(wire.encode(value, arrays), arrays)
        assert type(back) is tuple and output.tolist() == [1.0, 1.0] and weights.shape == (3,)

    class Lying(dict):  # what a subclass claims through its own methods does not count
        def items(self):
            return [("q", "forged")]

    class Longer(list):
        def __iter__(self):
            return iter([1, 2, 3, 4])

    arrays = []
    assert wire.decode(wire.encode(Lying(q=1), arrays), arrays) == {"q": 1}
    assert wire.decode(wire.encode(Longer([9]), arrays), arrays) == [9]


def test_the_grader_decodes_a_bounded_amount_whatever_a_value_claims():
    colliding = [[["i", str(k * (2**61 - 1))], ["n"]] for k in range(wire.MAX_DICT + 1)]  # one hash
    with pytest.raises(wire.WireError, match="more than 1000 entries"):
        wire.decode(["d", colliding], [])
    with pytest.raises(wire.WireError, match="too many parts"):
        wire.decode(["l", [["n"]] * (wire.MAX_NODES + 1)], [])
    with pytest.raises(wire.WireError, match="more than 1000 entries"):
        wire.encode(dict.fromkeys(range(wire.MAX_DICT + 1)), [])
    assert wire.decode(["d", [[["i", str(k * (2**61 - 1))], ["n"]] for k in range(wire.MAX_DICT)]],
                       []) == dict.fromkeys(k * (2**61 - 1) for k in range(wire.MAX_DICT))


def test_the_digest_depends_on_values_not_memory_layout():
    a = np.arange(12.0).reshape(3, 4)
    first, second = [], []
    assert wire.digest(wire.encode(a, first), first) == \
        wire.digest(wire.encode(np.asfortranarray(a), second), second)
    third: list = []
    assert wire.digest(wire.encode(a.astype(np.float32), third), third) != \
        wire.digest(wire.encode(a, first), first)


@pytest.mark.parametrize("value", [np.array([object()]), np.zeros(2, dtype="U3"),
                                   np.zeros(2, dtype=[("a", "f8")]), [[[[[[[[[[[[[[[[[[[[[[[[[[
                                   ]]]]]]]]]]]]]]]]]]]]]]]]]], object(), "x" * 30_000])
def test_objects_records_strings_and_deep_values_are_refused(value):
    with pytest.raises(wire.WireError):
        wire.encode(value, [])


def _message(arrays: list, payload: bytes, header: object = None) -> bytes:
    """A message with an array list and data written by hand (what a forger would send)."""
    body = json.dumps(header if header is not None else {"header": {}, "arrays": arrays}).encode()
    return wire.MAGIC + len(body).to_bytes(8, "little") + body + payload


@pytest.mark.parametrize("message", [
    _message([["|O", [1]]], b"\x00" * 8),  # objects (pickles) have no dtype here
    _message([["<f8", [4]]], b"\x00" * 24),  # the data is shorter than the shape says
    _message([["<f8", [2]]], b"\x00" * 24),  # ... or longer
    _message([["<f8", [2**40, 2**40]]], b""),  # a shape larger than the message
    _message([["<f8", [-1]]], b""),
    _message([["<f8"]], b""),
    _message([["<U3", [1]]], b"\x00" * 12),  # text arrays
    _message([["V8", [1]]], b"\x00" * 8),  # records, raw bytes
    _message([["<f8", [0]]] * (wire.MAX_ARRAYS + 1), b""),  # more arrays than a run may send
    _message([], b"", header={"header": {}, "arrays": [], "extra": 1}),
    _message([], b"", header=[1, 2]),
    wire.MAGIC + (10**9).to_bytes(8, "little") + b"{}",
    wire.MAGIC + (6).to_bytes(8, "little") + b'[' * 6,
    b"MHAWIRE1" + b"\x00" * 16,  # the first round's zip format is not read at all
    b"garbage",
])
def test_malformed_or_hostile_messages_are_refused_before_anything_is_built(message):
    with pytest.raises(wire.WireError):
        wire.unpack(message, 2**20)


def test_a_million_declared_arrays_cost_the_grader_nothing(monkeypatch):
    """A forged frame listing 1.15 M archive entries took the first round's grader to 751 MB."""
    import tracemalloc

    message = _message([["<f8", [0]]] * 150_000, b"")  # the first round saw 1.15 M; cheaper to show
    tracemalloc.start()
    try:
        with pytest.raises(wire.WireError, match="too many arrays"):
            wire.unpack(message, 2**30, max_header=2**30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * len(message)  # the JSON list itself, parsed once; no array, no archive


def test_a_flood_of_frames_is_left_unread_after_the_frames_a_run_can_write():
    cell = wire.pack({"cell": 1, "status": "ok", "error": None}, [])
    junk = wire.pack({}, [])
    data = b"".join(len(m).to_bytes(8, "little") + m for m in [cell] + [junk] * 5000)
    frames, garbled = read_frames(data, 2**30, max_frames=4)
    assert len(frames) == 4 and frames[0][0]["cell"] == 1 and garbled
    frames, garbled = read_frames(data, 2**30)  # no cap: every frame is read
    assert len(frames) == 5001 and not garbled


def test_arrays_past_what_a_run_may_send_are_refused_before_they_are_copied():
    """A forged frame may describe arrays up to the output's size; the grader copies none past its budget."""
    import tracemalloc

    def frame(n_floats):
        message = wire.pack({"probe": 0}, [np.zeros(n_floats)])
        return len(message).to_bytes(8, "little") + message

    answer = wire.MAX_FRAME_ARRAY_BYTES // 8  # one answer as large as the runner lets it be
    frames, garbled = read_frames(frame(answer) + frame(answer), 2**30)
    assert len(frames) == 2 and not garbled  # two answers of 8 MiB: what an honest run can send
    frames, garbled = read_frames(frame(answer) + frame(answer) + frame(1), 2**30)
    assert len(frames) == 2 and garbled  # the run's budget is spent: the third is not read
    forged = frame(answer + 1) + frame(1)
    tracemalloc.start()
    try:
        frames, garbled = read_frames(forged, 2**30)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert frames == [] and garbled
    assert peak < 2**20  # nothing of the oversized array was built


def test_output_cut_at_the_size_limit_keeps_the_frames_before_the_cut():
    cell = wire.pack({"cell": 1, "status": "ok", "error": None}, [])
    first = len(cell).to_bytes(8, "little") + cell
    frames, garbled = read_frames(first + b"\x00" * 1000, len(first) + 100)
    assert [header["cell"] for header, _, _ in frames] == [1] and garbled


def test_frames_stop_at_the_first_unreadable_one():
    good = wire.pack({"cell": 1}, [])
    data = len(good).to_bytes(8, "little") + good + b"\x05" * 20
    frames, garbled = read_frames(data, 2**20)
    assert [header for header, _, _ in frames] == [{"cell": 1}] and garbled


def test_submission_files_are_read_defensively(tmp_path):
    cases = {
        "deep": b"[" * 5000 + b"]" * 5000, "utf": b"\xff", "many": json.dumps(
            {"cells": [{}] * 3000}).encode(), "nul": json.dumps(
            {"cells": [{"cell_type": "code", "source": "x\x00"}]}).encode(),
        "type": json.dumps({"cells": [{"cell_type": "code", "source": 3}]}).encode(),
    }
    for name, data in cases.items():
        (tmp_path / f"{name}.ipynb").write_bytes(data)
        with pytest.raises(InvalidSubmission):
            read_notebook(tmp_path / f"{name}.ipynb")
    os.mkfifo(tmp_path / "fifo.ipynb")
    with pytest.raises(InvalidSubmission, match="not a regular file"):
        read_notebook(tmp_path / "fifo.ipynb")  # returns at once: never blocks on the FIFO
    os.symlink("/dev/zero", tmp_path / "zero.ipynb")
    with pytest.raises(InvalidSubmission):
        read_notebook(tmp_path / "zero.ipynb")


def test_ids_are_unique_and_safe_and_links_are_not_followed(tmp_path):
    assert unique_ids(["a b", "a_b", "A_B", "..", "", "=1+2"]) == \
        ["a_b-2", "a_b", "A_B-3", "student", "student-2", "1_2"]
    # a student whose name is already a safe id keeps it: bob-2 never gets bob's submission
    assert unique_ids(["Bob", "bob", "bob-2"]) == ["Bob", "bob-3", "bob-2"]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.ipynb").write_text("{}")
    os.symlink(tmp_path / "sub", tmp_path / "linked")
    found = {f.original: f for f in find_submissions(tmp_path, "x")}
    assert found["sub"].path is not None and found["linked"].path is None
    assert "symbolic link" in found["linked"].problem


def test_csv_cells_and_fences_cannot_be_escaped():
    assert [neutral(v) for v in ("=1", "+1", "-1", "@A", "\tx", "\rx", "ok")] == \
        ["'=1", "'+1", "'-1", "'@A", "'\tx", "'\rx", "ok"]
    opener, body, closer = fenced("a ```` b")
    assert opener == "`````text" and closer == "`````" and body == "a ```` b"


def test_magics_are_only_lines_that_start_a_statement():
    from mha_classroom.notebook_syntax import strip_magics

    source = ("%matplotlib inline\nallowed = (mask\n    != 0)\nif True:\n    !pip install x\n"
              "rows = [1,\n%2]\n")
    assert strip_magics(source).splitlines() == [
        "pass", "allowed = (mask", "    != 0)", "if True:", "    pass", "rows = [1,", "%2]"]
    assert strip_magics("x = 1\n") == "x = 1\n"
    assert strip_magics('!echo "open\nx = 1') == "pass\nx = 1"  # untokenizable: every such line


def test_help_lines_and_timed_statements_run_as_ipython_runs_them():
    from mha_classroom.notebook_syntax import display, strip_magics
    from mha_classroom.runner import run_cells

    source = ("np.tril?\n??np.triu\nif True:\n    np.tril??\n%time w = np.ones(2)\n%timeit np.ones(2)\n"
              "%%time\nx = 1  # why?\nq = '?'\n")
    assert strip_magics(source).splitlines() == [
        "pass", "pass", "if True:", "    pass", "w = np.ones(2)", "pass", "pass", "x = 1  # why?", "q = '?'"]
    namespace = {"display": display}
    reports = run_cells([(1, "import numpy as np\n%time w = np.ones(2)\nnp.tril?\ndisplay(w)")],
                        namespace, 5.0)
    assert reports == [["ok", None]] and namespace["w"].tolist() == [1.0, 1.0]


def test_shell_output_and_get_ipython_work_as_in_a_notebook_without_a_shell():
    from mha_classroom.notebook_syntax import Shell, strip_magics
    from mha_classroom.runner import run_cells

    assert strip_magics("files = !ls\nout, err = !make\nx != 1\n").splitlines() == [
        "files = []", "out, err = []", "x != 1"]
    namespace = {}
    shell = Shell(namespace)
    namespace["get_ipython"] = lambda: shell
    source = ("get_ipython().run_line_magic('precision', '3')\n"
              "get_ipython().run_line_magic('time', 'w = 2 * 3')\n"
              "get_ipython().run_cell_magic('time', '', 'v = w + 1')\n"
              "get_ipython().run_cell_magic('bash', '', 'rm -rf /')\n"
              "listing = get_ipython().getoutput('ls')\nget_ipython().system('ls')\n")
    assert run_cells([(1, source)], namespace, 5.0) == [["ok", None]]
    assert (namespace["w"], namespace["v"], namespace["listing"]) == (6, 7, [])


def test_cell_magics_and_magic_values_do_what_jupyter_does():
    import os

    from mha_classroom.notebook_syntax import strip_magics
    from mha_classroom.runner import run_cells

    for cell in ("%%bash\nrm -rf /tmp/x\n", "%%script false --no-raise-error\ndef softmax(x):\n    pass\n",
                 "%%html\n<b>hi</b>\n", "%%writefile notes.txt\nmy notes\n"):
        assert strip_magics(cell) == "pass"  # the body is not the notebook's Python: it never runs
    assert strip_magics("%%time\nx = 1\n").splitlines() == ["pass", "x = 1"]
    assert strip_magics("w = %time 2 * 3\nv = %who_ls\n%env MHA_TRY=1\n").splitlines() == [
        "w = 2 * 3", "v = None", "__import__('os').environ['MHA_TRY'] = '1'"]
    namespace: dict = {}
    cells = [(1, "%%capture out\nprint('hidden')\ny = 2\n"), (2, "%env MHA_TRY_ENV = on\n"),
             (3, "text = out.stdout + str(y)\n"), (4, "t = %timeit -o y + 1\nseconds = t.average\n")]
    reports = run_cells(cells, namespace, 5.0)
    try:
        assert reports == [["ok", None]] * 4 and namespace["text"] == "2" and namespace["seconds"] == 0.0
        assert os.environ["MHA_TRY_ENV"] == "on"
    finally:
        os.environ.pop("MHA_TRY_ENV", None)


#: Runs in a fresh process, as the grader's runs do: a test process may hold a running event loop (the
#: browser tests' Playwright does), where ``asyncio.run`` refuses to start.
FUTURE_AND_AWAIT = """
import json
from mha_classroom.runner import _CellCompiler, run_cells
compiler, namespace = _CellCompiler(), {}
cells = [(1, "from __future__ import annotations\\n"),
         (2, "def f(x: NotImportedHere) -> None:\\n    return None\\n"),  # annotations stay strings
         (3, "import asyncio\\nawait asyncio.sleep(0)\\nawaited = True\\n")]
reports = [run_cells([cell], namespace, 5.0, compiler)[0] for cell in cells]
alone = run_cells(cells[1:2], {}, 5.0)[0]  # without the first cell's import
print(json.dumps({"reports": reports, "awaited": namespace.get("awaited"), "alone": alone}))
"""


def test_future_imports_hold_for_later_cells_and_a_cell_may_await():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FUTURE_AND_AWAIT], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert seen["reports"] == [["ok", None]] * 3 and seen["awaited"] is True
    assert seen["alone"][1][0] == "NameError"


def test_a_module_a_writefile_cell_wrote_imports(monkeypatch):
    import sys

    from mha_classroom import notebook_syntax
    from mha_classroom.runner import run_cells

    monkeypatch.setattr(notebook_syntax, "_WRITTEN", {})
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, notebook_syntax.WrittenModules()])
    monkeypatch.delitem(sys.modules, "course_helpers", raising=False)
    cells = [(1, "%%writefile course_helpers.py\ndef double(x):\n    return 2 * x\n"),
             (2, "%%writefile -a course_helpers.py\nTRIPLE = 3\n"),
             (3, "from course_helpers import double, TRIPLE\nsix = double(TRIPLE)\n"),
             (4, "%%writefile notes.txt\nmy notes\n"), (5, "%run course_helpers.py\n")]
    namespace: dict = {}
    reports = run_cells(cells, namespace, 5.0)
    assert reports == [["ok", None]] * 5 and namespace["six"] == 6
    assert set(notebook_syntax._WRITTEN) == {"course_helpers"}
    assert "TRIPLE" in namespace and "double" in namespace  # %run brought its names in


def test_calls_run_with_the_floating_point_handling_the_notebook_started_with():
    from mha_classroom import wire
    from mha_classroom.runner import call_probe

    def softmax(x):  # exp(-1000) underflows to 0: harmless, unless underflow raises
        shifted = np.exp(x - x.max())
        return shifted / shifted.sum()

    arrays: list = []
    probe = {"name": "softmax", "kind": "call", "args": wire.encode((np.array([0.0, -1000.0]),), arrays),
             "kwargs": wire.encode({}, arrays)}
    with np.errstate(all="raise"):  # an experiment cell's np.seterr(all="raise"), after the tests
        with pytest.raises(FloatingPointError):
            softmax(np.array([0.0, -1000.0]))
        record = call_probe(probe, {"softmax": softmax}, arrays, 5.0, [], 2**20)
        assert record["status"] == "ok", record
        with pytest.raises(FloatingPointError):  # and the handling is the student's again after
            np.exp(np.array([-1000.0]))

    def mean(x):  # a RuntimeWarning, which a later cell's warnings.simplefilter("error") would raise
        return np.nanmean(x)

    probe["name"] = "mean"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        record = call_probe(probe | {"args": wire.encode((np.array([np.nan]),), arrays)}, {"mean": mean},
                            arrays, 5.0, [], 2**20)
        assert record["status"] == "ok", record
        with pytest.raises(RuntimeWarning):
            mean(np.array([np.nan]))


def test_a_masked_array_with_nothing_masked_is_sent_as_its_array():
    from mha_classroom.runner import _unmasked

    weights = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    entropy = -(weights * np.ma.log(weights)).sum(axis=-1)  # log 0 masked, the sums are not
    plain = _unmasked(entropy)
    assert type(plain) is np.ndarray and np.allclose(plain, [np.log(2), 0.0])
    pair = _unmasked((entropy, [entropy]))
    assert type(pair) is tuple and type(pair[0]) is np.ndarray and type(pair[1][0]) is np.ndarray
    holes = np.ma.log(weights)  # masked entries: no value to check, still refused by the grader
    assert _unmasked(holes) is holes


def test_the_numpy_only_run_lets_the_learner_checks_import_and_nothing_else(monkeypatch):
    import sys

    from mha_classroom.stand_ins import NoMha

    for name in [n for n in sys.modules if n == "mha" or n.startswith("mha.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [NoMha(), *sys.meta_path])
    monkeypatch.setattr(NoMha, "used", False)
    from mha.checks import check_softmax

    check_softmax(lambda x: x)  # a check does nothing, and asks for nothing
    assert not NoMha.used
    from mha.checks import CheckFailed, strict

    with strict():
        try:
            pass
        except CheckFailed:  # still a class an except clause accepts
            pass
    assert issubclass(CheckFailed, Exception)
    monkeypatch.setattr(NoMha, "checks_names", ("check_softmax", "CheckFailed"))
    monkeypatch.delitem(sys.modules, "mha.checks")
    star: dict = {}
    exec("from mha.checks import *", star)  # noqa: S102 - as a chapter's first cell has it
    assert star["check_softmax"](lambda x: x) is not None and star["CheckFailed"] is CheckFailed
    import mha
    from mha import softmax as reference  # importing for comparison is no use of the package
    from mha.attention import scaled_dot_product_attention

    assert not NoMha.used
    with pytest.raises(ModuleNotFoundError, match="mha.softmax is not there"):
        reference([1.0])
    assert NoMha.used
    with pytest.raises(ModuleNotFoundError, match="mha.attention.scaled_dot_product_attention"):
        scaled_dot_product_attention(1, 2, 3)
    with pytest.raises(ModuleNotFoundError, match="mha.MultiHeadAttention"):
        class Mine(mha.MultiHeadAttention):  # noqa: F841 - subclassing is using it
            pass


def test_a_note_merged_cells_or_windows_line_endings_leave_a_test_cell(tmp_path):
    from mha_classroom import load_assignment
    from mha_classroom.release import student_notebook
    from mha_classroom.submission import is_test_cell, notes_on_test_cells
    from tests.classroom.conftest import ASSIGNMENTS

    tests = {"softmax_rows"}
    header = "# grade_id: softmax_rows  points: 2\nassert True\n"
    assert is_test_cell("\n# my note: run me last\n" + header, "softmax_rows", tests)
    assert is_test_cell("# my note\nx = 1\n" + header, "softmax_rows", tests)  # merged with an answer
    assert is_test_cell(header.replace("2\n", "2   <- passes now!\n"), "softmax_rows", tests)
    assert not is_test_cell("x = 1\n", "softmax_rows", tests)
    assert not is_test_cell("x = 1\n# grade_id: softmax_rows\n", "softmax_rows", tests)
    assert not is_test_cell(header, "other_test", tests)
    assignment = load_assignment(ASSIGNMENTS[0])
    notebook = student_notebook(assignment)
    for cell in notebook["cells"]:
        cell["source"] = cell["source"].replace("\n", "\r\n")  # saved on Windows
    notebook["cells"][0]["source"] = "# " + notebook["cells"][0]["source"]
    path = tmp_path / "crlf.ipynb"
    path.write_text(json.dumps(notebook))
    notes, events = notes_on_test_cells(assignment, read_notebook(path))
    assert (notes, events) == ([], set())


def test_hidden_tests_in_a_submission_never_run_and_are_no_edit(tmp_path):
    from mha_classroom import load_assignment
    from mha_classroom.release import nbgrader_notebook
    from mha_classroom.submission import untouched_test_cells, without_hidden_tests
    from tests.classroom.conftest import ASSIGNMENTS

    assert without_hidden_tests("a\n  ### BEGIN HIDDEN TESTS\nb\n### END HIDDEN TESTS\nc") == "a\nc"
    assert without_hidden_tests("a\n### BEGIN HIDDEN TESTS\nb") == "a"  # never closed: to the end
    assignment = load_assignment(ASSIGNMENTS[0])
    path = tmp_path / "teacher.ipynb"  # the instructor's notebook, hidden tests and all
    path.write_text(json.dumps(nbgrader_notebook(assignment)))
    cells = read_notebook(path)
    assert not any("### BEGIN HIDDEN TESTS" in source for _, source, _ in cells)
    tests = [n for n, (_, _, grade_id) in enumerate(cells, start=1)
             if grade_id in {test.grade_id for test in assignment.tests}]
    assert untouched_test_cells(assignment, cells) == set(tests) and len(tests) == len(assignment.tests)


def test_a_notebook_too_big_says_how_to_make_it_smaller(tmp_path):
    from mha_classroom.submission import read_bytes

    path = tmp_path / "big.ipynb"
    path.write_bytes(b"x" * 2_000)
    with pytest.raises(InvalidSubmission, match=r"MiB the grader accepts; clear its "
                                                r"outputs \(in Jupyter: Kernel, Restart Kernel and Clear"):
        read_bytes(path, limit=1_000)
