// One hostile plugin: the behaviour named at compile time.
extern "C" int dot_dpp_run_hostile(const char* name);

int main() { return dot_dpp_run_hostile(DOT_HOSTILE_CASE); }
