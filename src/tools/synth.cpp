#include "tools/synth.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/error.h"
#include "gguf/writer.h"
#include "tools/progress.h"
#include "tools/synth_plan.h"

namespace tern::tools {

namespace {

using gguf::Value;
using gguf::ValueType;

// Rows are generated and written in chunks of about this many encoded bytes.
constexpr size_t kChunkBytes = size_t{8} << 20;

uint32_t u32(int64_t v) {
  return static_cast<uint32_t>(v);
}

// "27B", "14M": the parameter count rounded the way model cards write it.
std::string size_label(uint64_t params) {
  const auto p = static_cast<double>(params);
  if (p >= 1e9) return fmt::format("{:.0f}B", p / 1e9);
  if (p >= 1e6) return fmt::format("{:.0f}M", p / 1e6);
  return fmt::format("{:.0f}K", p / 1e3);
}

void write_general(gguf::Writer& w, const SynthSpec& spec, uint64_t params) {
  w.set("general.architecture", Value::string("qwen35"));
  w.set("general.name", Value::string("tern synth " + spec.preset));
  w.set("general.basename", Value::string("synth-" + spec.preset));
  w.set("general.size_label", Value::string(size_label(params)));
  // llama ftype: MOSTLY_PQ2_0 = 141, the PTQ1_0 file reports 143 (model-spec §2.3).
  w.set("general.file_type", Value::u32(spec.ternary_type == quant::TensorType::kPQ2_0 ? 141 : 143));
  w.set("general.quantization_version", Value::u32(2));
}

void write_hparams(gguf::Writer& w, const SynthSpec& spec) {
  w.set("qwen35.context_length", Value::u32(u32(spec.context_length)));
  w.set("qwen35.embedding_length", Value::u32(u32(spec.d_model)));
  w.set("qwen35.block_count", Value::u32(u32(spec.n_layer)));
  w.set("qwen35.feed_forward_length", Value::u32(u32(spec.d_ff)));
  w.set("qwen35.attention.head_count", Value::u32(u32(spec.n_head)));
  w.set("qwen35.attention.head_count_kv", Value::u32(u32(spec.n_head_kv)));
  w.set("qwen35.attention.key_length", Value::u32(u32(spec.head_dim)));
  w.set("qwen35.attention.value_length", Value::u32(u32(spec.head_dim)));
  w.set("qwen35.attention.layer_norm_rms_epsilon", Value::f32(spec.rms_eps));
  w.set("qwen35.rope.freq_base", Value::f32(spec.rope_theta));
  w.set("qwen35.rope.dimension_count", Value::u32(u32(spec.rope_dim)));
  w.set("qwen35.rope.dimension_sections", Value::i32_array(spec.rope_sections()));
  w.set("qwen35.ssm.conv_kernel", Value::u32(u32(spec.conv_kernel)));
  w.set("qwen35.ssm.state_size", Value::u32(u32(spec.gdn_k_dim)));
  w.set("qwen35.ssm.inner_size", Value::u32(u32(spec.gdn_inner())));
  w.set("qwen35.ssm.time_step_rank", Value::u32(u32(spec.gdn_n_v)));
  w.set("qwen35.ssm.group_count", Value::u32(u32(spec.gdn_n_k)));
  w.set("qwen35.full_attention_interval", Value::u32(u32(spec.full_attention_interval)));
}

void write_tokenizer(gguf::Writer& w, const text::Vocab& vocab) {
  std::vector<int32_t> types;
  for (const text::TokenType type : vocab.types) types.push_back(static_cast<int32_t>(type));
  std::vector<std::string> merges;
  for (const auto& [left, right] : vocab.merges) merges.push_back(left + " " + right);
  w.set("tokenizer.ggml.model", Value::string("gpt2"));
  w.set("tokenizer.ggml.pre", Value::string(text::pre_tokenizer_name(vocab.pre)));
  w.set("tokenizer.ggml.tokens", Value::string_array(vocab.tokens));
  w.set("tokenizer.ggml.token_type", Value::i32_array(types));
  w.set("tokenizer.ggml.merges", Value::string_array(merges));
  if (vocab.eos_id) w.set("tokenizer.ggml.eos_token_id", Value::u32(*vocab.eos_id));
  if (vocab.pad_id) w.set("tokenizer.ggml.padding_token_id", Value::u32(*vocab.pad_id));
  if (vocab.bos_id) w.set("tokenizer.ggml.bos_token_id", Value::u32(*vocab.bos_id));
  w.set("tokenizer.ggml.add_bos_token", Value::boolean(vocab.add_bos));
  if (!vocab.chat_template.empty()) w.set("tokenizer.chat_template", Value::string(vocab.chat_template));
}

void write_contract(gguf::Writer& w, const SynthSpec& spec, const std::vector<TensorRecipe>& recipes,
                    const SignTable& signs) {
  std::vector<int32_t> widths;
  std::vector<int32_t> values;
  for (const int64_t width : signs.widths) {
    widths.push_back(static_cast<int32_t>(width));
    for (const float s : signs.values.at(width)) values.push_back(s > 0.0f ? 1 : -1);
  }
  std::vector<std::string> forward;
  std::vector<std::string> inverse;
  for (const TensorRecipe& r : recipes) {
    if (!r.folded()) continue;
    (r.inverse_listed() ? inverse : forward).push_back(r.name);
  }
  w.set("prism.hadamard.version", Value::u32(1));
  w.set("prism.hadamard.block_size", Value::u32(u32(spec.block_size)));
  w.set("prism.hadamard.transform", Value::string("normalized-sylvester-walsh-hadamard"));
  w.set("prism.hadamard.axis", Value::string("input-last-dimension"));
  w.set("prism.hadamard.sign_mode", Value::string("explicit"));
  w.set("prism.hadamard.sign_widths", Value::i32_array(widths));
  w.set("prism.hadamard.sign_values", Value::i32_array(values));
  w.set("prism.hadamard.weight_names", Value::string_array(forward));
  w.set("prism.hadamard.inverse_weight_names", Value::string_array(inverse));
  w.set("prism.hadamard.gdn_v_grouped", Value::boolean(true));
}

// Encodes stored rows [begin, end) into `out`, split over `threads` workers, each with its own scratch.
void encode_rows(const SynthSpec& spec, const SignTable& signs, const TensorRecipe& recipe, int64_t begin,
                 int64_t end, size_t row_bytes, uint8_t* out, int threads) {
  const int64_t n = end - begin;
  const int64_t workers = std::clamp<int64_t>(threads, 1, n);
  const auto work = [&](int64_t first, int64_t last) {
    std::vector<float> scratch(static_cast<size_t>(recipe.cols));
    for (int64_t row = first; row < last; ++row) {
      encode_row(spec, signs, recipe, row, scratch, out + static_cast<size_t>(row - begin) * row_bytes);
    }
  };
  if (workers == 1) {
    work(begin, end);
    return;
  }
  std::vector<std::jthread> pool;
  for (int64_t i = 0; i < workers; ++i) {
    pool.emplace_back(work, begin + n * i / workers, begin + n * (i + 1) / workers);
  }
}

}  // namespace

SynthReport write_synth_model(const SynthSpec& spec, const text::Vocab& vocab, const SynthOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  validate_spec(spec);
  if (static_cast<int64_t>(vocab.tokens.size()) != spec.vocab || vocab.types.size() != vocab.tokens.size()) {
    fail(ErrorKind::kInput, "synth: the tokenizer has {} tokens but the model has vocab = {}",
         vocab.tokens.size(), spec.vocab);
  }
  const std::vector<TensorRecipe> recipes = plan_tensors(spec);
  const SignTable signs = make_signs(spec.seed, recipes);

  SynthReport report;
  uint64_t params = 0;
  for (const TensorRecipe& r : recipes) params += static_cast<uint64_t>(r.rows * r.cols);

  gguf::Writer writer(options.out_path);
  write_general(writer, spec, params);
  write_hparams(writer, spec);
  write_tokenizer(writer, vocab);
  write_contract(writer, spec, recipes, signs);
  for (const TensorRecipe& r : recipes) writer.add_tensor(r.name, r.type, r.ne);

  uint64_t total_bytes = 0;
  for (size_t i = 0; i < recipes.size(); ++i) {
    const uint64_t bytes = writer.tensor_bytes(i);
    const TensorRecipe& r = recipes[i];
    total_bytes += bytes;
    if (quant::is_ternary(r.type)) {
      report.ternary_bytes += bytes;
      report.ternary_weights += static_cast<uint64_t>(r.rows * r.cols);
    } else if (r.type == quant::TensorType::kBF16) {
      report.bf16_bytes += bytes;
    } else {
      report.f32_bytes += bytes;
    }
    if (r.folded() && !r.inverse_listed()) ++report.folded;
  }
  report.tensors = recipes.size();

  writer.begin_data();
  ProgressBar progress("synth", total_bytes, options.progress);
  std::vector<uint8_t> chunk;
  for (const TensorRecipe& r : recipes) {
    const size_t row_bytes = stored_row_bytes(r);
    const auto rows_per_chunk = static_cast<int64_t>(std::max<size_t>(1, kChunkBytes / row_bytes));
    for (int64_t begin = 0; begin < r.rows; begin += rows_per_chunk) {
      const int64_t end = std::min(r.rows, begin + rows_per_chunk);
      chunk.resize(static_cast<size_t>(end - begin) * row_bytes);
      encode_rows(spec, signs, r, begin, end, row_bytes, chunk.data(), options.threads);
      writer.write(chunk);
      progress.advance(chunk.size());
    }
  }
  writer.finish();
  progress.finish();

  report.file_bytes = std::filesystem::file_size(options.out_path);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace tern::tools
