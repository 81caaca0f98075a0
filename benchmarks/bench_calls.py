"""What a debugger walks through: Python calls inside ``mha`` per public call, and the time of a small call.

Three calls a learner steps into (issue 51's targets in brackets):

- ``MultiHeadAttention(16, 4)(x)`` on a (2, 5, 16) input (at most 25 calls, and no slower than the
  previous layout's 24 µs);
- a pre-norm ``TransformerBlock(16, 4)``'s ``forward(x, causal=True)`` (at most 50);
- a 2-layer BERT-style :class:`mha.pretrained.Encoder`'s ``forward`` on 5 tokens, d_model 16 (at most 100).

Calls are counted with ``sys.setprofile``: every Python function entered whose file is inside ``mha/``
(NumPy's C functions are not counted), split into checks (``mha/validation.py``) and the rest. With
``--baseline DIR`` (an unpacked tree of another commit: ``git archive 512f579 | tar -x -C DIR``) the same
counts and times are taken for that tree too, each tree in a process of its own, and the small layer call
is timed in alternating blocks (one tree, then the other, ``--rounds`` times), never call by call.

Run: ``python benchmarks/bench_calls.py --baseline /tmp/base``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import timeit
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS = {"layer": 25, "block": 50, "encoder": 100}
TARGET_US = 24.0


# ------------------------------------------------------------------ the worker (one per tree)
def _cases():
    """The three calls, built once: name -> zero-argument function."""
    import numpy as np

    import mha
    from mha.pretrained.checkpoints import EncoderConfig
    from mha.pretrained.encoder import Encoder

    rng = np.random.default_rng(0)
    layer = mha.MultiHeadAttention(16, 4, rng=0)
    x = rng.standard_normal((2, 5, 16))
    block = mha.TransformerBlock(16, 4, rng=0)
    config = EncoderConfig(n_layers=2, n_heads=4, d_model=16, d_ff=64, activation="gelu", eps=1e-12,
                           max_positions=16, n_token_types=2, vocab_size=30)
    encoder = Encoder(config, _bert_weights(config, rng), tokenizer=None)
    ids = rng.integers(0, config.vocab_size, (1, 5))
    return {"layer": lambda: layer(x), "block": lambda: block.forward(x, causal=True),
            "encoder": lambda: encoder.forward(ids)}


def _bert_weights(config, rng):
    """Random float32 arrays under BERT's names, linear weights stored (out, in) as in a checkpoint."""
    import numpy as np

    d, ff = config.d_model, config.d_ff

    def normal(*shape):
        return (0.5 * rng.standard_normal(shape)).astype(np.float32)

    weights = {"embeddings.word_embeddings.weight": normal(config.vocab_size, d),
               "embeddings.position_embeddings.weight": normal(config.max_positions, d),
               "embeddings.token_type_embeddings.weight": normal(config.n_token_types, d),
               "embeddings.LayerNorm.weight": 1 + normal(d), "embeddings.LayerNorm.bias": normal(d)}
    for i in range(config.n_layers):
        p = f"encoder.layer.{i}"
        for part, (rows, cols) in {"attention.self.query": (d, d), "attention.self.key": (d, d),
                                   "attention.self.value": (d, d), "attention.output.dense": (d, d),
                                   "intermediate.dense": (ff, d), "output.dense": (d, ff)}.items():
            weights[f"{p}.{part}.weight"], weights[f"{p}.{part}.bias"] = normal(rows, cols), normal(rows)
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            weights[f"{p}.{norm}.weight"], weights[f"{p}.{norm}.bias"] = 1 + normal(d), normal(d)
    return weights


def count_calls(fn) -> dict[str, object]:
    """Python calls entered inside ``mha/`` during ``fn()``: total, in validation.py, and by file."""
    import mha

    root = os.path.dirname(mha.__file__)
    files: list[str] = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(root):
            files.append(os.path.relpath(frame.f_code.co_filename, root))

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    by_file = collections.Counter(files)
    return {"calls": len(files), "checks": by_file.get("validation.py", 0), "by_file": dict(by_file)}


def worker() -> None:
    """Answer the driver's requests on stdin, one JSON line each: counts, or one timed block."""
    cases = _cases()
    for fn in cases.values():
        fn()  # warm-up (imports inside calls, caches)
    for line in sys.stdin:
        request = json.loads(line)
        if request["do"] == "count":
            reply: object = {name: count_calls(fn) for name, fn in cases.items()}
        else:  # one block: best of 5 repeats of `number` calls, in µs per call
            fn = cases[request["case"]]
            reply = min(timeit.repeat(fn, number=request["number"], repeat=5)) / request["number"] * 1e6
        print(json.dumps(reply), flush=True)


# ------------------------------------------------------------------ the driver
class Tree:
    """A worker process importing ``mha`` from ``root``."""

    def __init__(self, label: str, root: Path) -> None:
        self.label = label
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        self.process = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=env, cwd=root)

    def ask(self, **request: object) -> object:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="an unpacked tree of the commit to compare with")
    parser.add_argument("--rounds", type=int, default=9, help="alternating timing blocks per tree")
    parser.add_argument("--number", type=int, default=2000, help="calls per timed repeat")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    sys.path.insert(0, str(HERE))
    from machine import machine_line

    print(machine_line())
    trees = [Tree("this checkout", HERE.parent)]
    if args.baseline:
        trees.insert(0, Tree(f"baseline {args.baseline}", args.baseline.resolve()))
    counts = {tree.label: tree.ask(do="count") for tree in trees}
    print(f"\n{'Python calls inside mha (checks in validation.py)':<52}"
          + "".join(f"{tree.label[:28]:>30}" for tree in trees) + f"{'target':>8}")
    for case, target in TARGETS.items():
        cells = "".join(f"{counts[t.label][case]['calls']:>20} ({counts[t.label][case]['checks']:>3} checks)"
                        for t in trees)
        print(f"{case:<52}{cells}{'<= ' + str(target):>8}")
    times: dict[str, list[float]] = {tree.label: [] for tree in trees}
    for _ in range(args.rounds):
        for tree in trees:
            times[tree.label].append(tree.ask(do="time", case="layer", number=args.number))
    print(f"\nlayer(x) on (2, 5, 16), µs per call ({args.rounds} alternating blocks, best of 5 x "
          f"{args.number} calls each):")
    for tree in trees:
        spread = sorted(times[tree.label])
        print(f"  {tree.label:<40} median {statistics.median(spread):6.1f}   min {spread[0]:6.1f}   "
              f"max {spread[-1]:6.1f}")
    if args.baseline:
        base, this = (statistics.median(times[t.label]) for t in trees)
        print(f"  this / baseline: {this / base:.2f}")
    print(f"  target: <= {TARGET_US} µs (the layout before issue 51's regression), as a ratio on this "
          "machine")
    for tree in trees:
        tree.close()


if __name__ == "__main__":
    main()
