"""Weights exchanged with PyTorch's layout; parity with PyTorch itself when it is installed."""

import numpy as np
import pytest

import mha


@pytest.mark.parametrize(
    ("kwargs", "keys"),
    [
        ({}, {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}),
        ({"bias": False}, {"in_proj_weight", "out_proj.weight"}),
        ({"kdim": 5, "vdim": 7}, {"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias",
                                  "out_proj.weight", "out_proj.bias"}),
    ],
)
def test_state_dict_round_trip(kwargs, keys):
    layer = mha.MultiHeadAttention(12, 3, rng=0, **kwargs)
    if layer.bias:
        layer.b_v = np.arange(12.0)
    state = layer.to_torch_state_dict()
    assert set(state) == keys
    assert state["out_proj.weight"].shape == (12, 12)
    np.testing.assert_array_equal(state["out_proj.weight"], layer.W_o.T)
    back = mha.MultiHeadAttention.from_torch_state_dict(state, n_heads=3)
    assert (back.kdim, back.vdim, back.bias) == (layer.kdim, layer.vdim, layer.bias)
    for name, arr in layer.parameters().items():
        np.testing.assert_array_equal(back.parameters()[name], arr)


def test_packed_layout_stacks_q_k_v_rows():
    layer = mha.MultiHeadAttention(4, 2, rng=0)
    packed = layer.to_torch_state_dict()["in_proj_weight"]
    np.testing.assert_array_equal(packed[4:8], layer.W_k.T)
    x = np.random.default_rng(1).standard_normal((3, 4))
    np.testing.assert_allclose(x @ packed[8:].T, x @ layer.W_v)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_read_from_the_arrays(dtype):
    state = mha.MultiHeadAttention(8, 2, rng=0, dtype=dtype).to_torch_state_dict()
    assert mha.MultiHeadAttention.from_torch_state_dict(state, 2).dtype == dtype


def test_state_dict_errors_name_keys_and_shapes():
    good = mha.MultiHeadAttention(8, 2, rng=0).to_torch_state_dict()
    with pytest.raises(ValueError, match=r"missing \['out_proj.bias'\]"):
        without_bias = {k: v for k, v in good.items() if k != "out_proj.bias"}
        mha.MultiHeadAttention.from_torch_state_dict(without_bias, 2)
    with pytest.raises(ValueError, match=r"unexpected \['extra'\]"):
        mha.MultiHeadAttention.from_torch_state_dict({**good, "extra": np.ones(1)}, 2)
    with pytest.raises(ValueError, match="add_bias_kv"):
        mha.MultiHeadAttention.from_torch_state_dict({**good, "bias_k": np.ones((1, 1, 8))}, 2)
    with pytest.raises(ValueError, match=r"in_proj_weight must have shape \(24, 8\)"):
        mha.MultiHeadAttention.from_torch_state_dict({**good, "in_proj_weight": np.ones((8, 8))}, 2)
    with pytest.raises(ValueError, match="not divisible by n_heads=3"):
        mha.MultiHeadAttention.from_torch_state_dict(good, 3)
    with pytest.raises(TypeError, match="float32 or float64"):
        mha.MultiHeadAttention.from_torch_state_dict({k: v.astype(np.float16) for k, v in good.items()}, 2)
    with pytest.raises(TypeError, match="mapping"):
        mha.MultiHeadAttention.from_torch_state_dict([("a", 1)], 2)
    with pytest.raises(ValueError, match="grouped-query"):
        mha.MultiHeadAttention(8, 2, n_kv_heads=1).to_torch_state_dict()
    with pytest.raises(TypeError, match=r"state_dict\['out_proj.weight'\] must be float32.*astype"):
        mha.MultiHeadAttention.from_torch_state_dict({**good, "out_proj.weight": np.eye(8, dtype=int)}, 2)
    nan_weights = good["in_proj_weight"].copy()
    nan_weights[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"state_dict\['in_proj_weight'\] holds NaN"):
        mha.MultiHeadAttention.from_torch_state_dict({**good, "in_proj_weight": nan_weights}, 2)


def test_a_whole_models_state_dict_is_told_to_strip_the_prefix():
    good = mha.MultiHeadAttention(8, 2, rng=0).to_torch_state_dict()
    model_state = {f"encoder.attn.{k}": v for k, v in good.items()} | {"encoder.norm.weight": np.ones(8)}
    with pytest.raises(ValueError, match=r"whole model's state dict.*removeprefix\('encoder.attn.'\)"):
        mha.MultiHeadAttention.from_torch_state_dict(model_state, 2)
    stripped = {k.removeprefix("encoder.attn."): v for k, v in model_state.items()
                if k.startswith("encoder.attn.")}
    np.testing.assert_array_equal(mha.MultiHeadAttention.from_torch_state_dict(stripped, 2).W_q,
                                  good["in_proj_weight"][:8].T)


@pytest.mark.parametrize("kwargs", [{"kdim": 1, "vdim": 1}, {"kdim": 3}, {}])
def test_state_dict_arrays_never_share_memory_with_the_layer(kwargs):
    # W_k of shape (1, d_model) transposes to an array that is already contiguous: still a copy
    for layer in (mha.MultiHeadAttention(8, 2, rng=0, **kwargs), mha.MultiHeadAttention(1, 1, rng=0)):
        state = layer.to_torch_state_dict()
        for name, array in state.items():
            for param in layer.parameters().values():
                assert not np.shares_memory(array, param), name


# ---------------------------------------------------------------- parity with PyTorch (optional)
@pytest.mark.parametrize(
    "case",
    [
        {"E": 8, "H": 2},
        {"E": 16, "H": 4, "bias": False},
        {"E": 12, "H": 3, "cross": True},
        {"E": 16, "H": 4, "kdim": 6, "vdim": 10},
        {"E": 32, "H": 8, "cross": True, "Lq": 1, "per_head_mask": True},
    ],
)
def test_outputs_and_per_head_weights_equal_pytorch(case):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    E, H = case["E"], case["H"]
    module = torch.nn.MultiheadAttention(E, H, kdim=case.get("kdim"), vdim=case.get("vdim"),
                                         bias=case.get("bias", True), batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
    layer = mha.MultiHeadAttention.from_torch_state_dict(
        {k: v.numpy() for k, v in module.state_dict().items()}, H)
    N, Lq, Lk = 3, case.get("Lq", 5), 7
    query = rng.standard_normal((N, Lq, E))
    cross = case.get("cross") or "kdim" in case
    key = rng.standard_normal((N, Lk, case.get("kdim", E))) if cross else query
    value = rng.standard_normal((N, Lk, case.get("vdim", E))) if cross else query
    Lk = key.shape[1]
    shape = (N * H, Lq, Lk) if case.get("per_head_mask") else (Lq, Lk)
    blocked = rng.random(shape) < 0.3
    blocked[..., 0] = False  # keep one key per query so PyTorch has no all-masked row
    padding = np.zeros((N, Lk), dtype=bool)
    padding[0, -2:] = True
    t_out, t_w = module(*(torch.from_numpy(a) for a in (query, key, value)),
                        attn_mask=torch.from_numpy(blocked), key_padding_mask=torch.from_numpy(padding),
                        need_weights=True, average_attn_weights=False)
    mask = mha.torch_masks_to_mask(blocked, padding, n_heads=H)
    out, w = layer(query, None if not cross else key, None if not cross else value, mask=mask,
                   return_weights=True)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(w, t_w.detach().numpy(), rtol=0, atol=1e-10)
    state = {k: v.numpy() for k, v in module.state_dict().items()}
    for name, arr in layer.to_torch_state_dict().items():
        np.testing.assert_array_equal(arr, state[name])


def test_unbatched_inputs_and_masks_equal_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    module = torch.nn.MultiheadAttention(16, 4, dtype=torch.float64)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.3))
    layer = mha.MultiHeadAttention.from_torch_state_dict(
        {k: v.numpy() for k, v in module.state_dict().items()}, 4)
    query, memory = rng.standard_normal((5, 16)), rng.standard_normal((7, 16))  # unbatched (seq, E)
    blocked = rng.random((4, 5, 7)) < 0.3  # per head, unbatched: (n_heads, seq_q, seq_k)
    blocked[..., 0] = False
    padding = np.zeros(7, dtype=bool)
    padding[-2:] = True
    t_out, t_w = module(*(torch.from_numpy(a) for a in (query, memory, memory)),
                        attn_mask=torch.from_numpy(blocked), key_padding_mask=torch.from_numpy(padding),
                        need_weights=True, average_attn_weights=False)
    out, w = layer(query, memory, mask=mha.torch_masks_to_mask(blocked, padding, n_heads=4),
                   return_weights=True)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=0, atol=1e-10)
    np.testing.assert_allclose(w, t_w.detach().numpy(), rtol=0, atol=1e-10)


def test_from_torch_state_dict_returns_the_class_it_is_called_on():
    class Tagged(mha.MultiHeadAttention):
        pass

    state = mha.MultiHeadAttention(8, 2, rng=0).to_torch_state_dict()
    layer = Tagged.from_torch_state_dict(state, 2)
    assert type(layer) is Tagged
    np.testing.assert_array_equal(layer.to_torch_state_dict()["in_proj_weight"], state["in_proj_weight"])


def test_the_framework_conversions_do_not_import_the_layer_module():
    import ast
    from pathlib import Path

    tree = ast.parse(Path(mha.frameworks.__file__).read_text(encoding="utf8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for alias in node.names}
    # mha.typing holds names for annotations only (it sits below every module, as mha.validation does)
    assert not any(name and name.startswith("mha") and name != "mha.typing" for name in imported), imported
