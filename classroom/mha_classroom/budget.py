"""One memory and process budget per submission, counted over all the processes of a run.

``RLIMIT_AS`` is per process: eight processes under a 384 MiB limit could hold 3 GiB between them.
So each sandboxed run goes into a control group of its own where the system lets the grader make
one, and the limits hold for the group:

1. **cgroup v2** (a teacher's machine with systemd, or root on a unified hierarchy): a group
   ``mha-classroom-<pid>`` with the ``memory`` and ``pids`` controllers, in the grader's own
   delegated subtree or, as root, at the top; one leaf per run with ``memory.max``,
   ``memory.swap.max = 0`` and ``pids.max``.
2. **cgroup v1** (root, with the ``memory`` and ``pids`` hierarchies mounted): the same groups in
   each hierarchy, under the grader's own group there; ``memory.limit_in_bytes`` (and
   ``memory.memsw.limit_in_bytes`` where swap is counted) and ``pids.max``.
3. **Address-space limits only**: ``RLIMIT_AS`` is the teacher's budget divided by the processes a
   run may have, so that the total is still what the teacher set (with fewer processes when the
   share would be too small to start Python and NumPy).

A run joins its group before anything of it starts (a ``/bin/sh`` writes its own pid into the
group, then executes the sandbox), and its group is emptied and removed when it ends. Every run
keeps a per-process ``RLIMIT_AS`` too: one large allocation then raises ``MemoryError`` in the
student's code instead of ending the run. :meth:`Budget.describe` is the sentence the summary prints.
"""

from __future__ import annotations

import atexit
import itertools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Budget", "RunGroup", "find_budget"]

# Python with NumPy maps about 100 MiB before it computes anything; a run answering an
# assignment's calls needs about half as much again
MIN_PROCESS_MB = 256
_ENTER = ('n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; '
          'n=$((n - 1)); done; exec "$@"')  # join each group given, then become the command
_RUNS = itertools.count(1)
SANDBOX_PROCESSES = 2  # bubblewrap's own: the one outside the PID namespace and the one at pid 1


@dataclass(frozen=True)
class Budget:
    """How a run's memory and processes are limited: ``kind`` is "cgroup v2", "cgroup v1",
    "rlimit" or "none" (trusted mode: per-process limits, no sandbox); ``groups`` the folders runs
    get a leaf in (one per hierarchy)."""

    kind: str
    groups: tuple[str, ...] = ()
    why_not: str = ""  # why no control group could be used (for "rlimit")

    def process_limits(self, memory_mb: int, nproc: int) -> tuple[int, int]:
        """(address-space MiB per process, processes) for a run with this budget."""
        if self.kind != "rlimit":  # a group counts them all, or nothing does (trusted mode)
            return memory_mb, nproc
        processes = max(1, min(nproc, memory_mb // MIN_PROCESS_MB))
        return memory_mb // processes, processes

    def describe(self, memory_mb: int, nproc: int) -> str:
        """One line for the summary: what limited a submission's memory and processes."""
        if self.kind == "none":
            return f"{memory_mb} MiB of address space per process (no sandbox)"
        if self.kind != "rlimit":
            return (f"{memory_mb} MiB and {nproc} processes per submission, counted over all its "
                    f"processes ({self.kind} memory and pids controllers)")
        share, processes = self.process_limits(memory_mb, nproc)
        return (f"{memory_mb} MiB per submission as {processes} processes of at most {share} MiB "
                f"of address space each (no control group: {self.why_not})")

    def run_group(self, memory_mb: int, nproc: int) -> RunGroup | None:
        """A fresh group for one run with its limits set, or None with address-space limits only."""
        if self.kind in ("rlimit", "none"):
            return None
        return RunGroup(self, memory_mb, nproc)


class RunGroup:
    """One run's control group (a leaf in each hierarchy); :meth:`close` empties and removes it."""

    def __init__(self, budget: Budget, memory_mb: int, nproc: int):
        self.budget = budget
        name = f"run-{next(_RUNS)}"
        self.leaves = [Path(group, name) for group in budget.groups]
        limit, tasks = str(memory_mb * 2**20), str(nproc + SANDBOX_PROCESSES)
        for leaf in self.leaves:
            if not leaf.parent.is_dir():  # another grader took it for a stale one: make it again
                leaf.parent.mkdir(parents=True, exist_ok=True)
                if budget.kind == "cgroup v2":
                    _write(leaf.parent / "cgroup.subtree_control", "+memory +pids")
            leaf.mkdir(exist_ok=True)
        for leaf in self.leaves:
            if budget.kind == "cgroup v2":
                _write(leaf / "memory.max", limit)
                _write(leaf / "memory.swap.max", "0", missing_ok=True)
                _write(leaf / "pids.max", tasks)
            elif (leaf / "memory.limit_in_bytes").exists():
                _write(leaf / "memory.limit_in_bytes", limit)
                _write(leaf / "memory.memsw.limit_in_bytes", limit, missing_ok=True)
            else:
                _write(leaf / "pids.max", tasks)

    def enter(self, command: list[str]) -> list[str]:
        """``command`` started inside this group."""
        procs = [str(leaf / "cgroup.procs") for leaf in self.leaves]
        return ["/bin/sh", "-c", _ENTER, "mha-cgroup", str(len(procs)), *procs, *command]

    def out_of_memory(self) -> bool:
        """True if the kernel killed a process of this run for its memory."""
        for leaf in self.leaves:
            for name in ("memory.events", "memory.oom_control"):
                try:
                    text = (leaf / name).read_text()
                except OSError:
                    continue
                for line in text.splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and value.strip() not in ("", "0"):
                        return True
        return False

    def close(self) -> None:
        """Kill whatever is left in the group and remove it."""
        for leaf in self.leaves:
            _empty_and_remove(leaf)


def _write(path: Path, text: str, missing_ok: bool = False) -> None:
    try:
        path.write_text(text)
    except FileNotFoundError:
        if not missing_ok:
            raise


def _pids(leaf: Path) -> list[int]:
    try:
        return [int(word) for word in (leaf / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _empty_and_remove(leaf: Path) -> None:
    if not leaf.is_dir():
        return
    if (leaf / "cgroup.kill").exists():  # cgroup v2 since Linux 5.14: the whole group at once
        try:
            (leaf / "cgroup.kill").write_text("1")
        except OSError:
            pass
    for _ in range(100):  # at most a few rounds: nothing in the group can fork past the kill
        pids = _pids(leaf)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.01)
    for _ in range(50):  # the kernel frees a group a moment after its last process exits
        try:
            leaf.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _mounts() -> list[tuple[str, str, set[str]]]:
    """(mount point, filesystem type, super options) of the cgroup file systems."""
    found = []
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        before, _, after = line.partition(" - ")
        fields, tail = before.split(), after.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[4].replace("\\040", " "), tail[0], set(tail[2].split(","))))
    return found


def _own_groups() -> dict[str, str]:
    """Hierarchy ("" for v2, else the controller) -> this process's group path in it."""
    groups = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return groups
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            groups[controller] = path
    return groups


def _fresh_group(parent: Path) -> Path:
    """``parent/mha-classroom-<pid>``, made now; the empty ones of graders that are gone are removed."""
    try:
        stale = [entry for entry in parent.iterdir() if entry.name.startswith("mha-classroom-")]
    except OSError:
        stale = []
    for entry in stale:
        pid = entry.name.rpartition("-")[2]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            try:  # another grader may be removing it too
                for leaf in [child for child in entry.iterdir() if child.is_dir()]:
                    _empty_and_remove(leaf)
                entry.rmdir()
            except OSError:
                pass
    group = parent / f"mha-classroom-{os.getpid()}"
    group.mkdir(exist_ok=True)
    atexit.register(_remove_quietly, group)
    return group


def _remove_quietly(group: Path) -> None:
    try:
        group.rmdir()
    except OSError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _controllers(group: Path, name: str = "cgroup.controllers") -> set[str]:
    try:
        return set((group / name).read_text().split())
    except OSError:
        return set()


def _try_v2(mount: str, own: str) -> tuple[Budget | None, str]:
    """A group with memory and pids in v2: at the top as root, else beside the grader's own group
    (a subtree systemd delegated to the user)."""
    candidates = [Path(mount)] if os.geteuid() == 0 else []
    if own.strip("/"):
        candidates.append(Path(mount, own.strip("/")).parent)
    reason = "no cgroup v2 group the grader may write to"
    wanted = {"memory", "pids"}
    for parent in dict.fromkeys(candidates):
        if not wanted <= _controllers(parent):
            reason = "cgroup v2 has no memory and pids controllers to give (they are bound to v1)"
            continue
        try:
            if not wanted <= _controllers(parent, "cgroup.subtree_control"):
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
            group = _fresh_group(parent)
            (group / "cgroup.subtree_control").write_text("+memory +pids")
            RunGroup(Budget("cgroup v2", (str(group),)), 64, 2).close()
        except OSError as error:
            reason = f"cgroup v2 refused a group in {parent} ({error.strerror or error})"
            continue
        return Budget("cgroup v2", (str(group),)), ""
    return None, reason


def _try_v1(mounts: dict[str, str], own: dict[str, str]) -> tuple[Budget | None, str]:
    if not {"memory", "pids"} <= set(mounts):
        return None, "no cgroup v1 memory and pids hierarchies either"
    groups = []
    try:
        for controller in ("memory", "pids"):
            parent = Path(mounts[controller] + own.get(controller, "/").rstrip("/"))
            groups.append(str(_fresh_group(parent)))
        RunGroup(Budget("cgroup v1", tuple(groups)), 64, 2).close()
    except OSError as error:
        return None, f"cgroup v1 refused a group ({error.strerror or error})"
    return Budget("cgroup v1", tuple(groups)), ""


def find_budget() -> Budget:
    """The best way this machine offers to limit a run as a whole: cgroup v2, v1, or rlimits."""
    mounts, own = _mounts(), _own_groups()
    reasons = []
    v2 = next((point for point, kind, _ in mounts if kind == "cgroup2"), None)
    if v2 is not None and "" in own:
        budget, reason = _try_v2(v2, own[""])
        if budget:
            return budget
        reasons.append(reason)
    else:
        reasons.append("no cgroup v2 mounted")
    v1 = {option: point for point, kind, options in mounts if kind == "cgroup"
          for option in options & {"memory", "pids"}}
    budget, reason = _try_v1(v1, own)
    if budget:
        return budget
    reasons.append(reason)
    return Budget("rlimit", why_not="; ".join(reasons))
