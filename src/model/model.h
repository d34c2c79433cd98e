// A loaded qwen35 model: immutable after load, shared by every sequence and engine (design.md).
// It owns the file mapping; the weights are views into it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/huge_pages.h"
#include "gguf/reader.h"
#include "hadamard/contract.h"
#include "model/config.h"
#include "model/weights.h"

namespace tern::model {

// The Hadamard activation sites (model-spec §4.4), resolved at load: one sign vector per site width.
// `enabled` is false for dense files (no contract): then no site transforms at all. Under sign_mode
// identity the spans are empty (signs all +1).
struct FoldSites {
  bool enabled = false;
  int64_t block = 0;
  std::span<const float> model_width;       // d: embedding inverse, q/k/v, qkv/gate, ffn gate/up, head
  std::span<const float> attention_output;  // n_head·head_dim: attn_output
  std::span<const float> gdn_output;        // gdn inner: ssm_out
  std::span<const float> ffn_inner;         // d_ff: ffn_down
};

// Where the matrices a token reads live after loading.
enum class WeightPlacement {
  // Copied into anonymous huge-page memory (core/huge_pages.h), the file's pages dropped tensor by
  // tensor as they are copied, so the peak stays ≈ one copy. Decode streams them fastest.
  kHugePages,
  // Read in place from the file's memory map (4 KiB page-cache pages): the fastest start, and pages
  // shared by every process that maps the file.
  kMapped,
};

// What PTQ1_0 matrices become at load; all are lossless and give the same logits, bit for bit.
enum class Ptq1Form {
  // 1.6 bits a value in 16-row panels (quant/trit_panels.h): memory ≈ the file and 19% fewer bytes a
  // decode token than PQ2_0, on the AVX-512 VBMI kernels of kernels/cpu/trit_panels.h (elsewhere
  // re-packed to PQ2_0 rows slab by slab, exact but slower).
  kTritPanels,
  // 1.6 bits a value row by row (quant/trit_planes.h), re-packed to PQ2_0 rows slab by slab for the PQ2_0
  // kernels (kernels/cpu/trit_planes.h): the same bytes as trit panels, a slower decode.
  kTritPlanes,
  // 1.6 bits a value row by row (quant/trit_rows.h), on the AVX2 kernel of kernels/cpu/trit_rows.h where
  // decode is in the lane order (re-packed for the PQ2_0 kernels elsewhere): memory ≈ the file on CPUs
  // without VBMI, at a slower decode than PQ2_0 where the kernel, not memory, is the
  // limit (see docs/performance.md).
  kTritRows,
  // 2.125 bits a value: 1.21 × the file, read by every kernel.
  kPq2_0,
};
// Trit panels where cpu_features() has AVX-512 VBMI and VNNI, else PQ2_0.
Ptq1Form default_ptq1_form();
// "auto" (default_ptq1_form), "panels", "planes", "rows" or "pq2_0"; Error(kInput) naming the option
// otherwise.
Ptq1Form parse_ptq1_form(const std::string& name);

// What PQ2_0 matrices become when they are copied to huge pages (WeightPlacement::kHugePages; mapped ones
// stay as the file has them). Both hold the same bits and give the same logits, bit for bit.
enum class Pq2Form {
  // As in the file: one PQ2_0 row after another, read by every kernel.
  kRows,
  // 16-row panels (quant/pq2_panels.h): the decode stream of the AVX-512 VBMI kernels of
  // kernels/cpu/pq2_panel_form.h (elsewhere re-ordered back to rows slab by slab, exact but slower).
  kPanels,
};
// Panels where cpu_features() has AVX-512 VBMI, else rows.
Pq2Form default_pq2_form();
// "auto" (default_pq2_form), "rows" or "panels"; Error(kInput) naming the option otherwise.
Pq2Form parse_pq2_form(const std::string& name);

struct LoadOptions {
  WeightPlacement placement = WeightPlacement::kHugePages;
  Ptq1Form ptq1_form = default_ptq1_form();
  Pq2Form pq2_form = default_pq2_form();
  int threads = 0;  // for the PTQ1_0 re-pack and the PQ2_0 panel pack; 0: every allowed CPU
};

class Model {
 public:
  // Maps the file, reads config and contract, binds the weights and places them (LoadOptions). PTQ1_0
  // matrices are re-packed once (losslessly) to LoadOptions::ptq1_form in either placement; PQ2_0 ones
  // copied to huge pages are written in LoadOptions::pq2_form. The token embedding, of which a token reads
  // one row, stays mapped in its file type (a head tied to it gets its own placed copy). Throws
  // tern::Error on any refusal.
  static std::unique_ptr<const Model> open(const std::string& path, LoadOptions options = {});
  static std::unique_ptr<const Model> load(gguf::Reader file, LoadOptions options = {});

  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const gguf::Reader& file() const { return file_; }
  const Config& config() const { return config_; }
  const hadamard::Contract* contract() const { return contract_ ? &*contract_ : nullptr; }
  const Weights& weights() const { return weights_; }
  const FoldSites& sites() const { return sites_; }
  // The type a file tensor of `type` is held in once placed: PTQ1_0 matrices per LoadOptions::ptq1_form,
  // PQ2_0 ones per LoadOptions::pq2_form where they are copied (the token embedding stays in its file
  // type).
  quant::TensorType placed_type(quant::TensorType type) const {
    if (type == quant::TensorType::kPTQ1_0) return ptq1_placed_;
    return type == quant::TensorType::kPQ2_0 ? pq2_placed_ : type;
  }

  // Bytes of matrices a decode token reads from the file mapping (WeightPlacement::kMapped; the token
  // embedding, of which a token reads one row, left out unless the head is tied to it). They are page
  // cache, which the kernel may evict for other memory; 0 when every matrix was copied out.
  uint64_t mapped_matrix_bytes() const { return mapped_matrix_bytes_; }

  // True when `id` may be fed to the model: 0 ≤ id < vocab and not typed UNUSED (padding rows,
  // tokenizer.ggml.token_type 5; model-spec §5.1).
  bool accepts_token(int64_t id) const;

 private:
  Model(gguf::Reader file, LoadOptions options);
  void place_matrices(const LoadOptions& options);
  void repack_ptq1(const kernels::MatrixView& m, uint8_t* out, size_t row_bytes, int threads) const;

  gguf::Reader file_;
  Config config_;
  std::optional<hadamard::Contract> contract_;
  Weights weights_;
  FoldSites sites_;
  std::vector<bool> unused_token_;  // by id; shorter than vocab when the type array is
  HugePageBuffer placed_;           // the matrices place_matrices moved out of the file
  quant::TensorType ptq1_placed_ = quant::TensorType::kPQ2_0;
  quant::TensorType pq2_placed_ = quant::TensorType::kPQ2_0;
  uint64_t mapped_matrix_bytes_ = 0;
};

}  // namespace tern::model
