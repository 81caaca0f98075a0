"""The inside of the grading sandbox: run one submission's cells in this (fresh) process.

The grader starts ``python -s -B runner.py <results-fd>`` in an empty working directory, with a new
session, and writes one JSON job on stdin: the cells to run, the limits, and a one-time key. This
script then

1. limits itself: address space (RLIMIT_AS), file size, CPU time, no core dumps;
2. imports NumPy and ``mha`` and remembers their public attributes and those of ``builtins``;
3. installs an audit hook (which Python code cannot remove) that refuses writes outside the working
   directory, new processes, signals to other processes, sockets, ``ctypes`` and raising limits;
4. runs each cell with a per-cell alarm, capturing (and capping) what it prints; before each test
   cell it puts back any NumPy/``mha``/builtin attribute the submission replaced;
5. reports ``begin``/``end``/``note`` records on the results descriptor, one line each, signed with
   an HMAC of the key: the grader ignores any line it cannot verify, so printing fake results or
   writing to the descriptor earns nothing, and a process that ends early (``os._exit``) simply
   stops reporting.

Only the standard library is imported before the submission's own imports. What a submission can
still do with deliberate effort (walk interpreter frames to find the key) is discussed in the
teachers' guide; run the grader in a container for high-stakes exams.
"""

import io
import os
import re
import resource
import signal
import sys
import traceback
from types import FunctionType

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_DENIED_EVENTS = frozenset({
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
    "os.forkpty", "os.kill", "os.killpg", "signal.pthread_kill", "socket.connect", "socket.bind",
    "socket.sendto", "socket.sendmsg", "os.symlink", "os.link", "resource.setrlimit",
    "resource.prlimit", "os.chroot", "os.setuid", "os.setgid", "pty.spawn",
})
_PATH_EVENTS = frozenset({
    "os.remove", "os.rmdir", "os.rename", "os.mkdir", "os.truncate", "os.chmod", "os.chown",
    "os.utime", "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree",
    "shutil.rmtree", "shutil.move", "shutil.make_archive", "shutil.unpack_archive",
})
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_MESSAGE_CHARS = 3000
_OUTPUT_CHARS = 20_000
_WATCHED_PACKAGES = ("numpy", "mha")
_PRELOADED = ("numpy", "numpy.testing", "mha", "mha.checks", "mha.classroom.integrity")


class CellTimeout(BaseException):  # noqa: N818 - a BaseException, so `except Exception` can't eat it
    """Raised by the per-cell alarm."""


class _CappedText(io.TextIOBase):
    """A stdout/stderr stand-in that keeps the first characters and drops the rest."""

    def __init__(self, limit):
        self.parts, self.size, self.limit = [], 0, limit

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        if self.size < self.limit:
            self.parts.append(text[: self.limit - self.size])
        self.size += len(text)
        return len(text)


def _set_limits(job):
    memory = int(job["memory_mb"]) * 2**20
    file_size = int(job["file_mb"]) * 2**20
    cpu = int(job["timeout"]) + 5
    for limit, value in ((resource.RLIMIT_AS, memory), (resource.RLIMIT_FSIZE, file_size),
                         (resource.RLIMIT_CPU, cpu), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big file becomes an OSError, not a kill


def _audit_hook(workdir):
    """Return the hook that keeps a submission inside ``workdir``."""
    realpath, fspath, isinstance_, str_, bytes_ = (
        os.path.realpath, os.fspath, isinstance, str, bytes)
    inside = workdir + os.sep

    def allowed(path):
        if isinstance_(path, int):
            return True
        try:
            full = realpath(fspath(path))
        except (TypeError, ValueError):
            return False
        if isinstance_(full, bytes_):
            full = full.decode("utf-8", "replace")
        return full == workdir or full.startswith(inside) or full == "/dev/null"

    def refuse(what):
        raise PermissionError(f"the grader does not allow {what} in submissions "
                              "(only reading files and writing inside the working directory)")

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writes = (isinstance_(mode, str_) and any(c in mode for c in "wax+")) or (
                isinstance_(flags, int) and flags & _WRITE_FLAGS)
            if writes and not allowed(path):
                refuse(f"writing to {path!r}")
        elif event in _PATH_EVENTS:
            for arg in args:
                if isinstance_(arg, (str_, bytes_, os.PathLike)) and not allowed(arg):
                    refuse(f"{event} on {arg!r}")
        elif event in _DENIED_EVENTS or event.startswith("ctypes."):
            refuse(event)

    return hook


def _watched(name):
    return name == "builtins" or name.split(".", 1)[0] in _WATCHED_PACKAGES


def _public(name, module_name):
    return module_name == "builtins" or not name.startswith("_")


def _snapshot():
    """What tests rely on, to put back before each test cell: the public attributes of builtins,
    NumPy and mha modules, the code of their functions, and the attributes of mha's classes."""
    modules, attributes, codes = {}, {}, {}
    for name, module in list(sys.modules.items()):
        if not _watched(name) or module is None:
            continue
        modules[name] = module
        saved = {key: value for key, value in vars(module).items() if _public(key, name)}
        attributes[module] = saved
        for value in saved.values():
            if isinstance(value, type) and value.__module__.split(".", 1)[0] == "mha":
                attributes[value] = dict(vars(value))
    for owner in attributes.values():
        for value in owner.values():
            if isinstance(value, FunctionType):
                codes[value] = value.__code__
    return modules, attributes, codes


def _restore(snapshot, vars=vars, getattr=getattr, setattr=setattr):  # noqa: A002
    """Undo what a submission replaced; return the names it had touched.

    The builtins it uses are bound as defaults, when nothing has been replaced yet.
    """
    modules, attributes, codes = snapshot
    touched = []
    for name, module in modules.items():
        if sys.modules.get(name) is not module:
            sys.modules[name] = module
            touched.append(f"sys.modules[{name!r}]")
    for owner, saved in attributes.items():
        current = vars(owner)
        for key, value in saved.items():
            if current.get(key, _restore) is not value:
                setattr(owner, key, value)
                touched.append(f"{getattr(owner, '__name__', '?')}.{key}")
    for function, code in codes.items():
        if function.__code__ is not code:
            function.__code__ = code
            touched.append(f"{function.__module__}.{function.__qualname__}.__code__")
    return touched


def _clean(text, workdir):
    text = _ADDRESS.sub("0x…", text.replace(workdir, "<workdir>"))
    return text if len(text) <= _MESSAGE_CHARS else text[:_MESSAGE_CHARS] + " …(cut)"


def _describe(error, workdir):
    """One paragraph about an exception: its type, message and where in the notebook it arose."""
    try:
        message = str(error)
    except BaseException:  # noqa: BLE001 - a submission's __str__ may raise anything
        message = "<the exception's message could not be printed>"
    where = ""
    try:
        frames = traceback.extract_tb(error.__traceback__)
        cells = [frame for frame in frames if frame.filename.startswith("<cell ")]
        if cells:
            where = f" ({cells[-1].filename[1:-1]}, line {cells[-1].lineno})"
    except BaseException:  # noqa: BLE001
        pass
    name = type(error).__name__
    if isinstance(error, SystemExit):
        return f"SystemExit: the code called sys.exit({error.code!r}){where}"
    if isinstance(error, MemoryError):
        message = f"{message} (beyond the grader's memory limit)".strip()
    if isinstance(error, NotImplementedError) and not message:
        message = "not answered yet (the '# YOUR CODE HERE' stub is still there)"
    return _clean(f"{name}: {message}{where}" if message else f"{name}{where}", workdir)


def _timeout(signum, frame):
    raise CellTimeout


def _make_cell_runner(namespace, seconds, workdir):
    """Return ``run(source, filename) -> (status, message)``; its tools are bound now, so a
    submission that later replaces ``builtins.exec`` or this module's globals cannot reach them."""
    exec_, compile_, setitimer, set_handler = exec, compile, signal.setitimer, signal.signal
    describe, isinstance_, timer = _describe, isinstance, signal.ITIMER_REAL

    def run(source, filename):
        set_handler(signal.SIGALRM, _timeout)
        setitimer(timer, seconds)
        try:
            exec_(compile_(source, filename, "exec"), namespace)
            return "ok", ""
        except CellTimeout:
            return "timeout", f"the cell ran longer than its {seconds:g} s limit (an endless loop?)"
        except BaseException as error:  # noqa: BLE001 - every failure is the submission's
            try:
                return ("exit" if isinstance_(error, SystemExit) else "error"), describe(
                    error, workdir)
            except BaseException:  # noqa: BLE001 - e.g. a second alarm while describing
                return "error", "the exception raised could not be described"
        finally:
            setitimer(timer, 0)

    return run


def _make_reporter(results_fd, key_hex):
    """Return ``report(event, index, grade_id, status, message)`` writing signed lines."""
    import _hashlib

    signer = _hashlib.hmac_new(bytes.fromhex(key_hex), b"", "sha256")
    copy, write, str_, counter = signer.copy, os.write, str, [0]

    def report(event, index, grade_id, status, message):
        counter[0] += 1
        fields = (str_(counter[0]), event, str_(index), grade_id, status)
        payload = "|".join(fields) + "|" + message.encode("utf-8", "replace").hex()
        mac = copy()
        mac.update(payload.encode())
        write(results_fd, f"{payload}\t{mac.hexdigest()}\n".encode())

    return report


def _strip_magics(source):
    """Turn IPython magics and shell escapes (``%timeit``, ``!ls``) into ``pass``."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        lines.append(f"{indent}pass  # skipped: {stripped[:40]}" if stripped[:1] in "%!" else line)
    return "\n".join(lines)


def main():
    job = __import__("json").loads(sys.stdin.buffer.read())
    sys.path[0] = job["package_root"]  # not this script's folder: the package's parent
    report = _make_reporter(int(sys.argv[1]), job.pop("key"))
    _set_limits(job)
    import numpy

    for name in _PRELOADED:  # imported now so that the snapshot covers them
        try:
            __import__(name)
        except ImportError:
            pass

    snapshot, numpy_errors, seterr = _snapshot(), numpy.geterr(), numpy.seterr
    restore, capped, sorted_, join, strip = _restore, _CappedText, sorted, ", ".join, _strip_magics
    workdir = os.path.realpath(os.getcwd())
    user_module = type(sys)("__main__")  # the notebook's own __main__, as in Jupyter
    sys.modules["__main__"] = user_module
    run = _make_cell_runner(vars(user_module), float(job["cell_timeout"]), workdir)
    sys.addaudithook(_audit_hook(workdir))
    for cell in job["cells"]:
        index, grade_id = cell["index"], cell.get("grade_id") or "-"
        if grade_id != "-":
            touched = restore(snapshot)
            seterr(**numpy_errors)
            if touched:
                report("note", index, grade_id, "-", "before this test the grader put back what "
                       "the notebook had replaced: " + join(sorted_(touched)[:8]))
        report("begin", index, grade_id, "-", "")
        sys.stdout = sys.stderr = capped(_OUTPUT_CHARS)
        status, message = run(strip(cell["source"]), f"<cell {index}>")
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        report("end", index, grade_id, status, message)
    report("done", "-", "-", "-", "")
    os._exit(0)  # skip atexit handlers and finalizers the submission may have registered


if __name__ == "__main__":
    main()
