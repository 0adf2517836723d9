#pragma once
// A stored version-2 plan read as its canonical bytes stream out of the
// store, one operation at a time: a plan of 100,000 operations is 30 MB of
// text, and its parsed document several times that, so neither is ever
// held whole (docs/engine.md, "Memory").
//
// The bytes are split where the operations array holds its elements: each
// element is parsed on its own (the strict reader, base/json.h), decoded
// and checked against its canonical encoding, then handed on; the rest of
// the document (its head, with the operations array left empty) is parsed,
// decoded and checked the same way at the end, with the rules over the
// whole list (plan_v2_decode.h). The split needs only what canonical bytes
// look like: a byte outside an element that is not the separator a
// canonical array has is DOT_E_VALIDATION kind not_canonical at its offset.
// Every error is the decoder's (decode_canonical_plan_v2, which is this
// reader over bytes given whole) at the document's offsets.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "dot/base/byte_stream.h"
#include "dot/base/json.h"
#include "dot/base/json_string_scan.h"
#include "dot/base/result.h"
#include "dot/core/plan_v2.h"
#include "plan_v2_decode.h"

namespace dot::core {

class PlanV2Reader final : public ByteSink {
 public:
  // `each` gets every operation as it is read, in order; an error it
  // returns stops the reading and is what write() and finish() return.
  // Operations are handed on before the document is whole: a caller keeps
  // nothing it got from a reading whose finish() failed.
  using OperationFn = std::function<Status(PathOperation&& op)>;
  explicit PlanV2Reader(OperationFn each);
  // The next bytes of the document. After an error every call returns it.
  Status write(std::string_view piece) override;
  // Once every byte was written: the plan with its operations left out
  // (they went to `each`), every rule of the decoder checked.
  Result<PlanV2> finish();

 private:
  enum class Part : std::uint8_t { Head, Operations, Element, Tail };
  enum class Next : std::uint8_t { ElementOrEnd, SeparatorOrEnd, Element };
  Status scan(std::string_view piece);
  Status read_element();
  Error at_document_offset(Error e) const;
  Error fail(Error e);

  OperationFn each_;
  json::Parser parser_;
  json::Document doc_;
  std::string head_;     // the document but the elements of its operations array
  std::string element_;  // the operation being read
  std::string encoded_;  // its canonical encoding, to compare with
  detail::OperationList list_;
  detail::AfterRules afters_;
  std::optional<Error> failed_;
  std::uint64_t offset_ = 0;  // bytes written so far
  std::uint64_t element_at_ = 0;
  std::uint64_t operations_at_ = 0;   // the offset of the operations array's '['
  std::uint64_t operations_end_ = 0;  // and of its ']'
  std::size_t index_ = 0;             // operations read
  std::size_t depth_ = 0;             // the head's open brackets
  std::size_t element_depth_ = 0;     // the element's
  Part part_ = Part::Head;
  Next next_ = Next::ElementOrEnd;
  json::StringScan strings_;
};

// Hands every piece to `reader` and keeps its first refusal instead of
// stopping the stream, for a caller that judges the whole stream first (a
// stored text against its plan id, a proposal document against its
// proposal id) and the reader's refusal after.
class KeepReading final : public ByteSink {
 public:
  explicit KeepReading(PlanV2Reader& reader) : reader_(reader) {}
  Status write(std::string_view piece) override {
    if (!refusal_)
      if (auto s = reader_.write(piece); !s.ok()) refusal_ = std::move(s).error();
    return {};
  }
  const std::optional<Error>& refusal() const noexcept { return refusal_; }

 private:
  PlanV2Reader& reader_;
  std::optional<Error> refusal_;
};

}  // namespace dot::core
