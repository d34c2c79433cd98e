// Reading the committed tokenizer fixtures (tools/reference/make_tokenizer_fixtures.py) for the tests
// and the benchmark: gzip'd tokenizer.json, JSONL corpus and expected ids.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tern::test {

inline std::string tokenizer_fixture_dir() {
  return std::string(TERN_SOURCE_DIR) + "/tests/fixtures/tokenizer";
}

inline std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string read_gzip_file(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) throw std::runtime_error("cannot open " + path);
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(file, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  const bool failed = n < 0;
  gzclose(file);
  if (failed) throw std::runtime_error("cannot decompress " + path);
  return out;
}

inline std::vector<std::string> read_corpus() {
  std::vector<std::string> corpus;
  std::istringstream lines(read_text_file(tokenizer_fixture_dir() + "/corpus.jsonl"));
  for (std::string line; std::getline(lines, line);)
    corpus.push_back(nlohmann::json::parse(line).get<std::string>());
  return corpus;
}

inline std::vector<std::vector<int32_t>> read_expected_ids(const std::string& vocab_name) {
  std::vector<std::vector<int32_t>> expected;
  std::istringstream lines(read_text_file(tokenizer_fixture_dir() + "/" + vocab_name + "/expected.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    expected.push_back(nlohmann::json::parse(line).get<std::vector<int32_t>>());
  }
  return expected;
}

// The real Qwen vocabularies the fixtures carry (qwen3_6: Qwen3.5/3.6, pre qwen35; qwen: pre qwen2).
inline const std::vector<std::string>& fixture_vocab_names() {
  static const std::vector<std::string> names{"qwen3_6", "qwen"};
  return names;
}

}  // namespace tern::test
