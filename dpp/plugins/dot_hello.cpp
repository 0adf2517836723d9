// dot-hello: the reference org.dot.hello plugin (docs/spec/dpp-hello.md).
#include "dot/dpp/plugin.h"

int main() {
  dot::dpp::HelloPlugin plugin;
  return dot::dpp::serve(plugin);
}
