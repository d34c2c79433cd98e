#!/usr/bin/env bash
# End-to-end tests of `tern serve`: builds tern, makes the tiny model, and runs the pytest suite under
# tests/server/e2e (openai client, a load test, the chat page in headless Chromium), whose fixtures
# start the server on free 127.0.0.1 ports and stop it. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${TERN_BUILD_DIR:-build}
jobs=${TERN_JOBS:-$(nproc)}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTERN_WERROR=ON >/dev/null
fi
cmake --build "$build" --target tern -j"$jobs"

venv=tests/server/e2e/.venv
if [ ! -x "$venv/bin/pytest" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r tests/server/e2e/requirements.txt
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tern" synth --preset tiny --out "$work/tiny.gguf" >/dev/null
TERN_BINARY="$(realpath "$build/tern")" TERN_MODEL="$work/tiny.gguf" TERN_E2E_LOGS="$work" \
  "$venv/bin/pytest" -q -s tests/server/e2e "$@"
