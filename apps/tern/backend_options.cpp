#include "apps/tern/backend_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "core/thread_pool.h"
#include "gguf/reader.h"
#include "quant/types.h"

namespace tern::app {

void BackendOptions::add_to(CLI::App& command) {
  command
      .add_option("--backend", backend,
                  "compute backend: cpu (SIMD ternary kernels) or ref (the fp32 oracle, slow)")
      ->capture_default_str();
  command.add_option("-t,--threads", threads, "threads of the cpu backend (0: every allowed CPU)")
      ->check(CLI::Range(0, ThreadPool::kMaxThreads))
      ->capture_default_str();
  command.add_flag(
      "--pin", pin,
      "pin cpu-backend thread t to the t-th CPU the process may run on (for CPUs the process has to itself)");
  CLI::Option* mapped = command.add_flag("--mmap", mmap,
                                         "read the weights from the file's memory map (faster start, pages "
                                         "shared between processes) instead of copying them to huge pages "
                                         "(faster decode)");
  add_ptq1_form(command, ptq1_form);
  add_pq2_form(command, pq2_form, mapped);
}

void BackendOptions::add_ptq1_form(CLI::App& command, std::string& form) {
  command
      .add_option("--ptq1-form", form,
                  "what a PTQ1_0 file's matrices become at load: panels (1.6-bit trit panels: ≈ the file's "
                  "size, 19% fewer bytes a decode token; fast with AVX-512 VBMI), planes (the same bytes row "
                  "by row, a slower decode kernel), rows (1.6-bit trit rows for AVX2: ≈ the file's size, a "
                  "slower decode than pq2_0 where the kernel is the limit), pq2_0 (2.125 bits, fast "
                  "everywhere) or auto (panels where the CPU has VBMI, else pq2_0)")
      ->capture_default_str();
}

void BackendOptions::add_pq2_form(CLI::App& command, std::string& form, CLI::Option* mmap) {
  command
      .add_option("--pq2-form", form,
                  "how PQ2_0 matrices copied to huge pages are laid out: panels (16-row panels, the decode "
                  "form of the AVX-512 VBMI kernels: the same bits and logits as rows, re-ordered), rows (as "
                  "in the file; fast everywhere) or auto (panels where the CPU has VBMI). Not with --mmap, "
                  "which reads the file's rows")
      ->capture_default_str()
      ->excludes(mmap);
}

runtime::EngineOptions BackendOptions::engine_options() const {
  return runtime::EngineOptions{
      .backend = runtime::parse_backend(backend), .threads = threads, .pin_threads = pin};
}

void BackendOptions::check_forms_apply(const std::string& ptq1_form, const std::string& pq2_form,
                                       const std::string& model_path) {
  model::parse_ptq1_form(ptq1_form);  // a misspelt form is named as one, whatever the file holds
  model::parse_pq2_form(pq2_form);
  if (ptq1_form == "auto" && pq2_form == "auto") return;
  const gguf::Reader file = gguf::Reader::open(model_path);
  if (ptq1_form != "auto" && !file.holds_type(quant::TensorType::kPTQ1_0))
    fail(ErrorKind::kInput, "--ptq1-form {}: {} has no PTQ1_0 matrices", ptq1_form, model_path);
  if (pq2_form != "auto" && !file.holds_type(quant::TensorType::kPQ2_0))
    fail(ErrorKind::kInput, "--pq2-form {}: {} has no PQ2_0 matrices", pq2_form, model_path);
}

model::LoadOptions BackendOptions::load_options(const std::string& model_path) const {
  runtime::check_compute_options(runtime::parse_backend(backend), threads, pin);
  check_forms_apply(ptq1_form, pq2_form, model_path);
  return model::LoadOptions{
      .placement = mmap ? model::WeightPlacement::kMapped : model::WeightPlacement::kHugePages,
      .ptq1_form = model::parse_ptq1_form(ptq1_form),
      .pq2_form = model::parse_pq2_form(pq2_form),
      .threads = threads};
}

void warn_if_state_evicts_weights(const model::Model& model, int64_t capacity, runtime::KvPrecision kv) {
  const std::optional<std::string> warning =
      runtime::mapped_weights_warning(runtime::sequence_state_bytes(model.config(), capacity, kv),
                                      model.mapped_matrix_bytes(), runtime::describe_states(1, capacity, kv));
  if (warning) fmt::print(stderr, "tern: warning: {}\n", *warning);
}

runtime::SequenceState make_sequence(const runtime::Engine& engine, int64_t capacity,
                                     runtime::KvPrecision kv) {
  warn_if_state_evicts_weights(engine.model(), capacity, kv);
  return engine.new_sequence(capacity, kv);
}

}  // namespace tern::app
