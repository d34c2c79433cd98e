// tern synth: writes a complete Bonsai-format qwen35 GGUF the way the real converter does (model-spec
// §2, §4, Appendix A): seeded fp32 weights in the original basis → fold T_K per row with the model's
// signs → ternarise (PQ2_0 or PTQ1_0); the embedding stored as T(e) and listed as the inverse; GDN
// tensors in the tiled V-head order with gdn_v_grouped = true; norm gains +1 where the real file has
// it; ssm_a = −exp(A_log); BF16 a/b projections; F32 conv and norms; a byte-level BPE tokenizer.
// Streams tensor by tensor in row chunks, so memory stays bounded for the 27B preset.
#pragma once

#include <cstdint>
#include <string>

#include "text/vocab.h"
#include "tools/synth_spec.h"

namespace tern::tools {

struct SynthOptions {
  std::string out_path;
  int threads = 2;        // row generation workers
  bool progress = false;  // progress bar on stderr
};

struct SynthReport {
  uint64_t file_bytes = 0;
  size_t tensors = 0;
  size_t folded = 0;           // prism.hadamard.weight_names entries
  uint64_t ternary_bytes = 0;  // payload of the ternary tensors
  uint64_t bf16_bytes = 0;
  uint64_t f32_bytes = 0;
  uint64_t ternary_weights = 0;  // values in ternary tensors
  double seconds = 0.0;
};

// Writes the model; throws Error(kInput) for an invalid spec or a vocabulary that does not fit,
// Error(kIo) if the file cannot be written.
SynthReport write_synth_model(const SynthSpec& spec, const text::Vocab& vocab, const SynthOptions& options);

}  // namespace tern::tools
