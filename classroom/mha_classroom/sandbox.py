"""Run the student-side ``runner.py`` in a bubblewrap sandbox and read back its frames.

:func:`get_sandbox` returns a :class:`Sandbox` after a self-test, or raises
:class:`SandboxUnavailable` with one line saying what to install. Each run is a fresh
``bwrap``: new PID, IPC, UTS, network (loopback only) and cgroup namespaces, a new session,
``--die-with-parent``; the system directories, the Python environment, the runner's three files and
(when allowed) the ``mha`` package bound read-only, a copy of the grader's package in the environment
masked; size-limited private tmpfs at ``/tmp`` and ``/dev/shm`` as the only writable places;
``--clearenv`` and a minimal environment. When the grader runs as root, the runner is started by
``setpriv`` under a uid of its own, unused on the host (so ``RLIMIT_NPROC`` counts that run's
processes only, one run cannot signal another, all capabilities are gone, no new privileges);
otherwise bwrap makes a user namespace. Limits on address space, CPU seconds, file
size, processes and open files come from ``prlimit``; a wall-clock timeout kills the sandbox, and
with it its whole PID namespace (children that called ``setsid`` included). The course folder,
the submissions, the outputs and the teacher's environment variables are not visible inside.
"""

from __future__ import annotations

import itertools
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np

import mha
import mha_classroom.wire as wire
from mha_classroom.seccomp import seccomp_filter

# The runner's own files, wherever the grader is installed (editable: classroom/mha_classroom/;
# otherwise site-packages/mha_classroom/), are bound on their own at INSIDE_RUNNER.
RUNNER_FILES = tuple(Path(__file__).resolve().with_name(name)
                     for name in ("runner.py", "wire.py", "notebook_syntax.py"))
GRADER_PACKAGE = __name__.partition(".")[0]  # mha_classroom
SECCOMP_FD = "@seccomp-fd@"  # in a command, stands for the pipe that carries the seccomp filter
INSIDE_RUNNER = "/opt/mha-runner"
SHM_MB = 4  # /dev/shm's tmpfs: a semaphore takes a page
INSIDE_PACKAGE = "/opt/mha-course"
FIRST_UID, UIDS = 3_000_000, 100_000  # as root, each run gets its own unused uid
_UID_COUNTER = itertools.count(secrets.randbelow(UIDS))  # two graders at once do not collide
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on Linux with user "
                "namespaces, or pass --trust-submissions to run submissions WITHOUT a sandbox")


class SandboxUnavailable(RuntimeError):
    """No working sandbox on this machine (the message says what to install)."""


@dataclass(frozen=True)
class Limits:
    """Limits for one sandboxed run: seconds per cell, per probe call and in all; memory, file
    and tmpfs sizes in MiB; processes (beyond those already running as the sandbox's user)."""

    cell_timeout: float = 10.0
    timeout: float = 60.0
    memory_mb: int = 1024
    file_mb: int = 64
    probe_timeout: float = 10.0
    tmp_mb: int = 64
    nproc: int = 8

    def __post_init__(self):
        for name in ("cell_timeout", "timeout", "memory_mb", "file_mb", "probe_timeout", "tmp_mb",
                     "nproc"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value > 0):
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")


@dataclass
class RunOutput:
    """What one run sent back: its frames (header, arrays) and how it ended."""

    frames: list = field(default_factory=list)  # (header, arrays, end offset)
    ending: str = "done"  # done, timeout, killed, exit, garbled
    detail: str = ""
    split: int = -1  # stdout offset at which the hidden calls were sent


def _tool(name: str) -> str:
    path = shutil.which(name, path=os.defpath + ":/usr/sbin:/sbin")
    if path is None:
        raise SandboxUnavailable(f"'{name}' not found: {INSTALL_HINT}")
    return path


def _processes_of(uid: int) -> int:
    count = 0
    try:
        entries = list(os.scandir("/proc"))
    except OSError:  # no /proc (macOS, in trusted mode)
        return 0
    for entry in entries:
        if entry.name.isdigit():
            try:
                count += entry.stat(follow_symlinks=False).st_uid == uid
            except OSError:
                pass
    return count


def _python_dirs() -> list[str]:
    """The directories the interpreter and NumPy need, outermost first, without nesting."""
    candidates = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                 Path(np.__file__).parent.parent)}
    candidates |= {sys.prefix}  # a venv is entered through its own path, symlinks and all
    dirs: list[str] = []
    for path in sorted(candidates, key=len):
        if not any(path == d or path.startswith(d.rstrip("/") + "/") for d in (*SYSTEM_DIRS, *dirs)):
            dirs.append(path)
    return dirs


def _site_dirs() -> list[str]:
    """The grader's site-packages folders (NumPy's first), as the sandbox sees them."""
    first = str(Path(np.__file__).resolve().parent.parent)
    dirs = [first] + [entry for entry in sys.path if entry.endswith(("site-packages",
                                                                       "dist-packages"))]
    return list(dict.fromkeys(dirs))


def _installed_copies(*packages: str) -> list[str]:
    """Folders named after one of ``packages`` on the import path that the sandbox would show (to
    be masked)."""
    bound = _python_dirs()
    copies = set()
    for entry in sys.path:
        for package in packages:
            candidate = os.path.join(os.path.realpath(entry or "."), package)
            if os.path.isdir(candidate) and any(_inside(candidate, d) for d in bound):
                copies.add(candidate)
    return sorted(copies)


def _inside(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") + "/"
    return (path.rstrip("/") + "/").startswith(folder)


class Sandbox:
    """Runs ``runner.py`` on one job; ``kind`` is "bubblewrap" or "none" (trusted mode)."""

    def __init__(self, kind: str):
        self.kind = kind
        self.root = os.geteuid() == 0
        self.prlimit = _tool("prlimit") if kind == "bubblewrap" else shutil.which("prlimit")
        self.package = str(Path(mha.__file__).resolve().parent)
        self.base_processes = 0 if self.root else _processes_of(os.getuid())
        self.seccomp = seccomp_filter() if kind == "bubblewrap" else None  # BPF program, or None
        if kind == "bubblewrap":
            self.bwrap = _tool("bwrap")
            self.setpriv = _tool("setpriv") if self.root else None

    def check_private(self, *folders: Path) -> None:
        """Refuse to run if a folder bound into the sandbox holds one of ``folders``."""
        if self.kind != "bubblewrap":
            return
        for bound in _python_dirs():
            for folder in folders:
                if _inside(os.path.realpath(folder), bound):
                    raise SandboxUnavailable(
                        f"the Python environment {bound} contains {folder}, which would be visible "
                        "to submissions: grade from a virtual environment outside the course folder")

    def _limits(self, limits: Limits) -> list[str]:
        if self.prlimit is None:  # trusted mode without util-linux: wall-clock limit only
            return []
        cpu = int(limits.timeout) + 1
        return [self.prlimit, f"--as={limits.memory_mb * 2**20}", f"--cpu={cpu}:{cpu + 1}",
                f"--fsize={limits.file_mb * 2**20}", "--core=0", "--nofile=256",
                f"--nproc={self.base_processes + limits.nproc}", "--"]

    def _bwrap(self, with_mha: bool, limits: Limits, uid: int) -> list[str]:
        args = [self.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if self.root:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # setpriv drops them
        else:
            args += ["--unshare-user", "--disable-userns"]
        made = set()
        binds = [(d, d) for d in SYSTEM_DIRS if os.path.exists(d)]
        binds += [(d, d) for d in _python_dirs()]
        binds += [(str(f), f"{INSIDE_RUNNER}/{f.name}") for f in RUNNER_FILES]
        if Path("/etc/ld.so.cache").is_file():
            binds.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))
        if with_mha:
            binds.append((self.package, f"{INSIDE_PACKAGE}/mha"))
        for source, target in binds:
            for parent in reversed(Path(target).parents[:-1]):
                if str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", source, target]
        # Copies inside the Python environment: mha's in the NumPy-only run; the grader's (a normal
        # install puts it in site-packages) in every run, since the runner's files are bound above.
        for copy in _installed_copies(GRADER_PACKAGE, *(() if with_mha else ("mha",))):
            args += ["--tmpfs", copy]
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777",
                 "--size", str(limits.tmp_mb * 2**20), "--tmpfs", "/tmp", "--chdir", "/tmp",
                 # POSIX semaphores live here: multiprocessing's pools and locks need it
                 "--perms", "1777", "--size", str(SHM_MB * 2**20), "--tmpfs", "/dev/shm",
                 "--clearenv"]
        for key, value in _environment("/tmp").items():
            args += ["--setenv", key, value]
        if self.seccomp is not None:
            args += ["--seccomp", SECCOMP_FD]  # the number of the pipe execute() passes
        args.append("--")
        if self.root:
            args += [cast(str, self.setpriv), f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--"]
        return args

    def command(self, with_mha: bool, limits: Limits, python_args: list[str]) -> list[str]:
        prefix = self._limits(limits)
        if self.kind == "bubblewrap":
            prefix += self._bwrap(with_mha, limits, FIRST_UID + next(_UID_COUNTER) % UIDS)
        return prefix + [sys.executable, "-I", "-B", *python_args]

    def runner_args(self) -> list[str]:
        """``-S`` (``site`` and its ``.pth`` files cost more than the sandbox) and the runner
        script, given the site-packages folders to import NumPy from."""
        runner = f"{INSIDE_RUNNER}/runner.py" if self.kind == "bubblewrap" else str(RUNNER_FILES[0])
        return ["-S", runner, *_site_dirs()]

    def package_path(self) -> str:
        return INSIDE_PACKAGE if self.kind == "bubblewrap" else str(Path(self.package).parent)

    def execute(self, command: list[str], first: bytes, limits: Limits,
                second: bytes | None = None) -> tuple[int | None, bytes, int]:
        """Run ``command``, send ``first`` on its stdin and, once its output holds a
        ``visible_done`` frame, ``second``. Return (exit status or None on time-out, stdout,
        the stdout offset where ``second`` was sent or -1)."""
        cap = limits.file_mb * 2**20
        passed: tuple[int, ...] = ()
        if SECCOMP_FD in command:  # bubblewrap reads the filter from a pipe it inherits
            readable, writable = os.pipe()
            os.write(writable, cast(bytes, self.seccomp))  # 64 bytes: far below a pipe's buffer
            os.close(writable)
            command = [str(readable) if part == SECCOMP_FD else part for part in command]
            passed = (readable,)
        with tempfile.TemporaryDirectory(prefix="mha-run-") as folder:
            work = Path(folder, "work")
            work.mkdir()
            with open(Path(folder, "err"), "w+b") as err:
                try:
                    process = subprocess.Popen(  # noqa: S603 - fixed, absolute tool paths
                        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=work,
                        env=_environment(str(work)) if self.kind == "none" else {},
                        start_new_session=True, pass_fds=passed)
                finally:
                    for fd in passed:
                        os.close(fd)
                deadline = time.monotonic() + limits.timeout
                try:
                    data, split, timed_out = _converse(process, first, second, cap, deadline)
                    status = None
                    if not timed_out:  # output closed: the run ends now, or is stopped at the limit
                        status = process.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    status = None
                finally:
                    try:
                        os.killpg(process.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    process.wait()
                    for pipe in (process.stdin, process.stdout):
                        try:
                            pipe.close()  # type: ignore[union-attr]  # both are PIPEs
                        except OSError:
                            pass
        return status, bytes(data), split

    def run(self, first: bytes, second: bytes | None, with_mha: bool, limits: Limits,
            max_frames: int | None = None) -> RunOutput:
        """Run the runner on a packed job; parse the frames it wrote (at most ``max_frames``)."""
        command = self.command(with_mha, limits, self.runner_args())
        status, data, split = self.execute(command, _framed(first), limits,
                                           None if second is None else _framed(second))
        result = RunOutput(split=split)
        result.frames, garbled = wire.read_frames(data, limits.file_mb * 2**20, max_frames)
        ended = any("end" in header for header, _, _ in result.frames)
        if status is None:
            result.ending = "timeout"
            result.detail = f"the run went past its {limits.timeout:g} s time limit and was stopped"
        elif not ended and (status < 0 or status > 128):
            number = -status if status < 0 else status - 128
            name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
            result.ending = "killed"
            result.detail = (f"the run was killed by {name} (the memory, CPU or file-size limit, "
                             "or a crash)")
        elif not ended:
            result.ending = "garbled" if garbled else "exit"
            result.detail = ("the run's answers were unreadable (something overwrote them)"
                             if garbled else f"the run ended early (exit status {status}: "
                             "os._exit, sys.exit in a thread, or a crash)")
        return result

    def self_test(self) -> None:
        code = ("import os, numpy, socket\n"
                "s = socket.socket()\n"
                "try:\n    s.connect(('1.1.1.1', 53)); print('network')\n"
                "except OSError:\n    pass\n"
                "print('ok', os.getuid(), os.getpid(), os.path.exists('/root/.ssh'))")
        limits = Limits(timeout=30)
        try:
            status, data, _ = self.execute(self.command(False, limits, ["-c", code]), b"",
                                           limits)
        except OSError as error:
            raise SandboxUnavailable(f"the sandbox does not start ({error}): {INSTALL_HINT}") from None
        words = data.decode(errors="replace").split()
        contained = self.kind != "bubblewrap" or (
            "network" not in words and not (self.root and words[1:2] == ["0"]))
        if status != 0 or "ok" not in words or not contained:
            raise SandboxUnavailable(f"the sandbox failed its self-test (status {status}): "
                                     f"{INSTALL_HINT}")


def _framed(message: bytes) -> bytes:
    return len(message).to_bytes(8, "little") + message


def _visible_done(data: bytes | bytearray, start: int) -> tuple[int, int]:
    """Look for the ``visible_done`` frame in ``data`` from the frame boundary ``start``: return
    (the offset just after it or -1, the boundary to resume from)."""
    offset = start
    while offset + 8 <= len(data):
        end = offset + 8 + int.from_bytes(data[offset:offset + 8], "little")
        if end > len(data):
            break
        if data.find(b'"phase":"visible_done"', offset + 8, min(end, offset + 200)) != -1:
            return end, end
        offset = end
    return -1, offset


def _converse(process, first: bytes, second: bytes | None, cap: int, deadline: float):
    """Feed stdin and read stdout without blocking; ``second`` goes out only after the visible
    answers. Returns (stdout bytes, offset where ``second`` was sent or -1, timed out)."""
    stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
    os.set_blocking(stdin, False)
    os.set_blocking(stdout, False)
    pending, data, split, scanned = memoryview(first), bytearray(), -1, 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return data, split, True
        readable, writable, _ = select.select([stdout], [stdin] if pending else [], [],
                                              remaining)
        if writable:
            try:
                pending = pending[os.write(stdin, pending[:1 << 16]):]
            except BlockingIOError:
                pass
            except OSError:  # the runner is gone or closed its input
                pending = memoryview(b"")
        if readable:
            chunk = os.read(stdout, 1 << 16)
            if not chunk:
                return data, split, False
            data += chunk
            if len(data) > cap:
                return data[: cap + 1], split, False
            if second is not None and split < 0 and not pending:
                found, scanned = _visible_done(data, scanned)
                if found >= 0:
                    split, pending = found, memoryview(second)


def _environment(home: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": home, "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/.matplotlib"}


_CACHE: dict[str, Sandbox] = {}


def get_sandbox(trust_submissions: bool = False) -> Sandbox:
    """The sandbox to grade with (self-tested once per process), or SandboxUnavailable."""
    kind = "none" if trust_submissions else "bubblewrap"
    if kind not in _CACHE:
        if kind == "bubblewrap" and not sys.platform.startswith("linux"):
            raise SandboxUnavailable(f"no sandbox on {sys.platform}: {INSTALL_HINT}")
        sandbox = Sandbox(kind)
        sandbox.self_test()
        _CACHE[kind] = sandbox
    return _CACHE[kind]
