#include "apps/tern/option_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <system_error>

namespace tern::app {
namespace {

bool is_decimal_whole_number(std::string_view text) {
  if (text.starts_with('+') || text.starts_with('-')) text.remove_prefix(1);
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <class Integer>
CLI::Validator decimal_in_range() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        Integer value{};
        const auto [last, error] = read_decimal(text, value);
        if (!is_decimal_whole_number(text)) return fmt::format("'{}' is not a decimal whole number", text);
        if (error != std::errc() || last != text.data() + text.size()) {  // past the type, or negative
          return fmt::format("'{}' is outside {}..{}", text, std::numeric_limits<Integer>::min(),
                             std::numeric_limits<Integer>::max());
        }
        text = std::to_string(value);
        return {};
      },
      "");  // no description: the help keeps "INT" and its range
}

CLI::Validator not_nan() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        return std::isnan(std::strtod(text.c_str(), nullptr)) ? fmt::format("'{}' is not a number", text)
                                                              : "";
      },
      "");
}

// CLI11's name for the option's type, then its validators' descriptions after a ':' ("INT:INT in [0 - 9]").
bool has_type(const CLI::Option& option, std::string_view type) {
  const std::string name = option.get_type_name();
  return name.starts_with(type) && (name.size() == type.size() || name[type.size()] == ':');
}

}  // namespace

void check_numeric_options(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (has_type(*option, "INT")) option->transform(decimal_in_range<int64_t>());
    if (has_type(*option, "UINT")) option->transform(decimal_in_range<uint64_t>());
    if (has_type(*option, "FLOAT")) option->transform(not_nan());
  }
  for (CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
    check_numeric_options(*command);
}

CLI::Validator not_empty(const std::string& why) {
  return CLI::Validator(
      [why](std::string& text) { return text.empty() ? "must not be empty: " + why : std::string(); }, "");
}

}  // namespace tern::app
