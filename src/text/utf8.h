// UTF-8 helpers shared by the tokenizer and the streaming detokenizer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tern::text {

// Length of the longest prefix of `bytes` that is valid UTF-8 and ends on a code point boundary, where
// `bytes` starts at a sequence boundary. Sets `incomplete_tail` when what follows is the start of a valid
// sequence cut off by the end of `bytes` (more bytes may complete it).
size_t valid_utf8_prefix(std::string_view bytes, bool& incomplete_tail);

// Throws Error(kInput) naming `what` and the byte offset of the first invalid sequence, if any.
void check_utf8(std::string_view text, const char* what);

// Canonical composition (NFC, model-spec §7.1) of valid UTF-8, appended to `out`.
void append_nfc(std::string_view text, std::string& out);

}  // namespace tern::text
