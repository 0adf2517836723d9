// dot-core: every command. Each group lives in its own cmd_<group>.cpp
// (commands.h); app.cpp builds and runs the app.
#include <csignal>

#include "app.h"

int main(int argc, char** argv) {
  // A peer that closes a pipe must give us EPIPE, never kill us.
  std::signal(SIGPIPE, SIG_IGN);
  return dot::cli::run_app(argc, argv, dot::cli::all_command_groups());
}
