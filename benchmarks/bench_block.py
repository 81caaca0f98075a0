"""Where does a transformer block spend its time? Its parts timed in one run, as shares of the block.

For a pre-norm block the script times the two layer norms, the attention sub-layer and the feed-forward
network separately, then the whole block, and prints each part's share of the block's time next to its
share of the FLOPs (attention from ``mha.cost.flops``, the feed-forward network ``2 * 2 * tokens * d_model
* d_ff``, a norm about 8 FLOPs per entry). RoPE (``mha.positions.apply_rotary`` on q and k) and the
relative position bias lookup are timed as a fraction of the attention sub-layer they would join.

All numbers are ratios measured in this one run (calls interleaved), so they do not depend on the machine's
speed today.

Run: ``python benchmarks/bench_block.py`` (``--quick`` for a smaller shape).
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_forward import median_times  # alternating timed blocks; benchmarks/ is on sys.path when run
from machine import machine_line  # benchmarks/ is on sys.path when run

import mha
from mha.block import TransformerBlock
from mha.positions import RelativePositionBias, apply_rotary


def run(batch: int, seq: int, d_model: int, n_heads: int, dtype, repeats: int) -> None:
    block = TransformerBlock(d_model, n_heads, rng=0, dtype=dtype)
    x = np.random.default_rng(1).standard_normal((batch, seq, d_model)).astype(dtype)
    normed = block.norm1(x)
    d_head = d_model // n_heads
    q_heads = np.random.default_rng(2).standard_normal((batch, n_heads, seq, d_head)).astype(dtype)
    position_bias = RelativePositionBias(n_heads, max_distance=128, rng=3, init_std=1.0, dtype=dtype)
    parts = {
        "layer norm (x2)": lambda: (block.norm1(x), block.norm2(x)),
        "attention": lambda: block.attention(normed, causal=True),
        "feed-forward": lambda: block.ffn(normed),
        "whole block": lambda: block(x, causal=True),
        "RoPE on q and k": lambda: (apply_rotary(q_heads), apply_rotary(q_heads)),
        "relative bias lookup": lambda: position_bias(seq),
    }
    seconds = dict(zip(parts, median_times(list(parts.values()), repeats), strict=True))

    tokens = batch * seq
    attention_flops = mha.cost.flops(batch, seq, d_model, n_heads).total
    ffn_flops = 2 * 2 * tokens * d_model * block.d_ff
    norm_flops = 2 * 8 * tokens * d_model
    total_flops = attention_flops + ffn_flops + norm_flops
    flop_share = {"layer norm (x2)": norm_flops, "attention": attention_flops, "feed-forward": ffn_flops}

    whole = seconds["whole block"]
    name = np.dtype(dtype).name
    print(f"\n{name}: batch {batch}, seq {seq}, d_model {d_model}, n_heads {n_heads}, d_ff {block.d_ff}")
    print(f"{'part':22s} {'time share':>11s} {'FLOP share':>11s}")
    for part, flops in flop_share.items():
        print(f"{part:22s} {seconds[part] / whole:11.1%} {flops / total_flops:11.1%}")
    parts_sum = sum(seconds[p] for p in flop_share)
    print(f"{'sum of the parts':22s} {parts_sum / whole:11.1%}   (the rest: residual adds, checks)")
    for extra in ("RoPE on q and k", "relative bias lookup"):
        print(f"{extra:22s} {seconds[extra] / seconds['attention']:11.1%} of the attention sub-layer")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small shape, few repeats")
    args = parser.parse_args(argv)
    print(machine_line())
    if args.quick:
        shape, repeats = (2, 64, 128, 4), 5
    else:
        shape, repeats = (8, 256, 512, 8), 9
    for dtype in (np.float32, np.float64):
        run(*shape, dtype=dtype, repeats=repeats)


if __name__ == "__main__":
    main()
