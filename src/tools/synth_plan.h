// What `tern synth` writes, tensor by tensor, and how each stored row is made: the original-basis
// (HF) values from a counter-based random stream, the converter's reorder and value mapping, the
// Hadamard fold, then the tensor's encoding (model-spec §2.7, §4.2, §4.5, Appendix A).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "quant/types.h"
#include "tools/synth_spec.h"

namespace tern::tools {

// How the original-basis values of a row are drawn.
enum class Distribution {
  kNormal,                     // a + b·N(0, 1)
  kUniform,                    // uniform in [a, b)
  kInverseSoftplusLogUniform,  // softplus⁻¹(dt), dt log-uniform in [a, b): the usual dt_bias init
};

// How the converter maps original values to stored ones (Appendix A).
enum class Storage {
  kRaw,      // as drawn
  kPlusOne,  // 1 + w: the five RMSNorm gains HF stores zero-centred
  kNegExp,   // −exp(A_log): ssm_a
  kFolded,   // T_K(w) row by row (§4.2); also the embedding, whose rows are listed as inverse
};

struct TensorRecipe {
  std::string name;
  quant::TensorType type = quant::TensorType::kF32;
  std::vector<int64_t> ne;  // GGUF order
  // The tensor is `rows` rows of `cols` values as generated (rows·cols = elements); usually the
  // GGUF rows, but per-head entries (ssm_a, ssm_dt.bias) are rows of one value so they can be tiled.
  int64_t rows = 0;
  int64_t cols = 0;
  Distribution distribution = Distribution::kNormal;
  float a = 0.0f;
  float b = 0.0f;
  Storage storage = Storage::kRaw;
  // Grouped → tiled V-head reorder (§4.5): rows [tiled_begin, tiled_begin + n_v·head_rows) are
  // n_k·rep heads of head_rows rows each. head_rows == 0: no reorder.
  int64_t tiled_begin = 0;
  int64_t head_rows = 0;
  int64_t n_k = 0;
  int64_t rep = 0;

  bool folded() const { return storage == Storage::kFolded; }
  bool inverse_listed() const { return name == "token_embd.weight"; }
};

// Every tensor of the file in writing order: token_embd, output_norm, output, then each layer.
std::vector<TensorRecipe> plan_tensors(const SynthSpec& spec);

// The generated (grouped, HF-order) row whose values are stored at `stored_row`.
int64_t source_row(const TensorRecipe& recipe, int64_t stored_row);

// The original-basis values of generated row `row` (before +1, −exp or the fold). out.size() == cols.
void original_row(uint64_t seed, const TensorRecipe& recipe, int64_t row, std::span<float> out);

// One ±1 vector per distinct folded input width, ascending (prism.hadamard.sign_widths/values).
struct SignTable {
  std::vector<int64_t> widths;
  std::map<int64_t, std::vector<float>> values;

  std::span<const float> signs_for(int64_t width) const;
};
SignTable make_signs(uint64_t seed, const std::vector<TensorRecipe>& recipes);

// Bytes of one stored row; `scratch` holds at least `cols` floats, `dst` the row's encoded bytes.
size_t stored_row_bytes(const TensorRecipe& recipe);
void encode_row(const SynthSpec& spec, const SignTable& signs, const TensorRecipe& recipe, int64_t stored_row,
                std::span<float> scratch, uint8_t* dst);

}  // namespace tern::tools
