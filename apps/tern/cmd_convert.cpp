// tern convert IN OUT --type pq2_0|ptq1_0|q2_0: lossless re-pack of the ternary tensors.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>

#include "apps/tern/commands.h"
#include "tools/convert.h"

namespace tern::app {

void add_convert_command(CLI::App& app) {
  struct Options {
    std::string input;
    std::string output;
    quant::TensorType type = quant::TensorType::kPQ2_0;
  };
  auto options = std::make_shared<Options>();
  const std::map<std::string, quant::TensorType> types{{"pq2_0", quant::TensorType::kPQ2_0},
                                                       {"ptq1_0", quant::TensorType::kPTQ1_0},
                                                       {"q2_0", quant::TensorType::kQ2_0}};
  CLI::App* cmd =
      app.add_subcommand("convert", "Re-pack every ternary tensor into another ternary type, losslessly");
  cmd->add_option("input", options->input, "GGUF model to read")->required();
  cmd->add_option("output", options->output, "GGUF file to write")->required();
  cmd->add_option("--type", options->type, "Target type: pq2_0, ptq1_0 or q2_0 (group 64)")
      ->required()
      ->transform(CLI::CheckedTransformer(types, CLI::ignore_case));
  cmd->callback([options] {
    const tools::ConvertSummary s = tools::convert_model(options->input, options->output, options->type);
    fmt::print("{}: {} tensors re-packed to {}, {} copied; {} -> {} bytes\n", options->output,
               s.repacked_tensors, quant::traits(options->type).name, s.copied_tensors, s.input_bytes,
               s.output_bytes);
  });
}

}  // namespace tern::app
