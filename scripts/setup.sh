#!/usr/bin/env bash
# Installs everything tern needs to build and test (Debian packages). Idempotent.
set -euo pipefail
packages=(
  build-essential cmake ninja-build git pkg-config
  clang libclang-rt-14-dev clang-format
  libcli11-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libutf8proc-dev libpcre2-dev libcpp-httplib-dev libxxhash-dev zlib1g-dev
  python3 python3-venv
  chromium chromium-driver
)
# On x86-64, the AArch64 cross build (scripts/test_aarch64.sh): Debian's cross compiler, qemu-user to
# run its tests, and the libraries above for arm64 beside the native ones (multiarch).
cross_packages=(g++-aarch64-linux-gnu qemu-user)
arm64_libraries=(libfmt-dev libspdlog-dev libutf8proc-dev libpcre2-dev libcpp-httplib-dev
                 libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev)

arch=$(dpkg --print-architecture)
# Installed for architecture $2 (or as an architecture-independent package).
installed() {
  dpkg-query -W -f='${Architecture} ${db:Status-Status}\n' "$1" 2>/dev/null | grep -qE "^($2|all) installed$"
}
missing=()
for p in "${packages[@]}"; do
  installed "$p" "$arch" || missing+=("$p")
done
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
if [ "$arch" = amd64 ]; then
  for p in "${cross_packages[@]}"; do
    installed "$p" "$arch" || missing+=("$p")
  done
  for p in "${arm64_libraries[@]}"; do
    installed "$p" arm64 || missing+=("$p:arm64")
  done
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then $SUDO dpkg --add-architecture arm64; fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
echo "setup: all dependencies present"
