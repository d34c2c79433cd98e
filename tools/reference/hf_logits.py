"""hf_logits.py MODEL.gguf TOKENS.json OUT_DIR

Rebuilds the fp32 weights of a qwen35 GGUF in the original (HF) basis by the reverse mapping of
model-spec §11.3, loads them into transformers' Qwen3_5ForCausalLM and writes teacher-forced logits,
a greedy continuation and a meta.json to OUT_DIR (format: tools/reference/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gguf_read import GGUFFile
from gguf_to_hf import check_fold_identity, hf_config_dict, hf_state_dict
from hf_runner import build_model, unused_token_ids, write_fixture

FOLD_IDENTITY_LIMIT = 1e-9


def read_tokens(path: Path, vocab: int) -> list[int]:
    tokens = json.loads(path.read_text())["tokens"]
    if not tokens or any((not isinstance(t, int)) or t < 0 or t >= vocab for t in tokens):
        raise SystemExit(f"{path}: tokens must be a non-empty list of ids in [0, {vocab})")
    return tokens


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    model_path, tokens_path, out_dir = Path(argv[1]), Path(argv[2]), Path(argv[3])
    g = GGUFFile(str(model_path))
    cfg = hf_config_dict(g)
    fold = check_fold_identity(g)
    if fold.get("fold_identity_worst_rel_err", 0.0) > FOLD_IDENTITY_LIMIT:
        raise SystemExit(f"{model_path}: folded matvec identity fails: {fold}")
    state = hf_state_dict(g, cfg)
    model = build_model(cfg, state)
    tokens = read_tokens(tokens_path, cfg["vocab_size"])
    meta = {
        "source": "gguf",
        "gguf": model_path.name,
        "gguf_tensor_types": sorted({info.type_name for info in g.tensors.values()}),
        "hadamard": {
            "enabled": g.get("prism.hadamard.version") is not None,
            "block_size": g.get("prism.hadamard.block_size"),
            "sign_widths": g.get("prism.hadamard.sign_widths"),
            "gdn_v_grouped": g.get("prism.hadamard.gdn_v_grouped"),
        },
        **fold,
    }
    write_fixture(out_dir, model, cfg, tokens, unused_token_ids(g.get("tokenizer.ggml.token_type")), meta)
    print(f"wrote {out_dir}: {len(tokens)} positions x {cfg['vocab_size']} logits; {fold}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
