#pragma once
// The parts of the version-2 plan decoder (plan_v2.cpp), written once for
// its two readers: decode_plan_v2 over a parsed document of any spelling,
// and PlanV2Reader (plan_v2_reader.h) over canonical bytes as they stream,
// one operation at a time. Errors carry the offset of the value they were
// read at; the streaming reader moves them to the document's offsets.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dot/base/json.h"
#include "dot/base/result.h"
#include "dot/core/plan_v2.h"
#include "dot/dpp/path_rules.h"
#include "plan_ids.h"

namespace dot::core::detail {

// One operation, encoded (RFC 8785) in `form` onto the end of `out`: what
// canonical_pieces writes for each operation, and what the streaming
// reader compares each stored one with.
Status encode_operation(std::string& out, const PathOperation& op, DocumentForm form);

// Every member of a plan document but its operations and directories,
// which come back as the values they were read from (a whole-list rule
// needs the operations before the directories can be judged).
struct PlanHead {
  PlanV2 plan;  // operations and directories empty
  json::Value directories;
  json::Value operations;
};
Result<PlanHead> decode_plan_head(json::Value value);

// One operation's format, whichever document holds it (`what`:
// "operations[i]"): its members, snapshots, path, action and mode.
Result<PathOperation> decode_operation(json::Value o, const std::string& what);

// The rules of an operation's `after` that depend on the document: in a
// sealed plan every write has a file's after and every link a symlink's; in
// a proposal document a write declares its after only if every write does,
// and a link never. A stored document says which it is (its proposal_id)
// only after its operations, so both are judged as they come, each first
// breach kept with its offset moved by `base`; verdict() gives the one
// that applies.
class AfterRules {
 public:
  void add(const PathOperation& op, json::Value o, const std::string& what, std::uint64_t base);
  Status verdict(bool proposal) const;

 private:
  std::optional<Error> sealed_;
  std::optional<Error> proposal_;
  std::optional<bool> declared_;  // set by a proposal document's first write
};

// The rules over the list, one operation at a time: at most
// dpp::kMaxPlanOperations (kind operation_limit), the path rules
// (dpp::PlanPathOrder), and the parent folders of every write and link
// (what the directories are judged against). Errors carry no offset: the
// caller places them at the operations array.
class OperationList {
 public:
  Status add(const PathOperation& op);
  const std::set<std::string, std::less<>>& parents() const noexcept { return parents_; }

 private:
  dpp::PlanPathOrder order_;
  std::set<std::string, std::less<>> parents_;
};

// The directories against the parents of the plan's writes and links:
// each one such a parent, ascending, with a folder mode; below a created
// folder every such parent created too.
Result<std::vector<Folder>> decode_directories(json::Value dirs_v, const std::set<std::string, std::less<>>& parents);

}  // namespace dot::core::detail
