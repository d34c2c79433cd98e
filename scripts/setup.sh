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
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
echo "setup: all dependencies present"
