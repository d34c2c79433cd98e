// tern: one CLI, many subcommands. Every failure ends as one line on stderr and a non-zero exit.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "apps/tern/commands.h"
#include "apps/tern/option_checks.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"tern: inference engine and server for ternary, Hadamard-folded hybrid language models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tern 0.1.0");
  spdlog::set_default_logger(spdlog::stderr_color_mt("tern"));
  spdlog::set_pattern("%^%l%$: %v");
  tern::app::add_inspect_command(app);
  tern::app::add_convert_command(app);
  tern::app::add_synth_command(app);
  tern::app::add_run_command(app);
  tern::app::add_tokenize_command(app);
  tern::app::add_detokenize_command(app);
  tern::app::add_render_command(app);
  tern::app::add_chat_command(app);
  tern::app::add_perplexity_command(app);
  tern::app::add_logits_command(app);
  tern::app::add_bench_command(app);
  tern::app::add_serve_command(app);
  tern::app::check_numeric_options(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tern::Error& e) {
    fmt::print(stderr, "tern: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tern: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
