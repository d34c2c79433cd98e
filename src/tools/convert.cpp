#include "tools/convert.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "hadamard/contract.h"
#include "quant/codec.h"

namespace tern::tools {
namespace {

constexpr size_t kCopyChunkBytes = size_t{1} << 20;

void copy_tensor(gguf::Writer& writer, const gguf::TensorInfo& tensor) {
  for (size_t start = 0; start < tensor.data.size(); start += kCopyChunkBytes) {
    writer.write(tensor.data.subspan(start, std::min(kCopyChunkBytes, tensor.data.size() - start)));
  }
}

void repack_tensor(gguf::Writer& writer, const gguf::TensorInfo& tensor, quant::TensorType target) {
  const int64_t k = tensor.ne[0];
  const std::optional<size_t> in_row = quant::row_bytes(tensor.type, k);
  const std::optional<size_t> out_row = quant::row_bytes(target, k);
  if (!in_row || !out_row || k % quant::kTernaryBlock != 0) {
    fail(ErrorKind::kInput,
         "tensor {}: row width {} cannot be re-packed from {} to {} (needs a multiple of {})", tensor.name, k,
         quant::traits(tensor.type).name, quant::traits(target).name, quant::kTernaryBlock);
  }
  std::vector<uint8_t> row(*out_row);
  for (int64_t r = 0; r < tensor.rows(); ++r) {
    const uint8_t* src = tensor.data.data() + static_cast<size_t>(r) * *in_row;
    quant::transcode_row(tensor.type, target, src, row.data(), k, tensor.name.c_str());
    writer.write(row);
  }
}

void write_converted(const gguf::Reader& in, const std::string& output, quant::TensorType target,
                     ConvertSummary& summary) {
  gguf::Writer writer(output, in.alignment());
  for (const auto& [key, value] : in.metadata()) writer.set(key, value);
  if (in.has("general.file_type")) {
    writer.set("general.file_type", gguf::Value::u32(file_type_for(target)));
  }
  for (const gguf::TensorInfo& t : in.tensors()) {
    const bool repack = quant::is_ternary(t.type) && t.type != target;
    writer.add_tensor(t.name, repack ? target : t.type,
                      std::vector<int64_t>(t.ne.begin(), t.ne.begin() + t.n_dims));
    ++(repack ? summary.repacked_tensors : summary.copied_tensors);
  }
  writer.begin_data();
  for (const gguf::TensorInfo& t : in.tensors()) {
    if (quant::is_ternary(t.type) && t.type != target) {
      repack_tensor(writer, t, target);
    } else {
      copy_tensor(writer, t);
    }
  }
  writer.finish();
}

}  // namespace

uint32_t file_type_for(quant::TensorType target) {
  switch (target) {
    case quant::TensorType::kPQ2_0:
      return 141;  // LLAMA_FTYPE_MOSTLY_PQ2_0 of the Prism fork, as the PQ2_0 Bonsai file carries
    case quant::TensorType::kPTQ1_0:
      return 143;  // what the published PTQ1_0 file carries (model-spec §2.3, T13)
    case quant::TensorType::kQ2_0:
      return 41;  // LLAMA_FTYPE_MOSTLY_Q2_0 in mainline llama.h (Q1_0 = 40, Q2_0 = 41)
    default:
      fail(ErrorKind::kInput, "{} is not a ternary type", quant::traits(target).name);
  }
}

ConvertSummary convert_model(const std::string& input, const std::string& output, quant::TensorType target) {
  const gguf::Reader in = gguf::Reader::open(input);
  const std::optional<hadamard::Contract> contract = hadamard::read_contract(in);
  if (!quant::is_ternary(target)) {
    fail(ErrorKind::kInput,
         "{}: target type {} is not ternary; convert only re-packs ternary tensors losslessly{}", input,
         quant::traits(target).name,
         contract ? " (and the weights are Hadamard-folded, so they must stay ternary)" : "");
  }
  if (std::filesystem::exists(output) && std::filesystem::equivalent(input, output)) {
    fail(ErrorKind::kInput, "{}: output is the same file as the input", output);
  }

  ConvertSummary summary;
  write_converted(in, output, target, summary);  // the Writer deletes its file unless finish() ran
  summary.input_bytes = in.file_size();
  summary.output_bytes = std::filesystem::file_size(output);
  return summary;
}

}  // namespace tern::tools
