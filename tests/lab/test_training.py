"""The tiny model's gradient (every parameter, by finite differences), Adam, and seeded training."""

import math

import numpy as np
import pytest

from mha.grad import cross_entropy
from mha.lab.models import AttentionOnlyModel
from mha.lab.tasks import repeated_tokens
from mha.lab.training import Adam, evaluate, learning_rates, progress_bar, train
from tests.gradcheck import assert_gradients_match, numerical_gradient


def tiny_model(dtype=np.float64, seed=0):
    return AttentionOnlyModel(vocab_size=6, seq_len=7, d_model=8, n_heads=2, rng=seed, dtype=dtype)


def tiny_batch(seed=1):
    return repeated_tokens(3, 7, 6, min_period=2, max_period=3, rng=seed)


def test_model_gradient_matches_finite_differences_for_every_parameter():
    model, batch = tiny_model(), tiny_batch()
    for layer in model.layers:  # non-zero biases, so that their paths are exercised
        layer.b_o = np.random.default_rng(2).standard_normal(layer.b_o.shape)

    def loss():
        return cross_entropy(model(batch.tokens), batch.targets, batch.loss_mask)[0]

    value, grads = model.loss_and_grads(batch)
    assert value == pytest.approx(loss(), rel=1e-12)
    assert sorted(grads) == sorted(model.parameters())
    for name, arr in model.parameters().items():
        assert_gradients_match(grads[name], numerical_gradient(loss, arr), name)


def test_unused_positions_and_tokens_get_zero_gradient():
    model = tiny_model()
    batch = tiny_batch()
    short = type(batch)(batch.tokens[:, :5], batch.targets[:, :5], batch.loss_mask[:, :5], batch.period,
                        batch.start)
    _, grads = model.loss_and_grads(short)
    assert np.all(grads["position_embedding"][5:] == 0)
    unused = sorted(set(range(6)) - set(short.tokens.ravel().tolist()))
    assert np.all(grads["token_embedding"][unused] == 0)


def test_head_mask_of_zeros_for_a_layer_leaves_only_its_output_bias():
    model, batch = tiny_model(), tiny_batch()
    model.layers[1].b_o = np.arange(8.0)
    off = np.array([[1.0, 1.0], [0.0, 0.0]])
    logits = model(batch.tokens, head_mask=off)
    h = model.token_embedding[batch.tokens] + model.position_embedding[:7]
    h = h + model.layers[0](h, causal=True)
    expected = (h + model.layers[1].b_o) @ model.unembedding
    np.testing.assert_allclose(logits, expected, rtol=1e-12)
    with pytest.raises(ValueError, match=r"head_mask must have shape \(n_layers, n_heads\) = \(2, 2\)"):
        model(batch.tokens, head_mask=np.ones(2))


def test_model_refuses_bad_tokens():
    model = tiny_model()
    with pytest.raises(ValueError, match=r"token ids must lie in \[0, 6\)"):
        model(np.array([[0, 6]]))
    with pytest.raises(ValueError, match="1 to seq_len=7"):
        model(np.zeros((1, 8), dtype=int))
    with pytest.raises(ValueError, match="integers"):
        model(np.zeros((1, 3)))


def test_float32_model_computes_in_float32():
    model = tiny_model(np.float32)
    loss, grads = model.loss_and_grads(tiny_batch())
    assert model(tiny_batch().tokens).dtype == np.float32
    assert {g.dtype for g in grads.values()} == {np.dtype(np.float32)}
    assert math.isfinite(loss)


def test_adam_follows_its_update_rule():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(4)
    grads = [rng.standard_normal(4) for _ in range(3)]
    expected, m, v = x.copy(), np.zeros(4), np.zeros(4)
    for t, g in enumerate(grads, start=1):
        m = 0.9 * m + 0.1 * g
        v = 0.99 * v + 0.01 * g**2
        m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.99**t)
        expected -= 0.05 * m_hat / (np.sqrt(v_hat) + 1e-8)
    opt = Adam({"x": x}, lr=0.05)
    for g in grads:
        opt.step({"x": g})
    np.testing.assert_allclose(x, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="missing"):
        opt.step({})


def _short_run(seed, steps=6):
    model = AttentionOnlyModel(8, 10, d_model=8, n_heads=2, rng=seed)
    probe = repeated_tokens(1, 10, 8, min_period=3, max_period=4, rng=0).tokens[0]
    history = train(model, lambda rng: repeated_tokens(8, 10, 8, min_period=3, max_period=4, rng=rng),
                    steps=steps, rng=seed, lr=1e-2, warmup=2, probe=probe, snapshot_steps=(0, steps),
                    progress=False)
    return model, history


def test_training_with_the_same_seed_repeats_exactly_and_another_seed_differs():
    model_a, history_a = _short_run(0)
    model_b, history_b = _short_run(0)
    _, history_c = _short_run(1)
    assert history_a.loss == history_b.loss
    for name, arr in model_a.parameters().items():
        np.testing.assert_array_equal(arr, model_b.parameters()[name])
    assert history_a.loss != history_c.loss
    assert sorted(history_a.snapshots) == [0, 6]
    assert len(history_a.loss) == len(history_a.accuracy) == 6
    assert history_a.snapshots[0][0].shape == (2, 10, 10)
    assert not np.allclose(history_a.snapshots[0][0], history_a.snapshots[6][0])  # the heads moved


def test_training_lowers_the_loss():
    model = AttentionOnlyModel(8, 10, d_model=16, n_heads=2, rng=0)
    test = repeated_tokens(64, 10, 8, min_period=3, max_period=4, rng=99)
    before, _ = evaluate(model, test)
    train(model, lambda rng: repeated_tokens(16, 10, 8, min_period=3, max_period=4, rng=rng),
          steps=40, rng=0, progress=False)
    after, _ = evaluate(model, test)
    assert after < before - 0.5


def test_snapshots_need_a_probe():
    with pytest.raises(ValueError, match="probe"):
        train(tiny_model(), lambda rng: tiny_batch(), steps=1, rng=0, snapshot_steps=(0,), progress=False)


def test_learning_rate_warms_up_then_decays_to_a_tenth():
    rates = learning_rates(0.02, 200, warmup=20)
    assert rates[0] == pytest.approx(0.02 / 20 * 1.0, rel=1e-3)
    assert np.all(np.diff(rates[:20]) > 0) and np.all(np.diff(rates[20:]) < 0)
    assert rates.max() <= 0.02 and rates[-1] == pytest.approx(0.002, rel=1e-3)


def test_copy_is_independent_and_identical():
    model, batch = tiny_model(), tiny_batch()
    twin = model.copy()
    np.testing.assert_array_equal(twin(batch.tokens), model(batch.tokens))
    before = model(batch.tokens)
    train(twin, lambda rng: tiny_batch(), steps=3, rng=0, progress=False)
    np.testing.assert_array_equal(model(batch.tokens), before)  # the original did not move
    assert not np.allclose(twin(batch.tokens), before)
    fused = twin.layers[0]._W_qkv  # the fused storage the forward pass reads stayed in sync
    np.testing.assert_array_equal(fused[:, :8], twin.layers[0].W_q)


def test_held_out_batch_is_evaluated_at_snapshot_steps():
    model, held_out = tiny_model(), tiny_batch(5)
    history = train(model, lambda rng: tiny_batch(), steps=4, rng=0, snapshot_steps=(0, 4), held_out=held_out,
                    progress=False)
    assert sorted(history.evaluations) == [0, 4] and history.snapshots == {}
    assert history.evaluations[4] == evaluate(model, held_out)


def test_progress_bar_of_a_finished_run_is_full(monkeypatch):
    """A finished run's bar reads steps/steps (a notebook bar closed short of its total turns red)."""
    import tqdm.auto

    bars = []

    class RecordingBar(tqdm.auto.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bars.append(self)

    monkeypatch.setattr(tqdm.auto, "tqdm", RecordingBar)
    train(tiny_model(), lambda rng: tiny_batch(), steps=3, rng=0, progress=True)
    assert len(bars) == 1
    assert (bars[0].n, bars[0].total) == (3, 3)



def test_training_runs_without_tqdm(without_tqdm):
    """The bar is decoration: with tqdm missing, train() trains silently and gives the same run."""
    model = tiny_model()
    history = train(model, lambda rng: tiny_batch(), steps=3, rng=0, progress=True)
    assert len(history.loss) == 3
    twin = tiny_model()
    assert train(twin, lambda rng: tiny_batch(), steps=3, rng=0, progress=False).loss == history.loss


def test_the_stand_in_bar_counts_nothing_and_enters_as_itself(without_tqdm):
    bar = progress_bar(5, show=True)
    with bar as entered:
        entered.update(1)  # nullcontext alone would have handed out None here
    assert entered is bar and not hasattr(bar, "n")
