// adopt_crash_list FILE: writes the adopt crash matrix's cases to FILE
// (crash_cases.h says why the build makes this list once).

#include <cstdio>
#include <exception>
#include <fstream>
#include <stdexcept>

#include "crash_cases.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 2) {
    std::fprintf(stderr, "usage: adopt_crash_list FILE\n");
    return 2;
  }
  try {
    const std::string text = dot::adopt_test::crash_cases_text(dot::adopt_test::compute_crash_cases());
    if (text.empty()) throw std::runtime_error("no crash case at all");
    const std::string tmp = std::string(argv[1]) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
      if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
    }
    fs::rename(tmp, argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "adopt_crash_list: %s\n", e.what());
    return 1;
  }
  return 0;
}
