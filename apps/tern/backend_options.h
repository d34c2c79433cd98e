// The compute options every model-running command shares: which backend, how many threads, where the
// weights live.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "model/model.h"
#include "runtime/engine.h"
#include "runtime/sequence_state.h"

namespace tern::app {

struct BackendOptions {
  std::string backend = "cpu";
  int threads = 0;                 // 0: every allowed CPU
  bool pin = false;                // each pool thread on its own CPU
  bool mmap = false;               // read the weights from the file mapping instead of a huge-page copy
  std::string ptq1_form = "auto";  // model::parse_ptq1_form
  std::string pq2_form = "auto";   // model::parse_pq2_form

  void add_to(CLI::App& command);
  // Backend and pool size for the engine (the other limits at their defaults); Error(kInput) for a bad
  // backend name or a negative thread count.
  runtime::EngineOptions engine_options() const;
  // Called before the model at model_path loads, so a mistake is named before a load: refuses
  // (Error(kInput)) what engine_options() would then give the engine to refuse (-t or --pin with the
  // one-threaded ref backend), and a form the file has no matrices for (check_forms_apply).
  model::LoadOptions load_options(const std::string& model_path) const;
  // --ptq1-form and --pq2-form, shared with tern bench. A mapped file's PQ2_0 matrices are its rows, so
  // --pq2-form refuses to come with the command's --mmap rather than change nothing.
  static void add_ptq1_form(CLI::App& command, std::string& form);
  static void add_pq2_form(CLI::App& command, std::string& form, CLI::Option* mmap);
  // A form other than auto names what the file's PTQ1_0 (or PQ2_0) matrices become: Error(kInput) where the
  // file at model_path has none, since it would change nothing. Reads the file's header only.
  static void check_forms_apply(const std::string& ptq1_form, const std::string& pq2_form,
                                const std::string& model_path);
};

// Prints runtime::mapped_weights_warning for a command's one sequence of `capacity` tokens as "tern:
// warning: ..." on stderr. Called before the sequence is made: made, it is no longer available memory.
void warn_if_state_evicts_weights(const model::Model& model, int64_t capacity, runtime::KvPrecision kv);
// The command's one sequence, made after that warning.
runtime::SequenceState make_sequence(const runtime::Engine& engine, int64_t capacity,
                                     runtime::KvPrecision kv);

}  // namespace tern::app
