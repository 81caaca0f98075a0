"""Check functions for learners: call them on your own code, read what went wrong.

Each check runs your function on seeded inputs and compares with the package. When it disagrees,
the check recomputes the answer the way common mistakes would (softmax over the wrong axis, the
√d_k scale forgotten, reshaped without transposing, heads merged in the wrong order, mask polarity
inverted, float32 upcast to float64, overflow ...) and raises :class:`CheckFailed`, an
``AssertionError`` whose message names the mistake that reproduces your numbers. When everything
agrees it prints one line starting with ✔ (pass ``quiet=True`` to silence it). Run on an
untouched starter (``answer = ...``, or a function that raises ``NotImplementedError``), a check
prints "not done yet" instead of failing, so an unsolved notebook still runs top to bottom; under
:func:`strict` (as when grading) it fails.

Each chapter's checks live in the module named after the chapter (``chapters/<module>.md``); in the
book's order:

- ``self_attention``: check_softmax, check_attention, check_causal_mask, check_dot_variance,
  check_window_mask, check_padding_mask
- ``multi_head``: check_multi_head, check_einsum_layer, check_parameter_formula
- ``shapes``: check_split_heads, check_merge_heads, check_head_shapes
- ``cross_attention``: check_cross_attention_shapes
- ``cost``: check_crossover, check_kv_budget, check_block_size
- ``positions``: check_rotate_new_keys
- ``heads_that_learn``: check_uniform_entropy
- ``efficient_attention``: check_query_chunks, check_merge_states, check_cache_tokens
- ``modern_attention``: check_streaming_mask, check_latent_cache, check_absorbed_scores
- ``transformer_block``: check_ffn_share, check_rms_norm
- ``tiny_gpt``: check_temperature
- ``encoder_decoder``: check_uniform_match
- ``frameworks``: check_from_state_dict, check_keras_output_kernel
- ``real_heads``: check_previous_token_share

Import the checks from here, ``from mha.checks import check_softmax``. The private ``_core`` holds
the machinery every check runs on (:class:`CheckFailed`, :func:`strict`), ``_shared`` the helpers
that several chapters' checks use.

The graded assignments' "NumPy only" test wraps calls of your answers in :func:`package_forbidden`
(module ``integrity``), inside which the package itself refuses to run: an answer that calls ``mha``
fails there.

>>> import mha
>>> mha.checks.check_causal_mask(mha.causal_mask)
✔ check_causal_mask passed: matches mha.causal_mask, square and end-aligned.
"""

from mha.checks._core import CheckFailed, strict
from mha.checks.cost import check_block_size, check_crossover, check_kv_budget
from mha.checks.cross_attention import check_cross_attention_shapes
from mha.checks.efficient_attention import check_cache_tokens, check_merge_states, check_query_chunks
from mha.checks.encoder_decoder import check_uniform_match
from mha.checks.frameworks import check_from_state_dict, check_keras_output_kernel
from mha.checks.heads_that_learn import check_uniform_entropy
from mha.checks.integrity import package_forbidden
from mha.checks.modern_attention import check_absorbed_scores, check_latent_cache, check_streaming_mask
from mha.checks.multi_head import check_einsum_layer, check_multi_head, check_parameter_formula
from mha.checks.positions import check_rotate_new_keys
from mha.checks.real_heads import check_previous_token_share
from mha.checks.self_attention import (
    check_attention,
    check_causal_mask,
    check_dot_variance,
    check_padding_mask,
    check_softmax,
    check_window_mask,
)
from mha.checks.shapes import check_head_shapes, check_merge_heads, check_split_heads
from mha.checks.tiny_gpt import check_temperature
from mha.checks.transformer_block import check_ffn_share, check_rms_norm

__all__ = [
    "CheckFailed", "check_attention", "check_block_size", "check_cache_tokens",
    "check_causal_mask", "check_cross_attention_shapes", "check_crossover", "check_dot_variance",
    "check_einsum_layer", "check_ffn_share", "check_from_state_dict", "check_head_shapes",
    "check_keras_output_kernel", "check_kv_budget",
    "check_merge_heads", "check_merge_states", "check_multi_head", "check_parameter_formula",
    "check_previous_token_share", "check_query_chunks", "check_rms_norm", "check_rotate_new_keys",
    "check_softmax", "check_split_heads", "check_temperature", "check_uniform_entropy",
    "check_uniform_match", "check_window_mask", "check_padding_mask", "strict", "package_forbidden",
    "check_streaming_mask", "check_latent_cache", "check_absorbed_scores",
]
