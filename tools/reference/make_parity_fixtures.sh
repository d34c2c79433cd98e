#!/usr/bin/env bash
# Regenerates every forward-pass parity fixture under tests/fixtures/parity/ (format: README.md here).
#   tools/reference/make_parity_fixtures.sh            all fixtures
#   tools/reference/make_parity_fixtures.sh NAME...    only those (tiny-pq2_0, tiny-ptq1_0, wide-b128-l7, llamacpp-f32)
# Needs build/tern (or TERN=path) for the tern-made models; makes the venv on first use.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tern="${TERN:-$root/build/tern}"
py="$here/.venv/bin/python"
out="$root/tests/fixtures/parity"
prompt_tokens=330 # > 5 chunks of 64, crosses 128- and 256-token chunk boundaries too

[[ -x "$py" && -f "$here/.vendor/convert_hf_to_gguf.py" ]] || "$here/setup_venv.sh"
(cd "$here" && "$py" -m unittest -q test_reference.py)

# tern synth model -> seeded ordinary token ids -> transformers logits on the unfolded weights.
tern_fixture() {
  local name="$1" token_seed="$2"
  shift 2
  [[ -x "$tern" ]] || { echo "no tern binary at $tern: build it first (or set TERN)" >&2; exit 1; }
  local dir="$out/$name"
  rm -rf "$dir" && mkdir -p "$dir"
  "$tern" synth -o "$dir/model.gguf" "$@"
  (cd "$here" && "$py" make_tokens.py "$dir/model.gguf" "$dir/tokens.json" "$prompt_tokens" "$token_seed")
  (cd "$here" && "$py" hf_logits.py "$dir/model.gguf" "$dir/tokens.json" "$dir")
  printf '%s\n' "tern synth $*" >"$dir/synth_command.txt"
}

make_one() {
  case "$1" in
  # (a) the tiny preset's geometry (model-spec §11.1), PQ2_0, gdn_v_grouped.
  tiny-pq2_0) tern_fixture tiny-pq2_0 101 --preset tiny --type pq2_0 --seed 1 ;;
  # (b) the same geometry in PTQ1_0 (staged trit order), other weights.
  tiny-ptq1_0) tern_fixture tiny-ptq1_0 102 --preset tiny --type ptq1_0 --seed 2 ;;
  # (c) other head counts (4 q / 2 kv heads, 4 k / 8 v GDN heads, rep 2), k dim != v dim, Hadamard
  #     block 128, 7 layers with attention every 3rd (layers 2, 5), a fourth folded width (attention
  #     output 128 beside 256, 384, 640), other eps, rope base and vocab.
  wide-b128-l7)
    tern_fixture wide-b128-l7 103 --preset tiny --type pq2_0 --seed 3 --layers 7 --attention-interval 3 \
      --heads 4 --kv-heads 2 --head-dim 32 --rope-dim 8 --gdn-k-heads 4 --gdn-v-heads 8 --gdn-k-dim 32 \
      --gdn-v-dim 48 --block-size 128 --rms-eps 1e-5 --rope-theta 10000 --vocab 896
    ;;
  # (d) llama.cpp's own converter on a random HF checkpoint (F32, no fold, ssm_out tiled).
  llamacpp-f32) (cd "$here" && "$py" make_llamacpp_fixture.py "$out/llamacpp-f32") ;;
  *)
    echo "unknown fixture $1" >&2
    exit 2
    ;;
  esac
}

if [[ $# -eq 0 ]]; then
  set -- tiny-pq2_0 tiny-ptq1_0 wide-b128-l7 llamacpp-f32
fi
for name in "$@"; do make_one "$name"; done
du -sh "$out"/*
