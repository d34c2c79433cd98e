// tern inspect MODEL [--json]: what a model file holds and whether tern can run it.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "apps/tern/commands.h"
#include "gguf/reader.h"
#include "tools/inspect.h"

namespace tern::app {

void add_inspect_command(CLI::App& app) {
  struct Options {
    std::string model;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Show a model's config, tensors, Hadamard contract and tokenizer");
  cmd->add_option("model", options->model, "GGUF model file")->required();
  cmd->add_flag("--json", options->json, "Print the report as JSON");
  cmd->callback([options] {
    const gguf::Reader file = gguf::Reader::open(options->model);
    const nlohmann::json report = tools::inspect_report(file);
    if (options->json) {
      fmt::print("{}\n", report.dump(2));
    } else {
      fmt::print("{}", tools::render_inspect_text(report));
    }
  });
}

}  // namespace tern::app
