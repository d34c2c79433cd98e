#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and fuzzes the GGUF reader for SECONDS
# (default 60) on a scratch copy of the committed seed corpus. Exits non-zero on any crash, sanitizer
# report, leak, timeout or oversized allocation; the reproducer lands in fuzz/artifacts/.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_FUZZ=ON \
  -DTERN_TESTS=OFF -DTERN_BENCH=OFF -DTERN_WERROR=ON >/dev/null
cmake --build build-fuzz -j"${TERN_JOBS:-2}" --target gguf_reader_fuzz

corpus=build-fuzz/corpus/gguf
rm -rf "$corpus"
mkdir -p "$corpus" fuzz/artifacts
cp fuzz/corpus/gguf/* "$corpus"/

echo "== fuzzing the GGUF reader for ${seconds}s"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ./build-fuzz/gguf_reader_fuzz "$corpus" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=256 -print_final_stats=1 -artifact_prefix=fuzz/artifacts/
