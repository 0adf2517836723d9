#pragma once
// Shared by the store tests: a private temporary directory and a builder of
// well-formed seal inputs.

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dot/base/jcs.h"
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

// A plan the plan model accepts (docs/spec/dpp-hello.md), for stores that
// `dot-core store check` inspects (it judges every stored plan with core):
// the hello names, both targets absent before, each after sealed the way
// `plan` seals it (mode 0600, our uid and gid), one root-sync effect, bound
// to `root_id`; canonical bytes from the project's JCS encoder.
inline SealInput make_hello_seal(int n, const std::string& root_id) {
  using jcs::Node;
  SealInput in;
  std::vector<std::string> afters;
  for (const char* name : {"hello.txt", "welcome.txt"}) {
    Blob a;
    a.slot = static_cast<std::uint32_t>(in.artifacts.size());
    a.bytes = fmt::format("{} of plan {}\n", name, n);
    a.sha256 = sha256_hex(a.bytes);
    in.operations.push_back({name, "", a.sha256});
    in.artifacts.push_back(a);
  }
  auto snapshot = [](const std::string& sha) {
    bool exists = !sha.empty();
    return Node::object()
        .set("exists", Node::boolean(exists))
        .set("gid", Node::integer(exists ? ::getegid() : 0))
        .set("mode", Node::integer(exists ? 0600 : 0))
        .set("sha256", Node::string(sha))
        .set("uid", Node::integer(exists ? ::geteuid() : 0));
  };
  // proposal_id hashes the plan with every after absent and proposal_id "".
  auto plan = [&](bool sealed) {
    auto ops = Node::array();
    for (const auto& op : in.operations)
      ops.push(Node::object()
                   .set("after", snapshot(sealed ? op.after_sha256 : ""))
                   .set("before", snapshot(""))
                   .set("name", Node::string(op.name)));
    auto effects = Node::array();
    effects.push(Node::object()
                     .set("failure_policy", Node::string("required"))
                     .set("kind", Node::string("sync"))
                     .set("target", Node::string("managed-root")));
    auto bytes = jcs::encode(Node::object()
                                 .set("effects", std::move(effects))
                                 .set("nonce", Node::string(sha256_hex(fmt::format("nonce {}", n))))
                                 .set("operations", std::move(ops))
                                 .set("plugin_digest", Node::string(hex64('d')))
                                 .set("proposal_id", Node::string(sealed ? in.proposal_id : ""))
                                 .set("root_id", Node::string(root_id))
                                 .set("version", Node::integer(1)),
                             jcs::Profile::Hello);
    EXPECT_TRUE(bytes.ok());
    return bytes.ok() ? *bytes : std::string();
  };
  in.proposal_id = sha256_hex(plan(false));
  in.canonical_plan = plan(true);
  in.plan_id = sha256_hex(in.canonical_plan);
  in.effect_count = 1;
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
