"""Checked once, at the door: what a debugger walks through in a layer, a block and an encoder.

The public calls check their arguments once; inside, a core trusts what was checked. These tests count the
Python calls made inside ``mha/`` (``sys.setprofile``: a count, not a time) and which arrays the finite
check scans, and hold every bad argument to the error it got before the checks moved to the door.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections import Counter

import numpy as np
import pytest

import mha

ROOT = os.path.dirname(mha.__file__)


def calls_inside_mha(fn) -> Counter[str]:
    """``file:function`` of every Python call entered inside ``mha/`` during ``fn()``."""
    seen: Counter[str] = Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(ROOT):
            seen[f"{os.path.relpath(frame.f_code.co_filename, ROOT)}:{frame.f_code.co_name}"] += 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def bert_weights(config, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random float32 arrays under BERT's names (linear weights stored (out, in))."""
    d, ff = config.d_model, config.d_ff
    weights = {"embeddings.word_embeddings.weight": rng.standard_normal((config.vocab_size, d)),
               "embeddings.position_embeddings.weight": rng.standard_normal((config.max_positions, d)),
               "embeddings.token_type_embeddings.weight": rng.standard_normal((config.n_token_types, d)),
               "embeddings.LayerNorm.weight": np.ones(d), "embeddings.LayerNorm.bias": np.zeros(d)}
    for i in range(config.n_layers):
        p = f"encoder.layer.{i}"
        for part, shape in {"attention.self.query": (d, d), "attention.self.key": (d, d),
                            "attention.self.value": (d, d), "attention.output.dense": (d, d),
                            "intermediate.dense": (ff, d), "output.dense": (d, ff)}.items():
            weights[f"{p}.{part}.weight"] = 0.3 * rng.standard_normal(shape)
            weights[f"{p}.{part}.bias"] = 0.1 * rng.standard_normal(shape[0])
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            weights[f"{p}.{norm}.weight"], weights[f"{p}.{norm}.bias"] = np.ones(d), np.zeros(d)
    return {name: w.astype(np.float32) for name, w in weights.items()}


@pytest.fixture(scope="module")
def calls():
    """The three calls issue 51 counts, each made once to warm up."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 16))
    layer, block = mha.MultiHeadAttention(16, 4, rng=0), mha.TransformerBlock(16, 4, rng=0)
    made = {"layer": lambda: layer(x), "layer, causal, weights": lambda: layer(x, causal=True,
                                                                              return_weights=True),
            "block": lambda: block.forward(x, causal=True), "block call": lambda: block(x, causal=True)}
    if all(importlib.util.find_spec(name) for name in ("safetensors", "tokenizers")):  # [pretrained]
        from mha.pretrained.checkpoints import EncoderConfig
        from mha.pretrained.encoder import Encoder

        config = EncoderConfig(n_layers=2, n_heads=4, d_model=16, d_ff=64, activation="gelu", eps=1e-12,
                               max_positions=16, n_token_types=2, vocab_size=30)
        encoder = Encoder(config, bert_weights(config, rng), tokenizer=None)
        ids, mask = rng.integers(0, 30, (2, 5)), np.array([[True] * 5, [True] * 3 + [False] * 2])
        made["encoder"] = lambda: encoder.forward(ids)
        made["encoder, padding"] = lambda: encoder.forward(ids, mask=mask)
    for fn in made.values():
        fn()
    return made


@pytest.mark.parametrize(("name", "budget"), [
    ("layer", 25), ("layer, causal, weights", 25), ("block", 50), ("block call", 50), ("encoder", 100),
    ("encoder, padding", 100)])
def test_a_debugger_meets_the_formula_within_a_few_calls(calls, name, budget):
    if name not in calls:
        pytest.skip("the encoder needs mha-course[pretrained]")
    seen = calls_inside_mha(calls[name])
    assert 0 < sum(seen.values()) <= budget, seen.most_common()
    assert seen["attention.py:attention_forward"] >= 1  # the formula was reached


@pytest.mark.parametrize("name", ["layer", "block", "block call"])
def test_the_door_checks_once(calls, name):
    seen = calls_inside_mha(calls[name])
    checks = {"validation.py:check_layer_inputs", "validation.py:check_features"}
    assert sum(seen[c] for c in checks) == 1, seen.most_common()
    forbidden = {"attention.py:split_heads", "attention.py:merge_heads", "attention.py:check_qkv",
                 "attention.py:scaled_dot_product_attention", "layers.py:project"}
    assert not forbidden & set(seen), sorted(forbidden & set(seen))


def test_only_the_callers_arrays_are_scanned_for_nan(calls, monkeypatch):
    """The finite check sees the input, never the projections or norms the package made from it."""
    import mha.validation as validation

    scanned = []
    real = validation.check_finite

    def spy(arr, name, **kwargs):
        scanned.append(name)
        return real(arr, name, **kwargs)

    monkeypatch.setattr(validation, "check_finite", spy)
    calls["layer"]()
    calls["block"]()
    assert scanned == ["query", "x"]


def test_counting_sees_calls():
    """The counter counts: a call into the package is seen, a NumPy call is not."""
    assert calls_inside_mha(lambda: mha.softmax(np.ones(3)))["attention.py:softmax"] == 1
    assert sum(calls_inside_mha(lambda: np.ones(3).sum()).values()) == 0


# ------------------------------------------------------------------------------------------ the same errors
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 5, 16))
NAN = X.copy()
NAN[0, 1, 2] = np.nan
LAYER = mha.MultiHeadAttention(16, 4, rng=0)
GQA = mha.MultiHeadAttention(16, 4, n_kv_heads=2, rng=0)
CROSS = mha.MultiHeadAttention(16, 4, kdim=6, vdim=10, rng=0)
BLOCK = mha.TransformerBlock(16, 4, rng=0)
POST = mha.TransformerBlock(16, 4, norm="post", rng=0)
DECODER = mha.DecoderBlock(16, 4, rng=0)
QUERY_SHAPE = "query must have shape (batch, seq, 16) or (seq, 16) with seq >= 1, got"
NOT_BATCHED = "forward needs batched inputs (batch, seq, dim), got query of shape (5, 16)"

#: Bad arguments and the words of the error each got before the checks moved to the door (the messages
#: were compared one by one with the previous layout's, 512f579): the argument, what was expected, what came.
BAD_CALLS = {
    "layer, width": (lambda: LAYER(np.ones((2, 5, 15))), ValueError, [QUERY_SHAPE, "(2, 5, 15)"]),
    "layer, NaN": (lambda: LAYER(NAN), ValueError, ["query must hold finite values", "1 NaN"]),
    "layer, 4-D": (lambda: LAYER(np.ones((1, 2, 5, 16))), ValueError, [QUERY_SHAPE, "(1, 2, 5, 16)"]),
    "layer, 1-D": (lambda: LAYER(np.ones(16)), ValueError, [QUERY_SHAPE, "(16,)"]),
    "layer, no token": (lambda: LAYER(np.ones((2, 0, 16))), ValueError, [QUERY_SHAPE, "(2, 0, 16)"]),
    "layer, strings": (lambda: LAYER([["a"] * 16]), TypeError, ["query must be a real", "strings"]),
    "layer, booleans": (lambda: LAYER(np.ones((2, 5, 16), bool)), TypeError, ["query", "booleans"]),
    "layer, causal str": (lambda: LAYER(X, causal="yes"), TypeError,
                          ["causal must be True or False", "'yes'"]),
    "layer, float mask": (lambda: LAYER(X, mask=np.ones((5, 5))), TypeError, ["mask must be a boolean",
                                                                               "mask.astype(bool)"]),
    "layer, mask shape": (lambda: LAYER(X, mask=np.ones((4, 4), bool)), ValueError,
                          ["mask of shape (4, 4)", "(2, 4, 5, 5)"]),
    "layer, bias shape": (lambda: LAYER(X, bias=np.ones((3, 5, 5))), ValueError, ["bias of shape (3, 5, 5)"]),
    "layer, bias NaN": (lambda: LAYER(X, bias=np.full((5, 5), np.nan)), ValueError,
                        ["bias must hold finite values or -inf", "25 NaN"]),
    "layer, head mask": (lambda: LAYER(X, head_mask=np.ones(3)), ValueError, ["head_mask", "(4,)", "(3,)"]),
    "layer, head mask inf": (lambda: LAYER(X, head_mask=[1, np.inf, 1, 1]), ValueError,
                             ["head_mask", "1 infinite"]),
    "layer, value alone": (lambda: LAYER(X, None, X), ValueError, ["value was given without key"]),
    "layer, batches": (lambda: LAYER(X, np.ones((3, 5, 16))), ValueError,
                       ["query has batch 2 but key has batch 3"]),
    "layer, mixed": (lambda: LAYER(X, np.ones((5, 16))), ValueError, ["pass all inputs batched"]),
    "layer, seq_k": (lambda: LAYER(X, np.ones((2, 5, 16)), np.ones((2, 4, 16))), ValueError,
                     ["must share (batch, seq_k)"]),
    "cross, no key": (lambda: CROSS(X), ValueError, ["kdim=6", "vdim=10", "pass key and value"]),
    "cross, no value": (lambda: CROSS(X, np.ones((2, 3, 6))), ValueError, ["value must be given"]),
    "cross, kdim": (lambda: CROSS(X, np.ones((2, 3, 7)), np.ones((2, 3, 10))), ValueError,
                    ["key must have shape (batch, seq, 6)", "(2, 3, 7)"]),
    "forward, unbatched": (lambda: LAYER.forward(X[0]), ValueError, [NOT_BATCHED, "x[None]"]),
    "project, width": (lambda: LAYER.project(np.ones((2, 5, 3))), ValueError, [QUERY_SHAPE, "(2, 5, 3)"]),
    "decode, no cache": (lambda: LAYER.decode(X[:, :1], object()), TypeError, ["cache must be a KVCache"]),
    "decode, heads": (lambda: LAYER.decode(X[:, :1], mha.KVCache(2, 2, 4)), ValueError,
                      ["cache holds 2 heads of size 4, this layer needs 4 of size 4"]),
    "decode, batch": (lambda: LAYER.decode(X[:, :1], LAYER.new_cache(3)), ValueError,
                      ["x_new has batch 2 but the cache was made for 3"]),
    "decode, grouped": (lambda: GQA.decode(X[:, :1], LAYER.new_cache(2)), ValueError, ["needs 2 of size 4"]),
    "decode, width": (lambda: LAYER.decode(np.ones((2, 1, 8)), LAYER.new_cache(2)), ValueError,
                      [QUERY_SHAPE, "(2, 1, 8)"]),
    "block, width": (lambda: BLOCK(np.ones((2, 5, 15))), ValueError,
                     ["x must have shape (..., 16)", "(2, 5, 15)"]),
    "block, NaN": (lambda: BLOCK(NAN), ValueError, ["x must hold finite values", "1 NaN"]),
    "block, 4-D": (lambda: BLOCK(np.ones((1, 2, 5, 16))), ValueError, [QUERY_SHAPE, "(1, 2, 5, 16)"]),
    "block, 1-D": (lambda: BLOCK(np.ones(16)), ValueError, [QUERY_SHAPE, "(16,)"]),
    "block, no token": (lambda: BLOCK(np.ones((2, 0, 16))), ValueError, [QUERY_SHAPE, "(2, 0, 16)"]),
    "block, strings": (lambda: BLOCK([["a"] * 16]), TypeError, ["x must be a real", "strings"]),
    "block, causal int": (lambda: BLOCK(X, causal=1), TypeError, ["causal must be True or False", "int 1"]),
    "block, float mask": (lambda: BLOCK(X, mask=np.ones((5, 5))), TypeError, ["mask must be a boolean"]),
    "block, mask shape": (lambda: BLOCK(X, mask=np.ones((4, 4), bool)), ValueError, ["mask of shape (4, 4)"]),
    "block, head mask": (lambda: BLOCK(X, head_mask=np.ones(5)), ValueError, ["head_mask", "(4,)", "(5,)"]),
    "block, bias": (lambda: BLOCK(X, bias=np.ones((2, 3, 5, 5))), ValueError, ["bias of shape (2, 3, 5, 5)"]),
    "block, dropout": (lambda: mha.TransformerBlock(16, 4, dropout=0.1, rng=0)(X, training=True), TypeError,
                       ["needs rng=numpy.random.Generator", "NoneType"]),
    "block forward, unbatched": (lambda: BLOCK.forward(X[0]), ValueError, [NOT_BATCHED]),
    "post-norm, 4-D": (lambda: POST(np.ones((1, 2, 5, 16))), ValueError, [QUERY_SHAPE]),
    "post-norm, NaN": (lambda: POST(NAN), ValueError, ["x must hold finite values"]),
    "decoder, width": (lambda: DECODER(np.ones((2, 3, 15)), X), ValueError, ["x must have shape (..., 16)"]),
    "decoder, memory width": (lambda: DECODER(X, np.ones((2, 3, 15))), ValueError,
                              ["key must have shape (batch, seq, 16)", "(2, 3, 15)"]),
    "decoder, memory NaN": (lambda: DECODER(X, NAN), ValueError, ["key must hold finite values"]),
    "decoder, memory batch": (lambda: DECODER(X, np.ones((3, 5, 16))), ValueError,
                              ["query has batch 2 but key has batch 3"]),
    "decoder, memory mask": (lambda: DECODER(X, X, memory_mask=np.ones((2, 1, 1, 4), bool)), ValueError,
                             ["mask of shape (2, 1, 1, 4)"]),
    "decoder, NaN": (lambda: DECODER(NAN, X), ValueError, ["x must hold finite values"]),
    "decoder, unbatched": (lambda: DECODER(X[0], X[0]), ValueError, [NOT_BATCHED]),
    "decoder, mask": (lambda: DECODER.forward(X, X, mask=np.ones((4, 4), bool)), ValueError,
                      ["mask of shape (4, 4)"]),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_the_same_bad_argument_gets_the_same_error(case):
    call, kind, words = BAD_CALLS[case]
    with pytest.raises(kind) as caught:
        call()
    missing = [w for w in words if w not in str(caught.value)]
    assert missing == [], str(caught.value)
