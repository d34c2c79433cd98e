// tern serve's HTTP side (cpp-httplib): the OpenAI-compatible routes, llama.cpp's extras, health,
// readiness, metrics and the built-in chat page. Handlers parse and validate a request, render and
// tokenize the prompt, submit one scheduler request per choice and turn the scheduler's events into
// OpenAI responses or SSE chunks; the engine thread is never blocked by a client.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/model.h"
#include "runtime/scheduler.h"
#include "server/api.h"
#include "server/metrics.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace tern::server {

// The longest per-request deadline: past it the deadline's clock arithmetic would overflow long before.
inline constexpr double kMaxRequestTimeoutSeconds = 30 * 86400.0;

struct ServerOptions {
  std::string host = "127.0.0.1";  // not empty
  int port = 8080;                 // 0: any free port
  std::string api_key;             // empty: no authentication
  std::string model_name;
  size_t max_body_bytes = 4 << 20;
  double request_timeout_seconds = 600;  // per-request deadline, in (0, kMaxRequestTimeoutSeconds]
  int http_threads = 0;                  // 0: enough for every running and queued request
  RequestLimits limits;
};

class HttpServer {
 public:
  // Everything passed must outlive the server.
  HttpServer(ServerOptions options, const model::Model& model, const text::Tokenizer& tokenizer,
             const text::ChatTemplate& chat_template, runtime::Scheduler& scheduler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; returns the port. Throws Error(kIo) if it cannot.
  int bind();
  // Serves until stop(); call after bind().
  void serve();
  // Graceful shutdown: refuses new generation requests (503), lets in-flight ones finish for up to
  // `grace_seconds`, cancels the rest, then stops listening.
  void shutdown(double grace_seconds);

  struct Call;  // one API call: its choices and their progress (http_server.cpp)

 private:
  void install_routes();
  void handle_chat(const httplib::Request& req, httplib::Response& res);
  void handle_completion(const httplib::Request& req, httplib::Response& res);
  // Submits the call's choices; throws ApiError 429/503 when the queue is full or shutting down.
  void submit(Call& call, const runtime::GenerationRequest& request);
  void respond(const std::shared_ptr<Call>& call, httplib::Response& res);
  void finish_call(Call& call);
  std::string model_check(const std::string& requested) const;
  // A call for a request's common fields (model checked, a fresh id); the handler adds the rest.
  std::shared_ptr<Call> new_call(const GenerationFields& fields, bool chat);

  ServerOptions options_;
  const model::Model& model_;
  const text::Tokenizer& tokenizer_;
  const text::ChatTemplate& chat_template_;
  runtime::Scheduler& scheduler_;
  Metrics metrics_;
  std::unique_ptr<httplib::Server> http_;
  std::vector<int32_t> end_ids_;  // sorted end-of-generation ids
  std::atomic<bool> draining_{false};
  std::atomic<uint64_t> next_call_{1};
  std::mutex calls_mutex_;
  std::map<std::string, std::vector<uint64_t>> calls_;  // response id → scheduler ids, while live
};

}  // namespace tern::server
