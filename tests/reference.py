"""Slow, obviously-correct reference implementations the tests compare the package against.

Written from the formulas with explicit Python loops and float64 arithmetic, sharing no code with ``mha``.
"""

from __future__ import annotations

import math

import numpy as np


def softmax_row(row):
    """Softmax of one 1-D row, by the textbook formula with the max subtracted; all -inf -> zeros."""
    finite = [x for x in row if x != -math.inf]
    if not finite:
        return np.zeros(len(row))
    top = max(finite)
    exps = [0.0 if x == -math.inf else math.exp(x - top) for x in row]
    total = sum(exps)
    return np.array([e / total for e in exps])


def attention_loop(q, k, v, mask=None):
    """Attention for 2-D q (seq_q, d), k (seq_k, d), v (seq_k, d_v) with an optional bool mask."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    seq_q, d = q.shape
    seq_k = k.shape[0]
    out = np.zeros((seq_q, v.shape[1]))
    weights = np.zeros((seq_q, seq_k))
    for i in range(seq_q):
        scores = []
        for j in range(seq_k):
            allowed = True if mask is None else bool(mask[i, j])
            dot = sum(q[i, t] * k[j, t] for t in range(d)) / math.sqrt(d)
            scores.append(dot if allowed else -math.inf)
        weights[i] = softmax_row(scores)
        out[i] = weights[i] @ v
    return out, weights


def multi_head_loop(x_q, x_kv, params, n_heads, n_kv_heads=None, mask=None):
    """Multi-head attention for one unbatched example, head by head, from the lessons' formulas.

    ``params`` maps W_q, W_k, W_v, W_o (applied on the right) and optional biases b_q, b_k, b_v, b_o.
    ``mask`` is a bool (seq_q, seq_k) or (n_heads, seq_q, seq_k) array. Returns (output, weights per head).
    """
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    d_model = params["W_q"].shape[1]
    d_head = d_model // n_heads
    group = n_heads // n_kv_heads

    def bias(name, size):
        b = params.get(name)
        return np.zeros(size) if b is None else b

    q_all = x_q @ params["W_q"] + bias("b_q", d_model)
    k_all = x_kv["key"] @ params["W_k"] + bias("b_k", params["W_k"].shape[1])
    v_all = x_kv["value"] @ params["W_v"] + bias("b_v", params["W_v"].shape[1])
    heads, weights = [], []
    for h in range(n_heads):
        kv_head = h // group
        q_h = q_all[:, h * d_head:(h + 1) * d_head]
        k_h = k_all[:, kv_head * d_head:(kv_head + 1) * d_head]
        v_h = v_all[:, kv_head * d_head:(kv_head + 1) * d_head]
        m = None if mask is None else (mask[h] if mask.ndim == 3 else mask)
        out_h, w_h = attention_loop(q_h, k_h, v_h, m)
        heads.append(out_h)
        weights.append(w_h)
    concat = np.concatenate(heads, axis=1)
    return concat @ params["W_o"] + bias("b_o", d_model), np.stack(weights)
