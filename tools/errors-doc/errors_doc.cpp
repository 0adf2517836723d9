// dot-core-errors-doc: writes docs/errors.md into the build tree: the
// hand-written page (codes, rendering) followed by every layer's table of
// kinds (kind_tables.h), so the page cannot drift from the code.
//
// Usage: dot-core-errors-doc INTRO.md OUT.md
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "dot/base/error_kinds.h"
#include "kind_tables.h"

namespace {

// A table cell: pipes escaped, never empty.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out.empty() ? std::string("—") : out;
}

void write_table(std::ostream& out, const dot::errors_doc::KindTable& t) {
  out << "\n### " << t.layer << "\n\n" << t.about << " (`" << t.source << "`)\n\n";
  out << "| kind | code | meaning | rule |\n|---|---|---|---|\n";
  for (const dot::KindRow& r : t.rows)
    out << "| `" << r.name << "` | " << dot::code_name(r.code) << " | " << cell(r.meaning) << " | " << cell(r.rule)
        << " |\n";
}

void write_errno(std::ostream& out) {
  out << "\n### errno\n\nA failed system call (beneath a root, on a descriptor) carries the errno name as its kind, "
         "as `strerrorname_np` spells it, with DOT_E_IO; `ELOOP` and `EXDEV` (a symlink on the way, a path leaving "
         "the root) are DOT_E_PATH_ESCAPE. The names (`base/src/error_kinds.cpp`):\n\n";
  std::string line;
  bool first = true;
  for (const dot::KindRow& r : dot::base::errno_rows()) {
    if (r.name == "errno_unknown") continue;
    line += (first ? "`" : ", `") + std::string(r.name) + "`";
    first = false;
  }
  out << line << ".\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: dot-core-errors-doc INTRO.md OUT.md\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "dot-core-errors-doc: cannot read " << argv[1] << "\n";
    return 1;
  }
  std::ostringstream page;
  page << in.rdbuf();
  page << "\n## Kinds, layer by layer\n\nGenerated at build time from the tables in the code (one per layer): "
          "a kind is always one of these rows, and its code is the row's unless a layer reports a lower layer's "
          "kind under its own code, as said in the layer's line.\n";
  for (const auto& t : dot::errors_doc::kKindTables) write_table(page, t);
  write_errno(page);
  const std::string tmp = std::string(argv[2]) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << page.str();
    if (!out.flush()) {
      std::cerr << "dot-core-errors-doc: cannot write " << tmp << "\n";
      return 1;
    }
  }
  if (std::rename(tmp.c_str(), argv[2]) != 0) {
    std::cerr << "dot-core-errors-doc: cannot rename " << tmp << "\n";
    return 1;
  }
  return 0;
}
