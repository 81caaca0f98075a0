"""Plain data between the grader and the sandboxed runner: values as JSON trees plus arrays.

Only the standard library and NumPy are imported here: the runner imports this file inside the
sandbox, and the grader uses the same functions on its side. A value travels as a small JSON
*tree* (``["t", [...]]`` for a tuple, ``["a", 3]`` for the fourth array, ...) and a list of plain
numeric ``ndarray`` s. A message is ``MAGIC``, the JSON header's length (8 bytes), the header and
an uncompressed ``.npz`` of the arrays; on the runner's output each message is a *frame*, preceded
by its length (8 bytes), and :func:`read_frames` splits that stream on the grader's side.
:func:`unpack` validates everything before building an array: zip entries stored (not compressed)
with the expected names, ``.npy`` headers read first, dtype kinds ``b i u f c`` only (no objects, no
records), shapes whose byte count matches the data, all within caps; nothing is ever unpickled.

Tree tags: ``n`` None, ``b`` bool, ``i`` int (decimal text), ``f`` float (``repr`` text), ``s`` str,
``t`` tuple, ``l`` list, ``d`` dict (key/value pairs), ``a`` ndarray, ``g`` NumPy scalar (a 0-d
array), ``y`` NumPy scalar type such as ``np.float32``, ``D`` dtype, ``x`` anything else (its type
name; the grader can never turn it back into a value).
"""

import hashlib
import io
import json
import math
import struct
import zipfile
from collections import OrderedDict, defaultdict
from typing import Any

import numpy as np

MAGIC = b"MHAWIRE1"
MAX_DEPTH = 24
MAX_NODES = 20_000
MAX_TEXT = 20_000
MAX_ARRAYS = 2_000
ALLOWED_KINDS = "biufc"
SCALAR_TYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128")


class WireError(ValueError):
    """Data that does not follow the format (or exceeds its caps)."""


def _check_array(array):
    dtype = array.dtype
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError(f"arrays of dtype {dtype} are not accepted")


def encode(value, arrays, strict=True, _depth=0, _count=None):
    """Return the tree of ``value``, appending its arrays to ``arrays``.

    With ``strict``, a value of another type raises :class:`WireError`; otherwise it becomes
    ``["x", type name]``.
    """
    count = _count if _count is not None else [0]
    count[0] += 1
    if _depth > MAX_DEPTH or count[0] > MAX_NODES:
        raise WireError("the value is nested too deeply or has too many parts")
    kind = type(value)
    if value is None:
        return ["n"]
    if kind is bool:
        return ["b", value]
    if kind is int:
        return ["i", str(value)]
    if kind is float:
        return ["f", repr(value)]
    if kind is str:
        if len(value) > MAX_TEXT:
            raise WireError("a string is too long")
        return ["s", value]
    if kind in (tuple, list):
        items = [encode(item, arrays, strict, _depth + 1, count) for item in value]
        return ["t" if kind is tuple else "l", items]
    if kind in (dict, OrderedDict, defaultdict):  # the standard library's dicts travel as dicts
        return ["d", [[encode(k, arrays, strict, _depth + 1, count),
                       encode(v, arrays, strict, _depth + 1, count)] for k, v in value.items()]]
    if kind is np.ndarray or isinstance(value, np.generic):
        if len(arrays) >= MAX_ARRAYS:
            raise WireError("too many arrays")
        array = np.array(value, copy=True, subok=False)
        if type(array) is not np.ndarray:
            raise WireError("not a plain ndarray")
        _check_array(array)
        arrays.append(array)
        return ["a" if kind is np.ndarray else "g", len(arrays) - 1]
    if isinstance(value, type) and issubclass(value, np.generic) and value.__name__ in SCALAR_TYPES:
        return ["y", value.__name__]
    if kind is np.dtype or isinstance(value, np.dtype):
        array = np.empty(0, dtype=value)
        _check_array(array)
        return ["D", array.dtype.str]
    if strict:
        raise WireError(f"values of type {kind.__name__} cannot be sent")
    return ["x", str(getattr(kind, "__name__", "?"))[:100]]


def decode(tree, arrays, _depth=0):
    """Rebuild a value from its tree (arrays are copied, so callers may change them)."""
    if _depth > MAX_DEPTH or not isinstance(tree, list) or not tree or not isinstance(tree[0], str):
        raise WireError("malformed value")
    tag, rest = tree[0], tree[1:]
    if tag == "n" and not rest:
        return None
    if len(rest) != 1:
        raise WireError("malformed value")
    data = rest[0]
    if tag == "b" and type(data) is bool:
        return data
    if tag == "i" and type(data) is str and len(data) <= 400:
        return int(data)
    if tag == "f" and type(data) is str and len(data) <= 40:
        return float(data)
    if tag == "s" and type(data) is str:
        return data
    if tag in ("t", "l") and type(data) is list:
        items = [decode(item, arrays, _depth + 1) for item in data]
        return tuple(items) if tag == "t" else items
    if tag == "d" and type(data) is list:
        pairs = []
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict")
            pairs.append((decode(pair[0], arrays, _depth + 1), decode(pair[1], arrays, _depth + 1)))
        try:
            return dict(pairs)
        except TypeError:
            raise WireError("a dict key is not hashable") from None
    if tag in ("a", "g") and type(data) is int and 0 <= data < len(arrays):
        array = arrays[data].copy()
        return array if tag == "a" else array[()]
    if tag == "y" and data in SCALAR_TYPES:
        return getattr(np, data)
    if tag == "D" and type(data) is str and len(data) <= 8:
        dtype = np.dtype(data)
        _check_array(np.empty(0, dtype))
        return dtype
    raise WireError(f"malformed value (tag {str(tag)[:10]!r})")


def digest(tree, arrays):
    """A hash of a value that does not depend on how its arrays are laid out in memory."""
    def canonical(node):
        if isinstance(node, list) and node and node[0] in ("a", "g"):
            array = np.ascontiguousarray(arrays[node[1]])
            return [node[0], array.dtype.str, list(array.shape),
                    hashlib.sha256(array.tobytes()).hexdigest()]
        if isinstance(node, list):
            return [canonical(item) for item in node]
        return node

    text = json.dumps(canonical(tree), separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def pack(header, arrays):
    """Serialise a JSON-able ``header`` and a list of arrays into one message."""
    body = json.dumps(header, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for index, array in enumerate(arrays):
            with archive.open(f"a{index}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)
    return MAGIC + struct.pack("<Q", len(body)) + body + buffer.getvalue()


def _shift(tree, offset):
    """``tree`` with every array index moved up by ``offset``."""
    if tree and tree[0] in ("a", "g"):
        return [tree[0], tree[1] + offset]
    if tree and tree[0] in ("t", "l"):
        return [tree[0], [_shift(item, offset) for item in tree[1]]]
    if tree and tree[0] == "d":
        return ["d", [[_shift(k, offset), _shift(v, offset)] for k, v in tree[1]]]
    return tree


def pack_calls(header, probes):
    """One message: ``header`` plus the probes' calls (``name``, ``kind``, ``args``, ``kwargs``,
    ``arrays`` attributes, each call's trees indexing its own arrays), all arrays in one list."""
    arrays, encoded = [], []
    for probe in probes:
        offset = len(arrays)
        arrays.extend(probe.arrays)
        value = probe.kind == "value"
        encoded.append({"name": probe.name, "kind": probe.kind,
                        "args": None if value else _shift(probe.args, offset),
                        "kwargs": None if value else _shift(probe.kwargs, offset)})
    return pack({**header, "probes": encoded}, arrays)


def _read_member(archive, info, max_bytes):
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise WireError(f"unsupported .npy version {version}")
        _check_array(np.empty(0, dtype))
        if len(shape) > 32 or any(type(n) is not int or n < 0 for n in shape):
            raise WireError("malformed array shape")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > max_bytes or nbytes != info.file_size - member.tell():
            raise WireError("array data does not match its header")
        data = member.read(nbytes + 1)
    if len(data) != nbytes:
        raise WireError("array data does not match its header")
    array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
    return np.array(array, dtype=dtype.newbyteorder("="), order="C")


def unpack(data, max_bytes, max_header=2_000_000):
    """Return ``(header, arrays)`` from a message, validating it all; raise WireError."""
    if not isinstance(data, bytes) or len(data) > max_bytes or not data.startswith(MAGIC):
        raise WireError("not a message from the runner (or too large)")
    start = len(MAGIC) + 8
    (length,) = struct.unpack("<Q", data[len(MAGIC):start])
    if length > max_header or start + length > len(data):
        raise WireError("header too long")
    try:
        header = json.loads(data[start:start + length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise WireError("header is not valid JSON") from None
    arrays = []
    try:
        with zipfile.ZipFile(io.BytesIO(data[start + length:])) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ARRAYS:
                raise WireError("too many arrays")
            total = 0
            for index, info in enumerate(infos):
                total += info.file_size
                if (info.filename != f"a{index}.npy" or info.compress_type != zipfile.ZIP_STORED
                        or total > max_bytes):
                    raise WireError("unexpected archive entry")
                arrays.append(_read_member(archive, info, max_bytes))
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error,
            RecursionError, MemoryError) as error:
        if isinstance(error, WireError):
            raise
        raise WireError(f"unreadable arrays ({type(error).__name__})") from None
    return header, arrays


#: JSON header bytes the grader parses from one run, all frames together. A real run's headers take
#: kilobytes (arrays travel apart from them); parsed, JSON grows about thirty times in memory, so
#: 64 MiB of headers made of empty lists and dicts took the grader to 1.6 GB per job.
MAX_HEADER_BYTES = 4 * 2**20


def read_frames(data: bytes, max_bytes: int, max_frames: int | None = None) -> tuple[list, bool]:
    """Split the runner's output into validated (header, arrays, end offset) frames; stop at the
    first bad one, where the headers pass :data:`MAX_HEADER_BYTES` in all, after ``max_frames``
    frames (a run writes one per cell and per call, and two more), or at ``max_bytes``. Returns the
    frames and whether anything unread followed them.

    The frames before a flood of valid but unasked-for ones are kept, so the grader still sees which
    cell the run reached; unpacking a million tiny frames would cost a minute of the grader's time."""
    frames: list[tuple[Any, ...]] = []
    offset, header_budget = 0, MAX_HEADER_BYTES
    over = len(data) > max_bytes
    if over:  # the output was cut at the size limit: read what fits
        data = data[:max_bytes]
    while offset + 8 <= len(data):
        if max_frames is not None and len(frames) >= max_frames:
            return frames, True
        length = int.from_bytes(data[offset:offset + 8], "little")
        message = data[offset + 8:offset + 8 + length]
        if len(message) != length:
            return frames, True
        header_length = int.from_bytes(message[len(MAGIC):len(MAGIC) + 8], "little")
        if header_length > header_budget:
            return frames, True
        header_budget -= header_length
        try:
            header, arrays = unpack(message, max_bytes)
        except WireError:
            return frames, True
        if not isinstance(header, dict):
            return frames, True
        offset += 8 + length
        frames.append((header, arrays, offset))
    return frames, over or offset != len(data)
