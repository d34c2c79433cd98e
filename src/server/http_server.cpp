#include "server/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <random>
#include <thread>

#include "core/error.h"
#include "server/chat_page.h"
#include "server/chat_prompt.h"
#include "text/output_parser.h"
#include "text/stop_tokens.h"

namespace tern::server {

using runtime::Clock;
using runtime::FinishReason;

namespace {

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void send_error(httplib::Response& res, const ApiError& error) {
  send_json(res, error.status(), error.to_json());
}

std::string sse(const Json& chunk) {
  return "data: " + chunk.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n\n";
}

// The token's text as OpenAI reports it in logprobs, and its bytes.
Json token_entry(const text::Tokenizer& tokenizer, const runtime::Logprobs& lp) {
  const auto piece = [&](int32_t id) { return tokenizer.decode(std::span(&id, 1)); };
  const auto bytes = [&](const std::string& s) {
    Json b = Json::array();
    for (const unsigned char c : s) b.push_back(c);
    return b;
  };
  const std::string text = piece(lp.chosen.token);
  Json entry = {{"token", text}, {"logprob", lp.chosen.logprob}, {"bytes", bytes(text)}};
  Json top = Json::array();
  for (const runtime::TokenLogprob& t : lp.top) {
    const std::string alt = piece(t.token);
    top.push_back({{"token", alt}, {"logprob", t.logprob}, {"bytes", bytes(alt)}});
  }
  entry["top_logprobs"] = top;
  return entry;
}

// The completions API's logprobs: parallel arrays of token text, logprob, alternatives and the token's
// offset in the choice's text, which runs on across the stream's chunks.
class CompletionLogprobs {
 public:
  CompletionLogprobs(const text::Tokenizer& tokenizer, size_t offset)
      : tokenizer_(tokenizer), offset_(offset) {}

  void add(int32_t token, const Json& logprob, const Json& alternatives) {
    const std::string piece = tokenizer_.decode(std::span(&token, 1));
    out_["tokens"].push_back(piece);
    out_["token_logprobs"].push_back(logprob);
    out_["top_logprobs"].push_back(alternatives);
    out_["text_offset"].push_back(offset_);
    offset_ += piece.size();
  }
  void add(int32_t token, const runtime::Logprobs& lp) {
    Json alternatives = Json::object();
    for (const auto& t : lp.top) alternatives[tokenizer_.decode(std::span(&t.token, 1))] = t.logprob;
    add(token, lp.chosen.logprob, alternatives);
  }
  const Json& json() const { return out_; }
  size_t offset() const { return offset_; }

 private:
  const text::Tokenizer& tokenizer_;
  size_t offset_;
  Json out_ = {{"tokens", Json::array()},
               {"token_logprobs", Json::array()},
               {"top_logprobs", Json::array()},
               {"text_offset", Json::array()}};
};

}  // namespace

struct HttpServer::Call {
  struct Choice {
    uint64_t request = 0;
    std::unique_ptr<text::OutputParser> parser;  // chat: reasoning and tool calls
    std::string text, reasoning;
    std::vector<text::ToolCall> tool_calls;
    Json logprobs = Json::array();  // chat: content entries
    std::vector<runtime::Logprobs> token_logprobs, prompt_logprobs;
    size_t logprob_offset = 0;  // completions, streamed: the text offset of the next token's logprobs
    std::vector<int32_t> tokens;
    std::optional<FinishReason> finish;
    bool deadline = false;
    std::string error;
    runtime::Timings timings;
    Clock::time_point last_token;
    bool started = false;
  };

  std::string id;
  bool chat = true;
  bool stream = false;
  bool include_usage = false;
  bool echo = false;
  int top_logprobs = -1;
  std::string echo_text;
  std::vector<int32_t> prompt;
  std::vector<uint64_t> scheduler_ids;
  std::vector<Choice> choices;
  std::shared_ptr<runtime::RequestStream> events = std::make_shared<runtime::RequestStream>();
  Clock::time_point arrival = Clock::now();
  int64_t created = std::time(nullptr);
  std::string model;

  Choice& choice_of(uint64_t request) {
    for (Choice& c : choices) {
      if (c.request == request) return c;
    }
    fail(ErrorKind::kInternal, "event for request {} that is not part of call {}", request, id);
  }
  bool finished() const {
    for (const Choice& c : choices) {
      if (!c.finish) return false;
    }
    return true;
  }
};

namespace {

const char* finish_name(const HttpServer::Call::Choice& c) {
  if (!c.error.empty()) return "error";
  if (c.deadline) return "length";
  if (*c.finish == FinishReason::kCancelled) return "abort";
  if (*c.finish == FinishReason::kStop && !c.tool_calls.empty()) return "tool_calls";
  return runtime::finish_reason_name(*c.finish);
}

Json tool_call_json(const text::ToolCall& call) {
  return {{"index", call.index},
          {"id", call.id},
          {"type", "function"},
          {"function", {{"name", call.name}, {"arguments", call.arguments}}}};
}

Json usage_json(const HttpServer::Call& call) {
  int64_t completion = 0;
  for (const auto& c : call.choices) completion += c.timings.generated_tokens;
  const auto prompt = static_cast<int64_t>(call.prompt.size());
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion},
          {"prompt_tokens_details", {{"cached_tokens", call.choices.front().timings.cached_tokens}}}};
}

// llama.cpp's timings object, for the first choice.
Json timings_json(const runtime::Timings& t) {
  const double prompt_ms = t.prompt_seconds * 1e3, gen_ms = t.generation_seconds * 1e3;
  const int64_t computed = t.prompt_tokens - t.cached_tokens;
  const int64_t predicted = std::max<int64_t>(t.generated_tokens - 1, 0);  // intervals after the first token
  return {{"cache_n", t.cached_tokens},
          {"prompt_n", computed},
          {"prompt_ms", prompt_ms},
          {"prompt_per_token_ms", computed > 0 ? prompt_ms / static_cast<double>(computed) : 0.0},
          {"prompt_per_second", prompt_ms > 0 ? static_cast<double>(computed) * 1e3 / prompt_ms : 0.0},
          {"predicted_n", t.generated_tokens},
          {"predicted_ms", gen_ms},
          {"predicted_per_token_ms", predicted > 0 ? gen_ms / static_cast<double>(predicted) : 0.0},
          {"predicted_per_second", gen_ms > 0 ? static_cast<double>(predicted) * 1e3 / gen_ms : 0.0}};
}

}  // namespace

HttpServer::HttpServer(ServerOptions options, const model::Model& model, const text::Tokenizer& tokenizer,
                       const text::ChatTemplate& chat_template, runtime::Scheduler& scheduler)
    : options_(std::move(options)),
      model_(model),
      tokenizer_(tokenizer),
      chat_template_(chat_template),
      scheduler_(scheduler),
      http_(std::make_unique<httplib::Server>()),
      end_ids_(text::end_of_generation_ids(tokenizer.vocab())) {
  if (!(options_.request_timeout_seconds > 0 &&
        options_.request_timeout_seconds <= kMaxRequestTimeoutSeconds)) {
    fail(ErrorKind::kInput, "serve: a request timeout of {} s is outside (0, {}]",
         options_.request_timeout_seconds, kMaxRequestTimeoutSeconds);
  }
  if (options_.host.empty()) fail(ErrorKind::kInput, "serve: no address to listen on");
  options_.limits.vocab_size = model.config().vocab_size;
  const runtime::SchedulerOptions& so = scheduler_.options();
  int threads = options_.http_threads;
  // A streaming response holds its thread, so every running and queued request needs one, plus a few
  // for health checks, metrics and refusals.
  if (threads <= 0)
    threads =
        static_cast<int>(so.parallel * static_cast<int64_t>(options_.limits.max_n) + so.max_waiting + 8);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_->set_payload_max_length(options_.max_body_bytes);
  http_->set_keep_alive_max_count(1000);
  install_routes();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
  } else if (!http_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  if (port < 0) fail(ErrorKind::kIo, "serve: cannot listen on {}:{}", options_.host, options_.port);
  return port;
}

void HttpServer::serve() {
  http_->listen_after_bind();
}

void HttpServer::shutdown(double grace_seconds) {
  draining_ = true;
  const Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(grace_seconds));
  while (Clock::now() < until) {
    const runtime::SchedulerStats stats = scheduler_.stats();
    if (stats.running == 0 && stats.waiting == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  scheduler_.shutdown(false);
  http_->stop();
}

std::string HttpServer::model_check(const std::string& requested) const {
  if (requested != options_.model_name) {
    throw ApiError(
        404, "invalid_request_error",
        fmt::format("The model '{}' does not exist; this server serves '{}'", requested, options_.model_name),
        "model", "model_not_found");
  }
  return requested;
}

void HttpServer::install_routes() {
  httplib::Server& http = *http_;
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    const bool protected_path = req.path.starts_with("/v1/") || req.path == "/tokenize" ||
                                req.path == "/detokenize" || req.path == "/apply-template";
    if (options_.api_key.empty() || !protected_path) return httplib::Server::HandlerResponse::Unhandled;
    if (req.get_header_value("Authorization") == "Bearer " + options_.api_key) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    send_error(res,
               ApiError(401, "invalid_request_error", "Incorrect API key provided", "", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  http.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      send_error(
          res, ApiError(413, "invalid_request_error", "the request body is larger than this server accepts"));
    } else if (res.status == 404) {
      send_error(res, ApiError(404, "invalid_request_error", "no such route", "", "not_found"));
    } else {
      send_error(res,
                 ApiError(res.status, "invalid_request_error", fmt::format("HTTP status {}", res.status)));
    }
  });
  http.set_exception_handler([](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
    spdlog::error("{} {}: {}", req.method, req.path, message);
    send_error(res, ApiError(500, "internal_error", message));
  });

  http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"status", "ok"}});
  });
  http.Get("/ready", [this](const httplib::Request&, httplib::Response& res) {
    if (draining_) {
      send_error(res, ApiError(503, "unavailable", "the server is shutting down"));
    } else {
      send_json(res, 200, {{"status", "ready"}});
    }
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(scheduler_.stats()), "text/plain; version=0.0.4");
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(chat_page_html()), "text/html; charset=utf-8");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    const Json model = {{"id", options_.model_name},
                        {"object", "model"},
                        {"created", 0},
                        {"owned_by", "tern"},
                        {"max_model_len", scheduler_.options().context}};
    send_json(res, 200, {{"object", "list"}, {"data", Json::array({model})}});
  });
  const auto guarded = [](auto handler) {
    return [handler](const httplib::Request& req, httplib::Response& res) {
      try {
        handler(req, res);
      } catch (const ApiError& e) {
        send_error(res, e);
      }
    };
  };
  http.Post("/v1/chat/completions", guarded([this](const auto& req, auto& res) { handle_chat(req, res); }));
  http.Post("/v1/completions", guarded([this](const auto& req, auto& res) { handle_completion(req, res); }));
  http.Delete(R"(/v1/requests/([A-Za-z0-9_-]+))",
              guarded([this](const httplib::Request& req, httplib::Response& res) {
                const std::string id = req.matches[1];
                std::vector<uint64_t> ids;
                {
                  std::lock_guard lock(calls_mutex_);
                  const auto it = calls_.find(id);
                  if (it != calls_.end()) ids = it->second;
                }
                bool cancelled = false;
                for (const uint64_t r : ids) cancelled = scheduler_.cancel(r) || cancelled;
                if (!cancelled)
                  throw ApiError(404, "invalid_request_error", fmt::format("no running request '{}'", id),
                                 "id");
                send_json(res, 200, {{"id", id}, {"object", "request.cancelled"}, {"cancelled", true}});
              }));
  http.Post("/tokenize", guarded([this](const httplib::Request& req, httplib::Response& res) {
              const Json body = parse_body(req.body);
              const Json* content = body.contains("content")  ? &body["content"]
                                    : body.contains("prompt") ? &body["prompt"]
                                                              : nullptr;
              if (!content || !content->is_string()) bad_request("content", "'content' must be a string");
              const bool special = get_bool(body, "add_special").value_or(false);
              std::vector<int32_t> ids;
              if (special && tokenizer_.add_bos())
                ids.push_back(static_cast<int32_t>(*tokenizer_.vocab().bos_id));
              try {
                const std::vector<int32_t> encoded = tokenizer_.encode(content->get<std::string>());
                ids.insert(ids.end(), encoded.begin(), encoded.end());
              } catch (const Error& e) {
                bad_request("content", e.what());
              }
              send_json(res, 200, {{"tokens", ids}, {"count", ids.size()}});
            }));
  http.Post("/detokenize", guarded([this](const httplib::Request& req, httplib::Response& res) {
              const Json body = parse_body(req.body);
              if (!body.contains("tokens") || !body["tokens"].is_array())
                bad_request("tokens", "'tokens' must be an array of ids");
              std::vector<int32_t> ids;
              for (const Json& id : body["tokens"]) {
                if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
                    id.get<int64_t>() >= static_cast<int64_t>(tokenizer_.size())) {
                  bad_request("tokens", "'tokens' must hold ids of this vocabulary");
                }
                ids.push_back(id.get<int32_t>());
              }
              send_json(res, 200, {{"content", tokenizer_.decode(ids)}});
            }));
  http.Post("/apply-template", guarded([this](const httplib::Request& req, httplib::Response& res) {
              Json body = parse_body(req.body);
              if (!body.contains("model")) body["model"] = options_.model_name;
              const ChatRequest chat = parse_chat_request(body, options_.limits);
              send_json(res, 200, {{"prompt", render_chat_prompt(chat_template_, chat)}});
            }));
}

void HttpServer::submit(Call& call, const runtime::GenerationRequest& request) {
  if (draining_) throw ApiError(503, "unavailable", "the server is shutting down");
  for (size_t i = 0; i < call.choices.size(); ++i) {
    runtime::GenerationRequest r = request;
    r.sampling.seed = request.sampling.seed + i;
    uint64_t id = 0;
    runtime::Scheduler::Admission admission{};
    try {
      admission = scheduler_.submit(std::move(r), call.events, id);
    } catch (const Error& e) {
      bad_request("prompt", e.what());
    }
    if (admission != runtime::Scheduler::Admission::kAccepted) {
      for (const uint64_t submitted : call.scheduler_ids) scheduler_.cancel(submitted);
      if (admission == runtime::Scheduler::Admission::kQueueFull) {
        throw ApiError(429, "rate_limit_error", "the request queue is full; retry later");
      }
      throw ApiError(503, "unavailable", "the server is shutting down");
    }
    call.choices[i].request = id;
    call.scheduler_ids.push_back(id);
  }
  std::lock_guard lock(calls_mutex_);
  calls_[call.id] = call.scheduler_ids;
}

void HttpServer::finish_call(Call& call) {
  {
    std::lock_guard lock(calls_mutex_);
    calls_.erase(call.id);
  }
  const Clock::time_point now = Clock::now();
  for (const Call::Choice& c : call.choices) {
    metrics_.count_request(c.finish ? finish_name(c) : "abort");
    metrics_.request_latency.observe(seconds_between(call.arrival, now));
    metrics_.queue_time.observe(c.timings.queue_seconds);
  }
  const runtime::Timings& t = call.choices.front().timings;
  spdlog::info(
      "{}: {} choice(s), prompt {} tokens ({} cached), generated {}, finish {}, ttft {:.1f} ms, {:.1f} tok/s",
      call.id, call.choices.size(), call.prompt.size(), t.cached_tokens, t.generated_tokens,
      call.choices.front().finish ? finish_name(call.choices.front()) : "abort",
      (t.queue_seconds + t.prompt_seconds) * 1e3,
      t.generation_seconds > 0 ? static_cast<double>(t.generated_tokens - 1) / t.generation_seconds : 0.0);
}

namespace {

// Applies one event to its choice; returns the SSE chunks it produces (streaming) and records metrics.
struct EventEffects {
  std::string reasoning, content;
  std::vector<text::ToolCall> tool_calls;
  Json logprobs = Json::array();
  std::vector<runtime::Logprobs> completion_logprobs;
};

}  // namespace

void HttpServer::respond(const std::shared_ptr<Call>& call, httplib::Response& res) {
  // Applies the events waiting on the call's stream; `emit` receives each choice's new output.
  const auto pump = [this, call](std::chrono::milliseconds timeout, auto&& emit) {
    std::vector<runtime::StreamEvent> events;
    if (!call->events->wait(events, timeout)) return;
    for (runtime::StreamEvent& event : events) {
      Call::Choice& c = call->choice_of(event.request);
      const size_t index = static_cast<size_t>(&c - call->choices.data());
      EventEffects fx;
      for (runtime::GeneratedToken& token : event.tokens) {
        if (token.token >= 0) {
          const Clock::time_point at = event.time;
          if (!c.started) {
            metrics_.time_to_first_token.observe(seconds_between(call->arrival, at));
            c.started = true;
          } else {
            metrics_.inter_token_latency.observe(seconds_between(c.last_token, at));
          }
          c.last_token = at;
          c.tokens.push_back(token.token);
          // An end-of-generation token is not part of the reply.
          if (token.logprobs && !std::binary_search(end_ids_.begin(), end_ids_.end(), token.token)) {
            fx.logprobs.push_back(token_entry(tokenizer_, *token.logprobs));
            fx.completion_logprobs.push_back(*token.logprobs);
          }
        }
        if (token.text.empty()) continue;
        if (c.parser) {
          text::Delta d = c.parser->push(token.text);
          fx.reasoning += d.reasoning;
          fx.content += d.content;
          for (auto& tc : d.tool_calls) fx.tool_calls.push_back(std::move(tc));
        } else {
          fx.content += token.text;
        }
      }
      for (runtime::Logprobs& lp : event.prompt_logprobs) c.prompt_logprobs.push_back(std::move(lp));
      if (event.finish) {
        if (c.parser) {
          text::Delta d = c.parser->finish();
          fx.reasoning += d.reasoning;
          fx.content += d.content;
          for (auto& tc : d.tool_calls) fx.tool_calls.push_back(std::move(tc));
        }
        c.finish = event.finish;
        c.deadline = event.deadline_exceeded;
        c.error = event.error;
        c.timings = event.timings;
      }
      c.reasoning += fx.reasoning;
      c.text += fx.content;
      for (const auto& tc : fx.tool_calls) c.tool_calls.push_back(tc);
      for (auto& e : fx.logprobs) c.logprobs.push_back(e);
      for (auto& lp : fx.completion_logprobs) c.token_logprobs.push_back(lp);
      emit(index, c, fx);
    }
  };

  if (!call->stream) {
    while (!call->finished())
      pump(std::chrono::milliseconds(1000), [](size_t, Call::Choice&, EventEffects&) {});
    finish_call(*call);
    for (const Call::Choice& c : call->choices) {
      if (!c.error.empty()) {
        send_error(res, ApiError(500, "internal_error", c.error));
        return;
      }
    }
    Json choices = Json::array();
    for (size_t i = 0; i < call->choices.size(); ++i) {
      const Call::Choice& c = call->choices[i];
      Json choice = {{"index", i}};
      if (call->chat) {
        Json message = {{"role", "assistant"},
                        {"content", c.text.empty() && !c.tool_calls.empty() ? Json(nullptr) : Json(c.text)}};
        if (!c.reasoning.empty()) message["reasoning_content"] = c.reasoning;
        if (!c.tool_calls.empty()) {
          message["tool_calls"] = Json::array();
          for (const auto& tc : c.tool_calls) {
            Json j = tool_call_json(tc);
            j.erase("index");
            message["tool_calls"].push_back(j);
          }
        }
        choice["message"] = message;
        choice["logprobs"] = call->top_logprobs >= 0 ? Json{{"content", c.logprobs}} : Json(nullptr);
      } else {
        choice["text"] = call->echo ? call->echo_text + c.text : c.text;
        if (call->top_logprobs >= 0) {
          CompletionLogprobs logprobs(tokenizer_, 0);
          if (call->echo) {
            logprobs.add(call->prompt.front(), nullptr, nullptr);
            for (size_t k = 0; k < c.prompt_logprobs.size(); ++k)
              logprobs.add(call->prompt[k + 1], c.prompt_logprobs[k]);
          }
          for (const auto& lp : c.token_logprobs) logprobs.add(lp.chosen.token, lp);
          choice["logprobs"] = logprobs.json();
        } else {
          choice["logprobs"] = nullptr;
        }
      }
      choice["finish_reason"] = finish_name(c);
      choices.push_back(choice);
    }
    Json body = {{"id", call->id},
                 {"object", call->chat ? "chat.completion" : "text_completion"},
                 {"created", call->created},
                 {"model", call->model},
                 {"choices", choices},
                 {"usage", usage_json(*call)},
                 {"timings", timings_json(call->choices.front().timings)}};
    send_json(res, 200, body);
    return;
  }

  auto provider = [this, call, pump, last_write = Clock::now(), sent_done = false](
                      size_t, httplib::DataSink& sink) mutable {
    if (sent_done) return false;
    std::string out;
    const auto chunk = [&](size_t index, Json delta_or_text, const Json& logprobs, const Json& finish) {
      Json choice = {{"index", index}};
      if (call->chat) {
        choice["delta"] = std::move(delta_or_text);
      } else {
        choice["text"] = std::move(delta_or_text);
      }
      choice["logprobs"] = logprobs;
      choice["finish_reason"] = finish;
      out += sse({{"id", call->id},
                  {"object", call->chat ? "chat.completion.chunk" : "text_completion"},
                  {"created", call->created},
                  {"model", call->model},
                  {"choices", Json::array({choice})}});
    };
    pump(std::chrono::milliseconds(100), [&](size_t index, Call::Choice& c, EventEffects& fx) {
      const Json logprobs = call->top_logprobs >= 0 && call->chat && !fx.logprobs.empty()
                                ? Json{{"content", fx.logprobs}}
                                : Json(nullptr);
      if (call->chat) {
        Json delta = Json::object();
        if (fx.content.size() + fx.reasoning.size() + fx.tool_calls.size() > 0 || !logprobs.is_null()) {
          if (!fx.reasoning.empty()) delta["reasoning_content"] = fx.reasoning;
          if (!fx.content.empty()) delta["content"] = fx.content;
          if (!fx.tool_calls.empty()) {
            delta["tool_calls"] = Json::array();
            for (const auto& tc : fx.tool_calls) delta["tool_calls"].push_back(tool_call_json(tc));
          }
          chunk(index, delta, logprobs, nullptr);
        }
      } else if (!fx.content.empty() || (call->top_logprobs >= 0 && !fx.completion_logprobs.empty())) {
        Json completion_logprobs = nullptr;
        if (call->top_logprobs >= 0) {
          CompletionLogprobs streamed(tokenizer_, c.logprob_offset);
          for (const auto& lp : fx.completion_logprobs) streamed.add(lp.chosen.token, lp);
          c.logprob_offset = streamed.offset();
          completion_logprobs = streamed.json();
        }
        chunk(index, fx.content, completion_logprobs, nullptr);
      }
      if (c.finish) {
        if (!c.error.empty()) {
          out += sse(ApiError(500, "internal_error", c.error).to_json());
        }
        chunk(index, call->chat ? Json::object() : Json(""), nullptr, finish_name(c));
      }
    });
    if (call->finished()) {
      if (call->include_usage) {
        out += sse({{"id", call->id},
                    {"object", call->chat ? "chat.completion.chunk" : "text_completion"},
                    {"created", call->created},
                    {"model", call->model},
                    {"choices", Json::array()},
                    {"usage", usage_json(*call)},
                    {"timings", timings_json(call->choices.front().timings)}});
      }
      out += "data: [DONE]\n\n";
      sent_done = true;
    } else if (out.empty() && Clock::now() - last_write > std::chrono::seconds(2)) {
      out = ": keep-alive\n\n";  // an SSE comment: lets a write find a client that has gone
    }
    if (!out.empty()) {
      if (!sink.write(out.data(), out.size())) return false;
      last_write = Clock::now();
    }
    if (sent_done) sink.done();
    return true;
  };
  const auto release = [this, call](bool) {
    if (!call->finished()) {
      for (const uint64_t id : call->scheduler_ids) scheduler_.cancel(id);
      // The engine thread ends them at its next step; wait for the final events so nothing dangles.
      while (!call->finished()) {
        std::vector<runtime::StreamEvent> events;
        if (!call->events->wait(events, std::chrono::milliseconds(1000))) continue;
        for (auto& e : events) {
          if (e.finish) {
            Call::Choice& c = call->choice_of(e.request);
            c.finish = e.finish;
            c.timings = e.timings;
          }
        }
      }
    }
    finish_call(*call);
  };
  // The first chunk of each chat choice names the role, as OpenAI's does.
  if (call->chat) {
    std::string first;
    for (size_t i = 0; i < call->choices.size(); ++i) {
      first += sse({{"id", call->id},
                    {"object", "chat.completion.chunk"},
                    {"created", call->created},
                    {"model", call->model},
                    {"choices", Json::array({{{"index", i},
                                              {"delta", {{"role", "assistant"}, {"content", ""}}},
                                              {"logprobs", nullptr},
                                              {"finish_reason", nullptr}}})}});
    }
    auto state = std::make_shared<bool>(false);
    res.set_chunked_content_provider(
        "text/event-stream",
        [provider, first, state](size_t offset, httplib::DataSink& sink) mutable {
          if (!*state) {
            *state = true;
            if (!sink.write(first.data(), first.size())) return false;
          }
          return provider(offset, sink);
        },
        release);
  } else {
    res.set_chunked_content_provider("text/event-stream", provider, release);
  }
  res.set_header("Cache-Control", "no-cache");
}

std::shared_ptr<HttpServer::Call> HttpServer::new_call(const GenerationFields& fields, bool chat) {
  auto call = std::make_shared<Call>();
  call->model = model_check(fields.model);
  call->id = fmt::format("{}-{}", chat ? "chatcmpl" : "cmpl", next_call_++);
  call->chat = chat;
  call->stream = fields.stream;
  call->include_usage = fields.include_usage;
  call->top_logprobs = fields.top_logprobs;
  return call;
}

void HttpServer::handle_chat(const httplib::Request& req, httplib::Response& res) {
  if (draining_) throw ApiError(503, "unavailable", "the server is shutting down");
  const Json body = parse_body(req.body);
  const ChatRequest chat = parse_chat_request(body, options_.limits);
  const std::shared_ptr<Call> call = new_call(chat.fields, true);

  std::string reply;
  std::string prompt = render_chat_prompt(chat_template_, chat, &reply);
  // A required or named tool choice starts the reply with the tool-call opening, so the model must
  // continue a call (the XML form of the Qwen3.5 templates, the JSON form otherwise).
  std::string forced;
  if (chat.tool_choice.mode == ToolChoice::Mode::kNamed) {
    forced = "<tool_call>\n<function=" + chat.tool_choice.name + ">\n";
  } else if (chat.tool_choice.mode == ToolChoice::Mode::kRequired) {
    forced = "<tool_call>\n<function=";
  }
  // Whether the reply starts inside a think block: judged on the prompt before any continued reply,
  // whose own text goes through the parser below.
  const std::string_view before_reply = std::string_view(prompt).substr(0, prompt.size() - reply.size());
  const auto think_open = before_reply.rfind("<think>");
  const bool thinking_open =
      think_open != std::string::npos &&
      (before_reply.rfind("</think>") == std::string::npos || before_reply.rfind("</think>") < think_open);
  if (!forced.empty()) {
    if (thinking_open) forced = "\n</think>\n\n" + forced;
    prompt += forced;
  }
  try {
    call->prompt = tokenizer_.encode(prompt);
  } catch (const Error& e) {
    bad_request("messages", e.what());
  }
  if (tokenizer_.add_bos())
    call->prompt.insert(call->prompt.begin(), static_cast<int32_t>(*tokenizer_.vocab().bos_id));

  const int64_t context = scheduler_.options().context;
  const auto length = static_cast<int64_t>(call->prompt.size());
  if (length >= context) {
    bad_request("messages",
                fmt::format("This model's maximum context length is {} tokens. However, your messages "
                            "resulted in {} tokens.",
                            context, length));
  }
  if (chat.fields.max_tokens && length + *chat.fields.max_tokens > context) {
    bad_request("max_tokens",
                fmt::format("This model's maximum context length is {} tokens. However, you requested "
                            "{} tokens ({} in the messages, {} in the completion).",
                            context, length + *chat.fields.max_tokens, length, *chat.fields.max_tokens));
  }

  runtime::GenerationRequest request;
  request.prompt = call->prompt;
  request.sampling = chat.fields.sampling;
  if (!chat.fields.seeded) request.sampling.seed = std::random_device{}();
  request.limits.max_tokens =
      chat.fields.max_tokens.value_or(std::min(options_.limits.max_tokens, context - length));
  request.limits.stop_tokens = end_ids_;
  request.limits.stop_strings = chat.fields.stop;
  request.limits.top_logprobs = chat.fields.top_logprobs;
  request.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(options_.request_timeout_seconds));
  const bool thinking_in_reply = thinking_open && forced.empty();
  if (chat.thinking_budget && thinking_in_reply && !chat.continued_reply) {
    const std::vector<int32_t> end = tokenizer_.encode("</think>");
    if (end.size() == 1) {
      request.thinking_budget = *chat.thinking_budget;
      request.thinking_open = true;
      request.think_end_token = end.front();
      request.think_close = tokenizer_.encode("\n</think>\n\n");
    }
  }

  call->choices.resize(static_cast<size_t>(chat.fields.n));
  for (Call::Choice& c : call->choices) {
    text::OutputParserConfig config;
    config.thinking_open_in_prompt = thinking_in_reply;
    config.tools = chat.tools;
    if (chat.tools.empty() || chat.tool_choice.mode == ToolChoice::Mode::kNone) {
      config.max_tool_calls = 0;
    } else if (!chat.parallel_tool_calls) {
      config.max_tool_calls = 1;
    }
    config.id_prefix = fmt::format("call_{}_", call->id.substr(9));
    c.parser = std::make_unique<text::OutputParser>(config);
    if (!forced.empty()) c.parser->push(forced.substr(forced.find("<tool_call>")));
    // A continued reply's text is not returned again, but the parser reads it: the generated text may
    // close a tag (a think block, a tool call) that it opened.
    if (!reply.empty()) c.parser->push(reply);
  }
  submit(*call, request);
  respond(call, res);
}

void HttpServer::handle_completion(const httplib::Request& req, httplib::Response& res) {
  if (draining_) throw ApiError(503, "unavailable", "the server is shutting down");
  const Json body = parse_body(req.body);
  const CompletionRequest completion = parse_completion_request(body, options_.limits);
  const std::shared_ptr<Call> call = new_call(completion.fields, false);
  call->echo = completion.echo;
  if (completion.prompt_text) {
    try {
      call->prompt = tokenizer_.encode(*completion.prompt_text);
    } catch (const Error& e) {
      bad_request("prompt", e.what());
    }
    if (tokenizer_.add_bos())
      call->prompt.insert(call->prompt.begin(), static_cast<int32_t>(*tokenizer_.vocab().bos_id));
    call->echo_text = *completion.prompt_text;
  } else {
    call->prompt = completion.prompt_ids;
    for (size_t i = 0; i < call->prompt.size(); ++i) {
      if (!model_.accepts_token(call->prompt[i])) {
        bad_request("prompt", fmt::format("prompt token {} at index {} is not a valid id for this model",
                                          call->prompt[i], i));
      }
    }
    call->echo_text = tokenizer_.decode(call->prompt, false);
  }
  const int64_t context = scheduler_.options().context;
  const auto length = static_cast<int64_t>(call->prompt.size());
  if (length >= context) {
    bad_request("prompt",
                fmt::format("This model's maximum context length is {} tokens. However, your prompt "
                            "resulted in {} tokens.",
                            context, length));
  }
  if (completion.fields.max_tokens && length + *completion.fields.max_tokens > context) {
    bad_request(
        "max_tokens",
        fmt::format("This model's maximum context length is {} tokens. However, you requested "
                    "{} tokens ({} in the prompt, {} in the completion).",
                    context, length + *completion.fields.max_tokens, length, *completion.fields.max_tokens));
  }
  if (call->echo && call->stream) bad_request("echo", "'echo' is not supported with 'stream'");
  runtime::GenerationRequest request;
  request.prompt = call->prompt;
  request.sampling = completion.fields.sampling;
  if (!completion.fields.seeded) request.sampling.seed = std::random_device{}();
  request.limits.max_tokens = completion.fields.max_tokens.value_or(std::min<int64_t>(16, context - length));
  request.limits.stop_tokens = end_ids_;
  request.limits.stop_strings = completion.fields.stop;
  request.limits.top_logprobs = completion.fields.top_logprobs;
  request.prompt_logprobs = call->echo && completion.fields.top_logprobs >= 0;
  request.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(options_.request_timeout_seconds));
  call->choices.resize(static_cast<size_t>(completion.fields.n));
  submit(*call, request);
  respond(call, res);
}

}  // namespace tern::server
