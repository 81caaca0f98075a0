"""The course's lab: the experiments, toy data and measurements the chapters run on the core library.

Nothing here is part of the attention library a learner studies (that is :mod:`mha`, flat); these
modules *use* it:

``examples``           the course's sentences and deterministic toy embeddings
``shapes``             a trace of every array shape inside a layer
``scaling``            why scores are divided by sqrt(d_head): entropy and saturation against d_head
``toy_translation``    a hand-built cross-attention alignment between two word orders
``position_examples``  what a relative bias or ALiBi does to attention
``tasks``, ``training``  synthetic tasks and a small attention-only model trained with Adam
``analysis``, ``head_survey``  what trained (and pretrained) heads attend to, and pruning them
``head_count``         how the number of heads affects quality: one model per head count, several seeds
``kv_sharing``         pooling key/value heads (multi-query and grouped-query attention)
``residual``           the residual stream through stacks of random blocks
``measure``            timing and peak memory, for the cost chapters
``text``, ``gpt``      the course's prose as characters, and a tiny GPT trained on it that writes
``seq2seq``, ``seq2seq_tasks``  a tiny encoder-decoder, and tasks whose alignment is known

Chapters import from here: ``from mha.lab import toy_embeddings, trace_shapes``.
"""

from mha.lab import (
    analysis,
    examples,
    gpt,
    head_count,
    head_survey,
    kv_sharing,
    measure,
    position_examples,
    residual,
    scaling,
    seq2seq,
    seq2seq_tasks,
    shapes,
    tasks,
    text,
    toy_translation,
    training,
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
from mha.lab.examples import LONG_TOKENS, PARAPHRASE_PAIRS, SENTENCES, head_weights, tokenize, toy_embeddings
from mha.lab.gpt import TinyGPT, generate, per_position_loss, sample_next
from mha.lab.head_count import (
    RELATIONS,
    CardBatch,
    HeadCountSweep,
    card_relations,
    card_vocab_size,
    head_count_sweep,
    relation_accuracy,
)
from mha.lab.head_survey import KINDS, PATTERN_SCORES, HeadSurvey, survey_heads
from mha.lab.kv_sharing import fit_to_teacher, pool_kv_heads, relative_error
from mha.lab.measure import blas_threads, interleaved_seconds, median_seconds, peak_bytes
from mha.lab.position_examples import BIAS_HEADS, alibi_weights, relative_bias_weights
from mha.lab.residual import build_stack, residual_statistics, residual_stream, stack_statistics
from mha.lab.scaling import ScalingCurves, entropy, sample_scores, scaling_curves, sentence_scores
from mha.lab.seq2seq import Seq2Seq, greedy_decode
from mha.lab.seq2seq_tasks import Seq2SeqBatch, alignment_match
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
from mha.lab.training import Adam, AttentionOnlyModel, TrainingHistory, evaluate, learning_rates, train

__all__ = [
    # modules
    "analysis", "examples", "head_count", "head_survey", "kv_sharing", "measure", "position_examples",
    "residual", "scaling", "shapes", "tasks", "toy_translation", "training", "text", "gpt", "seq2seq",
    "seq2seq_tasks",
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
    "AttentionOnlyModel", "Adam", "TrainingHistory", "evaluate", "learning_rates", "train",
    "head_entropy", "mean_attention_distance", "weight_on", "weight_at_offset", "strongest_connections",
    "head_importance", "PruningCurve", "pruning_curve",
    "PATTERN_SCORES", "KINDS", "HeadSurvey", "survey_heads",
    # how the number of heads affects quality
    "RELATIONS", "CardBatch", "card_relations", "card_vocab_size", "relation_accuracy", "HeadCountSweep",
    "head_count_sweep",
    "pool_kv_heads", "relative_error", "fit_to_teacher",
    # measurement
    "median_seconds", "interleaved_seconds", "peak_bytes", "blas_threads",
    # a tiny GPT that writes
    "extract_prose", "course_text", "CharVocabulary", "text_batch", "text_windows", "bigram_loss",
    "unigram_loss", "TinyGPT", "sample_next", "generate", "per_position_loss",
    # a tiny encoder-decoder
    "Seq2Seq", "greedy_decode", "Seq2SeqBatch", "alignment_match",
]  # fmt: skip
