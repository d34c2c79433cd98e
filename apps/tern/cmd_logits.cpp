// tern logits: teacher-forced fp32 logits of a token sequence, [positions, vocab] in a .npy file;
// row p holds the logits after feeding tokens[0..p] (the parity fixtures' logits.npy layout).
#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "apps/tern/backend_options.h"
#include "apps/tern/commands.h"
#include "apps/tern/context_limit.h"
#include "apps/tern/input_file.h"
#include "core/error.h"
#include "core/npy.h"
#include "model/model.h"
#include "runtime/engine.h"

namespace tern::app {
namespace {

struct LogitsArgs {
  std::string model_path;
  std::string tokens_path;
  std::string out_path;
  BackendOptions compute;
};

int32_t token_id(int64_t value, const std::string& path, size_t index) {
  if (value < 0 || value > std::numeric_limits<int32_t>::max()) {
    fail(ErrorKind::kInput, "{}: token {} = {} is not a token id", path, index, value);
  }
  return static_cast<int32_t>(value);
}

// A JSON array of ids, a JSON object with a "tokens" array (the parity fixtures), or ids separated by
// whitespace.
std::vector<int32_t> read_tokens(const std::string& path) {
  const std::string text = read_input_file(path);
  const size_t first = text.find_first_not_of(" \t\r\n");
  std::vector<int32_t> ids;
  if (first != std::string::npos && (text[first] == '[' || text[first] == '{')) {
    const auto json = nlohmann::json::parse(text, nullptr, false);
    const auto& list = json.is_object() && json.contains("tokens") ? json["tokens"] : json;
    if (!list.is_array()) fail(ErrorKind::kInput, "{}: expected a JSON array of token ids", path);
    for (const auto& id : list) {
      if (!id.is_number_integer())
        fail(ErrorKind::kInput, "{}: token {} is not an integer", path, ids.size());
      ids.push_back(token_id(id.get<int64_t>(), path, ids.size()));
    }
  } else {
    std::istringstream words(text);
    std::string word;
    while (words >> word) {
      size_t used = 0;
      int64_t id = 0;
      try {
        id = std::stoll(word, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != word.size()) fail(ErrorKind::kInput, "{}: '{}' is not a token id", path, word);
      ids.push_back(token_id(id, path, ids.size()));
    }
  }
  if (ids.empty()) fail(ErrorKind::kInput, "{}: no token ids", path);
  return ids;
}

void run(const LogitsArgs& args) {
  const auto model = model::Model::open(args.model_path, args.compute.load_options(args.model_path));
  const std::vector<int32_t> tokens = read_tokens(args.tokens_path);
  // Teacher forcing past the trained context is kept (its logits may be what is being studied), as the
  // server keeps a context past it, and said.
  if (past_trained_context(static_cast<int64_t>(tokens.size()), model->config())) {
    fmt::print(stderr,
               "tern: warning: {} tokens run past the model's trained context of {}: positions from {} on "
               "were never learned\n",
               tokens.size(), model->config().context_length, model->config().context_length);
  }
  runtime::Engine engine(*model, args.compute.engine_options());
  runtime::SequenceState state =
      make_sequence(engine, static_cast<int64_t>(tokens.size()), runtime::KvPrecision::kF16);
  const int64_t vocab = model->config().vocab_size;
  NpyWriter writer(args.out_path, {static_cast<int64_t>(tokens.size()), vocab});
  // Every token wants its row, so a step takes as many tokens as the engine holds rows for.
  const auto chunk = static_cast<size_t>(engine.limits().max_logit_rows);
  for (size_t offset = 0; offset < tokens.size(); offset += chunk) {
    const std::span<const int32_t> part =
        std::span(tokens).subspan(offset, std::min(chunk, tokens.size() - offset));
    runtime::BatchItem item{&state, part, runtime::LogitsWanted::kAll};
    engine.step({&item, 1});
    writer.write(item.logits);
  }
  writer.finish();
  fmt::print(stderr, "wrote {} x {} logits to {}\n", tokens.size(), vocab, args.out_path);
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto args = std::make_shared<LogitsArgs>();
  CLI::App* command = app.add_subcommand("logits", "teacher-forced fp32 logits of a token sequence to .npy");
  command->add_option("-m,--model", args->model_path, "GGUF model")->required();
  command->add_option("--tokens", args->tokens_path, "token ids: a JSON array or whitespace-separated")
      ->required();
  command->add_option("--out", args->out_path, "output .npy file")->required();
  args->compute.add_to(*command);
  command->callback([args] { run(*args); });
}

}  // namespace tern::app
