#pragma once
// The path rules of the general DPP profile (docs/spec/dpp-general.md, "Plan"):
// the one place a relative target path is judged. Part of the protocol, so
// both sides apply the same rule: core on a plugin's plan result at plan
// time and again on every load of a stored version-2 plan, and a plugin
// (dot-mirror) on what it is about to propose, linking only the plugin
// runtime. Pure: no file is looked at; what exists is judged later, through
// descriptors.
//
// Codes (spec): Code::PathEscape for an absolute path or a `..` component,
// and for a name core reserves (kind state_folder: a first component
// `.dot`; kind reserved: a component starting with `.dot-tmp-` anywhere, a
// first component starting with `.dot-`), since core would later read or
// remove such a file as its own;
// Code::Policy for every other path rule, unsorted or duplicated paths, and
// an unknown action or mode;
// Code::Protocol for more than kMaxPlanOperations operations (a negotiated
// limit). Each error's kind names the rule and its detail names the path
// (escaped for a terminal: a path is plugin-controlled text).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dot/base/result.h"

namespace dot::dpp {

// The names the rules reserve for the host (spec, "Path rules"): its state
// folder at the top of the root, and the prefix of the temp files it writes
// beside targets. The host's own constants are these (store::kStateDirName
// is checked against kHostStateFolder where core includes both; core's
// kTempPrefix is kHostTempPrefix).
inline constexpr std::string_view kHostStateFolder = ".dot";
inline constexpr std::string_view kHostTempPrefix = ".dot-tmp-";

inline constexpr std::size_t kMaxPathBytes = 4095;
inline constexpr std::size_t kMaxPathComponentBytes = 255;
// The negotiated `max_operations` of the general profile.
inline constexpr std::size_t kMaxPlanOperations = 100000;

// The file modes a write may ask for: permission bits only (no setuid,
// setgid or sticky bit), the owner's read bit set, no write bit for others
// (0400 to 0775). The group write bit is allowed here and judged by core
// against the user-private-group rule (base/write_access.h), which only the
// host can apply.
bool is_write_mode(std::uint64_t mode) noexcept;
// The modes a folder a plan creates may have: a write mode with the owner's
// read, write and search bits all set (0700 to 0775).
bool is_folder_mode(std::uint64_t mode) noexcept;

// One path on its own. Kinds: absolute, dot_dot, state_folder, reserved
// (PathEscape); not_utf8, empty, too_long, empty_component,
// component_too_long, dot_component, control_byte, trailing_slash (Policy).
// When a path breaks
// several rules, an escape is reported first.
Status check_path(std::string_view path);

// The paths of one plan, in the plan's order: each passes check_path; they
// are in strictly ascending order of their UTF-8 bytes (kind unsorted, or
// duplicate); none is a parent folder of another (kind parent_of). More than
// kMaxPlanOperations is Code::Protocol (kind operation_count).
Status check_plan_paths(std::span<const std::string_view> paths);

// The same rules over paths given one at a time (a stored plan read as it
// streams: its 100,000 paths are never listed at once). Holds one path and
// the lengths of the earlier paths that are byte prefixes of it: in
// ascending byte order every path between a folder and a file beneath it
// starts with the folder's name, so a parent still stands among them when
// its child comes. check_plan_paths is this over its list.
class PlanPathOrder {
 public:
  // The next path of the plan: the errors of check_plan_paths, found at the
  // first path that proves them.
  Status add(std::string_view path);
  std::size_t count() const noexcept { return count_; }

 private:
  std::size_t count_ = 0;
  std::string last_;
  std::vector<std::size_t> prefixes_;  // lengths of earlier paths that begin last_ (ascending), last_ itself included
};

// One operation's action and mode: "write" with a mode of is_write_mode, or
// "remove" or "link" with mode 0. Kinds: action, mode.
Status check_action_mode(std::string_view path, std::string_view action, std::uint64_t mode);

// The longest link text a "link" may carry: what Linux resolves (PATH_MAX
// less its NUL).
inline constexpr std::size_t kMaxLinkTextBytes = 4095;
// The text of a symbolic link `path` is to hold: 1 to kMaxLinkTextBytes
// bytes of valid UTF-8 without NUL. It is data (absolute text and ".."
// are allowed): the host writes it with symlinkat and never follows it.
// Kind link_text (Code::Policy), the detail naming the path.
Status check_link_text(std::string_view path, std::string_view text);

// An operation as a plugin proposes it (dot.plan result). `link_text` is
// set exactly for a "link".
struct ProposedOperation {
  std::string_view action;
  std::uint64_t mode = 0;
  std::string_view path;
  const std::string* link_text = nullptr;
};

// Every rule of the plan result's operations: check_plan_paths, then
// check_action_mode of each and, for a link, check_link_text (link_text on
// any other action is kind link_text too), in order.
Status check_proposed_operations(std::span<const ProposedOperation> operations);
// The rules of one operation alone (all but check_plan_paths): for a reader
// that checks each as it arrives and the paths once the list is whole.
Status check_proposed_operation(const ProposedOperation& operation);

// A folder a plan names with the mode it is created with (dot.plan result
// `directories`).
struct ProposedFolder {
  std::uint64_t mode = 0;
  std::string_view path;
};
// The rules of the plan result's folders, once its operations passed: each
// path passes check_path, they are strictly ascending (kind folder), each is
// a parent folder of a write of `operations` (kind folder) and has a mode of
// is_folder_mode (kind mode).
Status check_proposed_folders(std::span<const ProposedFolder> folders, std::span<const ProposedOperation> operations);
// The same, given the paths of the plan's writes (in any order).
Status check_proposed_folders(std::span<const ProposedFolder> folders, std::span<const std::string_view> write_paths);

}  // namespace dot::dpp
