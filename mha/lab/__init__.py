"""The course's lab: the experiments, toy data and measurements the chapters run on the core library.

Nothing here is part of the attention library a learner studies (that is :mod:`mha`, flat); these
modules *use* it. A module named after a chapter (or starting with its name) holds what that chapter
alone runs; the others are shared:

``self_attention``       why scores are divided by sqrt(d_head): entropy and saturation against d_head
``shapes``               a trace of every array shape inside a layer
``cross_attention``      a hand-built cross-attention alignment between two word orders (a toy translation)
``positions``            what a relative bias or ALiBi does to attention
``heads_that_learn``     how the number of heads affects quality: one model per head count, several seeds
``efficient_attention``  pooling key/value heads (multi-query and grouped-query attention)
``modern_attention``     windows and their reach, sinks and streaming, long contexts, logits under QK-norm
``transformer_block``    stacks of blocks, and the residual stream through them
``tiny_gpt``             a tiny GPT trained on the course's prose
``encoder_decoder``      a tiny encoder-decoder, and tasks whose alignment is known
``real_heads``           kinds of heads in a pretrained model, surveyed

``self_attention_one_head``: one head's arithmetic step by step, and keys and a query drawn in two
dimensions. ``heads_that_learn_circuits``: a head's QK and OV circuits, read off its weights.

Shared: ``models`` (the three models' base, and the attention-only model), ``training`` (Adam, the
schedule and the loop), ``tasks`` (synthetic tasks with known answers), ``text`` (the course's prose as
characters), ``examples`` (the course's sentences and deterministic toy embeddings), ``analysis`` (what
trained heads attend to, and pruning them), ``measure`` (timing and peak memory) and ``prose`` (numbers
a cell hands to the page's prose: :func:`glue`).

Chapters import from here: ``from mha.lab import toy_embeddings, trace_shapes``.
"""

from mha.lab import (
    analysis,
    cross_attention,
    efficient_attention,
    encoder_decoder,
    examples,
    heads_that_learn,
    heads_that_learn_circuits,
    measure,
    models,
    modern_attention,
    positions,
    prose,
    real_heads,
    self_attention,
    self_attention_one_head,
    shapes,
    tasks,
    text,
    tiny_gpt,
    training,
    transformer_block,
)
from mha.lab.analysis import (
    PruningCurve,
    head_entropy,
    head_importance,
    mean_attention_distance,
    pruning_curve,
    strongest_connections,
    weight_at_offset,
    weight_on,
)
from mha.lab.efficient_attention import fit_to_teacher, pool_kv_heads, relative_error
from mha.lab.encoder_decoder import Seq2Seq, Seq2SeqBatch, alignment_match, greedy_decode
from mha.lab.examples import LONG_TOKENS, PARAPHRASE_PAIRS, SENTENCES, head_weights, tokenize, toy_embeddings
from mha.lab.heads_that_learn import (
    RELATIONS,
    CardBatch,
    HeadCountSweep,
    blend_margin,
    card_relations,
    card_vocab_size,
    head_count_sweep,
    relation_accuracy,
    relation_margins,
)
from mha.lab.heads_that_learn_circuits import (
    HeadCircuits,
    argmax_share,
    head_circuits,
    ov_circuit,
    qk_circuit,
)
from mha.lab.measure import blas_threads, interleaved_seconds, median_seconds, peak_bytes
from mha.lab.models import AttentionOnlyModel, CausalLanguageModel, LanguageModel, ModelCache
from mha.lab.modern_attention import (
    bos_batch,
    bos_windows,
    cache_growth,
    context_losses,
    first_token_weight,
    largest_logit,
    logit_ranges,
    receptive_field,
    reread_losses,
    stream_losses,
    window_similarity,
)
from mha.lab.positions import BIAS_HEADS, alibi_weights, relative_bias_weights
from mha.lab.prose import glue
from mha.lab.real_heads import (
    DETERMINER_NOUN,
    KINDS,
    PATTERN_SCORES,
    DependencyScores,
    HeadSurvey,
    dependency_scores,
    labelled_pairs,
    survey_heads,
)
from mha.lab.self_attention import ScalingCurves, entropy, sample_scores, scaling_curves, sentence_scores
from mha.lab.self_attention_one_head import (
    STEPS,
    HeadWalkthrough,
    KeyGeometry,
    SoftLookup,
    geometry_weights,
    head_walkthrough,
    key_geometry,
    soft_lookup,
)
from mha.lab.shapes import (
    ShapeStep,
    head_assignment,
    seeded_head_weights,
    token_influence,
    trace_layer,
    trace_shapes,
)
from mha.lab.tasks import Batch, repeated_tokens, token_names
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
from mha.lab.training import Adam, TrainingHistory, evaluate, learning_rates, train
from mha.lab.transformer_block import build_stack, residual_statistics, residual_stream, stack_statistics

__all__ = [
    # modules
    "self_attention", "shapes", "cross_attention", "positions", "heads_that_learn", "efficient_attention",
    "transformer_block", "tiny_gpt", "encoder_decoder", "real_heads", "examples", "tasks", "training",
    "modern_attention",
    "analysis", "measure", "text", "models", "self_attention_one_head",
    "heads_that_learn_circuits", "prose",
    # one head's arithmetic, queries and keys in two dimensions
    "STEPS", "HeadWalkthrough", "head_walkthrough", "KeyGeometry", "key_geometry", "geometry_weights",
    "SoftLookup", "soft_lookup",
    # a head's QK and OV circuits
    "HeadCircuits", "head_circuits", "qk_circuit", "ov_circuit", "argmax_share",
    # examples
    "SENTENCES", "PARAPHRASE_PAIRS", "LONG_TOKENS", "tokenize", "toy_embeddings", "head_weights",
    # shapes and scaling
    "ShapeStep", "trace_layer", "trace_shapes", "head_assignment", "token_influence", "seeded_head_weights",
    "sample_scores", "sentence_scores", "entropy", "ScalingCurves", "scaling_curves",
    # positions, residual stream
    "BIAS_HEADS", "relative_bias_weights", "alibi_weights",
    "build_stack", "residual_stream", "residual_statistics", "stack_statistics",
    # training and analysis
    "Batch", "repeated_tokens", "token_names",
    "LanguageModel", "CausalLanguageModel", "ModelCache", "AttentionOnlyModel",
    "Adam", "TrainingHistory", "evaluate", "learning_rates", "train",
    "head_entropy", "mean_attention_distance", "weight_on", "weight_at_offset", "strongest_connections",
    "head_importance", "PruningCurve", "pruning_curve",
    "PATTERN_SCORES", "KINDS", "HeadSurvey", "survey_heads",
    "DETERMINER_NOUN", "DependencyScores", "labelled_pairs", "dependency_scores",
    # how the number of heads affects quality
    "RELATIONS", "CardBatch", "card_relations", "card_vocab_size", "relation_accuracy", "HeadCountSweep",
    "head_count_sweep", "relation_margins", "blend_margin",
    "pool_kv_heads", "relative_error", "fit_to_teacher",
    # measurement, and the numbers the prose quotes
    "median_seconds", "interleaved_seconds", "peak_bytes", "blas_threads", "glue",
    # a tiny GPT that writes
    "extract_prose", "course_text", "CharVocabulary", "text_batch", "text_windows", "bigram_loss",
    "unigram_loss", "TinyGPT", "sample_next", "generate", "per_position_loss",
    # modern attention
    "bos_batch", "bos_windows", "first_token_weight", "window_similarity", "stream_losses", "reread_losses",
    "context_losses",
    "receptive_field", "cache_growth", "largest_logit", "logit_ranges",
    # a tiny encoder-decoder
    "Seq2Seq", "greedy_decode", "Seq2SeqBatch", "alignment_match",
]  # fmt: skip
