import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mha
from mha.linear_attention import elu_feature_map, linear_attention, linear_attention_recurrent


def direct(q, k, v, causal):
    """One query at a time, with the kernel φ(q)·φ(k) and the weights normalised by their sum."""
    phi_q, phi_k = elu_feature_map(q), elu_feature_map(k)
    out = np.empty(q.shape[:-1] + (v.shape[-1],))
    for i in range(q.shape[-2]):
        keys = slice(0, i + 1) if causal else slice(None)
        w = np.einsum("...d,...jd->...j", phi_q[..., i, :], phi_k[..., keys, :])
        out[..., i, :] = np.einsum("...j,...jd->...d", w, v[..., keys, :]) / (w.sum(-1)[..., None] + 1e-6)
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 12), st.integers(1, 6), st.booleans(), st.integers(0, 1000))
def test_parallel_linear_attention_follows_the_formula(seq, d, causal, seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((2, seq, d)) * 2 for _ in range(3))
    np.testing.assert_allclose(linear_attention(q, k, v, causal=causal), direct(q, k, v, causal), rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_the_recurrent_form_equals_the_parallel_form_to_1e_10(seed):
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((2, 3, 50, 8)), rng.standard_normal((2, 3, 50, 8)), \
        rng.standard_normal((2, 3, 50, 5))
    recurrent, (S, z) = linear_attention_recurrent(q, k, v, return_state=True)
    assert np.abs(recurrent - linear_attention(q, k, v, causal=True)).max() <= 1e-10
    assert S.shape == (2, 3, 8, 5) and z.shape == (2, 3, 8)  # the state: no axis grows with the sequence


def test_the_state_after_all_tokens_gives_the_non_causal_output_of_the_last_query():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((6, 4)) for _ in range(3))
    _, (S, z) = linear_attention_recurrent(q, k, v, return_state=True)
    phi = elu_feature_map(q[-1])
    np.testing.assert_allclose(phi @ S / (phi @ z + 1e-6), linear_attention(q, k, v)[-1], rtol=1e-12)


def test_linear_attention_refuses_what_it_cannot_compute():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="seq_q == seq_k"):
        linear_attention(x, np.ones((5, 4)), np.ones((5, 2)), causal=True)
    with pytest.raises(ValueError, match="must hold finite values"):
        linear_attention(x * np.nan, x, x)
    assert mha.linear_attention.linear_attention is linear_attention
