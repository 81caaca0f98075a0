"""Where the grader's Python lives, as the sandbox must show it, wherever it was installed.

A virtual environment may sit under ``/tmp`` or ``/var/tmp`` (a fresh clone), in a home folder or
behind a symbolic link, and the grader may have been started as ``../venv/bin/python``: the sandbox
binds each folder the interpreter and NumPy need, under the path the grader knows it by and under
its real path, and starts the interpreter by an absolute path whose folder is resolved (the file
itself is not: a virtual environment's ``python`` is a link whose own location says where its
``pyvenv.cfg`` is).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

__all__ = ["SYSTEM_DIRS", "clashes", "font_cache", "grader_package_copies", "inside",
           "interpreter", "lies_in", "python_dirs", "site_dirs", "write_private"]

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
GRADER_PACKAGE = __name__.partition(".")[0]  # mha_classroom


def inside(path: str, folder: str) -> bool:
    """True if ``path`` is ``folder`` or lies under it (as text; resolve links first).

    Examples
    --------
    >>> inside("/tmp/venv/lib", "/tmp/venv"), inside("/tmp/venv2", "/tmp/venv")
    (True, False)
    """
    folder = folder.rstrip("/") + "/"
    return (path.rstrip("/") + "/").startswith(folder)


def lies_in(path: Path, folder: Path) -> bool:
    """True if ``path`` is ``folder`` or lies under it, links resolved (neither need exist)."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def write_private(path: Path, text: str) -> None:
    """Write a new file readable by its owner only (its folder made private too); never overwrites
    one (FileExistsError) and never follows a link."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(text)


def clashes(dirs: list[str], places: list[str]) -> list[tuple[str, str]]:
    """The pairs (host folder, place) where a folder the sandbox binds lies in, or holds, one of
    the places where the sandbox shows its own files (one bind would hide the other).

    Examples
    --------
    >>> clashes(["/opt/mha-submission/venv", "/tmp/venv"], ["/opt/mha-submission", "/opt/x"])
    [('/opt/mha-submission/venv', '/opt/mha-submission')]
    >>> clashes(["/opt"], ["/opt/x"]), clashes(["/opt/x-venv"], ["/opt/x"])
    ([('/opt', '/opt/x')], [])
    """
    return [(d, p) for d in dirs for p in places if inside(d, p) or inside(p, d)]


def interpreter() -> str:
    """The grader's interpreter as an absolute path that works from any folder."""
    executable = sys.executable or os.path.join(sys.exec_prefix, "bin", "python3")
    folder, name = os.path.split(os.path.abspath(executable))
    return os.path.join(os.path.realpath(folder), name)


def python_dirs() -> list[str]:
    """The folders the interpreter and NumPy need, outermost first, without nesting."""
    candidates = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                                 Path(np.__file__).parent.parent,
                                                 Path(interpreter()).parent)}
    candidates |= {os.path.abspath(sys.prefix)}  # a venv is entered through its own path, links and all
    dirs: list[str] = []
    for path in sorted(candidates, key=len):
        if not any(inside(path, d) for d in (*SYSTEM_DIRS, *dirs)):
            dirs.append(path)
    return dirs


def site_dirs() -> list[str]:
    """The grader's site-packages folders (NumPy's first), as the sandbox sees them."""
    first = str(Path(np.__file__).resolve().parent.parent)
    dirs = [first] + [os.path.abspath(entry) for entry in sys.path
                      if entry.endswith(("site-packages", "dist-packages"))]
    return list(dict.fromkeys(dirs))


def grader_package_copies(with_mha: bool) -> list[str]:
    """Folders on the import path that the sandbox would show and must mask: the grader's own
    package in every run, the course's in the NumPy-only run."""
    packages = (GRADER_PACKAGE,) if with_mha else (GRADER_PACKAGE, "mha")
    bound = python_dirs()
    copies = set()
    for entry in sys.path:
        for package in packages:
            candidate = os.path.join(os.path.realpath(entry or "."), package)
            if os.path.isdir(candidate) and any(inside(candidate, d) for d in bound):
                copies.add(candidate)
    return sorted(copies)


def font_cache() -> str | None:
    """The grader's matplotlib font list (``fontlist-v*.json``), if matplotlib made one.

    A run starts with an empty home, where importing ``matplotlib.pyplot`` first spends seconds
    listing the system's fonts: the runner copies this file there instead. Found where matplotlib
    keeps it (``MPLCONFIGDIR``, else ``$XDG_CACHE_HOME/matplotlib``, else ``~/.cache/matplotlib``),
    without importing matplotlib.
    """
    folder = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "matplotlib")
    try:
        found = sorted(Path(folder).glob("fontlist-v*.json"))
    except OSError:
        return None
    return str(found[-1]) if found and found[-1].is_file() else None
