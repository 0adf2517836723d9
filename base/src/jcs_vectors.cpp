// Vector replay for canonical JSON (docs/spec/jcs.md, "Vectors and dot-core vectors replay").
#include "dot/base/jcs_vectors.h"
#include "dot/base/error_kinds.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "dot/base/fd.h"
#include "dot/base/jcs.h"
#include "dot/base/json.h"
#include "dot/base/sha256.h"
#include "json_internal.h"

namespace dot::jcs {
namespace fs = std::filesystem;

bool rejection_kind_matches(std::string_view expected, std::string_view actual) noexcept {
  if (expected == actual) return true;
  if (expected == "invalid_json")
    return actual == "malformed" || actual == "trailing" || actual == "bom" || actual == "depth" ||
           actual == "too_large";
  if (expected == "invalid_unicode") return actual == "utf8";
  return false;
}

namespace {

constexpr std::size_t kMaxVectorFile = 256 * 1024 * 1024;

std::size_t first_difference(std::string_view a, std::string_view b) {
  std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

std::string show_byte(std::string_view s, std::size_t at) {
  if (at >= s.size()) return "end of output";
  return fmt::format("0x{:02x}", static_cast<unsigned>(static_cast<unsigned char>(s[at])));
}

std::string short_text(std::string_view s) { return json::detail::quote_for_detail(s); }

class Replayer {
 public:
  Replayer(const ReplayOptions& options, ReplayReport& report) : options_(options), report_(report) {}

  Status path(const fs::path& p) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (ec || !fs::exists(st))
      return make_error(base::ErrorKind::Open,
                        fmt::format("cannot read vectors at {}: no such file or directory", p.string()));
    if (fs::is_directory(st)) return directory(p);
    file(p, /*named=*/true);
    return {};
  }

 private:
  void fail(std::string name, std::optional<std::uint64_t> offset, std::string detail) {
    report_.failures.push_back(VectorFailure{std::move(name), offset, std::move(detail)});
  }
  void pass() { ++report_.passed; }

  // Compares produced bytes with the expected ones; true when equal.
  bool compare(const std::string& name, std::string_view expected, std::string_view got, std::string_view what) {
    if (expected == got) return true;
    std::size_t at = first_difference(expected, got);
    fail(name, at,
         fmt::format("{} differs at byte {} (expected {}, got {}): expected {}, got {}", what, at,
                     show_byte(expected, at), show_byte(got, at), short_text(expected.substr(at > 20 ? at - 20 : 0)),
                     short_text(got.substr(at > 20 ? at - 20 : 0))));
    return false;
  }

  Status directory(const fs::path& dir) {
    std::vector<fs::path> entries;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) entries.push_back(it->path());
    if (ec) return make_error(base::ErrorKind::Read, fmt::format("cannot list {}: {}", dir.string(), ec.message()));
    std::sort(entries.begin(), entries.end());
    bool io_layout = fs::is_directory(dir / "input") && fs::is_directory(dir / "output");
    if (io_layout) DOT_TRY(input_output(dir));
    for (const fs::path& e : entries) {
      std::string leaf = e.filename().string();
      if (io_layout && (leaf == "input" || leaf == "output" || leaf == "outhex")) continue;
      if (fs::is_directory(e)) {
        DOT_TRY(directory(e));
      } else if (fs::is_regular_file(e)) {
        file(e, /*named=*/false);
      }
    }
    return {};
  }

  void file(const fs::path& f, bool named) {
    std::string leaf = f.filename().string();
    bool in_numbers = f.has_parent_path() && f.parent_path().filename() == "numbers";
    if (f.extension() == ".numbers" || (in_numbers && f.extension() == ".txt")) {
      numbers(f);
    } else if (f.extension() == ".json") {
      fixture(f, named);
    } else if (named) {
      fail(f.string(), std::nullopt, "not a vector file (expected *.json, *.numbers or numbers/*.txt)");
    } else {
      report_.skipped.push_back(f.string());
    }
  }

  // Layout 1: input/<name> canonicalizes (rfc8785) to output/<name>.
  Status input_output(const fs::path& dir) {
    std::vector<fs::path> inputs;
    std::error_code ec;
    for (fs::directory_iterator it(dir / "input", ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file()) inputs.push_back(it->path());
    if (ec)
      return make_error(base::ErrorKind::Read,
                        fmt::format("cannot list {}: {}", (dir / "input").string(), ec.message()));
    std::sort(inputs.begin(), inputs.end());
    for (const fs::path& in : inputs) {
      std::string name = in.string();
      fs::path out = dir / "output" / in.filename();
      auto input = read_file(in.string(), kMaxVectorFile);
      if (!input.ok()) {
        fail(name, std::nullopt, input.error().line());
        continue;
      }
      auto expected = read_file(out.string(), kMaxVectorFile);
      if (!expected.ok()) {
        fail(name, std::nullopt, fmt::format("no expected output: {}", expected.error().line()));
        continue;
      }
      auto got = canonicalize_text(*input, Profile::Rfc8785);
      if (!got.ok()) {
        fail(name, std::nullopt, fmt::format("rejected: {}", got.error().line()));
        continue;
      }
      if (compare(name, *expected, *got, "canonical output")) pass();
    }
    return {};
  }

  // Layout 3: "<hex of IEEE-754 bits>,<expected ECMAScript string>" per line.
  void numbers(const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      fail(f.string(), std::nullopt, "cannot open number file");
      return;
    }
    std::string line;
    std::string got;
    std::size_t lineno = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line[0] == '#') continue;  // our comment lines; the ES6 file has none
      std::string name = fmt::format("{}:{}", f.string(), lineno);
      auto comma = line.find(',');
      std::uint64_t bits = 0;
      auto hex = std::string_view(line).substr(0, comma == std::string::npos ? 0 : comma);
      auto res = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
      if (comma == std::string::npos || hex.empty() || hex.size() > 16 || res.ptr != hex.data() + hex.size()) {
        fail(name, std::nullopt, "not a \"<hex>,<expected>\" line");
        continue;
      }
      double d;
      std::memcpy(&d, &bits, sizeof d);
      if (!std::isfinite(d)) {
        fail(name, std::nullopt, "bit pattern is not a finite number");
        continue;
      }
      got.clear();
      append_number(got, d);
      if (compare(name, std::string_view(line).substr(comma + 1), got, "number")) pass();
    }
  }

  // Layout 2: a JSON fixture file.
  void fixture(const fs::path& f, bool named) {
    std::string file = f.string();
    auto bytes = read_file(file, kMaxVectorFile);
    if (!bytes.ok()) {
      fail(file, std::nullopt, bytes.error().line());
      return;
    }
    auto doc = json::parse(*bytes);
    if (!doc.ok()) {
      fail(file, std::nullopt, fmt::format("unreadable fixture: {}", doc.error().line()));
      return;
    }
    json::Value root = doc->root();
    // Other JSON files may live beside the vectors; only fixtures are run.
    if (!named && !(root.is_object() && root.find("version") && (root.find("accepted") || root.find("rejected")))) {
      report_.skipped.push_back(file);
      return;
    }
    json::ObjectReader top(root, "vector fixture");
    auto version = top.required_uint("version", 1000);
    auto profile_value = top.optional("profile");
    auto accepted = top.optional("accepted");
    auto rejected = top.optional("rejected");
    auto description = top.optional("description");
    Status shape = top.finish();
    if (!version.ok() || !shape.ok()) {
      fail(file, std::nullopt,
           fmt::format("unreadable fixture: {}", (!version.ok() ? version.error() : shape.error()).line()));
      return;
    }
    if (*version != 1) {
      fail(file, std::nullopt, fmt::format("unsupported fixture version {}", *version));
      return;
    }
    Profile profile = options_.profile.value_or(Profile::Rfc8785);
    if (profile_value) {
      auto p = profile_value->is_string() ? profile_from_name(profile_value->as_string()) : std::nullopt;
      if (!p) {
        fail(file, std::nullopt, "unreadable fixture: \"profile\" must be \"rfc8785\", \"hello\" or \"metewand\"");
        return;
      }
      profile = *p;
    }
    if ((accepted && !accepted->is_array()) || (rejected && !rejected->is_array()) ||
        (description && !description->is_string())) {
      fail(file, std::nullopt,
           "unreadable fixture: \"accepted\"/\"rejected\" must be arrays, \"description\" a string");
      return;
    }
    std::size_t index = 0;
    if (accepted)
      for (json::Value v : accepted->elements()) accepted_vector(file, index++, v, profile);
    index = 0;
    if (rejected)
      for (json::Value v : rejected->elements()) rejected_vector(file, index++, v, profile);
  }

  // The input of a vector: "input" (a JSON text in a string) or "input_hex".
  static Result<std::string> vector_input(json::ObjectReader& r) {
    auto text = r.optional("input");
    auto hex = r.optional("input_hex");
    if (text.has_value() == hex.has_value())
      return make_error(base::ErrorKind::Malformed, "a vector needs exactly one of \"input\" and \"input_hex\"");
    if (text) {
      if (!text->is_string()) return make_error(base::ErrorKind::WrongType, "\"input\" must be a string");
      return std::string(text->as_string());
    }
    if (!hex->is_string() || hex->as_string().size() % 2 != 0)
      return make_error(base::ErrorKind::WrongType, "\"input_hex\" must be a string of hex byte pairs");
    std::string_view h = hex->as_string();
    std::string out;
    for (std::size_t i = 0; i < h.size(); i += 2) {
      unsigned v = 0;
      auto res = std::from_chars(h.data() + i, h.data() + i + 2, v, 16);
      if (res.ptr != h.data() + i + 2)
        return make_error(base::ErrorKind::WrongType, "\"input_hex\" must be a string of hex byte pairs");
      out += static_cast<char>(v);
    }
    return out;
  }

  static std::string vector_name(const std::string& file, std::size_t index, json::Value v) {
    auto n = v.is_object() ? v.find("name") : std::nullopt;
    if (n && n->is_string()) return fmt::format("{}#{}", file, n->as_string());
    return fmt::format("{}#{}", file, index);
  }

  void accepted_vector(const std::string& file, std::size_t index, json::Value v, Profile profile) {
    std::string name = vector_name(file, index, v);
    json::ObjectReader r(v, "accepted vector");
    auto vname = r.required_string("name");
    auto input = vector_input(r);
    auto canonical = r.required_string("canonical");
    auto sha = r.optional("sha256");
    r.optional("note");
    Status shape = r.finish();
    for (const Error* e : {vname.ok() ? nullptr : &vname.error(), input.ok() ? nullptr : &input.error(),
                           canonical.ok() ? nullptr : &canonical.error(), shape.ok() ? nullptr : &shape.error()}) {
      if (e) {
        fail(name, std::nullopt, fmt::format("unreadable vector: {}", e->line()));
        return;
      }
    }
    if (sha && !sha->is_string()) {
      fail(name, std::nullopt, "unreadable vector: \"sha256\" must be a string");
      return;
    }
    auto got = canonicalize_text(*input, profile);
    if (!got.ok()) {
      fail(name, std::nullopt, fmt::format("rejected, but the vector expects acceptance: {}", got.error().line()));
      return;
    }
    if (!compare(name, *canonical, *got, "canonical output")) return;
    if (sha) {
      std::string digest = sha256_hex(*got);
      if (digest != sha->as_string()) {
        fail(name, std::nullopt,
             fmt::format("sha256 {} differs from the vector's {}", digest, short_text(sha->as_string())));
        return;
      }
    }
    auto again = canonicalize_text(*got, profile);
    if (!again.ok()) {
      fail(name, std::nullopt,
           fmt::format("not idempotent: the canonical output is rejected: {}", again.error().line()));
      return;
    }
    if (!compare(name, *got, *again, "re-canonicalized output")) return;
    pass();
  }

  void rejected_vector(const std::string& file, std::size_t index, json::Value v, Profile profile) {
    std::string name = vector_name(file, index, v);
    json::ObjectReader r(v, "rejected vector");
    auto vname = r.required_string("name");
    auto kind = r.required_string("kind");
    auto input = vector_input(r);
    r.optional("note");
    Status shape = r.finish();
    for (const Error* e : {vname.ok() ? nullptr : &vname.error(), kind.ok() ? nullptr : &kind.error(),
                           input.ok() ? nullptr : &input.error(), shape.ok() ? nullptr : &shape.error()}) {
      if (e) {
        fail(name, std::nullopt, fmt::format("unreadable vector: {}", e->line()));
        return;
      }
    }
    auto got = canonicalize_text(*input, profile);
    if (got.ok()) {
      fail(name, std::nullopt,
           fmt::format("accepted as {}, but the vector expects rejection ({})", short_text(*got), *kind));
      return;
    }
    std::string actual =
        options_.kind_of ? options_.kind_of(got.error(), *input, profile) : std::string(got.error().kind.name());
    // The reader's own kind or the profile's name for it: either satisfies.
    if (options_.strict_kinds && !rejection_kind_matches(*kind, got.error().kind) &&
        !rejection_kind_matches(*kind, actual)) {
      fail(name, got.error().offset,
           fmt::format("rejected as {} but the vector names {}: {}", actual, *kind, got.error().line()));
      return;
    }
    pass();
  }

  const ReplayOptions& options_;
  ReplayReport& report_;
};

}  // namespace

Status replay_vectors(const std::string& path, const ReplayOptions& options, ReplayReport& report) {
  Replayer r(options, report);
  return r.path(fs::path(path));
}

}  // namespace dot::jcs
