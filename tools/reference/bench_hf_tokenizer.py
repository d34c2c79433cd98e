#!/usr/bin/env python3
"""HF tokenizers encode throughput, single-threaded, on the tokenizer fixture corpus: the reference for
bench/tokenizer_bench.cpp. Run from the repository root:
    tools/reference/.venv/bin/python tools/reference/bench_hf_tokenizer.py
Prints MB/s of process CPU time (the C++ benchmark reports CPU time too; the machine may be shared)
for encode() per string in a loop and for encode_batch() on one thread."""
import gzip
import json
import os
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"
from tokenizers import Tokenizer  # noqa: E402

DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "tokenizer"


def best_of(fn, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main():
    corpus = [json.loads(line) for line in open(DIR / "corpus.jsonl", encoding="utf-8")]
    nbytes = sum(len(s.encode()) for s in corpus)
    for name in ("qwen3_6", "qwen"):
        tok = Tokenizer.from_str(gzip.decompress((DIR / name / "tokenizer.json.gz").read_bytes()).decode())
        for s in corpus:  # warm the word cache, as the C++ warm benchmark does
            tok.encode(s, add_special_tokens=False)
        loop = best_of(lambda: [tok.encode(s, add_special_tokens=False) for s in corpus])
        batch = best_of(lambda: tok.encode_batch(corpus, add_special_tokens=False))
        print(f"{name}: {len(corpus)} strings, {nbytes} bytes; encode loop {nbytes / loop / 1e6:.2f} MB/s "
              f"({loop * 1e3:.1f} ms), encode_batch 1 thread {nbytes / batch / 1e6:.2f} MB/s ({batch * 1e3:.1f} ms)")


if __name__ == "__main__":
    main()
