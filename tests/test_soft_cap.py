"""One soft-cap: the forward pass, the logits a layer reports and the backward pass all call
:func:`mha.soft_cap`, so they cannot drift apart by a rounding (one divided by the cap, one multiplied by
its inverse, before issue 51)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import mha
from mha.grad.attention import attention_backward


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_capped_layer_reports_the_soft_cap_of_its_plain_twin_s_logits_bit_for_bit(dtype):
    plain = mha.ModernAttention(16, 4, rng=0, dtype=dtype)
    capped = mha.ModernAttention.like(plain, softcap=3.0)
    x = (np.random.default_rng(1).standard_normal((2, 5, 16)) * 10).astype(dtype)
    _, plain_cache = plain.forward(x)
    _, capped_cache = capped.forward(x)
    reported = capped.attention_logits(capped_cache)
    assert reported.dtype == dtype
    np.testing.assert_array_equal(reported, mha.soft_cap(plain.attention_logits(plain_cache), 3.0))


def test_the_forward_pass_softmaxes_the_logits_the_layer_reports():
    layer = mha.ModernAttention(16, 4, softcap=2.0, rng=0)
    x = np.random.default_rng(2).standard_normal((1, 6, 16)) * 5
    _, cache = layer.forward(x)
    np.testing.assert_array_equal(cache.weights, mha.softmax(layer.attention_logits(cache)))


def test_the_backward_pass_of_soft_capped_scores_matches_finite_differences():
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 4, 3)) * 3 for _ in range(3))
    d_out = rng.standard_normal((2, 4, 3))

    def loss(q_):
        out = mha.scaled_dot_product_attention(q_, k, v, softcap=1.5)
        return float((out * d_out).sum())

    _, w = mha.scaled_dot_product_attention(q, k, v, softcap=1.5, return_weights=True)
    dq, _, _ = attention_backward(d_out, q, k, v, w, softcap=1.5)
    step, numeric = 1e-6, np.zeros_like(q)
    for index in np.ndindex(q.shape):
        bumped = q.copy()
        bumped[index] += step
        lowered = q.copy()
        lowered[index] -= step
        numeric[index] = (loss(bumped) - loss(lowered)) / (2 * step)
    np.testing.assert_allclose(dq, numeric, rtol=1e-5, atol=1e-8)


def _tanh_owners(path: Path) -> set[str]:
    """Names of the functions in ``path`` whose own body calls ``np.tanh``."""
    owners = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"))):
        if isinstance(node, ast.FunctionDef):
            for call in ast.walk(node):
                if isinstance(call, ast.Attribute) and call.attr == "tanh":
                    owners.add(node.name)
    return owners


def test_tanh_appears_in_the_core_only_in_soft_cap_and_the_tanh_form_of_gelu():
    package = Path(mha.__file__).parent  # the imported package: the repository's, or an installed sdist's
    core = [path for folder in (package, package / "grad", package / "fast") for path in folder.glob("*.py")]
    owners = {f"{path.relative_to(package.parent).as_posix()}:{name}" for path in core
              for name in _tanh_owners(path)}
    assert len(core) > 20, f"the core's modules were not found under {package}"
    assert owners == {"mha/attention.py:soft_cap", "mha/feed_forward.py:gelu",
                      "mha/grad/block.py:activation_backward"}


def test_the_tanh_finder_sees_a_tanh_call(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import numpy as np\ndef f(x):\n    return np.tanh(x)\ndef g(x):\n    return x\n")
    assert _tanh_owners(source) == {"f"}
