// tern render MODEL REQUEST.json: the prompt the model's own chat template makes of an OpenAI
// chat-completions request, printed byte for byte with nothing added (model-spec §7.4). The request is
// read and rendered as the server reads and renders it (server/chat_prompt.h): the same refusals, the
// same prompt as /apply-template returns.
#include <cstdio>
#include <memory>
#include <string>

#include "apps/tern/commands.h"
#include "apps/tern/input_file.h"
#include "core/error.h"
#include "gguf/reader.h"
#include "server/api.h"
#include "server/chat_prompt.h"
#include "text/chat_template.h"

namespace tern::app {
namespace {

server::Json read_request(const std::string& path) {
  const auto body = server::Json::parse(read_input_file(path), nullptr, false);
  if (body.is_discarded()) fail(ErrorKind::kInput, "{}: not valid JSON", path);
  if (!body.is_object()) fail(ErrorKind::kInput, "{}: the request must be a JSON object", path);
  return body;
}

}  // namespace

void add_render_command(CLI::App& app) {
  struct Options {
    std::string model;
    std::string request;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("render", "Print the prompt the model's chat template makes of a request");
  cmd->add_option("model", options->model, "GGUF model file")->required();
  cmd->add_option("request", options->request, "OpenAI chat-completions request body (JSON file)")
      ->required();
  cmd->callback([options] {
    const gguf::Reader file = gguf::Reader::open(options->model);
    const text::ChatTemplate chat_template = text::load_chat_template(file);
    const server::Json body = read_request(options->request);
    std::string prompt;
    try {
      prompt = server::render_chat_prompt(chat_template, server::parse_chat_prompt(body));
    } catch (const server::ApiError& e) {  // a refusal of the request, or the template's error
      fail(ErrorKind::kInput, "{}: {}", options->request, e.what());
    }
    if (std::fwrite(prompt.data(), 1, prompt.size(), stdout) != prompt.size() || std::fflush(stdout) != 0)
      fail(ErrorKind::kIo, "render: cannot write to stdout");
  });
}

}  // namespace tern::app
