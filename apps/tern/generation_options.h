// Options shared by the generating commands (run, chat): model, context, sampling, stop conditions.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/tern/backend_options.h"
#include "runtime/engine.h"
#include "runtime/generation.h"
#include "runtime/loaded_model.h"
#include "runtime/sampler.h"
#include "runtime/sequence_state.h"

namespace tern::app {

struct GenerationOptions {
  std::string model_path;  // empty: the embedded default model
  int64_t ctx_size = 4096;
  int64_t max_tokens = 256;
  std::string kv_type = "f16";
  BackendOptions compute;
  bool no_think = false;
  std::vector<std::string> stop;
  runtime::SamplingParams sampling;

  void add_to(CLI::App& command);
  // The model at model_path, or the default model (made on first use), loaded after the compute options
  // are checked (BackendOptions::load_options).
  runtime::LoadedModel load_model() const;
  runtime::KvPrecision kv_precision() const;
  runtime::EngineOptions engine_options() const { return compute.engine_options(); }
  runtime::GenerationLimits limits(const runtime::LoadedModel& loaded) const;
  // The context to allocate: ctx_size capped by the model's declared context length.
  int64_t context(const runtime::LoadedModel& loaded) const;
};

}  // namespace tern::app
