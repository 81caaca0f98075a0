"""The tiny GPT: forward ≡ the package's blocks, gradients ≡ finite differences, cached ≡ full decoding."""

import numpy as np
import pytest

import mha
from mha.lab import train
from mha.lab.text import (
    CharVocabulary,
    bigram_loss,
    course_text,
    extract_prose,
    text_batch,
    text_windows,
    unigram_loss,
)
from mha.lab.tiny_gpt import TinyGPT, generate, per_position_loss, sample_next
from tests.gradcheck import assert_gradients_match, numerical_gradient


def _model(tied=True, dtype=np.float64, seed=0, **kwargs):
    model = TinyGPT(7, 6, d_model=8, n_heads=2, n_layers=2, d_ff=12, tied=tied, rng=seed, dtype=dtype,
                    **kwargs)
    rng = np.random.default_rng(seed + 1)
    for name, arr in model.parameters().items():
        if name.endswith(("b_q", "b_k", "b_v", "b_o", "b_1", "b_2", "beta", "gamma")):
            arr[...] += rng.standard_normal(arr.shape) * 0.3  # exercise biases and norm parameters
    return model


def test_forward_is_embeddings_blocks_norm_and_tied_readout():
    model = _model()
    tokens = np.array([[1, 2, 3, 1], [0, 6, 5, 4]])
    h = model.token_embedding[tokens] + model.position_embedding[:4]
    for block in model.blocks:
        h = block(h, causal=True)
    expected = model.norm(h) @ model.token_embedding.T
    np.testing.assert_allclose(model(tokens), expected, rtol=1e-12)


def test_forward_is_causal():
    model = _model()
    a, b = np.array([[1, 2, 3, 4, 5]]), np.array([[1, 2, 3, 0, 0]])
    np.testing.assert_allclose(model(a)[:, :3], model(b)[:, :3], rtol=1e-12)
    assert not np.allclose(model(a)[:, 3], model(b)[:, 3])


@pytest.mark.parametrize("tied", [True, False])
def test_gradients_match_finite_differences(tied):
    model = _model(tied=tied, activation="gelu")
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 7, (2, 5))
    batch = text_windows(np.concatenate([tokens.ravel(), [1]]), 5)
    loss, grads = model.loss_and_grads(batch)
    assert set(grads) == set(model.parameters())

    def objective():
        return mha.grad.cross_entropy(model(batch.tokens), batch.targets)[0]

    assert loss == pytest.approx(objective(), rel=1e-12)
    for name, arr in model.parameters().items():
        if arr.size > 40:  # big matrices: a random sample of entries keeps the test quick
            picks = [np.unravel_index(i, arr.shape) for i in rng.choice(arr.size, 40, replace=False)]
            numeric = np.array([_entry_gradient(objective, arr, i) for i in picks])  # arr may be a view
            assert_gradients_match(np.array([grads[name][i] for i in picks]), numeric, name)
        else:
            assert_gradients_match(grads[name], numerical_gradient(objective, arr), name)


def _entry_gradient(objective, arr, i, step=1e-6):
    original = arr[i]
    arr[i] = original + step
    up = objective()
    arr[i] = original - step
    down = objective()
    arr[i] = original
    return (up - down) / (2 * step)


def test_head_mask_of_ones_changes_nothing_and_zero_changes_the_output():
    model = _model()
    tokens = np.array([[1, 2, 3, 4]])
    np.testing.assert_allclose(model(tokens, head_mask=np.ones((2, 2))), model(tokens), rtol=1e-12)
    mask = np.ones((2, 2))
    mask[0, 1] = 0
    assert not np.allclose(model(tokens, head_mask=mask), model(tokens))


@pytest.mark.parametrize("temperature, top_k", [(1.0, None), (0.7, 3), (0.0, None), (1.5, 1)])
def test_cached_generation_equals_full_recomputation(temperature, top_k):
    model = _model()
    prompt = np.array([[1, 2], [3, 3]])
    a, logits_a = generate(model, prompt, 4, rng=5, temperature=temperature, top_k=top_k,
                           return_logits=True)
    b, logits_b = generate(model, prompt, 4, rng=5, temperature=temperature, top_k=top_k, use_cache=False,
                           return_logits=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(logits_a, logits_b, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(a[:, :2], prompt)


def test_decode_in_one_pass_equals_the_forward_pass():
    model = _model()
    tokens = np.array([[1, 2, 3, 4, 5, 6]])
    caches = model.new_caches(1)
    first = model.decode(tokens[:, :4], caches)
    rest = model.decode(tokens[:, 4:], caches)
    np.testing.assert_allclose(np.concatenate([first, rest], axis=1), model(tokens), rtol=1e-10)


def test_generation_past_the_context_restarts_the_window_the_same_way_with_and_without_cache():
    model = _model()  # context 6: 15 new tokens restart the window several times
    a, logits_a = generate(model, [[1, 2, 3]], 15, rng=2, return_logits=True)
    b, logits_b = generate(model, [[1, 2, 3]], 15, rng=2, use_cache=False, return_logits=True)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(logits_a, logits_b, rtol=1e-10, atol=1e-12)
    # the last restart kept 3 tokens (context // 2) and drew the next one from them alone
    np.testing.assert_allclose(logits_a[:, -3], model(a[:, -6:-3])[:, -1], rtol=1e-10)


def test_sample_next_follows_temperature_and_top_k():
    logits = np.log(np.array([[0.5, 0.3, 0.2]]))
    draws = np.array([sample_next(logits, np.random.default_rng(s))[0] for s in range(3000)])
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 3000, [0.5, 0.3, 0.2], atol=0.03)
    cold = np.array([sample_next(logits, np.random.default_rng(s), temperature=0.2)[0] for s in range(500)])
    assert np.mean(cold == 0) > 0.85  # 0.5**5 / (0.5**5 + 0.3**5 + 0.2**5) = 0.92
    top1 = [sample_next(logits, np.random.default_rng(s), top_k=1)[0] for s in range(50)]
    assert set(top1) == {0}
    with pytest.raises(ValueError, match="top_k"):
        sample_next(logits, 0, top_k=4)


def test_float32_model_trains_in_float32_and_lowers_the_loss_deterministically():
    text = "the cat sat on the mat. " * 20
    vocab = CharVocabulary(text)
    ids = vocab.encode(text)

    def run():
        model = TinyGPT(vocab.size, 16, d_model=16, n_heads=2, n_layers=1, rng=0)
        history = train(model, lambda r: text_batch(ids, 8, 16, r), steps=60, rng=1, lr=2e-2, warmup=10,
                        progress=False)
        return model, history

    model, history = run()
    assert all(p.dtype == np.float32 for p in model.parameters().values())
    assert np.mean(history.loss[-10:]) < 0.5 * history.loss[0]
    _, again = run()
    assert again.loss == history.loss  # the same seed gives the same run, bit for bit


def test_per_position_loss_averages_to_the_mean_loss():
    model = _model()
    batch = text_windows(np.arange(25) % 7, 6)
    loss, _ = mha.grad.cross_entropy(model(batch.tokens), batch.targets)
    assert per_position_loss(model, batch).mean() == pytest.approx(loss, rel=1e-10)


def test_text_helpers():
    markdown = "---\na: 1\n---\n# Head\n\n$$\nx\n$$\nText \u2014 \u201cok\u201d."
    assert extract_prose(markdown) == 'Head\nText - "ok".'
    text = course_text()
    assert len(text) > 50_000 and text.isascii()
    vocab = CharVocabulary(text)
    assert vocab.decode(vocab.encode(text[:500])) == text[:500]
    ids = vocab.encode(text)
    held = text_windows(ids[-2000:], 50)
    bigram = bigram_loss(ids[:-2000], held.tokens, held.targets, vocab.size)
    assert bigram < unigram_loss(ids[:-2000], held.targets, vocab.size) < np.log(vocab.size)
    with pytest.raises(ValueError, match="not in the vocabulary"):
        vocab.encode("\u00e9")
