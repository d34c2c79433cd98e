// tern synth: make a synthetic Bonsai-format qwen35 model from a preset, with any dimension overridden.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "apps/tern/commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "text/vocab.h"
#include "tools/progress.h"
#include "tools/synth.h"
#include "tools/synth_vocab.h"

namespace tern::app {

namespace {

struct DimensionOption {
  const char* flag;
  const char* help;
  int64_t tools::SynthSpec::*member;
  int64_t value = 0;
  CLI::Option* option = nullptr;
};

struct SynthArgs {
  std::string preset = "tiny";
  std::string out;
  std::string type = "pq2_0";
  uint64_t seed = 0;
  float rms_eps = 0.0f;
  float rope_theta = 0.0f;
  int threads = std::min(2, ThreadPool::resolve(0));
  bool progress = false;
  std::string tokenizer;
  std::string tokenizer_config;
  CLI::Option* vocab_option = nullptr;
  CLI::Option* seed_option = nullptr;
  CLI::Option* eps_option = nullptr;
  CLI::Option* theta_option = nullptr;
  std::vector<DimensionOption> dimensions = {
      {"--layers", "decoder layers", &tools::SynthSpec::n_layer},
      {"--d-model", "hidden width", &tools::SynthSpec::d_model},
      {"--d-ff", "SwiGLU inner width", &tools::SynthSpec::d_ff},
      {"--heads", "attention query heads", &tools::SynthSpec::n_head},
      {"--kv-heads", "attention key/value heads", &tools::SynthSpec::n_head_kv},
      {"--head-dim", "attention head dim", &tools::SynthSpec::head_dim},
      {"--rope-dim", "rotary dims per head", &tools::SynthSpec::rope_dim},
      {"--gdn-k-heads", "Gated DeltaNet q/k heads", &tools::SynthSpec::gdn_n_k},
      {"--gdn-v-heads", "Gated DeltaNet v heads", &tools::SynthSpec::gdn_n_v},
      {"--gdn-k-dim", "Gated DeltaNet q/k head dim", &tools::SynthSpec::gdn_k_dim},
      {"--gdn-v-dim", "Gated DeltaNet v head dim", &tools::SynthSpec::gdn_v_dim},
      {"--conv-kernel", "Gated DeltaNet conv taps", &tools::SynthSpec::conv_kernel},
      {"--vocab", "vocabulary rows", &tools::SynthSpec::vocab},
      {"--context", "declared context length", &tools::SynthSpec::context_length},
      {"--attention-interval", "every n-th layer is full attention",
       &tools::SynthSpec::full_attention_interval},
      {"--block-size", "Hadamard block size (a power of two)", &tools::SynthSpec::block_size},
  };
};

void run_synth(const SynthArgs& args) {
  tools::SynthSpec spec = tools::synth_preset(args.preset);
  for (const DimensionOption& d : args.dimensions) {
    if (d.option->count() > 0) spec.*(d.member) = d.value;
  }
  const auto type = quant::type_from_name(args.type);
  if (!type || (*type != quant::TensorType::kPQ2_0 && *type != quant::TensorType::kPTQ1_0)) {
    fail(ErrorKind::kInput, "synth: --type must be pq2_0 or ptq1_0, not '{}'", args.type);
  }
  spec.ternary_type = *type;
  if (args.seed_option->count() > 0) spec.seed = args.seed;
  if (args.eps_option->count() > 0) spec.rms_eps = args.rms_eps;
  if (args.theta_option->count() > 0) spec.rope_theta = args.rope_theta;
  tools::validate_spec(spec);

  text::Vocab vocab;
  if (args.tokenizer.empty()) {
    vocab = tools::builtin_vocab(spec.vocab);
  } else {
    vocab = tools::import_vocab_files(args.tokenizer,
                                      args.tokenizer_config.empty() ? nullptr : &args.tokenizer_config);
    // Without --vocab, the rows grow to hold the tokenizer, padded to a multiple of 128 like the real file.
    const auto tokens = static_cast<int64_t>(vocab.tokens.size());
    if (args.vocab_option->count() == 0) spec.vocab = std::max(spec.vocab, (tokens + 127) / 128 * 128);
    tools::pad_vocab(vocab, spec.vocab);
  }
  tools::SynthOptions options;
  options.out_path = args.out;
  options.threads = args.threads;
  options.progress = args.progress || tools::ProgressBar::stderr_is_tty();
  const tools::SynthReport report = tools::write_synth_model(spec, vocab, options);

  fmt::print("wrote {} ({} B) in {:.1f} s\n", args.out, report.file_bytes, report.seconds);
  fmt::print("  tensors {}: {} folded + token_embd inverse; vocab {} ({} merges)\n", report.tensors,
             report.folded, spec.vocab, vocab.merges.size());
  fmt::print("  {} {} weights: {} B; bf16 {} B; f32 {} B\n", quant::traits(spec.ternary_type).name,
             report.ternary_weights, report.ternary_bytes, report.bf16_bytes, report.f32_bytes);
}

}  // namespace

void add_synth_command(CLI::App& app) {
  auto args = std::make_shared<SynthArgs>();
  CLI::App* cmd =
      app.add_subcommand("synth", "write a synthetic Bonsai-format qwen35 GGUF (random ternary weights)");
  cmd->add_option("--preset", args->preset, "tiny (tests, demo) or 27b (the exact 27B inventory)")
      ->check(CLI::IsMember({"tiny", "27b"}));
  cmd->add_option("-o,--out", args->out, "output GGUF path")->required();
  cmd->add_option("--type", args->type, "ternary type: pq2_0 or ptq1_0");
  args->seed_option = cmd->add_option("--seed", args->seed, "random seed (default 0)");
  args->eps_option = cmd->add_option("--rms-eps", args->rms_eps, "RMSNorm epsilon");
  args->theta_option = cmd->add_option("--rope-theta", args->rope_theta, "RoPE base");
  for (DimensionOption& d : args->dimensions) {
    d.option = cmd->add_option(d.flag, d.value, d.help);
    if (d.member == &tools::SynthSpec::vocab) args->vocab_option = d.option;
  }
  cmd->add_option("--tokenizer", args->tokenizer,
                  "import a Hugging Face tokenizer.json instead of the built-in BPE")
      ->check(CLI::ExistingFile);
  cmd->add_option("--tokenizer-config", args->tokenizer_config,
                  "its tokenizer_config.json (special ids, chat template)")
      ->check(CLI::ExistingFile)
      ->needs("--tokenizer");
  cmd->add_option("--threads", args->threads, "row generation threads")->check(CLI::Range(1, 256));
  cmd->add_flag("--progress", args->progress, "show a progress bar even when stderr is not a terminal");
  cmd->callback([args] { run_synth(*args); });
}

}  // namespace tern::app
