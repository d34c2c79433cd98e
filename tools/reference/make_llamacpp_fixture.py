"""make_llamacpp_fixture.py OUT_DIR [WORK_DIR]

The real converter's layout: builds a tiny random Hugging Face Qwen3.5 checkpoint (model-spec §11.1
geometry) with a tiny byte-level BPE tokenizer, converts it to an F32 GGUF with llama.cpp's own
convert_hf_to_gguf.py (run_converter.py), and writes transformers' logits *on the checkpoint* (not via the
GGUF) as the fixture: OUT_DIR/{model.gguf, tokens.json, logits.npy, greedy.json, meta.json}.

It also rebuilds the HF weights from the GGUF with our reverse mapping (gguf_to_hf.py) and records in
meta.json how far they and their logits are from the checkpoint, plus what the converter wrote
(norms +1, ssm_a = −exp(A_log), V heads tiled, ssm_out columns tiled).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast
from transformers.models.qwen3_5 import modeling_qwen3_5

from gguf_read import GGUFFile
from gguf_to_hf import hf_config_dict, hf_state_dict, untile_columns, untile_rows
from hf_runner import build_model, teacher_forced_logits, unused_token_ids, write_fixture

HERE = Path(__file__).resolve().parent
SEED = 20250801
PROMPT_TOKENS = 330
TOKENIZER_VOCAB = 448
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
QWEN35_PRETOKENIZE = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# §11.1: n_k = 2 and rep = 3 (tiled != grouped), k and v head dims differ (v dim = inner / n_v), an
# attention width (4 x 32 = 128) distinct from the GDN value width (6 x 24 = 144) and from d = 64,
# two attention layers among eight (interval 4), non-default eps and rope base.
CONFIG = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 96,
    "num_hidden_layers": 8,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "hidden_act": "silu",
    "max_position_embeddings": 4096,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16,
    "linear_value_head_dim": 24,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 6,
    "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(8)],
    "rope_parameters": {
        "rope_type": "default",
        "rope_theta": 500000.0,
        "partial_rotary_factor": 0.25,
        "mrope_section": [2, 1, 1],
        "mrope_interleaved": True,
    },
    "eos_token_id": 450,
    "pad_token_id": 448,
}

CORPUS = """\
The lighthouse keeper wrote in her log every evening, a habit she had kept for thirty-one years. \
Wind from the north-east, force five, rising. Two fishing boats came in before dark; the third, \
the Margaret Anne, was still out past the reef when the lamp was lit. She counted the seconds between \
the flashes of the southern buoy, one, two, three, four, and found them steady.
In the morning the harbour was full of gulls and the smell of tar. Children ran along the sea wall \
shouting numbers at each other: 17, 42, 1999, 3.14159! Nobody knew what game it was, and nobody asked.
"Did you hear the radio?" asked the baker, wiping flour from his hands. "They say the storm will turn \
west before it reaches us." The keeper shrugged. Storms did what they liked; the light did its work.
Weights and measures: 12 kg of flour, 3 litres of milk, 250 g of butter, 0.5 kg of salt. \
The recipe had not changed since 1887, when the bakery first opened its doors on Quay Street.
At noon the ferry arrived with the post, a crate of oranges, and a young engineer who had come to \
install an automatic lamp. He was polite, carried a heavy toolbox, and spoke quickly about relays, \
photocells, batteries and remote monitoring. The keeper listened, nodded, and made him tea.
That night the wind backed to the west, as the radio had promised, and the Margaret Anne came home \
at last, her nets torn and her crew exhausted but whole. The keeper wrote: all vessels accounted for.
Then she added a line she had never written before: the engineer stays until Thursday.
"""


def build_tokenizer() -> PreTrainedTokenizerFast:
    """Byte-level BPE with the Qwen3.5 pre-tokenizer regex (§7.2), trained on CORPUS (deterministic)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN35_PRETOKENIZE), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=TOKENIZER_VOCAB,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([CORPUS], trainer=trainer)
    tok.add_special_tokens(SPECIAL_TOKENS)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")


def random_state(model: torch.nn.Module, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """Seeded weights for every parameter, scaled so activations stay O(1) and every gain is non-trivial."""
    state = {}
    for name, param in sorted(model.state_dict().items()):
        shape = tuple(param.shape)
        if name.endswith("A_log"):
            value = np.log(rng.uniform(0.05, 4.0, size=shape))
        elif name.endswith("dt_bias"):
            value = rng.normal(0.0, 1.0, size=shape)
        elif name.endswith("linear_attn.norm.weight"):
            value = 1.0 + rng.normal(0.0, 0.2, size=shape)  # used as stored (no +1)
        elif name.endswith("norm.weight"):
            value = rng.normal(0.0, 0.2, size=shape)  # HF uses 1 + w
        elif name.endswith("conv1d.weight"):
            value = rng.normal(0.0, 0.5, size=shape)
        elif name.endswith("embed_tokens.weight"):
            value = rng.normal(0.0, 1.0, size=shape)
        elif name == "lm_head.weight":
            value = rng.normal(0.0, 2.0 / np.sqrt(shape[1]), size=shape)
        else:
            value = rng.normal(0.0, 1.0 / np.sqrt(shape[1]), size=shape)
        state[name] = torch.from_numpy(value.astype(np.float32))
    return state


def converter_layout(g: GGUFFile, hf: dict[str, np.ndarray], cfg: dict) -> dict:
    """What llama.cpp's converter wrote, checked tensor by tensor against the checkpoint."""
    n_k = cfg["linear_num_key_heads"]
    rep = cfg["linear_num_value_heads"] // n_k
    layer = cfg["layer_types"].index("linear_attention")
    attn_layer = cfg["layer_types"].index("full_attention")
    a, b = f"model.layers.{layer}.linear_attn.", f"blk.{layer}."
    qk = 2 * n_k * cfg["linear_key_head_dim"]
    out = g.tensor(b + "ssm_out.weight")
    conv = g.tensor(b + "ssm_conv1d.weight")

    def same(x, y) -> bool:
        return bool(np.array_equal(np.asarray(x, np.float32), np.asarray(y, np.float32)))

    return {
        "attn_norm_is_1_plus_w": same(
            g.tensor(f"blk.{layer}.attn_norm.weight"), 1 + hf[f"model.layers.{layer}.input_layernorm.weight"]
        ),
        "attn_q_norm_is_1_plus_w": same(
            g.tensor(f"blk.{attn_layer}.attn_q_norm.weight"),
            1 + hf[f"model.layers.{attn_layer}.self_attn.q_norm.weight"],
        ),
        "ssm_norm_is_raw": same(g.tensor(b + "ssm_norm.weight"), hf[a + "norm.weight"]),
        "ssm_a_is_minus_exp_A_log_tiled": bool(
            np.allclose(untile_rows(g.tensor(b + "ssm_a"), n_k, rep), -np.exp(hf[a + "A_log"]), rtol=1e-6)
        ),
        "ssm_conv1d_ne": list(g.tensors[b + "ssm_conv1d.weight"].ne),
        "ssm_conv1d_v_channels_tiled": same(
            np.concatenate([conv[:qk], untile_rows(conv[qk:], n_k, rep)]), hf[a + "conv1d.weight"][:, 0, :]
        ),
        "ssm_out_columns_tiled": same(untile_columns(out, n_k, rep), hf[a + "out_proj.weight"]),
        "ssm_out_columns_grouped": same(out, hf[a + "out_proj.weight"]),
        "attn_q_rows_per_head_query_then_gate": same(
            g.tensor(f"blk.{attn_layer}.attn_q.weight"), hf[f"model.layers.{attn_layer}.self_attn.q_proj.weight"]
        ),
        "qwen35_metadata": {k: v for k, v in g.metadata.items() if k.startswith("qwen35.")},
        "tokenizer.ggml.pre": g.get("tokenizer.ggml.pre"),
        "tokenizer_tokens": len(g.get("tokenizer.ggml.tokens", [])),
    }


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = Path(argv[1])
    work = Path(argv[2]) if len(argv) == 3 else HERE / ".work" / "llamacpp-hf"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    out_dir.mkdir(parents=True, exist_ok=True)

    tokenizer = build_tokenizer()
    specials = {tokenizer.convert_tokens_to_ids(t): t for t in SPECIAL_TOKENS}
    if specials != {448: "<|endoftext|>", 449: "<|im_start|>", 450: "<|im_end|>"}:
        raise SystemExit(f"unexpected special token ids {specials}")
    tokenizer.save_pretrained(work)

    model = build_model(CONFIG)
    model.load_state_dict(random_state(model, np.random.default_rng(SEED)), strict=True)
    model.save_pretrained(work, safe_serialization=True)

    gguf_path = out_dir / "model.gguf"
    subprocess.run([sys.executable, str(HERE / "run_converter.py"), str(work), str(gguf_path)], check=True)

    text = (CORPUS + "\n") * 2
    tokens = tokenizer.encode(text, add_special_tokens=False)[:PROMPT_TOKENS]
    if len(tokens) < PROMPT_TOKENS or any(t >= TOKENIZER_VOCAB for t in tokens):
        raise SystemExit(f"token sequence too short or special: {len(tokens)}")
    (out_dir / "tokens.json").write_text(
        json.dumps({"tokens": tokens, "text_prefix_of": "CORPUS + newline, twice (make_llamacpp_fixture.py)"})
        + "\n"
    )

    # The oracle: transformers on the checkpoint itself.
    checkpoint = modeling_qwen3_5.Qwen3_5ForCausalLM.from_pretrained(
        work, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    hf = {k: v.numpy() for k, v in checkpoint.state_dict().items()}

    # Our reverse mapping of the converter's file, against the same checkpoint.
    g = GGUFFile(str(gguf_path))
    cfg = hf_config_dict(g)
    rebuilt = hf_state_dict(g, cfg)
    weight_diff = max(float(np.max(np.abs(rebuilt[k].astype(np.float64) - hf[k]))) for k in hf)
    rebuilt_logits = teacher_forced_logits(build_model(cfg, rebuilt), tokens)
    checkpoint_logits = teacher_forced_logits(checkpoint, tokens)

    meta = {
        "source": "hf-checkpoint (random, seeded), converted by llama.cpp convert_hf_to_gguf.py --outtype f32",
        "converter": (HERE / ".vendor" / "VERSION").read_text().strip(),
        "seed": SEED,
        "gguf": "model.gguf",
        "converter_layout": converter_layout(g, hf, CONFIG),
        "gguf_config_matches_checkpoint": {k: cfg[k] == CONFIG[k] for k in cfg},
        "reverse_mapping_max_abs_weight_diff": weight_diff,
        "reverse_mapping_max_abs_logit_diff": float(np.max(np.abs(rebuilt_logits - checkpoint_logits))),
    }
    masked = unused_token_ids(g.get("tokenizer.ggml.token_type"))
    write_fixture(out_dir, checkpoint, CONFIG, tokens, masked, meta)
    print(json.dumps(meta, indent=1, default=str)[:3000])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
