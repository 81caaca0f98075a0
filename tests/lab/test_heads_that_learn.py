"""mha.lab.heads_that_learn: the card task's answers, per-relation accuracy, a sweep over head counts, and
what one head's blend can carry."""

import itertools
import math

import numpy as np
import pytest

from mha.lab import AttentionOnlyModel, evaluate
from mha.lab.heads_that_learn import (
    RELATIONS,
    HeadCountSweep,
    blend_margin,
    card_relations,
    card_vocab_size,
    head_count_sweep,
    relation_accuracy,
    relation_margins,
)

TINY = dict(d_model=8, n_seeds=3, steps=4, batch=4, n_colours=3, n_numbers=3, n_held_out=6, progress=False)


def answers_by_loops(tokens, n_numbers):
    """The three numbers at every second card, found one position at a time (the slow, obvious way)."""
    colours, numbers = tokens // n_numbers, tokens % n_numbers
    expected = {}
    for b, row in enumerate(colours):
        for t in range(1, len(row)):
            earlier = [j for j in range(t) if row[j] == row[t]]
            if earlier:
                expected[b, t] = (numbers[b, t - 1], numbers[b, earlier[0]], numbers[b, 0])
    return expected


@pytest.mark.parametrize("n_colours, n_numbers", [(2, 2), (5, 3), (8, 4)])
def test_cards_hold_each_colour_twice_and_the_answers_the_three_relations_ask_for(n_colours, n_numbers):
    cards = card_relations(20, n_colours, n_numbers, rng=3)
    seq = 2 * n_colours
    assert cards.tokens.shape == cards.targets.shape == cards.loss_mask.shape == (20, seq)
    assert cards.answers.shape == (20, seq, len(RELATIONS))
    colours = cards.tokens // n_numbers
    np.testing.assert_array_equal(np.sort(colours, axis=1), np.tile(np.repeat(np.arange(n_colours), 2),
                                                                    (20, 1)))
    expected = answers_by_loops(cards.tokens, n_numbers)
    assert set(zip(*np.nonzero(cards.loss_mask), strict=True)) == set(expected)
    for (b, t), numbers in expected.items():
        assert tuple(cards.answers[b, t]) == numbers
        assert cards.targets[b, t] == (numbers[0] * n_numbers + numbers[1]) * n_numbers + numbers[2]
    assert cards.targets.max() < card_vocab_size(n_colours, n_numbers)
    assert cards.tokens.max() < card_vocab_size(n_colours, n_numbers)
    assert np.all(cards.targets[~cards.loss_mask] == 0)


def test_cards_are_reproducible_from_a_seed_and_differ_between_seeds():
    a, b, c = (card_relations(4, 6, 4, rng=seed) for seed in (7, 7, 8))
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(a.targets, b.targets)
    assert not np.array_equal(a.tokens, c.tokens)


def test_cards_refuse_a_task_too_small_to_pose():
    with pytest.raises(ValueError, match="n_colours"):
        card_relations(2, 1, 4, rng=0)
    with pytest.raises(ValueError, match="n_numbers"):
        card_relations(2, 4, 1, rng=0)


def test_relation_accuracy_scores_each_number_of_the_answer_on_its_own():
    cards = card_relations(50, 4, 3, rng=1)
    vocab = card_vocab_size(4, 3)
    np.testing.assert_array_equal(relation_accuracy(np.eye(vocab)[cards.targets], cards, 3), [1, 1, 1])
    # Change only the last digit (the first card's number): the other two stay right.
    wrong_first = cards.targets - cards.answers[..., 2] + (cards.answers[..., 2] + 1) % 3
    np.testing.assert_array_equal(relation_accuracy(np.eye(vocab)[wrong_first], cards, 3), [1, 1, 0])


def test_sweep_has_one_result_per_head_count_and_seed_and_repeats_exactly():
    first = head_count_sweep((1, 2, 8), rng=5, **TINY)
    again = head_count_sweep((1, 2, 8), rng=np.random.default_rng(5), **TINY)
    assert first.loss.shape == first.accuracy.shape == (3, 3)
    assert first.relation_accuracy.shape == (3, 3, len(RELATIONS))
    assert first.loss.dtype == np.float64 and np.isfinite(first.loss).all()
    np.testing.assert_array_equal(first.head_counts, [1, 2, 8])
    np.testing.assert_array_equal(first.d_head, [8, 4, 1])
    assert first.chance_loss == pytest.approx(3 * math.log(3))
    for name in ("loss", "accuracy", "relation_accuracy"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert np.all((first.accuracy >= 0) & (first.accuracy <= 1))
    other = head_count_sweep((1, 2, 8), rng=6, **TINY)
    assert not np.array_equal(first.loss, other.loss)


def test_sweep_runs_without_tqdm_and_shows_the_same_numbers(without_tqdm):
    """The browser path: JupyterLite installs no tqdm, and the sweep's bar must not be needed."""
    silent = head_count_sweep((1, 2), rng=5, **{**TINY, "progress": True})
    np.testing.assert_array_equal(silent.loss, head_count_sweep((1, 2), rng=5, **TINY).loss)


def test_models_of_one_seed_start_from_the_same_numbers_split_into_different_heads():
    one, four = (AttentionOnlyModel(12, 6, d_model=8, n_heads=h, n_layers=1, rng=np.random.default_rng(3))
                 for h in (1, 4))
    for name, value in one.parameters().items():
        np.testing.assert_array_equal(value, four.parameters()[name])
    assert one.parameters()["layers.0.W_q"].dtype == np.float32


def test_sweep_summaries_average_over_seeds():
    loss = np.array([[2.0, 2.0, 2.0], [0.1, 0.3, 0.2]])
    sweep = HeadCountSweep(np.array([1, 4]), 8, loss, 1 - loss / 2, np.zeros((2, 3, 3)), np.ones(2), 3.0)
    np.testing.assert_allclose(sweep.mean("loss"), [2.0, 0.2])
    np.testing.assert_allclose(sweep.std("loss"), [0.0, 0.1])
    np.testing.assert_allclose(sweep.mean("accuracy"), [0.0, 0.9])
    assert sweep.mean("relation_accuracy").shape == (2, 3)
    assert sweep.best() == 4
    with pytest.raises(ValueError, match="metric must be .* got 'bleu'"):
        sweep.mean("bleu")


@pytest.mark.parametrize("head_counts, message", [
    ((1, 3), r"divide d_model=8; got \[3\] \(d_head would be 2.667\)"),
    ((), "non-empty"),
    ((1.0, 2.0), "positive integers"),
    ((0, 2), "positive integers"),
])
def test_sweep_refuses_head_counts_it_cannot_build(head_counts, message):
    with pytest.raises(ValueError, match=message):
        head_count_sweep(head_counts, rng=0, **TINY)


def test_sweep_refuses_zero_seeds():
    with pytest.raises(ValueError, match="n_seeds"):
        head_count_sweep((1,), rng=0, **{**TINY, "n_seeds": 0})


def test_a_smaller_query_key_start_scales_only_the_initial_queries_and_keys(monkeypatch):
    from mha.lab import heads_that_learn as module

    started = []

    def record_start(model, *args, **kwargs):  # the weights as training receives them
        started.append({name: value.copy() for name, value in model.parameters().items()})

    monkeypatch.setattr(module, "train", record_start)
    head_count_sweep((1, 2), rng=5, **TINY)
    head_count_sweep((1, 2), rng=5, qk_init_scale=0.1, **TINY)
    plain, small = started[:6], started[6:]
    for before, after in zip(plain, small, strict=True):
        for name, value in before.items():
            scale = 0.1 if name.endswith(("W_q", "W_k")) else 1.0
            np.testing.assert_allclose(after[name], value * scale, rtol=1e-6)
            assert after[name].dtype == value.dtype


def test_the_default_start_is_the_plain_sweep_and_a_smaller_one_trains_elsewhere():
    plain = head_count_sweep((1,), rng=5, **TINY)
    np.testing.assert_array_equal(plain.loss, head_count_sweep((1,), rng=5, qk_init_scale=1.0, **TINY).loss)
    assert not np.array_equal(plain.loss, head_count_sweep((1,), rng=5, qk_init_scale=0.1, **TINY).loss)


@pytest.mark.parametrize("scale", [0, -0.1, float("nan"), float("inf"), True, "0.1", None])
def test_a_query_key_scale_that_is_not_a_positive_number_is_refused(scale):
    with pytest.raises(ValueError, match="qk_init_scale must be a finite number > 0"):
        head_count_sweep((1,), rng=0, qk_init_scale=scale, **TINY)


def test_the_sweep_keeps_every_trained_model_and_its_held_out_cards():
    sweep = head_count_sweep((1, 2), rng=5, **TINY)
    model = sweep.model(2, 1)
    assert model.layers[0].n_heads == 2 and sweep.model(1, 0).layers[0].n_heads == 1
    loss, _ = evaluate(model, sweep.held_out)  # the kept model gives the recorded score
    assert loss == pytest.approx(sweep.loss[1, 1])
    with pytest.raises(ValueError, match="no run with n_heads=4"):
        sweep.model(4, 0)


# --- what a blend of one-hot values can carry ----------------------------------------------------------


def blends_by_loops(weights, n_numbers):
    """Every answer's blend, one answer at a time."""
    blends = {}
    for answer in itertools.product(range(n_numbers), repeat=len(weights)):
        vector = np.zeros(n_numbers)
        for share, number in zip(weights, answer, strict=True):
            vector[number] += share
        blends[answer] = vector
    return blends


@pytest.mark.parametrize("weights", [[1.0], [0.7, 0.3], [0.61, 0.32], [0.5, 0.3, 0.2], [0.4, 0.3, 0.2, 0.1]])
def test_blend_margin_is_the_closest_pair_of_blends_of_different_answers(weights):
    blends = list(blends_by_loops(weights, 3).values())
    closest = min(np.linalg.norm(a - b) for i, a in enumerate(blends) for b in blends[i + 1:])
    assert blend_margin(weights, 3) == pytest.approx(closest / math.sqrt(2))


def test_equal_shares_lose_the_order_and_halving_shares_are_the_best_a_grid_finds():
    assert blend_margin([0.5, 0.5]) == 0.0 and blend_margin([0.4, 0.4, 0.2]) == 0.0
    for k in (2, 3):
        halving = 2.0 ** np.arange(k)[::-1] / (2**k - 1)
        assert blend_margin(halving) == pytest.approx(1 / (2**k - 1))
        grid = [w for w in itertools.product(np.linspace(0, 1, 43), repeat=k) if abs(sum(w) - 1) < 1e-9]
        assert max(blend_margin(list(w), 2) for w in grid) <= 1 / (2**k - 1) + 1e-9


def test_blend_margin_refuses_shares_that_are_not_one_head_s_weight():
    for bad in ([], [0.7, 0.6], [-0.1, 0.5]):
        with pytest.raises(ValueError, match="non-negative shares"):
            blend_margin(bad)


def test_relation_margins_read_how_far_each_number_is_ahead():
    cards = card_relations(6, 3, 2, rng=1)
    logits = np.zeros((6, 6, 8))
    wrong_first = cards.targets ^ 1  # the first card's digit flipped: two numbers right, one wrong
    logits[np.arange(6)[:, None], np.arange(6), cards.targets] = 3.0
    logits[np.arange(6)[:, None], np.arange(6), wrong_first] = 5.0
    margins = relation_margins(logits, cards, 2)
    # 8 answers, 4 with each value of a number. The two favoured answers share the first two numbers:
    # right value e^5 + e^3 + 1 + 1, wrong value 4 times e^0.
    e3, e5 = math.exp(3), math.exp(5)
    np.testing.assert_allclose(margins[:2], math.log((e5 + e3 + 2) / 4))
    # the first card's number: the right value holds e^3 and three e^0, the wrong one e^5 and three
    assert margins[2] == pytest.approx(math.log((e3 + 3) / (e5 + 3)))
    assert np.allclose(relation_margins(np.zeros((6, 6, 8)), cards, 2), 0.0)  # a guess: no margin
