// A stored version-2 plan read operation by operation as it streams (plan_v2_reader.h).
#include "plan_v2_reader.h"

#include <fmt/format.h>

#include "dot/base/error_kinds.h"
#include "dot/core/error_kinds.h"
#include "dot/core/plan_document.h"

namespace dot::core {
namespace {

// An operation is a path (at most 4,096 bytes), two snapshots and a link
// text at most as long, each byte escaped at worst as \u00XX: far below
// this. A longer element is no operation a plan can hold.
constexpr std::size_t kMaxElementBytes = std::size_t{1} << 20;
// The document's depth limit (decode_canonical_plan_v2's), less the object
// and the array an operation sits in.
constexpr std::size_t kMaxDepth = 16;
constexpr std::size_t kElementDepth = kMaxDepth - 2;

constexpr std::string_view kOperationsKey = "\"operations\":[";

constexpr std::string_view kNotCanonical = "the stored plan bytes are not in canonical form";
Error not_canonical(std::uint64_t offset) {
  return make_parse_error(core::ErrorKind::NotCanonical, offset, std::string(kNotCanonical));
}

}  // namespace

PlanV2Reader::PlanV2Reader(OperationFn each) : each_(std::move(each)) {}

Error PlanV2Reader::fail(Error e) {
  failed_ = e;
  return e;
}

Status PlanV2Reader::write(std::string_view piece) {
  if (failed_) return *failed_;
  if (piece.size() > kMaxPlanDocumentBytes - offset_)
    return fail(make_parse_error(base::ErrorKind::TooLarge, kMaxPlanDocumentBytes,
                                 fmt::format("the plan document is longer than {} bytes", kMaxPlanDocumentBytes)));
  if (auto s = scan(piece); !s.ok()) return fail(std::move(s).error());
  offset_ += piece.size();
  return {};
}

// One pass over the bytes: strings are skipped (a bracket in a path is no
// bracket), the head is copied, and each element of the operations array is
// read once its closing brace comes.
Status PlanV2Reader::scan(std::string_view piece) {
  std::size_t element_from = 0;  // where the element's bytes in this piece begin
  for (std::size_t i = 0; i < piece.size(); ++i) {
    const char c = piece[i];
    const std::uint64_t at = offset_ + i;
    if (part_ == Part::Operations) {
      // Between elements: exactly what a canonical array holds there.
      if (c == '{' && next_ != Next::SeparatorOrEnd) {
        part_ = Part::Element;
        element_.clear();
        element_at_ = at;
        element_from = i;
        element_depth_ = 1;
      } else if (c == ',' && next_ == Next::SeparatorOrEnd) {
        next_ = Next::Element;
      } else if (c == ']' && next_ != Next::Element) {
        part_ = Part::Tail;
        operations_end_ = at;
        head_ += ']';
        --depth_;
      } else {
        return not_canonical(at);
      }
      continue;
    }
    if (part_ == Part::Element) {
      if (strings_.step(c)) {
        // inside a string: a bracket there is none
      } else if (c == '{' || c == '[') {
        ++element_depth_;
      } else if ((c == '}' || c == ']') && --element_depth_ == 0) {
        element_.append(piece.substr(element_from, i + 1 - element_from));
        DOT_TRY(read_element());
        part_ = Part::Operations;
        next_ = Next::SeparatorOrEnd;
        continue;
      }
      if (element_.size() + (i + 1 - element_from) > kMaxElementBytes)
        return make_parse_error(core::ErrorKind::NotCanonical, element_at_,
                                fmt::format("operations[{}] is longer than {} bytes", index_, kMaxElementBytes));
      continue;
    }
    head_ += c;
    if (strings_.step(c)) {
      // inside a string
    } else if (c == '{' || c == '[') {
      ++depth_;
      // The plan object's own "operations" member (a key at depth 1): its
      // elements are read one by one, the head keeps it empty.
      if (part_ == Part::Head && depth_ == 2 && std::string_view(head_).ends_with(kOperationsKey)) {
        part_ = Part::Operations;
        next_ = Next::ElementOrEnd;
        operations_at_ = at;
      }
    } else if (c == '}' || c == ']') {
      if (depth_ > 0) --depth_;
    }
  }
  if (part_ == Part::Element) element_.append(piece.substr(element_from));
  return {};
}

// One element: parsed, decoded, judged with the list so far, compared with
// its canonical encoding, then handed on.
Status PlanV2Reader::read_element() {
  auto here = [this](Error e) {
    if (e.offset) *e.offset += element_at_;
    return e;
  };
  if (auto s = parser_.parse_into(element_, doc_,
                                  json::ReadLimits{.max_bytes = kMaxElementBytes, .max_depth = kElementDepth});
      !s.ok())
    return here(std::move(s).error());
  const std::string what = fmt::format("operations[{}]", index_);
  auto op = detail::decode_operation(doc_.root(), what);
  if (!op.ok()) return here(std::move(op).error());
  afters_.add(*op, doc_.root(), what, element_at_);
  if (auto s = list_.add(*op); !s.ok()) {
    Error e = std::move(s).error();
    e.offset = operations_at_;
    return e;
  }
  encoded_.clear();
  DOT_TRY(detail::encode_operation(encoded_, *op, detail::kPlanForm));
  if (encoded_ != element_) return not_canonical(element_at_);
  ++index_;
  return each_(std::move(op).value());
}

Error PlanV2Reader::at_document_offset(Error e) const {
  // The head holds the operations array as "[]": what follows it stands
  // (the elements' length - 2) bytes further in the document.
  if (e.offset && *e.offset > operations_at_) *e.offset += (operations_end_ - operations_at_ + 1) - 2;
  return e;
}

Result<PlanV2> PlanV2Reader::finish() {
  if (failed_) return *failed_;
  if (part_ == Part::Operations || part_ == Part::Element)
    return fail(make_parse_error(base::ErrorKind::Malformed, offset_, "the plan document ends inside its operations"));
  if (part_ == Part::Head) {
    // No operations member where a canonical plan has it: the whole
    // document is in the head, and the decoder says what is wrong with it.
    auto whole = detail::decode_canonical_of<PlanV2>(head_, kMaxPlanDocumentBytes, decode_plan_v2);
    if (!whole.ok()) return fail(std::move(whole).error());
    return fail(make_error(core::ErrorKind::NotCanonical, std::string(kNotCanonical)));
  }
  auto parsed = parser_.parse(head_, json::ReadLimits{.max_bytes = kMaxPlanDocumentBytes, .max_depth = kMaxDepth});
  if (!parsed.ok()) return fail(at_document_offset(std::move(parsed).error()));
  auto head = detail::decode_plan_head(parsed->root());
  if (!head.ok()) return fail(at_document_offset(std::move(head).error()));
  PlanV2& plan = head->plan;
  if (auto s = afters_.verdict(plan.proposal_id.empty()); !s.ok()) return fail(std::move(s).error());
  auto folders = detail::decode_directories(head->directories, list_.parents());
  if (!folders.ok()) return fail(at_document_offset(std::move(folders).error()));
  plan.directories = std::move(folders).value();
  auto canonical = detail::encodes_to(plan, detail::kPlanForm, head_);
  if (!canonical.ok()) return fail(std::move(canonical).error());
  if (!*canonical) return fail(make_error(core::ErrorKind::NotCanonical, std::string(kNotCanonical)));
  return std::move(plan);
}

}  // namespace dot::core
