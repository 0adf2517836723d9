#include <gtest/gtest.h>

#include "dot/dpp/hello.h"

namespace dot::dpp::hello {
namespace {

InitializeResult echo_of(const InitializeParams& p) {
  return InitializeResult{p.protocol, p.profile, p.required_assurance, p.capabilities, p.nonce, std::string(kPluginId)};
}

TEST(Identity, AnExactEchoPasses) {
  auto sent = initialize_params("process", std::string(64, '1'));
  EXPECT_TRUE(check_identity(sent, echo_of(sent), kPluginId).ok());
}

TEST(Identity, EveryDimensionFailsOnItsOwn) {
  auto sent = initialize_params("audit", std::string(64, '1'));
  struct Tamper {
    const char* kind;
    void (*apply)(InitializeResult&);
  };
  const Tamper tampers[] = {
      {"id", [](InitializeResult& e) { e.id = "org.dot.hellp"; }},
      {"protocol", [](InitializeResult& e) { e.protocol = 2; }},
      {"profile", [](InitializeResult& e) { e.profile = "org.dot.hello/v0"; }},
      {"assurance", [](InitializeResult& e) { e.assurance = "process"; }},  // no upgrade by claim
      {"nonce", [](InitializeResult& e) { e.nonce[63] = '2'; }},
      {"capabilities", [](InitializeResult& e) { std::swap(e.capabilities[0], e.capabilities[1]); }},
      {"capabilities", [](InitializeResult& e) { e.capabilities.pop_back(); }},
      {"capabilities", [](InitializeResult& e) { e.capabilities.push_back("exec"); }},
      {"capabilities", [](InitializeResult& e) { e.capabilities.clear(); }},
      {"capabilities", [](InitializeResult& e) { e.capabilities[2] = "post-commit-effect"; }},
  };
  for (const auto& t : tampers) {
    auto e = echo_of(sent);
    t.apply(e);
    auto st = check_identity(sent, e, kPluginId);
    ASSERT_FALSE(st.ok()) << t.kind;
    EXPECT_EQ(st.error().code, Code::PluginIdentity);
    EXPECT_EQ(st.error().kind, t.kind) << st.error().line();
  }
  // A process requirement is not satisfied by an audit echo either.
  auto strict = initialize_params("process", std::string(64, '1'));
  auto e = echo_of(strict);
  e.assurance = "audit";
  EXPECT_EQ(check_identity(strict, e, kPluginId).error().kind, "assurance");
}

TEST(SlotNames, Pattern) {
  for (const char* ok : {"a.txt", "hello.txt", "a-1.txt", "abcdefghijklmnopqrstuvwxyzabcde.txt"})
    EXPECT_TRUE(is_slot_name(ok)) << ok;
  for (const char* bad : {"", ".txt", "A.txt", "1a.txt", "-a.txt", "a.TXT", "a.txt/", "../a.txt", "a/b.txt", "a..txt",
                          "a b.txt", "abcdefghijklmnopqrstuvwxyzabcdef.txt", "hello.txt\n", "a_b.txt"})
    EXPECT_FALSE(is_slot_name(bad)) << bad;
}

TEST(Allowlists, ExactHelloPlanPasses) {
  EXPECT_TRUE(check_hello_allowlists(PlanResult{allowed_names(), {root_sync_effect()}}).ok());
}

TEST(Allowlists, EachRejectionHasItsCode) {
  struct C {
    PlanResult plan;
    Code code;
    const char* kind;
  };
  auto eff = root_sync_effect();
  const C cases[] = {
      {{{"hello.txt", "../etc.txt"}, {eff}}, Code::PathEscape, "slot_name"},
      {{{"/abs.txt"}, {eff}}, Code::PathEscape, "slot_name"},
      {{{}, {eff}}, Code::Policy, "names"},
      {{{"hello.txt", "hello.txt"}, {eff}}, Code::Policy, "duplicate_name"},
      {{{"welcome.txt", "hello.txt"}, {eff}}, Code::Policy, "names"},
      {{{"hello.txt"}, {eff}}, Code::Policy, "names"},
      {{{"hello.txt", "welcome.txt", "extra.txt"}, {eff}}, Code::Policy, "names"},
      {{allowed_names(), {}}, Code::Policy, "effects"},
      {{allowed_names(), {eff, eff}}, Code::Policy, "effects"},
      {{allowed_names(), {eff, eff, eff, eff, eff}}, Code::Policy, "effects"},
      {{allowed_names(), {{"sync", "managed-root", "best-effort"}}}, Code::Policy, "effects"},
      {{allowed_names(), {{"exec", "managed-root", "required"}}}, Code::Policy, "effects"},
      {{allowed_names(), {{"sync", "/", "required"}}}, Code::Policy, "effects"},
  };
  for (const auto& c : cases) {
    auto st = check_hello_allowlists(c.plan);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, c.code) << st.error().line();
    EXPECT_EQ(st.error().kind, c.kind) << st.error().line();
  }
  std::vector<std::string> seventeen;
  for (int i = 0; i < 17; ++i) seventeen.push_back("f" + std::to_string(i) + ".txt");
  EXPECT_EQ(check_plan_names(seventeen).error().kind, "names");
}

TEST(Artifacts, ClaimsMustMatchTheSlots) {
  auto names = allowed_names();
  MaterializeResult ok{{{"hello.txt", std::string(64, 'a'), 1}, {"welcome.txt", std::string(64, 'b'), 65536}}};
  EXPECT_TRUE(check_artifacts(names, ok).ok());
  auto r = ok;
  r.artifacts.pop_back();
  EXPECT_EQ(check_artifacts(names, r).error().kind, "count");
  r = ok;
  std::swap(r.artifacts[0], r.artifacts[1]);
  EXPECT_EQ(check_artifacts(names, r).error().kind, "name");
  r = ok;
  r.artifacts[0].sha256 = std::string(64, 'A');
  EXPECT_EQ(check_artifacts(names, r).error().kind, "sha256");
  r = ok;
  r.artifacts[1].size = 65537;
  EXPECT_EQ(check_artifacts(names, r).error().code, Code::ArtifactMismatch);
  r.artifacts[1].size = 0;
  EXPECT_EQ(check_artifacts(names, r).error().kind, "size");
}

}  // namespace
}  // namespace dot::dpp::hello
