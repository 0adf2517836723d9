#include "commands.h"

namespace dot::cli {

// Scaffolding: this command group is filled in by its module's issue.
void add_doctor_command(CLI::App& /*app*/, Context& /*ctx*/) {}

}  // namespace dot::cli
