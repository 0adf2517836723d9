// What a failed ADPP exchange says about the provider itself, told one way everywhere (postscript.h).
#include "dot/adpp/postscript.h"

#include <fmt/format.h>

namespace dot::adpp {

std::string provider_postscript(ProviderProcess& p, std::chrono::milliseconds grace, bool exit_stated) {
  std::string out;
  if (!exit_stated) {
    if (auto st = p.wait_exit(Clock::now() + grace)) out += fmt::format(" (provider: {})", st->describe());
  }
  std::string tail = p.stderr_tail();
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  auto nl = tail.rfind('\n');
  if (nl != std::string::npos) tail.erase(0, nl + 1);
  if (tail.size() > 160) tail = tail.substr(tail.size() - 160);
  if (!tail.empty()) out += fmt::format(" (stderr: {})", tail);
  return out;
}

}  // namespace dot::adpp
