// dot-core vectors replay: runs canonical-JSON vectors (docs/spec/jcs.md).
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/base/jcs_vectors.h"
#include "dot/metewand/canonical_json.h"
#include "error_kinds.h"
#include "json_writer.h"
#include "output.h"

namespace dot::cli {
namespace {

struct ReplayArgs {
  std::vector<std::string> paths;
  bool strict_kinds = false;
  std::string profile;  // for documents that name none; "": rfc8785
  bool json = false;
};

int run_replay(const ReplayArgs& a) {
  jcs::ReplayOptions options;
  options.strict_kinds = a.strict_kinds;
  if (!a.profile.empty()) options.profile = jcs::profile_from_name(a.profile);
  // Metewand names its rejections its own way (the public vectors' kinds).
  options.kind_of = [](const Error& e, std::string_view input, jcs::Profile profile) {
    return std::string(profile == jcs::Profile::Metewand ? metewand::canonical_json_kind(e, input).name()
                                                         : e.kind.name());
  };
  jcs::ReplayReport results;
  for (const std::string& p : a.paths) {
    Status st = jcs::replay_vectors(p, options, results);
    if (!st.ok()) return cli::report(st.error(), a.json);
  }
  if (results.passed == 0 && results.failures.empty())
    return cli::report(make_error(cli::ErrorKind::NoVectors, "no vectors found in the given paths"), a.json);

  bool written = false;
  if (a.json) {
    JsonWriter w;
    w.begin_object().key("failed").number(results.failures.size()).key("failures").begin_array();
    for (const auto& f : results.failures) {
      w.begin_object().key("detail").string(f.detail).key("name").string(f.name);
      if (f.offset) w.key("offset").number(*f.offset);
      w.end_object();
    }
    w.end_array().key("passed").number(results.passed).end_object();
    written = write_stdout(std::move(w).line());
  } else {
    std::string out;
    for (const auto& f : results.failures) out += fmt::format("FAIL {}: {}\n", shown(f.name), shown(f.detail));
    out += fmt::format("{} passed, {} failed\n", results.passed, results.failures.size());
    written = print_text(out);
  }
  if (!written) return cli::report(stdout_error());
  return results.failures.empty() ? kExitOk : kExitError;
}

}  // namespace

void add_vectors_commands(CLI::App& app, Context& ctx) {
  auto* vectors = app.add_subcommand("vectors", "Test vectors");
  vectors->require_subcommand(1);
  vectors->footer("Example:\n  dot-core vectors replay vectors/jcs");

  auto args = std::make_shared<ReplayArgs>();
  auto* replay = vectors->add_subcommand("replay", "Run canonical-JSON vectors and report every failure");
  replay->add_option("PATH", args->paths, "Vector directories or files")->required();
  replay->add_flag("--strict-kinds", args->strict_kinds,
                   "Rejected vectors must fail with the kind they name (informational otherwise)");
  replay
      ->add_option("--profile", args->profile,
                   "Profile of a JSON fixture that names none (default rfc8785; metewand for the public Metewand "
                   "vectors, whose kinds are then Metewand's names)")
      ->check(CLI::IsMember({"rfc8785", "hello", "metewand"}));
  replay->add_flag("--json", args->json, "Print {\"failed\":N,\"failures\":[...],\"passed\":N}");
  replay->footer(
      "Layouts (docs/spec/jcs.md): input/ + output/ directories, JSON fixture files\n"
      "({\"version\":1,\"profile\":...,\"accepted\":[...],\"rejected\":[...]}), and number\n"
      "files of \"<hex bits>,<expected>\" lines (*.numbers or numbers/*.txt).\n"
      "Examples:\n"
      "  dot-core vectors replay vectors/jcs\n"
      "  dot-core vectors replay --strict-kinds vectors/jcs/hello.json\n"
      "  dot-core vectors replay --profile metewand --strict-kinds canonical-json/v1.json\n"
      "Prints `FAIL <vector>: <reason>` per failure and ends with `N passed, N failed`;\n"
      "exits 0 only when nothing failed.");
  replay->callback([&ctx, args] { ctx.action = [args] { return run_replay(*args); }; });
}

}  // namespace dot::cli
