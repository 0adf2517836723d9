// The general profile's path rules: the one place a target path is judged (path_rules.h).
#include "dot/dpp/path_rules.h"
#include "dot/dpp/error_kinds.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "dot/base/utf8.h"

namespace dot::dpp {
namespace {

// A path is plugin-controlled: shown escaped, and never more than a screenful
// of it (the detail of a 16 MiB bogus path must not be 16 MiB).
std::string show_path(std::string_view path) {
  constexpr std::size_t kShown = 256;
  std::string out = "\"" + shown(path.substr(0, kShown)) + "\"";
  if (path.size() > kShown) out += fmt::format(" ({} bytes)", path.size());
  return out;
}

Error refuse(ErrorKind kind, std::string_view path, std::string_view rule) {
  return make_error(kind, fmt::format("path {} {}", show_path(path), rule));
}

// Names core (or the Go reference it adopts from) creates or removes beside
// the targets: a plan that proposed one would have core later delete an
// applied file as its own leftover. The "why" of the refusal, or empty.
std::string_view reserved_because(std::string_view component, bool first) noexcept {
  if (component.substr(0, kHostTempPrefix.size()) == kHostTempPrefix)
    return "a name core reserves for the temp files it writes beside targets";
  // At the top of the root every ".dot-" name is the reference's or
  // adopt's own (`.dot-txn`, `.dot-history`, `.dot-adopting`...): adopt's
  // survey reads each as the reference's and may remove it.
  if (first && component.substr(0, 5) == ".dot-")
    return "a name reserved at the top of the root for core and the Go reference it adopts from (.dot-*)";
  return {};
}

}  // namespace

bool is_write_mode(std::uint64_t mode) noexcept {
  // Permission bits only, readable by the owner, never writable by others.
  // Group write passes here: only core can tell whether the group is the
  // owner's private one (base/write_access.h), so it judges that bit.
  return (mode & ~std::uint64_t{0777}) == 0 && (mode & 0400) != 0 && (mode & 0002) == 0;
}

bool is_folder_mode(std::uint64_t mode) noexcept { return is_write_mode(mode) && (mode & 0700) == 0700; }

Status check_path(std::string_view path) {
  // Escapes first: whatever else is wrong with it, a path that leaves the
  // root is reported as what it is.
  if (!path.empty() && path.front() == '/')
    return refuse(dpp::ErrorKind::Absolute, path, "is absolute (a plan path is relative to the root)");
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view component = path.substr(start, end - start);
    if (component == "..") return refuse(dpp::ErrorKind::DotDot, path, "has a \"..\" component");
    // The state folder is core's like its temp files: a name reserved for
    // the host, never a plugin's.
    if (start == 0 && component == kHostStateFolder)
      return refuse(dpp::ErrorKind::StateFolder, path,
                    fmt::format("is inside core's state folder {}", kHostStateFolder));
    if (const std::string_view why = reserved_because(component, start == 0); !why.empty())
      return refuse(dpp::ErrorKind::Reserved, path, fmt::format("has the component {}, {}", show_path(component), why));
    start = end + 1;
  }
  if (utf8_valid_prefix(path) != path.size())
    return refuse(dpp::ErrorKind::NotUtf8, path, fmt::format("is not valid UTF-8 (byte {})", utf8_valid_prefix(path)));
  if (path.empty()) return refuse(dpp::ErrorKind::Empty, path, "is empty");
  if (path.size() > kMaxPathBytes)
    return refuse(dpp::ErrorKind::TooLong, path, fmt::format("is longer than {} bytes", kMaxPathBytes));
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f)
      return refuse(dpp::ErrorKind::ControlByte, path, fmt::format("holds the control byte 0x{:02x}", c));
  if (path.back() == '/') return refuse(dpp::ErrorKind::TrailingSlash, path, "ends with \"/\"");
  for (std::size_t start = 0; start < path.size();) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view component = path.substr(start, end - start);
    if (component.empty()) return refuse(dpp::ErrorKind::EmptyComponent, path, "has an empty component (\"//\")");
    if (component.size() > kMaxPathComponentBytes)
      return refuse(dpp::ErrorKind::ComponentTooLong, path,
                    fmt::format("has a component longer than {} bytes", kMaxPathComponentBytes));
    if (component == ".") return refuse(dpp::ErrorKind::DotComponent, path, "has a \".\" component");
    start = end + 1;
  }
  return {};
}

Status PlanPathOrder::add(std::string_view path) {
  const std::size_t i = count_++;
  if (i >= kMaxPlanOperations)
    return make_error(dpp::ErrorKind::OperationCount,
                      fmt::format("the plan has more than max_operations {} operations", kMaxPlanOperations));
  DOT_TRY(check_path(path));
  if (i > 0) {
    // string_view compares as unsigned bytes: UTF-8 byte order.
    const std::string_view before(last_);
    if (path == before)
      return refuse(dpp::ErrorKind::Duplicate, path, fmt::format("appears twice (operations {} and {})", i - 1, i));
    if (path < before)
      return refuse(dpp::ErrorKind::Unsorted, path,
                    fmt::format("comes after {}: operations must be in ascending UTF-8 byte order of their paths",
                                show_path(before)));
  }
  // The earlier paths still prefixes of this one (all of them are prefixes
  // of last_, so those no longer than the common part); the shortest that
  // is a whole folder of this path is its parent in the same plan.
  const std::size_t common = static_cast<std::size_t>(
      std::mismatch(last_.begin(), last_.end(), path.begin(), path.end()).first - last_.begin());
  while (!prefixes_.empty() && prefixes_.back() > common) prefixes_.pop_back();
  for (std::size_t length : prefixes_)
    if (length < path.size() && path[length] == '/')
      return refuse(dpp::ErrorKind::ParentOf, path.substr(0, length),
                    fmt::format("is a parent folder of {} in the same plan", show_path(path)));
  last_.assign(path);
  prefixes_.push_back(path.size());
  return {};
}

Status check_plan_paths(std::span<const std::string_view> paths) {
  if (paths.size() > kMaxPlanOperations)
    return make_error(
        dpp::ErrorKind::OperationCount,
        fmt::format("the plan has {} operations, more than max_operations {}", paths.size(), kMaxPlanOperations));
  PlanPathOrder order;
  for (std::string_view path : paths) DOT_TRY(order.add(path));
  return {};
}

Status check_action_mode(std::string_view path, std::string_view action, std::uint64_t mode) {
  if (action == "write") {
    if (!is_write_mode(mode))
      return refuse(dpp::ErrorKind::Mode, path,
                    fmt::format("asks for mode {} ({:04o}); a write takes permission bits only (at most 0777), "
                                "owner read set, no write for others",
                                mode, mode));
    return {};
  }
  if (action == "remove" || action == "link") {
    if (mode != 0) return refuse(dpp::ErrorKind::Mode, path, fmt::format("is a {} with mode {}, not 0", action, mode));
    return {};
  }
  return refuse(
      dpp::ErrorKind::Action, path,
      fmt::format("has the action \"{}\"; only \"write\", \"remove\" and \"link\" exist", shown(action.substr(0, 64))));
}

Status check_link_text(std::string_view path, std::string_view text) {
  if (text.empty()) return refuse(dpp::ErrorKind::LinkText, path, "is a link with an empty link_text");
  if (text.size() > kMaxLinkTextBytes)
    return refuse(dpp::ErrorKind::LinkText, path,
                  fmt::format("is a link whose link_text has {} bytes, more than {}", text.size(), kMaxLinkTextBytes));
  if (text.find('\0') != std::string_view::npos)
    return refuse(dpp::ErrorKind::LinkText, path, "is a link whose link_text holds a NUL byte");
  if (utf8_valid_prefix(text) != text.size())
    return refuse(dpp::ErrorKind::LinkText, path,
                  fmt::format("is a link whose link_text is not valid UTF-8 (byte {})", utf8_valid_prefix(text)));
  return {};
}

Status check_proposed_operations(std::span<const ProposedOperation> operations) {
  std::vector<std::string_view> paths;
  paths.reserve(operations.size());
  for (const auto& op : operations) paths.push_back(op.path);
  DOT_TRY(check_plan_paths(paths));
  for (const auto& op : operations) DOT_TRY(check_proposed_operation(op));
  return {};
}

Status check_proposed_operation(const ProposedOperation& op) {
  DOT_TRY(check_action_mode(op.path, op.action, op.mode));
  if (op.action == "link") {
    if (!op.link_text) return refuse(dpp::ErrorKind::LinkText, op.path, "is a link without link_text");
    DOT_TRY(check_link_text(op.path, *op.link_text));
  } else if (op.link_text) {
    return refuse(dpp::ErrorKind::LinkText, op.path, fmt::format("is a {} with a link_text", op.action));
  }
  return {};
}

Status check_proposed_folders(std::span<const ProposedFolder> folders, std::span<const ProposedOperation> operations) {
  std::vector<std::string_view> writes;
  for (const auto& op : operations)
    if (op.action == "write") writes.push_back(op.path);
  return check_proposed_folders(folders, writes);
}

Status check_proposed_folders(std::span<const ProposedFolder> folders, std::span<const std::string_view> write_paths) {
  std::unordered_set<std::string_view> parents;
  for (std::string_view path : write_paths)
    for (std::size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
      parents.insert(path.substr(0, slash));
  for (std::size_t i = 0; i < folders.size(); ++i) {
    const ProposedFolder& f = folders[i];
    DOT_TRY(check_path(f.path));
    if (i > 0 && !(folders[i - 1].path < f.path))
      return refuse(dpp::ErrorKind::Folder, f.path,
                    fmt::format("is not after the folder before it ({}): directories must be strictly ascending",
                                show_path(folders[i - 1].path)));
    if (!parents.contains(f.path))
      return refuse(dpp::ErrorKind::Folder, f.path, "is not the parent folder of a write of this plan");
    if (!is_folder_mode(f.mode))
      return refuse(dpp::ErrorKind::Mode, f.path,
                    fmt::format("is a folder with mode {} ({:04o}); a folder takes 0700 to 0775: owner read, "
                                "write and search set, no write for others, no set-id or sticky bit",
                                f.mode, f.mode));
  }
  return {};
}

}  // namespace dot::dpp
