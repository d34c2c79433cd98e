// Each subcommand of the tern CLI registers itself on the app and runs through a callback.
// Errors thrown by a command are caught in main() and printed as one line.
#pragma once

#include <CLI/CLI.hpp>

namespace tern::app {

void add_inspect_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);    // tern tokenize MODEL TEXT | --jsonl FILE [--no-special]
void add_detokenize_command(CLI::App& app);  // tern detokenize MODEL IDS... [--no-special]
void add_render_command(CLI::App& app);
void add_chat_command(CLI::App& app);        // tern chat [generation options] [--system TEXT]
void add_perplexity_command(CLI::App& app);  // tern perplexity -m MODEL -f TEXT [--ctx N] [--stride S]
void add_logits_command(CLI::App& app);      // tern logits -m MODEL --tokens FILE --out OUT.npy
void add_bench_command(CLI::App& app);       // tern bench MODEL [-p ..] [-n ..] [-d ..] | --memory-bandwidth
void add_serve_command(CLI::App& app);       // tern serve MODEL [--host --port --parallel --ctx-size ...]

}  // namespace tern::app
