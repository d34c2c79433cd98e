"""make_tokens.py MODEL.gguf OUT.json COUNT SEED

Writes {"tokens": [...]} with COUNT ids drawn (numpy default_rng(SEED), uniform, with repeats) from the
ids whose tokenizer.ggml.token_type is NORMAL (1) or BYTE (6): no control, user-defined or padding rows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from gguf_read import GGUFFile

ORDINARY_TOKEN_TYPES = (1, 6)


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    g = GGUFFile(argv[1])
    count, seed = int(argv[3]), int(argv[4])
    types = np.asarray(g.get("tokenizer.ggml.token_type"))
    vocab_rows = g.tensors["token_embd.weight"].ne[1]
    ordinary = np.flatnonzero(np.isin(types, ORDINARY_TOKEN_TYPES))
    ordinary = ordinary[ordinary < vocab_rows]
    if ordinary.size == 0:
        raise SystemExit(f"{argv[1]}: no NORMAL or BYTE tokens")
    tokens = np.random.default_rng(seed).choice(ordinary, size=count).tolist()
    Path(argv[2]).write_text(
        json.dumps({"tokens": tokens, "generator": f"make_tokens.py {count} {seed}: uniform NORMAL/BYTE ids"})
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
