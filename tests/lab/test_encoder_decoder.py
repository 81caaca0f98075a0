"""The tiny encoder–decoder: gradients, padding, cached greedy decoding, tasks and their alignments."""

import numpy as np
import pytest

from mha.grad import cross_entropy
from mha.lab import train
from mha.lab.encoder_decoder import (
    BOS,
    EOS,
    PAD,
    TASKS,
    VOCABULARY,
    Seq2Seq,
    alignment_match,
    greedy_decode,
    make_batch,
    words,
)
from tests.gradcheck import assert_gradients_match


def _model(**kwargs):
    model = Seq2Seq(len(VOCABULARY), 10, d_model=8, n_heads=2, d_ff=12, rng=0, dtype=np.float64, **kwargs)
    rng = np.random.default_rng(1)
    for name, arr in model.parameters().items():
        if name.endswith(("b_q", "b_k", "b_v", "b_o", "b_1", "b_2", "beta", "gamma")):
            arr[...] += rng.standard_normal(arr.shape) * 0.3
    return model


@pytest.mark.parametrize("encoder_layers", [0, 1])
def test_gradients_match_finite_differences_on_a_padded_batch(encoder_layers):
    model = _model(encoder_layers=encoder_layers)
    batch = make_batch("translate", 3, rng=2)
    assert not batch.source_mask.all()  # ragged: some sources are padded

    def objective():
        return cross_entropy(model(batch.source, batch.source_mask, batch.tokens), batch.targets,
                             batch.loss_mask)[0]

    loss, grads, _ = model.loss_grads_and_logits(batch)
    assert loss == pytest.approx(objective(), rel=1e-12)
    assert set(grads) == set(model.parameters())
    rng = np.random.default_rng(3)
    for name, arr in model.parameters().items():
        chosen = rng.choice(arr.size, min(arr.size, 12), replace=False)
        picks = [np.unravel_index(i, arr.shape) for i in chosen]
        numeric = []
        for i in picks:  # arr may be a view into a fused matrix: nudge it in place
            original = arr[i]
            arr[i] = original + 1e-6
            up = objective()
            arr[i] = original - 1e-6
            down = objective()
            arr[i] = original
            numeric.append((up - down) / 2e-6)
        assert_gradients_match(np.array([grads[name][i] for i in picks]), np.array(numeric), name)


def test_padding_changes_nothing_for_the_real_tokens():
    model = _model()
    batch = make_batch("reverse", 1, rng=4, min_len=3, max_len=3)
    padded_source = np.concatenate([batch.source, np.full((1, 3), 7)], axis=1)  # junk behind the mask
    padded_mask = np.concatenate([batch.source_mask, np.zeros((1, 3), bool)], axis=1)
    a, cross_a = model(batch.source, batch.source_mask, batch.tokens, return_weights=True)
    b, cross_b = model(padded_source, padded_mask, batch.tokens, return_weights=True)
    np.testing.assert_allclose(a, b, rtol=1e-10)
    assert np.all(cross_b[-1][..., 4:] == 0)  # no weight on padding


@pytest.mark.parametrize("task", TASKS)
def test_tasks_are_consistent_with_their_alignment(task):
    batch = make_batch(task, 16, rng=5)
    for src, tgt, align, mask in zip(batch.source, batch.targets, batch.alignment, batch.loss_mask,
                                     strict=True):
        aligned = src[align[mask]]
        if task == "translate":
            english = [VOCABULARY[i] for i in aligned]
            french = [VOCABULARY[i] for i in tgt[mask]]
            assert english[-1] == french[-1] == "</s>"
            assert [VOCABULARY.index(w) for w in english[:-1]] != tgt[mask][:-1].tolist()  # translated
        else:
            np.testing.assert_array_equal(aligned, tgt[mask])  # the target token is the aligned source token
    assert np.all(batch.tokens[:, 0] == BOS)
    np.testing.assert_array_equal(batch.source_mask, batch.source != PAD)


def test_translation_puts_adjectives_after_their_noun():
    batch = make_batch("translate", 50, rng=6)
    for src, tgt in zip(batch.source, batch.targets, strict=True):
        english, french = words(src), words(tgt)
        for w in english:
            if w in ("big", "small", "red", "old", "black", "white"):
                adj = {"big": "grand", "small": "petit", "red": "rouge", "old": "vieux", "black": "noir",
                       "white": "blanc"}[w]
                j = french.index(adj)
                assert french[j - 1] not in ("le", "un")  # a noun comes before the adjective


def test_alignment_match_is_one_over_n_for_uniform_attention():
    cross = np.full((2, 3, 4, 5), 0.2)
    alignment = np.array([[0, 1, 2, -1], [4, 3, 2, 1]])
    np.testing.assert_allclose(alignment_match(cross, alignment), [0.2, 0.2, 0.2])


@pytest.mark.parametrize("encoder_layers", [0, 1])
def test_cached_greedy_decoding_equals_full_recomputation(encoder_layers):
    model = _model(encoder_layers=encoder_layers)
    batch = make_batch("sort", 4, rng=7)
    a, cross_a = greedy_decode(model, batch.source, batch.source_mask, bos=BOS, eos=EOS, max_new=6)
    b, cross_b = greedy_decode(model, batch.source, batch.source_mask, bos=BOS, eos=EOS, max_new=6,
                               use_cache=False)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(cross_a, cross_b, rtol=1e-10, atol=1e-14)
    assert np.all(cross_a[~np.broadcast_to(batch.source_mask[:, None, None], cross_a.shape)] == 0)


def test_copy_is_learned_and_greedy_decoding_reproduces_the_source():
    model = Seq2Seq(len(VOCABULARY), 10, d_model=32, n_heads=2, rng=0)
    history = train(model, lambda r: make_batch("copy", 32, r, max_len=5), steps=150, rng=1, lr=1e-2,
                    warmup=20, progress=False)
    assert np.mean(history.accuracy[-10:]) > 0.95
    test = make_batch("copy", 32, rng=8, max_len=5)
    out, _ = greedy_decode(model, test.source, test.source_mask, bos=BOS, eos=EOS)
    correct = [words(o)[:len(words(t))] == words(t) for o, t in zip(out, test.targets, strict=True)]
    assert np.mean(correct) > 0.9
