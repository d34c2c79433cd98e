#include "tools/synth_plan.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "hadamard/transform.h"
#include "quant/codec.h"
#include "tools/synth_random.h"

namespace tern::tools {

namespace {

using quant::TensorType;

// Scales keep every activation well conditioned through all layers (so logits are far from ties):
// input projections N(0, 1/K) give unit-variance outputs from an RMS-normed input; the three output
// projections add about 1/n_layer each to a residual stream that the unit-variance embedding starts;
// the head's logits have a standard deviation near 2.
constexpr float kEmbeddingStd = 1.0f;
constexpr float kHeadGain = 2.0f;
constexpr float kNormGainNoise = 0.1f;
constexpr float kMinDt = 1e-3f;
constexpr float kMaxDt = 1e-1f;
const float kMaxALog = std::log(16.0f);  // A = exp(A_log) in [1, 16]

float inverse_sqrt(double x) {
  return static_cast<float>(1.0 / std::sqrt(x));
}

TensorRecipe matrix(std::string name, TensorType type, int64_t k, int64_t n, float std, Storage storage) {
  TensorRecipe r;
  r.name = std::move(name);
  r.type = type;
  r.ne = {k, n};
  r.rows = n;
  r.cols = k;
  r.distribution = Distribution::kNormal;
  r.a = 0.0f;
  r.b = std;
  r.storage = storage;
  return r;
}

TensorRecipe vector_of(std::string name, int64_t n, Distribution distribution, float a, float b,
                       Storage storage) {
  TensorRecipe r;
  r.name = std::move(name);
  r.type = TensorType::kF32;
  r.ne = {n};
  r.rows = 1;
  r.cols = n;
  r.distribution = distribution;
  r.a = a;
  r.b = b;
  r.storage = storage;
  return r;
}

TensorRecipe norm_gain(std::string name, int64_t n) {
  return vector_of(std::move(name), n, Distribution::kNormal, 0.0f, kNormGainNoise, Storage::kPlusOne);
}

// Per-v-head entries (ssm_a, ssm_dt.bias): rows of one value, so they tile like any row-indexed tensor.
TensorRecipe per_head(std::string name, int64_t n_v, Distribution distribution, float a, float b,
                      Storage storage) {
  TensorRecipe r = vector_of(std::move(name), n_v, distribution, a, b, storage);
  r.rows = n_v;
  r.cols = 1;
  return r;
}

void tile_v_heads(TensorRecipe& r, const SynthSpec& spec, int64_t begin, int64_t head_rows) {
  r.tiled_begin = begin;
  r.head_rows = head_rows;
  r.n_k = spec.gdn_n_k;
  r.rep = spec.gdn_n_v / spec.gdn_n_k;
}

void add_gdn_layer(std::vector<TensorRecipe>& out, const SynthSpec& spec, const std::string& p) {
  const TensorType ternary = spec.ternary_type;
  const int64_t d = spec.d_model;
  const int64_t qk = spec.gdn_qk_width();
  const int64_t n_v = spec.gdn_n_v;
  const float in_std = inverse_sqrt(static_cast<double>(d));

  TensorRecipe qkv =
      matrix(p + "attn_qkv.weight", ternary, d, spec.gdn_conv_channels(), in_std, Storage::kFolded);
  tile_v_heads(qkv, spec, 2 * qk, spec.gdn_v_dim);
  out.push_back(std::move(qkv));

  TensorRecipe gate = matrix(p + "attn_gate.weight", ternary, d, spec.gdn_inner(), in_std, Storage::kFolded);
  tile_v_heads(gate, spec, 0, spec.gdn_v_dim);
  out.push_back(std::move(gate));

  TensorRecipe conv =
      matrix(p + "ssm_conv1d.weight", TensorType::kF32, spec.conv_kernel, spec.gdn_conv_channels(),
             inverse_sqrt(static_cast<double>(spec.conv_kernel)), Storage::kRaw);
  tile_v_heads(conv, spec, 2 * qk, spec.gdn_v_dim);
  out.push_back(std::move(conv));

  TensorRecipe a_log = per_head(p + "ssm_a", n_v, Distribution::kUniform, 0.0f, kMaxALog, Storage::kNegExp);
  tile_v_heads(a_log, spec, 0, 1);
  out.push_back(std::move(a_log));

  TensorRecipe dt_bias = per_head(p + "ssm_dt.bias", n_v, Distribution::kInverseSoftplusLogUniform, kMinDt,
                                  kMaxDt, Storage::kRaw);
  tile_v_heads(dt_bias, spec, 0, 1);
  out.push_back(std::move(dt_bias));

  for (const char* kind : {"ssm_alpha.weight", "ssm_beta.weight"}) {
    TensorRecipe proj = matrix(p + kind, TensorType::kBF16, d, n_v, in_std, Storage::kRaw);
    tile_v_heads(proj, spec, 0, 1);
    out.push_back(std::move(proj));
  }

  out.push_back(vector_of(p + "ssm_norm.weight", spec.gdn_v_dim, Distribution::kNormal, 1.0f, kNormGainNoise,
                          Storage::kRaw));
  // Input columns stay grouped (gdn_v_grouped = true): nothing to reorder.
  out.push_back(matrix(p + "ssm_out.weight", ternary, spec.gdn_inner(), d,
                       inverse_sqrt(static_cast<double>(spec.gdn_inner() * spec.n_layer)), Storage::kFolded));
}

void add_attention_layer(std::vector<TensorRecipe>& out, const SynthSpec& spec, const std::string& p) {
  const TensorType ternary = spec.ternary_type;
  const int64_t d = spec.d_model;
  const float in_std = inverse_sqrt(static_cast<double>(d));
  const int64_t kv_width = spec.n_head_kv * spec.head_dim;
  // Per head: head_dim query rows then head_dim gate rows (model-spec §5.3).
  out.push_back(
      matrix(p + "attn_q.weight", ternary, d, 2 * spec.attention_width(), in_std, Storage::kFolded));
  out.push_back(matrix(p + "attn_k.weight", ternary, d, kv_width, in_std, Storage::kFolded));
  out.push_back(matrix(p + "attn_v.weight", ternary, d, kv_width, in_std, Storage::kFolded));
  out.push_back(norm_gain(p + "attn_q_norm.weight", spec.head_dim));
  out.push_back(norm_gain(p + "attn_k_norm.weight", spec.head_dim));
  out.push_back(matrix(p + "attn_output.weight", ternary, spec.attention_width(), d,
                       inverse_sqrt(static_cast<double>(spec.attention_width() * spec.n_layer)),
                       Storage::kFolded));
}

}  // namespace

std::vector<TensorRecipe> plan_tensors(const SynthSpec& spec) {
  const TensorType ternary = spec.ternary_type;
  const int64_t d = spec.d_model;
  std::vector<TensorRecipe> out;
  out.push_back(matrix("token_embd.weight", ternary, d, spec.vocab, kEmbeddingStd, Storage::kFolded));
  out.push_back(norm_gain("output_norm.weight", d));
  out.push_back(matrix("output.weight", ternary, d, spec.vocab,
                       kHeadGain * inverse_sqrt(static_cast<double>(d)), Storage::kFolded));
  for (int64_t layer = 0; layer < spec.n_layer; ++layer) {
    const std::string p = "blk." + std::to_string(layer) + ".";
    out.push_back(norm_gain(p + "attn_norm.weight", d));
    if (spec.is_attention_layer(layer)) {
      add_attention_layer(out, spec, p);
    } else {
      add_gdn_layer(out, spec, p);
    }
    out.push_back(norm_gain(p + "post_attention_norm.weight", d));
    const float in_std = inverse_sqrt(static_cast<double>(d));
    out.push_back(matrix(p + "ffn_gate.weight", ternary, d, spec.d_ff, in_std, Storage::kFolded));
    out.push_back(matrix(p + "ffn_up.weight", ternary, d, spec.d_ff, in_std, Storage::kFolded));
    out.push_back(matrix(p + "ffn_down.weight", ternary, spec.d_ff, d,
                         inverse_sqrt(static_cast<double>(spec.d_ff * spec.n_layer)), Storage::kFolded));
  }
  return out;
}

int64_t source_row(const TensorRecipe& recipe, int64_t stored_row) {
  if (recipe.head_rows == 0) return stored_row;
  const int64_t offset = stored_row - recipe.tiled_begin;
  const int64_t n_v = recipe.n_k * recipe.rep;
  if (offset < 0 || offset >= n_v * recipe.head_rows) return stored_row;
  // Tiled slot j = r·n_k + k holds grouped head g = k·rep + r (model-spec §4.5).
  const int64_t slot = offset / recipe.head_rows;
  const int64_t within = offset % recipe.head_rows;
  const int64_t grouped = (slot % recipe.n_k) * recipe.rep + slot / recipe.n_k;
  return recipe.tiled_begin + grouped * recipe.head_rows + within;
}

void original_row(uint64_t seed, const TensorRecipe& recipe, int64_t row, std::span<float> out) {
  RowRandom random(seed, recipe.name, static_cast<uint64_t>(row));
  switch (recipe.distribution) {
    case Distribution::kNormal:
      for (float& x : out) x = recipe.a + recipe.b * random.normal();
      break;
    case Distribution::kUniform:
      for (float& x : out) x = recipe.a + (recipe.b - recipe.a) * random.uniform();
      break;
    case Distribution::kInverseSoftplusLogUniform: {
      const double log_lo = std::log(static_cast<double>(recipe.a));
      const double log_hi = std::log(static_cast<double>(recipe.b));
      for (float& x : out) {
        const double dt = std::exp(log_lo + (log_hi - log_lo) * random.uniform());
        x = static_cast<float>(dt + std::log(-std::expm1(-dt)));  // softplus(x) = dt
      }
      break;
    }
  }
}

std::span<const float> SignTable::signs_for(int64_t width) const {
  const auto it = values.find(width);
  if (it == values.end()) fail(ErrorKind::kInternal, "synth: no sign vector for width {}", width);
  return it->second;
}

SignTable make_signs(uint64_t seed, const std::vector<TensorRecipe>& recipes) {
  SignTable table;
  for (const TensorRecipe& r : recipes) {
    if (r.folded()) table.widths.push_back(r.cols);
  }
  std::sort(table.widths.begin(), table.widths.end());
  table.widths.erase(std::unique(table.widths.begin(), table.widths.end()), table.widths.end());
  for (const int64_t width : table.widths) {
    RowRandom random(seed, "prism.hadamard.sign_values", static_cast<uint64_t>(width));
    std::vector<float>& signs = table.values[width];
    signs.resize(static_cast<size_t>(width));
    for (float& s : signs) s = random.sign();
  }
  return table;
}

size_t stored_row_bytes(const TensorRecipe& recipe) {
  const auto bytes = quant::row_bytes(recipe.type, recipe.cols);
  if (!bytes) fail(ErrorKind::kInternal, "synth: {} has no row size for {} values", recipe.name, recipe.cols);
  return *bytes;
}

void encode_row(const SynthSpec& spec, const SignTable& signs, const TensorRecipe& recipe, int64_t stored_row,
                std::span<float> scratch, uint8_t* dst) {
  const std::span<float> row = scratch.first(static_cast<size_t>(recipe.cols));
  original_row(spec.seed, recipe, source_row(recipe, stored_row), row);
  switch (recipe.storage) {
    case Storage::kRaw:
      break;
    case Storage::kPlusOne:
      for (float& x : row) x = 1.0f + x;
      break;
    case Storage::kNegExp:
      for (float& x : row) x = -std::exp(x);
      break;
    case Storage::kFolded:
      hadamard::forward(row, signs.signs_for(recipe.cols), spec.block_size);
      break;
  }
  quant::quantize_row(recipe.type, row.data(), dst, recipe.cols);
}

}  // namespace tern::tools
