#include "hadamard/contract.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <string_view>

#include <fmt/ranges.h>

#include "core/error.h"

namespace tern::hadamard {
namespace {

constexpr std::string_view kPrefix = "prism.hadamard.";
constexpr std::string_view kVersion = "prism.hadamard.version";
constexpr std::string_view kBlockSize = "prism.hadamard.block_size";
constexpr std::string_view kTransform = "prism.hadamard.transform";
constexpr std::string_view kAxis = "prism.hadamard.axis";
constexpr std::string_view kSignMode = "prism.hadamard.sign_mode";
constexpr std::string_view kSignWidths = "prism.hadamard.sign_widths";
constexpr std::string_view kSignValues = "prism.hadamard.sign_values";
constexpr std::string_view kWeightNames = "prism.hadamard.weight_names";
constexpr std::string_view kInverseNames = "prism.hadamard.inverse_weight_names";
constexpr std::string_view kGdnVGrouped = "prism.hadamard.gdn_v_grouped";
constexpr std::array<std::string_view, 10> kKnownKeys{kVersion,      kBlockSize,  kTransform,  kAxis,
                                                      kSignMode,     kSignWidths, kSignValues, kWeightNames,
                                                      kInverseNames, kGdnVGrouped};

constexpr std::string_view kTransformName = "normalized-sylvester-walsh-hadamard";
constexpr std::string_view kAxisName = "input-last-dimension";
constexpr std::string_view kEmbeddingName = "token_embd.weight";
constexpr std::string_view kHeadName = "output.weight";

// Per-layer kinds a folded weight may have (model-spec §4.6 rule 7).
constexpr std::array<std::string_view, 17> kFoldableKinds{
    "attn_q",           "attn_k",         "attn_v",       "attn_qkv",       "attn_gate",   "attn_output",
    "ffn_gate",         "ffn_up",         "ffn_down",     "ffn_gate_exps",  "ffn_up_exps", "ffn_down_exps",
    "ffn_gate_up_exps", "ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp", "ssm_out"};

// Reads and checks the keys of one file; every failure names the file and the key or tensor.
class ContractReader {
 public:
  explicit ContractReader(const gguf::Reader& file) : file_(file) {}

  Contract read() {
    refuse_unknown_keys();
    check_architecture();
    Contract c;
    const int64_t version = require_integer(kVersion);
    if (version != 1) refuse(kVersion, "version {} is not supported (tern implements version 1)", version);
    c.version = 1;
    c.block_size = require_integer(kBlockSize);
    if (c.block_size <= 0 || (c.block_size & (c.block_size - 1)) != 0) {
      refuse(kBlockSize, "{} is not a positive power of two", c.block_size);
    }
    require_exact_string(kTransform, kTransformName);
    require_exact_string(kAxis, kAxisName);
    read_signs(c);
    c.weight_names = read_names(kWeightNames, /*required=*/true);
    for (const std::string& name : c.weight_names) {
      if (!is_foldable_name(name)) refuse(kWeightNames, "'{}' is not a foldable weight name", name);
    }
    // Only token_embd.weight may be inverse-folded; it is not a foldable name, so it cannot also be
    // in weight_names (rule 8).
    c.inverse_weight_names = read_names(kInverseNames, /*required=*/false);
    for (const std::string& name : c.inverse_weight_names) {
      if (name != kEmbeddingName)
        refuse(kInverseNames, "'{}' is not allowed (only {})", name, kEmbeddingName);
    }
    if (const gguf::Value* v = file_.find(kGdnVGrouped)) {
      if (v->type != gguf::ValueType::kBool) refuse(kGdnVGrouped, "must be BOOL, found {}", type_name(*v));
      c.gdn_v_grouped = std::get<bool>(v->data);
    }
    check_named_tensors(c, c.weight_names, kWeightNames);
    check_named_tensors(c, c.inverse_weight_names, kInverseNames);
    check_every_ternary_tensor_listed(c);
    if (file_.find_tensor(kHeadName) == nullptr) {
      fail(ErrorKind::kContract, "{}: tensor {} is required by prism.hadamard version 1 (untied head)",
           file_.name(), kHeadName);
    }
    return c;
  }

 private:
  template <class... Args>
  [[noreturn]] void refuse(std::string_view key, fmt::format_string<Args...> format, Args&&... args) const {
    fail(ErrorKind::kContract, "{}: {}: {}", file_.name(), key,
         fmt::format(format, std::forward<Args>(args)...));
  }

  static const char* type_name(const gguf::Value& v) { return gguf::value_type_name(v.type); }

  static std::optional<int64_t> as_integer(const gguf::Value& v) {
    if (!gguf::is_integer_type(v.type)) return std::nullopt;
    if (const auto* u = std::get_if<uint64_t>(&v.data)) {
      if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(*u);
    }
    if (const auto* i = std::get_if<int64_t>(&v.data)) return *i;
    return std::nullopt;
  }

  const gguf::Value& require(std::string_view key) const {
    const gguf::Value* v = file_.find(key);
    if (v == nullptr) refuse(key, "required key is missing");
    return *v;
  }

  int64_t require_integer(std::string_view key) const {
    const gguf::Value& v = require(key);
    std::optional<int64_t> i = as_integer(v);
    if (!i) refuse(key, "must be an integer, found {}", type_name(v));
    return *i;
  }

  void require_exact_string(std::string_view key, std::string_view expected) const {
    const gguf::Value& v = require(key);
    const auto* s = std::get_if<std::string>(&v.data);
    if (v.type != gguf::ValueType::kString || s == nullptr)
      refuse(key, "must be STRING, found {}", type_name(v));
    if (*s != expected) refuse(key, "'{}' is not supported (only '{}')", *s, expected);
  }

  const gguf::Array& require_array(std::string_view key) const {
    const gguf::Value& v = require(key);
    const auto* a = std::get_if<gguf::Array>(&v.data);
    if (v.type != gguf::ValueType::kArray || a == nullptr)
      refuse(key, "must be an ARRAY, found {}", type_name(v));
    return *a;
  }

  std::vector<int64_t> require_integer_array(std::string_view key) const {
    const gguf::Array& a = require_array(key);
    std::vector<int64_t> out;
    out.reserve(a.items.size());
    for (size_t i = 0; i < a.items.size(); ++i) {
      std::optional<int64_t> value = as_integer(a.items[i]);
      if (!value) refuse(key, "element {} must be an integer, found {}", i, type_name(a.items[i]));
      out.push_back(*value);
    }
    return out;
  }

  void refuse_unknown_keys() const {
    for (const auto& [key, value] : file_.metadata()) {
      if (!key.starts_with(kPrefix)) continue;
      if (std::ranges::find(kKnownKeys, key) == kKnownKeys.end()) {
        refuse(key, "unknown prism.hadamard key; refusing a contract tern cannot fully honour");
      }
    }
  }

  // model-spec §4.6 rule 11: the fold is only understood for qwen35 here.
  void check_architecture() const {
    constexpr std::string_view kArchKey = "general.architecture";
    const gguf::Value* v = file_.find(kArchKey);
    const auto* arch = v != nullptr ? std::get_if<std::string>(&v->data) : nullptr;
    if (arch == nullptr || *arch != "qwen35") {
      refuse(kArchKey, "prism.hadamard is only supported for architecture 'qwen35', found '{}'",
             arch != nullptr ? *arch : std::string("(none)"));
    }
  }

  void read_signs(Contract& c) const {
    const gguf::Value& mode_value = require(kSignMode);
    const auto* mode = std::get_if<std::string>(&mode_value.data);
    if (mode_value.type != gguf::ValueType::kString || mode == nullptr) {
      refuse(kSignMode, "must be STRING, found {}", type_name(mode_value));
    }
    if (*mode == "identity") {
      c.explicit_signs = false;
      for (std::string_view key : {kSignWidths, kSignValues}) {
        if (file_.has(key)) refuse(key, "present although sign_mode is 'identity'");
      }
      return;
    }
    if (*mode != "explicit")
      refuse(kSignMode, "'{}' is not supported (only 'explicit' or 'identity')", *mode);
    c.explicit_signs = true;
    c.sign_widths = require_integer_array(kSignWidths);
    if (c.sign_widths.empty()) refuse(kSignWidths, "must not be empty in explicit sign mode");
    const std::vector<int64_t> values = require_integer_array(kSignValues);
    size_t offset = 0;
    for (int64_t width : c.sign_widths) {
      if (width <= 0 || width % c.block_size != 0) {
        refuse(kSignWidths, "width {} is not a positive multiple of block_size {}", width, c.block_size);
      }
      if (c.signs.contains(width)) refuse(kSignWidths, "width {} is listed twice", width);
      if (static_cast<uint64_t>(width) > values.size() - offset) {
        refuse(kSignValues, "has {} values, fewer than the widths {} need", values.size(),
               fmt::join(c.sign_widths, "+"));
      }
      std::vector<float>& signs = c.signs[width];
      signs.reserve(static_cast<size_t>(width));
      for (size_t i = offset; i < offset + static_cast<size_t>(width); ++i) {
        if (values[i] != 1 && values[i] != -1)
          refuse(kSignValues, "value {} at index {} is not +1 or -1", values[i], i);
        signs.push_back(static_cast<float>(values[i]));
      }
      offset += static_cast<size_t>(width);
    }
    if (offset != values.size()) {
      refuse(kSignValues, "has {} values but the widths {} add up to {}", values.size(),
             fmt::join(c.sign_widths, "+"), offset);
    }
  }

  std::vector<std::string> read_names(std::string_view key, bool required) const {
    if (!required && !file_.has(key)) return {};
    const gguf::Array& a = require_array(key);
    if (required && a.items.empty()) refuse(key, "must not be empty");
    std::vector<std::string> names;
    names.reserve(a.items.size());
    std::set<std::string_view> seen;
    for (size_t i = 0; i < a.items.size(); ++i) {
      const auto* name = std::get_if<std::string>(&a.items[i].data);
      if (a.items[i].type != gguf::ValueType::kString || name == nullptr) {
        refuse(key, "element {} must be STRING, found {}", i, type_name(a.items[i]));
      }
      if (!seen.insert(*name).second) refuse(key, "'{}' is listed twice", *name);
      names.push_back(*name);
    }
    return names;
  }

  static bool is_foldable_name(std::string_view name) {
    if (name == kHeadName) return true;
    constexpr std::string_view kBlock = "blk.";
    constexpr std::string_view kSuffix = ".weight";
    if (!name.starts_with(kBlock) || !name.ends_with(kSuffix)) return false;
    std::string_view rest = name.substr(kBlock.size(), name.size() - kBlock.size() - kSuffix.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos) return false;
    const std::string_view layer = rest.substr(0, dot);
    if (!std::ranges::all_of(layer,
                             [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; })) {
      return false;
    }
    return std::ranges::find(kFoldableKinds, rest.substr(dot + 1)) != kFoldableKinds.end();
  }

  // model-spec §4.6 rules 9 and 13 for every listed tensor.
  void check_named_tensors(const Contract& c, const std::vector<std::string>& names,
                           std::string_view key) const {
    for (const std::string& name : names) {
      const gguf::TensorInfo* t = file_.find_tensor(name);
      if (t == nullptr) refuse(key, "lists tensor {}, which is not in the file", name);
      if (t->n_dims != 2)
        refuse(key, "tensor {} has {} dimensions, a folded weight must have 2", name, t->n_dims);
      if (!quant::is_ternary(t->type)) {
        refuse(key, "tensor {} has type {}, a folded weight must be ternary", name,
               quant::traits(t->type).name);
      }
      if (t->ne[0] % c.block_size != 0) {
        refuse(key, "tensor {} has input width {}, not a multiple of block_size {}", name, t->ne[0],
               c.block_size);
      }
      if (c.explicit_signs && !c.signs.contains(t->ne[0])) {
        refuse(kSignWidths, "has no sign vector for width {} (tensor {})", t->ne[0], name);
      }
    }
  }

  void check_every_ternary_tensor_listed(const Contract& c) const {
    for (const gguf::TensorInfo& t : file_.tensors()) {
      if (quant::is_ternary(t.type) && !c.is_folded(t.name) && !c.is_inverse(t.name)) {
        refuse(kWeightNames, "ternary tensor {} is in neither {} nor {}", t.name, kWeightNames,
               kInverseNames);
      }
    }
  }

  const gguf::Reader& file_;
};

}  // namespace

std::span<const float> Contract::signs_for(int64_t k) const {
  if (!explicit_signs) return {};
  auto it = signs.find(k);
  if (it == signs.end()) fail(ErrorKind::kContract, "prism.hadamard has no sign vector for width {}", k);
  return it->second;
}

bool Contract::is_folded(const std::string& tensor) const {
  return std::ranges::find(weight_names, tensor) != weight_names.end();
}

bool Contract::is_inverse(const std::string& tensor) const {
  return std::ranges::find(inverse_weight_names, tensor) != inverse_weight_names.end();
}

std::optional<Contract> read_contract(const gguf::Reader& file) {
  if (!file.has(kVersion)) {
    // model-spec §4.6 rule 1 (⊕): a file that looks folded but says no version is refused, never run raw.
    for (const auto& [key, value] : file.metadata()) {
      if (key.starts_with(kPrefix)) {
        fail(ErrorKind::kContract, "{}: {}: present without {}", file.name(), key, kVersion);
      }
    }
    for (const gguf::TensorInfo& t : file.tensors()) {
      if (quant::is_ternary(t.type)) {
        fail(ErrorKind::kContract,
             "{}: ternary tensor {} but no {}: refusing to run folded weights unrotated", file.name(), t.name,
             kVersion);
      }
    }
    return std::nullopt;
  }
  return ContractReader(file).read();
}

}  // namespace tern::hadamard
