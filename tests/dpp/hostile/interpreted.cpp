// The verdicts of the interpreted hostile plugins (interpreted_cases.list):
// Python scripts on dot_plugin's hello profile whose behaviours are in
// interpreted.py. Each is driven contained, as a process-assurance plugin
// runs: the acts containment exists for (a key outside its inputs, a write
// beside the stage, a shell, a socket) are stopped by the kernel, and the
// protocol cases get the verdict the same broken rule gets from an ELF plugin.
#include "hostile.h"

namespace dot::dpp::hostile {
namespace {

const Case kInterpretedCases[] = {
    // Landlock: the open fails, and the plugin's error answer carries why.
    {"py_reads_ssh_key", nullptr, Code::Protocol, "error_response", "Permission denied", false},
    {"py_writes_beside_stage", nullptr, Code::Protocol, "error_response", "Permission denied", false},
    // seccomp: execve and socket kill the interpreter before it answers.
    {"py_execs_shell", nullptr, Code::Protocol, "seccomp_kill", "killed by SIGSYS", false},
    {"py_opens_socket", nullptr, Code::Protocol, "seccomp_kill", "killed by SIGSYS", false},
    // The protocol, as the ELF cases of the same names (without "py_") break it.
    {"py_garbage_before_header", nullptr, Code::Protocol, "header", "expects", false},
    {"py_wrong_nonce", nullptr, Code::PluginIdentity, "nonce", "nonce", false},
    {"py_names_outside_allowlist", nullptr, Code::Policy, "names", "other.txt", false},
    {"py_artifact_missing", nullptr, Code::ArtifactMismatch, "count", "1 artifacts for 2", false},
    {"py_exits_mid_session", nullptr, Code::Protocol, "eof", "without answering dot.materialize", false},
    {"py_stderr_flood", nullptr, Code::Protocol, "stderr_limit", "8192", false},
    {"py_sleep_past_deadline", nullptr, Code::Timeout, "timeout", "dot.plan", true},
};

}  // namespace

std::span<const Case> interpreted_cases() { return kInterpretedCases; }

}  // namespace dot::dpp::hostile
