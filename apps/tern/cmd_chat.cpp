// tern chat: an interactive multi-turn chat through the model's chat template. Each turn re-renders
// the whole conversation, but only the tokens past what the sequence already holds are fed: when the
// new prompt does not start with those tokens (the template dropped an old turn's reasoning), the
// state is reset and the whole prompt fed again. Reasoning is shown dimmed on a terminal, or as
// "[thinking] …" lines otherwise. Ctrl-C during a reply stops the reply; at the prompt it quits.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "apps/tern/backend_options.h"
#include "apps/tern/commands.h"
#include "apps/tern/generation_options.h"
#include "core/error.h"
#include "runtime/engine.h"
#include "runtime/generate.h"
#include "text/think_stream.h"
#include "text/utf8.h"

namespace tern::app {
namespace {

std::atomic<bool> interrupted{false};  // set by SIGINT

void on_sigint(int /*signal*/) {
  interrupted.store(true);
}

// SIGINT without SA_RESTART: a blocked read of the prompt returns, so Ctrl-C there ends the chat.
void install_sigint_handler() {
  struct sigaction action {};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
}

struct ChatArgs {
  GenerationOptions options;
  std::string system;
};

std::string trimmed(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

void print(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

class ChatSession {
 public:
  explicit ChatSession(const ChatArgs& args)
      : args_(args),
        loaded_(args.options.load_model()),
        engine_(*loaded_.model, args.options.engine_options()),
        state_(make_sequence(engine_, args.options.context(loaded_), args.options.kv_precision())),
        tty_(isatty(fileno(stdout)) != 0) {
    if (!loaded_.chat_template) fail(ErrorKind::kInput, "this model has no chat template; use tern run");
    fmt::print(stderr, "(backend {}, {} thread{})\n", runtime::backend_name(engine_.backend()),
               engine_.threads(), engine_.threads() == 1 ? "" : "s");
    reset();
  }

  void reset() {
    history_ = nlohmann::ordered_json::array();
    if (!args_.system.empty()) history_.push_back({{"role", "system"}, {"content", args_.system}});
    state_.reset();
    consumed_.clear();
  }

  void reply(const std::string& user_text) {
    history_.push_back({{"role", "user"}, {"content", user_text}});
    const std::string prompt_text = render();
    const std::vector<int32_t> prompt = loaded_.encode_prompt(prompt_text);
    const bool continues =
        prompt.size() > consumed_.size() && std::equal(consumed_.begin(), consumed_.end(), prompt.begin());
    if (!continues) {
      state_.reset();
      consumed_.clear();
    }
    const std::span<const int32_t> fresh = std::span(prompt).subspan(consumed_.size());
    runtime::Generation generation(*loaded_.tokenizer, args_.options.sampling, args_.options.limits(loaded_),
                                   prompt, loaded_.banned_tokens);
    text::ThinkStream stream(text::ends_in_think_block(prompt_text));
    Display display;
    const text::ThinkStream::Sink show = [&](std::string_view text, bool reasoning) {
      show_piece(text, reasoning, display);
    };
    interrupted.store(false);
    runtime::GenerateStats stats;
    try {
      stats = runtime::generate(
          engine_, state_, fresh, generation, [&](std::string_view text) { stream.feed(text, show); },
          &interrupted);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kCapacity) throw;
      history_.erase(history_.size() - 1);
      fmt::print(stderr, "tern: {}; /reset to start over\n", e.what());
      return;
    }
    interrupted.store(false);
    stream.finish(show);
    if (tty_ && display.reasoning_shown && !display.answer_started) print("\033[0m");
    print("\n");
    consumed_.insert(consumed_.end(), fresh.begin(), fresh.end());
    const std::vector<int32_t>& generated = generation.tokens();
    consumed_.insert(consumed_.end(), generated.begin(), generated.end() - (generated.empty() ? 0 : 1));
    // generate() feeds every generated token but the last, which nothing has consumed yet.
    if (state_.position() != static_cast<int64_t>(consumed_.size())) {
      fail(ErrorKind::kInternal, "chat: the sequence holds {} tokens, the transcript {}", state_.position(),
           consumed_.size());
    }
    nlohmann::ordered_json message = {{"role", "assistant"}, {"content", trimmed(stream.content())}};
    if (!trimmed(stream.reasoning()).empty()) message["reasoning_content"] = trimmed(stream.reasoning());
    history_.push_back(std::move(message));
    fmt::print(stderr, "({} prompt tokens fed, {} reused; {} generated, {})\n", fresh.size(),
               prompt.size() - fresh.size(), stats.generated_tokens,
               runtime::finish_reason_name(generation.finish_reason()));
  }

 private:
  std::string render() const {
    nlohmann::ordered_json request;
    request["messages"] = history_;
    request["add_generation_prompt"] = true;
    if (args_.options.no_think) request["chat_template_kwargs"] = {{"enable_thinking", false}};
    return loaded_.render_chat(request);
  }

  struct Display {
    bool reasoning_shown = false;
    bool answer_started = false;
  };

  // Reasoning is dim on a terminal and "[thinking] " otherwise; the answer follows on its own line.
  void show_piece(std::string_view text, bool reasoning, Display& display) const {
    if (reasoning && !display.reasoning_shown) {
      print(tty_ ? "\033[2m" : "[thinking] ");
      display.reasoning_shown = true;
    } else if (!reasoning && display.reasoning_shown && !display.answer_started) {
      print(tty_ ? "\033[0m\n" : "\n");
    }
    if (!reasoning) display.answer_started = true;
    print(text);
  }

  const ChatArgs& args_;
  runtime::LoadedModel loaded_;
  runtime::Engine engine_;
  runtime::SequenceState state_;
  bool tty_;
  nlohmann::ordered_json history_;
  std::vector<int32_t> consumed_;  // the tokens the state holds
};

void run(const ChatArgs& args) {
  ChatSession session(args);
  install_sigint_handler();
  const bool interactive = isatty(fileno(stdin)) != 0;
  std::string line;
  for (;;) {
    if (interactive) print("> ");
    if (!std::getline(std::cin, line) || interrupted.load()) break;
    const std::string text = trimmed(line);
    if (text.empty()) continue;
    if (text == "/exit") break;
    bool incomplete = false;
    if (const size_t valid = text::valid_utf8_prefix(text, incomplete); valid < text.size()) {
      // Not sent, so the conversation so far is kept.
      fmt::print(stderr, "tern: the line is not UTF-8 (at byte {}); not sent\n", valid);
      continue;
    }
    if (text == "/reset") {
      session.reset();
      fmt::print(stderr, "(history cleared)\n");
      continue;
    }
    session.reply(text);
  }
  if (interactive) print("\n");
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto args = std::make_shared<ChatArgs>();
  CLI::App* command = app.add_subcommand("chat", "interactive multi-turn chat (/reset, /exit)");
  args->options.add_to(*command);
  command->add_option("--system", args->system, "system message");
  command->callback([args] { run(*args); });
}

}  // namespace tern::app
