// Every command group of dot-core, in the order `dot-core --help` lists them, with the
// names each registers (app.h: the table the app is built from).
#include "app.h"

namespace dot::cli {

std::span<const CommandGroup> all_command_groups() {
  // The everyday commands first (`dot-core --help` lists them under their
  // own heading, app.cpp), the root's upkeep next, the protocol tools last.
  static const CommandGroup kGroups[] = {
      {{"init"}, add_init_command},
      {{"register", "plan", "apply", "status", "rollback", "recover", "retry-effects", "discard", "export",
        "unregister", "forget", "plan-id"},
       add_engine_commands},
      {{"inspect"}, add_inspect_commands},
      {{"store"}, add_store_commands},
      {{"doctor"}, add_doctor_command},
      {{"version"}, add_version_command},
      {{"adopt"}, add_adopt_command},
      {{"dpp"}, add_dpp_commands},
      {{"adpp"}, add_adpp_commands},
      {{"metewand"}, add_metewand_commands},
      {{"jcs"}, add_jcs_commands},
      {{"vectors"}, add_vectors_commands},
      {{"frames"}, add_frames_commands},
  };
  return kGroups;
}

}  // namespace dot::cli
