"""Slow, obviously-correct references for the transformer block's parts: loops, ``math.fsum``, ``math.erf``.

They share no code with ``mha`` (``tests/reference.py`` holds the attention references).
"""

from __future__ import annotations

import math

import numpy as np


def layer_norm_loop(x, gamma, beta, eps):
    """Reference: per row, mean and (population) variance with math.fsum, then scale and shift."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        mean = math.fsum(row) / len(row)
        var = math.fsum((v - mean) ** 2 for v in row) / len(row)
        scaled = zip(row, gamma, beta, strict=True)
        out[idx] = [g * (v - mean) / math.sqrt(var + eps) + b for v, g, b in scaled]
    return out


def exact_gelu(x):
    return np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in np.ravel(x)]).reshape(np.shape(x))
