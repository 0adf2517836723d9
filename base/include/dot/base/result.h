#pragma once
// Result<T>: a value or a dot::Error. Our own small stand-in for std::expected,
// which clang 14 with libstdc++ 12 does not have.

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "dot/base/error.h"

namespace dot {

template <typename T>
class [[nodiscard]] Result {
 public:
  static_assert(!std::is_same_v<T, Error>, "Result<Error> is ambiguous");

  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& { assert(!ok()); return std::get<1>(v_); }
  Error&& error() && { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const& { assert(!ok_); return error_; }
  Error&& error() && { assert(!ok_); return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace dot

// Propagate an error from an expression returning Result<...>.
#define DOT_TRY(expr)                                   \
  do {                                                  \
    auto dot_try_result_ = (expr);                      \
    if (!dot_try_result_.ok()) return std::move(dot_try_result_).error(); \
  } while (0)

#define DOT_CONCAT_INNER_(a, b) a##b
#define DOT_CONCAT_(a, b) DOT_CONCAT_INNER_(a, b)
// DOT_ASSIGN_OR_RETURN(auto x, f()); binds the value or returns the error.
#define DOT_ASSIGN_OR_RETURN(lhs, expr) \
  DOT_ASSIGN_OR_RETURN_IMPL_(DOT_CONCAT_(dot_result_, __LINE__), lhs, expr)
#define DOT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).error();    \
  lhs = std::move(tmp).value()
