"""The sandbox itself: what a process inside can see, reach and leave behind."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from mha_classroom.sandbox import INSIDE_PACKAGE, Limits
from mha_classroom.seccomp import seccomp_filter
from mha_classroom.wire import read_frames

pytestmark = pytest.mark.classroom
FAST = Limits(timeout=5.0, memory_mb=512, tmp_mb=8, nproc=8)


def _inside(sandbox, code: str, with_mha: bool = False, limits: Limits = FAST) -> tuple:
    done = sandbox.execute(sandbox.command(with_mha, limits, ["-c", code]), b"", limits)
    return done.status, bytes(done.data).decode(errors="replace")


def test_inside_a_fresh_unprivileged_process_sees_only_system_python_and_tmp(sandbox, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setenv("MHA_GRADER_SECRET", "hunter2")
    (tmp_path / "course.txt").write_text("secret")
    status, out = _inside(sandbox, (
        "import os\n"
        "print(os.getuid(), os.getpid(), sorted(os.environ))\n"
        # The course folder's files are not there (its path may exist, empty, when the venv lives in it).
        f"print(os.path.exists({str(tmp_path)!r}), "
        f"os.path.exists({os.path.join(os.getcwd(), 'pyproject.toml')!r}))\n"
        "print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])\n"
        "print(sorted(os.listdir('/opt')))"))
    ids, seen, caps, opt = out.splitlines()
    uid, pid, environ = ids.split(" ", 2)
    assert status == 0 and uid != "0" and pid == "2"  # an unprivileged uid, its own PID namespace
    assert "MHA_GRADER_SECRET" not in environ and "hunter2" not in out
    assert seen == "False False" and int(caps, 16) == 0 and opt == "['mha-runner']"


def test_mha_is_there_only_when_allowed(sandbox):
    code = "import importlib.util as u\nprint(u.find_spec('mha') is not None)"
    assert _inside(sandbox, f"import sys\nsys.path.insert(0, {INSIDE_PACKAGE!r})\n" + code,
                   with_mha=True)[1].strip() == "True"
    assert _inside(sandbox, f"import sys\nsys.path.insert(0, {INSIDE_PACKAGE!r})\n" + code,
                   with_mha=False)[1].strip() == "False"


def test_no_network_no_writes_outside_tmp_and_tmp_is_small(sandbox):
    status, out = _inside(sandbox, (
        "import os, socket\n"
        "for target in ('/usr/pwned', '/opt/mha-runner/pwned', '/proc/pwned', '/pwned'):\n"
        "    try:\n        open(target, 'w'); print('wrote', target)\n"
        "    except OSError:\n        pass\n"
        "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); print('network')\n"
        "except OSError:\n    pass\n"
        "try:\n    open('/tmp/big', 'wb').write(b'x' * 2**24); print('big')\n"
        "except OSError as e:\n    print('full', e.errno)"))
    assert status == 0 and "wrote" not in out and "network" not in out and "full" in out


def test_a_time_out_kills_the_whole_namespace_setsid_children_included(sandbox):
    code = ("import os, subprocess, time\n"
            "subprocess.Popen(['sleep', '27.18'], start_new_session=True)\n"
            "if os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\n"
            "while True:\n    time.sleep(1)")
    start = time.perf_counter()
    status, _ = _inside(sandbox, code, limits=Limits(timeout=2.0, memory_mb=512))
    assert status is None and time.perf_counter() - start < 10
    time.sleep(0.5)
    commands = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                commands.append(open(f"/proc/{entry.name}/cmdline", "rb").read())
            except OSError:
                pass
    assert not any(b"27.18" in command for command in commands)


def test_processes_and_memory_are_limited(sandbox):
    status, out = _inside(sandbox, (
        "import os, time\n"
        "children = 0\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        if os.fork() == 0:\n            time.sleep(5)\n            os._exit(0)\n"
        "        children += 1\n"
        "    except OSError:\n        break\n"
        "print(children)\n"
        "try:\n    bytearray(2**30); print('allocated')\n"
        "except MemoryError:\n    print('memory')"))
    children, memory = out.split()
    assert status == 0 and int(children) < FAST.nproc and memory == "memory"


def test_memory_outside_the_address_space_limit_is_refused(sandbox):
    """memfd files and System V shared memory hold pages that RLIMIT_AS does not count."""
    if seccomp_filter() is None:
        pytest.skip(f"no seccomp filter for {os.uname().machine}")
    status, out = _inside(sandbox, (
        "import ctypes, errno, os\n"
        "try:\n    os.memfd_create('hog'); print('memfd')\n"
        "except OSError as error:\n    print(errno.errorcode[error.errno])\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print(libc.shmget(0, 1 << 20, 0o1600), errno.errorcode[ctypes.get_errno()])\n"
        "import numpy\nprint(int(numpy.ones(4).sum()))"))
    assert status == 0 and out.split() == ["EPERM", "-1", "EPERM", "4"]  # and NumPy still works


def test_the_grader_parses_a_bounded_amount_of_header(monkeypatch):
    from mha_classroom import wire

    message = wire.pack({"probe": 0, "padding": [[] for _ in range(100_000)]}, [])
    frame = len(message).to_bytes(8, "little") + message
    frames, garbled = read_frames(frame * 3, 2**30)
    assert len(frames) == 3 and not garbled
    header_bytes = int.from_bytes(message[len(wire.MAGIC):len(wire.MAGIC) + 8], "little")
    monkeypatch.setattr(wire, "MAX_HEADER_BYTES", header_bytes * 3 // 2)
    frames, garbled = read_frames(frame * 3, 2**30)
    assert len(frames) == 1 and garbled  # the second frame would pass the budget: reading stops


@pytest.fixture
def bound_site(monkeypatch):
    """A site-packages folder on the grader's import path that the sandbox binds, as a virtual
    environment's is (outside /tmp: the sandbox has its own)."""
    from mha_classroom import paths
    from mha_classroom import sandbox as module

    folder = Path(tempfile.mkdtemp(dir="/var/tmp"))
    site = folder / "site-packages"
    site.mkdir()
    real = paths.python_dirs()
    for owner in (paths, module):
        monkeypatch.setattr(owner, "python_dirs", lambda: [*real, str(site)])
    monkeypatch.setattr(paths.sys, "path", [*paths.sys.path, str(site)])
    yield site
    shutil.rmtree(folder)


def _installed_copy_seen(sandbox, site: Path, package: str, with_mha: bool) -> bool:
    """Install a stand-in ``package`` in ``site``; can code in the sandbox import its contents?"""
    (site / package).mkdir(exist_ok=True)
    (site / package / "__init__.py").write_text("VISIBLE = True\n")
    code = (f"import sys\nsys.path.append({str(site)!r})\n"
            f"import {package}\nprint(hasattr({package}, 'VISIBLE'))")
    return _inside(sandbox, code, with_mha=with_mha)[1].strip() == "True"


def test_an_installed_copy_of_mha_is_masked_in_the_numpy_only_run(sandbox, bound_site):
    assert not _installed_copy_seen(sandbox, bound_site, "mha", with_mha=False)  # an empty folder
    assert _installed_copy_seen(sandbox, bound_site, "mha", with_mha=True)  # there otherwise


def test_an_installed_grader_is_masked_in_every_run(sandbox, bound_site):
    """``pip install ./classroom`` puts the grader in site-packages, which the sandbox binds; the
    runner needs only its own three files, bound apart."""
    for with_mha in (False, True):
        assert not _installed_copy_seen(sandbox, bound_site, "mha_classroom", with_mha)


def test_the_self_test_names_the_real_cause():
    from mha_classroom.paths import interpreter
    from mha_classroom.selftest import cause

    missing = cause(True, True, 127, "", "bwrap: execvp /tmp/venv/bin/python: No such file or directory")
    assert "cannot see the grader's interpreter" in missing and interpreter() in missing
    assert "install bubblewrap" not in missing
    userns = cause(True, False, 1, "", "bwrap: No permissions to creating new namespace, likely "
                                      "because the kernel does not allow non-privileged user namespaces")
    assert "user namespaces" in userns and "install bubblewrap" not in userns
    assert "seccomp" in cause(True, True, 1, "", "bwrap: prctl(PR_SET_SECCOMP): Invalid argument")
    assert "NumPy does not import" in cause(True, True, 1, "", "ModuleNotFoundError: No module named 'numpy'")
    assert "network" in cause(True, True, 0, "network\nok 3000001 2 2", "")
    assert "not in force" in cause(True, True, 0, "memfd\nok 3000001 2 2", "")
    assert "as root" in cause(True, True, 0, "ok 0 2 2", "")
    assert cause(True, True, 0, "ok 3000001 2 2", "") is None
    assert cause(False, True, 0, "network memfd ok 0 2 2", "") is None  # trusted mode: no sandbox


GRADE_ONE = """
import json, sys
from pathlib import Path
from mha_classroom import get_sandbox, grade_submission, load_assignment
from mha_classroom.release import nbgrader_notebook, write_notebook
assignment = load_assignment(sys.argv[1])
path = write_notebook(nbgrader_notebook(assignment), Path(sys.argv[2]) / "alice.ipynb")
result = grade_submission(assignment, "alice", path, sandbox=get_sandbox())
print(json.dumps([sys.executable, result.points, result.max_points]))
"""


@pytest.mark.parametrize("parent, how", [("/tmp", "relative"), ("/var/tmp", "symlink")])
def test_the_grader_runs_from_a_venv_under_tmp_by_a_relative_path_or_a_link(parent, how, tmp_path,
                                                                            sandbox):
    """A newcomer who clones into /tmp and starts ``../venv/bin/python``: the first round's
    sandbox hid that venv under its private /tmp and said "install bubblewrap"."""
    import json
    import site
    import subprocess
    import sys

    from tests.classroom.conftest import ASSIGNMENTS

    folder = Path(tempfile.mkdtemp(dir=parent, prefix="mha-venv-"))
    try:
        venv = folder / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        (site_packages,) = venv.glob("lib/python3*/site-packages")
        ours = [p for p in site.getsitepackages() if Path(p, "numpy").is_dir()][0]
        (site_packages / "course.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
        if how == "relative":
            python, cwd = "../bin/python", venv / "lib"
        else:
            (folder / "link").symlink_to(venv, target_is_directory=True)
            python, cwd = str(folder / "link" / "bin" / "python"), tmp_path
        done = subprocess.run([python, "-c", GRADE_ONE, str(ASSIGNMENTS[0]), str(tmp_path)],
                              capture_output=True, text=True, cwd=cwd, check=False,
                              env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stderr[-2000:]
        executable, points, total = json.loads(done.stdout.splitlines()[-1])
        assert points == total == 15 and executable.startswith((str(folder), "../"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
