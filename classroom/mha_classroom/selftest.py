"""The sandbox's self-test: one small run that must work, and must be contained, before any
submission runs; when it fails, one line that names the real cause.

The run imports NumPy, tries the network, checks it is not root, that ``memfd_create`` is refused
(the seccomp filter is in place). A failure is
explained from what bubblewrap said and what the run printed: bubblewrap missing, user namespaces
refused, the interpreter not visible inside the sandbox (with its path), NumPy not importable there,
the seccomp filter refused, or the run not contained.
"""

from __future__ import annotations

import re

from mha_classroom.paths import interpreter, python_dirs, site_dirs

__all__ = ["CODE", "INSTALL_HINT", "cause", "command_args"]

CODE = """\
import os, socket, sys
sys.path.extend(a for a in sys.argv[1:] if not a.startswith("--"))
import numpy
s = socket.socket()
try:
    s.connect(("1.1.1.1", 53)); print("network")
except OSError:
    pass
try:
    os.memfd_create("probe"); print("memfd")
except OSError:
    pass
print("ok", os.getuid(), os.getpid(), int(numpy.ones(2).sum()))
"""


INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on Linux with user "
                "namespaces, or pass --trust-submissions to run submissions WITHOUT a sandbox")


def command_args() -> list[str]:
    """The interpreter's arguments for the self-test run."""
    return ["-S", "-c", CODE, *site_dirs()]


def cause(bubblewrap: bool, root: bool, status, out: str, stderr: str) -> str | None:
    """Why the self-test failed, in the teacher's words, or None if it passed."""
    words = out.split()
    first = next((line.strip() for line in stderr.splitlines() if line.strip()), "")
    if status == 0 and "ok" in words:
        if not bubblewrap:
            return None
        if "network" in words:
            return "the sandbox reached the network (bubblewrap's --unshare-net had no effect)"
        if "memfd" in words:
            return "the sandbox's seccomp filter is not in force (memfd_create was allowed)"
        if root and words[words.index("ok") + 1:words.index("ok") + 2] == ["0"]:
            return "the sandbox ran the test as root (setpriv did not change the user)"
        return None
    if re.search(r"(creat|setting up|No permissions).*(namespace|uid map)|user namespace", stderr,
                 re.IGNORECASE):
        return (f"bubblewrap cannot make its namespaces here ({first}): allow unprivileged user "
                "namespaces (sysctl kernel.unprivileged_userns_clone=1) or grade as root")
    if "seccomp" in stderr.lower():
        return f"bubblewrap refused the seccomp filter ({first})"
    if status == 127 or "execvp" in stderr or "No such file" in stderr:
        return (f"the sandbox cannot see the grader's interpreter {interpreter()} (bound from "
                f"{', '.join(python_dirs())}): {first or f'exit status {status}'}")
    if "numpy" in stderr.lower() or "ModuleNotFoundError" in stderr:
        return f"NumPy does not import inside the sandbox: {first}"
    detail = first or (f"exit status {status}" if status is not None else "it did not finish")
    return f"the sandbox failed its self-test ({detail}): {INSTALL_HINT}"
