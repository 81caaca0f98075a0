"""mha.lab.heads_that_learn_circuits: the circuits are the head's own arithmetic, and a built-in copying
or previous-token head reads as one."""

import math

import numpy as np
import pytest

import mha
from mha.lab import AttentionOnlyModel
from mha.lab.heads_that_learn_circuits import argmax_share, head_circuits, ov_circuit, qk_circuit


@pytest.mark.parametrize("head", [0, 2])
def test_circuits_reproduce_the_heads_scores_and_writes(head):
    layer = mha.MultiHeadAttention(12, 3, rng=1, bias=False)
    x = np.random.default_rng(2).standard_normal((1, 5, 12))
    d = layer.d_head
    q, k, v = x @ layer.W_q, x @ layer.W_k, x @ layer.W_v  # (1, 5, 12) each
    cols = slice(head * d, (head + 1) * d)
    np.testing.assert_allclose(x[0] @ qk_circuit(layer, head) @ x[0].T, q[0, :, cols] @ k[0, :, cols].T)
    np.testing.assert_allclose(x[0] @ ov_circuit(layer, head), v[0, :, cols] @ layer.W_o[cols])
    assert np.linalg.matrix_rank(qk_circuit(layer, head)) <= d
    # the layer's output is the weighted sum of every head's OV writes
    _, weights = layer(x, return_weights=True)  # (1, n_heads, 5, 5)
    written = sum(weights[0, h] @ x[0] @ ov_circuit(layer, h) for h in range(3))
    np.testing.assert_allclose(layer(x)[0], written, atol=1e-12)


def test_the_tables_leave_out_b_qs_per_key_term_and_nothing_else_the_softmax_sees():
    """b_k (and b_q · b_k) shift all of a query's scores alike; b_q adds b_q W_kᵀ x_j, which varies by key."""
    layer = mha.MultiHeadAttention(12, 3, rng=1)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 5, 12))
    head, d = 1, layer.d_head
    cols = slice(head * d, (head + 1) * d)
    table = x[0] @ qk_circuit(layer, head) @ x[0].T / math.sqrt(d)  # (seq_q, seq_k): what the tables show

    layer.b_q, layer.b_k = np.zeros(12), rng.standard_normal(12)  # b_k alone: the table is the whole story
    _, weights = layer(x, return_weights=True)  # (1, n_heads, seq_q, seq_k)
    np.testing.assert_allclose(weights[0, head], mha.softmax(table), atol=1e-12)

    layer.b_q = rng.standard_normal(12)  # b_q too: its per-key term moves the weights
    per_key = layer.b_q[cols] @ layer.W_k[:, cols].T @ x[0].T / math.sqrt(d)  # (seq_k,)
    _, weights = layer(x, return_weights=True)
    np.testing.assert_allclose(weights[0, head], mha.softmax(table + per_key), atol=1e-12)
    assert np.ptp(per_key) > 0.1
    assert not np.allclose(weights[0, head], mha.softmax(table), atol=1e-3)


def _copying_model(vocab=6, seq=8):
    """One head per layer; embeddings orthonormal; layer 1 copies (W_v W_o = I), unembedding = Eᵀ."""
    d_model = 8
    model = AttentionOnlyModel(vocab, seq, d_model=d_model, n_heads=1, n_layers=2, rng=0, dtype=np.float64)
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((d_model, d_model)))[0]
    model.token_embedding = basis[:vocab].copy()  # (vocab, d_model), orthonormal rows
    model.unembedding = model.token_embedding.T.copy()
    copy = model.layers[1]
    copy.W_v, copy.W_o = np.eye(d_model), np.eye(d_model)
    return model


def test_a_copying_head_has_a_diagonal_ov_circuit_and_a_random_one_does_not():
    model = _copying_model()
    circuits = head_circuits(model, 1, 0)
    np.testing.assert_allclose(circuits.ov, np.eye(6), atol=1e-12)
    assert argmax_share(circuits.ov) == 1.0
    random = AttentionOnlyModel(16, 8, d_model=32, n_heads=4, rng=3)
    shares = [argmax_share(head_circuits(random, 1, h).ov) for h in range(4)]
    assert np.mean(shares) < 0.3  # chance is 1/16


def test_k_composition_reads_the_previous_heads_writes():
    model = _copying_model()
    first = model.layers[0]
    first.W_v, first.W_o = np.eye(8), np.eye(8)  # layer 0 writes the token it reads, unchanged
    model.layers[1].W_q, model.layers[1].W_k = np.eye(8), np.eye(8)  # layer 1 matches equal vectors
    circuits = head_circuits(model, 1, 0, previous=0)
    np.testing.assert_allclose(circuits.qk, np.eye(6) / math.sqrt(8), atol=1e-12)
    assert (circuits.qk_rows, circuits.qk_cols) == ("query token", "token before the key")


def test_a_previous_token_head_peaks_one_position_back():
    model = AttentionOnlyModel(5, 10, d_model=16, n_heads=1, rng=0, dtype=np.float64)
    positions = np.linalg.qr(np.random.default_rng(1).standard_normal((16, 16)))[0][:10]
    model.position_embedding = positions
    shift = np.eye(10, k=-1)  # (seq_q, seq_k): query i matches the key at i - 1
    layer = model.layers[0]
    layer.W_q, layer.W_k = positions.T @ shift @ positions, np.eye(16)  # P W_q Pᵀ = shift
    circuits = head_circuits(model, 0, 0)
    assert circuits.causal_qk and circuits.qk.shape == (10, 10)
    assert argmax_share(circuits.qk, offset=-1, causal=True) == 1.0
    assert argmax_share(circuits.qk, causal=True) < 0.2


@pytest.mark.parametrize(("args", "message"), [((0, 4), "head must lie"), ((2, 0), "layer must lie")])
def test_bad_layer_or_head_is_named(args, message):
    model = AttentionOnlyModel(5, 6, d_model=8, n_heads=2, rng=0)
    with pytest.raises(ValueError, match=message):
        head_circuits(model, *args)
    with pytest.raises(ValueError, match="reads no earlier head"):
        head_circuits(model, 0, 0, previous=1)


def test_argmax_share_counts_rows_and_refuses_bad_tables():
    table = np.array([[3.0, 0, 0], [0, 1, 5], [0, 0, 2]])
    assert argmax_share(table) == pytest.approx(2 / 3)
    assert argmax_share(table, causal=True) == 1.0  # row 1 sees only columns 0 and 1
    with pytest.raises(ValueError, match="finite 2-D"):
        argmax_share(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="no row"):
        argmax_share(np.eye(2), offset=5)
