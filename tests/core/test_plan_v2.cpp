// The version-2 plan model (core/plan_v2.h, docs/spec/dpp-general.md "Plan model
// and ids"): canonical bytes and ids against vectors/plan/v2.json (whose
// outputs an independent RFC 8785 implementation wrote and checks:
// tools/jcs-crosscheck/plan-vectors.mjs), strict decoding with the exact code
// of each refusal, the no-op rule and the derivation of created folders.
#include <gtest/gtest.h>

#include <unistd.h>

#include <fmt/format.h>

#include <fstream>
#include <functional>
#include <optional>
#include <sstream>

#include "dot/base/json.h"
#include "dot/base/sha256.h"
#include "dot/core/plan_document.h"
#include "dot/core/plan_v2.h"
#include "plan_v2_reader.h"

namespace dot::core {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Vector {
  std::string name, input, canonical, plan_id, proposal_document, proposal_id;
};

std::vector<Vector> vectors() {
  const std::string text = read_file(DOT_SOURCE_DIR "/vectors/plan/v2.json");
  auto doc = json::parse(text);
  EXPECT_TRUE(doc.ok()) << "vectors/plan/v2.json";
  std::vector<Vector> out;
  if (!doc.ok()) return out;
  for (json::Value v : doc->root().find("plans")->elements()) {
    auto s = [&](const char* key) { return std::string(v.find(key)->as_string()); };
    out.push_back({s("name"), s("input"), s("canonical"), s("plan_id"), s("proposal_document"), s("proposal_id")});
  }
  return out;
}

PlanV2 links_plan();  // a plan of links and files (below)

// A canonical plan given to PlanV2Reader `piece` bytes at a time, its
// operations gathered as they come.
Result<PlanV2> read_in_pieces(std::string_view bytes, std::size_t piece) {
  std::vector<PathOperation> operations;
  PlanV2Reader reader([&operations](PathOperation&& op) {
    operations.push_back(std::move(op));
    return Status{};
  });
  for (std::size_t at = 0; at < bytes.size(); at += piece) DOT_TRY(reader.write(bytes.substr(at, piece)));
  DOT_ASSIGN_OR_RETURN(PlanV2 plan, reader.finish());
  plan.operations = std::move(operations);
  return plan;
}

Result<PlanV2> decode_text(std::string_view text) {
  DOT_ASSIGN_OR_RETURN(json::Document doc, json::parse(text));
  return decode_plan_v2(doc.root());
}

TEST(PlanV2, VectorsCanonicalBytesAndIds) {
  const auto all = vectors();
  ASSERT_GE(all.size(), 4u);
  bool astral = false, bmp = false;
  for (const auto& v : all) {
    SCOPED_TRACE(v.name);
    auto plan = decode_text(v.input);
    ASSERT_TRUE(plan.ok()) << plan.error().line();
    EXPECT_EQ(*canonical_bytes(*plan), v.canonical);
    EXPECT_EQ(*compute_plan_id(*plan), v.plan_id);
    EXPECT_EQ(sha256_hex(v.canonical), v.plan_id);
    EXPECT_EQ(*proposal_document(*plan), v.proposal_document);
    EXPECT_EQ(*compute_proposal_id(*plan), v.proposal_id);
    if (!plan->proposal_id.empty()) {
      EXPECT_EQ(plan->proposal_id, v.proposal_id);
    }
    // Stored bytes decode to the same plan and must be canonical.
    auto stored = decode_canonical_plan_v2(v.canonical);
    ASSERT_TRUE(stored.ok()) << stored.error().line();
    EXPECT_EQ(*stored, *plan);
    auto spaced = decode_canonical_plan_v2(v.canonical + " ");
    ASSERT_FALSE(spaced.ok());
    EXPECT_EQ(spaced.error().kind, "not_canonical");
    for (const auto& op : plan->operations) {
      astral = astral || op.path.find("\xf0\x9f\x98\x80") != std::string::npos;
      bmp = bmp || op.path.find("\xe4\xb8\xad") != std::string::npos;
    }
  }
  EXPECT_TRUE(astral && bmp) << "the vectors must hold astral and BMP path names";
}

struct SealVector {
  std::string name, input, proposal_document, proposal_id;
  std::optional<std::string> sealed, plan_id;  // nullopt: NO_CHANGES
};

std::vector<SealVector> seal_vectors() {
  const std::string text = read_file(DOT_SOURCE_DIR "/vectors/plan/v2.json");
  auto doc = json::parse(text);
  EXPECT_TRUE(doc.ok()) << "vectors/plan/v2.json";
  std::vector<SealVector> out;
  if (!doc.ok()) return out;
  for (json::Value v : doc->root().find("seals")->elements()) {
    auto s = [&](const char* key) { return std::string(v.find(key)->as_string()); };
    auto opt = [&](const char* key) -> std::optional<std::string> {
      if (v.find(key)->is_null()) return std::nullopt;
      return s(key);
    };
    out.push_back({s("name"), s("input"), s("proposal_document"), s("proposal_id"), opt("sealed"), opt("plan_id")});
  }
  return out;
}

// proposal_id is the hash of the proposal document: the plan as proposed,
// no-ops included, every after absent (docs/spec/dpp-general.md). The sealed plan
// leaves the no-ops out and keeps that id; an independent implementation
// wrote the expected bytes (tools/jcs-crosscheck/plan-vectors.mjs).
TEST(PlanV2, SealVectorsProposalIdIsTheProposalDocumentsHash) {
  const auto all = seal_vectors();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& v : all) {
    SCOPED_TRACE(v.name);
    auto proposed = decode_text(v.input);
    ASSERT_TRUE(proposed.ok()) << proposed.error().line();
    EXPECT_EQ(*proposal_document(*proposed), v.proposal_document);
    EXPECT_EQ(*compute_proposal_id(*proposed), v.proposal_id);
    EXPECT_EQ(sha256_hex(v.proposal_document), v.proposal_id);
    // Written in pieces (as the store packs it): the same bytes, in both forms.
    StringSink pieces;
    ASSERT_TRUE(write_proposal_document(*proposed, false, pieces).ok());
    EXPECT_EQ(pieces.out, v.proposal_document);
    auto declared = declared_proposal_document(*proposed);
    StringSink declared_pieces;
    ASSERT_TRUE(declared.ok() && write_proposal_document(*proposed, true, declared_pieces).ok());
    EXPECT_EQ(declared_pieces.out, *declared);
    auto sealed = seal_from_proposal(*proposed);
    ASSERT_TRUE(sealed.ok()) << sealed.error().line();
    if (!v.sealed) {
      EXPECT_TRUE(sealed->operations.empty());  // NO_CHANGES: nothing is sealed
      auto bound = check_proposal_binding(*sealed, v.proposal_document);
      ASSERT_FALSE(bound.ok());
      EXPECT_EQ(bound.error().kind, "proposal_binding");
      continue;
    }
    EXPECT_EQ(*canonical_bytes(*sealed), *v.sealed);
    EXPECT_EQ(*compute_plan_id(*sealed), *v.plan_id);
    EXPECT_EQ(sealed->proposal_id, v.proposal_id);
    // With no-ops left out, the sealed plan alone does not give its id.
    EXPECT_NE(*compute_proposal_id(*sealed), v.proposal_id);
    auto stored = decode_canonical_plan_v2(*v.sealed);
    ASSERT_TRUE(stored.ok()) << stored.error().line();
    auto bound = check_proposal_binding(*stored, v.proposal_document);
    EXPECT_TRUE(bound.ok()) << bound.error().line();
  }
}

// Every way a stored sealed plan can stop following from its stored
// proposal document is refused on load.
TEST(PlanV2, ProposalBindingRefusals) {
  const auto v = seal_vectors().at(0);
  ASSERT_TRUE(v.sealed);
  const PlanV2 sealed = *decode_canonical_plan_v2(*v.sealed);
  const PlanV2 proposed = *decode_canonical_plan_v2(v.proposal_document);
  ASSERT_TRUE(check_proposal_binding(sealed, v.proposal_document).ok());
  struct Case {
    const char* what;
    std::function<void(PlanV2& sealed, PlanV2& proposed)> edit;
    const char* kind;
  };
  const std::vector<Case> cases = {
      {"another proposal_id", [](PlanV2& s, PlanV2&) { s.proposal_id = std::string(64, 'e'); }, "proposal_id_mismatch"},
      {"another nonce", [](PlanV2& s, PlanV2&) { s.nonce = std::string(64, 'e'); }, "proposal_binding"},
      {"another plugin", [](PlanV2& s, PlanV2&) { s.plugin_id = "org.dot.other"; }, "proposal_binding"},
      {"a folder dropped", [](PlanV2& s, PlanV2&) { s.directories.pop_back(); }, "proposal_binding"},
      // Every member but the operations and the id is compared (plan_v2.h
      // same_but_operations_and_id): each one edited on its own.
      {"another root", [](PlanV2& s, PlanV2&) { s.root_id = std::string(64, 'f'); }, "proposal_binding"},
      {"another plugin digest", [](PlanV2& s, PlanV2&) { s.plugin_digest = std::string(64, 'f'); }, "proposal_binding"},
      {"another exclude", [](PlanV2& s, PlanV2&) { s.exclude = {"*.swp"}; }, "proposal_binding"},
      {"another folder mode", [](PlanV2& s, PlanV2&) { s.directories.back().mode = 0750; }, "proposal_binding"},
      {"an operation not proposed", [](PlanV2& s, PlanV2&) { s.operations.back().path = "older.txt"; },
       "proposal_binding"},
      {"another before", [](PlanV2& s, PlanV2&) { s.operations[0].before.mode = 0600; }, "proposal_binding"},
      {"operations reordered", [](PlanV2& s, PlanV2&) { std::swap(s.operations[0], s.operations[2]); },
       "proposal_binding"},
      {"a change left out (a remove of a present file)", [](PlanV2& s, PlanV2&) { s.operations.pop_back(); },
       "proposal_binding"},
      {"a change left out (a write of an absent target)",
       [](PlanV2& s, PlanV2&) { s.operations.erase(s.operations.begin() + 1); }, "proposal_binding"},
      {"a no-op sealed", [](PlanV2& s, PlanV2&) { s.operations[0].after = s.operations[0].before; },
       "proposal_binding"},
      {"nothing sealed", [](PlanV2& s, PlanV2&) { s.operations.clear(); }, "proposal_binding"},
      // The decoder already refuses it: a sealed plan's write needs an after.
      {"the document is a sealed plan", [](PlanV2&, PlanV2& p) { p.proposal_id = std::string(64, '1'); },
       "write_after"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    PlanV2 s = sealed, p = proposed;
    c.edit(s, p);
    std::string document = *canonical_bytes(p);
    // Keep the hash binding unless the case is about it, so each case
    // reaches the rule it names.
    if (std::string_view(c.kind) != "proposal_id_mismatch") s.proposal_id = sha256_hex(document);
    auto r = check_proposal_binding(s, document);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, c.kind) << r.error().line();
  }
  // A document that is not canonical, or not a plan, is the decoder's error.
  const std::string spaced = v.proposal_document + " ";
  PlanV2 s = sealed;
  s.proposal_id = sha256_hex(spaced);
  auto r = check_proposal_binding(s, spaced);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "not_canonical");
}

TEST(PlanV2, ProposalIdIgnoresAfterAndBindsTheRest) {
  auto base = decode_text(vectors().at(0).input);
  ASSERT_TRUE(base.ok());
  PlanV2 p = *base;
  PlanV2 q = p;
  q.operations[0].after.sha256 = *Sha256Digest::from_hex(std::string(64, 'e'));
  q.proposal_id = std::string(64, '0');
  EXPECT_EQ(*compute_proposal_id(p), *compute_proposal_id(q));
  EXPECT_NE(*compute_plan_id(p), *compute_plan_id(q));
  for (auto mutate : std::vector<void (*)(PlanV2&)>{
           [](PlanV2& x) { x.operations[0].before.mode = 0600; }, [](PlanV2& x) { x.operations[0].path += "x"; },
           [](PlanV2& x) { x.operations[2].action = Action::Write; }, [](PlanV2& x) { x.directories.pop_back(); },
           [](PlanV2& x) { x.plugin_id = "org.dot.other"; }, [](PlanV2& x) { x.nonce = std::string(64, '1'); },
           [](PlanV2& x) { x.root_id = std::string(64, '3'); }}) {
    PlanV2 r = p;
    mutate(r);
    EXPECT_NE(*compute_proposal_id(p), *compute_proposal_id(r));
  }
}

// One sealed plan, edited one way at a time: each edit is refused with its code and kind.
TEST(PlanV2, StrictDecodingRefusals) {
  const std::string good = vectors().at(0).canonical;
  ASSERT_TRUE(decode_text(good).ok());
  auto edit = [&](std::string_view from, std::string_view to) {
    std::string s = good;
    auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  struct Case {
    const char* what;
    std::string text;
    Code code;
    const char* kind;
  };
  const std::string sync = R"({"failure_policy":"required","kind":"sync","target":"managed-root"})";
  const std::vector<Case> cases = {
      {"version 1", edit("\"version\":2", "\"version\":1"), Code::Validation, "unsupported_version"},
      {"version 3", edit("\"version\":2", "\"version\":3"), Code::Validation, "unsupported_version"},
      {"profile", edit("org.dot.dpp/v1", "org.dot.hello/v1"), Code::Validation, "profile"},
      {"unknown field", edit("\"version\":2", "\"version\":2,\"x\":1"), Code::Validation, "unknown_field"},
      {"missing field", edit("\"plugin_id\":\"org.dot.mirror\",", ""), Code::Validation, "missing_field"},
      {"empty plugin id", edit("\"plugin_id\":\"org.dot.mirror\"", "\"plugin_id\":\"\""), Code::Validation,
       "plugin_id"},
      {"short nonce", edit("\"nonce\":\"aa", "\"nonce\":\""), Code::Validation, "invalid_id"},
      {"no effect", edit("\"effects\":[" + sync + "]", "\"effects\":[]"), Code::Policy, "effects"},
      {"two effects", edit(sync, sync + "," + sync), Code::Policy, "effects"},
      {"other effect", edit("managed-root", "hook"), Code::Policy, "effects"},
      {"absolute path", edit("\"path\":\"old.txt\"", "\"path\":\"/old.txt\""), Code::PathEscape, "absolute"},
      {"dot-dot path", edit("\"path\":\"old.txt\"", "\"path\":\"../old.txt\""), Code::PathEscape, "dot_dot"},
      {"state folder", edit("\"path\":\"old.txt\"", "\"path\":\".dot/x\""), Code::PathEscape, "state_folder"},
      // A stored plan naming core's temp file is refused on every load.
      {"temp name", edit("\"path\":\"old.txt\"", "\"path\":\".dot-tmp-" + std::string(32, 'a') + "\""),
       Code::PathEscape, "reserved"},
      {"unsorted", edit("\"path\":\"old.txt\"", "\"path\":\"a.txt\""), Code::Policy, "unsorted"},
      {"parent of another", edit("\"path\":\"old.txt\"", "\"path\":\"emoji/\xf0\x9f\x98\x80.txt/x\""), Code::Policy,
       "parent_of"},
      {"unknown action", edit("\"action\":\"remove\"", "\"action\":\"delete\""), Code::Policy, "action"},
      {"write mode", edit("\"mode\":493", "\"mode\":511"), Code::Policy, "mode"},
      {"setuid write", edit("\"mode\":493", "\"mode\":2541"), Code::Policy, "mode"},
      {"remove with an after",
       edit(R"("action":"remove","after":{"exists":false,"gid":0,"mode":0,"sha256":"","uid":0})",
            R"("action":"remove","after":{"exists":true,"gid":0,"mode":420,"sha256":")" + std::string(64, '1') +
                R"(","uid":0})"),
       Code::Policy, "mode"},
      {"remove with a mode-0 after",
       edit(R"("action":"remove","after":{"exists":false,"gid":0,"mode":0,"sha256":"","uid":0})",
            R"("action":"remove","after":{"exists":true,"gid":0,"mode":0,"sha256":")" + std::string(64, '1') +
                R"(","uid":0})"),
       Code::Validation, "remove_after"},
      {"inconsistent snapshot", edit(R"("before":{"exists":false,"gid":0,)", R"("before":{"exists":false,"gid":7,)"),
       Code::Validation, "inconsistent_snapshot"},
      {"folder mode for others", edit("{\"mode\":448,\"path\":\"x\"}", "{\"mode\":511,\"path\":\"x\"}"), Code::Policy,
       "mode"},
      {"folder mode without search", edit("{\"mode\":448,\"path\":\"x\"}", "{\"mode\":384,\"path\":\"x\"}"),
       Code::Policy, "mode"},
      {"folder mode sticky", edit("{\"mode\":448,\"path\":\"x\"}", "{\"mode\":960,\"path\":\"x\"}"), Code::Policy,
       "mode"},
      {"empty exclude", edit("],\"nonce\"", "],\"exclude\":[],\"nonce\""), Code::Validation, "exclude"},
      {"unsorted exclude", edit("],\"nonce\"", "],\"exclude\":[\"b\",\"a\"],\"nonce\""), Code::Validation, "exclude"},
      {"twice excluded", edit("],\"nonce\"", "],\"exclude\":[\"a\",\"a\"],\"nonce\""), Code::Validation, "exclude"},
      {"exclude not strings", edit("],\"nonce\"", "],\"exclude\":[1],\"nonce\""), Code::Validation, "exclude"},
      {"bad exclude pattern", edit("],\"nonce\"", "],\"exclude\":[\"!a\"],\"nonce\""), Code::Validation, "glob"},
      {"folder not a parent", edit("{\"mode\":448,\"path\":\"x\"}", "{\"mode\":448,\"path\":\"y\"}"), Code::Validation,
       "directory"},
      {"folder unsorted",
       edit("{\"mode\":448,\"path\":\"emoji\"},{\"mode\":448,\"path\":\"x\"}",
            "{\"mode\":448,\"path\":\"x\"},{\"mode\":448,\"path\":\"emoji\"}"),
       Code::Validation, "unsorted"},
      {"folder created, subfolder not", edit(",{\"mode\":448,\"path\":\"zh/\xe4\xb8\xad\xe6\x96\x87\"}", ""),
       Code::Validation, "directory"},
      {"folder escapes", edit("{\"mode\":448,\"path\":\"x\"}", "{\"mode\":448,\"path\":\"x/..\"}"), Code::PathEscape,
       "dot_dot"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = decode_text(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, c.code) << r.error().line();
    EXPECT_EQ(r.error().kind, c.kind) << r.error().line();
    // A stored plan is read as it streams: the same refusal at the same
    // byte, whatever the pieces.
    for (std::size_t piece : {std::size_t{1}, std::size_t{7}, c.text.size()}) {
      SCOPED_TRACE(piece);
      auto streamed = read_in_pieces(c.text, piece);
      ASSERT_FALSE(streamed.ok());
      EXPECT_EQ(streamed.error().code, c.code) << streamed.error().line();
      EXPECT_EQ(streamed.error().kind, c.kind) << streamed.error().line();
      EXPECT_EQ(streamed.error().offset, r.error().offset) << streamed.error().line() << " / " << r.error().line();
    }
  }
}

// A canonical plan read in pieces of any size is the plan decoded whole,
// its operations handed on one at a time in order; brackets, braces,
// quotes and backslashes inside strings split nothing.
TEST(PlanV2, AStoredPlanReadInPiecesIsThePlanDecodedWhole) {
  PlanV2 plan = links_plan();
  const Snapshot file{.exists = true, .mode = 0600, .sha256 = Sha256Digest::of("x"), .gid = 1000, .uid = 1000};
  plan.operations.push_back({Action::Write, file, Snapshot::absent(), "e-{[\"]}\\x"});
  plan.operations.push_back({Action::Link, link_snapshot("}],{\"operations\":[", 1000, 1000), Snapshot::absent(), "f"});
  const std::string bytes = *canonical_bytes(plan);
  const PlanV2 whole = *decode_canonical_plan_v2(bytes);
  EXPECT_EQ(whole, plan);
  for (std::size_t piece = 1; piece <= bytes.size(); piece += piece < 16 ? 1 : 97) {
    SCOPED_TRACE(piece);
    auto read = read_in_pieces(bytes, piece);
    ASSERT_TRUE(read.ok()) << read.error().line();
    EXPECT_EQ(*read, whole);
  }
}

// What lies between the elements of a stored plan's operations is exactly
// a canonical array's separators, refused at the byte that is not; a
// document cut short inside its operations is malformed at its end; an
// element larger than any operation is refused before it is parsed.
TEST(PlanV2, AStoredPlansOperationsAreReadOnlyInCanonicalForm) {
  const std::string bytes = *canonical_bytes(links_plan());
  const std::size_t second = bytes.find(",{\"action\"");
  ASSERT_NE(second, std::string::npos);
  struct Case {
    const char* what;
    std::string text;
    const char* kind;
    std::uint64_t offset;
  };
  std::string spaced = bytes;
  spaced.insert(second + 1, " ");
  std::string doubled = bytes;
  doubled.insert(second, ",");
  std::string number = bytes;
  number.insert(second + 1, "1,");
  const std::vector<Case> cases = {
      {"space between elements", spaced, "not_canonical", second + 1},
      {"two commas", doubled, "not_canonical", second + 1},
      {"an element not an object", number, "not_canonical", second + 1},
      {"cut inside the operations", bytes.substr(0, second + 5), "malformed", second + 5},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = read_in_pieces(c.text, 5);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, c.kind) << r.error().line();
    EXPECT_EQ(r.error().offset, c.offset) << r.error().line();
    auto whole = decode_canonical_plan_v2(c.text);
    ASSERT_FALSE(whole.ok());
    EXPECT_EQ(whole.error().line(), r.error().line());
  }
  std::string huge = bytes;
  huge.insert(second + 1, "{\"path\":\"" + std::string(std::size_t{2} << 20, 'a'));
  auto r = read_in_pieces(huge, 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "not_canonical") << r.error().line();
  EXPECT_EQ(r.error().offset, second + 1) << r.error().line();
  // The reader keeps its first refusal.
  std::vector<std::string> paths;
  PlanV2Reader reader([&](PathOperation&& op) {
    paths.push_back(op.path);
    return Status{};
  });
  ASSERT_FALSE(reader.write(spaced).ok());
  EXPECT_EQ(reader.write("x").error().kind, "not_canonical");
  EXPECT_EQ(reader.finish().error().kind, "not_canonical");
  EXPECT_EQ(paths, std::vector<std::string>{"a-link"});
}

// Folder modes other than 0700 and plan.exclude are members a document has
// only when it uses them: they decode, re-encode to the same bytes and
// change the id; a document without them is what it always was.
TEST(PlanV2, FolderModesAndExcludeRoundTripAndBindTheId) {
  const Vector v = vectors().at(0);
  ASSERT_NE(v.canonical.find("{\"mode\":448,\"path\":\"x\"}"), std::string::npos);
  ASSERT_EQ(v.canonical.find("\"exclude\""), std::string::npos);
  std::string text = v.canonical;
  auto replace = [&](std::string_view from, std::string_view to) { text.replace(text.find(from), from.size(), to); };
  replace("{\"mode\":448,\"path\":\"x\"}", "{\"mode\":488,\"path\":\"x\"}");
  replace("],\"nonce\"", "],\"exclude\":[\"*.swp\",\"/.cache/\"],\"nonce\"");
  auto plan = decode_canonical_plan_v2(text);
  ASSERT_TRUE(plan.ok()) << plan.error().line();
  EXPECT_EQ(plan->exclude, (std::vector<std::string>{"*.swp", "/.cache/"}));
  bool found = false;
  for (const auto& f : plan->directories) found = found || (f.path == "x" && f.mode == 0750);
  EXPECT_TRUE(found);
  EXPECT_EQ(*canonical_bytes(*plan), text);
  EXPECT_NE(*compute_plan_id(*plan), v.plan_id);
  plan->exclude.clear();
  EXPECT_EQ(canonical_bytes(*plan)->find("exclude"), std::string::npos);
}

TEST(PlanV2, ProposalDocumentAftersAreAllAbsentOrAllDeclaredAndASealedWriteHasOne) {
  const auto all = vectors();
  const std::string proposal = all.at(3).canonical;  // proposal_id ""
  ASSERT_TRUE(decode_canonical_plan_v2(proposal).ok());
  const std::string absent_after = R"("after":{"exists":false,"gid":0,"mode":0,"sha256":"","uid":0})";
  const std::string declared_after =
      R"("after":{"exists":true,"gid":0,"mode":420,"sha256":")" + std::string(64, '1') + R"(","uid":0})";
  // Its one write declared (docs/spec/dpp-general.md, "Declared digests"): every write declares.
  std::string with_after = proposal;
  with_after.replace(with_after.find(absent_after), absent_after.size(), declared_after);
  ASSERT_TRUE(decode_text(with_after).ok());
  // A proposal of several writes with one declared and the others not is refused.
  std::string mixed = all.at(0).proposal_document;
  ASSERT_NE(mixed.find(absent_after), mixed.rfind(absent_after));
  mixed.replace(mixed.find(absent_after), absent_after.size(), declared_after);
  auto r = decode_text(mixed);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "proposal_after");
  // The same operations in a sealed plan (a proposal_id): a write needs its after.
  std::string sealed = proposal;
  sealed.replace(sealed.find("\"proposal_id\":\"\""), 16, "\"proposal_id\":\"" + std::string(64, '0') + "\"");
  auto s = decode_text(sealed);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kind, "write_after");
}

TEST(PlanV2, NoOpRule) {
  const Snapshot absent = Snapshot::absent();
  const Snapshot file{
      .exists = true, .mode = 0644, .sha256 = *Sha256Digest::from_hex(std::string(64, '1')), .gid = 1000, .uid = 1000};
  Snapshot other_bytes = file;
  other_bytes.sha256 = *Sha256Digest::from_hex(std::string(64, '2'));
  Snapshot other_mode = file;
  other_mode.mode = 0600;
  Snapshot other_owner = file;  // the rule is bytes and mode
  other_owner.gid = 1;
  struct Case {
    const char* what;
    PathOperation op;
    bool noop;
  };
  const std::vector<Case> cases = {
      {"write, same bytes and mode", {Action::Write, file, file, "a"}, true},
      {"write, same bytes and mode, other gid", {Action::Write, other_owner, file, "a"}, true},
      {"write, other bytes", {Action::Write, other_bytes, file, "a"}, false},
      {"write, other mode", {Action::Write, other_mode, file, "a"}, false},
      {"write of an absent target", {Action::Write, file, absent, "a"}, false},
      {"remove of an absent target", {Action::Remove, absent, absent, "a"}, true},
      {"remove of a file", {Action::Remove, absent, file, "a"}, false},
  };
  std::vector<PathOperation> all;
  std::vector<std::string> changed;
  for (const auto& c : cases) {
    EXPECT_EQ(is_general_noop(c.op), c.noop) << c.what;
    all.push_back(c.op);
    all.back().path = c.what;
    if (!c.noop) changed.push_back(c.what);
  }
  std::vector<std::string> kept;
  for (const auto& op : without_noops(all)) kept.push_back(op.path);
  EXPECT_EQ(kept, changed);  // in order
  std::vector<PathOperation> only_noops = {cases[0].op, cases[5].op};
  EXPECT_TRUE(without_noops(only_noops).empty());  // NO_CHANGES
}

TEST(PlanV2, CreatedFoldersAreTheMissingParentsOfWritesParentsFirst) {
  const Snapshot absent = Snapshot::absent();
  const Snapshot file{
      .exists = true, .mode = 0644, .sha256 = *Sha256Digest::from_hex(std::string(64, '1')), .gid = 1000, .uid = 1000};
  std::vector<PathOperation> ops = {
      {Action::Write, file, absent, "a/b/c/f"},
      {Action::Write, file, absent, "a/b/g"},
      {Action::Write, file, absent, "a-z/f"},
      {Action::Remove, absent, file, "gone/deep/f"},  // a remove creates nothing
      {Action::Write, file, absent, "top"},
      {Action::Write, file, absent, "\xe4\xb8\xad/\xf0\x9f\x98\x80/f"},
      {Action::Write, file, absent, "\xef\xbd\x9e/f"},
  };
  // "a" exists; "a/b" does not, so nothing below it does, whatever the set says.
  const std::set<std::string, std::less<>> existing = {"a", "a/b/c", "gone", "gone/deep"};
  std::vector<std::string> got;
  for (const auto& f : derive_directories(ops, existing)) {
    EXPECT_EQ(f.mode, 0700u);
    got.push_back(f.path);
  }
  const std::vector<std::string> want = {"a-z",         "a/b", "a/b/c", "\xe4\xb8\xad", "\xe4\xb8\xad/\xf0\x9f\x98\x80",
                                         "\xef\xbd\x9e"};
  EXPECT_EQ(got, want);
  EXPECT_TRUE(derive_directories(
                  ops, {"a", "a/b", "a/b/c", "a-z", "\xe4\xb8\xad", "\xe4\xb8\xad/\xf0\x9f\x98\x80", "\xef\xbd\x9e"})
                  .empty());
}

std::string v2_document(std::string_view plan, std::string_view plan_id, std::string_view proposal) {
  // Spaced and in another key order: ids must not depend on the spelling.
  return fmt::format("{{ \"proposal\": {},\n \"plan_id\": \"{}\",\n \"plan\": {} }}", proposal, plan_id, plan);
}

// plan-id reads a document of either version, the plan's `version` choosing
// the model; a version-2 plan's proposal_id is checked against the proposal
// the document carries.
TEST(PlanV2, PlanDocumentsOfBothVersions) {
  const auto v = seal_vectors().at(0);
  ASSERT_TRUE(v.sealed);
  auto doc = decode_plan_document(v2_document(*v.sealed, *v.plan_id, v.proposal_document));
  ASSERT_TRUE(doc.ok()) << doc.error().line();
  EXPECT_EQ(doc->version, 2u);
  EXPECT_EQ(doc->plan_id, *v.plan_id);
  EXPECT_EQ(doc->claimed_plan_id, *v.plan_id);
  EXPECT_EQ(doc->proposal_id, v.proposal_id);
  EXPECT_EQ(*canonical_bytes(doc->plan_v2), *v.sealed);
  // Every version-2 vector plan with its own proposal document.
  for (const auto& p : vectors()) {
    if (p.name == "proposal-document") continue;  // a proposal, not a sealed plan
    SCOPED_TRACE(p.name);
    auto d = decode_plan_document(v2_document(p.input, p.plan_id, p.proposal_document));
    ASSERT_TRUE(d.ok()) << d.error().line();
    EXPECT_EQ(d->plan_id, p.plan_id);
    EXPECT_EQ(d->proposal_id, p.proposal_id);
  }
  struct Case {
    const char* what;
    std::string text;
    const char* kind;
  };
  std::string other_proposal = v.proposal_document;
  other_proposal.replace(other_proposal.find("\"nonce\":\"a"), 10, "\"nonce\":\"b");
  const std::vector<Case> cases = {
      {"a bare version-2 plan", *v.sealed, "proposal_missing"},
      {"no proposal", fmt::format("{{\"plan\":{},\"plan_id\":\"{}\"}}", *v.sealed, *v.plan_id), "proposal_missing"},
      {"another plan_id", v2_document(*v.sealed, std::string(64, '0'), v.proposal_document), "plan_id_mismatch"},
      {"another proposal", v2_document(*v.sealed, *v.plan_id, other_proposal), "proposal_id_mismatch"},
      {"a sealed plan as its proposal", v2_document(*v.sealed, *v.plan_id, *v.sealed), "proposal_id_mismatch"},
      {"an unknown key", v2_document(*v.sealed, *v.plan_id, v.proposal_document + ",\"x\":1"), "unknown_field"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = decode_plan_document(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Code::Validation) << r.error().line();
    EXPECT_EQ(r.error().kind, c.kind) << r.error().line();
  }

  // Version 1 keeps its model, bytes and ids (test_plan_model.cpp has the rest).
  Plan p;
  p.effects = std::vector<Effect>{root_sync_effect()};
  p.nonce = std::string(64, 'a');
  p.plugin_digest = std::string(64, 'b');
  p.root_id = std::string(64, 'c');
  p.operations = {
      Operation{sealed_after(*Sha256Digest::from_hex(std::string(64, 'd'))), Snapshot::absent(), "hello.txt"}};
  p.proposal_id = *compute_proposal_id(p);
  const std::string v1 = *canonical_bytes(p);
  auto doc1 = decode_plan_document(v1);
  ASSERT_TRUE(doc1.ok()) << doc1.error().line();
  EXPECT_EQ(doc1->version, 1u);
  EXPECT_EQ(doc1->plan, p);
  EXPECT_EQ(doc1->proposal_id, p.proposal_id);
  EXPECT_EQ(doc1->plan_id, sha256_hex(v1));
  // A version-1 document carries no proposal.
  auto with_proposal = decode_plan_document(v2_document(v1, sha256_hex(v1), v.proposal_document));
  ASSERT_FALSE(with_proposal.ok());
  EXPECT_EQ(with_proposal.error().kind, "unknown_field");
  // A version-1 plan claiming version 2 is judged as version 2, and refused.
  std::string as_v2 = v1;
  as_v2.replace(as_v2.find("\"version\":1"), 11, "\"version\":2");
  EXPECT_FALSE(decode_plan_document(as_v2).ok());
}

}  // namespace
}  // namespace dot::core

namespace dot::core {
namespace {

// Symbolic links in version-2 plans (docs/spec/plans.md "Snapshots"): a
// symlink's snapshot carries "kind":"symlink" and its "link_text" and no
// other snapshot does, so every document without a link keeps its bytes
// and ids (VectorsCanonicalBytesAndIds still holds for the stored vectors).
PlanV2 links_plan() {
  auto base = decode_text(vectors().at(0).canonical);
  EXPECT_TRUE(base.ok());
  PlanV2 plan = *base;
  plan.directories.clear();
  const Snapshot file{.exists = true, .mode = 0600, .sha256 = Sha256Digest::of("bytes"), .gid = 1000, .uid = 1000};
  plan.operations = {
      {Action::Link, link_snapshot("/abs/target", 1000, 1000), file, "a-link"},
      {Action::Write, file, link_snapshot("old \x1b text", 1000, 100), "b-file"},
      {Action::Remove, Snapshot::absent(), link_snapshot("gone", 1000, 1000), "c-gone"},
      {Action::Link, link_snapshot("new", 1000, 1000), link_snapshot("old", 1000, 1000), "d-relink"},
  };
  return plan;
}

TEST(PlanV2, SymlinkSnapshotsEncodeTheirKindAndTextAndRoundTrip) {
  const PlanV2 plan = links_plan();
  auto bytes = canonical_bytes(plan);
  ASSERT_TRUE(bytes.ok());
  EXPECT_NE(bytes->find(R"("after":{"exists":true,"gid":1000,"kind":"symlink","link_text":"/abs/target","mode":511,)"),
            std::string::npos)
      << *bytes;
  EXPECT_NE(bytes->find(R"("link_text":"old \u001b text")"), std::string::npos) << *bytes;
  auto again = decode_canonical_plan_v2(*bytes);
  ASSERT_TRUE(again.ok()) << again.error().line();
  EXPECT_EQ(*again, plan);
  EXPECT_EQ(again->operations[1].before.link_text, "old \x1b text");
  EXPECT_EQ(again->operations[1].before.gid, 100u);
  // A file's snapshot has neither member: the version-2 bytes of a plan
  // without links are what they were.
  auto file = jcs::encode(
      to_node(Snapshot{
          .exists = true, .mode = 0600, .sha256 = *Sha256Digest::from_hex(std::string(64, 'a')), .gid = 1, .uid = 2}),
      jcs::Profile::Rfc8785);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(*file, R"({"exists":true,"gid":1,"mode":384,"sha256":")" + std::string(64, 'a') + R"(","uid":2})");
  // The proposal document drops every after (the link texts it proposes
  // are bound by the plan id) and keeps every before's text.
  auto document = proposal_document(plan);
  ASSERT_TRUE(document.ok());
  EXPECT_EQ(document->find("/abs/target"), std::string::npos) << *document;
  EXPECT_NE(document->find("\"link_text\":\"gone\""), std::string::npos) << *document;
  auto sealed = seal_from_proposal(plan);
  ASSERT_TRUE(sealed.ok());
  EXPECT_TRUE(check_proposal_binding(*sealed, *document).ok());
}

TEST(PlanV2, SymlinkSnapshotRefusals) {
  const std::string good = *canonical_bytes(links_plan());
  auto edit = [&](std::string_view from, std::string_view to) {
    std::string s = good;
    auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  struct Case {
    const char* what;
    std::string text;
    Code code;
    const char* kind;
  };
  const std::string target_sha = sha256_hex("/abs/target");
  const std::vector<Case> cases = {
      {"digest not the text's", edit("\"link_text\":\"/abs/target\"", "\"link_text\":\"/abs/other\""), Code::Validation,
       "inconsistent_snapshot"},
      {"kind without text", edit("\"kind\":\"symlink\",\"link_text\":\"/abs/target\",", "\"kind\":\"symlink\","),
       Code::Validation, "inconsistent_snapshot"},
      {"text without kind", edit("\"kind\":\"symlink\",\"link_text\":\"/abs/target\"", "\"link_text\":\"/abs/target\""),
       Code::Validation, "inconsistent_snapshot"},
      {"kind file",
       edit("\"kind\":\"symlink\",\"link_text\":\"/abs/target\"", "\"kind\":\"file\",\"link_text\":\"/abs/target\""),
       Code::Validation, "inconsistent_snapshot"},
      {"link mode", edit("\"link_text\":\"/abs/target\",\"mode\":511", "\"link_text\":\"/abs/target\",\"mode\":420"),
       Code::Validation, "inconsistent_snapshot"},
      {"NUL in the text", edit("\"link_text\":\"gone\"", "\"link_text\":\"go\\u0000e\""), Code::Validation,
       "inconsistent_snapshot"},
      {"empty text", edit("\"link_text\":\"gone\"", "\"link_text\":\"\""), Code::Validation, "inconsistent_snapshot"},
      {"a link whose after is a file",
       edit("\"kind\":\"symlink\",\"link_text\":\"/abs/target\",\"mode\":511,\"sha256\":\"" + target_sha,
            "\"mode\":384,\"sha256\":\"" + target_sha),
       Code::Validation, "link_after"},
      {"a link with mode 0 and no after",
       edit("\"action\":\"link\",\"after\":{\"exists\":true", "\"action\":\"link\",\"after\":{\"exists\":false"),
       Code::Validation, "inconsistent_snapshot"},
      {"unknown action", edit("\"action\":\"link\"", "\"action\":\"symlink\""), Code::Policy, "action"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = decode_text(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, c.code) << r.error().line();
    EXPECT_EQ(r.error().kind, c.kind) << r.error().line();
  }
  // A write whose after is a link's is refused too.
  PlanV2 plan = links_plan();
  plan.operations[1].after = link_snapshot("x", 1000, 1000);
  auto r = decode_text(*canonical_bytes(plan));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "link_after") << r.error().line();
  // A text of 4096 bytes is longer than a link can hold.
  plan = links_plan();
  plan.operations[0].after = link_snapshot(std::string(4096, 't'), 1000, 1000);
  r = decode_text(*canonical_bytes(plan));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, "inconsistent_snapshot") << r.error().line();
  plan.operations[0].after = link_snapshot(std::string(4095, 't'), 1000, 1000);
  EXPECT_TRUE(decode_text(*canonical_bytes(plan)).ok());
}

TEST(PlanV2, TheHelloSnapshotHasNoLinkMembers) {
  auto doc = json::parse(R"({"exists":true,"gid":1,"kind":"symlink","link_text":"x","mode":511,"sha256":")" +
                         sha256_hex("x") + R"(","uid":1})");
  ASSERT_TRUE(doc.ok());
  auto hello = decode_snapshot(doc->root(), "snapshot");
  ASSERT_FALSE(hello.ok());
  EXPECT_EQ(hello.error().kind, "unknown_field") << hello.error().line();
  auto v2 = decode_snapshot(doc->root(), "snapshot", true);
  ASSERT_TRUE(v2.ok()) << v2.error().line();
  EXPECT_TRUE(v2->is_link());
}

TEST(PlanV2, NoOpRuleOfLinks) {
  const Snapshot link = link_snapshot("text", 1000, 1000);
  const Snapshot other = link_snapshot("other", 1000, 1000);
  Snapshot file_of_same_bytes{
      .exists = true, .mode = kLinkMode, .sha256 = Sha256Digest::of("text"), .gid = 1000, .uid = 1000};
  EXPECT_TRUE(is_general_noop({Action::Link, link, link, "a"}));
  EXPECT_TRUE(is_general_noop({Action::Link, link, link_snapshot("text", 1000, 5), "a"}));  // owner aside
  EXPECT_FALSE(is_general_noop({Action::Link, link, other, "a"}));
  EXPECT_FALSE(is_general_noop({Action::Link, link, Snapshot::absent(), "a"}));
  EXPECT_FALSE(is_general_noop({Action::Link, link, file_of_same_bytes, "a"}));  // a file is not a link
  EXPECT_FALSE(is_general_noop({Action::Write, file_of_same_bytes, link, "a"}));
  EXPECT_FALSE(is_general_noop({Action::Remove, Snapshot::absent(), link, "a"}));
  EXPECT_TRUE(can_be_noop(Action::Link, link));
  EXPECT_FALSE(can_be_noop(Action::Link, file_of_same_bytes));
  EXPECT_FALSE(can_be_noop(Action::Write, link));
  // The snapshot policy: a link owned by us passes whatever its mode.
  WriteAccessJudge judge;
  EXPECT_TRUE(check_path_snapshot_policy("a", link_snapshot("t", ::geteuid(), 0), judge).ok());
  EXPECT_FALSE(check_path_snapshot_policy("a", link_snapshot("t", ::geteuid() + 1, 0), judge).ok());
}

}  // namespace
}  // namespace dot::core

namespace dot::core {
namespace {

// The fuzz target's seed with links (fuzz/corpus/plan_v2/links.json) is a
// canonical sealed plan, so the fuzzer starts from inside the link members.
TEST(PlanV2, TheFuzzSeedWithLinksIsACanonicalPlan) {
  auto plan = decode_canonical_plan_v2(read_file(DOT_SOURCE_DIR "/fuzz/corpus/plan_v2/links.json"));
  ASSERT_TRUE(plan.ok()) << plan.error().line();
  std::size_t links = 0;
  for (const auto& op : plan->operations) links += op.action == Action::Link ? 1 : 0;
  EXPECT_EQ(links, 3u);
}

}  // namespace
}  // namespace dot::core
