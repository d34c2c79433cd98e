// The tiny synthetic model the CLI tests run the tern binary on, written once per test binary.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "tests/support/process_temp.h"
#include "tools/synth.h"

namespace tern::app {

inline std::string tiny_model_path() {
  static const std::string path = [] {
    const std::string out = testing_support::process_temp_path("cli_tiny.gguf");
    tools::SynthOptions options;
    options.out_path = out;
    const tools::SynthSpec spec = tools::synth_preset("tiny");
    tools::write_synth_model(spec, tools::builtin_vocab(spec.vocab), options);
    return out;
  }();
  return path;
}

inline std::string temp_file(const std::string& name) {
  return testing_support::process_temp_path(name);
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// What a run of the tern binary left: its exit code (-1 when a signal ended it) and its stderr.
struct TernExit {
  int code = -1;
  std::string err;
};

// Runs `tern ARGS`, stdout discarded and stderr kept in the temp file `err_name`; under `timeout` when
// timeout_s > 0 (for a command that would otherwise be left serving).
inline TernExit run_tern(const std::string& args, const std::string& err_name, int timeout_s = 0) {
  const std::string err = temp_file(err_name);
  const std::string limit = timeout_s > 0 ? fmt::format("timeout {} ", timeout_s) : "";
  const int status = std::system((limit + TERN_BINARY + " " + args + " > /dev/null 2> " + err).c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, file_text(err)};
}

}  // namespace tern::app
