#include "text/utf8.h"

#include <utf8proc.h>

#include <cstdint>
#include <cstdlib>
#include <memory>

#include "core/error.h"

namespace tern::text {

namespace {

// Length of the sequence that starts with `lead`, or 0 if `lead` cannot start one.
size_t sequence_length(uint8_t lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether `byte` may follow at position `k` (1-based) of the sequence led by `lead` (RFC 3629 table:
// no overlongs, no surrogates, nothing above U+10FFFF).
bool valid_continuation(uint8_t lead, size_t k, uint8_t byte) {
  if (k == 1) {
    if (lead == 0xE0) return byte >= 0xA0 && byte <= 0xBF;
    if (lead == 0xED) return byte >= 0x80 && byte <= 0x9F;
    if (lead == 0xF0) return byte >= 0x90 && byte <= 0xBF;
    if (lead == 0xF4) return byte >= 0x80 && byte <= 0x8F;
  }
  return byte >= 0x80 && byte <= 0xBF;
}

}  // namespace

size_t valid_utf8_prefix(std::string_view bytes, bool& incomplete_tail) {
  incomplete_tail = false;
  size_t i = 0;
  while (i < bytes.size()) {
    const auto lead = static_cast<uint8_t>(bytes[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    const size_t len = sequence_length(lead);
    if (len == 0) return i;
    size_t k = 1;
    while (k < len && i + k < bytes.size() &&
           valid_continuation(lead, k, static_cast<uint8_t>(bytes[i + k]))) {
      ++k;
    }
    if (k < len) {
      incomplete_tail = i + k == bytes.size();
      return i;
    }
    i += len;
  }
  return i;
}

void check_utf8(std::string_view text, const char* what) {
  bool incomplete = false;
  const size_t valid = valid_utf8_prefix(text, incomplete);
  if (valid != text.size()) fail(ErrorKind::kInput, "{}: invalid UTF-8 at byte {}", what, valid);
}

void append_nfc(std::string_view text, std::string& out) {
  bool ascii = true;
  for (char c : text) ascii &= static_cast<uint8_t>(c) < 0x80;
  if (ascii) {
    out.append(text);
    return;
  }
  utf8proc_uint8_t* composed = nullptr;
  const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                          static_cast<utf8proc_ssize_t>(text.size()), &composed,
                                          static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(composed, &std::free);
  if (n < 0) fail(ErrorKind::kInput, "NFC normalisation failed: {}", utf8proc_errmsg(n));
  out.append(reinterpret_cast<const char*>(composed), static_cast<size_t>(n));
}

}  // namespace tern::text
