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
  check_window_mask, check_padding_mask;
  questions: check_score_shift
- ``attention_up_close``: check_running_mean;
  questions: check_hard_lookup, check_same_dog, check_telescope_query
- ``multi_head``: check_multi_head, check_einsum_layer, check_parameter_formula;
  questions: check_head_swap
- ``shapes``: check_split_heads, check_merge_heads, check_head_shapes;
  questions: check_flat_mask, check_scores_mebibytes
- ``cross_attention``: check_cross_attention_shapes;
  questions: check_reversed_source, check_target_padding
- ``cost``: check_crossover, check_kv_budget, check_block_size
- ``positions``: check_rotate_new_keys;
  questions: check_first_token_two_back, check_sinusoid_direction, check_alibi_far_bias
- ``heads_that_learn``: check_uniform_entropy;
  questions: check_blinded_induction, check_greedy_evaluations, check_narrow_heads_longer,
  check_two_jobs_margin
- ``efficient_attention``: check_query_chunks, check_merge_states, check_cache_tokens;
  questions: check_distilled_pool
- ``modern_attention``: check_streaming_mask, check_latent_cache, check_absorbed_scores,
  check_linear_state;
  questions: check_softcap_weight, check_rope_pair_order
- ``transformer_block``: check_ffn_share, check_rms_norm;
  questions: check_post_norm_final
- ``tiny_gpt``: check_temperature;
  questions: check_context_losses, check_untied_readout
- ``encoder_decoder``: check_uniform_match;
  questions: check_reverse_blocks, check_encoder_alignment
- ``frameworks``: check_from_state_dict, check_keras_output_kernel;
  questions: check_torch_mask_rows, check_average_tells
- ``real_heads``: check_previous_token_share;
  questions: check_trophy_head, check_ablation_order, check_modifier_nouns

A predict-or-explain exercise has a question instead (``mha.checks.questions``): its check takes
the letter, number or order you chose, and ``mha.explorers.quiz(check)`` asks the same question in the
page.

Import the checks from here, ``from mha.checks import check_softmax``. For check authors:
``machinery`` holds what every check runs on (:class:`CheckFailed`, :func:`strict`, the ``Checker``),
``shared`` the helpers that several chapters' checks use.

The graded assignments' "NumPy only" test wraps calls of your answers in :func:`package_forbidden`
(module ``integrity``), inside which the package itself refuses to run: an answer that calls ``mha``
fails there.

>>> import mha
>>> mha.checks.check_causal_mask(mha.causal_mask)
✔ check_causal_mask passed: matches mha.causal_mask, square and end-aligned.
"""

from mha.checks.attention_up_close import (
    check_hard_lookup,
    check_running_mean,
    check_same_dog,
    check_telescope_query,
)
from mha.checks.cost import check_block_size, check_crossover, check_kv_budget
from mha.checks.cross_attention import (
    check_cross_attention_shapes,
    check_reversed_source,
    check_target_padding,
)
from mha.checks.efficient_attention import (
    check_cache_tokens,
    check_distilled_pool,
    check_merge_states,
    check_query_chunks,
)
from mha.checks.encoder_decoder import check_encoder_alignment, check_reverse_blocks, check_uniform_match
from mha.checks.frameworks import (
    check_average_tells,
    check_from_state_dict,
    check_keras_output_kernel,
    check_torch_mask_rows,
)
from mha.checks.heads_that_learn import (
    check_blinded_induction,
    check_greedy_evaluations,
    check_narrow_heads_longer,
    check_two_jobs_margin,
    check_uniform_entropy,
)
from mha.checks.integrity import package_forbidden
from mha.checks.machinery import CheckFailed, strict
from mha.checks.modern_attention import (
    check_absorbed_scores,
    check_latent_cache,
    check_linear_state,
    check_rope_pair_order,
    check_softcap_weight,
    check_streaming_mask,
)
from mha.checks.multi_head import (
    check_einsum_layer,
    check_head_swap,
    check_multi_head,
    check_parameter_formula,
)
from mha.checks.positions import (
    check_alibi_far_bias,
    check_first_token_two_back,
    check_rotate_new_keys,
    check_sinusoid_direction,
)
from mha.checks.real_heads import (
    check_ablation_order,
    check_modifier_nouns,
    check_previous_token_share,
    check_trophy_head,
)
from mha.checks.self_attention import (
    check_attention,
    check_causal_mask,
    check_dot_variance,
    check_padding_mask,
    check_score_shift,
    check_softmax,
    check_window_mask,
)
from mha.checks.shapes import (
    check_flat_mask,
    check_head_shapes,
    check_merge_heads,
    check_scores_mebibytes,
    check_split_heads,
)
from mha.checks.tiny_gpt import check_context_losses, check_temperature, check_untied_readout
from mha.checks.transformer_block import check_ffn_share, check_post_norm_final, check_rms_norm

__all__ = [
    "CheckFailed", "check_attention", "check_block_size", "check_cache_tokens",
    "check_causal_mask", "check_cross_attention_shapes", "check_crossover", "check_dot_variance",
    "check_einsum_layer", "check_ffn_share", "check_from_state_dict", "check_head_shapes",
    "check_keras_output_kernel", "check_kv_budget",
    "check_merge_heads", "check_merge_states", "check_multi_head", "check_parameter_formula",
    "check_previous_token_share", "check_query_chunks", "check_rms_norm", "check_rotate_new_keys",
    "check_softmax", "check_split_heads", "check_temperature", "check_uniform_entropy",
    "check_uniform_match", "check_window_mask", "check_padding_mask", "strict", "package_forbidden",
    "check_streaming_mask", "check_latent_cache", "check_absorbed_scores", "check_linear_state",
    "check_softcap_weight", "check_rope_pair_order",
    "check_ablation_order",
    "check_alibi_far_bias",
    "check_average_tells",
    "check_blinded_induction",
    "check_context_losses",
    "check_distilled_pool",
    "check_encoder_alignment",
    "check_first_token_two_back",
    "check_flat_mask",
    "check_greedy_evaluations",
    "check_head_swap",
    "check_modifier_nouns",
    "check_narrow_heads_longer",
    "check_post_norm_final",
    "check_reverse_blocks",
    "check_reversed_source",
    "check_score_shift",
    "check_scores_mebibytes",
    "check_sinusoid_direction",
    "check_target_padding",
    "check_telescope_query",
    "check_running_mean", "check_hard_lookup", "check_same_dog",
    "check_torch_mask_rows",
    "check_trophy_head",
    "check_two_jobs_margin",
    "check_untied_readout",
]
