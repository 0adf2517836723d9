// The org.dot.dpp/v1 plugin of the general planner's tests
// (test_general_plan.cpp), on the plugin runtime. One executable, many
// behaviours: the test writes the case name into the file `case` beside the
// managed root (the stage is ROOT/.dot/stage/NAME, so that file is
// ../../../../case from the stage) and the plugin writes its pid into `pid`
// there, so that the test can tell it is gone. Audit assurance only (it
// reads outside its stage).
//
// Cases: seal, noop, apply, links, hello_owned (a path the hello plugin owns), and one
// per rejection the spec puts at plan level
// (see the table in test_general_plan.cpp). A case that must send bytes the
// runtime would never send (a path that is not UTF-8, claims over the
// limits, an error with data) rewrites one frame on its way out.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "dot/base/byte_stream.h"
#include "dot/base/error_kinds.h"
#include "../common/test_error_kinds.h"
#include "dot/base/sha256.h"
#include "dot/dpp/runtime.h"
#include "hostile.h"

namespace g = dot::dpp::general;
using dot::Result;
using dot::Status;

namespace {

std::string g_case;
std::string g_base;  // the folder holding the root and the case file

std::string base_of_stage(const std::string& stage) {
  std::string p = stage;
  for (int i = 0; i < 4; ++i) p = p.substr(0, p.rfind('/'));
  return p;
}

// Bytes of a file the plan writes as binary: every byte value.
std::string binary_bytes() {
  std::string s;
  for (int i = 0; i < 512; ++i) s += static_cast<char>(i & 0xff);
  return s;
}

const std::string kUtf8Name = "dir/sub/\xc3\xbc" "ber.txt";  // dir/sub/über.txt

// The case "apply" (test_apply_v2.cpp, test_crash_v2.cpp): writes in
// folders that exist and in folders apply creates, removes, every mode, a
// UTF-8 name, an empty file. A null `bytes` is a remove. Path order.
struct ApplyCaseFile {
  const char* path;
  unsigned mode;
  const char* bytes;
};
const std::vector<ApplyCaseFile>& apply_case_files() {
  static const std::vector<ApplyCaseFile> files = {
      {"bin/tool", 0755, "#!/bin/sh\necho tool\n"},
      {"conf.txt", 0644, "key = new\n"},
      {"deep/er/\xc3\xbc" "ber.txt", 0600, "gr\xc3\xbc\xc3\x9f dich\n"},
      {"empty.txt", 0644, ""},
      {"etc/app/main.conf", 0600, "main = 2\n"},
      {"etc/app/new.d/x.conf", 0644, "x = 1\n"},
      {"etc/app/old.conf", 0, nullptr},
      {"etc/private", 0700, "secret\n"},
      {"old.txt", 0, nullptr},
  };
  return files;
}

// The case "links" (test_links_v2.cpp): every way a plan changes a link,
// in path order. The root holds before: file-was-link -> "old/text",
// gone-link -> "/etc/passwd", link-was-file (a file), relink -> "first",
// same-link -> "same" (a no-op, left out of the sealed plan).
std::vector<g::Operation> links_case() {
  return {{"write", 0600, "file-was-link"},
          {"remove", 0, "gone-link"},
          g::link_operation("link-was-file", "/absolute/target"),
          g::link_operation("links.d/new", "../file-was-link"),
          g::link_operation("new-link", "dangling \x1b[31mred\x1b[0m text"),
          g::link_operation("relink", "second"),
          g::link_operation("same-link", "same")};
}
const char* const kFileWasLinkBytes = "now a file\n";

// The cases named cas_* declare digests (test_general_plan.cpp,
// "DeclaredDigests"): new.txt ("new\n") and, unless cas_noop, same.txt
// ("unchanged\n", which the root already holds).
bool declaring() { return g_case.rfind("cas_", 0) == 0; }

g::Operation declared_write(std::string path, std::string_view bytes) {
  return g::Operation{"write", 0644, std::move(path), std::nullopt, g::Digest{dot::sha256_hex(bytes), bytes.size()}};
}

// The cases named cas_many* declare 3,000 new files many/f1000 to
// many/f3999: both answers are sent in batches (the runtime sends a list of
// more than 1024 as batches of 1024, the rest in the result).
bool many() { return g_case.rfind("cas_many", 0) == 0; }
std::string many_bytes(const std::string& path) { return "bytes of " + path + "\n"; }

// What a cas_* case stages of what core asked for (recorded in `asked`).
Result<std::vector<g::Artifact>> materialize_declared(g::Context& ctx, const std::string& stage) {
  const std::string& c = g_case;
  std::ofstream out(g_base + "/asked");
  std::vector<g::Artifact> arts;
  for (const auto& path : ctx.paths_to_stage()) {
    out << path << "\n";
    std::string bytes = many() ? many_bytes(path) : path == "new.txt" ? "new\n" : "unchanged\n";
    if (c == "cas_other_bytes" || c == "cas_claim_declared_stage_other") bytes = "evil\n";
    DOT_ASSIGN_OR_RETURN(g::Artifact a, g::write_staged_file(stage, path, bytes));
    if (c == "cas_claim_declared_stage_other") a.sha256 = dot::sha256_hex("new\n"), a.size = 4;
    // A claim in the second batch other than its declaration.
    if (c == "cas_many_late_lie" && path == "many/f2500") a.sha256 = dot::sha256_hex("other\n"), a.size = 6;
    arts.push_back(std::move(a));
  }
  // Two claims of the result's part out of order.
  if (c == "cas_many_swapped" && arts.size() > 2501) std::swap(arts[2500], arts[2501]);
  if (c == "cas_unasked_artifact" || c == "cas_unasked_file") {
    DOT_ASSIGN_OR_RETURN(g::Artifact same, g::write_staged_file(stage, "same.txt", "unchanged\n"));
    if (c == "cas_unasked_artifact") arts.push_back(std::move(same));
  }
  return arts;
}

class GeneralPlugin final : public g::Plugin {
 public:
  std::string id() const override { return "org.test.gplan"; }
  bool wants_log() const override { return true; }
  bool declares_digests() const override { return declaring(); }

  Result<std::vector<g::Operation>> plan(g::Context& ctx, const std::vector<std::string>& managed) override {
    DOT_ASSIGN_OR_RETURN(std::vector<g::Operation> ops, plan_case(ctx, managed));
    written_.clear();
    for (const auto& op : ops)
      if (op.action == "write") written_.push_back(op.path);
    return ops;
  }

 private:
  static std::vector<g::Operation> one_of(std::string path) { return {{"write", 0644, std::move(path)}}; }

  Result<std::vector<g::Operation>> plan_case(g::Context& ctx, const std::vector<std::string>& managed) {
    const std::string& c = g_case;
    {
      // What dot.plan's managed held, one path per line, for the test.
      std::ofstream out(g_base + "/managed");
      for (const auto& m : managed) out << m << "\n";
    }
    if (c == "hello_owned") return std::vector<g::Operation>{{"write", 0644, "hello.txt"}};
    if (c == "cas_noop") return std::vector<g::Operation>{declared_write("same.txt", "unchanged\n")};
    if (many()) {
      std::vector<g::Operation> ops;
      for (int i = 1000; i < 4000; ++i) {
        std::string path = "many/f" + std::to_string(i);
        std::string bytes = many_bytes(path);
        ops.push_back(declared_write(std::move(path), bytes));
      }
      return ops;
    }
    if (declaring())
      return std::vector<g::Operation>{declared_write("new.txt", "new\n"), declared_write("same.txt", "unchanged\n")};
    if (c == "seal") {
      DOT_TRY(ctx.log("info", "proposing 5 operations"));
      DOT_TRY(ctx.log("warning", "escape \x1b[31mred\x1b[0m and a\nnew line"));
      return std::vector<g::Operation>{{"write", 0755, "bin/tool"},
                                       {"write", 0644, "conf.txt"},
                                       {"write", 0600, kUtf8Name},
                                       {"remove", 0, "old.txt"},
                                       {"write", 0644, "same.txt"}};
    }
    if (c == "noop") return std::vector<g::Operation>{{"remove", 0, "absent.txt"}, {"write", 0644, "same.txt"}};
    // Modes kept as asked, folders created with the modes the plan names.
    if (c == "modes" || c == "folder_mode_bad" || c == "folder_not_parent")
      return std::vector<g::Operation>{{"write", 0640, "etc/app/main.conf"}, {"write", 0750, "etc/tool"},
                                       {"write", 0664, "shared.txt"}};
    // A write onto an existing file nobody manages (the test made it).
    if (c == "take_over") return std::vector<g::Operation>{{"write", 0644, "conf.txt"}, {"write", 0600, "new.txt"}};
    // Three targets outside the policy (the test made them folders) and one
    // good one: the refusal names all three.
    if (c == "many_bad")
      return std::vector<g::Operation>{
          {"write", 0644, "bad1"}, {"write", 0644, "bad2"}, {"write", 0644, "bad3"}, {"write", 0644, "good"}};
    if (c == "nested_root") return one_of("inner/conf.txt");
    if (c == "exclude")
      return std::vector<g::Operation>{{"write", 0644, ".cache/x/y"}, {"write", 0644, "a.swp"},
                                       {"write", 0644, "keep.txt"},   {"write", 0644, "sub/b.swp"},
                                       {"write", 0644, "sub/keep"}};
    if (c == "apply") {
      std::vector<g::Operation> ops;
      for (const auto& f : apply_case_files()) ops.push_back({f.bytes ? "write" : "remove", f.mode, f.path});
      return ops;
    }
    if (c == "links") return links_case();
    auto link = [](std::string path, std::string text) {
      return std::vector<g::Operation>{g::link_operation(std::move(path), std::move(text))};
    };
    if (c == "link_nul") return link("ln", std::string("a\0b", 3));
    if (c == "link_too_long") return link("ln", std::string(4096, 't'));
    if (c == "link_empty") return link("ln", "");
    if (c == "link_symlinked_parent") return link("link/ln", "anywhere");
    if (c == "link_with_mode") {
      g::Operation op = g::link_operation("ln", "text");
      op.mode = 0644;
      return std::vector<g::Operation>{op};
    }
    if (c == "write_with_link_text") {
      g::Operation op{"write", 0644, "a.txt"};
      op.link_text = "text";
      return std::vector<g::Operation>{op};
    }
    auto one = [](std::string path) { return std::vector<g::Operation>{{"write", 0644, std::move(path)}}; };
    if (c == "unsorted") return std::vector<g::Operation>{{"write", 0644, "b"}, {"write", 0644, "a"}};
    if (c == "duplicate") return std::vector<g::Operation>{{"write", 0644, "a"}, {"write", 0644, "a"}};
    if (c == "parent_of") return std::vector<g::Operation>{{"write", 0644, "a"}, {"write", 0644, "a/b"}};
    if (c == "dot_dot") return one("a/../b");
    if (c == "absolute") return one("/etc/passwd");
    if (c == "nul") return one(std::string("a\0b", 3));
    if (c == "control") return one("a\x1b" "b");
    if (c == "not_utf8") return one("NOT-UTF8");  // rewritten on the way out
    if (c == "component_too_long") return one(std::string(256, 'c'));
    if (c == "path_too_long") {
      std::string p;
      while (p.size() < 4096) p += std::string(200, 'p') + "/";
      return one(p + "f");
    }
    if (c == "state_folder") return one(".dot/evil");
    if (c == "reserved_temp") return one(".dot-tmp-0123456789abcdef0123456789abcdef");
    if (c == "reserved_temp_nested") return one("folder/.dot-tmp-0123456789abcdef0123456789abcdef");
    if (c == "reserved_reference") return one(".dot-history/1");
    if (c == "symlinked_parent") return one("link/file");
    if (c == "target_folder") return one("folder");
    if (c == "bad_mode") return std::vector<g::Operation>{{"write", 0666, "a"}};
    if (c == "error_response") return one("a");  // answered with an error on the way out
    if (c == "handler_error") return dot::make_error(dot::test::ErrorKind::Source, "the source folder is gone");
    if (c == "total_over_max") {
      std::vector<g::Operation> ops;
      for (int i = 0; i < 65; ++i) ops.push_back({"write", 0644, "f" + std::to_string(100 + i)});
      return ops;
    }
    return one("a.txt");
  }

  std::vector<g::FolderRequest> folders() const override {
    if (g_case == "modes") return {{0750, "etc"}, {0755, "etc/app"}};
    if (g_case == "apply") return {{0750, "bin"}, {0755, "deep"}};
    if (g_case == "folder_mode_bad") return {{0777, "etc"}};
    if (g_case == "folder_not_parent") return {{0700, "elsewhere"}};
    return {};
  }

  Result<std::vector<g::Artifact>> materialize(g::Context& ctx, const std::string& stage) override {
    const std::string& c = g_case;
    if (declaring()) return materialize_declared(ctx, stage);
    if (c == "modes" || c == "take_over" || c == "exclude") {
      std::vector<g::Artifact> out;
      for (const auto& path : written_) {
        DOT_ASSIGN_OR_RETURN(g::Artifact a, g::write_staged_file(stage, path, "bytes of " + path + "\n"));
        out.push_back(std::move(a));
      }
      return out;
    }
    if (c == "seal") {
      std::vector<g::Artifact> out;
      DOT_ASSIGN_OR_RETURN(g::Artifact tool, g::write_staged_file(stage, "bin/tool", binary_bytes()));
      DOT_ASSIGN_OR_RETURN(g::Artifact conf, g::write_staged_file(stage, "conf.txt", "key = new\nother = 1\n"));
      DOT_ASSIGN_OR_RETURN(g::Artifact uber, g::write_staged_file(stage, kUtf8Name, "gr\xc3\xbc\xc3\x9f dich\n"));
      DOT_ASSIGN_OR_RETURN(g::Artifact same, g::write_staged_file(stage, "same.txt", "unchanged\n"));
      return std::vector<g::Artifact>{tool, conf, uber, same};
    }
    if (c == "apply") {
      std::vector<g::Artifact> out;
      for (const auto& f : apply_case_files()) {
        if (!f.bytes) continue;
        DOT_ASSIGN_OR_RETURN(g::Artifact a, g::write_staged_file(stage, f.path, f.bytes));
        out.push_back(std::move(a));
      }
      return out;
    }
    if (c == "links") {
      DOT_ASSIGN_OR_RETURN(g::Artifact file, g::write_staged_file(stage, "file-was-link", kFileWasLinkBytes));
      return std::vector<g::Artifact>{file};
    }
    if (c == "noop") {
      DOT_ASSIGN_OR_RETURN(g::Artifact same, g::write_staged_file(stage, "same.txt", "unchanged\n"));
      return std::vector<g::Artifact>{same};
    }
    if (c == "total_over_max") return std::vector<g::Artifact>{};  // claims rewritten on the way out
    DOT_ASSIGN_OR_RETURN(g::Artifact a, g::write_staged_file(stage, "a.txt", "staged\n"));
    const std::string file = stage + "/a.txt";
    if (c == "file_over_max") {
      // The file really is one byte over max_file_bytes, and claimed so.
      if (::truncate(file.c_str(), static_cast<off_t>(g::kLimits.max_file_bytes + 1)) != 0) std::exit(98);
      std::ifstream in(file, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      a.size = bytes.size();
      a.sha256 = dot::sha256_hex(bytes);
    } else if (c == "extra_file") {
      DOT_ASSIGN_OR_RETURN(g::Artifact extra, g::write_staged_file(stage, "more/extra.txt", "not claimed\n"));
      (void)extra;
    } else if (c == "staged_symlink") {
      ::unlink(file.c_str());
      if (::symlink("/etc/hostname", file.c_str()) != 0) std::exit(98);
    } else if (c == "staged_symlink_folder") {
      if (::symlink("/etc", (stage + "/elsewhere").c_str()) != 0) std::exit(98);
    } else if (c == "hard_link") {
      if (::link(file.c_str(), (stage + "/b.txt").c_str()) != 0) std::exit(98);
    } else if (c == "wrong_digest") {
      a.sha256 = std::string(64, '0');
    } else if (c == "wrong_size") {
      a.size += 1;
    }
    return std::vector<g::Artifact>{a};
  }

  std::vector<std::string> written_;  // the writes of the last plan, in order
};

// Rewrites one frame the runtime writes, for the cases that send what the
// runtime never would.
class CaseSink final : public dot::ByteSink {
 public:
  explicit CaseSink(dot::ByteSink& raw) : raw_(raw) {}
  Status write(std::string_view bytes) override {
    auto at = bytes.find("\r\n\r\n");
    std::string body(at == std::string_view::npos ? bytes : bytes.substr(at + 4));
    const bool plan = body.find("\"id\":2,") != std::string::npos;
    const bool materialize = body.find("\"id\":3,") != std::string::npos;
    namespace h = dot::dpp::hostile;
    if (g_case == "not_utf8" && plan) return raw_.write(h::frame(h::replace(body, "NOT-UTF8", "a\xff" "b")));
    if (g_case == "error_response" && plan)
      return raw_.write(h::frame(
          "{\"error\":{\"code\":-32001,\"data\":{\"missing\":\"/src\"},\"message\":\"no source folder\"},\"id\":2,"
          "\"jsonrpc\":\"2.0\"}"));
    if (g_case == "total_over_max" && materialize) {
      std::string arts;
      for (int i = 0; i < 65; ++i)
        arts += (i ? "," : "") + std::string("{\"path\":\"f") + std::to_string(100 + i) + "\",\"sha256\":\"" +
                std::string(64, 'a') + "\",\"size\":16777216}";
      return raw_.write(h::frame("{\"id\":3,\"jsonrpc\":\"2.0\",\"result\":{\"artifacts\":[" + arts + "]}}"));
    }
    return raw_.write(bytes);
  }

 private:
  dot::ByteSink& raw_;
};

}  // namespace

int main() {
  const char* stage = std::getenv("DOT_STAGE_ROOT");
  if (!stage) return 97;
  g_base = base_of_stage(stage);
  {
    std::ifstream in(g_base + "/case");
    std::getline(in, g_case);
    std::ofstream(g_base + "/pid") << ::getpid() << "\n";
  }
  GeneralPlugin plugin;
  dot::FdSource in(STDIN_FILENO, "standard input");
  dot::FdSink out(STDOUT_FILENO, "standard output");
  dot::FdSink err(STDERR_FILENO, "standard error");
  CaseSink sink(out);
  return g::serve(plugin, in, sink, err);
}
