#include "tools/inspect.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "hadamard/contract.h"
#include "model/config.h"
#include "model/fold_coverage.h"

namespace tern::tools {
namespace {

using gguf::ValueType;
using nlohmann::json;

// The GGUF types the reference converter writes (model-spec §2.3-§2.6). tern accepts any integer
// width for integer keys (§11.8); inspect reports where a file differs from these.
struct ExpectedType {
  std::string_view key;
  ValueType type;
  ValueType element = ValueType::kUInt8;  // for arrays
};

constexpr ExpectedType kExpectedTypes[] = {
    {"general.file_type", ValueType::kUInt32},
    {"general.quantization_version", ValueType::kUInt32},
    {"general.alignment", ValueType::kUInt32},
    {"qwen35.context_length", ValueType::kUInt32},
    {"qwen35.embedding_length", ValueType::kUInt32},
    {"qwen35.block_count", ValueType::kUInt32},
    {"qwen35.feed_forward_length", ValueType::kUInt32},
    {"qwen35.attention.head_count", ValueType::kUInt32},
    {"qwen35.attention.head_count_kv", ValueType::kUInt32},
    {"qwen35.attention.key_length", ValueType::kUInt32},
    {"qwen35.attention.value_length", ValueType::kUInt32},
    {"qwen35.attention.layer_norm_rms_epsilon", ValueType::kFloat32},
    {"qwen35.rope.freq_base", ValueType::kFloat32},
    {"qwen35.rope.dimension_count", ValueType::kUInt32},
    {"qwen35.rope.dimension_sections", ValueType::kArray, ValueType::kInt32},
    {"qwen35.ssm.conv_kernel", ValueType::kUInt32},
    {"qwen35.ssm.state_size", ValueType::kUInt32},
    {"qwen35.ssm.inner_size", ValueType::kUInt32},
    {"qwen35.ssm.time_step_rank", ValueType::kUInt32},
    {"qwen35.ssm.group_count", ValueType::kUInt32},
    {"qwen35.full_attention_interval", ValueType::kUInt32},
    {"qwen35.nextn_predict_layers", ValueType::kUInt32},
    {"tokenizer.ggml.bos_token_id", ValueType::kUInt32},
    {"tokenizer.ggml.eos_token_id", ValueType::kUInt32},
    {"tokenizer.ggml.padding_token_id", ValueType::kUInt32},
    {"tokenizer.ggml.add_bos_token", ValueType::kBool},
    {"prism.hadamard.version", ValueType::kUInt32},
    {"prism.hadamard.block_size", ValueType::kUInt32},
    {"prism.hadamard.sign_widths", ValueType::kArray, ValueType::kInt32},
    {"prism.hadamard.sign_values", ValueType::kArray, ValueType::kInt32},
    {"prism.hadamard.gdn_v_grouped", ValueType::kBool},
};

// Stop tokens by text besides eos (model-spec §7.3, §11.6).
constexpr std::string_view kStopTokenTexts[] = {"<|im_end|>", "<|endoftext|>", "<|fim_pad|>", "<|repo_name|>",
                                                "<|file_sep|>"};

std::string type_label(const gguf::Value& v) {
  if (const auto* a = std::get_if<gguf::Array>(&v.data)) {
    return fmt::format("array[{}]", gguf::value_type_name(a->elem_type));
  }
  return gguf::value_type_name(v.type);
}

std::string type_label(ValueType type, ValueType element) {
  if (type == ValueType::kArray) return fmt::format("array[{}]", gguf::value_type_name(element));
  return gguf::value_type_name(type);
}

json leniency_notes(const gguf::Reader& file) {
  json notes = json::array();
  for (const ExpectedType& e : kExpectedTypes) {
    const gguf::Value* v = file.find(e.key);
    if (v == nullptr) continue;
    const std::string expected = type_label(e.type, e.element);
    const std::string found = type_label(*v);
    if (found != expected) notes.push_back({{"key", e.key}, {"expected", expected}, {"found", found}});
  }
  return notes;
}

json optional_uint(const gguf::Reader& file, std::string_view key) {
  const std::optional<uint64_t> v = file.get_uint_or(key);
  return v ? json(*v) : json(nullptr);
}

json optional_string(const gguf::Reader& file, std::string_view key) {
  return file.has(key) ? json(file.get_string(key)) : json(nullptr);
}

json layers_section(const model::Config& c) {
  json attention = json::array();
  for (size_t l = 0; l < c.layers.size(); ++l) {
    if (c.layers[l] == model::LayerKind::kFullAttention) attention.push_back(l);
  }
  return {{"count", c.n_layer},
          {"full_attention", attention},
          {"gated_deltanet", c.n_layer - c.n_attention_layers()}};
}

json dimensions_section(const model::Config& c) {
  return {{"d_model", c.d_model},
          {"d_ff", c.d_ff},
          {"vocab_size", c.vocab_size},
          {"attention",
           {{"n_head", c.n_head},
            {"n_head_kv", c.n_head_kv},
            {"head_dim", c.head_dim},
            {"value_dim", c.value_dim},
            {"rope_dim", c.rope_dim},
            {"rope_theta", c.rope_theta},
            {"rope_sections", c.rope_sections}}},
          {"gdn",
           {{"n_k", c.gdn_n_k},
            {"n_v", c.gdn_n_v},
            {"k_head_dim", c.gdn_k_head_dim},
            {"v_head_dim", c.gdn_v_head_dim},
            {"inner", c.gdn_inner},
            {"conv_kernel", c.conv_kernel},
            {"conv_channels", c.gdn_conv_channels()}}},
          {"rms_eps", c.rms_eps}};
}

json tensors_section(const gguf::Reader& file) {
  struct Totals {
    int64_t count = 0;
    int64_t elements = 0;
    uint64_t bytes = 0;
  };
  std::map<std::string, Totals> by_type;
  Totals all;
  for (const gguf::TensorInfo& t : file.tensors()) {
    for (Totals* totals : {&by_type[std::string(quant::traits(t.type).name)], &all}) {
      totals->count += 1;
      totals->elements += t.elements();
      totals->bytes += t.nbytes;
    }
  }
  auto row = [](const Totals& t) {
    const double bpw =
        t.elements > 0 ? 8.0 * static_cast<double>(t.bytes) / static_cast<double>(t.elements) : 0.0;
    return json{{"count", t.count}, {"elements", t.elements}, {"bytes", t.bytes}, {"bits_per_weight", bpw}};
  };
  json types = json::array();
  for (const auto& [name, totals] : by_type) {
    json r = row(totals);
    r["type"] = name;
    types.push_back(r);
  }
  return {{"by_type", types}, {"total", row(all)}};
}

json hadamard_section(const std::optional<hadamard::Contract>& contract) {
  if (!contract) return nullptr;
  json widths = json::array();
  for (int64_t w : contract->sign_widths) {
    const std::vector<float>& s = contract->signs.at(w);
    widths.push_back({{"width", w}, {"minus_ones", std::ranges::count(s, -1.0f)}});
  }
  return {{"version", contract->version},
          {"block_size", contract->block_size},
          {"sign_mode", contract->explicit_signs ? "explicit" : "identity"},
          {"sign_widths", widths},
          {"rotated", contract->weight_names.size()},
          {"inverse", contract->inverse_weight_names},
          {"gdn_v_order", contract->gdn_v_grouped ? "grouped" : "tiled"}};
}

json tokenizer_section(const gguf::Reader& file) {
  const gguf::Value* tokens_value = file.find("tokenizer.ggml.tokens");
  const auto* tokens = tokens_value != nullptr ? std::get_if<gguf::Array>(&tokens_value->data) : nullptr;
  std::map<uint64_t, std::string> stops;
  if (tokens != nullptr) {
    for (size_t id = 0; id < tokens->items.size(); ++id) {
      const auto* text = std::get_if<std::string>(&tokens->items[id].data);
      if (text != nullptr && std::ranges::find(kStopTokenTexts, *text) != std::end(kStopTokenTexts)) {
        stops[id] = *text;
      }
    }
  }
  const json eos = optional_uint(file, "tokenizer.ggml.eos_token_id");
  if (eos.is_number_unsigned()) {
    const uint64_t id = eos.get<uint64_t>();
    const bool known = tokens != nullptr && id < tokens->items.size();
    const auto* text = known ? std::get_if<std::string>(&tokens->items[id].data) : nullptr;
    stops.emplace(id, text != nullptr ? *text : std::string());
  }
  json stop_tokens = json::array();
  for (const auto& [id, text] : stops) stop_tokens.push_back({{"id", id}, {"text", text}});
  const std::string_view template_key = "tokenizer.chat_template";
  const bool has_template = file.has(template_key);
  return {{"model", optional_string(file, "tokenizer.ggml.model")},
          {"pre", optional_string(file, "tokenizer.ggml.pre")},
          {"vocab_size", tokens != nullptr ? json(tokens->items.size()) : json(nullptr)},
          {"bos_token_id", optional_uint(file, "tokenizer.ggml.bos_token_id")},
          {"eos_token_id", eos},
          {"padding_token_id", optional_uint(file, "tokenizer.ggml.padding_token_id")},
          {"add_bos_token", file.has("tokenizer.ggml.add_bos_token")
                                ? json(file.get_bool("tokenizer.ggml.add_bos_token"))
                                : json(nullptr)},
          {"chat_template",
           {{"present", has_template}, {"length", has_template ? file.get_string(template_key).size() : 0}}},
          {"stop_tokens", stop_tokens}};
}

std::string or_none(const json& v) {
  return v.is_null() ? "(none)" : (v.is_string() ? v.get<std::string>() : v.dump());
}

}  // namespace

json inspect_report(const gguf::Reader& file) {
  const model::Config config = model::read_config(file);
  const std::optional<hadamard::Contract> contract = hadamard::read_contract(file);
  if (contract) model::check_contract_covers(*contract, config, file);
  return {{"file",
           {{"path", file.name()},
            {"bytes", file.file_size()},
            {"gguf_version", file.version()},
            {"alignment", file.alignment()},
            {"tensors", file.tensors().size()},
            {"metadata_keys", file.metadata().size()},
            {"name", optional_string(file, "general.name")},
            {"file_type", optional_uint(file, "general.file_type")}}},
          {"architecture", config.architecture},
          {"context_length", config.context_length},
          {"layers", layers_section(config)},
          {"dimensions", dimensions_section(config)},
          {"tensors", tensors_section(file)},
          {"hadamard", hadamard_section(contract)},
          {"tokenizer", tokenizer_section(file)},
          {"integer_width_leniency", leniency_notes(file)}};
}

std::string render_inspect_text(const json& r) {
  std::string out;
  auto line = [&out](std::string_view text) { out.append(text).push_back('\n'); };
  const json& f = r["file"];
  line(fmt::format("file         {} ({} bytes, GGUF v{}, alignment {}, {} tensors, {} keys)",
                   f["path"].get<std::string>(), f["bytes"].get<uint64_t>(),
                   f["gguf_version"].get<uint32_t>(), f["alignment"].get<uint32_t>(),
                   f["tensors"].get<size_t>(), f["metadata_keys"].get<size_t>()));
  line(fmt::format("name         {}  (general.file_type {})", or_none(f["name"]), or_none(f["file_type"])));
  line(fmt::format("architecture {}  context {}", r["architecture"].get<std::string>(),
                   r["context_length"].get<int64_t>()));
  const json& layers = r["layers"];
  line(fmt::format("layers       {}: {} Gated DeltaNet, {} full attention at [{}]",
                   layers["count"].get<int64_t>(), layers["gated_deltanet"].get<int64_t>(),
                   layers["full_attention"].size(),
                   fmt::join(layers["full_attention"].get<std::vector<int64_t>>(), ", ")));
  const json& d = r["dimensions"];
  const json& a = d["attention"];
  const json& g = d["gdn"];
  line(fmt::format("dimensions   d_model {}  d_ff {}  vocab {}  rms_eps {:g}", d["d_model"].get<int64_t>(),
                   d["d_ff"].get<int64_t>(), d["vocab_size"].get<int64_t>(), d["rms_eps"].get<double>()));
  line(fmt::format(
      "attention    heads {}/{} kv  head_dim {}  value_dim {}  rope {} dims, theta {:g}, sections [{}]",
      a["n_head"].get<int64_t>(), a["n_head_kv"].get<int64_t>(), a["head_dim"].get<int64_t>(),
      a["value_dim"].get<int64_t>(), a["rope_dim"].get<int64_t>(), a["rope_theta"].get<double>(),
      fmt::join(a["rope_sections"].get<std::vector<int64_t>>(), ", ")));
  line(fmt::format(
      "gdn          n_k {}  n_v {}  k_head_dim {}  v_head_dim {}  inner {}  conv {} taps x {} channels",
      g["n_k"].get<int64_t>(), g["n_v"].get<int64_t>(), g["k_head_dim"].get<int64_t>(),
      g["v_head_dim"].get<int64_t>(), g["inner"].get<int64_t>(), g["conv_kernel"].get<int64_t>(),
      g["conv_channels"].get<int64_t>()));
  line("tensors      type       count        elements           bytes    bpw");
  auto tensor_row = [&line](std::string_view type, const json& t) {
    line(fmt::format("             {:<8} {:>7} {:>15} {:>15} {:>6.3f}", type, t["count"].get<int64_t>(),
                     t["elements"].get<int64_t>(), t["bytes"].get<uint64_t>(),
                     t["bits_per_weight"].get<double>()));
  };
  for (const json& t : r["tensors"]["by_type"]) tensor_row(t["type"].get<std::string>(), t);
  tensor_row("total", r["tensors"]["total"]);
  const json& h = r["hadamard"];
  if (h.is_null()) {
    line("hadamard     none (dense file)");
  } else {
    std::vector<std::string> widths;
    for (const json& w : h["sign_widths"]) {
      widths.push_back(
          fmt::format("{} ({} x -1)", w["width"].get<int64_t>(), w["minus_ones"].get<int64_t>()));
    }
    line(fmt::format("hadamard     v{}  block {}  signs {} [{}]", h["version"].get<uint32_t>(),
                     h["block_size"].get<int64_t>(), h["sign_mode"].get<std::string>(),
                     fmt::join(widths, ", ")));
    line(fmt::format("             {} rotated, inverse [{}], GDN V order {}", h["rotated"].get<size_t>(),
                     fmt::join(h["inverse"].get<std::vector<std::string>>(), ", "),
                     h["gdn_v_order"].get<std::string>()));
  }
  const json& t = r["tokenizer"];
  line(fmt::format("tokenizer    model {}  pre {}  vocab {}  bos {}  eos {}  pad {}  add_bos {}",
                   or_none(t["model"]), or_none(t["pre"]), or_none(t["vocab_size"]),
                   or_none(t["bos_token_id"]), or_none(t["eos_token_id"]), or_none(t["padding_token_id"]),
                   or_none(t["add_bos_token"])));
  const json& tpl = t["chat_template"];
  line(fmt::format("             chat template {}", tpl["present"].get<bool>()
                                                        ? fmt::format("{} chars", tpl["length"].get<size_t>())
                                                        : std::string("absent")));
  std::vector<std::string> stops;
  for (const json& s : t["stop_tokens"]) {
    stops.push_back(fmt::format("{} {}", s["id"].get<uint64_t>(), s["text"].get<std::string>()));
  }
  line(fmt::format("             stop tokens [{}]", fmt::join(stops, ", ")));
  for (const json& n : r["integer_width_leniency"]) {
    line(fmt::format("lenient      {} is {}, expected {} (accepted)", n["key"].get<std::string>(),
                     n["found"].get<std::string>(), n["expected"].get<std::string>()));
  }
  return out;
}

}  // namespace tern::tools
