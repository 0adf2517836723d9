#pragma once
// Test helpers for tests/adopt: a scratch folder, a fingerprint of a whole
// tree (to prove a command changed no byte and created no file).

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dot/base/sha256.h"

namespace dot::adopt_test {

namespace fs = std::filesystem;

class Scratch {
 public:
  explicit Scratch(const fs::path& base = fs::temp_directory_path()) {
    std::string tmpl = (base / "dot-adopt-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    // Undo what a test did to modes, so everything can go.
    for (auto it = fs::recursive_directory_iterator(dir_, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
      if (!it->is_symlink()) ::chmod(it->path().c_str(), 0700);
    fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Every entry below `root` (and root itself): name, type, mode, owner, size,
// modification and change times to the nanosecond, and the content's hash or
// the link's target. Equal fingerprints: nothing was written, created,
// removed, renamed, chmod'ed or chown'ed.
inline std::string fingerprint(const fs::path& root) {
  std::vector<std::string> lines;
  auto one = [&](const fs::path& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      lines.push_back(p.string() + " gone");
      return;
    }
    std::string what;
    if (S_ISREG(st.st_mode)) what = sha256_hex(slurp(p));
    else if (S_ISLNK(st.st_mode)) what = "-> " + fs::read_symlink(p).string();
    lines.push_back(fmt::format("{} {:o} {} {} {} {}.{} {}.{} {}", fs::relative(p, root).string(), st.st_mode, st.st_uid,
                                st.st_gid, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ctim.tv_sec,
                                st.st_ctim.tv_nsec, what));
  };
  one(root);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) one(it->path());
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace dot::adopt_test
