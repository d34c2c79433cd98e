// tern tokenize / tern detokenize: the model's tokenizer from its GGUF header (model-spec §2.5, §7).
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/tern/commands.h"
#include "apps/tern/input_file.h"
#include "core/error.h"
#include "gguf/reader.h"
#include "text/detokenizer.h"
#include "text/tokenizer.h"

namespace tern::app {

namespace {

text::Tokenizer open_tokenizer(const std::string& model_path) {
  return text::Tokenizer(text::load_vocab(gguf::Reader::open(model_path)));
}

std::vector<int32_t> encode(const text::Tokenizer& tokenizer, const std::string& text, bool parse_special) {
  std::vector<int32_t> ids;
  if (tokenizer.add_bos()) ids.push_back(static_cast<int32_t>(*tokenizer.vocab().bos_id));
  const std::vector<int32_t> body = tokenizer.encode(text, parse_special);
  ids.insert(ids.end(), body.begin(), body.end());
  return ids;
}

void run_tokenize(const std::string& model_path, const std::string& text, const std::string& jsonl_path,
                  bool no_special) {
  const text::Tokenizer tokenizer = open_tokenizer(model_path);
  if (jsonl_path.empty()) {
    fmt::print("{}\n", fmt::join(encode(tokenizer, text, !no_special), " "));
    return;
  }
  std::istringstream lines(read_input_file(jsonl_path));
  size_t line_number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_number;
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      fail(ErrorKind::kInput, "{}:{}: not JSON: {}", jsonl_path, line_number, e.what());
    }
    if (!value.is_string()) fail(ErrorKind::kInput, "{}:{}: not a JSON string", jsonl_path, line_number);
    fmt::print("[{}]\n", fmt::join(encode(tokenizer, value.get<std::string>(), !no_special), ","));
  }
}

void run_detokenize(const std::string& model_path, const std::vector<int64_t>& ids, bool no_special) {
  const text::Tokenizer tokenizer = open_tokenizer(model_path);
  text::StreamingDetokenizer detokenizer(tokenizer, !no_special);
  std::string out;
  for (int64_t id : ids) {
    if (id < 0 || static_cast<uint64_t>(id) >= tokenizer.size()) {
      fail(ErrorKind::kInput, "token id {} is outside the vocabulary (0..{})", id, tokenizer.size() - 1);
    }
    out += detokenizer.push(static_cast<int32_t>(id));
  }
  out += detokenizer.flush();
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("tokenize", "Print the token ids of a text (or of each line of a JSONL file)");
  static std::string model_path, text, jsonl_path;
  static bool no_special = false;
  cmd->add_option("MODEL", model_path, "GGUF model whose tokenizer to use")->required();
  // Counted, not tested for emptiness: an empty TEXT is a text to tokenize, and no TEXT is a mistake.
  const CLI::Option* text_given = cmd->add_option("TEXT", text, "Text to tokenize");
  const CLI::Option* jsonl_given = cmd->add_option(
      "--jsonl", jsonl_path, "File of one JSON string per line; prints one JSON id array per line");
  cmd->add_flag("--no-special", no_special, "Treat control-token text as plain text");
  cmd->callback([text_given, jsonl_given] {
    if ((text_given->count() > 0) == (jsonl_given->count() > 0)) {
      fail(ErrorKind::kInput, "tokenize: give either TEXT or --jsonl FILE{}",
           text_given->count() > 0 ? ", not both" : "");
    }
    run_tokenize(model_path, text, jsonl_path, no_special);
  });
}

void add_detokenize_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("detokenize", "Print the text of token ids");
  static std::string model_path;
  static std::vector<int64_t> ids;
  static bool no_special = false;
  cmd->add_option("MODEL", model_path, "GGUF model whose tokenizer to use")->required();
  cmd->add_option("IDS", ids, "Token ids")->required();
  cmd->add_flag("--no-special", no_special, "Hide control tokens");
  cmd->callback([] { run_detokenize(model_path, ids, no_special); });
}

}  // namespace tern::app
