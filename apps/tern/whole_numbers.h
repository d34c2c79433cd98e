// Whole numbers on the command line are read in decimal and within their type, or refused in one line.
// CLI11 2.1 reads them with strtoll/strtoull in base 0, so without a word "010" was 8 (octal), "0x10" 16,
// "-1" for an unsigned option 2^64 − 1, and a number past 64 bits the largest one.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
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

// Gives every integer option of `app` and of its subcommands a transform that reads its text as above
// and hands CLI11 the canonical decimal. Call it once every option exists.
void read_integers_in_decimal(CLI::App& app);

}  // namespace tern::app
