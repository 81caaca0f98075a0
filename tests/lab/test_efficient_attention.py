"""Converting multi-head layers to grouped-query ones: exact pooling, honest errors, and fitting."""

import numpy as np
import pytest

import mha
from mha.lab.efficient_attention import fit_to_teacher, pool_kv_heads, relative_error
from tests import factories


def random_layer(n_kv_heads=None, seed=0):
    return factories.random_layer(16, 4, seed=seed, n_kv_heads=n_kv_heads)


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_pooled_layer_equals_a_per_head_loop_with_averaged_key_value_weights(n_kv):
    teacher = random_layer()
    student = pool_kv_heads(teacher, n_kv)
    x = np.random.default_rng(2).standard_normal((2, 5, 16))
    # Reference: for every query head, average the key/value weights of its group by hand.
    group, d = 4 // n_kv, 4
    q = x @ teacher.W_q + teacher.b_q
    heads = []
    for h in range(4):
        members = range((h // group) * group, (h // group + 1) * group)
        w_k = np.mean([teacher.W_k[:, m * d:(m + 1) * d] for m in members], axis=0)
        b_k = np.mean([teacher.b_k[m * d:(m + 1) * d] for m in members], axis=0)
        w_v = np.mean([teacher.W_v[:, m * d:(m + 1) * d] for m in members], axis=0)
        b_v = np.mean([teacher.b_v[m * d:(m + 1) * d] for m in members], axis=0)
        q_h = q[..., h * d:(h + 1) * d]  # (batch, seq, d_head)
        heads.append(mha.scaled_dot_product_attention(q_h, x @ w_k + b_k, x @ w_v + b_v))
    expected = np.concatenate(heads, axis=-1) @ teacher.W_o + teacher.b_o
    np.testing.assert_allclose(student(x), expected, rtol=1e-12, atol=1e-12)
    assert student.n_kv_heads == n_kv and student.W_k.shape == (16, n_kv * 4)


def test_pooling_twice_equals_pooling_once_and_leaves_the_teacher_alone():
    teacher = random_layer()
    before = {name: arr.copy() for name, arr in teacher.parameters().items()}
    once = pool_kv_heads(teacher, 1)
    twice = pool_kv_heads(pool_kv_heads(teacher, 2), 1)
    np.testing.assert_allclose(once.W_k, twice.W_k, rtol=1e-14)
    for name, arr in teacher.parameters().items():
        np.testing.assert_array_equal(arr, before[name])


def test_pooling_keeps_dtype_bias_and_cross_attention_widths():
    teacher = mha.MultiHeadAttention(8, 2, kdim=5, vdim=3, bias=False, rng=0, dtype=np.float32)
    student = pool_kv_heads(teacher, 1)
    assert student.dtype == np.float32 and student.b_k is None
    assert student.W_k.shape == (5, 4) and student.W_v.shape == (3, 4)


def test_pooling_refuses_what_cannot_be_grouped():
    with pytest.raises(ValueError, match="cannot be pooled"):
        pool_kv_heads(random_layer(), 3)
    with pytest.raises(ValueError, match="cannot be pooled"):
        pool_kv_heads(random_layer(n_kv_heads=2), 4)
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        pool_kv_heads("layer", 1)


def test_relative_error_is_zero_for_equal_arrays_and_scale_free():
    a = np.random.default_rng(0).standard_normal((3, 4))
    assert relative_error(a, a) == 0.0
    assert relative_error(2 * a, a) == pytest.approx(1.0)
    assert relative_error(10 * (a + 1), 10 * a) == pytest.approx(relative_error(a + 1, a))
    with pytest.raises(ValueError, match="all zeros"):
        relative_error(a, np.zeros_like(a))


def test_fitting_brings_a_pooled_student_closer_to_its_teacher():
    teacher = random_layer(seed=3)
    student = pool_kv_heads(teacher, 1)
    x = np.random.default_rng(4).standard_normal((8, 6, 16))
    before = relative_error(student(x, causal=True), teacher(x, causal=True))
    losses = fit_to_teacher(student, teacher, lambda rng: rng.standard_normal((8, 6, 16)), steps=150, rng=5,
                            lr=3e-3, causal=True)
    after = relative_error(student(x, causal=True), teacher(x, causal=True))
    assert after < 0.8 * before
    assert losses.shape == (150,) and losses[-20:].mean() < losses[:20].mean()
