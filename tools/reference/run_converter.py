"""run_converter.py HF_DIR OUT.gguf

Runs llama.cpp's own convert_hf_to_gguf.py (vendored in the llama-cpp-python sdist, extracted by
setup_venv.sh into tools/reference/.vendor) with --outtype f32 --no-mtp (the tiny checkpoint has no MTP head).

One thing is patched, and only for the vocabulary: the converter identifies a BPE pre-tokenizer by hashing
the ids its tokenizer gives for a fixed string, and a tiny test tokenizer matches no known hash. We answer
"qwen35" (the tiny tokenizer really uses the Qwen3.5 pre-tokenizer regex). Tensor conversion is untouched.
"""

from __future__ import annotations

import sys
from pathlib import Path

VENDOR = Path(__file__).resolve().parent / ".vendor"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    if not (VENDOR / "convert_hf_to_gguf.py").is_file():
        print(f"{VENDOR}/convert_hf_to_gguf.py is missing: run tools/reference/setup_venv.sh", file=sys.stderr)
        return 2
    sys.path.insert(0, str(VENDOR))
    import convert_hf_to_gguf
    from conversion.base import TextModel

    TextModel.get_vocab_base_pre = lambda self, tokenizer: "qwen35"
    sys.argv = ["convert_hf_to_gguf.py", argv[1], "--outtype", "f32", "--no-mtp", "--outfile", argv[2]]
    convert_hf_to_gguf.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
