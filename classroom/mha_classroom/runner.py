"""The inside of the sandbox: run a student's own cells, then answer the grader's probe calls.

This file runs as a script (``python -I -S -B runner.py <site-packages>...``) in the sandbox,
next to ``wire.py``, ``notebook_syntax.py`` (IPython syntax) and ``stand_ins.py`` (packages that
are not there), and imports nothing but the standard library, NumPy and those three. It reads one
message on stdin (the student's code cells, edited test cells among them; the visible tests' probe
calls and their input arrays), gives itself a new, empty session keyring, keeps private duplicates
of stdin and stdout, points the standard descriptors at ``/dev/null``, and then:

1. runs each cell in one ``__main__`` namespace, with a per-cell alarm, recording the error a cell
   raised (type, message, line) and discarding what it prints; an answer function a later cell
   rebinds to something else (``softmax = softmax(x)``) is put back as it last stood, since the
   test cells above that cell saw it so;
2. calls each probe (``name(*args, **kwargs)`` on fresh copies of the inputs, or reads a value),
   with a per-call alarm, recording the output, the exception (type name and message), and any
   input array the call changed in place (compared byte for byte, with functions taken before
   any student code ran);
3. says so in a ``visible_done`` frame, with the signature of each answer, any use of ``mha`` where
   the grader asked for a run without it, and the rebindings and stand-ins of step 1; only then
   receives the *hidden* tests' calls and answers them the same way, so nothing the grader learns
   about the visible answers was written while the hidden inputs were in the process;
4. writes one frame per cell and per probe as it goes (JSON + arrays, see ``wire``) on the private
   descriptor, so a run stopped half-way still reports what it finished, then exits.

Nothing here decides a grade. Anything the student's code does to this process (patching NumPy,
this module or ``wire``, threads, forged output) can only change its own answers; the grader
validates them as untrusted data and runs the tests itself.
"""

import __future__

import ast
import inspect
import os
import signal
import sys
import traceback
import warnings

if __name__ == "__main__":  # in the sandbox: started with -S, site-packages come as arguments
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    sys.path.extend(arg for arg in sys.argv[1:] if not arg.startswith("--"))  # --run-of=<tag>
    import notebook_syntax
    import stand_ins
    import wire
else:  # imported by the grader's own tools (docs, tests): no change to sys.path
    from mha_classroom import notebook_syntax, stand_ins, wire

import numpy as np  # noqa: E402

MESSAGE_CHARS = 500
SUBMISSION_DIR = "/opt/mha-submission"  # the .py files handed in next to the notebook, read-only
FONTS_DIR = "/opt/mha-runner/fonts"  # the grader's matplotlib font list, if it has one
#: NumPy's floating-point error handling before any cell ran. In the notebook a test ran where it
#: stood, so an experiment cell below it with ``np.seterr(all="raise")`` never reached it; the
#: calls here come after every cell, so each runs with the handling the notebook started with, and
#: with warnings that never stop it (a Jupyter kernel passed tests that a notebook's
#: ``warnings.simplefilter("error")`` made fail here).
_NUMPY_ERRORS = np.geterr()
# Taken before any student code runs: a cell that patches np.array_equal or np.ndarray cannot hide
# an input it changed in place (a student who walks this module's frames can, and gains only that).
_NDARRAY, _TOBYTES, _BYTES_EQ = np.ndarray, np.ndarray.tobytes, bytes.__eq__
_COPY = np.ndarray.copy


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
    """True if ``after`` (the input array after a call) differs from ``before`` (a copy)."""
    if type(after) is not _NDARRAY or after.shape != before.shape or after.dtype != before.dtype:
        return True
    return not _BYTES_EQ(_TOBYTES(before), _TOBYTES(after))


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
    originals = {key: _COPY(value) for key, value in
                 [*enumerate(args), *kwargs.items()] if type(value) is _NDARRAY}
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


def fresh_keyring(number):
    """Join a new, empty session keyring (``keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)``, the one
    keyring call the sandbox allows), so that nothing of the grader's session keyring is this run's.
    ``number`` is ``keyctl``'s system call number here (None: not Linux, nothing to do)."""
    if type(number) is not int:
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).syscall(number, 1, None)
    except (OSError, AttributeError):
        pass


def _copy_font_list():
    """matplotlib's font list, where matplotlib looks first (listing the fonts takes seconds)."""
    home = os.environ.get("MPLCONFIGDIR")
    if not home or not os.path.isdir(FONTS_DIR):
        return
    try:
        os.makedirs(home, exist_ok=True)
        for name in os.listdir(FONTS_DIR):
            with open(os.path.join(FONTS_DIR, name), "rb") as source, \
                    open(os.path.join(home, name), "wb") as target:
                target.write(source.read())
    except OSError:
        pass


def _link_submission_files():
    """The ``.py`` files handed in next to the notebook, where Jupyter would have them: importable,
    and in the working folder (read-only, through links)."""
    if not os.path.isdir(SUBMISSION_DIR):
        return
    sys.path.insert(0, SUBMISSION_DIR)
    for name in os.listdir(SUBMISSION_DIR):
        try:
            os.symlink(os.path.join(SUBMISSION_DIR, name), name)
        except OSError:
            pass


class _Callables:
    """The answer functions as each last stood as functions, cell by cell."""

    def __init__(self, names):
        self.names, self.last = names, {}

    def note(self, namespace, number):
        for name in self.names:
            value = namespace.get(name)
            if value is not None and callable(value):
                self.last[name] = (value, number)

    def restore(self, namespace):
        """Put back each answer function a later cell rebound to a non-function (or deleted);
        return ``[name, cell that defined it, what it was rebound to]`` for each."""
        restored = []
        for name, (value, number) in self.last.items():
            current = namespace.get(name)
            if current is None or not callable(current):
                what = type(current).__name__[:60] if name in namespace else "nothing (del)"
                namespace[name] = value
                restored.append([name, number, what])
        return restored


def _namespace(job):
    module = type(sys)("__main__")
    sys.modules["__main__"] = module
    namespace = vars(module)
    namespace["display"] = notebook_syntax.display
    for name in ("help", "exit", "quit"):  # builtins that python -S leaves out
        namespace[name] = notebook_syntax.help
    shell = notebook_syntax.Shell(namespace)
    namespace["get_ipython"] = lambda: shell
    sys.meta_path[:0] = [notebook_syntax.IPythonShellHook(shell)]
    absent = [name for name in job.get("stand_in", ()) if name in ("IPython", "matplotlib")]
    if absent:
        sys.meta_path.insert(0, stand_ins.Inert(absent, shell, notebook_syntax.display))
    sys.meta_path.append(notebook_syntax.WrittenModules())
    return namespace


def main():
    channel = os.dup(0)
    job, arrays = _receive(channel)
    fresh_keyring(job.get("keyctl"))
    answer = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    sys.stdout = sys.stderr = _Capped()
    sys.path[:0] = [entry for entry in job["path"] if isinstance(entry, str)]
    _link_submission_files()
    _copy_font_list()
    if job["block_mha"]:
        sys.meta_path.insert(0, stand_ins.NoMha())
    stand_ins.NoMha.checks_names = tuple(name for name in job.get("checks_names", ())
                                         if isinstance(name, str) and name.isidentifier())
    namespace = _namespace(job)
    compiler, callables = _CellCompiler(), _Callables(list(job.get("functions", ())))
    for number, source in job["cells"]:
        (report,) = run_cells([(number, source)], namespace, float(job["cell_timeout"]), compiler)
        callables.note(namespace, number)
        _send(answer, {"cell": number, "status": report[0], "error": report[1]}, [])
    rebound = callables.restore(namespace)
    _answer_all(job["probes"], 0, namespace, arrays, job, answer)
    signatures = {name: signature(namespace[name]) for name in job["answers"]
                  if name in namespace and callable(namespace[name])}
    _send(answer, {"phase": "visible_done", "signatures": signatures, "rebound": rebound,
                   "mha_used": stand_ins.NoMha.used, "stand_ins": sorted(stand_ins.Inert.used)}, [])
    if job["hidden_follow"]:  # the hidden tests' calls arrive only once these answers are in
        hidden, hidden_arrays = _receive(channel)
        _answer_all(hidden["probes"], len(job["probes"]), namespace, hidden_arrays, job, answer)
    _send(answer, {"end": True}, [])
    os._exit(0)


if __name__ == "__main__":
    main()
