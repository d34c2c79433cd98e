"""Rebuilds a Hugging Face Qwen3.5 text model (config + fp32 state dict) from a qwen35 GGUF.

This is the reverse mapping of model-spec §11.3 (and Appendix A read backwards):
  * folded matrices (prism.hadamard.weight_names) and the inverse-folded embedding are unfolded row by row,
    w = T_K^{-1}(w') = s_K ⊙ (H_n w') / √n per n-block, in float64;
  * the seven GDN tensors stored in tiled V-head order are put back in grouped (HF) order;
  * ssm_out's input columns are un-tiled too when the file is not gdn_v_grouped (mainline llama.cpp, §11.2);
  * the five +1 norm gains get 1 subtracted; ssm_norm is taken as stored;
  * A_log = log(−ssm_a), in float64.
"""

from __future__ import annotations

import math

import numpy as np

from gguf_read import GGUFFile

ARCH = "qwen35"
PLUS_ONE_NORMS = ("attn_norm", "post_attention_norm", "attn_q_norm", "attn_k_norm")


class ModelError(Exception):
    pass


def sylvester_hadamard(n: int) -> np.ndarray:
    """H_n[r][c] = (−1)^popcount(r & c), float64 (model-spec §4.1)."""
    r = np.arange(n, dtype=np.int64)
    bits = np.bitwise_and(r[:, None], r[None, :])
    parity = np.zeros_like(bits)
    while np.any(bits):
        parity ^= bits & 1
        bits >>= 1
    return np.where(parity == 1, -1.0, 1.0)


class Hadamard:
    """The prism.hadamard v1 contract as far as the oracle needs it: block size and signs by width."""

    def __init__(self, g: GGUFFile):
        self.enabled = g.get("prism.hadamard.version") is not None
        self.folded: set[str] = set()
        self.inverse: set[str] = set()
        self.gdn_v_grouped = False
        if not self.enabled:
            return
        if int(g.get("prism.hadamard.version")) != 1:
            raise ModelError(f"{g.path}: prism.hadamard.version {g.get('prism.hadamard.version')} is not 1")
        self.block = int(g.get("prism.hadamard.block_size"))
        for key, want in (
            ("prism.hadamard.transform", "normalized-sylvester-walsh-hadamard"),
            ("prism.hadamard.axis", "input-last-dimension"),
        ):
            if g.get(key) != want:
                raise ModelError(f"{g.path}: {key} = {g.get(key)!r}, expected {want!r}")
        self.sign_mode = g.get("prism.hadamard.sign_mode")
        self.signs: dict[int, np.ndarray] = {}
        if self.sign_mode == "explicit":
            values = np.asarray(g.get("prism.hadamard.sign_values"), dtype=np.float64)
            offset = 0
            for width in g.get("prism.hadamard.sign_widths"):
                self.signs[int(width)] = values[offset : offset + width]
                offset += width
            if offset != values.size or not np.all(np.abs(values) == 1):
                raise ModelError(f"{g.path}: prism.hadamard.sign_values do not match sign_widths or are not ±1")
        elif self.sign_mode != "identity":
            raise ModelError(f"{g.path}: prism.hadamard.sign_mode {self.sign_mode!r}")
        self.folded = set(g.get("prism.hadamard.weight_names"))
        self.inverse = set(g.get("prism.hadamard.inverse_weight_names", []))
        self.gdn_v_grouped = bool(g.get("prism.hadamard.gdn_v_grouped", False))
        self.h = sylvester_hadamard(self.block)

    def sign(self, width: int) -> np.ndarray:
        if self.sign_mode == "identity":
            return np.ones(width)
        if width not in self.signs:
            raise ModelError(f"prism.hadamard has no sign vector for width {width}")
        return self.signs[width]

    def unfold_rows(self, stored: np.ndarray) -> np.ndarray:
        """T_K^{-1} on every row: s ⊙ (H w')/√n per block, in float64 (§4.2, §11.3)."""
        rows, width = stored.shape
        if width % self.block:
            raise ModelError(f"width {width} is not a multiple of block_size {self.block}")
        blocks = stored.astype(np.float64).reshape(rows, width // self.block, self.block)
        transformed = (blocks @ self.h) / math.sqrt(self.block)  # H is symmetric: (H b)^T = b^T H
        return transformed.reshape(rows, width) * self.sign(width)[None, :]

    def fold_activation(self, x: np.ndarray) -> np.ndarray:
        """T_K(x) = blockdiag(H/√n)(s ⊙ x) by the butterfly of §4.7: an independent check of unfold_rows."""
        width = x.shape[-1]
        y = (x.astype(np.float64) * self.sign(width)).reshape(-1, self.block).copy()
        h = 1
        while h < self.block:
            y = y.reshape(-1, self.block // (2 * h), 2, h)
            a, b = y[:, :, 0, :].copy(), y[:, :, 1, :].copy()
            y[:, :, 0, :], y[:, :, 1, :] = a + b, a - b
            h *= 2
        return y.reshape(x.shape) / math.sqrt(self.block)


def untile_rows(t: np.ndarray, n_k: int, rep: int) -> np.ndarray:
    """Tiled [rep][n_k][hs] rows (axis 0) back to grouped [n_k][rep][hs] (inverse of Appendix A)."""
    hs = t.shape[0] // (n_k * rep)
    if hs * n_k * rep != t.shape[0]:
        raise ModelError(f"{t.shape[0]} rows do not split into {rep} x {n_k} V heads")
    rest = t.shape[1:]
    return t.reshape(rep, n_k, hs, *rest).swapaxes(0, 1).reshape(t.shape)


def untile_columns(t: np.ndarray, n_k: int, rep: int) -> np.ndarray:
    return np.ascontiguousarray(untile_rows(t.T, n_k, rep).T)


def _key(g: GGUFFile, name: str, default=None):
    value = g.get(f"{ARCH}.{name}", default)
    if value is None:
        raise ModelError(f"{g.path}: missing metadata key {ARCH}.{name}")
    return value


def layer_kinds(g: GGUFFile, n_layers: int) -> list[str]:
    recurrent = g.get(f"{ARCH}.attention.recurrent_layers")
    if recurrent is not None:
        return ["linear_attention" if recurrent[i] else "full_attention" for i in range(n_layers)]
    interval = int(_key(g, "full_attention_interval", 4))
    return ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layers)]


def _f32(value) -> float:
    """A FLOAT32 key as the shortest decimal that rounds to it (1e-05, not 9.999999747378752e-06)."""
    return float(str(np.float32(value)))


def hf_config_dict(g: GGUFFile) -> dict:
    """The fields of transformers' Qwen3_5TextConfig, from the qwen35.* keys (model-spec §2.4)."""
    if g.get("general.architecture") != ARCH:
        raise ModelError(f"{g.path}: general.architecture = {g.get('general.architecture')!r}, not {ARCH}")
    n_layers = int(_key(g, "block_count")) - int(_key(g, "nextn_predict_layers", 0))
    head_dim = int(_key(g, "attention.key_length"))
    rope_dim = int(_key(g, "rope.dimension_count"))
    n_v = int(_key(g, "ssm.time_step_rank"))
    inner = int(_key(g, "ssm.inner_size"))
    sections = [int(s) for s in _key(g, "rope.dimension_sections", [0, 0, 0, 0])][:3]
    vocab = int(g.tensors["token_embd.weight"].ne[1])
    return {
        "vocab_size": vocab,
        "hidden_size": int(_key(g, "embedding_length")),
        "intermediate_size": int(_key(g, "feed_forward_length")),
        "num_hidden_layers": n_layers,
        "num_attention_heads": int(_key(g, "attention.head_count")),
        "num_key_value_heads": int(_key(g, "attention.head_count_kv")),
        "head_dim": head_dim,
        "hidden_act": "silu",
        "max_position_embeddings": int(_key(g, "context_length", 4096)),
        "rms_norm_eps": _f32(_key(g, "attention.layer_norm_rms_epsilon")),
        "tie_word_embeddings": False,
        "attention_bias": False,
        "linear_conv_kernel_dim": int(_key(g, "ssm.conv_kernel")),
        "linear_key_head_dim": int(_key(g, "ssm.state_size")),
        "linear_value_head_dim": inner // n_v,
        "linear_num_key_heads": int(_key(g, "ssm.group_count")),
        "linear_num_value_heads": n_v,
        "layer_types": layer_kinds(g, n_layers),
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": _f32(_key(g, "rope.freq_base")),
            "partial_rotary_factor": rope_dim / head_dim,
            "mrope_section": sections,
            "mrope_interleaved": True,
        },
    }


def hf_state_dict(g: GGUFFile, cfg: dict) -> dict[str, np.ndarray]:
    """fp32 arrays under the HF Qwen3_5ForCausalLM parameter names (§11.3)."""
    had = Hadamard(g)
    n_k = cfg["linear_num_key_heads"]
    rep = cfg["linear_num_value_heads"] // n_k
    qk_width = 2 * n_k * cfg["linear_key_head_dim"]
    used: set[str] = set()

    def load(name: str) -> np.ndarray:
        used.add(name)
        w = g.tensor(name)
        if name in had.folded or name in had.inverse:
            if w.ndim != 2:
                raise ModelError(f"{g.path}: folded tensor {name} is not 2-D")
            return had.unfold_rows(w)
        return w.astype(np.float64)

    def gain(name: str) -> np.ndarray:
        return load(name) - 1.0

    sd: dict[str, np.ndarray] = {
        "model.embed_tokens.weight": load("token_embd.weight"),
        "model.norm.weight": gain("output_norm.weight"),
        "lm_head.weight": load("output.weight"),
    }
    for layer, kind in enumerate(cfg["layer_types"]):
        src, dst = f"blk.{layer}.", f"model.layers.{layer}."
        sd[dst + "input_layernorm.weight"] = gain(src + "attn_norm.weight")
        sd[dst + "post_attention_layernorm.weight"] = gain(src + "post_attention_norm.weight")
        for proj, gguf_name in (("gate_proj", "ffn_gate"), ("up_proj", "ffn_up"), ("down_proj", "ffn_down")):
            sd[dst + f"mlp.{proj}.weight"] = load(src + gguf_name + ".weight")
        if kind == "full_attention":
            a = dst + "self_attn."
            for proj, gguf_name in (("q_proj", "attn_q"), ("k_proj", "attn_k"), ("v_proj", "attn_v")):
                sd[a + f"{proj}.weight"] = load(src + gguf_name + ".weight")
            sd[a + "o_proj.weight"] = load(src + "attn_output.weight")
            sd[a + "q_norm.weight"] = gain(src + "attn_q_norm.weight")
            sd[a + "k_norm.weight"] = gain(src + "attn_k_norm.weight")
            continue
        a = dst + "linear_attn."
        qkv = load(src + "attn_qkv.weight")
        qkv[qk_width:] = untile_rows(qkv[qk_width:], n_k, rep)
        sd[a + "in_proj_qkv.weight"] = qkv
        sd[a + "in_proj_z.weight"] = untile_rows(load(src + "attn_gate.weight"), n_k, rep)
        sd[a + "in_proj_a.weight"] = untile_rows(load(src + "ssm_alpha.weight"), n_k, rep)
        sd[a + "in_proj_b.weight"] = untile_rows(load(src + "ssm_beta.weight"), n_k, rep)
        sd[a + "A_log"] = np.log(-untile_rows(load(src + "ssm_a"), n_k, rep))
        sd[a + "dt_bias"] = untile_rows(load(src + "ssm_dt.bias"), n_k, rep)
        conv = load(src + "ssm_conv1d.weight")  # numpy [channels, taps]
        conv[qk_width:] = untile_rows(conv[qk_width:], n_k, rep)
        sd[a + "conv1d.weight"] = conv[:, None, :]
        sd[a + "norm.weight"] = load(src + "ssm_norm.weight")
        out = load(src + "ssm_out.weight")
        sd[a + "out_proj.weight"] = out if had.gdn_v_grouped else untile_columns(out, n_k, rep)
    unused = sorted(set(g.tensors) - used)
    if unused:
        raise ModelError(f"{g.path}: tensors not mapped to HF: {unused[:8]}")
    return {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in sd.items()}


def check_fold_identity(g: GGUFFile, seed: int = 0) -> dict:
    """W'·T_K(x) == W·x for every folded matrix (x random): checks the unfold's direction and signs.

    Uses the butterfly FWHT for T_K and the Sylvester matrix for the unfold, so the two sides share no code.
    Returns the worst relative error (expected ~1e-15, float64).
    """
    had = Hadamard(g)
    if not had.enabled:
        return {"folded_checked": 0}
    rng = np.random.default_rng(seed)
    worst = 0.0
    for name in sorted(had.folded):
        stored = g.tensor(name).astype(np.float64)
        x = rng.standard_normal(stored.shape[1])
        lhs = stored @ had.fold_activation(x)
        rhs = had.unfold_rows(stored) @ x
        worst = max(worst, float(np.max(np.abs(lhs - rhs)) / (np.max(np.abs(rhs)) + 1e-300)))
    # The embedding's rows z = T(e): T(T^{-1}(z)) must give z back.
    for name in sorted(had.inverse):
        z = g.tensor(name).astype(np.float64)[:8]
        back = had.fold_activation(had.unfold_rows(z))
        worst = max(worst, float(np.max(np.abs(back - z)) / (np.max(np.abs(z)) + 1e-300)))
    return {"folded_checked": len(had.folded) + len(had.inverse), "fold_identity_worst_rel_err": worst}
