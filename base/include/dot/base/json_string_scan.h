#pragma once
// Where each byte of a JSON text stands with respect to its strings, one
// byte at a time, for code that cuts or compacts a text where the grammar
// allows without parsing it (a stored plan split at its operations,
// dpp/src/body.cpp's compacted bodies): a quote inside a string is escaped,
// and a bracket or a space inside one is no bracket or space. What the text
// means is still the strict reader's to judge (json.h).

namespace dot::json {

class StringScan {
 public:
  // Whether `c`, the next byte, belongs to a string (its quotes included).
  bool step(char c) noexcept {
    if (in_string_) {
      if (escaped_)
        escaped_ = false;
      else if (c == '\\')
        escaped_ = true;
      else if (c == '"')
        in_string_ = false;
      return true;
    }
    if (c == '"') in_string_ = true;
    return in_string_;
  }
  bool in_string() const noexcept { return in_string_; }

 private:
  bool in_string_ = false;
  bool escaped_ = false;
};

}  // namespace dot::json
