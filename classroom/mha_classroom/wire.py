"""Plain data between the grader and the sandboxed runner: values as JSON trees plus arrays.

Only the standard library and NumPy are imported here: the runner imports this file inside the
sandbox, and the grader uses the same functions on its side. A value travels as a small JSON
*tree* (``["t", [...]]`` for a tuple, ``["a", 3]`` for the fourth array, ...) and a list of plain
numeric ``ndarray`` s. A message is ``MAGIC``, the JSON header's length (8 bytes), the header (the
caller's ``header`` and each array's dtype and shape) and the arrays' bytes one after the other, in
C order; on the runner's output each message is a *frame*, preceded by its length (8 bytes), and
:func:`read_frames` splits that stream on the grader's side. :func:`unpack` validates everything
before building an array: at most :data:`MAX_ARRAYS` arrays, dtypes of kinds ``b i u f c`` only (no
objects, no records), shapes whose byte counts add up to exactly the bytes that follow, all within
caps; nothing is ever unpickled, and no archive is parsed. :func:`decode` builds at most
:data:`MAX_NODES` values and dicts of at most :data:`MAX_DICT` entries, so that no answer can make
the grader's own work large (a dict of keys that share one hash costs the square of its size).

Tree tags: ``n`` None, ``b`` bool, ``i`` int (decimal text), ``f`` float (``repr`` text), ``s`` str,
``t`` tuple, ``l`` list, ``d`` dict (key/value pairs), ``a`` ndarray, ``g`` NumPy scalar (a 0-d
array), ``y`` NumPy scalar type such as ``np.float32``, ``D`` dtype, ``x`` anything else (its type
name; the grader can never turn it back into a value). A named tuple, or another subclass of
``tuple``, ``list`` or ``dict``, travels as the plain container it holds, read with the base class's
own methods (what it claims through overridden ones does not count).
"""

import hashlib
import json
import math
import struct
import time

import numpy as np

MAGIC = b"MHAWIRE2"
MAX_DEPTH = 24
MAX_NODES = 20_000
MAX_TEXT = 20_000
MAX_ARRAYS = 2_000
MAX_DICT = 1_000
MAX_DIMS = 32
ALLOWED_KINDS = "biufc"
SCALAR_TYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "complex64", "complex128")
#: The dtypes an array may have on the wire (``dtype.str``, either byte order).
DTYPES = frozenset(np.dtype(name).newbyteorder(order).str for name in SCALAR_TYPES
                   for order in ("<", ">"))


class WireError(ValueError):
    """Data that does not follow the format (or exceeds its caps)."""


def _check_array(array):
    dtype = array.dtype
    if dtype.kind not in ALLOWED_KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError(f"arrays of dtype {dtype} are not accepted")


def _items(value, kind):
    """The items of a container, through its base class's own methods."""
    if issubclass(kind, tuple):
        return "t", list(tuple.__iter__(value))
    if issubclass(kind, list):
        return "l", list(list.__iter__(value))
    return "d", list(dict.items(value))


def encode(value, arrays, strict=True, _depth=0, _count=None):
    """Return the tree of ``value``, appending its arrays to ``arrays``.

    With ``strict``, a value of another type raises :class:`WireError`; otherwise it becomes
    ``["x", type name]``.

    Examples
    --------
    >>> from collections import namedtuple
    >>> arrays = []
    >>> encode(namedtuple("Pair", "output weights")(1, np.zeros(2)), arrays)
    ['t', [['i', '1'], ['a', 0]]]
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
    if issubclass(kind, (tuple, list, dict)):
        tag, items = _items(value, kind)
        if tag != "d":
            return [tag, [encode(item, arrays, strict, _depth + 1, count) for item in items]]
        if len(items) > MAX_DICT:
            raise WireError(f"a dict has more than {MAX_DICT} entries")
        return ["d", [[encode(k, arrays, strict, _depth + 1, count),
                       encode(v, arrays, strict, _depth + 1, count)] for k, v in items]]
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


def decode(tree, arrays, _depth=0, _count=None):
    """Rebuild a value from its tree (arrays are copied, so callers may change them)."""
    count = _count if _count is not None else [0]
    count[0] += 1
    if (_depth > MAX_DEPTH or count[0] > MAX_NODES or not isinstance(tree, list) or not tree
            or not isinstance(tree[0], str)):
        raise WireError("malformed value (or too many parts)")
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
        items = [decode(item, arrays, _depth + 1, count) for item in data]
        return tuple(items) if tag == "t" else items
    if tag == "d" and type(data) is list:
        if len(data) > MAX_DICT:
            raise WireError(f"a dict has more than {MAX_DICT} entries")
        pairs = []
        for pair in data:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict")
            pairs.append((decode(pair[0], arrays, _depth + 1, count),
                          decode(pair[1], arrays, _depth + 1, count)))
        try:
            return dict(pairs)
        except TypeError:
            raise WireError("a dict key is not hashable") from None
    if tag in ("a", "g") and type(data) is int and 0 <= data < len(arrays):
        array = arrays[data].copy()
        return array if tag == "a" else array[()]
    if tag == "y" and data in SCALAR_TYPES:
        return getattr(np, data)
    if tag == "D" and type(data) is str and data in DTYPES:
        return np.dtype(data)
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
    arrays = [array if array.flags.c_contiguous else array.copy(order="C") for array in arrays]
    described = [[array.dtype.str, list(array.shape)] for array in arrays]
    body = json.dumps({"header": header, "arrays": described}, separators=(",", ":"),
                      ensure_ascii=True, allow_nan=False).encode()
    return b"".join([MAGIC, struct.pack("<Q", len(body)), body,
                     *(array.tobytes() for array in arrays)])


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


def _described(entry, max_bytes):
    """(dtype, shape, byte count) of one array's description, validated."""
    if not (type(entry) is list and len(entry) == 2 and type(entry[0]) is str
            and entry[0] in DTYPES and type(entry[1]) is list and len(entry[1]) <= MAX_DIMS
            and all(type(n) is int and 0 <= n <= max_bytes for n in entry[1])):
        raise WireError("malformed array description")
    dtype = np.dtype(entry[0])
    nbytes = math.prod(entry[1]) * dtype.itemsize
    if nbytes > max_bytes:
        raise WireError("an array is larger than the message")
    return dtype, tuple(entry[1]), nbytes


def unpack(data, max_bytes, max_header=2_000_000, max_array_bytes=None):
    """Return ``(header, arrays)`` from a message (bytes or a memoryview), validating it all;
    raise WireError. The arrays are copies: ``data`` may go once this returns. ``max_array_bytes``
    bounds the arrays of the message together, checked before any is copied."""
    view = memoryview(data)
    if view.nbytes > max_bytes or view[:len(MAGIC)] != MAGIC:
        raise WireError("not a message from the runner (or too large)")
    start = len(MAGIC) + 8
    (length,) = struct.unpack("<Q", view[len(MAGIC):start])
    if length > max_header or start + length > view.nbytes:
        raise WireError("header too long")
    try:
        message = json.loads(bytes(view[start:start + length]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise WireError("header is not valid JSON") from None
    if not (isinstance(message, dict) and set(message) == {"header", "arrays"}
            and type(message["arrays"]) is list):
        raise WireError("not a message from the runner")
    if len(message["arrays"]) > MAX_ARRAYS:
        raise WireError("too many arrays")
    offset = start + length
    described = [_described(entry, max_bytes) for entry in message["arrays"]]
    if max_array_bytes is not None and sum(nbytes for _, _, nbytes in described) > max_array_bytes:
        raise WireError("its arrays are larger than a run may send")
    if offset + sum(nbytes for _, _, nbytes in described) != view.nbytes:
        raise WireError("array data does not match its description")
    arrays = []
    for dtype, shape, nbytes in described:
        flat = np.frombuffer(view[offset:offset + nbytes], dtype=dtype)
        arrays.append(flat.astype(dtype.newbyteorder("="), copy=True).reshape(shape))
        offset += nbytes
    return message["header"], arrays


#: JSON header bytes the grader parses from one run, all frames together. A real run's headers take
#: kilobytes (arrays travel apart from them); parsed, JSON grows about thirty times in memory, so
#: 64 MiB of headers made of empty lists and dicts took the grader to 1.6 GB per job.
MAX_HEADER_BYTES = 4 * 2**20
#: Array bytes the grader accepts from one run, all frames together, and from one frame. The runner
#: sends at most ``collect.MAX_RESULT_BYTES`` (8 MiB) per answer and a real run's answers take
#: kilobytes; a forged frame may describe arrays up to the output's 64 MiB, which the grader would copy
#: twice (read, then decoded) in each of its jobs.
MAX_ARRAY_BYTES = 16 * 2**20
MAX_FRAME_ARRAY_BYTES = 8 * 2**20
#: Seconds the grader spends reading one run's output, whatever it holds.
READ_SECONDS = 10.0


def read_frames(data, max_bytes: int, max_frames: int | None = None) -> tuple[list, bool]:
    """Split the runner's output into validated (header, arrays, end offset) frames; stop at the
    first bad one, where the headers pass :data:`MAX_HEADER_BYTES` in all or the arrays
    :data:`MAX_ARRAY_BYTES` (:data:`MAX_FRAME_ARRAY_BYTES` in one frame), after ``max_frames``
    frames (a run writes one per cell and per call, and three more), at ``max_bytes``, or after
    :data:`READ_SECONDS`. Returns the frames and whether anything unread followed them.

    The frames before a flood of valid but unasked-for ones are kept, so the grader still sees which
    cell the run reached; unpacking a million tiny frames would cost a minute of the grader's time."""
    view = memoryview(data)
    frames: list = []
    offset, header_budget, array_budget = 0, MAX_HEADER_BYTES, MAX_ARRAY_BYTES
    over = view.nbytes > max_bytes
    if over:  # the output was cut at the size limit: read what fits
        view = view[:max_bytes]
    deadline = time.monotonic() + READ_SECONDS
    while offset + 8 <= view.nbytes:
        if max_frames is not None and len(frames) >= max_frames or time.monotonic() > deadline:
            return frames, True
        length = int.from_bytes(view[offset:offset + 8], "little")
        message = view[offset + 8:offset + 8 + length]
        if message.nbytes != length or length < len(MAGIC) + 8:
            return frames, True
        header_length = int.from_bytes(message[len(MAGIC):len(MAGIC) + 8], "little")
        if header_length > header_budget:
            return frames, True
        header_budget -= header_length
        try:
            header, arrays = unpack(message, max_bytes,
                                    max_array_bytes=min(array_budget, MAX_FRAME_ARRAY_BYTES))
        except WireError:
            return frames, True
        array_budget -= sum(array.nbytes for array in arrays)
        if not isinstance(header, dict):
            return frames, True
        offset += 8 + length
        frames.append((header, arrays, offset))
    return frames, over or offset != view.nbytes
