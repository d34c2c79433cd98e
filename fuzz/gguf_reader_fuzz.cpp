// libFuzzer entry for the GGUF reader: any input must either parse or throw tern::Error, never crash,
// read out of bounds or allocate without bound. A parsed file has every value and every tensor byte
// touched, so views that point outside the input are caught by ASan.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/error.h"
#include "gguf/reader.h"

namespace {

uint64_t touch(const tern::gguf::Value& value) {
  using tern::gguf::Array;
  uint64_t sum = static_cast<uint64_t>(value.type);
  if (const auto* s = std::get_if<std::string>(&value.data)) {
    for (char c : *s) sum += static_cast<unsigned char>(c);
  } else if (const auto* a = std::get_if<Array>(&value.data)) {
    for (const auto& item : a->items) sum += touch(item);
  } else if (auto u = tern::gguf::as_uint(value)) {
    sum += *u;
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto reader = tern::gguf::Reader::parse(std::span(data, size), "fuzz.gguf");
    uint64_t sum = reader.alignment() + reader.data_offset();
    for (const auto& [key, value] : reader.metadata()) sum += touch(value) + key.size();
    for (const auto& t : reader.tensors()) {
      sum += static_cast<uint64_t>(t.elements() + t.rows()) + t.nbytes;
      for (uint8_t b : t.data) sum += b;
      if (reader.find_tensor(t.name) == nullptr) __builtin_trap();
    }
    try {
      sum += reader.get_uint("general.alignment");
    } catch (const tern::Error&) {
    }
    volatile uint64_t sink = sum;
    (void)sink;
  } catch (const tern::Error&) {
  }
  return 0;
}
