"""A real model's forward pass: the course's NumPy encoder against Hugging Face's ``BertModel``.

Both run all-MiniLM-L6-v2 (6 layers x 12 heads, d_model 384) on the same sentence and return every
head's attention weights: ``mha.pretrained`` in NumPy, ``transformers`` with eager attention and
``output_attentions=True`` on PyTorch's CPU threads. The script checks that both give the same numbers,
then prints times and the ratio measured in this one run (alternating timed blocks), for a 16-token
sentence and for a batch of 16 sentences.

At these sizes the matrix products are tiny and per-operation overhead decides: PyTorch's module calls
and dispatch cost more than NumPy's few calls per layer.

Needs ``pip install torch==2.13.0 transformers`` besides the course. Run:
``python benchmarks/bench_pretrained.py`` (``--quick`` for fewer repeats).
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_forward import median_times  # alternating timed blocks; benchmarks/ is on sys.path when run

from mha.lab.examples import PARAPHRASE_PAIRS, SENTENCES
from mha.pretrained import load_encoder


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeats = 9 if args.quick else 30
    try:
        import torch
        from transformers import BertModel
    except ImportError as error:
        raise SystemExit(f"needs PyTorch and transformers ({error.name} is missing): "
                         "pip install torch==2.13.0 transformers") from None

    encoder = load_encoder()
    model = BertModel.from_pretrained(str(encoder.path), attn_implementation="eager").eval()
    print(f"threads: PyTorch {torch.get_num_threads()}; NumPy's BLAS as configured")
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
        ours_s, theirs_s = median_times([ours, theirs], repeats)
        print(f"\n{name}: batch {ids.shape[0]}, {ids.shape[1]} tokens"
              f" (max |difference|: hidden {hidden_gap:.1e}, attention weights {weights_gap:.1e})")
        print(f"  mha.pretrained (NumPy)        {ours_s * 1e3:7.2f} ms")
        print(f"  transformers BertModel, eager {theirs_s * 1e3:7.2f} ms")
        print(f"  ratio NumPy / transformers    {ours_s / theirs_s:7.2f}")


if __name__ == "__main__":
    main()
