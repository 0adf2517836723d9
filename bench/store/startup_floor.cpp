// startup-floor-cxx: does nothing, but loads libstdc++ and libsimdjson like
// every dot-core process and plugin must (docs/startup.md).
int main() { return 0; }
