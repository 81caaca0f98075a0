"""The grader's side of a run's pipes: send the job, read the answers, send the hidden calls after
the visible answers, all without blocking and within bounds.

The runner writes one frame per cell, one per call, a ``visible_done`` frame and an ``end`` frame.
Before ``visible_done`` there can be at most as many frames as the run has cells and visible calls:
a run that sends more (a flood of empty frames, say) or a frame that is not one is cut off there
and never receives the hidden calls.
"""

from __future__ import annotations

import os
import select
import time

import mha_classroom.wire as wire

__all__ = ["framed", "converse"]

_MIN_FRAME = len(wire.MAGIC) + 8
_VISIBLE_DONE = b'{"header":{"phase":"visible_done"'


def framed(message: bytes) -> bytes:
    """A message as the runner reads it: its length (8 bytes), then the message."""
    return len(message).to_bytes(8, "little") + message


class _Scanner:
    """Walks the frames of the output as it arrives, looking for ``visible_done``."""

    def __init__(self, max_frames: int | None):
        self.offset, self.frames, self.max_frames = 0, 0, max_frames
        self.bad = False

    def visible_done(self, data: bytearray) -> int:
        """The offset just after the ``visible_done`` frame, or -1 (not yet, or never: ``bad``)."""
        while not self.bad and self.offset + 8 <= len(data):
            length = int.from_bytes(data[self.offset:self.offset + 8], "little")
            end = self.offset + 8 + length
            if length < _MIN_FRAME or (self.max_frames is not None and self.frames >= self.max_frames):
                self.bad = True  # not a frame, or more frames than the run can write: a flood
                break
            if end > len(data):
                break
            start = self.offset + 8 + _MIN_FRAME
            self.offset, self.frames = end, self.frames + 1
            if data[start:start + len(_VISIBLE_DONE)] == _VISIBLE_DONE:
                return end
        return -1


def converse(process, first: bytes, second: bytes | None, cap: int, deadline: float,
             max_frames: int | None = None) -> tuple[bytearray, int, str, float]:
    """Feed stdin and read stdout without blocking; ``second`` goes out only after the visible
    answers. Returns (stdout bytes, offset where ``second`` was sent or -1, how reading ended:
    "closed", "timeout", "full" (past ``cap`` bytes) or "flood", and when ``second`` was sent, on
    the monotonic clock, or 0.0)."""
    stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
    os.set_blocking(stdin, False)
    os.set_blocking(stdout, False)
    pending, data, split, scanning, sent = memoryview(first), bytearray(), -1, True, 0.0
    scanner = _Scanner(max_frames)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return data, split, "timeout", sent
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
                return data, split, "closed", sent
            data += chunk
            if len(data) > cap:
                del data[cap + 1:]
                return data, split, "full", sent
            if scanning:
                found = scanner.visible_done(data)
                if scanner.bad:
                    return data, split, "flood", sent
                if found >= 0:  # (before the whole job was sent, it can only be a forgery)
                    scanning = False
                    if second is not None and not pending:
                        split, pending, sent = found, memoryview(second), time.monotonic()
