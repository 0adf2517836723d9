// Several plugins per root (docs/spec/dpp-general.md, "Registration and
// manifest"): `register --id --profile --input`, each plugin's pinned copy
// under its own name, `plan --plugin ID`, and `status` / `inspect` naming the
// plugin each transaction came from. Every refused registration changes
// nothing: the plugin rows, the state folder and the manifests stay as they were.
#include <sqlite3.h>
#include <sys/stat.h>

#include <map>

#include "dot/base/sha256.h"
#include "dot/core/registry.h"
#include "dot/core/root.h"
#include "engine_harness.h"
#include "raw_sql.h"

namespace dot::core::testing {
namespace {

// Every plugin row, as plain SQLite sees it.
std::string plugin_rows(const fs::path& db) {
  sqlite3* h = nullptr;
  std::string out;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h,
                           "SELECT plugin_id || ' ' || sha256 || ' ' || CAST(manifest AS TEXT) || ' ' || "
                           "registered_at_ms FROM plugin ORDER BY plugin_id",
                           -1, &st, nullptr) == SQLITE_OK)
      while (sqlite3_step(st) == SQLITE_ROW)
        out += std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) + "\n";
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return out;
}

// The state folder's entries (but the database files) with their bytes.
std::map<std::string, std::string> state_entries(const fs::path& state) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(state)) {
    std::string name = e.path().filename();
    if (name.rfind("store.db", 0) == 0) continue;
    out[name] = e.is_regular_file() ? slurp(e.path()) : "<dir>";
  }
  return out;
}

class Registry : public EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    src_ = base_ / "src";
    fs::create_directories(src_ / "nested");
    other_ = base_ / "other";
    fs::create_directories(other_);
  }
  fs::path db() const { return root_ / ".dot" / "store.db"; }
  CmdResult register_general(const std::string& id, const std::vector<std::string>& inputs,
                             std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"register",  "--plugin",       bin("dot-hello"), "--id", id,
                                     "--profile", "org.dot.dpp/v1", "--assurance",    "audit"};
    for (const auto& i : inputs) {
      args.push_back("--input");
      args.push_back(i);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return core(args);
  }
  fs::path src_, other_;
};

// An interpreted plugin's manifest carries its interpreter; an ELF
// plugin's has no such key, so the bytes earlier releases stored decode as
// before and encode to the same bytes.
TEST(Manifest, InterpreterIsPinnedAndOldManifestsAreUnchanged) {
  const std::string hello =
      R"({"assurance":"audit","id":"org.dot.hello","profile":"org.dot.hello/v1","protocol":1,"sha256":")" +
      std::string(64, 'a') + "\"}";
  auto old = decode_manifest(hello);
  ASSERT_TRUE(old.ok()) << old.error().line();
  EXPECT_FALSE(old->interpreter.has_value());
  EXPECT_EQ(encode_manifest(*old).value(), hello);

  Manifest m;
  m.assurance = "process";
  m.id = "org.example.py";
  m.profile = "org.dot.dpp/v1";
  m.sha256 = std::string(64, 'b');
  m.interpreter = ManifestInterpreter{
      "/usr/bin/python3.11", std::string(64, 'c'), {"-I"}, {"/usr/lib/python3.11", "/usr/lib/python3/dist-packages"}};
  auto bytes = encode_manifest(m);
  ASSERT_TRUE(bytes.ok()) << bytes.error().line();
  EXPECT_EQ(*bytes, R"({"assurance":"process","id":"org.example.py","inputs":[],"interpreter":{"options":["-I"],)"
                    R"("path":"/usr/bin/python3.11",)"
                    R"("runtime":["/usr/lib/python3.11","/usr/lib/python3/dist-packages"],)"
                    R"("sha256":")" +
                        std::string(64, 'c') + R"("},"profile":"org.dot.dpp/v1","protocol":1,"sha256":")" +
                        std::string(64, 'b') + "\"}");
  auto back = decode_manifest(*bytes);
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(*back, m);

  // A forged interpreter is an identity failure, never a plugin run.
  for (const std::string& forged : {std::string(R"("path":"python3")"), std::string(R"("sha256":"00")"),
                                    std::string(R"("runtime":["lib"])"), std::string(R"("extra":1)")}) {
    std::string text = *bytes;
    const std::string key = forged.substr(0, forged.find(':'));
    if (key == "\"extra\"") {
      text.insert(text.find(R"("options")"), forged + ",");
    } else {
      const std::size_t at = text.find(key + ":");
      const std::size_t end = text.find_first_of(key == "\"runtime\"" ? "]" : ",}", at + key.size() + 2);
      text.replace(at, end - at + (key == "\"runtime\"" ? 1 : 0), forged);
    }
    auto r = decode_manifest(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, Code::PluginIdentity) << text;
  }
}

TEST_F(Registry, SecondPluginHasItsOwnCopyRowAndManifest) {
  const std::string hello_copy = slurp(root_ / ".dot" / "plugin");
  const std::string hello_row = plugin_rows(db());
  // Inputs keep the order they were given in (not sorted).
  CmdResult r =
      register_general("org.example.two", {src_.string(), other_.string(), (src_ / "nested").string()}, {"--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = json::parse(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  EXPECT_EQ(json_field(r.out, "id"), "org.example.two");
  EXPECT_EQ(json_field(r.out, "profile"), "org.dot.dpp/v1");
  EXPECT_NE(r.out.find("\"inputs\":[\"" + src_.string() + "\",\"" + other_.string() + "\",\"" +
                       (src_ / "nested").string() + "\"]"),
            std::string::npos)
      << r.out;

  // Its own copy beside the hello plugin's, which is untouched.
  struct stat st {};
  ASSERT_EQ(::lstat((root_ / ".dot" / "plugin-org.example.two").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0500u);
  EXPECT_EQ(slurp(root_ / ".dot" / "plugin-org.example.two"), slurp(bin("dot-hello")));
  EXPECT_EQ(slurp(root_ / ".dot" / "plugin"), hello_copy);

  // Two rows; the hello row byte for byte as before; the new manifest is
  // {assurance, id, inputs, profile, protocol, sha256} in canonical order.
  const std::string rows = plugin_rows(db());
  EXPECT_EQ(rows.rfind(hello_row, 0), 0u) << rows;  // org.dot.hello sorts first
  EXPECT_NE(rows.find("org.example.two "), std::string::npos);
  EXPECT_NE(rows.find("{\"assurance\":\"audit\",\"id\":\"org.example.two\",\"inputs\":[\"" + src_.string() + "\",\"" +
                      other_.string() + "\",\"" + (src_ / "nested").string() +
                      "\"],\"profile\":\"org.dot.dpp/v1\",\"protocol\":1,\"sha256\":\""),
            std::string::npos)
      << rows;

  CmdResult status = core({"status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  auto s = json::parse(status.out);
  ASSERT_TRUE(s.ok()) << status.out;
  auto plugins = s->root().find("plugins");
  ASSERT_TRUE(plugins && plugins->is_array());
  std::vector<std::string> ids;
  for (json::Value p : plugins->elements()) ids.emplace_back(p.find("id")->as_string());
  EXPECT_EQ(ids, (std::vector<std::string>{"org.dot.hello", "org.example.two"}));
  EXPECT_NE(status.out.find("\"plugin\":null"), std::string::npos) << "two plugins: no single one";
  CmdResult human = core({"status"});
  ASSERT_EQ(human.code, 0) << human.err;
  EXPECT_NE(human.out.find("plugin   org.dot.hello (org.dot.hello/v1, audit assurance)"), std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("plugin   org.example.two (org.dot.dpp/v1, audit assurance)"), std::string::npos)
      << human.out;
  EXPECT_NE(human.out.find("  input  " + other_.string() + "\n"), std::string::npos) << human.out;
}

TEST_F(Registry, PlanNeedsPluginWhenSeveralAndRecordsWhichRan) {
  ASSERT_EQ(register_general("org.example.two", {src_.string()}).code, 0);
  // Without --plugin: refused before anything is recorded, naming both ids.
  CmdResult r = core({"plan", "--allow-audit-plugin"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_POLICY: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("org.dot.hello, org.example.two"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--plugin"), std::string::npos) << r.err;
  EXPECT_EQ(last_state(), "<none>");
  // An id that is not registered.
  r = core({"plan", "--allow-audit-plugin", "--plugin", "org.example.none"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_POLICY: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("org.example.none"), std::string::npos) << r.err;
  EXPECT_EQ(last_state(), "<none>");

  r = core({"plan", "--allow-audit-plugin", "--plugin", "org.dot.hello", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string plan_id = json_field(r.out, "plan_id");
  ASSERT_EQ(plan_id.size(), 64u);

  CmdResult status = core({"status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("\"sealed\":[{\"plan_id\":\"" + plan_id + "\",\"plugin_id\":\"org.dot.hello\"}]"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("\"last\":{\"plan_id\":\"" + plan_id + "\",\"plugin_id\":\"org.dot.hello\""),
            std::string::npos)
      << status.out;
  CmdResult human = core({"status"});
  EXPECT_NE(human.out.find(plan_id + "  from org.dot.hello"), std::string::npos) << human.out;

  CmdResult list = core({"inspect", "list"});
  ASSERT_EQ(list.code, 0) << list.err;
  EXPECT_NE(list.out.find("PLUGIN"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("org.dot.hello"), std::string::npos) << list.out;
  CmdResult show = core({"inspect", "show", plan_id.substr(0, 12), "--json"});
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("\"plugin_id\":\"org.dot.hello\""), std::string::npos) << show.out;
}

TEST_F(Registry, ReRegisteringAnIdNeedsReplaceAndTouchesOnlyThatId) {
  ASSERT_EQ(register_general("org.example.two", {src_.string()}).code, 0);
  const std::string rows = plugin_rows(db());
  CmdResult r = register_general("org.example.two", {other_.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("DOT_E_CONFLICT: ", 0), 0u) << r.err;
  EXPECT_EQ(plugin_rows(db()), rows);
  r = register_general("org.example.two", {other_.string()}, {"--replace", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"replaced\":true"), std::string::npos) << r.out;
  const std::string after = plugin_rows(db());
  EXPECT_NE(after.find("\"inputs\":[\"" + other_.string() + "\"]"), std::string::npos) << after;
  // The hello row is the same line in both.
  EXPECT_EQ(after.substr(0, after.find('\n')), rows.substr(0, rows.find('\n')));
}

struct BadRegistration {
  std::string name;
  std::string code;    // "DOT_E_..." or "" for a usage error (exit 2)
  std::string detail;  // a substring of the refusal
};
void PrintTo(const BadRegistration& b, std::ostream* os) { *os << b.name; }

class BadRegister : public Registry, public ::testing::WithParamInterface<BadRegistration> {
 protected:
  // The arguments of each case, built from this test's paths.
  std::vector<std::string> args_for(const std::string& name) {
    const std::string plugin = bin("dot-hello");
    auto general = [&](const std::string& id, std::vector<std::string> inputs) {
      std::vector<std::string> a = {"register",  "--plugin",       plugin,        "--id", id,
                                    "--profile", "org.dot.dpp/v1", "--assurance", "audit"};
      for (auto& i : inputs) {
        a.push_back("--input");
        a.push_back(i);
      }
      return a;
    };
    if (name == "uppercase_id") return general("org.Example.two", {});
    if (name == "no_dot_id") return general("example", {});
    if (name == "empty_label_id") return general("org..two", {});
    if (name == "digit_first_id") return general("1org.two", {});
    if (name == "long_id") return general("o." + std::string(127, 'a'), {});
    if (name == "hello_profile_other_id")
      return {"register",  "--plugin",         plugin,        "--id", "org.example.two",
              "--profile", "org.dot.hello/v1", "--assurance", "audit"};
    if (name == "other_id_without_profile")
      return {"register", "--plugin", plugin, "--id", "org.example.two", "--assurance", "audit"};
    if (name == "input_with_hello_profile")
      return {"register", "--plugin", plugin, "--assurance", "audit", "--replace", "--input", src_.string()};
    if (name == "unknown_profile")
      return {"register",  "--plugin",       plugin,        "--id", "org.example.two",
              "--profile", "org.dot.dpp/v2", "--assurance", "audit"};
    if (name == "relative_input") return general("org.example.two", {"src"});
    if (name == "missing_input") return general("org.example.two", {(base_ / "absent").string()});
    if (name == "file_input") return general("org.example.two", {(base_ / "file").string()});
    if (name == "symlinked_input") return general("org.example.two", {(base_ / "link" / "nested").string()});
    if (name == "symlink_input") return general("org.example.two", {(base_ / "link").string()});
    if (name == "dot_dot_input") return general("org.example.two", {(src_ / ".." / "other").string()});
    if (name == "trailing_slash_input") return general("org.example.two", {src_.string() + "/"});
    if (name == "double_slash_input") return general("org.example.two", {base_.string() + "//src"});
    if (name == "root_input") return general("org.example.two", {root_.string()});
    if (name == "state_folder_input") return general("org.example.two", {(root_ / ".dot").string()});
    if (name == "inside_state_folder_input") return general("org.example.two", {(root_ / ".dot" / "x").string()});
    if (name == "above_root_input") return general("org.example.two", {base_.string()});
    if (name == "slash_input") return general("org.example.two", {"/"});
    if (name == "repeated_input") return general("org.example.two", {src_.string(), other_.string(), src_.string()});
    if (name == "too_many_inputs") {
      std::vector<std::string> many;
      for (int i = 0; i < 17; ++i) {
        fs::create_directories(base_ / ("in" + std::to_string(i)));
        many.push_back((base_ / ("in" + std::to_string(i))).string());
      }
      return general("org.example.two", many);
    }
    ADD_FAILURE() << "no arguments for " << name;
    return {};
  }
};

TEST_P(BadRegister, IsRefusedAndChangesNothing) {
  spit(base_ / "file", "not a folder\n");
  fs::create_symlink(src_, base_ / "link");
  const std::string rows = plugin_rows(db());
  const auto entries = state_entries(root_ / ".dot");
  CmdResult r = core(args_for(GetParam().name));
  if (GetParam().code.empty()) {
    EXPECT_EQ(r.code, 2) << r.err;
  } else {
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_EQ(r.err.rfind(GetParam().code + ": ", 0), 0u) << r.err;
  }
  EXPECT_NE(r.err.find(GetParam().detail), std::string::npos) << r.err;
  EXPECT_EQ(plugin_rows(db()), rows);
  EXPECT_EQ(state_entries(root_ / ".dot"), entries);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadRegister,
    ::testing::Values(
        BadRegistration{"uppercase_id", "DOT_E_POLICY", "org.Example.two"},
        BadRegistration{"no_dot_id", "DOT_E_POLICY", "has no '.'"},
        BadRegistration{"empty_label_id", "DOT_E_POLICY", "empty label"},
        BadRegistration{"digit_first_id", "DOT_E_POLICY", "does not start with a lowercase letter"},
        BadRegistration{"long_id", "DOT_E_POLICY", "129 bytes"},
        BadRegistration{"hello_profile_other_id", "DOT_E_POLICY", "only for plugin id org.dot.hello"},
        BadRegistration{"other_id_without_profile", "DOT_E_POLICY", "needs --profile org.dot.dpp/v1"},
        BadRegistration{"input_with_hello_profile", "DOT_E_POLICY", "has no inputs"},
        BadRegistration{"unknown_profile", "", "--profile"},
        BadRegistration{"relative_input", "DOT_E_POLICY", "--input src: not an absolute path"},
        BadRegistration{"missing_input", "DOT_E_IO", "absent"},
        BadRegistration{"file_input", "DOT_E_POLICY", "is not a directory"},
        BadRegistration{"symlinked_input", "DOT_E_PATH_ESCAPE", "link is a symlink"},
        BadRegistration{"symlink_input", "DOT_E_PATH_ESCAPE", "link is a symlink"},
        BadRegistration{"dot_dot_input", "DOT_E_POLICY", "not a plain absolute path"},
        BadRegistration{"trailing_slash_input", "DOT_E_POLICY", "trailing '/'"},
        BadRegistration{"double_slash_input", "DOT_E_POLICY", "not a plain absolute path"},
        BadRegistration{"root_input", "DOT_E_POLICY", "the managed root, its state folder or above"},
        BadRegistration{"state_folder_input", "DOT_E_POLICY", "the managed root, its state folder or above"},
        BadRegistration{"inside_state_folder_input", "DOT_E_POLICY", "the managed root, its state folder or above"},
        BadRegistration{"above_root_input", "DOT_E_POLICY", "the managed root, its state folder or above"},
        BadRegistration{"slash_input", "DOT_E_POLICY", "the managed root, its state folder or above"},
        BadRegistration{"repeated_input", "DOT_E_POLICY", "is given twice"},
        BadRegistration{"too_many_inputs", "DOT_E_POLICY", "17 --input directories (at most 16)"}),
    [](const ::testing::TestParamInfo<BadRegistration>& i) { return i.param.name; });

TEST_F(Registry, VersionThreeRootPlansWithoutAFlag) {
  // The root as a version-3 dot-core left it: the one-row plugin table
  // (id = 1) holding the hello plugin, user_version 3, the copy at
  // .dot/plugin. Opening migrates it; plan, status and register work as
  // before, without --plugin.
  const std::string row = plugin_rows(db());
  sql(db(),
      "BEGIN;"
      "CREATE TABLE plugin_v3 (id INTEGER PRIMARY KEY CHECK (id = 1), plugin_id TEXT NOT NULL,"
      "  sha256 TEXT NOT NULL CHECK (length(sha256) = 64), manifest BLOB NOT NULL, registered_at_ms INTEGER NOT NULL);"
      "INSERT INTO plugin_v3 SELECT 1, plugin_id, sha256, manifest, registered_at_ms FROM plugin;"
      "DROP TABLE plugin; ALTER TABLE plugin_v3 RENAME TO plugin;"
      "DROP VIEW derived_owner; DROP TABLE path_owner; DROP INDEX operation_by_name;"
      // and without version 6's general-profile tables.
      "DROP TABLE file_artifact; DROP TABLE file_backup; DROP TABLE proposal_log;"
      "ALTER TABLE plan DROP COLUMN streamed;"
      // and without version 8's stat cache.
      "DROP TABLE stat_cache;"
      // and without version 9's released paths.
      "DROP TABLE path_release;"
      "PRAGMA user_version = 3; COMMIT;");
  ASSERT_EQ(plugin_rows(db()), row);
  const std::string plan_id = plan_ok();
  ASSERT_EQ(plan_id.size(), 64u);
  EXPECT_EQ(plugin_rows(db()), row);
  CmdResult status = core({"status", "--json"});
  ASSERT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("\"plugin\":{\"assurance\":\"audit\",\"id\":\"org.dot.hello\",\"inputs\":[],"
                            "\"profile\":\"org.dot.hello/v1\""),
            std::string::npos)
      << status.out;
  CmdResult applied = core({"apply", plan_id.substr(0, 12)});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(state_of(plan_id), "DONE");
  // And it takes a second plugin now.
  ASSERT_EQ(register_general("org.example.two", {src_.string()}).code, 0);
  EXPECT_EQ(plugin_rows(db()).substr(0, row.size()), row);
}

TEST_F(Registry, OwnedPathsAreManagedAndAnotherPluginsPathIsRefusedNamingItsOwner) {
  // A committed plan of org.example.two, through the store as the
  // version-2 applier commits one; then the calls the planner makes.
  auto root = Root::open(root_.string(), Access::Mutating);
  ASSERT_TRUE(root.ok()) << root.error().line();
  store::Store& st = root->store();
  const store::TxnId id = seed_committed_plan(st, "org.example.two", {"b/x.conf", "a.conf"});
  auto before = owned_paths(*root, "org.example.two");
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(before->empty()) << "COMMITTING owns nothing yet";
  ASSERT_TRUE(st.transition(id, store::State::Committed).ok());

  auto managed = owned_paths(*root, "org.example.two");
  ASSERT_TRUE(managed.ok()) << managed.error().line();
  EXPECT_EQ(*managed, (std::vector<std::string>{"a.conf", "b/x.conf"}));
  auto none = owned_paths(*root, "org.dot.hello");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(
      check_ownership(*root, "org.example.two", std::vector<std::string_view>{"a.conf", "b/x.conf", "new.conf"}).ok());
  auto refused = check_ownership(*root, "org.dot.hello", std::vector<std::string_view>{"new.conf", "b/x.conf"});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::Policy);
  EXPECT_EQ(refused.error().kind, "owned_by_other");
  EXPECT_NE(refused.error().detail.find("\"b/x.conf\" is owned by plugin org.example.two"), std::string::npos)
      << refused.error().detail;
}

}  // namespace
}  // namespace dot::core::testing
