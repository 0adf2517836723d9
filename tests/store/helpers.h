#pragma once
// Shared by the store tests: a private temporary directory and a builder of
// well-formed seal inputs.

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dot/base/sha256.h"
#include "dot/store/store.h"

namespace dot::store::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dot-store-test-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string hex64(char c) { return std::string(64, c); }

// A plan-like document; the store never parses it, only hashes it.
inline SealInput make_seal(int n, bool with_effects = true, std::size_t slots = 2) {
  SealInput in;
  in.proposal_id = sha256_hex(fmt::format("proposal {}", n));
  std::string ops;
  for (std::size_t i = 0; i < slots; ++i) {
    Blob a;
    a.slot = static_cast<std::uint32_t>(i);
    a.bytes = fmt::format("content {} of plan {}\n", i, n);
    a.sha256 = sha256_hex(a.bytes);
    in.operations.push_back({fmt::format("slot{}.txt", i), "", a.sha256});
    in.artifacts.push_back(a);
    ops += fmt::format("{}{{\"name\":\"slot{}.txt\",\"sha\":\"{}\"}}", i ? "," : "", i, a.sha256);
  }
  in.canonical_plan = with_effects
      ? fmt::format("{{\"effects\":[{{\"kind\":\"sync\"}}],\"n\":{},\"operations\":[{}],\"version\":1}}", n, ops)
      : fmt::format("{{\"n\":{},\"operations\":[{}],\"version\":1}}", n, ops);
  in.plan_id = sha256_hex(in.canonical_plan);
  if (with_effects) in.effect_count = 1;
  return in;
}

inline std::vector<Blob> make_backups(std::size_t slots) {
  std::vector<Blob> out;
  for (std::size_t i = 0; i < slots; ++i) {
    Blob b;
    b.slot = static_cast<std::uint32_t>(i);
    if (i % 2 == 0) {
      b.exists = false;
    } else {
      b.bytes = fmt::format("old {}\n", i);
      b.sha256 = sha256_hex(b.bytes);
    }
    out.push_back(b);
  }
  return out;
}

#define ASSERT_OK(expr)                                              \
  do {                                                               \
    auto&& assert_ok_r_ = (expr);                                    \
    ASSERT_TRUE(assert_ok_r_.ok()) << assert_ok_r_.error().line();   \
  } while (0)

#define ASSERT_ERR(expr, code_)                                                        \
  do {                                                                                 \
    auto&& assert_err_r_ = (expr);                                                     \
    ASSERT_FALSE(assert_err_r_.ok());                                                  \
    EXPECT_EQ(::dot::code_name(assert_err_r_.error().code), ::dot::code_name(code_))   \
        << assert_err_r_.error().line();                                               \
  } while (0)

}  // namespace dot::store::testing
