"""Run the student-side ``runner.py`` in a bubblewrap sandbox and read back its frames.

:func:`get_sandbox` returns a :class:`Sandbox` after a self-test, or raises
:class:`SandboxUnavailable` with one line naming the cause. Each run is a fresh ``bwrap``: new PID,
IPC, UTS, network (loopback only) and cgroup namespaces, a new session, ``--die-with-parent``; a
size-limited private tmpfs at ``/tmp`` and ``/dev/shm`` as the only writable places, then, read-only,
the system directories, the Python environment (wherever it lives, ``/tmp`` included), the runner's
files, the ``.py`` files handed in next to the notebook and (when allowed) the ``mha`` package, with
any copy of the grader's package in the environment masked; ``--clearenv`` and a minimal environment;
a seccomp allow-list (:mod:`~mha_classroom.seccomp`). When the grader runs as root, the runner is
started by ``setpriv`` under a uid of its own, unused on the host (so ``RLIMIT_NPROC`` counts that
run's processes only, one run cannot signal another, all capabilities are gone, no new privileges);
otherwise bwrap makes a user namespace. Memory and processes are limited for the run as a whole
(:mod:`~mha_classroom.budget`), CPU seconds, file size and open files per process by ``prlimit``; a
wall-clock timeout kills the sandbox, and with it its whole PID namespace (children that called
``setsid`` included). The course folder, the submissions, the outputs and the teacher's
environment variables are not visible inside.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import mha
import mha_classroom.wire as wire
from mha_classroom.budget import Budget, find_budget
from mha_classroom.channel import converse, framed
from mha_classroom.paths import (
    SYSTEM_DIRS,
    font_cache,
    grader_package_copies,
    inside,
    interpreter,
    python_dirs,
    site_dirs,
)
from mha_classroom.seccomp import seccomp_filter
from mha_classroom.selftest import INSTALL_HINT, cause, command_args

# The runner's own files, wherever the grader is installed (editable: classroom/mha_classroom/;
# otherwise site-packages/mha_classroom/), are bound on their own at INSIDE_RUNNER.
RUNNER_FILES = tuple(Path(__file__).resolve().with_name(name)
                     for name in ("runner.py", "wire.py", "notebook_syntax.py", "stand_ins.py"))
SECCOMP_FD = "@seccomp-fd@"  # in a command, stands for the pipe that carries the seccomp filter
INSIDE_RUNNER = "/opt/mha-runner"
INSIDE_PACKAGE = "/opt/mha-course"
INSIDE_SUBMISSION = "/opt/mha-submission"
INSIDE_FONTS = f"{INSIDE_RUNNER}/fonts"  # the runner copies this font list to matplotlib's home
SHM_MB = 4  # /dev/shm's tmpfs: a semaphore takes a page
FIRST_UID, UIDS = 3_000_000, 100_000  # as root, each run gets its own unused uid
_UID_COUNTER = itertools.count(secrets.randbelow(UIDS))  # two graders at once do not collide


class SandboxUnavailable(RuntimeError):
    """No working sandbox on this machine (the message says why, and what to do)."""


@dataclass(frozen=True)
class Limits:
    """Limits for one sandboxed run: seconds per cell, per probe call and in all; memory (for all
    the run's processes together), file and tmpfs sizes in MiB; processes."""

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
    """What one run sent back: its frames (header, arrays, end offset) and how it ended."""

    frames: list = field(default_factory=list)
    ending: str = "done"  # done, timeout, killed, exit, garbled
    detail: str = ""
    split: int = -1  # stdout offset at which the hidden calls were sent
    seconds: tuple[float, float] = (0.0, 0.0)  # the run's time before and after that moment


@dataclass
class Execution:
    """A finished process: exit status (None: stopped at the time limit), its output, where the
    second message went out, how reading ended, and whether its group ran out of memory."""

    status: int | None
    data: bytearray
    split: int
    reading: str
    out_of_memory: bool = False
    stderr: str = ""
    seconds: tuple[float, float] = (0.0, 0.0)  # before and after the second message went out


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


class Sandbox:
    """Runs ``runner.py`` on one job; ``kind`` is "bubblewrap" or "none" (trusted mode)."""

    def __init__(self, kind: str, budget: Budget | None = None):
        self.kind = kind
        self.root = os.geteuid() == 0
        self.prlimit = _tool("prlimit") if kind == "bubblewrap" else shutil.which("prlimit")
        self.package = str(Path(mha.__file__).resolve().parent)
        self.python = interpreter()
        self.base_processes = 0 if self.root else _processes_of(os.getuid())
        self.seccomp = seccomp_filter() if kind == "bubblewrap" else None  # BPF program, or None
        self.budget = budget or (find_budget() if kind == "bubblewrap" else Budget("none"))
        self.tag = secrets.token_hex(6)  # on every runner's command line: this grader's runs
        self.fonts = font_cache() if kind == "bubblewrap" else None
        if kind == "bubblewrap":
            self.bwrap = _tool("bwrap")
            self.setpriv = _tool("setpriv") if self.root else None

    def check_private(self, *folders: Path) -> None:
        """Refuse to run if a folder bound into the sandbox holds one of ``folders``."""
        if self.kind != "bubblewrap":
            return
        for bound in python_dirs():
            for folder in folders:
                if inside(os.path.realpath(folder), bound):
                    raise SandboxUnavailable(
                        f"the Python environment {bound} contains {folder}, which would be visible "
                        "to submissions: grade from a virtual environment outside the course folder")

    def host_paths(self) -> list[str]:
        """Folders of this machine whose names must not reach a student (longest first)."""
        paths = {*python_dirs(), *site_dirs(), self.package, str(Path(self.package).parent),
                 str(RUNNER_FILES[0].parent), str(Path(self.python).parent),
                 tempfile.gettempdir(), os.getcwd(), str(Path.home())}
        paths |= {os.path.realpath(path) for path in paths}
        generic = {"/", "/tmp", "/var/tmp", "/home", "/root", "/opt", "/var", "/srv", "/mnt",
                   *SYSTEM_DIRS}
        return sorted((p.rstrip("/") for p in paths if p and p.rstrip("/") not in generic),
                      key=len, reverse=True)

    def _limits(self, limits: Limits) -> list[str]:
        if self.prlimit is None:  # trusted mode without util-linux: wall-clock limit only
            return []
        cpu = int(limits.timeout) + 1
        share, processes = self.budget.process_limits(limits.memory_mb, limits.nproc)
        return [self.prlimit, f"--as={share * 2**20}", f"--cpu={cpu}:{cpu + 1}",
                f"--fsize={limits.file_mb * 2**20}", "--core=0", "--nofile=256",
                f"--nproc={self.base_processes + processes}", "--"]

    def _bwrap(self, with_mha: bool, limits: Limits, uid: int, files: str | None) -> list[str]:
        args = [self.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        if self.root:
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # setpriv drops them
        else:
            args += ["--unshare-user", "--disable-userns"]
        # The writable places first: bwrap mounts in order, and a tmpfs mounted over /tmp after a
        # virtual environment under /tmp was bound would hide it.
        args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777",
                 "--size", str(limits.tmp_mb * 2**20), "--tmpfs", "/tmp",
                 # POSIX semaphores live here: multiprocessing's pools and locks need it
                 "--perms", "1777", "--size", str(SHM_MB * 2**20), "--tmpfs", "/dev/shm"]
        made = {"/", "/tmp", "/dev", "/proc"}
        binds = [(d, d) for d in SYSTEM_DIRS if os.path.exists(d)]
        binds += [(d, d) for d in python_dirs()]
        binds += [(str(f), f"{INSIDE_RUNNER}/{f.name}") for f in RUNNER_FILES]
        if Path("/etc/ld.so.cache").is_file():
            binds.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))
        if self.fonts:
            binds.append((self.fonts, f"{INSIDE_FONTS}/{Path(self.fonts).name}"))
        if with_mha:
            binds.append((self.package, f"{INSIDE_PACKAGE}/mha"))
        if files:
            binds.append((files, INSIDE_SUBMISSION))
        for source, target in binds:
            for parent in reversed(Path(target).parents[:-1]):
                if str(parent) not in made:
                    made.add(str(parent))
                    args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--ro-bind", source, target]
        # Copies inside the Python environment: mha's in the NumPy-only run; the grader's (a normal
        # install puts it in site-packages) in every run, since the runner's files are bound above.
        for copy in grader_package_copies(with_mha):
            args += ["--tmpfs", copy]
        args += ["--chdir", "/tmp", "--clearenv"]
        for key, value in environment("/tmp").items():
            args += ["--setenv", key, value]
        if self.seccomp is not None:
            args += ["--seccomp", SECCOMP_FD]  # the number of the pipe execute() passes
        args.append("--")
        if self.root:
            args += [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--inh-caps=-all", "--bounding-set=-all", "--"]
        return args

    def command(self, with_mha: bool, limits: Limits, python_args: list[str],
                files: str | None = None) -> list[str]:
        """The command of one run; ``files``: a folder to show at ``/opt/mha-submission``."""
        prefix = self._limits(limits)
        if self.kind == "bubblewrap":
            prefix += self._bwrap(with_mha, limits, FIRST_UID + next(_UID_COUNTER) % UIDS, files)
        return prefix + [self.python, "-I", "-B", *python_args]

    def runner_args(self) -> list[str]:
        """``-S`` (``site`` and its ``.pth`` files cost more than the sandbox), the runner script,
        the site-packages folders to import NumPy from, and this grader's tag."""
        runner = f"{INSIDE_RUNNER}/runner.py" if self.kind == "bubblewrap" else str(RUNNER_FILES[0])
        return ["-S", runner, *site_dirs(), f"--run-of={self.tag}"]

    def package_path(self) -> str:
        return INSIDE_PACKAGE if self.kind == "bubblewrap" else str(Path(self.package).parent)

    def execute(self, command: list[str], first: bytes, limits: Limits,
                second: bytes | None = None, max_frames: int | None = None) -> Execution:
        """Run ``command`` in a control group of its own (where there is one), send ``first`` on its
        stdin and, once its output holds a ``visible_done`` frame (among the first ``max_frames``),
        ``second``."""
        passed = ()
        if SECCOMP_FD in command:  # bubblewrap reads the filter from a pipe it inherits
            readable, writable = os.pipe()
            os.write(writable, self.seccomp)  # a few kilobytes: within a pipe's buffer
            os.close(writable)
            command = [str(readable) if part == SECCOMP_FD else part for part in command]
            passed = (readable,)
        group = self.budget.run_group(limits.memory_mb, limits.nproc) if self.kind == "bubblewrap" \
            else None
        if group is not None:
            command = group.enter(command)
        try:
            with tempfile.TemporaryDirectory(prefix="mha-run-") as folder:
                return self._execute(command, first, second, limits, Path(folder), passed,
                                     max_frames, group)
        finally:
            if group is not None:
                group.close()

    def _execute(self, command, first, second, limits, folder, passed, max_frames, group):
        work = folder / "work"
        work.mkdir()
        with open(folder / "err", "w+b") as err:
            try:
                process = subprocess.Popen(  # noqa: S603 - fixed, absolute tool paths
                    command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=work,
                    env=environment(str(work)) if self.kind == "none" else {},
                    start_new_session=True, pass_fds=passed)
            finally:
                for fd in passed:
                    os.close(fd)
            started = time.monotonic()
            deadline = started + limits.timeout
            data, split, reading, status, sent = bytearray(), -1, "timeout", None, 0.0
            try:
                data, split, reading, sent = converse(process, framed(first),
                                                None if second is None else framed(second),
                                                limits.file_mb * 2**20, deadline, max_frames)
                if reading == "closed":  # output closed: the run ends now, or is stopped
                    status = process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                reading = "timeout"
            finally:  # a flood or a full output is not waited for: the run is stopped at once
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                process.wait()
                for pipe in (process.stdin, process.stdout):
                    try:
                        pipe.close()
                    except OSError:
                        pass
            ended = time.monotonic()
            err.seek(0)
            stderr = err.read(2000).decode(errors="replace")
        seconds = (sent - started, ended - sent) if sent else (ended - started, 0.0)
        return Execution(status, data, split, reading,
                         group is not None and group.out_of_memory(), stderr, seconds)

    def run(self, first: bytes, second: bytes | None, with_mha: bool, limits: Limits,
            max_frames: int | None = None, visible_frames: int | None = None,
            files: str | None = None) -> RunOutput:
        """Run the runner on a packed job; parse the frames it wrote (at most ``max_frames``)."""
        command = self.command(with_mha, limits, self.runner_args(), files)
        done = self.execute(command, first, limits, second, visible_frames)
        result = RunOutput(split=done.split, seconds=done.seconds)
        result.frames, garbled = wire.read_frames(done.data, limits.file_mb * 2**20, max_frames)
        ended = any("end" in header for header, _, _ in result.frames)
        status = done.status
        if status is None and done.reading == "timeout":
            result.ending = "timeout"
            result.detail = f"the run went past its {limits.timeout:g} s time limit and was stopped"
        elif not ended and done.out_of_memory:
            result.ending = "killed"
            result.detail = (f"the run went past its memory limit ({limits.memory_mb} MiB for all "
                             "its processes together) and was stopped")
        elif not ended and status is not None and (status < 0 or status > 128):
            number = -status if status < 0 else status - 128
            name = signal.Signals(number).name if number in signal.valid_signals() else str(number)
            result.ending = "killed"
            result.detail = (f"the run was killed by {name} (the memory, CPU or file-size limit, "
                             "or a crash)")
        elif not ended:
            result.ending = "garbled" if garbled or done.reading == "flood" else "exit"
            result.detail = ("the run's answers were unreadable (something overwrote them)"
                             if result.ending == "garbled" else f"the run ended early (exit "
                             f"status {status}: os._exit, sys.exit in a thread, or a crash)")
        return result

    def self_test(self) -> None:
        """Raise SandboxUnavailable, naming the cause, if this sandbox cannot run the grader's
        Python contained (:mod:`~mha_classroom.selftest`)."""
        limits = Limits(timeout=30)
        try:
            done = self.execute(self.command(False, limits, command_args()), b"", limits)
        except OSError as error:
            raise SandboxUnavailable(f"the sandbox does not start ({error}): {INSTALL_HINT}") \
                from None
        why = cause(self.kind == "bubblewrap", self.root, done.status,
                    bytes(done.data).decode(errors="replace"), done.stderr)
        if why is not None:
            raise SandboxUnavailable(why)


def environment(home: str) -> dict[str, str]:
    """The whole environment of a run (the teacher's is never passed on)."""
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
