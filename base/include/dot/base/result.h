#pragma once
// Result<T>: a value or a dot::Error (Expected<T, Error>, expected.h), the
// project's one way to return a failure; Status when there is no value.

#include <cassert>
#include <utility>

#include "dot/base/error.h"
#include "dot/base/expected.h"

namespace dot {

template <typename T>
class [[nodiscard]] Result : public Expected<T, Error> {
 public:
  using Expected<T, Error>::Expected;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  Error& error() & {
    assert(!ok_);
    return error_;
  }
  const Error& error() const& {
    assert(!ok_);
    return error_;
  }
  Error&& error() && {
    assert(!ok_);
    return std::move(error_);
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace dot

// Propagate an error from an expression returning Result<...>.
#define DOT_TRY(expr)                                                     \
  do {                                                                    \
    auto dot_try_result_ = (expr);                                        \
    if (!dot_try_result_.ok()) return std::move(dot_try_result_).error(); \
  } while (0)

#define DOT_CONCAT_INNER_(a, b) a##b
#define DOT_CONCAT_(a, b) DOT_CONCAT_INNER_(a, b)
// DOT_ASSIGN_OR_RETURN(auto x, f()); binds the value or returns the error.
#define DOT_ASSIGN_OR_RETURN(lhs, expr) DOT_ASSIGN_OR_RETURN_IMPL_(DOT_CONCAT_(dot_result_, __LINE__), lhs, expr)
#define DOT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).error();    \
  lhs = std::move(tmp).value()
