"""Runs transformers' own Qwen3.5 text model in fp32 on CPU and writes the parity fixture files.

The model always runs with eager attention and the pure-torch Gated DeltaNet (chunked for a prompt,
recurrent for one token): transformers only swaps in flash-linear-attention / causal-conv1d / hub kernels
when those packages are importable, and require_torch_kernels() refuses to run if any is.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import torch
import transformers

try:
    from transformers.models.qwen3_5 import modeling_qwen3_5
    from transformers.models.qwen3_5.configuration_qwen3_5 import Qwen3_5TextConfig
except ImportError as err:  # pragma: no cover - depends on the installed transformers
    raise SystemExit(
        f"transformers {transformers.__version__} has no Qwen3.5 (transformers.models.qwen3_5): {err}. "
        "Run tools/reference/setup_venv.sh to install a current transformers."
    ) from err

# One thread: reductions then split the same way on every machine (and the box is shared).
torch.set_num_threads(1)

GREEDY_STEPS = 32
NEAR_TIE = 1e-3  # top-2 margin under which an argmax may legitimately flip between fp32 implementations
# Packages that, when importable, transformers prefers over its own torch functions for the GDN
# (use_kernel_func_from_hub_with_fallback) or the norms (hub kernels).
FAST_KERNEL_PACKAGES = ("fla", "causal_conv1d", "kernels")


def require_torch_kernels() -> None:
    """The oracle must be transformers' pure-torch path: refuse to run if a fast-kernel package is present."""
    present = [name for name in FAST_KERNEL_PACKAGES if importlib.util.find_spec(name) is not None]
    if present:
        raise SystemExit(f"fast-kernel packages {present} are installed in this venv; remove them for the oracle")


def build_model(cfg: dict, state: dict[str, np.ndarray] | None = None) -> torch.nn.Module:
    """A Qwen3_5ForCausalLM in fp32; with `state`, loaded by strict key and shape checking."""
    require_torch_kernels()
    config = Qwen3_5TextConfig(**cfg)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    model = modeling_qwen3_5.Qwen3_5ForCausalLM(config).to(torch.float32).eval()
    if state is not None:
        own = model.state_dict()
        for key, value in state.items():
            if key in own and tuple(own[key].shape) != value.shape:
                raise SystemExit(f"shape mismatch for {key}: model {tuple(own[key].shape)}, file {value.shape}")
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()}, strict=True)
    return model


@torch.no_grad()
def teacher_forced_logits(model: torch.nn.Module, tokens: list[int]) -> np.ndarray:
    ids = torch.tensor([tokens], dtype=torch.long)
    out = model(input_ids=ids, use_cache=False)
    return out.logits[0].to(torch.float32).numpy()


@torch.no_grad()
def greedy_continuation(
    model: torch.nn.Module, tokens: list[int], masked_ids: list[int], steps: int = GREEDY_STEPS
) -> tuple[list[int], list[float]]:
    """Argmax over the vocab rows not in masked_ids (the UNUSED padding rows, model-spec §7.3), lowest index
    on ties (np.argmax returns the first maximum), the whole prefix recomputed each step. Returns the
    tokens and each step's top-2 margin among the unmasked rows."""
    seq = list(tokens)
    produced, margins = [], []
    for _ in range(steps):
        last = teacher_forced_logits(model, seq)[-1].copy()
        last[masked_ids] = -np.inf
        nxt = int(np.argmax(last))
        produced.append(nxt)
        margins.append(float(top2_margins(last[None, :])[0]))
        seq.append(nxt)
    return produced, margins


def command_line() -> str:
    """This process's command line with paths relative to the repository root."""
    root = Path(__file__).resolve().parents[2]

    def rel(arg: str) -> str:
        path = Path(arg)
        if not path.exists() and not path.parent.exists():
            return arg
        try:
            return str(path.resolve().relative_to(root))
        except ValueError:
            return arg

    return " ".join(rel(a) for a in sys.argv)


def top2_margins(logits: np.ndarray) -> np.ndarray:
    part = np.sort(logits, axis=-1)[:, -2:]
    return part[:, 1] - part[:, 0]


def unused_token_ids(token_types: list[int] | None) -> list[int]:
    """Ids whose tokenizer.ggml.token_type is UNUSED (5): padding rows, never generated."""
    return [] if token_types is None else [i for i, t in enumerate(token_types) if t == 5]


def write_fixture(
    out_dir: Path, model: torch.nn.Module, cfg: dict, tokens: list[int], masked_ids: list[int], meta: dict
) -> None:
    """Writes logits.npy, greedy.json and meta.json (model-spec §8.4 oracle policy: fp32, lowest-index ties)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    logits = teacher_forced_logits(model, tokens)
    np.save(out_dir / "logits.npy", np.ascontiguousarray(logits, dtype="<f4"))
    greedy, greedy_margins = greedy_continuation(model, tokens, masked_ids)
    greedy_json = {"prompt_tokens": len(tokens), "greedy": greedy, "masked": "token_type UNUSED"}
    (out_dir / "greedy.json").write_text(json.dumps(greedy_json) + "\n")

    # How far fp32 HF is from itself in float64: a floor for any parity tolerance.
    model64 = model.to(torch.float64)
    with torch.no_grad():
        ids = torch.tensor([tokens], dtype=torch.long)
        logits64 = model64(input_ids=ids, use_cache=False).logits[0].numpy()
    model.to(torch.float32)
    margins = top2_margins(logits)
    meta = dict(meta)
    meta.update(
        {
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "numpy_version": np.__version__,
            "model_class": "transformers.models.qwen3_5.modeling_qwen3_5.Qwen3_5ForCausalLM",
            "dtype": "float32",
            "torch_num_threads": torch.get_num_threads(),
            "attn_implementation": "eager",
            "gdn_path": "torch_chunk_gated_delta_rule (prompt), no fla / causal-conv1d kernels",
            "hf_config": cfg,
            "positions": int(logits.shape[0]),
            "vocab": int(logits.shape[1]),
            "logits_abs_max": float(np.max(np.abs(logits))),
            "fp32_vs_fp64_max_abs_diff": float(np.max(np.abs(logits.astype(np.float64) - logits64))),
            "argmax_fp32_vs_fp64_agree": int(np.sum(np.argmax(logits, -1) == np.argmax(logits64, -1))),
            "min_top2_margin": float(np.min(margins)),
            "near_tie_positions": [int(p) for p in np.flatnonzero(margins < NEAR_TIE)],
            "greedy_min_top2_margin": min(greedy_margins),
            "greedy_steps": GREEDY_STEPS,
            "greedy_masked_ids": len(masked_ids),
            "command": command_line(),
        }
    )
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
