// dpp-probe: an honest hello plugin that first records what it was started
// with (environment, working directory, open descriptors, process group) in
// probe.txt in its working directory, for the session tests.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "dot/dpp/plugin.h"

extern char** environ;

int main() {
  std::string out;
  for (char** e = environ; *e != nullptr; ++e) out += std::string("env ") + *e + "\n";
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) != nullptr) out += std::string("cwd ") + cwd + "\n";
  if (DIR* d = ::opendir("/proc/self/fd")) {
    int self = ::dirfd(d);
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.' || std::to_string(self) == e->d_name) continue;
      out += std::string("fd ") + e->d_name + "\n";
    }
    ::closedir(d);
  }
  out += "pgid_is_pid " + std::to_string(::getpgid(0) == ::getpid()) + "\n";
  if (FILE* f = std::fopen("probe.txt", "w")) {
    std::fputs(out.c_str(), f);
    std::fclose(f);
  }
  dot::dpp::HelloPlugin plugin;
  return dot::dpp::serve(plugin);
}
