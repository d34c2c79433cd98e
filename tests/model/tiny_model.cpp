#include "tests/model/tiny_model.h"

#include <vector>

#include "gguf/reader.h"
#include "gguf/writer.h"
#include "hadamard/contract.h"
#include "hadamard/transform.h"
#include "model/config.h"
#include "model/gdn_order.h"
#include "quant/codec.h"
#include "tests/support/process_temp.h"
#include "tools/synth.h"
#include "tools/synth_spec.h"
#include "tools/synth_vocab.h"

namespace tern::testing_support {

namespace {

// Copies `src` to `path`, letting `row` rewrite each tensor (type and bytes) and `keep` drop keys.
template <class Retype, class Rewrite, class Keep>
void rewrite_file(const gguf::Reader& src, const std::string& path, Retype retype, Rewrite rewrite,
                  Keep keep) {
  gguf::Writer out(path, src.alignment());
  for (const auto& [key, value] : src.metadata()) {
    if (keep(key)) out.set(key, value);
  }
  for (const gguf::TensorInfo& t : src.tensors()) {
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    out.add_tensor(t.name, retype(t), ne);
  }
  out.begin_data();
  for (const gguf::TensorInfo& t : src.tensors()) out.write(rewrite(t));
  out.finish();
}

}  // namespace

const std::string& tiny_pq2_model() {
  static const std::string path = [] {
    const std::string p = process_temp_path("tiny_pq2.gguf");
    const tools::SynthSpec spec = tools::synth_preset("tiny");
    tools::SynthOptions options;
    options.out_path = p;
    options.threads = 1;
    tools::write_synth_model(spec, tools::builtin_vocab(spec.vocab), options);
    return p;
  }();
  return path;
}

const std::string& tiny_ptq1_model() {
  static const std::string path = [] {
    const std::string p = process_temp_path("tiny_ptq1.gguf");
    const gguf::Reader src = gguf::Reader::open(tiny_pq2_model());
    std::vector<uint8_t> buffer;
    rewrite_file(
        src, p,
        [](const gguf::TensorInfo& t) {
          return t.type == quant::TensorType::kPQ2_0 ? quant::TensorType::kPTQ1_0 : t.type;
        },
        [&](const gguf::TensorInfo& t) -> std::span<const uint8_t> {
          if (t.type != quant::TensorType::kPQ2_0) return t.data;
          const size_t in_row = *quant::row_bytes(t.type, t.ne[0]);
          const size_t out_row = *quant::row_bytes(quant::TensorType::kPTQ1_0, t.ne[0]);
          buffer.assign(out_row * static_cast<size_t>(t.rows()), 0);
          for (int64_t r = 0; r < t.rows(); ++r) {
            quant::transcode_row(t.type, quant::TensorType::kPTQ1_0, t.data.data() + r * in_row,
                                 buffer.data() + r * out_row, t.ne[0], t.name.c_str());
          }
          return buffer;
        },
        [](const std::string&) { return true; });
    return p;
  }();
  return path;
}

const std::string& tiny_dense_model() {
  static const std::string path = [] {
    const std::string p = process_temp_path("tiny_dense.gguf");
    const gguf::Reader src = gguf::Reader::open(tiny_pq2_model());
    const hadamard::Contract contract = *hadamard::read_contract(src);
    const model::Config config = model::read_config(src);
    std::vector<float> values;
    std::vector<float> tiled;
    rewrite_file(
        src, p,
        [](const gguf::TensorInfo& t) {
          return quant::is_ternary(t.type) ? quant::TensorType::kF32 : t.type;
        },
        [&](const gguf::TensorInfo& t) -> std::span<const uint8_t> {
          if (!quant::is_ternary(t.type)) return t.data;
          const int64_t k = t.ne[0];
          values.resize(static_cast<size_t>(t.elements()));
          quant::dequantize_row(t.type, t.data.data(), values.data(), t.elements());
          for (int64_t r = 0; r < t.rows(); ++r) {  // w = T⁻¹(w'), e = T⁻¹(z) (§4.2, §11.3)
            hadamard::inverse(std::span<float>(values.data() + r * k, static_cast<size_t>(k)),
                              contract.signs_for(k), contract.block_size);
          }
          if (t.name.ends_with("ssm_out.weight")) {  // mainline convention: columns tiled too (§11.2)
            tiled.resize(static_cast<size_t>(k));
            for (int64_t r = 0; r < t.rows(); ++r) {
              model::tile_heads(tiled.data(), values.data() + r * k, config.gdn_n_k,
                                config.gdn_n_v / config.gdn_n_k, config.gdn_v_head_dim);
              std::copy(tiled.begin(), tiled.end(), values.begin() + r * k);
            }
          }
          return {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)};
        },
        [](const std::string& key) { return !key.starts_with("prism.hadamard."); });
    return p;
  }();
  return path;
}

}  // namespace tern::testing_support
