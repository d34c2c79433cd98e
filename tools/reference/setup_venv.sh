#!/usr/bin/env bash
# Creates tools/reference/.venv with the oracle's packages (PyPI) and extracts llama.cpp's converter
# from the llama-cpp-python sdist into tools/reference/.vendor (both git-ignored, never committed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv"
vendor="$here/.vendor"
llama_cpp_python_version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"

if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --quiet numpy torch transformers safetensors tokenizers sentencepiece
"$venv/bin/python" -c 'import transformers.models.qwen3_5 as m; print("transformers", __import__("transformers").__version__, "has", m.__name__)'

if [[ ! -f "$vendor/convert_hf_to_gguf.py" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$venv/bin/pip" download --quiet --no-deps --no-binary llama-cpp-python -d "$tmp" "llama-cpp-python==$llama_cpp_python_version"
  tar -xzf "$tmp"/llama_cpp_python-*.tar.gz -C "$tmp"
  src="$(echo "$tmp"/llama_cpp_python-*/vendor/llama.cpp)"
  mkdir -p "$vendor"
  cp "$src/convert_hf_to_gguf.py" "$vendor/"
  cp -r "$src/conversion" "$vendor/conversion"
  cp -r "$src/gguf-py" "$vendor/gguf-py"
  echo "llama-cpp-python==$llama_cpp_python_version" >"$vendor/VERSION"
fi
# The converter's own runtime needs (gguf-py from the same sdist, not PyPI's gguf).
"$venv/bin/pip" install --quiet "$vendor/gguf-py"
echo "venv ready: $venv"
