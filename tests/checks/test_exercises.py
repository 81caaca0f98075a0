"""The exercise checks: a right answer gets the ✔ line, an untouched starter gets "not done yet"
(and no exception), and each wrong answer fails with a message naming what was expected."""

import math

import numpy as np
import pytest

import mha
from mha import checks
from mha.checks import CheckFailed


def not_started(*args, **kwargs):
    # YOUR CODE HERE
    raise NotImplementedError


def window_mask(seq, width):
    offset = np.arange(seq)[:, None] - np.arange(seq)[None, :]  # (seq_q, seq_k)
    return (offset >= 0) & (offset < width)


def padding_mask(lengths, seq):
    return (np.arange(seq)[None, :] < np.asarray(lengths)[:, None])[:, None, None, :]


def from_state_dict(state):
    w_q, w_k, w_v = np.split(state["in_proj_weight"], 3, axis=0)  # 3 x (out, in)
    return w_q.T, w_k.T, w_v.T, state["out_proj.weight"].T


def rotate_new_keys(k_new, n_cached):
    return mha.apply_rotary(k_new, positions=np.arange(n_cached, n_cached + len(k_new)))


def merge(state1, state2):
    (m1, l1, a1), (m2, l2, a2) = state1, state2
    m = max(m1, m2)
    r1, r2 = math.exp(m1 - m), math.exp(m2 - m)
    return m, l1 * r1 + l2 * r2, a1 * r1 + a2 * r2


def rms_norm(x, gamma, eps=1e-5):
    return gamma * x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + x.dtype.type(eps))


def previous_token_share(weights):
    return np.diagonal(weights, offset=-1, axis1=-2, axis2=-1).mean(axis=-1)


def query_chunked_attention(q, k, v, chunk):
    parts = [mha.scaled_dot_product_attention(q[..., i:i + chunk, :], k, v)
             for i in range(0, q.shape[-2], chunk)]
    return np.concatenate(parts, axis=-2)


def mha_einsum(x, layer):
    seq, h, d = x.shape[0], layer.n_heads, layer.d_head
    q, k, v = ((x @ w + b).reshape(seq, h, d) for w, b in  # (seq, n_heads, d_head)
               ((layer.W_q, layer.b_q), (layer.W_k, layer.b_k), (layer.W_v, layer.b_v)))
    scores = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(d)  # (n_heads, seq_q, seq_k)
    context = np.einsum("hqk,khd->qhd", mha.softmax(scores), v)  # (seq, n_heads, d_head)
    return context.reshape(seq, h * d) @ layer.W_o + layer.b_o


RIGHT = {
    checks.check_einsum_layer: mha_einsum,
    checks.check_keras_output_kernel: lambda w, h: w.reshape(h, w.shape[0] // h, w.shape[1]),
    checks.check_dot_variance: 1024,
    checks.check_head_shapes: {
        "q_heads": (2, 4, 5, 8), "k_heads": (2, 4, 9, 8), "v_heads": (2, 4, 9, 8),
        "scores": (2, 4, 5, 9), "heads_out": (2, 4, 5, 8), "output": (2, 5, 32)},
    checks.check_kv_budget: [6, 24, 192],
    checks.check_block_size: 512,
    checks.check_cache_tokens: [49_152, 196_608, 1_572_864],
    checks.check_ffn_share: 2 / 3,
    checks.check_parameter_formula: lambda d, h: 4 * d * d + 4 * d,
    checks.check_query_chunks: query_chunked_attention,
    checks.check_window_mask: window_mask,
    checks.check_padding_mask: padding_mask,
    checks.check_cross_attention_shapes: {
        "W_q": (64, 64), "W_k": (48, 64), "W_v": (48, 64), "W_o": (64, 64),
        "weights": (2, 8, 7, 50), "output": (2, 7, 64)},
    checks.check_from_state_dict: from_state_dict,
    checks.check_crossover: 1025,
    checks.check_rotate_new_keys: rotate_new_keys,
    checks.check_uniform_entropy: math.log(24) / 4,
    checks.check_merge_states: merge,
    checks.check_rms_norm: rms_norm,
    checks.check_temperature: lambda logits, t: mha.softmax(logits / t),
    checks.check_uniform_match: 1 / 6,
    checks.check_previous_token_share: previous_token_share,
}
FUNCTION_CHECKS = [check for check, answer in RIGHT.items() if callable(answer)]
VALUE_CHECKS = [check for check, answer in RIGHT.items() if not callable(answer)]


@pytest.mark.parametrize("check", RIGHT, ids=lambda c: c.__name__)
def test_right_answers_pass(check, capsys):
    check(RIGHT[check])
    assert capsys.readouterr().out.startswith(f"✔ {check.__name__} passed")


@pytest.mark.parametrize("check", FUNCTION_CHECKS + [
    checks.check_softmax, checks.check_attention, checks.check_causal_mask,
    checks.check_split_heads, checks.check_merge_heads, checks.check_multi_head,
], ids=lambda c: c.__name__)
def test_a_starter_function_is_not_done_yet(check, capsys):
    assert check(not_started) is None
    out = capsys.readouterr().out
    assert out.startswith(f"… {check.__name__}: not done yet")
    assert "# YOUR CODE HERE" in out


@pytest.mark.parametrize("check", VALUE_CHECKS, ids=lambda c: c.__name__)
def test_a_placeholder_value_is_not_done_yet(check, capsys):
    check(...)
    assert "not done yet" in capsys.readouterr().out


def test_a_list_with_a_placeholder_is_not_done_yet(capsys):
    checks.check_kv_budget([6, ..., ...])
    assert "not done yet" in capsys.readouterr().out


def test_a_dict_with_placeholders_is_not_done_yet(capsys):
    checks.check_cross_attention_shapes(dict.fromkeys(("W_q", "W_k", "W_v", "W_o", "weights",
                                                       "output"), ...))
    assert "not done yet" in capsys.readouterr().out


def test_a_function_returning_the_placeholder_is_not_done_yet(capsys):
    checks.check_rms_norm(lambda x, gamma: ...)
    assert "not done yet" in capsys.readouterr().out


def test_a_function_returning_none_is_a_failure_not_a_placeholder():
    with pytest.raises(CheckFailed, match="returned NoneType, expected a NumPy array"):
        checks.check_rms_norm(lambda x, gamma: None)


@pytest.mark.parametrize(("check", "answer", "message"), [
    (checks.check_window_mask, lambda s, w: np.abs(np.arange(s)[:, None] - np.arange(s)) < w,
     "not causal"),
    (checks.check_window_mask, lambda s, w: window_mask(s, w + 1), r"width \+ 1 tokens"),
    (checks.check_padding_mask, lambda n, s: padding_mask(n, s)[:, 0, 0],
     r"shape \(batch, seq_k\).*\[:, None, None, :\]"),
    (checks.check_padding_mask, lambda n, s: ~padding_mask(n, s), "inverted"),
    (checks.check_padding_mask, lambda n, s: padding_mask(np.asarray(n) + 1, s), "t <= length"),
    (checks.check_crossover, 1024, r"expected 1025, got 1024\. 1024 = 2·d_model"),
    (checks.check_crossover, 7, "expected 1025, got 7"),
    (checks.check_crossover, "a lot", "should be a number, got str"),
    (checks.check_uniform_entropy, math.log2(24) / 4, "in bits"),
    (checks.check_uniform_entropy, math.log(24), "the sum over the 4 queries"),
    (checks.check_uniform_match, 0.2, r"expected 0\.166667, got 0\.2\. the source has 6"),
    (checks.check_from_state_dict,
     lambda s: (*np.split(s["in_proj_weight"], 3), s["out_proj.weight"]), "not transposed"),
    (checks.check_rotate_new_keys, lambda k, n: mha.apply_rotary(k), "positions 0, 1"),
    (checks.check_rotate_new_keys,
     lambda k, n: mha.apply_rotary(k, positions=np.arange(n + 1, n + 1 + len(k))), "off by one"),
    (checks.check_merge_states, lambda s1, s2: (max(s1[0], s2[0]), s1[1] + s2[1], s1[2] + s2[2]),
     "without rescaling"),
    (checks.check_rms_norm, lambda x, g: mha.layer_norm(x, g), "that is layer norm"),
    (checks.check_rms_norm, lambda x, g: x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-5),
     "gamma is missing"),
    (checks.check_rms_norm, lambda x, g: (g * x / np.sqrt(np.mean(x * x, -1, keepdims=True)
                                                          + 1e-5)).astype(np.float64),
     "returned float64 for float32"),
    (checks.check_temperature, lambda z, t: mha.softmax(z * t), "multiplied the logits"),
    (checks.check_temperature, lambda z, t: mha.softmax(z), "temperature is ignored"),
    (checks.check_previous_token_share,
     lambda w: np.diagonal(w, offset=1, axis1=-2, axis2=-1).mean(-1), r"\*next\* token"),
    (checks.check_previous_token_share,
     lambda w: np.diagonal(w, offset=-1, axis1=-2, axis2=-1).sum(-1) / w.shape[-1],
     "included query 0"),
    (checks.check_cross_attention_shapes, {
        "W_q": (64, 64), "W_k": (64, 64), "W_v": (48, 64), "W_o": (64, 64),
        "weights": (2, 8, 7, 50), "output": (2, 7, 64)},
     r"W_k: expected \(48, 64\), got \(64, 64\) \(keys are projected"),
    (checks.check_cross_attention_shapes, {"W_q": (64, 64)}, "no 'W_k' key"),
    (checks.check_dot_variance, 256, r"expected 1024, got 256\. each product"),
    (checks.check_dot_variance, 32, "standard deviation"),
    (checks.check_dot_variance, True, "should be a number, got True"),
    (checks.check_head_shapes, {
        "q_heads": (2, 4, 5, 8), "k_heads": (2, 4, 5, 8), "v_heads": (2, 4, 9, 8),
        "scores": (2, 4, 5, 9), "heads_out": (2, 4, 5, 8), "output": (2, 5, 32)},
     r"k_heads: expected \(2, 4, 9, 8\), got \(2, 4, 5, 8\) \(keys carry seq_k = 9\)"),
    (checks.check_kv_budget, [3, 12, 96], r"expected \[6, 24, 192\], got \[3, 12, 96\]\. 16-bit"),
    (checks.check_kv_budget, [192, 768, 6144], "for one layer"),
    (checks.check_kv_budget, [12, 48, 384], "keys \\*and\\* values"),
    (checks.check_kv_budget, [6, 24], "a list of 3 numbers"),
    (checks.check_kv_budget, [6.9, 24.9, 192.9], r"expected whole numbers, got 6\.9\. .* round down with //"),
    (checks.check_kv_budget, [float("nan")] * 3, "expected whole numbers, got nan"),
    (checks.check_cache_tokens, [49_152.5, 196_608, 1_572_864], "expected whole numbers, got 49152.5"),
    (checks.check_block_size, 1024, "just over 64 MiB"),
    (checks.check_cache_tokens, [1, 2, 3], r"expected \[49152, 196608, 1572864\]"),
    (checks.check_ffn_share, 0.5, "8d²"),
    (checks.check_parameter_formula, lambda d, h: 4 * d * d, "bias vectors"),
    (checks.check_parameter_formula, lambda d, h: h * (4 * d * d + 4 * d), "do not add"),
    (checks.check_einsum_layer, lambda x, layer: mha_einsum(x, layer) - layer.b_o, "b_o is missing"),
    (checks.check_keras_output_kernel, lambda w, h: w.T.reshape(h, w.shape[0] // h, w.shape[1]),
     "you transposed W_o"),
    (checks.check_query_chunks, lambda q, k, v, c: sum(
        mha.scaled_dot_product_attention(q, k[..., i:i + c, :], v[..., i:i + c, :])
        for i in range(0, k.shape[-2], c)), "you cut the keys"),
])
def test_wrong_answers_name_what_was_expected(check, answer, message):
    with pytest.raises(CheckFailed, match=message):
        check(answer)


@pytest.mark.parametrize("check", [checks.check_rms_norm, checks.check_softmax],
                         ids=lambda c: c.__name__)
def test_under_strict_an_unfinished_answer_fails(check, monkeypatch):
    with checks.strict(), pytest.raises(CheckFailed, match="not done yet"):
        check(not_started)
    monkeypatch.setenv("MHA_CHECKS_STRICT", "1")
    with pytest.raises(CheckFailed, match="not done yet"):
        check(not_started)


def test_strict_is_undone_after_the_block(capsys):
    with checks.strict():
        pass
    checks.check_crossover(...)
    assert "not done yet" in capsys.readouterr().out
