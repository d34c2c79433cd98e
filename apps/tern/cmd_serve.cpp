// tern serve: the OpenAI-compatible HTTP server (src/server/) over the continuous-batching scheduler
// (src/runtime/scheduler.h). SIGTERM or SIGINT stop it gracefully: no new requests, in-flight ones get
// a grace period, then exit 0.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>

#include "apps/tern/backend_options.h"
#include "apps/tern/commands.h"
#include "apps/tern/context_limit.h"
#include "apps/tern/option_checks.h"
#include "core/error.h"
#include "model/model.h"
#include "runtime/engine.h"
#include "runtime/scheduler.h"
#include "server/http_server.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace tern::app {

namespace {

struct ServeArgs {
  std::string model_path;
  server::ServerOptions server;
  runtime::SchedulerOptions scheduler;
  std::string kv_type = "f16";
  BackendOptions compute;
  int64_t cache_mb = 1024;
  double grace_seconds = 10;
};

void run_serve(ServeArgs args) {
  // Signals go to one waiting thread, not to whichever thread they hit.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  args.scheduler.kv = runtime::parse_kv_precision(args.kv_type);
  const auto model = model::Model::open(args.model_path, args.compute.load_options(args.model_path));
  if (past_trained_context(args.scheduler.context, model->config()))
    spdlog::warn(
        "--ctx-size {} is past the model's trained context of {} tokens: replies that reach past it "
        "run positions the model never learned",
        args.scheduler.context, model->config().context_length);
  const text::Tokenizer tokenizer(text::load_vocab(model->file()));
  const text::ChatTemplate chat_template = text::load_chat_template(model->file());
  if (args.server.model_name.empty())
    args.server.model_name = std::filesystem::path(args.model_path).stem().string();
  args.scheduler.cache_bytes = static_cast<size_t>(args.cache_mb) << 20;

  runtime::EngineOptions engine_options = args.compute.engine_options();
  engine_options.max_batch_tokens = args.scheduler.max_batch_tokens;
  args.scheduler.align = engine_options.gdn_chunk;
  // Logit rows for every decoding sequence and one scored prefill chunk (prompt logprobs): the scratch
  // grows to them only when a step asks (model::Scratch).
  engine_options.max_logit_rows = args.scheduler.parallel + args.scheduler.align;
  runtime::Engine engine(*model, engine_options);
  const runtime::SchedulerMemory memory = runtime::scheduler_memory(model->config(), args.scheduler);
  if (const auto warning =
          runtime::mapped_weights_warning(memory.bytes, model->mapped_matrix_bytes(), memory.what))
    spdlog::warn("{}", *warning);
  runtime::Scheduler scheduler(engine, tokenizer, args.scheduler);
  const size_t kv_bytes = scheduler.memory_bytes();
  spdlog::info("model {}: {} layers, vocab {}, file {:.1f} MiB", args.server.model_name,
               model->config().n_layer, model->config().vocab_size,
               static_cast<double>(model->file().file_size()) / (1 << 20));
  spdlog::info("backend {}, {} thread(s)", runtime::backend_name(engine.backend()), engine.threads());
  spdlog::info("sequences: {} × {} tokens ({} KV): {:.1f} MiB; prefix cache budget {} MiB",
               args.scheduler.parallel, args.scheduler.context, args.kv_type,
               static_cast<double>(kv_bytes) / (1 << 20), args.cache_mb);

  server::HttpServer http(args.server, *model, tokenizer, chat_template, scheduler);
  const int port = http.bind();
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    spdlog::info("signal {}: stopping (grace {} s)", signal, args.grace_seconds);
    http.shutdown(args.grace_seconds);
  });
  spdlog::info("listening on http://{}:{}", args.server.host, port);
  http.serve();
  waiter.join();
  spdlog::info("stopped");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "serve a model over an OpenAI-compatible HTTP API");
  cmd->add_option("model", args->model_path, "model file (.gguf)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--host", args->server.host, "address to listen on")
      ->capture_default_str()
      ->check(not_empty("an empty address listens on whatever the resolver makes of it"));
  cmd->add_option("--port", args->server.port, "port (0: any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--api-key", args->server.api_key, "require 'Authorization: Bearer KEY' on API routes")
      ->check(not_empty(
          "an empty key would serve without one (an unset variable?); leave --api-key out for that"));
  cmd->add_option("--model-name", args->server.model_name, "the model id clients name (default: file stem)");
  cmd->add_option("--ctx-size", args->scheduler.context, "tokens each sequence holds (KV allocated at start)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 22));
  cmd->add_option("--kv-type", args->kv_type,
                  "KV cache precision: f16, f32 or q8 (int8, one scale per 32 values)")
      ->capture_default_str();
  args->compute.add_to(*cmd);
  cmd->add_option("--parallel", args->scheduler.parallel, "most sequences running at once")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{256}));
  cmd->add_option("--batch-tokens", args->scheduler.max_batch_tokens, "tokens one engine step takes")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, runtime::kMaxBatchTokens));
  cmd->add_option("--max-queue", args->scheduler.max_waiting, "requests that may wait; more get 429")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{4096}));
  cmd->add_option("--cache-mb", args->cache_mb, "prefix cache budget in MiB (0: off)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 30));
  const CLI::Option* interval =
      cmd->add_option("--checkpoint-interval", args->scheduler.checkpoint_interval,
                      "prompt tokens between prefix-cache checkpoints (a multiple of 64)")
          ->capture_default_str();
  cmd->add_option("--max-body", args->server.max_body_bytes, "largest request body in bytes")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1} << 10, size_t{1} << 30));
  cmd->add_option("--max-tokens", args->server.limits.max_tokens, "largest max_tokens a request may ask")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--max-n", args->server.limits.max_n, "largest n a request may ask")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{64}));
  cmd->add_option("--timeout", args->server.request_timeout_seconds, "per-request deadline in seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.001, server::kMaxRequestTimeoutSeconds));
  cmd->add_option("--grace", args->grace_seconds, "seconds in-flight requests get at shutdown")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->callback([args, interval] {
    if (interval->count() > 0 && args->cache_mb == 0)
      fail(ErrorKind::kInput,
           "--checkpoint-interval: --cache-mb 0 turns off the prefix cache it checkpoints");
    run_serve(*args);
  });
}

}  // namespace tern::app
