// The human views of a version-2 plan at any size (plan_views.h).
#include "plan_views.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "engine_json.h"
#include "output.h"

namespace dot::cli {
namespace {

std::string mode_text(std::uint64_t mode) { return fmt::format("{:04o}", mode); }

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The letter --name-status gives an operation.
char status_letter(const core::PathOperation& op) {
  if (op.action == core::Action::Remove) return 'D';
  if (!op.before.exists) return 'A';
  // git's T: the entry changes kind (a file becomes a link or the reverse).
  return op.before.is_link() != (op.action == core::Action::Link) ? 'T' : 'M';
}

// Lines added and removed by a slot whose both sides are text.
std::pair<std::size_t, std::size_t> diff_counts(const core::PathOperation& op, const core::PathSlot& s) {
  const std::string diff =
      core::unified_diff(core::PlannedSlot{op.path, s.before_content().value_or(""), *s.after_content()});
  std::size_t plus = 0, minus = 0, start = 0;
  // Past the two header lines, a hunk's lines start with ' ', '+', '-' or '@'.
  for (int headers = 0; headers < 2 && start < diff.size(); ++headers) start = diff.find('\n', start) + 1;
  while (start < diff.size()) {
    const std::size_t nl = diff.find('\n', start);
    if (diff[start] == '+') ++plus;
    if (diff[start] == '-') ++minus;
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return {plus, minus};
}

// What a snapshot shows of a symlink: its text, escaped like every
// plugin-controlled or found string (it can hold terminal control bytes).
std::string link_shown(const core::Snapshot& s) { return fmt::format("-> \"{}\"", shown(s.link_text)); }

// A link operation, or a write or remove whose target is a link now.
std::optional<std::string> link_slot_text(const core::PathOperation& op, const core::PathSlot& s,
                                          const std::string& path) {
  if (op.action == core::Action::Remove && op.before.is_link())
    return fmt::format("remove link {} {}\n", path, link_shown(op.before));
  if (op.action == core::Action::Link) {
    if (!op.before.exists) return fmt::format("link {} {}\n", path, link_shown(op.after));
    if (s.take_over)
      return fmt::format("take over {} (exists, not managed yet): {} by link {}\n", path,
                         op.before.is_link()
                             ? "link " + link_shown(op.before)
                             : fmt::format("file ({} bytes, mode {})", s.before_size, mode_text(op.before.mode)),
                         link_shown(op.after));
    if (op.before.is_link())
      return fmt::format("replace link {} {} by {}\n", path, link_shown(op.before), link_shown(op.after));
    return fmt::format("replace file {} ({} bytes, mode {}) by link {}\n", path, s.before_size,
                       mode_text(op.before.mode), link_shown(op.after));
  }
  if (op.action == core::Action::Write && op.before.is_link())
    return fmt::format("{} {} by file (mode {}, {} bytes)\n",
                       s.take_over ? fmt::format("take over {} (exists, not managed yet): link", path)
                                   : fmt::format("replace link {}", path),
                       link_shown(op.before), mode_text(op.after.mode), s.after_size);
  return std::nullopt;
}

}  // namespace

std::string path_slot_text(const core::PathOperation& op, const core::PathSlot& s) {
  const std::string path = shown(op.path);
  if (auto link = link_slot_text(op, s, path); link && op.action != core::Action::Write) return *link;
  if (op.action == core::Action::Remove)
    return fmt::format("remove {} ({} bytes, mode {})\n", path, s.before_size, mode_text(op.before.mode));
  std::string out;
  const std::string modes = op.before.mode == op.after.mode
                                ? mode_text(op.after.mode)
                                : fmt::format("{} -> {}", mode_text(op.before.mode), mode_text(op.after.mode));
  if (auto link = link_slot_text(op, s, path))
    out += *link;        // the file that replaces the link: its whole bytes below
  else if (s.take_over)  // a write of an existing file no plugin manages: said as such, with its diff
    out += fmt::format("take over {} (exists, not managed yet): mode {}, {} -> {} bytes\n", path, modes, s.before_size,
                       s.after_size);
  else if (!op.before.exists)
    out += fmt::format("create {} (mode {}, {} bytes)\n", path, mode_text(op.after.mode), s.after_size);
  else if (op.before.sha256 != op.after.sha256)
    out += fmt::format("change {} (mode {}, {} -> {} bytes)\n", path, modes, s.before_size, s.after_size);
  else
    out += fmt::format("mode {} {}\n", path, modes);
  if (op.before.exists && !op.before.is_link() && op.before.sha256 == op.after.sha256) return out;
  if (diffable(op, s)) {
    out += core::unified_diff(core::PlannedSlot{op.path, s.before_content().value_or(""), *s.after_content()});
    return out;
  }
  out += fmt::format("binary or large {}: {} -> {} bytes, sha256 {} -> {}\n", path,
                     op.before.exists ? std::to_string(s.before_size) : std::string("(absent)"), s.after_size,
                     op.before.exists ? op.before.sha256.hex().substr(0, 12) : std::string("-"),
                     op.after.sha256.hex().substr(0, 12));
  return out;
}

std::string revert_line(const EditedTargets& edited, std::string_view path) {
  auto it = edited.find(path);
  if (it == edited.end()) return {};
  return fmt::format("revert {} (edited since apply {})\n", shown(path),
                     shown(std::string_view(it->second).substr(0, 12)));
}

std::string general_plan_text(const core::PlanOutcome& planned, const EditedTargets& edited, bool full,
                              const std::string& see_all) {
  const core::PlanV2& plan = planned.plan_v2;
  std::string out = fmt::format("sealed plan {} (version 2, plugin {})\nproposal    {}\n", planned.plan_id,
                                shown(plan.plugin_id), plan.proposal_id);
  out += fmt::format("{} operation(s), {} folder(s) to create, {} effect(s): root-sync\n", plan.operations.size(),
                     plan.directories.size(), plan.effects.size());
  if (!plan.exclude.empty()) {
    std::string patterns;
    for (const auto& p : plan.exclude) patterns += (patterns.empty() ? "" : " ") + shown(p);
    out += fmt::format("excluded {} proposed operation(s) by --exclude {}\n", planned.excluded, patterns);
  }
  out += "\n";
  std::size_t lines = line_count(out);
  std::size_t left_out = 0;
  for (const auto& d : plan.directories) {
    if (!full && lines >= kPlanShownLines) {
      ++left_out;
      continue;
    }
    out += fmt::format("create folder {}/ (mode {})\n", shown(d.path), mode_text(d.mode));
    ++lines;
  }
  for (std::size_t i = 0; i < planned.path_slots.size(); ++i) {
    if (!full && lines >= kPlanShownLines) {
      ++left_out;
      continue;
    }
    const core::PathOperation& op = plan.operations[i];
    std::string text = revert_line(edited, op.path) + path_slot_text(op, planned.path_slots[i]);
    lines += line_count(text);
    out += text;
  }
  if (left_out > 0)
    out += fmt::format("... {} more folder(s) and operation(s) not shown: {} shows them all\n", left_out, see_all);
  return out;
}

std::string plan_stat_text(const core::PlanOutcome& planned) {
  struct Row {
    std::string path;
    std::string change;
  };
  std::vector<Row> rows;
  std::size_t width = 0, insertions = 0, deletions = 0;
  for (std::size_t i = 0; i < planned.path_slots.size(); ++i) {
    const core::PathOperation& op = planned.plan_v2.operations[i];
    const core::PathSlot& s = planned.path_slots[i];
    Row r{shown(op.path), {}};
    if (op.action == core::Action::Link || op.before.is_link()) {
      r.change = link_slot_text(op, s, r.path).value_or("link\n");
      r.change.pop_back();  // one row: the line without its newline
    } else if (op.action == core::Action::Remove) {
      r.change = fmt::format("removed ({} bytes)", s.before_size);
    } else if (op.before.exists && op.before.sha256 == op.after.sha256) {
      r.change = fmt::format("mode {} -> {}", mode_text(op.before.mode), mode_text(op.after.mode));
    } else if (diffable(op, s)) {
      auto [plus, minus] = diff_counts(op, s);
      insertions += plus;
      deletions += minus;
      // The bar is at most 40 columns, scaled like git's.
      const std::size_t total = plus + minus, bar = std::min<std::size_t>(total, 40);
      const std::size_t pluses = total == 0 ? 0 : (plus * bar + total - 1) / total;
      r.change = fmt::format("{} {}{}", total, std::string(pluses, '+'), std::string(bar - pluses, '-'));
    } else {
      r.change = fmt::format("Bin {} -> {} bytes", op.before.exists ? s.before_size : 0, s.after_size);
    }
    width = std::max(width, std::min<std::size_t>(r.path.size(), 60));
    rows.push_back(std::move(r));
  }
  std::string out;
  for (const auto& r : rows) out += fmt::format(" {:<{}} | {}\n", r.path, width, r.change);
  out +=
      fmt::format(" {} path(s) changed, {} insertion(s)(+), {} deletion(s)(-)\n", rows.size(), insertions, deletions);
  return out;
}

std::string plan_name_status_text(const core::PlanOutcome& planned) {
  std::string out;
  // path_slots: one per sealed operation (none when nothing changes).
  for (std::size_t i = 0; i < planned.path_slots.size(); ++i) {
    const core::PathOperation& op = planned.plan_v2.operations[i];
    out += fmt::format("{}\t{}\n", status_letter(op), shown(op.path));
  }
  return out;
}

}  // namespace dot::cli
