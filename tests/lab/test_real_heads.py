"""mha.lab.real_heads: scores and kinds of hand-made heads, pooled over word queries only."""

import math

import numpy as np
import pytest

from mha.lab.real_heads import (
    DETERMINER_NOUN,
    PATTERN_SCORES,
    HeadSurvey,
    dependency_scores,
    labelled_pairs,
    survey_heads,
)
from mha.pretrained import BatchEncoding

KINDS = (*PATTERN_SCORES, "broad", "mixed")
OTHER_SCORES = ("entropy (nats)", "breadth", "mean distance (tokens)")


# --- hand-made heads: each maps a text of n real tokens ([CLS] words [SEP]) to its (n, n) weights -------


def previous(n):
    w = np.eye(n, k=-1)
    w[0, 0] = 1.0  # [CLS] has no previous token
    return w


def following(n):
    w = np.eye(n, k=1)
    w[-1, -1] = 1.0  # [SEP] has no next token
    return w


def same(n):
    return np.eye(n)


def on_cls(n):
    w = np.zeros((n, n))
    w[:, 0] = 1.0
    return w


def on_sep(n):
    w = np.zeros((n, n))
    w[:, -1] = 1.0
    return w


def uniform(n):
    return np.full((n, n), 1.0 / n)


def blurred_previous(n, back=0.45, ahead=0.35, itself=0.2):
    """Word queries split their weight between the previous, the next and their own token."""
    w = uniform(n)  # the special rows do not count anyway
    for i in range(1, n - 1):
        w[i] = 0.0
        w[i, i - 1], w[i, i + 1], w[i, i] = back, ahead, itself
    return w


def words_only(n):
    """Word queries spread evenly over the word keys, none on [CLS] or [SEP]."""
    w = uniform(n)
    w[1:-1] = 0.0
    w[1:-1, 1:-1] = 1.0 / (n - 2)
    return w


def make_batch(lengths, heads, *, pad_rows=None):
    """A BatchEncoding of texts with ``lengths`` real tokens each (right-padded), ``heads[layer][head]``
    giving each head's weights. ``pad_rows`` fills the padded query rows (zeros by default)."""
    n_layers, n_heads, seq = len(heads), len(heads[0]), max(lengths)
    tokens = [["[CLS]", *(f"w{i}" for i in range(1, n - 1)), "[SEP]"] for n in lengths]
    mask = np.zeros((len(lengths), seq), dtype=bool)
    special = np.zeros((len(lengths), seq), dtype=bool)
    attentions = np.zeros((len(lengths), n_layers, n_heads, seq, seq))
    for b, n in enumerate(lengths):
        mask[b, :n] = True
        special[b, [0, n - 1]] = True
        for layer, row in enumerate(heads):
            for head, pattern in enumerate(row):
                attentions[b, layer, head, :n, :n] = pattern(n)
                if pad_rows is not None:
                    attentions[b, layer, head, n:] = pad_rows(seq - n, seq)
    ids = np.where(mask, np.arange(seq) + 100, 0).astype(np.int64)
    hidden = np.zeros((len(lengths), seq, 4))
    return BatchEncoding(tokens, ids, mask, special, hidden, attentions)


LAYOUT = [[previous, following, same, on_cls], [on_sep, uniform, blurred_previous, previous]]
LAYOUT_KINDS = [["previous token", "next token", "same token", "[CLS]"],
                ["[SEP]", "broad", "mixed", "previous token"]]
LENGTHS = (7, 5, 6)  # 5, 3 and 4 words; the shorter texts are padded


def word_positions(lengths):
    """(text, position) of every word query, pooled over the batch."""
    return [(b, i) for b, n in enumerate(lengths) for i in range(1, n - 1)]


# --- kinds and scores of pure patterns ------------------------------------------------------------------


def test_each_pure_pattern_is_named_after_its_pattern():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    assert isinstance(survey, HeadSurvey)
    assert survey.kinds.shape == (2, 4)
    assert survey.kinds.tolist() == LAYOUT_KINDS
    assert set(survey.scores) == {*PATTERN_SCORES, *OTHER_SCORES}
    for values in survey.scores.values():
        assert values.shape == (2, 4)
    assert (survey.threshold, survey.broad) == (0.5, 0.8)


@pytest.mark.parametrize(("layer", "head", "score"), [
    (0, 0, "previous token"), (1, 3, "previous token"), (0, 1, "next token"), (0, 2, "same token"),
    (0, 3, "[CLS]"), (1, 0, "[SEP]"),
])
def test_a_pure_pattern_scores_one_on_its_pattern(layer, head, score):
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    assert survey.scores[score][layer, head] == pytest.approx(1.0, abs=1e-12)
    others = [name for name in PATTERN_SCORES if name != score]
    assert all(survey.scores[name][layer, head] < 0.5 for name in others)


def test_scores_that_a_pure_pattern_leaves_to_the_edges():
    """A previous-token head puts the first word's weight on [CLS]: 1 word query in 12 (5 + 3 + 4 words)."""
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    n_words = sum(n - 2 for n in LENGTHS)
    assert survey.scores["[CLS]"][0, 0] == pytest.approx(len(LENGTHS) / n_words)
    assert survey.scores["[SEP]"][0, 1] == pytest.approx(len(LENGTHS) / n_words)  # next of the last word
    assert survey.scores["same token"][0, 0] == pytest.approx(0.0)
    assert survey.scores["previous token"][0, 3] == pytest.approx(1 / n_words * len(LENGTHS))


def test_uniform_head_has_breadth_one_and_entropy_log_n():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    assert survey.scores["breadth"][1, 1] == pytest.approx(1.0, abs=1e-12)
    words = word_positions(LENGTHS)
    expected_entropy = np.mean([math.log(LENGTHS[b]) for b, _ in words])
    assert survey.scores["entropy (nats)"][1, 1] == pytest.approx(expected_entropy)
    for name in PATTERN_SCORES:  # 1/n of the weight everywhere: no pattern
        assert survey.scores[name][1, 1] < 0.5


def test_focused_heads_have_zero_entropy_and_their_distance():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    for layer, head in [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]:
        assert survey.scores["entropy (nats)"][layer, head] == pytest.approx(0.0, abs=1e-12)
        assert survey.scores["breadth"][layer, head] == pytest.approx(0.0, abs=1e-12)
    distance = survey.scores["mean distance (tokens)"]
    assert distance[0, 0] == pytest.approx(1.0)  # one back
    assert distance[0, 1] == pytest.approx(1.0)  # one ahead
    assert distance[0, 2] == pytest.approx(0.0)  # itself
    words = word_positions(LENGTHS)
    assert distance[0, 3] == pytest.approx(np.mean([i for _, i in words]))  # back to position 0
    assert distance[1, 0] == pytest.approx(np.mean([LENGTHS[b] - 1 - i for b, i in words]))  # on to [SEP]


def test_sep_is_found_at_the_end_of_each_padded_text():
    survey = survey_heads(make_batch((4, 8), [[on_sep]]))
    assert survey.scores["[SEP]"][0, 0] == pytest.approx(1.0)
    assert survey.scores["[CLS]"][0, 0] == pytest.approx(0.0)
    assert survey.kinds[0, 0] == "[SEP]"


# --- everything against a loop over word queries -------------------------------------------------------


def reference_scores(batch):
    """Each statistic per word query, pooled over the batch (loops, from the definitions)."""
    _, n_layers, n_heads, _, _ = batch.attentions.shape
    words = [(b, i) for b in range(len(batch)) for i in range(len(batch.tokens[b]))
             if not batch.special[b, i]]
    names = (*PATTERN_SCORES, "entropy (nats)", "mean distance (tokens)")
    out = {name: np.zeros((n_layers, n_heads)) for name in names}
    for layer in range(n_layers):
        for head in range(n_heads):
            rows = {name: [] for name in names}
            for b, i in words:
                n = len(batch.tokens[b])
                w = batch.attentions[b, layer, head, i, :n]
                rows["previous token"].append(w[i - 1])
                rows["next token"].append(w[i + 1])
                rows["same token"].append(w[i])
                rows["[CLS]"].append(w[0])
                rows["[SEP]"].append(w[n - 1])
                rows["entropy (nats)"].append(-sum(v * math.log(v) for v in w if v > 0))
                rows["mean distance (tokens)"].append(sum(v * abs(j - i) for j, v in enumerate(w)))
            for name in names:
                out[name][layer, head] = np.mean(rows[name])
    log_keys = np.mean([math.log(len(batch.tokens[b])) for b, _ in words])
    out["breadth"] = out["entropy (nats)"] / log_keys
    return out


def random_heads(rng, n_layers, n_heads):
    def head(n):
        return rng.dirichlet(np.full(n, 0.5), size=n)

    return [[head] * n_heads for _ in range(n_layers)]


def test_scores_match_a_loop_over_word_queries():
    rng = np.random.default_rng(0)
    batch = make_batch((6, 4, 9), random_heads(rng, 2, 3))
    survey = survey_heads(batch)
    expected = reference_scores(batch)
    for name, values in expected.items():
        np.testing.assert_allclose(survey.scores[name], values, rtol=1e-12, atol=1e-12, err_msg=name)


def test_padding_and_special_query_rows_do_not_count():
    rng = np.random.default_rng(1)
    batch = make_batch((7, 4, 5), random_heads(rng, 2, 2))
    changed = batch.attentions.copy()
    for b, tokens in enumerate(batch.tokens):
        n = len(tokens)
        # special queries: everything on [CLS] instead of their own pattern
        changed[b, :, :, [0, n - 1], :] = 0.0
        changed[b, :, :, [0, n - 1], 0] = 1.0
        # padded queries: anything, even on padded keys
        changed[b, :, :, n:, :] = rng.random(changed[b, :, :, n:, :].shape)
    other = BatchEncoding(batch.tokens, batch.ids, batch.mask, batch.special, batch.hidden, changed)
    before, after = survey_heads(batch), survey_heads(other)
    assert set(before.scores) == set(after.scores)
    for name in before.scores:
        np.testing.assert_allclose(after.scores[name], before.scores[name], rtol=1e-12, err_msg=name)
    assert after.kinds.tolist() == before.kinds.tolist()


def test_special_rows_on_cls_do_not_make_a_cls_head():
    """[CLS] and [SEP] rows looking at [CLS] would make a previous-token head look like a [CLS] head."""
    def previous_but_specials_on_cls(n):
        w = previous(n)
        w[-1] = 0.0
        w[-1, 0] = 1.0
        return w

    survey = survey_heads(make_batch((4, 4), [[previous_but_specials_on_cls]]))
    assert survey.kinds[0, 0] == "previous token"
    assert survey.scores["[CLS]"][0, 0] == pytest.approx(0.5)  # 1 of the 2 words per text
    assert survey.scores["previous token"][0, 0] == pytest.approx(1.0)


# --- threshold and broad ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("threshold", "kind"), [(0.5, "mixed"), (0.46, "mixed"), (0.44, "previous token"),
                                                 (0.3, "previous token"), (0.1, "previous token")])
def test_threshold_names_the_largest_pattern_at_or_above_it(threshold, kind):
    survey = survey_heads(make_batch((6, 5), [[blurred_previous]]), threshold=threshold)
    assert survey.scores["previous token"][0, 0] == pytest.approx(0.45)
    assert survey.scores["next token"][0, 0] == pytest.approx(0.35)
    assert survey.scores["same token"][0, 0] == pytest.approx(0.2)
    assert survey.kinds[0, 0] == kind
    assert survey.threshold == threshold


def test_the_larger_pattern_wins_when_several_pass():
    def blurred_next(n):
        return blurred_previous(n, back=0.3, ahead=0.6, itself=0.1)

    survey = survey_heads(make_batch((6,), [[blurred_previous, blurred_next]]), threshold=0.3)
    assert survey.kinds.tolist() == [["previous token", "next token"]]


@pytest.mark.parametrize(("broad", "kind"), [(0.8, "mixed"), (0.78, "mixed"), (0.77, "broad"),
                                             (0.5, "broad")])
def test_broad_sets_the_breadth_of_a_broad_head(broad, kind):
    survey = survey_heads(make_batch((6,), [[words_only]]), broad=broad)
    expected = math.log(4) / math.log(6)  # uniform over 4 of the 6 keys: 0.7737
    assert survey.scores["breadth"][0, 0] == pytest.approx(expected)
    assert survey.kinds[0, 0] == kind


def test_a_pattern_beats_breadth():
    survey = survey_heads(make_batch((6,), [[words_only]]), threshold=0.1, broad=0.5)
    assert survey.scores["previous token"][0, 0] == pytest.approx(3 / 16)  # 1st word: previous is [CLS]
    assert survey.kinds[0, 0] == "same token"  # 1/4 for every word, the largest pattern score


# --- heads() and counts() ---------------------------------------------------------------------------------


def test_heads_lists_layer_head_pairs_in_order():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    assert survey.heads("previous token") == [(0, 0), (1, 3)]
    assert survey.heads("broad") == [(1, 1)]
    assert survey.heads("mixed") == [(1, 2)]
    assert all(type(i) is int for pair in survey.heads("previous token") for i in pair)
    uniform_only = survey_heads(make_batch(LENGTHS, [[uniform, uniform]]))
    assert uniform_only.heads("previous token") == []


def test_counts_lists_every_kind_zeros_included():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    counts = survey.counts()
    assert list(counts) == list(KINDS)
    assert counts == {"previous token": 2, "next token": 1, "same token": 1, "[CLS]": 1, "[SEP]": 1,
                      "broad": 1, "mixed": 1}
    only_uniform = survey_heads(make_batch(LENGTHS, [[uniform, uniform, uniform]])).counts()
    assert only_uniform["broad"] == 3
    assert sum(only_uniform.values()) == 3 and only_uniform["[CLS]"] == 0


def test_heads_rejects_an_unknown_kind():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT))
    with pytest.raises(ValueError, match=r"kind must be one of .*'previous token'.*got 'previous'"):
        survey.heads("previous")


# --- bad input ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 0.0, -0.1, 1.01, 2, float("nan"), True, "0.5", None])
@pytest.mark.parametrize("name", ["threshold", "broad"])
def test_fractions_must_be_in_zero_one(name, value):
    batch = make_batch(LENGTHS, LAYOUT)
    with pytest.raises(ValueError, match=rf"{name} must be a number in \(0, 1\]"):
        survey_heads(batch, **{name: value})


def test_fractions_of_one_are_allowed():
    survey = survey_heads(make_batch(LENGTHS, LAYOUT), threshold=1, broad=1.0)
    assert survey.kinds[0, 0] == "previous token"  # a score of exactly 1 reaches a threshold of 1
    assert survey.kinds[1, 2] == "mixed"


def test_batch_without_attentions():
    batch = make_batch(LENGTHS, LAYOUT)
    bare = BatchEncoding(batch.tokens, batch.ids, batch.mask, batch.special, batch.hidden, None)
    with pytest.raises(ValueError, match="return_attentions=True"):
        survey_heads(bare)
    with pytest.raises(ValueError, match=r"\(batch, n_layers, n_heads, seq, seq\)"):
        survey_heads(batch[0])  # one Encoding: attentions of shape (n_layers, n_heads, seq, seq)
    with pytest.raises(ValueError, match="BatchEncoding"):
        survey_heads(batch.attentions)


def test_batch_of_special_tokens_only():
    batch = make_batch((2, 2), [[uniform]])  # "[CLS] [SEP]" twice: no word
    assert batch.tokens[0] == ["[CLS]", "[SEP]"]
    with pytest.raises(ValueError, match="no word tokens"):
        survey_heads(batch)


# --- a grammatical relation against hand labels ------------------------------------------------------------

def test_labelled_pairs_find_the_nth_occurrence_and_name_what_is_missing():
    tokens = ["[CLS]", "the", "cat", "saw", "the", "dog", "[SEP]"]
    assert labelled_pairs(tokens, ["the cat", "the#2 dog", "saw the#2"]) == [(1, 2), (4, 5), (3, 4)]
    with pytest.raises(ValueError, match="'the' appears 2 time"):
        labelled_pairs(tokens, ["the#3 dog"])
    with pytest.raises(ValueError, match="names two words"):
        labelled_pairs(tokens, ["the cat dog"])


def test_the_hand_labels_link_each_determiner_to_a_later_noun_once():
    for sentence, labels in DETERMINER_NOUN:
        determiners = [label.split()[0] for label in labels]
        assert len(set(determiners)) == len(determiners), sentence
        words = sentence.lower().rstrip(".").split()
        pairs = labelled_pairs(["[CLS]", *words, "[SEP]"], labels)
        assert all(0 < query < key for query, key in pairs), sentence  # the noun comes after
    assert len(DETERMINER_NOUN) == 20 and sum(len(labels) for _, labels in DETERMINER_NOUN) == 58


def test_a_head_that_points_at_the_labelled_word_scores_one_and_the_baselines_count_by_hand():
    lengths = (7, 6)  # 5 and 4 words between [CLS] and [SEP]
    pairs = [[(1, 3), (4, 5)], [(2, 4)]]  # distances 2, 1, 2

    def to_labels(n):  # every word looks two ahead, or at the last word when it cannot: right every time
        w = np.zeros((n, n))
        for q in range(n):
            w[q, min(q + 2, n - 2)] = 1.0
        return w

    def to_cls(n):
        return on_cls(n)

    scores = dependency_scores(make_batch(lengths, [[to_labels, to_cls]]), pairs)
    np.testing.assert_array_equal(scores.accuracy, [[1.0, 0.0]])  # all three; none from [CLS]
    assert scores.best() == (0, 0)
    assert scores.offset == 2 and scores.offset_accuracy == pytest.approx(2 / 3)
    np.testing.assert_array_equal(scores.distances, [2, 1, 2])
    # a random head picks one of the other words: 1/4, 1/4 in the first text, 1/3 in the second
    assert scores.random_head == pytest.approx((1 / 4 + 1 / 4 + 1 / 3) / 3)
    assert scores.hits.shape == (1, 2, 3) and scores.hits[0, 0].all()


def test_dependency_scores_refuse_pairs_that_do_not_link_two_words():
    batch = make_batch((6,), [[uniform]])
    with pytest.raises(ValueError, match="two different words"):
        dependency_scores(batch, [[(0, 2)]])  # [CLS] is not a word
    with pytest.raises(ValueError, match="one sentence's pairs per sentence"):
        dependency_scores(batch, [[(1, 2)], [(1, 2)]])
