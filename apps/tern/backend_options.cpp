#include "apps/tern/backend_options.h"

#include "core/error.h"

namespace tern::app {

void BackendOptions::add_to(CLI::App& command) {
  command
      .add_option("--backend", backend,
                  "compute backend: cpu (SIMD ternary kernels) or ref (the fp32 oracle, slow)")
      ->capture_default_str();
  command.add_option("-t,--threads", threads, "threads of the cpu backend (0: every hardware thread)")
      ->capture_default_str();
  command.add_flag("--pin", pin,
                   "pin cpu-backend thread t to CPU t (for a machine the process has to itself)");
  command.add_flag("--mmap", mmap,
                   "read the weights from the file's memory map (faster start, pages shared between "
                   "processes) instead of copying them to huge pages (faster decode)");
}

runtime::EngineOptions BackendOptions::engine_options() const {
  if (threads < 0) fail(ErrorKind::kInput, "--threads must be >= 0, got {}", threads);
  return runtime::EngineOptions{
      .backend = runtime::parse_backend(backend), .threads = threads, .pin_threads = pin};
}

model::LoadOptions BackendOptions::load_options() const {
  return model::LoadOptions{.placement =
                                mmap ? model::WeightPlacement::kMapped : model::WeightPlacement::kHugePages};
}

}  // namespace tern::app
