// The tiny synthetic model the CLI tests run the tern binary on, written once per test binary.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

#include "tools/synth.h"

namespace tern::app {

inline std::string tiny_model_path() {
  static const std::string path = [] {
    // Per process: ctest may run the tests of this binary in parallel processes.
    const std::string out =
        (std::filesystem::path(testing::TempDir()) / fmt::format("tern_cli_tiny_{}.gguf", getpid())).string();
    tools::SynthOptions options;
    options.out_path = out;
    const tools::SynthSpec spec = tools::synth_preset("tiny");
    tools::write_synth_model(spec, tools::builtin_vocab(spec.vocab), options);
    return out;
  }();
  return path;
}

inline std::string temp_file(const std::string& name) {
  return (std::filesystem::path(testing::TempDir()) / fmt::format("{}_{}", getpid(), name)).string();
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tern::app
