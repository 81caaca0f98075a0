"""The inside of the sandbox: run a student's own cells, then answer the grader's probe calls.

This file runs as a script (``python -I -S -B runner.py <site-packages>...``) in the sandbox,
next to ``wire.py`` and ``notebook_syntax.py`` (IPython syntax), and imports nothing but the
standard library, NumPy and those two. It reads one message on stdin (the student's code cells,
edited test cells among them; the visible tests' probe calls and their input arrays), keeps private
duplicates of stdin and stdout, points the standard descriptors at ``/dev/null``, and then:

1. runs each cell in one ``__main__`` namespace, with a per-cell alarm, recording the error a cell
   raised (type, message, line) and discarding what it prints;
2. calls each probe (``name(*args, **kwargs)`` on fresh copies of the inputs, or reads a value),
   with a per-call alarm, recording the output, the exception (type name and message), and any
   input array the call changed in place; then says so, and only then receives the *hidden* tests'
   calls and answers them the same way (so no answer the feedback may quote was written while the
   hidden inputs were in the process);
3. reports the signature of each answer, and whether anything tried to import ``mha`` when the
   grader asked for a run without it;
4. writes one frame per cell and per probe as it goes (JSON + arrays, see ``wire``) on the private
   descriptor, so a run stopped half-way still reports what it finished, then exits.

Nothing here decides a grade. Anything the student's code does to this process (patching NumPy,
this module or ``wire``, threads, forged output) can only change its own answers; the grader
validates them as untrusted data and runs the tests itself.
"""

import __future__

import ast
import contextlib
import importlib.machinery
import inspect
import os
import signal
import sys
import traceback
import warnings

if __name__ == "__main__":  # in the sandbox: started with -S, site-packages come as arguments
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.extend(sys.argv[1:])
    import notebook_syntax
    import wire
else:  # imported by the grader's own tools (docs, tests): no change to sys.path
    from mha_classroom import notebook_syntax, wire

import numpy as np  # noqa: E402

MESSAGE_CHARS = 500
#: NumPy's floating-point error handling before any cell ran. In the notebook a test ran where it
#: stood, so an experiment cell below it with ``np.seterr(all="raise")`` never reached it; the
#: calls here come after every cell, so each runs with the handling the notebook started with, and
#: with warnings that never stop it (a Jupyter kernel passed tests that a notebook's
#: ``warnings.simplefilter("error")`` made fail here).
_NUMPY_ERRORS = np.geterr()


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _text(value, limit=MESSAGE_CHARS):
    try:
        text = str(value)
    except BaseException:  # noqa: BLE001 - a student's __str__ may raise anything
        text = "<the message could not be printed>"
    return text if len(text) <= limit else text[:limit] + " …(cut)"


def _exception(error, filename=None):
    """``[type name, message, line]`` of an exception (line in the cell ``filename``, or 0)."""
    line = 0
    try:
        for frame in traceback.extract_tb(error.__traceback__):
            if frame.filename == filename:
                line = frame.lineno or 0
    except BaseException:  # noqa: BLE001
        pass
    name = type(error).__name__ if isinstance(type(error).__name__, str) else "Exception"
    if isinstance(error, SystemExit):
        return ["SystemExit", _text(f"the code called sys.exit({error.code!r})"), line]
    return [name[:100], _text(error), line]


class _Capped:
    """A stand-in for sys.stdout / sys.stderr that keeps nothing (prints are not graded)."""

    encoding, errors = "utf-8", "strict"  # code may read them (a notebook's streams have them)

    def write(self, text):
        return len(text) if isinstance(text, str) else 0

    def flush(self):
        pass

    def isatty(self):
        return False


class _NoMha:
    """A meta path finder standing in for ``mha`` when the grader asks for a run without it.

    ``mha.checks``, the learner's own checks, imports and does nothing (a check called in an answer
    cell is feedback for the student, not part of the answer). ``mha`` itself imports as an empty
    package whose every other name raises ModuleNotFoundError when used, as do its other modules; any
    of those notes that the code asked for the package.
    """

    attempted = False
    checks_names = ()  # mha.checks.__all__, sent by the grader: ``from mha.checks import *`` works

    def find_spec(self, name, path=None, target=None):
        if name in ("mha", "mha.checks"):
            return importlib.machinery.ModuleSpec(name, self, is_package=name == "mha")
        if name.startswith("mha."):
            _NoMha.attempted = True
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

    def create_module(self, spec):
        return None  # the default module object

    def exec_module(self, module):
        module.__getattr__ = _missing_mha_name if module.__name__ == "mha" else _silent_check
        if module.__name__ == "mha.checks":
            module.__all__ = list(_NoMha.checks_names)


def _missing_mha_name(name):
    if name.startswith("__"):
        raise AttributeError(name)
    _NoMha.attempted = True
    raise ModuleNotFoundError(f"No module named 'mha' (mha.{name} is not there in the NumPy-only run)",
                              name="mha")


class _SilentCheckFailed(AssertionError):
    """Stands in for ``mha.checks.CheckFailed`` (an ``except CheckFailed:`` must still be valid)."""


def _silent_check(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name == "CheckFailed":
        return _SilentCheckFailed
    return lambda *args, **kwargs: contextlib.nullcontext()  # strict() is used in a with statement


class _CellCompiler:
    """Compiles cells as IPython does: a ``from __future__ import`` in one cell holds for the cells
    after it, and a cell may ``await`` at its top level."""

    def __init__(self):
        self.flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT

    def __call__(self, source, filename):
        code = compile(source, filename, "exec", self.flags, dont_inherit=True)
        for name in __future__.all_feature_names:
            feature = getattr(__future__, name)
            if code.co_flags & feature.compiler_flag:
                self.flags |= feature.compiler_flag
        return code


def run_cells(cells, namespace, seconds, compiler=None):
    """Run each cell; return ``[status, [type, message, line]]`` per cell."""
    compiler = compiler or _CellCompiler()
    reports = []
    for number, source in cells:
        filename = f"<cell {number}>"
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            notebook_syntax.keep_written_module(source)
            code = compiler(notebook_syntax.strip_magics(source), filename)
            if code.co_flags & inspect.CO_COROUTINE:  # a top-level await: run it to its end
                import asyncio

                asyncio.run(eval(code, namespace))  # noqa: S307
            else:
                exec(code, namespace)  # noqa: S102
            reports.append(["ok", None])
        except _Timeout:
            reports.append(["timeout", ["Timeout", f"the cell ran longer than its {seconds:g} s "
                                        "limit (an endless loop?)", 0]])
        except BaseException as error:  # noqa: BLE001 - every failure is the student's
            try:
                reports.append(["error", _exception(error, filename)])
            except BaseException:  # noqa: BLE001
                reports.append(["error", ["Exception", "", 0]])
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return reports


def _changed(before, after):
    if type(after) is not np.ndarray or after.shape != before.shape:
        return True
    return not np.array_equal(before, after, equal_nan=before.dtype.kind in "fc")


def _unmasked(value):
    """A NumPy masked array with nothing masked (``np.ma.log`` summed, say) as the plain array it
    holds, alone or in a tuple or list; one with masked entries stays as it is (the grader refuses it:
    its masked entries have no value to check)."""
    if type(value) in (tuple, list):
        return type(value)(_unmasked(item) for item in value)
    if isinstance(value, np.ma.MaskedArray) and not np.ma.is_masked(value):
        return np.ma.getdata(value)
    return value


def call_probe(probe, namespace, arrays, seconds, out_arrays, max_bytes):
    """Answer one probe; return its result record."""
    name = probe["name"]
    if name not in namespace:
        return {"status": "missing"}
    target = namespace[name]
    if probe["kind"] == "value":
        try:
            return {"status": "ok", "out": wire.encode(_unmasked(target), out_arrays, strict=False)}
        except wire.WireError as error:
            return {"status": "unsupported", "why": _text(error, 200)}
    if not callable(target):
        return {"status": "not_callable", "type": type(target).__name__[:100]}
    args = wire.decode(probe["args"], arrays)
    kwargs = wire.decode(probe["kwargs"], arrays)
    originals = {key: value.copy() for key, value in
                 [*enumerate(args), *kwargs.items()] if type(value) is np.ndarray}
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        # a later cell's np.seterr(all="raise") or warnings.simplefilter("error") is no answer's
        with np.errstate(**_NUMPY_ERRORS), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a warning never stops a call (prints are not kept)
            output = target(*args, **kwargs)
        record = {"status": "ok"}
    except _Timeout:
        return {"status": "timeout"}
    except BaseException as error:  # noqa: BLE001
        record, output = {"status": "raised", "exc": _exception(error)[:2]}, None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if record["status"] == "ok":
        try:
            record["out"] = wire.encode(_unmasked(output), out_arrays, strict=False)
        except wire.WireError as error:
            return {"status": "unsupported", "why": _text(error, 200)}
        if sum(array.nbytes for array in out_arrays) > max_bytes:
            del out_arrays[:]
            return {"status": "unsupported", "why": f"larger than {max_bytes} bytes"}
    mutated = []
    for key, before in originals.items():
        after = args[key] if isinstance(key, int) else kwargs[key]
        if _changed(before, after):
            mutated.append([key, wire.encode(np.asarray(after), out_arrays, strict=False)])
    if mutated:
        record["mutated"] = mutated
    return record


def signature(target):
    """``[[name, kind, has_default], ...]`` of a callable, or None."""
    try:
        parameters = inspect.signature(target).parameters.values()
        return [[p.name[:100], int(p.kind), p.default is not p.empty] for p in parameters][:64]
    except BaseException:  # noqa: BLE001
        return None


def _send(fd, header, arrays):
    """Write one frame: its length (8 bytes) then a wire message."""
    message = wire.pack(header, arrays)
    view = memoryview(len(message).to_bytes(8, "little") + message)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd):
    """Read one length-prefixed wire message from ``fd``; return (header, arrays)."""
    def exactly(count):
        chunks = []
        while count:
            chunk = os.read(fd, min(count, 1 << 20))
            if not chunk:
                raise EOFError("the grader closed the channel")
            chunks.append(chunk)
            count -= len(chunk)
        return b"".join(chunks)

    length = int.from_bytes(exactly(8), "little")
    data = exactly(length)
    return wire.unpack(data, max_bytes=len(data) + 1)


def _answer_all(probes, first_index, namespace, arrays, job, answer):
    for index, probe in enumerate(probes, start=first_index):
        out_arrays = []
        try:
            result = call_probe(probe, namespace, arrays, float(job["probe_timeout"]), out_arrays,
                                int(job["max_result_bytes"]))
        except BaseException as error:  # noqa: BLE001
            result, out_arrays = {"status": "raised", "exc": _exception(error)[:2]}, []
        _send(answer, {"probe": index, "result": result}, out_arrays)


def main():
    channel = os.dup(0)
    job, arrays = _receive(channel)
    answer = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdout = sys.stderr = _Capped()
    sys.path[:0] = [entry for entry in job["path"] if isinstance(entry, str)]
    if job["block_mha"]:
        sys.meta_path.insert(0, _NoMha())
    module = type(sys)("__main__")
    sys.modules["__main__"] = module
    namespace = vars(module)
    namespace["display"] = notebook_syntax.display
    for name in ("help", "exit", "quit"):  # builtins that python -S leaves out
        namespace[name] = notebook_syntax.help
    shell = notebook_syntax.Shell(namespace)
    namespace["get_ipython"] = lambda: shell
    sys.meta_path[:0] = [notebook_syntax.IPythonShellHook(shell)]
    sys.meta_path.append(notebook_syntax.WrittenModules())
    compiler = _CellCompiler()
    _NoMha.checks_names = tuple(name for name in job.get("checks_names", ())
                                if isinstance(name, str) and name.isidentifier())
    for number, source in job["cells"]:
        (report,) = run_cells([(number, source)], namespace, float(job["cell_timeout"]), compiler)
        _send(answer, {"cell": number, "status": report[0], "error": report[1]}, [])
    _answer_all(job["probes"], 0, namespace, arrays, job, answer)
    if job["hidden_follow"]:  # the hidden tests' calls arrive only once these answers are in
        _send(answer, {"phase": "visible_done"}, [])
        hidden, hidden_arrays = _receive(channel)
        _answer_all(hidden["probes"], len(job["probes"]), namespace, hidden_arrays, job, answer)
    signatures = {name: signature(namespace[name]) for name in job["answers"]
                  if name in namespace and callable(namespace[name])}
    _send(answer, {"end": True, "signatures": signatures, "mha_attempted": _NoMha.attempted}, [])
    os._exit(0)


if __name__ == "__main__":
    main()
