
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha
from tests import factories
from tests.reference import multi_head_loop


def random_layer(d_model=16, n_heads=4, seed=0, **kwargs):
    """The shared factory's layer (random biases), 16 wide by default: these tests need room for heads."""
    return factories.random_layer(d_model, n_heads, seed, **kwargs)


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"bias": False},
        {"n_kv_heads": 2},
        {"n_kv_heads": 1},
        {"kdim": 6, "vdim": 10},
        {"kdim": 6, "vdim": 10, "n_kv_heads": 2, "bias": False},
    ],
)
@pytest.mark.parametrize("masked", [False, True])
def test_layer_equals_per_head_loop_reference(config, masked):
    layer = random_layer(**config)
    rng = np.random.default_rng(1)
    query = rng.standard_normal((2, 5, 16))
    cross = "kdim" in config
    key = rng.standard_normal((2, 7, layer.kdim)) if cross else query
    value = rng.standard_normal((2, 7, layer.vdim)) if cross else query
    seq_k = key.shape[1]
    mask = rng.random((2, 4, 5, seq_k)) < 0.7 if masked else None
    out, weights = layer(query, key, value, mask=mask, return_weights=True)
    for b in range(2):
        ref_out, ref_w = multi_head_loop(query[b], {"key": key[b], "value": value[b]}, layer.parameters(),
                                         4, layer.n_kv_heads, None if mask is None else mask[b])
        np.testing.assert_allclose(out[b], ref_out, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(weights[b], ref_w, rtol=1e-11, atol=1e-12)


def test_fused_projection_equals_separate_projections():
    layer = random_layer(32, 4)
    x = np.random.default_rng(2).standard_normal((3, 6, 32))
    separate = (x @ layer.W_q + layer.b_q, x @ layer.W_k + layer.b_k, x @ layer.W_v + layer.b_v)
    for fused, one in zip(layer.project(x), separate, strict=True):
        np.testing.assert_allclose(fused, one, rtol=1e-13, atol=1e-13)
    enc = np.random.default_rng(3).standard_normal((3, 9, 32))
    separate = (x @ layer.W_q + layer.b_q, enc @ layer.W_k + layer.b_k, enc @ layer.W_v + layer.b_v)
    for fused, one in zip(layer.project(x, enc), separate, strict=True):
        np.testing.assert_allclose(fused, one, rtol=1e-13, atol=1e-13)


def test_batched_heads_equal_one_layer_call_per_example():
    layer = random_layer()
    x = np.random.default_rng(4).standard_normal((3, 5, 16))
    out, w = layer(x, causal=True, return_weights=True)
    for b in range(3):
        out_b, w_b = layer(x[b], causal=True, return_weights=True)  # unbatched input
        np.testing.assert_allclose(out[b], out_b, rtol=1e-13)
        np.testing.assert_allclose(w[b], w_b, rtol=1e-13)


def test_grouped_query_attention_with_n_kv_heads_equal_to_n_heads_is_plain_mha():
    plain = random_layer(seed=5)
    grouped = random_layer(seed=6, n_kv_heads=4)
    for name, arr in plain.parameters().items():
        setattr(grouped, name, arr)
    x = np.random.default_rng(7).standard_normal((2, 6, 16))
    np.testing.assert_array_equal(grouped(x), plain(x))


def test_grouped_query_attention_equals_mha_with_repeated_key_value_heads():
    gqa = random_layer(seed=8, n_kv_heads=2)
    mha_layer = random_layer(seed=9)
    d_head = 4
    repeat = [0, 0, 1, 1]  # query head i reads key/value head i // 2
    cols = np.concatenate([np.arange(r * d_head, (r + 1) * d_head) for r in repeat])
    mha_layer.W_q, mha_layer.W_o, mha_layer.b_q, mha_layer.b_o = gqa.W_q, gqa.W_o, gqa.b_q, gqa.b_o
    mha_layer.W_k, mha_layer.W_v = gqa.W_k[:, cols], gqa.W_v[:, cols]
    mha_layer.b_k, mha_layer.b_v = gqa.b_k[cols], gqa.b_v[cols]
    x = np.random.default_rng(10).standard_normal((2, 6, 16))
    np.testing.assert_allclose(gqa(x, causal=True), mha_layer(x, causal=True), rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 8), st.integers(0, 10_000))
def test_self_attention_without_mask_is_permutation_equivariant(seq, seed):
    layer = random_layer(seed=seed % 7)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((seq, 16))
    perm = rng.permutation(seq)
    np.testing.assert_allclose(layer(x[perm]), layer(x)[perm], rtol=1e-10, atol=1e-12)


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 9), st.data())
def test_causal_outputs_do_not_change_when_future_tokens_change(seq, data):
    t = data.draw(st.integers(0, seq - 2))
    rng = np.random.default_rng(seq * 100 + t)
    layer = random_layer(seed=t)
    x = rng.standard_normal((2, seq, 16))
    changed = x.copy()
    changed[:, t + 1:] = rng.standard_normal(changed[:, t + 1:].shape) * 5
    before, after = layer(x, causal=True), layer(changed, causal=True)
    np.testing.assert_array_equal(before[:, :t + 1], after[:, :t + 1])
    assert not np.allclose(before[:, t + 1:], after[:, t + 1:])


def test_padding_mask_makes_padded_keys_irrelevant():
    layer = random_layer()
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 5, 16))
    noisy = x.copy()
    noisy[0, 3:] = 1e3  # garbage in the padding of sequence 0
    mask = mha.padding_mask([3, 5], 5)
    np.testing.assert_allclose(layer(x, mask=mask)[0, :3], layer(noisy, mask=mask)[0, :3], rtol=1e-12)


def test_fully_masked_query_returns_the_output_bias_not_nan():
    layer = random_layer()
    mask = np.ones((1, 1, 3, 4), dtype=bool)
    mask[..., 1, :] = False
    out = layer(np.ones((1, 3, 16)), np.ones((1, 4, 16)), mask=mask)
    np.testing.assert_allclose(out[0, 1], layer.b_o)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_keeps_its_dtype(dtype):
    layer = mha.MultiHeadAttention(16, 4, rng=0, dtype=dtype)
    assert all(arr.dtype == dtype for arr in layer.parameters().values())
    x = np.ones((2, 3, 16), dtype=dtype)
    out, w = layer(x, causal=True, return_weights=True)
    assert out.dtype == dtype and w.dtype == dtype
    enc = np.ones((2, 5, 16), dtype=dtype)
    assert layer(x, enc).dtype == dtype


def test_same_seed_same_weights_and_generator_accepted():
    a = mha.MultiHeadAttention(8, 2, rng=3)
    b = mha.MultiHeadAttention(8, 2, rng=np.random.default_rng(3))
    for name in a.parameters():
        np.testing.assert_array_equal(a.parameters()[name], b.parameters()[name])
    assert not np.array_equal(a.W_q, mha.MultiHeadAttention(8, 2, rng=4).W_q)


def test_assigning_weights_updates_the_fused_projection():
    layer = random_layer()
    x = np.random.default_rng(12).standard_normal((1, 4, 16))
    layer.W_k = np.zeros((16, 16))
    layer.b_k = np.zeros(16)
    _, w = layer(x, return_weights=True)
    np.testing.assert_allclose(w, 0.25)  # all keys equal: uniform attention
    layer.W_q[:] = 0  # in-place edits work too
    assert np.all(layer.project(x)[0] == layer.b_q)


def test_parameter_count_matches_arrays():
    layer = mha.MultiHeadAttention(24, 6, kdim=5, vdim=7, n_kv_heads=3, rng=0)
    shapes = {name: arr.shape for name, arr in layer.parameters().items()}
    assert shapes == {"W_q": (24, 24), "W_k": (5, 12), "W_v": (7, 12), "W_o": (24, 24),
                      "b_q": (24,), "b_k": (12,), "b_v": (12,), "b_o": (24,)}
    assert layer.parameter_count() == sum(int(np.prod(s)) for s in shapes.values())
    assert mha.MultiHeadAttention(8, 2, bias=False).b_q is None


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"d_model": 510, "n_heads": 8}, ValueError,
         r"d_model=510 is not divisible by n_heads=8 \(d_head would be 63.75\)"),
        ({"d_model": 16, "n_heads": 4, "n_kv_heads": 3}, ValueError, "not a multiple of n_kv_heads=3"),
        ({"d_model": 16, "n_heads": 0}, ValueError, "n_heads must be >= 1"),
        ({"d_model": 16.0, "n_heads": 4}, TypeError, "d_model must be an integer"),
        ({"d_model": 16, "n_heads": 4, "dtype": np.int32}, TypeError, "float32 or np.float64"),
        ({"d_model": 16, "n_heads": 4, "rng": "seed"}, TypeError, "Generator"),
    ],
)
def test_constructor_errors(kwargs, error, words):
    with pytest.raises(error, match=words):
        mha.MultiHeadAttention(**kwargs)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda layer: layer(np.ones((2, 3, 15))), ValueError, r"query must have shape \(batch, seq, 16\)"),
        (lambda layer: layer(np.ones((2, 3, 16)), np.ones((4, 16))), ValueError, "all unbatched"),
        (lambda layer: layer(np.ones((2, 3, 16)), np.ones((3, 4, 16))), ValueError,
         "batch 2 but key has batch 3"),
        (lambda layer: layer(np.ones((3, 16)), None, np.ones((3, 16))), ValueError, "without key"),
        (lambda layer: layer(np.ones((3, 16)), mask=np.ones((3, 3))), TypeError, "boolean"),
        (lambda layer: layer(np.ones((3, 16)), mask=np.ones((2, 3), bool)), ValueError,
         "cannot be broadcast"),
        (lambda layer: layer(np.full((3, 16), np.inf)), ValueError, "infinite"),
        (lambda layer: layer([["x"] * 16]), TypeError, "strings"),
        (lambda layer: setattr(layer, "W_q", np.ones((16, 15))), ValueError,
         r"W_q must have shape \(16, 16\)"),
    ],
)
def test_call_errors(call, error, words):
    with pytest.raises(error, match=words):
        call(random_layer())


def test_cross_attention_layer_needs_key_and_value():
    layer = mha.MultiHeadAttention(16, 4, kdim=6, vdim=10, rng=0)
    with pytest.raises(ValueError, match="kdim=6"):
        layer(np.ones((3, 16)))
    with pytest.raises(ValueError, match="value must be given"):
        layer(np.ones((3, 16)), np.ones((4, 6)))
    assert layer(np.ones((3, 16)), np.ones((4, 6)), np.ones((4, 10))).shape == (3, 16)
    assert "kdim=6" in repr(layer)


def test_score_bias_reaches_each_head_like_scaled_dot_product_attention():
    layer = random_layer(seed=13)
    rng = np.random.default_rng(14)
    x = rng.standard_normal((2, 5, 16))
    bias = rng.standard_normal((4, 5, 5))  # one bias matrix per head
    out, w = layer(x, bias=bias, return_weights=True)
    q, k, v = (mha.split_heads(a, 4) for a in layer.project(x))
    heads, ref_w = mha.scaled_dot_product_attention(q, k, v, bias=bias, return_weights=True)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12)
    np.testing.assert_allclose(out, mha.merge_heads(heads) @ layer.W_o + layer.b_o, rtol=1e-12)


def test_minus_inf_bias_acts_as_a_mask_and_constant_bias_changes_nothing():
    layer = random_layer(seed=15)
    x = np.random.default_rng(16).standard_normal((1, 6, 16))
    blocked = np.where(mha.causal_mask(6), 0.0, -np.inf)
    np.testing.assert_allclose(layer(x, bias=blocked), layer(x, causal=True), rtol=1e-13)
    np.testing.assert_allclose(layer(x, bias=np.full((1, 4, 6, 1), 7.0)), layer(x), rtol=1e-12)


def test_head_mask_zero_equals_removing_the_heads_rows_of_W_o():
    layer = random_layer(seed=17)
    x = np.random.default_rng(18).standard_normal((2, 5, 16))
    masked = layer(x, head_mask=np.array([1.0, 0.0, 1.0, 1.0]))
    layer.W_o[4:8] = 0  # head 1 feeds W_o through rows 4..7
    np.testing.assert_allclose(masked, layer(x), rtol=1e-12)


def test_bias_and_head_mask_errors():
    layer = random_layer()
    x = np.ones((2, 3, 16))
    with pytest.raises(ValueError, match="bias of shape"):
        layer(x, bias=np.ones((5, 3, 3)))
    with pytest.raises(ValueError, match="NaN"):
        layer(x, bias=np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match=r"head_mask must have shape \(n_heads,\) = \(4,\)"):
        layer(x, head_mask=np.ones(3))


@pytest.mark.parametrize("batch, seq", [(2, 5), (4, 600)])  # the plain path, and examples over threads
def test_mixed_precision_inputs_give_one_dtype_for_output_and_weights(batch, seq):
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
    rng = np.random.default_rng(1)
    query = rng.standard_normal((batch, seq, 8)).astype(np.float32)
    key = rng.standard_normal((batch, seq, 8))  # float64
    out, weights = layer(query, key, return_weights=True)
    assert out.dtype == weights.dtype == np.float64  # NumPy's promotion: float32 with float64 is float64
    exact, exact_weights = layer(query.astype(np.float64), key, return_weights=True)
    np.testing.assert_array_equal(out, exact)
    np.testing.assert_array_equal(weights, exact_weights)
    out32, weights32 = layer(query, key.astype(np.float32), return_weights=True)
    assert out32.dtype == weights32.dtype == np.float32


def test_copy_is_independent_and_keeps_the_fused_projection_storage():
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    twin = layer.copy()
    assert type(twin) is type(layer)
    for name, arr in layer.parameters().items():
        np.testing.assert_array_equal(twin.parameters()[name], arr)
    twin.W_q[0, 0] += 1.0
    assert twin.W_q[0, 0] != layer.W_q[0, 0]  # own arrays
    x = np.random.default_rng(1).standard_normal((3, 8))
    assert not np.allclose(twin(x), layer(x))  # the edit reached the fused path the forward pass uses


def test_a_block_copy_and_its_parameter_names():
    block = mha.TransformerBlock(8, 2, rng=0)
    twin = block.copy()
    assert list(twin.parameters()) == list(block.parameters())
    assert "attention.W_q" in block.parameters() and "norm2.beta" in block.parameters()
    assert block.parameter_count() == sum(a.size for a in block.parameters().values())
    twin.ffn.W_1[...] = 0.0
    assert block.ffn.W_1.any()


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_values_that_overflow_the_layers_float32_are_refused_when_set():
    layer = mha.MultiHeadAttention(8, 2, rng=0, dtype=np.float32)
    before = layer.W_q.copy()
    with pytest.raises(ValueError, match=r"W_q \(as the layer's float32\) must hold finite values"):
        layer.W_q = np.full((8, 8), 1e39)  # finite in float64, inf in float32
    np.testing.assert_array_equal(layer.W_q, before)
    x = np.ones((1, 3, 8), dtype=np.float32)
    with pytest.raises(ValueError, match=r"bias \(as float32\) must hold finite values or -inf"):
        layer(x, bias=np.full((3, 3), 1e39))
    blocked = np.where(np.eye(3, dtype=bool), 0.0, -1e39)  # -inf in float32: a mask, allowed
    np.testing.assert_allclose(layer(x, bias=blocked), layer(x, mask=np.eye(3, dtype=bool)), rtol=1e-6)


@pytest.mark.parametrize("causal", ["no", 1, None])
def test_causal_must_be_a_bool_not_anything_truthy(causal):
    layer = mha.MultiHeadAttention(8, 2, rng=0)
    x = np.ones((1, 3, 8))
    with pytest.raises(TypeError, match=f"causal must be True or False, got {type(causal).__name__}"):
        layer(x, causal=causal)
    with pytest.raises(TypeError, match="causal must be True or False"):
        mha.chunked_attention(x, x, x, causal=causal)
    np.testing.assert_array_equal(layer(x, causal=np.bool_(True)), layer(x, causal=True))
