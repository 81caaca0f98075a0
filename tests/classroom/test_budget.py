"""One memory and process budget per submission: counted over all of a run's processes where the
machine gives the grader a control group (v2 first, then v1), divided between them otherwise."""

from __future__ import annotations

import os
import subprocess

import pytest

from mha_classroom import budget as module
from mha_classroom.budget import Budget, RunGroup
from mha_classroom.sandbox import Limits
from tests.classroom.hostile_round_two import processes_holding

pytestmark = pytest.mark.classroom


def test_without_a_group_the_address_space_is_shared_out_so_the_total_is_the_teachers():
    fallback = Budget("rlimit", why_not="no cgroup here")
    assert fallback.process_limits(1024, 8) == (256, 4)  # 4 processes of 256 MiB: 1 GiB in all
    assert fallback.process_limits(384, 8) == (384, 1)  # too little to share: one process
    for memory, nproc in ((1024, 8), (768, 8), (4096, 16), (300, 2)):
        share, processes = fallback.process_limits(memory, nproc)
        assert share * processes <= memory and processes <= nproc
    assert fallback.run_group(1024, 8) is None
    line = fallback.describe(1024, 8)
    assert "4 processes of at most 256 MiB" in line and "no control group: no cgroup here" in line
    grouped = Budget("cgroup v1", ("/nowhere",))
    assert grouped.process_limits(384, 8) == (384, 8)  # the group counts them all
    assert "counted over all its processes (cgroup v1" in grouped.describe(384, 8)


def _fake_v2(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    return tmp_path


def test_cgroup_v2_gets_a_group_with_memory_and_pids_and_each_run_a_leaf(tmp_path, monkeypatch):
    """The files a v2 group needs, on a folder standing in for the hierarchy (the kernel makes a
    new group's files itself; here the grader's writes create them)."""
    monkeypatch.setattr(module.os, "geteuid", lambda: 0)
    monkeypatch.setattr(module, "_empty_and_remove", lambda leaf: None)
    root = _fake_v2(tmp_path)
    budget, reason = module._try_v2(str(root), "/")
    assert budget is not None and budget.kind == "cgroup v2", reason
    group = root / f"mha-classroom-{os.getpid()}"
    assert budget.groups == (str(group),)
    assert (root / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert (group / "cgroup.subtree_control").read_text() == "+memory +pids"
    run = budget.run_group(384, 8)
    (leaf,) = run.leaves
    assert (leaf / "memory.max").read_text() == str(384 * 2**20)
    assert (leaf / "memory.swap.max").read_text() == "0"
    assert (leaf / "pids.max").read_text() == "10"  # 8, and bubblewrap's own two
    done = subprocess.run(run.enter(["sh", "-c", "echo $$"]), capture_output=True, text=True,
                          check=True)
    assert (leaf / "cgroup.procs").read_text().split() == done.stdout.split()  # joined, then ran
    (leaf / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert run.out_of_memory()


def test_cgroup_v2_without_controllers_to_give_says_why(tmp_path, monkeypatch):
    monkeypatch.setattr(module.os, "geteuid", lambda: 0)
    (tmp_path / "cgroup.controllers").write_text("hugetlb\n")  # a hybrid machine's unified mount
    budget, reason = module._try_v2(str(tmp_path), "/")
    assert budget is None and "no memory and pids controllers" in reason
    assert not list(tmp_path.glob("mha-classroom-*"))


def test_stale_groups_of_graders_that_are_gone_are_removed(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    (tmp_path / f"mha-classroom-{dead.pid}" / "run-3").mkdir(parents=True)
    (tmp_path / f"mha-classroom-{os.getppid()}").mkdir()  # a live one stays
    module._fresh_group(tmp_path)
    names = sorted(entry.name for entry in tmp_path.iterdir())
    assert names == sorted([f"mha-classroom-{os.getppid()}", f"mha-classroom-{os.getpid()}"])


@pytest.fixture
def grouped(sandbox):
    if sandbox.budget.kind not in ("cgroup v1", "cgroup v2"):
        pytest.skip(f"no control group on this machine ({sandbox.budget.why_not})")
    return sandbox


HOGS = processes_holding(6, 200, wait=8) + "print(HELD)\n"


def test_six_processes_share_one_memory_budget(grouped):
    """Under a 384 MiB budget, at most one of six processes can hold 200 MiB: with a per-process
    limit, all six did (1.2 GB)."""
    limits = Limits(memory_mb=384, timeout=15)
    done = grouped.execute(grouped.command(False, limits, ["-c", HOGS]), b"", limits)
    held = int(bytes(done.data) or b"-1")
    assert 0 <= held and held * 200 <= 384 and done.out_of_memory, (done.status, done.stderr)


def test_processes_are_counted_for_the_run_and_its_group_goes_with_it(grouped):
    code = ("import os, time\nmade = 0\nfor _ in range(40):\n    try:\n"
            "        if os.fork() == 0:\n            time.sleep(2)\n            os._exit(0)\n"
            "        made += 1\n    except OSError:\n        break\nprint(made)")
    limits = Limits(nproc=6, timeout=15, memory_mb=512)
    done = grouped.execute(grouped.command(False, limits, ["-c", code]), b"", limits)
    assert done.status == 0 and 0 < int(bytes(done.data)) < 6
    for group in grouped.budget.groups:
        assert [entry.name for entry in os.scandir(group) if entry.is_dir()] == []  # no run left


def test_a_run_group_is_emptied_and_removed(grouped):
    run = RunGroup(grouped.budget, 256, 4)
    sleeper = subprocess.Popen(run.enter(["sleep", "30"]))
    try:
        for _ in range(100):
            if str(sleeper.pid) in (run.leaves[0] / "cgroup.procs").read_text().split():
                break
            subprocess.run(["sleep", "0.01"], check=True)
        run.close()
        assert sleeper.wait(timeout=5) != 0  # killed with its group
        assert not any(leaf.exists() for leaf in run.leaves)
    finally:
        sleeper.kill()
