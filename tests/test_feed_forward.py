"""The feed-forward network and GELU, checked against the formula token by token and against ``math.erf``."""

import numpy as np
import pytest

from mha.feed_forward import FeedForward, gelu
from tests.reference_block import exact_gelu


def test_gelu_is_close_to_the_exact_erf_form_and_keeps_float32():
    x = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(gelu(x), exact_gelu(x), atol=1e-3)
    assert gelu(x.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("activation", ["gelu", "relu"])
def test_feed_forward_equals_its_formula_token_by_token(activation):
    ffn = FeedForward(6, 24, activation=activation, rng=0)
    rng = np.random.default_rng(1)
    ffn.b_1, ffn.b_2 = rng.standard_normal(24), rng.standard_normal(6)
    x = rng.standard_normal((2, 5, 6))
    act = exact_gelu if activation == "gelu" else (lambda h: np.maximum(h, 0))
    tolerance = 2e-3 if activation == "gelu" else 1e-12
    for b in range(2):
        for t in range(5):  # position-wise: each token alone gives the same answer
            expected = act(x[b, t] @ ffn.W_1 + ffn.b_1) @ ffn.W_2 + ffn.b_2
            np.testing.assert_allclose(ffn(x)[b, t], expected, atol=tolerance)
            np.testing.assert_allclose(ffn(x[b, t]), ffn(x)[b, t], rtol=1e-12)


def test_feed_forward_errors_and_no_bias():
    assert set(FeedForward(4, 8, bias=False).parameters()) == {"W_1", "W_2"}
    with pytest.raises(ValueError, match="activation must be one of"):
        FeedForward(4, 8, activation="swish")
