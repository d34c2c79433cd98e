// tern run: generate from a prompt, streaming UTF-8-safe text to stdout (nothing else goes there) and the
// prompt and generation speeds to stderr.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/tern/backend_options.h"
#include "apps/tern/commands.h"
#include "apps/tern/generation_options.h"
#include "runtime/engine.h"
#include "runtime/generate.h"

namespace tern::app {
namespace {

struct RunArgs {
  GenerationOptions options;
  std::string prompt;
  std::string system;
  bool chat = false;
};

std::string prompt_text(const RunArgs& args, const runtime::LoadedModel& loaded) {
  if (!args.chat) return args.prompt;
  nlohmann::ordered_json request;
  request["messages"] = nlohmann::ordered_json::array();
  if (!args.system.empty()) request["messages"].push_back({{"role", "system"}, {"content", args.system}});
  request["messages"].push_back({{"role", "user"}, {"content", args.prompt}});
  request["add_generation_prompt"] = true;
  if (args.options.no_think) request["chat_template_kwargs"] = {{"enable_thinking", false}};
  return loaded.render_chat(request);
}

void run(const RunArgs& args) {
  const runtime::LoadedModel loaded = args.options.load_model();
  const std::vector<int32_t> prompt = loaded.encode_prompt(prompt_text(args, loaded));
  runtime::Engine engine(*loaded.model, args.options.engine_options());
  runtime::SequenceState state =
      make_sequence(engine, args.options.context(loaded), args.options.kv_precision());
  runtime::Generation generation(*loaded.tokenizer, args.options.sampling, args.options.limits(loaded),
                                 prompt, loaded.banned_tokens);
  const runtime::GenerateStats stats =
      runtime::generate(engine, state, prompt, generation, [](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
      });
  std::fputc('\n', stdout);
  fmt::print(stderr, "prompt: {} tokens in {:.3f} s ({:.1f} tok/s)\n", stats.prompt_tokens,
             stats.prompt_seconds,
             static_cast<double>(stats.prompt_tokens) / std::max(stats.prompt_seconds, 1e-9));
  const int64_t decoded = std::max<int64_t>(stats.generated_tokens - 1, 0);
  fmt::print(stderr, "generation: {} tokens, {:.1f} tok/s ({})\n", stats.generated_tokens,
             static_cast<double>(decoded) / std::max(stats.generate_seconds, 1e-9),
             runtime::finish_reason_name(generation.finish_reason()));
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* command = app.add_subcommand("run", "generate text from a prompt");
  args->options.add_to(*command);
  command->add_option("-p,--prompt", args->prompt, "prompt text")->required();
  CLI::Option* chat =
      command->add_flag("--chat", args->chat, "wrap the prompt in the model's chat template as a user turn");
  command->add_option("--system", args->system, "system message (with --chat)")->needs(chat);
  // The thinking switch is the chat template's: a raw prompt has none to turn off.
  command->get_option("--no-think")->needs(chat);
  command->callback([args] { run(*args); });
}

}  // namespace tern::app
