// dot-core jcs canonicalize|hash: canonical JSON (docs/spec/jcs.md) from the command line.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "dot/base/error_kinds.h"
#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/base/padded_text.h"
#include "dot/base/sha256.h"
#include "dot/metewand/canonical_json.h"
#include "json_writer.h"
#include "numbers.h"
#include "output.h"

namespace dot::cli {
namespace {

struct JcsOptions {
  std::string profile = "rfc8785";
  std::vector<std::string> files;
  std::size_t max_bytes = json::ReadLimits{}.max_bytes;
  std::size_t max_depth = json::ReadLimits{}.max_depth;
  bool json = false;
};

Error too_large_error(const std::string& path, std::size_t max_bytes) {
  return make_parse_error(base::ErrorKind::TooLarge, max_bytes,
                          fmt::format("{} is larger than the limit of {} bytes", path, max_bytes));
}

// canonicalize of a file or of standard input, streamed: the input read
// whole into one padded buffer that the parser reads in place (no further
// copy), the output written to stdout in 1 MiB pieces as it is produced
// (the checks that can refuse the text all run first, so a refusal writes
// nothing). nullopt when the file cannot be opened: read_file reports it.
std::optional<Status> stream_canonical_file(const std::string& path, jcs::Profile profile, const JcsOptions& o) {
  UniqueFd opened;
  int fd = STDIN_FILENO;
  if (path != "-") {
    opened.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!opened) return std::nullopt;
    fd = opened.get();
  }
  struct stat st {};
  std::size_t expected = 0;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    expected = static_cast<std::size_t>(st.st_size);
    if (expected > o.max_bytes) return Status(too_large_error(path, o.max_bytes));
  }
  auto text = json::PaddedText::read(fd, o.max_bytes, expected, path == "-" ? "standard input" : path);
  if (!text.ok()) {
    Error e = std::move(text).error();
    if (e.is(base::ErrorKind::FileTooLarge)) return Status(too_large_error(path, o.max_bytes));
    return Status(std::move(e));
  }
  json::ReadLimits limits;
  limits.max_bytes = o.max_bytes;
  limits.max_depth = o.max_depth;
  Status written = jcs::canonicalize_text_to(
      text->bytes(), profile,
      [](std::string_view piece) -> Status {
        if (!write_stdout(piece)) return stdout_error();
        return {};
      },
      limits, true);
  if (!written.ok()) {
    Error e = std::move(written).error();
    if (profile == jcs::Profile::Metewand) e.kind = metewand::canonical_json_kind(e, text->bytes());
    if (e.code != Code::Io && path != "-") e.detail += fmt::format(" (in {})", path);
    return Status(std::move(e));
  }
  return Status();
}

// Reads and canonicalizes one file; errors name the file.
Result<std::string> canonical_bytes_of(const std::string& path, jcs::Profile profile, const JcsOptions& o) {
  json::ReadLimits limits;
  limits.max_bytes = o.max_bytes;
  limits.max_depth = o.max_depth;
  auto bytes = read_file(path, o.max_bytes);
  if (!bytes.ok()) {
    Error e = std::move(bytes).error();
    if (e.is(base::ErrorKind::FileTooLarge))  // the reader's own kind and offset for an oversized input
      return too_large_error(path, o.max_bytes);
    return e;
  }
  auto canonical = jcs::canonicalize_text(*bytes, profile, limits);
  if (!canonical.ok()) {
    Error e = std::move(canonical).error();
    if (profile == jcs::Profile::Metewand) e.kind = metewand::canonical_json_kind(e, *bytes);
    if (path != "-") e.detail += fmt::format(" (in {})", path);
    return e;
  }
  return canonical;
}

void add_common_options(CLI::App* cmd, JcsOptions& o) {
  cmd->add_option("--profile", o.profile, "Canonical profile: rfc8785 (default), hello or metewand")
      ->check(CLI::IsMember({"rfc8785", "hello", "metewand"}));
  add_count_option(cmd, "--max-bytes", o.max_bytes, "Refuse inputs larger than this (default 64 MiB)");
  add_count_option(cmd, "--max-depth", o.max_depth, "Refuse nesting deeper than this (default 128)");
  cmd->add_flag("--json", o.json, "Machine-readable output (and errors as a JSON object on stdout)");
}

int run_canonicalize(const JcsOptions& o) {
  jcs::Profile profile = *jcs::profile_from_name(o.profile);
  std::string path = o.files.empty() ? "-" : o.files.front();
  if (!o.json) {
    if (auto streamed = stream_canonical_file(path, profile, o)) {
      if (!streamed->ok()) return report(streamed->error(), false);
      return kExitOk;
    }
  }
  auto canonical = canonical_bytes_of(path, profile, o);
  if (!canonical.ok()) return report(canonical.error(), o.json);
  std::string out;
  if (o.json) {
    // {"canonical":...,"profile":...,"sha256":...} is itself canonical.
    JsonWriter w;
    w.begin_object().key("canonical").string(*canonical).key("profile").string(o.profile);
    w.key("sha256").string(sha256_hex(*canonical)).end_object();
    out = std::move(w).line();
  } else {
    out = std::move(*canonical);  // the canonical bytes exactly: data, not text for a person
  }
  if (!write_stdout(out)) return report(stdout_error(), false);
  return kExitOk;
}

int run_hash(const JcsOptions& o) {
  jcs::Profile profile = *jcs::profile_from_name(o.profile);
  // Every file is checked before anything is printed: no partial output.
  std::vector<std::pair<std::string, std::string>> digests;
  for (const std::string& path : o.files) {
    auto canonical = canonical_bytes_of(path, profile, o);
    if (!canonical.ok()) return report(canonical.error(), o.json);
    digests.emplace_back(path, sha256_hex(*canonical));
  }
  bool written = false;
  if (o.json) {
    JsonWriter w;
    w.begin_object().key("hashes").begin_array();
    for (const auto& [path, hex] : digests)
      w.begin_object().key("file").string(path).key("sha256").string(hex).end_object();
    w.end_array().key("profile").string(o.profile).end_object();
    written = write_stdout(std::move(w).line());
  } else {
    std::string out;
    for (const auto& [path, hex] : digests) out += fmt::format("{}  {}\n", hex, shown(path));
    written = print_text(out);
  }
  if (!written) return report(stdout_error(), false);
  return kExitOk;
}

}  // namespace

void add_jcs_commands(CLI::App& app, Context& ctx) {
  auto* jcs = app.add_subcommand("jcs", "Canonical JSON (RFC 8785 and the hello/metewand profiles)");
  jcs->require_subcommand(1);
  jcs->footer("Examples:\n  dot-core jcs canonicalize doc.json\n  dot-core jcs hash --profile hello a.json b.json");

  auto canon_opts = std::make_shared<JcsOptions>();
  auto* canon = jcs->add_subcommand("canonicalize", "Write the canonical bytes of one JSON text to stdout");
  add_common_options(canon, *canon_opts);
  canon->add_option("FILE", canon_opts->files, "Input file, or - for standard input (the default)")->expected(0, 1);
  canon->footer(
      "Examples:\n"
      "  dot-core jcs canonicalize doc.json > doc.canonical.json\n"
      "  echo '{\"b\":1,\"a\":[1e3,-0]}' | dot-core jcs canonicalize   # {\"a\":[1000,0],\"b\":1}\n"
      "  dot-core jcs canonicalize --profile hello plan.json\n"
      "Invalid input exits 1 with `DOT_E_VALIDATION: <kind> at byte <offset>: ...` on stderr\n"
      "and nothing on stdout.");
  canon->callback([&ctx, canon_opts] { ctx.action = [canon_opts] { return run_canonicalize(*canon_opts); }; });

  auto hash_opts = std::make_shared<JcsOptions>();
  auto* hash = jcs->add_subcommand("hash", "Print the SHA-256 of the canonical bytes of each file");
  add_common_options(hash, *hash_opts);
  hash->add_option("FILE", hash_opts->files, "Input files (- for standard input)")->required();
  hash->footer(
      "Examples:\n"
      "  dot-core jcs hash doc.json            # <sha256 hex>  doc.json\n"
      "  dot-core jcs hash --profile hello --json a.json b.json\n"
      "Nothing is printed unless every file is valid for the profile.");
  hash->callback([&ctx, hash_opts] { ctx.action = [hash_opts] { return run_hash(*hash_opts); }; });
}

}  // namespace dot::cli
