#!/usr/bin/env bash
# Runs every test tern has: the unit tests in a Release build and in an ASan+UBSan build (on x86-64 also
# in an AArch64 cross build under qemu-user, scripts/test_aarch64.sh), a short fuzzing run of the GGUF
# reader, and the end-to-end server tests (scripts/e2e.sh). This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== Release build and unit tests"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERN_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== ASan+UBSan build and unit tests"
# GCC 12 reports false maybe-uninitialized warnings inside libstdc++ (std::regex) under the sanitizers.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTERN_SANITIZE=ON -DTERN_WERROR=ON \
  -DTERN_BENCH=OFF -DCMAKE_CXX_FLAGS="-O1 -Wno-maybe-uninitialized" >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

if [ "$(uname -m)" = x86_64 ]; then
  echo "== AArch64 cross build and unit tests under qemu-user (NEON and SDOT kernels)"
  ./scripts/test_aarch64.sh
fi

echo "== fuzzing the GGUF reader briefly (scripts/fuzz.sh 600 for the long run)"
./scripts/fuzz.sh "${TERN_FUZZ_SECONDS:-60}"

echo "== End-to-end server tests"
./scripts/e2e.sh
