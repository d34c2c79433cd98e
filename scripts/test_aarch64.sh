#!/usr/bin/env bash
# Cross-builds tern for AArch64 (the kernel benchmark suite too, so it keeps building) and runs its unit
# tests under qemu-user (scripts/test.sh calls this on x86-64): once on qemu's default CPU, which has the
# dot-product extension (the SDOT kernels), and the kernel, engine and parity tests again on a
# Cortex-A72, an ARMv8.0 CPU without it (the NEON kernels). Needs the packages scripts/setup.sh installs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=Release -DTERN_WERROR=ON >/dev/null
cmake --build build-aarch64 -j"$jobs"
# qemu-user accepts madvise without passing it on, so the kernel never marks the pages as advised.
ctest --test-dir build-aarch64 --output-on-failure -j"$jobs" -E 'LargeBlocksAreAdvisedHugePages'
QEMU_CPU=cortex-a72 ctest --test-dir build-aarch64 --output-on-failure -j"$jobs" -R '^(Cpu|Parity|EngineTest)'
