// The one error type of tern: a category plus a message that names what is wrong and where
// (file, key or tensor, byte offset, request id). Thrown where detected, caught at the edges.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace tern {

enum class ErrorKind {
  kIo,           // cannot open / read / write / map a file
  kFormat,       // malformed container (GGUF structure, tensor table)
  kContract,     // prism.hadamard contract violated or not honourable
  kConfig,       // model hyperparameters missing or inconsistent
  kInput,        // bad user input: option, request field, token id, text
  kUnsupported,  // well-formed but beyond what tern implements
  kCapacity,     // a limit reached: context length, queue, memory budget
  kInternal,     // a broken invariant inside tern
};

const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

template <class... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args&&... args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tern
