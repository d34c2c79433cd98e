// tern perplexity: the perplexity of a text file under a model, scored as src/runtime/perplexity.h
// documents (llama-perplexity's windows: the second half of each window is scored).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "apps/tern/backend_options.h"
#include "apps/tern/commands.h"
#include "apps/tern/context_limit.h"
#include "apps/tern/input_file.h"
#include "core/error.h"
#include "runtime/engine.h"
#include "runtime/loaded_model.h"
#include "runtime/perplexity.h"
#include "text/tokenizer.h"

namespace tern::app {
namespace {

struct PerplexityArgs {
  std::string model_path;
  std::string text_path;
  BackendOptions compute;
  int64_t ctx = 512;
  int64_t stride = 0;  // 0: ctx
};

std::vector<int32_t> read_tokens(const text::Tokenizer& tokenizer, const std::string& path) {
  const std::string text = read_input_file(path);
  try {
    return tokenizer.encode(text, false);
  } catch (const Error& e) {  // invalid UTF-8: name the file
    fail(e.kind(), "{}: {}", path, e.what());
  }
}

void run(const PerplexityArgs& args) {
  if (args.stride < 0)
    fail(ErrorKind::kInput, "--stride must be >= 0 (0: the window length), got {}", args.stride);
  const runtime::LoadedModel loaded =
      runtime::LoadedModel::load(args.model_path, args.compute.load_options(args.model_path));
  const std::vector<int32_t> tokens = read_tokens(*loaded.tokenizer, args.text_path);
  const int64_t ctx = within_trained_context(args.ctx, loaded.model->config(), "--ctx");
  const int64_t stride = args.stride > 0 ? args.stride : ctx;
  fmt::print(stderr, "{} tokens, windows of {} every {}, scoring window offsets {}..{}\n", tokens.size(), ctx,
             stride, runtime::first_scored_offset(ctx, stride), ctx - 1);
  runtime::Engine engine(*loaded.model, args.compute.engine_options());
  const int64_t capacity = std::max<int64_t>(ctx, 1);
  warn_if_state_evicts_weights(*loaded.model, capacity, runtime::KvPrecision::kF16);
  runtime::EngineLogitsSource source(engine, capacity);
  const runtime::NllAccumulator result =
      runtime::perplexity(source, tokens, ctx, stride, [](const runtime::PerplexityProgress& p) {
        fmt::print(stderr, "[{}/{}] PPL = {:.4f}\n", p.window, p.windows, p.totals->perplexity());
      });
  fmt::print("PPL = {:.4f} ± {:.4f} ({} tokens scored)\n", result.perplexity(), result.perplexity_error(),
             result.count());
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto args = std::make_shared<PerplexityArgs>();
  CLI::App* command =
      app.add_subcommand("perplexity", "perplexity of a text file (llama-perplexity windows)");
  command->add_option("-m,--model", args->model_path, "GGUF model")->required();
  command->add_option("-f,--file", args->text_path, "text file to score")->required();
  command->add_option("--ctx", args->ctx, "window length in tokens (capped by the model context)")
      ->capture_default_str();
  command->add_option("--stride", args->stride, "tokens between window starts (default: the window length)");
  args->compute.add_to(*command);
  command->callback([args] { run(*args); });
}

}  // namespace tern::app
