// The one rule for numeric options (numbers.h).
#include "numbers.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "dot/base/utf8.h"

namespace dot::cli {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The one value CLI11 hands an option callback (repeating an option is a
// usage error of its own, caught by CLI11 before the callback runs).
std::string_view single(const CLI::results_t& results) {
  return results.size() == 1 ? std::string_view(results.front()) : std::string_view();
}

[[noreturn]] void refuse(const std::string& name, std::string_view text, std::string_view expected) {
  throw CLI::ValidationError(name, fmt::format("\"{}\" is not {}", shown(text), expected));
}

}  // namespace

CLI::Option* add_count_option(CLI::App* cmd, const std::string& name, std::size_t& target,
                              const std::string& description, std::uint64_t max) {
  max = std::min<std::uint64_t>(max, std::numeric_limits<std::size_t>::max());
  std::string expected = fmt::format("a whole number from 0 to {} in decimal digits", max);
  auto* opt = cmd->add_option(
      name,
      [&target, name, max, expected](const CLI::results_t& results) {
        std::string_view text = single(results);
        std::uint64_t value = 0;
        // from_chars takes no sign, prefix or exponent once the text is all
        // digits, and reports values past 2^64-1 as out of range.
        if (!all_digits(text) || std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc() ||
            value > max)
          refuse(name, text, expected);
        target = static_cast<std::size_t>(value);
        return true;
      },
      description);
  opt->type_name("N");
  return opt;
}

CLI::Option* add_seconds_option(CLI::App* cmd, const std::string& name, double& target, const std::string& description,
                                double min, double max) {
  std::string expected = fmt::format("a number of seconds from {} to {} in decimal digits", min, max);
  auto* opt = cmd->add_option(
      name,
      [&target, name, min, max, expected](const CLI::results_t& results) {
        std::string_view text = single(results);
        auto dot = text.find('.');
        bool shape =
            all_digits(text.substr(0, dot)) && (dot == std::string_view::npos || all_digits(text.substr(dot + 1)));
        double value = 0;
        if (!shape || std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc() ||
            !(value >= min && value <= max))
          refuse(name, text, expected);
        target = value;
        return true;
      },
      description);
  opt->type_name("SECONDS");
  return opt;
}

}  // namespace dot::cli
