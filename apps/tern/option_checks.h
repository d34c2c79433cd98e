// Checks on what options are given, refused in one line naming the option. Numbers mean what they say:
// CLI11 2.1 reads whole numbers with strtoll/strtoull in base 0, so without a word "010" was 8 (octal),
// "0x10" 16, "-1" for an unsigned option 2^64 − 1 and a number past 64 bits the largest one; and it takes
// "nan" for a real number, which every range check (a comparison) then lets through. Some strings must
// not be empty: an empty API key or stop string would quietly mean something else.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>
#include <string_view>

namespace tern::app {

// std::from_chars in decimal, with one leading '+' allowed as strtoll allows it (never "+-5").
template <class Integer>
std::from_chars_result read_decimal(std::string_view text, Integer& value) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (text.size() > 1 && text[0] == '+' && text[1] >= '0' && text[1] <= '9') ++begin;
  return std::from_chars(begin, end, value);
}

// Gives every option of `app` and of its subcommands that CLI11 reads as a number a transform: a whole
// number is read as above and handed on as its canonical decimal; a real number must not be NaN. Call it
// once every option exists.
void check_numeric_options(CLI::App& app);

// A check for a string option that must not be empty; `why` says what an empty one would do.
CLI::Validator not_empty(const std::string& why);

}  // namespace tern::app
