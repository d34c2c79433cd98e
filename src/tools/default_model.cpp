#include "tools/default_model.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "tools/synth.h"
#include "tools/synth_vocab.h"

namespace tern::tools {

std::string default_model_path() {
  if (const char* path = std::getenv("TERN_DEFAULT_MODEL"); path != nullptr && *path != '\0') return path;
  std::filesystem::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    cache = std::filesystem::path(home) / ".cache";
  } else {
    cache = std::filesystem::temp_directory_path();
  }
  return (cache / "tern" / "tiny-pq2_0.gguf").string();
}

std::string ensure_default_model() {
  const std::filesystem::path path = default_model_path();
  if (std::filesystem::exists(path)) return path.string();
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) fail(ErrorKind::kIo, "{}: cannot create directory: {}", path.parent_path().string(), ec.message());
  const SynthSpec spec = synth_preset("tiny");
  SynthOptions options;
  options.out_path = path.string() + ".partial." + std::to_string(::getpid());
  write_synth_model(spec, builtin_vocab(spec.vocab), options);
  std::filesystem::rename(options.out_path, path, ec);
  if (ec)
    fail(ErrorKind::kIo, "{}: cannot move the new default model into place: {}", path.string(), ec.message());
  return path.string();
}

}  // namespace tern::tools
