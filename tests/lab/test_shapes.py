"""mha.lab.shapes: the traced steps are the layer's real intermediates, with true shapes and memory facts."""

import re

import numpy as np
import pytest

from mha.attention import split_heads
from mha.lab.shapes import ShapeStep, head_assignment, token_influence, trace_layer, trace_shapes
from mha.layers import MultiHeadAttention
from tests.reference import multi_head_loop

SIZES = [(1, 3, 512, 8), (2, 5, 12, 3), (1, 1, 4, 1), (3, 4, 8, 8)]


def expected_shape(dims: str, batch, seq, d_model, n_heads):
    """Evaluate a dims string like '(batch, n_heads, seq, d_head)' with the given sizes."""
    values = {"batch": batch, "seq": seq, "seq_q": seq, "seq_k": seq, "d_model": d_model,
              "n_heads": n_heads, "d_head": d_model // n_heads}
    names = re.findall(r"[\w·]+", dims)
    return tuple(3 * values[n[2:]] if n.startswith("3·") else values[n] for n in names)


@pytest.mark.parametrize("batch, seq, d_model, n_heads", SIZES)
def test_every_step_has_the_shape_its_description_promises(batch, seq, d_model, n_heads):
    for step in trace_shapes(batch, seq, d_model, n_heads, rng=1):
        assert step.shape == step.array.shape
        assert step.shape == expected_shape(step.dims, batch, seq, d_model, n_heads), step.name


@pytest.mark.parametrize("batch, seq, d_model, n_heads", SIZES)
def test_the_trace_computes_what_the_layer_computes(batch, seq, d_model, n_heads):
    rng = np.random.default_rng(0)
    layer = MultiHeadAttention(d_model, n_heads, rng=rng)
    for name in ("b_q", "b_k", "b_v", "b_o"):
        setattr(layer, name, rng.standard_normal(d_model))
    x = rng.standard_normal((batch, seq, d_model))
    steps = {s.name: s.array for s in trace_layer(layer, x)}
    out, weights = layer(x, return_weights=True)
    np.testing.assert_allclose(steps["output"], out, atol=1e-10)
    np.testing.assert_allclose(steps["weights"], weights, atol=1e-12)
    # and what the formulas say, head by head, for the first example
    ref_out, ref_weights = multi_head_loop(x[0], {"key": x[0], "value": x[0]}, layer.parameters(), n_heads)
    np.testing.assert_allclose(steps["output"][0], ref_out, atol=1e-10)
    np.testing.assert_allclose(steps["weights"][0], ref_weights, atol=1e-12)


@pytest.mark.parametrize("batch, seq, d_model, n_heads", SIZES)
def test_memory_facts_are_true(batch, seq, d_model, n_heads):
    steps = trace_shapes(batch, seq, d_model, n_heads, rng=2)
    for i, step in enumerate(steps):
        a = step.array
        assert step.strides == tuple(s // a.itemsize for s in a.strides)
        assert step.contiguous == a.flags["C_CONTIGUOUS"]
        sharing = [s.name for s in steps[:i] if np.shares_memory(s.array, a)]
        assert step.view_of == (sharing[0] if sharing else None), step.name


def test_the_textbook_facts_about_views_and_copies():
    steps = {s.name: s for s in trace_shapes(2, 4, 16, 4)}
    for name in ("q", "q_split", "q_heads", "k_heads", "v_heads"):
        assert steps[name].view_of == "qkv" and not steps[name].contiguous
    assert steps["context"].view_of is None and steps["context"].contiguous
    assert steps["context_t"].view_of == "context" and not steps["context_t"].contiguous
    assert steps["concat"].view_of is None  # reshaping a non-contiguous array copies
    # head i of token t starts d_head * i numbers into token t's row of qkv (3 * d_model wide)
    assert steps["q_heads"].strides == (4 * 48, 4, 48, 1)


def test_float32_stays_float32_at_every_step():
    for step in trace_shapes(1, 3, 8, 2, dtype=np.float32):
        assert step.array.dtype == np.float32, step.name


def test_repr_leaves_the_array_out():
    step = trace_shapes(1, 2, 4, 2)[0]
    assert "array" not in repr(step)
    assert isinstance(step, ShapeStep)


@pytest.mark.parametrize("layer, match", [
    (MultiHeadAttention(8, 4, n_kv_heads=2, rng=0), "plain self-attention"),
    (MultiHeadAttention(8, 2, kdim=6, vdim=6, rng=0), "plain self-attention"),
])
def test_layers_it_cannot_follow_are_refused(layer, match):
    with pytest.raises(ValueError, match=match):
        trace_layer(layer, np.ones((1, 2, 8)))


def test_bad_inputs_are_refused():
    layer = MultiHeadAttention(8, 2, rng=0)
    with pytest.raises(ValueError, match=r"\(batch, seq, 8\)"):
        trace_layer(layer, np.ones((2, 8)))
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        trace_layer("layer", np.ones((1, 2, 8)))
    with pytest.raises(ValueError, match="divisible"):
        trace_shapes(1, 2, 10, 4)


# --- head_assignment ------------------------------------------------------------------------------

@pytest.mark.parametrize("seq, d_model, n_heads", [(4, 8, 2), (3, 12, 4), (5, 6, 1), (2, 8, 8)])
def test_right_split_gives_each_head_a_block_of_columns(seq, d_model, n_heads):
    d_head = d_model // n_heads
    head, slot = head_assignment(seq, d_model, n_heads)
    t, f = np.indices((seq, d_model))
    np.testing.assert_array_equal(head, f // d_head)
    np.testing.assert_array_equal(slot, t)
    # consistent with the package's split_heads: entry (t, f) sits at [head, slot, f % d_head]
    x = np.arange(seq * d_model, dtype=float).reshape(1, seq, d_model)
    heads = split_heads(x, n_heads)[0]  # (n_heads, seq, d_head)
    np.testing.assert_array_equal(heads[head, slot, f % d_head], x[0])


@pytest.mark.parametrize("seq, d_model, n_heads", [(4, 8, 2), (3, 12, 4), (6, 4, 2)])
def test_reshape_without_transpose_fills_heads_in_memory_order(seq, d_model, n_heads):
    d_head = d_model // n_heads
    head, slot = head_assignment(seq, d_model, n_heads, transpose=False)
    flat = np.arange(seq * d_model).reshape(seq, d_model)  # position in memory
    np.testing.assert_array_equal(head, flat // (seq * d_head))
    np.testing.assert_array_equal(slot, (flat % (seq * d_head)) // d_head)


@pytest.mark.parametrize("transpose", [True, False])
def test_every_head_slot_receives_exactly_d_head_numbers(transpose):
    head, slot = head_assignment(6, 12, 3, transpose=transpose)
    counts = np.zeros((3, 6), dtype=int)
    np.add.at(counts, (head, slot), 1)
    assert np.all(counts == 4)


def test_the_bug_is_invisible_when_there_is_one_head_or_one_token():
    for seq, d_model, n_heads in ((5, 8, 1), (1, 8, 4)):
        right = head_assignment(seq, d_model, n_heads)
        wrong = head_assignment(seq, d_model, n_heads, transpose=False)
        for a, b in zip(right, wrong, strict=True):
            np.testing.assert_array_equal(a, b)


def test_assignment_rejects_sizes_that_do_not_split():
    with pytest.raises(ValueError, match="divisible"):
        head_assignment(3, 10, 4)


# --- token_influence ------------------------------------------------------------------------------

def test_influence_of_a_causal_layer_has_nothing_above_the_diagonal():
    layer = MultiHeadAttention(8, 2, rng=0)
    x = np.random.default_rng(1).standard_normal((2, 5, 8))
    causal = token_influence(lambda t: layer(t, causal=True), x, rng=2)
    full = token_influence(layer, x, rng=2)
    assert np.all(np.triu(causal, k=1) == 0) and np.all(causal[np.tril_indices(5)] > 0)
    assert np.all(full > 0)
    assert causal.max() == full.max() == 1.0


def test_influence_of_a_token_wise_function_is_diagonal():
    x = np.random.default_rng(0).standard_normal((1, 4, 3))
    influence = token_influence(lambda t: 2 * t, x, rng=1)
    assert np.all(np.diag(influence) > 0)
    np.testing.assert_array_equal(influence - np.diag(np.diag(influence)), 0)


def test_influence_of_a_constant_function_is_zero_not_nan():
    x = np.ones((1, 3, 2))
    np.testing.assert_array_equal(token_influence(lambda t: np.zeros_like(t), x, rng=0), 0)


def test_influence_rejects_bad_shapes():
    with pytest.raises(ValueError, match="batch, seq, d_model"):
        token_influence(lambda t: t, np.ones((3, 2)), rng=0)
    with pytest.raises(ValueError, match="fn"):
        token_influence(lambda t: t[:, :1], np.ones((1, 3, 2)), rng=0)
