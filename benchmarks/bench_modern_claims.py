"""The measured claims of the chapter on modern attention, over several seeds: the margins its cells assert.

The chapter trains one model per claim with seed 0 and asserts each claim with a margin; this script runs
the same experiments (the same ``mha.lab.modern_attention`` functions, sizes and steps) for other seeds, so
that the margins can be chosen to hold across them:

- streaming a long text: mean loss after 2 × the trained length with a full cache (dense), a rolling
  window and a window with 4 sinks;
- RoPE scaling: mean loss past the trained length at 2 × and 4 × it, per method;
- QK-norm: the largest attention score after 150 steps at learning rate 0.1, plain and normed.

These are not timings: no ratio depends on the machine, whose line is printed all the same. Run:
``python benchmarks/bench_modern_claims.py --seeds 0 1 2`` (about a minute per seed on two cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from machine import machine_line  # benchmarks/ is on sys.path when run

from mha.lab import CharVocabulary, TinyGPT, bos_batch, bos_windows, course_text, train
from mha.lab import modern_attention as lab

CONTEXT = 32


def claims(seed: int) -> dict[str, float]:
    """The chapter's numbers for one seed (the chapter itself uses seed 0)."""
    text = course_text()
    vocab = CharVocabulary(text)
    ids = vocab.encode(text)
    split = int(0.9 * len(ids))
    train_ids, held_ids = ids[:split], ids[split:]
    bos = vocab.size
    gpt = TinyGPT(vocab.size + 1, CONTEXT, d_model=64, n_heads=4, n_layers=2, positions="rotary", rng=seed)
    train(gpt, lambda rng: bos_batch(train_ids, 32, CONTEXT, rng, bos=bos), steps=300, rng=seed + 1,
          lr=1e-2, warmup=50, progress=False)
    found = {}
    stream = np.concatenate([[bos], held_ids[:8 * CONTEXT]])
    window = CONTEXT - 4
    runs = {"dense": lab.stream_losses(gpt, stream, cache="full"),
            "window": lab.stream_losses(gpt, stream, cache="window", window=window),
            "sinks": lab.stream_losses(gpt, stream, cache="window", window=window, sinks=4)}
    for name, losses in runs.items():
        found[f"stream {name} after 2L"] = losses[2 * CONTEXT:].mean()
    found["stream sinks first L"] = runs["sinks"][:CONTEXT].mean()
    lengths = (2 * CONTEXT, 4 * CONTEXT)
    batches = {n: bos_windows(held_ids, n, bos=bos, n_windows=24) for n in lengths}
    for method, by_length in lab.context_losses(gpt, batches, original_context=CONTEXT).items():
        for n in lengths:
            found[f"{method} past L at {n}"] = by_length[n][CONTEXT:].mean()
    probe = bos_windows(held_ids, CONTEXT, bos=bos, n_windows=8).tokens
    for name, options in {"plain": None, "qk_norm": {"qk_norm": True}}.items():
        model = TinyGPT(vocab.size + 1, CONTEXT, d_model=32, n_heads=4, n_layers=2, positions="rotary",
                        attention=options, rng=seed)
        history = train(model, lambda rng: bos_batch(train_ids, 16, CONTEXT, rng, bos=bos), steps=150,
                        rng=seed + 1, lr=0.1, warmup=10, progress=False, snapshot_steps=(0, 150),
                        record=lambda m: lab.largest_logit(m, probe))
        found[f"{name} logit start"] = history.records[0]
        found[f"{name} logit 150"] = history.records[150]
    return found


def margins(found: dict[str, float]) -> dict[str, float]:
    """The differences and ratios the chapter's cells assert (with their thresholds in brackets)."""
    two, four = 2 * CONTEXT, 4 * CONTEXT
    return {
        "dense - sinks (> 1.0)": found["stream dense after 2L"] - found["stream sinks after 2L"],
        "window - sinks (> 0.03)": found["stream window after 2L"] - found["stream sinks after 2L"],
        "sinks late - first L (< 0.1)": found["stream sinks after 2L"] - found["stream sinks first L"],
        "none - ntk at 2L (> 0.2)": found[f"none past L at {two}"] - found[f"ntk past L at {two}"],
        "none - ntk at 4L (> 0.2)": found[f"none past L at {four}"] - found[f"ntk past L at {four}"],
        "plain 150 / start (> 100)": found["plain logit 150"] / found["plain logit start"],
        "plain / normed at 150 (> 20)": found["plain logit 150"] / found["qk_norm logit 150"],
        "normed at 150 (< 50)": found["qk_norm logit 150"],
        "plain at 150 (> 1000)": found["plain logit 150"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    print(machine_line())
    table = {}
    for seed in args.seeds:
        start = time.perf_counter()
        table[seed] = margins(claims(seed))
        print(f"seed {seed}: {time.perf_counter() - start:.0f} s", flush=True)
    names = list(next(iter(table.values())))
    print(f"{'margin':>32}  " + "  ".join(f"{'seed ' + str(s):>9}" for s in table))
    for name in names:
        print(f"{name:>32}  " + "  ".join(f"{table[s][name]:9.3f}" for s in table))


if __name__ == "__main__":
    main()
