#include "apps/tern/generation_options.h"

#include "apps/tern/context_limit.h"
#include "apps/tern/option_checks.h"
#include "core/error.h"
#include "tools/default_model.h"

namespace tern::app {

void GenerationOptions::add_to(CLI::App& command) {
  command.add_option("-m,--model", model_path,
                     "GGUF model (default: the embedded tiny model, made on first use)");
  command.add_option("-c,--ctx-size", ctx_size, "context length to allocate (capped by the trained context)")
      ->capture_default_str();
  command.add_option("-n,--max-tokens", max_tokens, "most tokens to generate per reply")
      ->capture_default_str();
  command
      .add_option("--kv-type", kv_type, "KV cache precision: f16, f32 or q8 (int8, one scale per 32 values)")
      ->capture_default_str();
  compute.add_to(command);
  command.add_option("--seed", sampling.seed, "sampling seed")->capture_default_str();
  command.add_option("--temp", sampling.temperature, "temperature (0: greedy)")->capture_default_str();
  command.add_option("--top-k", sampling.top_k, "top-k (0: off)")->capture_default_str();
  command.add_option("--top-p", sampling.top_p, "top-p (1: off)")->capture_default_str();
  command.add_option("--min-p", sampling.min_p, "min-p (0: off)")->capture_default_str();
  command.add_option("--repeat-penalty", sampling.repetition_penalty, "repetition penalty (1: off)")
      ->capture_default_str();
  command.add_option("--presence-penalty", sampling.presence_penalty, "presence penalty")
      ->capture_default_str();
  command.add_option("--frequency-penalty", sampling.frequency_penalty, "frequency penalty")
      ->capture_default_str();
  command.add_option("--stop", stop, "stop string (repeatable)")
      ->check(not_empty("an empty stop string would end every reply before its first token"));
  command.add_flag("--no-think", no_think, "chat template with enable_thinking = false");
}

runtime::LoadedModel GenerationOptions::load_model() const {
  const std::string path = model_path.empty() ? tools::ensure_default_model() : model_path;
  return runtime::LoadedModel::load(path, compute.load_options(path));
}

runtime::KvPrecision GenerationOptions::kv_precision() const {
  return runtime::parse_kv_precision(kv_type);
}

runtime::GenerationLimits GenerationOptions::limits(const runtime::LoadedModel& loaded) const {
  runtime::GenerationLimits limits;
  limits.max_tokens = max_tokens;
  limits.stop_tokens = loaded.stop_tokens;
  limits.stop_strings = stop;
  return limits;
}

int64_t GenerationOptions::context(const runtime::LoadedModel& loaded) const {
  if (ctx_size < 1) fail(ErrorKind::kInput, "--ctx-size must be at least 1, got {}", ctx_size);
  return within_trained_context(ctx_size, loaded.model->config(), "--ctx-size");
}

}  // namespace tern::app
