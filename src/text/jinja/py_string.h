// Python str semantics over UTF-8 bytes: strings are sequences of code points (len, index, slice,
// strip, split count code points, not bytes), and "whitespace" is Python's str.isspace().
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tern::text::jinja {

// Throws Error(kInput) naming `what` on malformed UTF-8.
std::u32string utf8_decode(std::string_view text, std::string_view what);
std::string utf8_encode(std::u32string_view code_points);

bool python_isspace(char32_t c);

// str.strip / lstrip / rstrip: `chars` null strips whitespace, otherwise any code point in *chars.
std::string python_strip(std::string_view text, const std::string* chars, bool left, bool right);
// str.split(sep, maxsplit) / rsplit: sep null splits on whitespace runs; maxsplit < 0 is unlimited.
std::vector<std::string> python_split(std::string_view text, const std::string* sep, int64_t maxsplit,
                                      bool from_right);
std::string python_replace(std::string_view text, std::string_view old_text, std::string_view new_text,
                           int64_t count);
std::string python_upper(std::string_view text);
std::string python_lower(std::string_view text);
std::string python_title(std::string_view text);
std::string python_capitalize(std::string_view text);
// markupsafe.escape: & < > ' " become entities.
std::string html_escape(std::string_view text);

}  // namespace tern::text::jinja
