// A tiny, valid qwen35 GGUF with a prism.hadamard contract, built in memory and written with
// gguf::Writer, so tests can break one key or tensor at a time. Geometry follows model-spec §11.1:
// n_k = 2, rep = 2, three distinct folded widths (256, 128, 512), several Hadamard blocks per width.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gguf/value.h"
#include "quant/types.h"

namespace tern::testing {

struct TinyQwen35 {
  struct Tensor {
    std::string name;
    quant::TensorType type;
    std::vector<int64_t> ne;
  };

  // Hyperparameters (written as qwen35.* keys by make()).
  int64_t d = 256;
  int64_t d_ff = 512;
  int64_t n_layer = 4;
  std::vector<int64_t> attention_layers{3};  // the tensor layout; the keys say interval 4
  int64_t n_head = 2;
  int64_t n_head_kv = 1;
  int64_t head_dim = 64;
  int64_t rope_dim = 32;
  int64_t gdn_n_k = 2;
  int64_t gdn_n_v = 4;
  int64_t gdn_k_dim = 32;
  int64_t gdn_v_dim = 32;
  int64_t conv_kernel = 4;
  int64_t vocab = 64;
  int64_t block = 64;
  quant::TensorType ternary = quant::TensorType::kPQ2_0;

  std::vector<std::pair<std::string, gguf::Value>> metadata;
  std::vector<Tensor> tensors;

  // Fills metadata (general, qwen35, tokenizer, prism.hadamard) and tensors from the fields above.
  TinyQwen35& make();

  void set(const std::string& key, gguf::Value value);  // replaces in place or appends
  void erase(const std::string& key);
  gguf::Value* find(const std::string& key);
  Tensor& tensor(const std::string& name);
  void erase_tensor(const std::string& name);
  void add_tensor(std::string name, quant::TensorType type, std::vector<int64_t> ne);
  // Replaces prism.hadamard.weight_names by the given list.
  void set_weight_names(const std::vector<std::string>& names);
  std::vector<std::string> weight_names();

  // Writes the file; tensor contents are deterministic pseudo-random (ternary rows by quantize_row).
  void write(const std::string& path) const;
};

// A path under the temp directory, unique per running test and `name`; the file is removed on scope exit,
// and the process's directory with the last TempFile alive.
class TempFile {
 public:
  explicit TempFile(const std::string& name);
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tern::testing
