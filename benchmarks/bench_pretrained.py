"""A real model's forward pass: the course's NumPy encoder against Hugging Face's ``BertModel``.

Both run all-MiniLM-L6-v2 (6 layers x 12 heads, d_model 384) on the same sentence and return every
head's attention weights: ``mha.pretrained`` in NumPy, ``transformers`` with eager attention and
``output_attentions=True`` on PyTorch's CPU threads. The script checks that both give the same numbers,
then prints times and the ratio measured in this one run (alternating timed blocks), for a 16-token
sentence and for a batch of 16 sentences.

At these sizes the matrix products are tiny and per-operation overhead decides: PyTorch's module calls
and dispatch cost more than NumPy's few calls per layer. A third timing is the encoder's own matrix
products alone (every layer's projections, scores, weighted sums and feed-forward products on arrays of the
same shapes, nothing else), once with BLAS as configured and once on one thread; the faster is the floor
the forward pass is compared with (issue 16's goal for one sentence: <= 1.2x).

Needs ``pip install torch==2.13.0 transformers`` besides the course. Run:
``python benchmarks/bench_pretrained.py`` (``--quick`` for fewer repeats).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from bench_forward import median_times  # alternating timed blocks; benchmarks/ is on sys.path when run
from machine import machine_line  # benchmarks/ is on sys.path when run

from mha.lab import blas_threads
from mha.lab.examples import PARAPHRASE_PAIRS, SENTENCES
from mha.pretrained import load_encoder

PRODUCTS_TARGET = 1.2


def matrix_products(encoder, batch: int, seq: int):
    """A function running only the encoder's matrix products for ``batch`` texts of ``seq`` tokens."""
    c = encoder.config
    d_head = c.d_model // c.n_heads
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch * seq, c.d_model)).astype(encoder.dtype)  # (batch * seq, d_model)
    hidden = rng.standard_normal((batch * seq, c.d_ff)).astype(encoder.dtype)  # (batch * seq, d_ff)
    heads = rng.standard_normal((batch, c.n_heads, seq, d_head)).astype(encoder.dtype)
    layers = [(np.concatenate([b.attention.W_q, b.attention.W_k, b.attention.W_v], axis=1),
               b.attention.W_o, b.ffn.W_1, b.ffn.W_2) for b in encoder.blocks]

    def run():
        for W_qkv, W_o, W_1, W_2 in layers:
            x @ W_qkv
            scores = heads @ np.swapaxes(heads, -1, -2)  # (batch, n_heads, seq, seq)
            scores @ heads
            x @ W_o
            x @ W_1
            hidden @ W_2

    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    print(machine_line())
    repeats = 9 if args.quick else 30
    try:
        import torch
        from transformers import BertModel
    except ImportError as error:
        raise SystemExit(f"needs PyTorch and transformers ({error.name} is missing): "
                         "pip install torch==2.13.0 transformers") from None

    encoder = load_encoder()
    model = BertModel.from_pretrained(str(encoder.path), attn_implementation="eager").eval()
    print(f"threads: PyTorch {torch.get_num_threads()}; NumPy's BLAS as configured; load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    cases = {"one sentence": [SENTENCES["animal"] + "."],
             "16 sentences": [s for pair in PARAPHRASE_PAIRS for s in pair]}
    for name, texts in cases.items():
        tokens, ids, mask, _ = encoder.tokenize(texts)
        ids_t, mask_t = torch.tensor(ids), torch.tensor(mask.astype(np.int64))

        def ours(ids=ids, mask=mask):
            return encoder.forward(ids, mask=mask)

        def theirs(ids_t=ids_t, mask_t=mask_t):
            with torch.inference_mode():
                return model(input_ids=ids_t, attention_mask=mask_t, output_attentions=True)

        hidden, attentions = ours()
        reference = theirs()
        hidden_gap = float(np.abs(hidden - reference.last_hidden_state.numpy())[mask].max())
        weights_gap = max(float(np.abs(attentions[:, i] - a.numpy()).max())  # a: (batch, n_heads, seq, seq)
                          for i, a in enumerate(reference.attentions))
        products = matrix_products(encoder, *ids.shape)

        def products_one_thread(products=products):
            with blas_threads(1):
                products()

        ours_s, theirs_s, products_s, products_1_s = median_times(
            [ours, theirs, products, products_one_thread], repeats)
        floor = min(products_s, products_1_s)
        print(f"\n{name}: batch {ids.shape[0]}, {ids.shape[1]} tokens"
              f" (max |difference|: hidden {hidden_gap:.1e}, attention weights {weights_gap:.1e})")
        print(f"  mha.pretrained (NumPy)        {ours_s * 1e3:7.2f} ms")
        print(f"  transformers BertModel, eager {theirs_s * 1e3:7.2f} ms")
        print(f"  its matrix products alone     {products_s * 1e3:7.2f} ms as configured, "
              f"{products_1_s * 1e3:.2f} ms on one BLAS thread")
        print(f"  ratio NumPy / transformers    {ours_s / theirs_s:7.2f}")
        verdict = "meets" if ours_s / floor <= PRODUCTS_TARGET else "MISSES"
        print(f"  ratio NumPy / its products    {ours_s / floor:7.2f}"
              + (f"  ({verdict} target <= {PRODUCTS_TARGET})" if name == "one sentence" else ""))
    print("\nload average after: " + " ".join(f"{x:.1f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
