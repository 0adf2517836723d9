// Every command group of dot-core, in the order `dot-core --help` lists them, with the
// names each registers (app.h: the table the app is built from).
#include "app.h"

namespace dot::cli {

std::span<const CommandGroup> all_command_groups() {
  static const CommandGroup kGroups[] = {
      {{"version"}, add_version_command},
      {{"jcs"}, add_jcs_commands},
      {{"vectors"}, add_vectors_commands},
      {{"frames"}, add_frames_commands},
      {{"init"}, add_init_command},
      {{"store"}, add_store_commands},
      {{"inspect"}, add_inspect_commands},
      {{"register", "plan", "apply", "rollback", "recover", "retry-effects", "discard", "status", "export", "plan-id"},
       add_engine_commands},
      {{"adopt"}, add_adopt_command},
      {{"doctor"}, add_doctor_command},
      {{"dpp"}, add_dpp_commands},
      {{"adpp"}, add_adpp_commands},
      {{"metewand"}, add_metewand_commands},
  };
  return kGroups;
}

}  // namespace dot::cli
