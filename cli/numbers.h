#pragma once
// Every numeric option of every command is declared through these two
// functions, so one rule decides what a number on the command line is: plain
// decimal digits (seconds may add a fraction: "0.5"), inside the option's
// range. A sign, an exponent ("1e3"), a radix prefix ("0x10", and "010" is
// ten, never octal), an empty value or a value past the range is a usage
// error (exit 2) raised while the command line is parsed, so the command
// never starts and nothing is opened. CLI11's own conversion is not used: it
// reads "-1" into an unsigned option as 2^64-1 and "0x10" as 16.

#include <cstddef>
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace dot::cli {

// The largest count any option takes: the store hands counts to SQLite as
// signed 64-bit integers, where 2^63 would wrap to a negative LIMIT/OFFSET.
inline constexpr std::uint64_t kMaxCount = INT64_MAX;

// A count or size in [0, max] stored in `target` (left as it is when the
// option is absent: its default).
CLI::Option* add_count_option(CLI::App* cmd, const std::string& name, std::size_t& target,
                              const std::string& description, std::uint64_t max = kMaxCount);

// A duration in seconds in [min, max].
CLI::Option* add_seconds_option(CLI::App* cmd, const std::string& name, double& target, const std::string& description,
                                double min, double max);

}  // namespace dot::cli
